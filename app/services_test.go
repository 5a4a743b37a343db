package app

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/datasets/demo"
)

// TestServicesOnTheDemo runs the services the front ends share over the
// demo source, resolved once: the listed sources per pipeline, the cohort
// examples (taken from each table's documentation in turn), the trials'
// demo patients and a model-free match whose notices say what the
// pipeline lacked.
func TestServicesOnTheDemo(t *testing.T) {
	ctx := context.Background()
	ws := openTemp(t)
	if err := ws.UpdateConfig(func(c *Config) { c.OllamaHost = "http://127.0.0.1:1" }); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.InitDemo(ctx, demo.Options{Seed: 7, Patients: 30}, false); err != nil {
		t.Fatal(err)
	}
	src := source(t, ws, DemoSourceName)
	names := func(srcs []Source) []string {
		var out []string
		for _, s := range srcs {
			out = append(out, s.Name)
		}
		return out
	}
	var registered []string
	for _, s := range ws.Config().Sources {
		registered = append(registered, s.Name)
	}
	if got := names(ws.Data().Sources()); !slices.Equal(got, registered) {
		t.Errorf("data sources %v, want %v", got, registered)
	}
	// The demo holds trials and reports; other demo sources (OMOP) do not.
	if got := names(ws.Trials().Sources(ctx)); !slices.Equal(got, []string{"demo"}) {
		t.Errorf("trial sources %v", got)
	}
	if got := names(ws.Impressions().Sources(ctx)); !slices.Equal(got, []string{"demo"}) {
		t.Errorf("report corpora %v", got)
	}

	ex, err := ws.Cohort().Examples(ctx, src, 5)
	if err != nil {
		t.Fatal(err)
	}
	cat, err := ws.Data().Catalog(ctx, src, false)
	if err != nil {
		t.Fatal(err)
	}
	var firsts []string
	for _, tb := range cat.Tables {
		if len(tb.Doc.Examples) > 0 && len(firsts) < 5 {
			firsts = append(firsts, tb.Doc.Examples[0])
		}
	}
	if ex.Tables != len(cat.Tables) || len(ex.Questions) != 5 || !slices.Equal(ex.Questions[:len(firsts)], firsts) {
		t.Errorf("examples %+v, want the first example of each table first: %v", ex, firsts)
	}

	ps, err := ws.Trials().Patients(ctx, src)
	if err != nil || len(ps) != trials.DemoPatients {
		t.Fatalf("demo patients: %d, %v", len(ps), err)
	}
	res, err := ws.Trials().Match(ctx, src, trials.Request{Patient: ps[0].Description, Top: 5}, TrialsOptions{NoModel: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Trials) == 0 || res.Query.Source != "deterministic extractor" || !strings.HasPrefix(res.Embedder, lexicalFallbackLabel) {
		t.Errorf("match: %d trials, query %q, embedder %q", len(res.Trials), res.Query.Source, res.Embedder)
	}
}

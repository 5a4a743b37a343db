//go:build integration && unix

package app

import (
	"context"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamareal"
)

// TestIntegrationEvidenceWorkflowTinyModel runs a whole review on the demo
// literature against a real Ollama server with a tiny random-weight model:
// terms, search, criteria, screening, decisions, field and result
// extraction, the meta-analysis, saving, resuming and the workbook. The
// model's output is noise, so a model step may fail, but only cleanly (an
// error, with the project unchanged and still valid), never by a crash or a
// hang; where a step fails the test does what the user would (writes the
// terms or criteria) and goes on.
func TestIntegrationEvidenceWorkflowTinyModel(t *testing.T) {
	srv := ollamareal.Start(t)
	client := srv.Client(t, localllm.Config{Logger: slog.New(slog.DiscardHandler)})
	const model = "tiny-llama:latest"
	srv.TinyModels(t, client, model, "")

	ws, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.UpdateConfig(func(c *Config) {
		c.OllamaHost = srv.URL
		c.Models = Models{SQL: model, Chat: model, Embedding: "absent-embedding-model"}
	}); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := ws.InitDemo(ctx, demo.Options{Patients: 60}, false); err != nil {
		t.Fatalf("demo: %v", err)
	}

	p := evidence.NewProject("tiny model review", "demo", evidence.PICO{
		Population:   "patients with hepatocellular carcinoma",
		Intervention: "microwave ablation",
		Comparison:   "radiofrequency ablation",
		Outcome:      "local tumor progression",
	})
	s, err := ws.openSession(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.Options = localllm.Options{NumCtx: 16384, NumPredict: 512}

	// step runs one model step under a deadline: a hang fails the test, an
	// error is logged and must leave a valid project.
	step := func(name string, fn func(context.Context) error) error {
		t.Helper()
		sctx, cancel := context.WithTimeout(ctx, 5*time.Minute)
		defer cancel()
		start := time.Now()
		err := fn(sctx)
		if sctx.Err() != nil {
			t.Fatalf("%s did not finish within 5 minutes (hang): %v", name, err)
		}
		if err != nil {
			t.Logf("%s failed cleanly in %s: %v", name, time.Since(start).Round(time.Millisecond), err)
		} else {
			t.Logf("%s: done in %s", name, time.Since(start).Round(time.Millisecond))
		}
		if verr := p.Validate(); verr != nil {
			t.Fatalf("after %s the project is not valid: %v", name, verr)
		}
		if serr := ws.SaveReviewProject(p); serr != nil {
			t.Fatalf("saving after %s: %v", name, serr)
		}
		return err
	}

	if step("suggest terms", s.SuggestTerms) != nil || p.Query == "" {
		p.Query = `(microwave OR radiofrequency) AND ablation AND (hepatocellular OR liver)`
	}
	if err := step("search", func(c context.Context) error { _, err := s.Search(c, 6); return err }); err != nil {
		// A generated query may be valid yet find nothing: the user writes one.
		p.Query = `(microwave OR radiofrequency) AND ablation AND (hepatocellular OR liver)`
		if err := step("search with the user's query", func(c context.Context) error { _, err := s.Search(c, 6); return err }); err != nil {
			t.Fatal(err)
		}
	}
	if p.Search == nil || len(p.Search.IDs) == 0 {
		t.Fatalf("the search kept no candidates: %+v", p.Search)
	}
	if step("suggest criteria", s.SuggestCriteria) != nil || len(p.Criteria) == 0 {
		p.Criteria = []evidence.Criterion{
			{Text: "The study treats hepatocellular carcinoma", Kind: evidence.TitleCriterion, Weight: 1},
			{Text: "The study compares microwave with radiofrequency ablation", Kind: evidence.ContentCriterion, Weight: 1},
		}
	}
	screenErr := step("screen", func(c context.Context) error { return s.Screen(c, nil) })
	var se *evidence.StudyErrors
	if screenErr != nil && !errors.As(screenErr, &se) {
		t.Logf("screening failed as a whole: %v", screenErr)
	}

	// The user decides: the first two candidates in, the third out.
	ids := p.Search.IDs
	for i, id := range ids[:min(3, len(ids))] {
		reason := ""
		if i == 2 {
			reason = "wrong comparator"
		}
		if err := p.Decide(id, i < 2, reason); err != nil {
			t.Fatal(err)
		}
	}
	p.Fields = []evidence.FieldSpec{{Name: "sample size", Description: "number of patients enrolled"}}
	p.Result = evidence.ResultSpec{Outcome: "local tumor progression", Cohort: "microwave ablation (treatment) vs radiofrequency ablation (control)", Measure: evidence.TwoGroups}
	_ = step("extract fields", func(c context.Context) error { return s.ExtractFields(c, nil) })
	_ = step("extract results", func(c context.Context) error { return s.ExtractResults(c, 0, nil) })

	studies, res, metaErr := p.Analyze()
	if metaErr != nil {
		t.Logf("meta-analysis: %v", metaErr)
	}

	// Resume: the saved project reads back as it was.
	back, err := ws.LoadReviewProject(p.Name)
	if err != nil {
		t.Fatal(err)
	}
	if back.Query != p.Query || len(back.Decisions) != len(p.Decisions) || len(back.Screening) != len(p.Screening) {
		t.Errorf("resumed project differs: query %q/%q, %d/%d decisions, %d/%d screened",
			back.Query, p.Query, len(back.Decisions), len(p.Decisions), len(back.Screening), len(p.Screening))
	}

	x := &evidence.ProjectExport{Project: p, Model: model}
	if metaErr == nil {
		x.Meta, x.MetaStudies = &res, studies
	}
	out := filepath.Join(t.TempDir(), "review.xlsx")
	sum, err := evidence.WriteProjectWorkbook(ctx, out, x, export.Provenance{AppVersion: "test"}, export.Options{})
	if err != nil {
		t.Fatalf("workbook: %v", err)
	}
	t.Logf("workbook: %d sheets, %d rows; PRISMA %+v", len(sum.Sheets), sum.Rows, p.PRISMA())
}

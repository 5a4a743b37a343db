package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/app/impression"
	"github.com/clinsight/clinsight/app/meta"
	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// TestEveryActionLeavesAnAuditRecord runs each recorded action once on the
// demo, against a scripted model server through the real client, and
// checks that each left its record in an intact trail: a settings change,
// an import, SQL (typed and run again from the Cohort screen), a question
// asked, a model call from each pipeline, and every export.
func TestEveryActionLeavesAnAuditRecord(t *testing.T) {
	ctx := context.Background()
	srv := ollamatest.New(t,
		ollamatest.Model{Name: "chat-model"},
		ollamatest.Model{Name: "embed-model", Embedding: true},
	)
	// Structured requests get the cohort pipeline's classify-and-generate
	// reply (other pipelines reject it, which is fine: their calls are
	// recorded all the same); free text gets a sentence.
	srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
		if len(req.Format) > 0 {
			return ollamatest.ChatReply{Content: `{"category":"answerable","reason":"","sql":"SELECT count(*) AS n FROM patients"}`}
		}
		return ollamatest.ChatReply{Content: "There are 40 patients."}
	})
	ws := openTemp(t)
	ws.SetVersion("audit-test")
	if err := ws.UpdateConfig(func(c *Config) {
		c.OllamaHost = srv.URL
		c.Models = Models{SQL: "chat-model", Chat: "chat-model", Embedding: "embed-model"}
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.InitDemo(ctx, demo.Options{Seed: 3, Patients: 40}, false); err != nil {
		t.Fatal(err)
	}
	src := source(t, ws, DemoSourceName)

	// since returns the records written by step, checking the chain.
	step := func(name string, fn func() error) []audit.Record {
		t.Helper()
		before := len(auditRecords(t, ws))
		if err := fn(); err != nil {
			t.Logf("%s: %v (its records are checked all the same)", name, err)
		}
		recs := auditRecords(t, ws)
		if len(recs) == before {
			t.Errorf("%s left no audit record", name)
		}
		return recs[before:]
	}
	has := func(name string, recs []audit.Record, action string, detail func(map[string]any) bool) {
		t.Helper()
		for _, r := range recs {
			if r.Action == action && (detail == nil || detail(r.Details)) {
				if r.User == "" || r.Host == "" || r.Version != "audit-test" || r.ModelHost != srv.URL || r.ModelTLS == "" {
					t.Errorf("%s: record without its context: %+v", name, r)
				}
				return
			}
		}
		t.Errorf("%s: no %q record among %d: %+v", name, action, len(recs), recs)
	}
	modelCall := func(m map[string]any) bool { return m["model"] != nil && m["prompt_bytes"] != nil }

	// A settings change.
	has("settings change", step("settings change", func() error {
		return ws.UpdateConfig(func(c *Config) { c.Limits.MaxRows = 40000 })
	}), audit.ActionSettings, func(m map[string]any) bool { return strings.Contains(DetailsText(m), "max_rows") })

	// An import.
	csv := filepath.Join(t.TempDir(), "vitals.csv")
	if err := os.WriteFile(csv, []byte("subject_id,hr\n1,80\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	has("import", step("import", func() error {
		_, err := ws.Data().ImportCSV(ctx, csv, datasets.CSVOptions{})
		return err
	}), audit.ActionImport, func(m map[string]any) bool { return m["status"] == "done" })

	// SQL typed in the Data screen or `clinsight sql`.
	var res *datasets.Result
	has("sql", step("sql", func() error {
		var err error
		res, err = ws.Data().Query(ctx, src, "SELECT gender, count(*) AS n FROM patients GROUP BY gender", datasets.RunnerOptions{})
		return err
	}), audit.ActionSQL, func(m map[string]any) bool {
		return m["rows"] != nil && strings.Contains(fmt.Sprint(m["sql"]), "GROUP BY gender")
	})

	// A question asked, and the model calls of the cohort pipeline.
	sess, err := ws.Cohort().Open(ctx, src, CohortOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	var ans *cohort.Answer
	recs := step("ask", func() error {
		var err error
		ans, err = sess.Ask(ctx, cohort.Request{Question: "How many patients are there?"}, nil)
		return err
	})
	has("ask", recs, audit.ActionAsk, func(m map[string]any) bool { return m["question"] == "How many patients are there?" && m["sql"] != nil })
	has("cohort model call", recs, audit.ActionModelCall, modelCall)
	has("sql run again", step("sql run again", func() error {
		_, err := sess.Run(ctx, ans, "SELECT count(*) AS n FROM admissions")
		return err
	}), audit.ActionSQL, func(m map[string]any) bool { return m["typed"] == true })

	// Trial matching with the model.
	ps, err := ws.Trials().Patients(ctx, src)
	if err != nil || len(ps) == 0 {
		t.Fatal(len(ps), err)
	}
	var match *trials.Result
	has("trials model call", step("trials", func() error {
		var err error
		match, err = ws.Trials().Match(ctx, src, trials.Request{Patient: ps[0].Description, Top: 5}, TrialsOptions{})
		return err
	}), audit.ActionModelCall, modelCall)

	// Impressions with the model.
	corpus, err := ws.Impressions().Corpus(ctx, src)
	if err != nil {
		t.Fatal(err)
	}
	gen, err := ws.Impressions().Generator(corpus, impression.Options{Iterations: 1})
	if err != nil {
		t.Fatal(err)
	}
	var imp impression.Result
	has("impressions model call", step("impressions", func() error {
		var err error
		imp, err = gen.Generate(ctx, impression.Request{Findings: "The heart is enlarged. Small left pleural effusion."}, nil)
		return err
	}), audit.ActionModelCall, modelCall)

	// Evidence synthesis with the model.
	rv, err := ws.Reviews().Create("audit review", DemoSourceName, evidence.PICO{Population: "adults with hepatocellular carcinoma", Intervention: "microwave ablation"})
	if err != nil {
		t.Fatal(err)
	}
	has("evidence model call", step("evidence", func() error { return rv.SuggestTerms(ctx) }), audit.ActionModelCall, modelCall)

	// Embeddings.
	has("embedding call", step("embeddings", func() error {
		choice := ws.ChooseEmbedder(ctx, nil)
		if choice.Lexical {
			return fmt.Errorf("lexical fallback: %s", choice.Label)
		}
		_, err := choice.Embedder.Embed(ctx, []string{"chest pain"})
		return err
	}), audit.ActionModelCall, func(m map[string]any) bool { return m["model"] == "embed-model" })

	// Every export.
	dir := t.TempDir()
	exported := func(name string, fn func(path string) error) {
		t.Helper()
		path := filepath.Join(dir, strings.ReplaceAll(name, " ", "-")+".xlsx")
		has(name+" export", step(name+" export", func() error { return fn(path) }), audit.ActionExport, func(m map[string]any) bool {
			return m["path"] == path && len(fmt.Sprint(m["sha256"])) == 64
		})
		if _, err := os.Stat(path); err != nil {
			t.Errorf("%s export: %v", name, err)
		}
	}
	exported("data", func(path string) error {
		_, err := ws.Data().Export(ctx, path, res, export.Provenance{AppVersion: "t"}, ExportOptions{Source: src, Query: "SELECT gender, count(*) AS n FROM patients GROUP BY gender"})
		return err
	})
	exported("cohort", func(path string) error {
		_, err := ws.Cohort().Export(ctx, path, ans, ExportOptions{Source: src, Version: "t"})
		return err
	})
	exported("trials", func(path string) error {
		_, err := ws.Trials().Export(ctx, path, match, export.Provenance{AppVersion: "t", DataSource: src.Name})
		return err
	})
	exported("impressions", func(path string) error {
		_, err := ws.Impressions().Export(ctx, path, []impression.ExportRow{{UID: "1", Result: imp}}, impression.Options{}, export.Provenance{AppVersion: "t"}, nil)
		return err
	})
	exported("review", func(path string) error { return rv.ExportWorkbook(ctx, path, export.Provenance{AppVersion: "t"}) })
	exported("meta-analysis", func(path string) error {
		studies, err := ws.Meta().Parse(ctx, "study,ai,n1i,ci,n2i\nA,4,123,11,139\nB,6,306,29,303\nC,3,231,11,220\n", meta.InputSpec{Kind: meta.Binary}, meta.Plan{})
		if err != nil {
			return err
		}
		rep, err := ws.Meta().Run(ctx, studies, meta.Options{Measure: meta.RR}, meta.Plan{})
		if err != nil {
			return err
		}
		_, err = ws.Meta().Export(ctx, path, studies, rep, meta.Plan{}, meta.NewProvenance("t", "pasted", meta.InputSpec{}))
		return err
	})
	exported("audit trail", func(path string) error {
		_, err := ws.Audit().Export(ctx, path)
		return err
	})
}

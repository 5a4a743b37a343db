package cohort

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/datasets/realdata"
	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
	"github.com/clinsight/clinsight/vectorstore"
	"github.com/ollama/ollama/api"
)

// testDemoPath is the small demo database shared by the tests of this
// package (generated once by TestMain, read-only afterwards), in
// testTempDir, which TestMain removes at the end.
var testDemoPath, testTempDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "cohort-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	testTempDir = dir
	testDemoPath = filepath.Join(dir, "demo.sqlite")
	opts := demo.DefaultOptions()
	opts.Patients = 60
	if _, err := demo.Generate(context.Background(), testDemoPath, opts); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// sqlModel is the model name the scripted server serves.
const sqlModel = "sql-model:latest"

// fixture is a pipeline on the small demo database and a scripted model.
type fixture struct {
	srv    *ollamatest.Server
	runner *datasets.Runner
	p      *Pipeline
}

// newFixture builds a pipeline on the demo database whose model is a
// scripted ollamatest server reached through the real client.
func newFixture(t testing.TB, cfg Config) *fixture {
	t.Helper()
	return newFixtureOn(t, testDemoPath, cfg)
}

// newFixtureOn is newFixture on the database at path.
func newFixtureOn(t testing.TB, path string, cfg Config) *fixture {
	t.Helper()
	ctx := context.Background()
	srv := ollamatest.New(t, ollamatest.Model{Name: sqlModel})
	client, err := localllm.New(localllm.Config{Host: srv.URL, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	ix, runner := demoIndex(t, path)
	cfg.Chat, cfg.Runner, cfg.Index = client, runner, ix
	if cfg.SQLModel == "" {
		cfg.SQLModel = sqlModel
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cfg.DataSource = "demo"
	p, err := New(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	return &fixture{srv: srv, runner: runner, p: p}
}

// demoIndex builds the retrieval index (lexical fallback) and a runner of a
// database.
func demoIndex(t testing.TB, path string) (*Index, *datasets.Runner) {
	t.Helper()
	ctx := context.Background()
	db, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	cat, err := datasets.ReadCatalog(ctx, db, datasets.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	store, err := vectorstore.Open(t.TempDir(), vectorstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ix, err := BuildIndex(ctx, cat, IndexOptions{Store: store, Embedder: vectorstore.NewLexicalEmbedder(0), DBPath: path, DB: db})
	if err != nil {
		t.Fatal(err)
	}
	runner, err := datasets.NewRunner(ctx, path, datasets.RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { runner.Close() })
	return ix, runner
}

// classify returns the JSON reply of the classify-and-generate call.
func classify(category, reason, sql string) ollamatest.ChatReply {
	return ollamatest.ChatReply{Content: fmt.Sprintf(`{"category":%q,"reason":%q,"sql":%q}`, category, reason, sql)}
}

// text returns a plain reply.
func text(s string) ollamatest.ChatReply { return ollamatest.ChatReply{Content: s} }

// lastUser returns the last user message of a recorded chat request.
func lastUser(req api.ChatRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == "user" {
			return req.Messages[i].Content
		}
	}
	return ""
}

// scalar runs a query returning one value on the fixture's database.
func (f *fixture) scalar(t testing.TB, query string) any {
	t.Helper()
	res, err := f.runner.Query(context.Background(), query)
	if err != nil || len(res.Rows) != 1 {
		t.Fatalf("%s: %v", query, err)
	}
	return res.Rows[0][0]
}

// newClient returns the real client for a scripted server.
func newClient(t testing.TB, url string) *localllm.Client {
	t.Helper()
	c, err := localllm.New(localllm.Config{Host: url, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// newRunner opens a read-only runner on path.
func newRunner(t testing.TB, path string) *datasets.Runner {
	t.Helper()
	r, err := datasets.NewRunner(context.Background(), path, datasets.RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

// discard is a logger that drops everything.
func discard() *slog.Logger { return slog.New(slog.DiscardHandler) }

// realdataPath is the EHRSQL demo database (skipping when absent).
func realdataPath(t testing.TB) string {
	return realdata.Path(t, "ehrsql-2024-mimic-iv-demo", "mimic_iv_demo.sqlite")
}

package cli

import (
	"context"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/localllm/ollamatest"
	"github.com/ollama/ollama/api"
)

// The literature and saved reviews the evidence command tests start from,
// made one way: the demo literature or the test fixtures imported with
// "evidence import", a source registered in the workspace, a review
// created and searched as the desktop app does, a saved review opened as
// the desktop app opens it.

// demoLiterature writes the demo literature (evidence.DemoData) to a new
// database file and returns its path.
func demoLiterature(t *testing.T) string {
	t.Helper()
	ctx := context.Background()
	db := filepath.Join(t.TempDir(), "lit.sqlite")
	h, err := datasets.OpenReadWrite(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	if err := evidence.DemoData(ctx, h, 1); err != nil {
		t.Fatal(err)
	}
	return db
}

// importedLiterature imports the test fixtures (evidenceFixtures) with
// "evidence import", run in the workspace wsDir, into a new database file
// and returns its path.
func importedLiterature(t *testing.T, wsDir string) string {
	t.Helper()
	db := filepath.Join(t.TempDir(), "lit.sqlite")
	if _, stderr, code := run(t, wsDir, append([]string{"evidence", "import", "--db", db}, evidenceFixtures...)...); code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	return db
}

// openWorkspace opens the workspace wsDir; the caller closes it.
func openWorkspace(t *testing.T, wsDir string) *app.Workspace {
	t.Helper()
	ws, err := app.Open(wsDir)
	if err != nil {
		t.Fatal(err)
	}
	return ws
}

// registerLiterature registers the database file db as the data source
// name of the workspace wsDir.
func registerLiterature(t *testing.T, wsDir, db, name string) {
	t.Helper()
	ws := openWorkspace(t, wsDir)
	defer ws.Close()
	if _, err := ws.RegisterSQLite(context.Background(), db, name); err != nil {
		t.Fatal(err)
	}
}

// createSearchedReview creates the saved review name on the literature src in
// the open workspace ws, with the PICO q and the search query, and runs
// its search for limit candidates, as the desktop app does. The caller
// closes the review, which saves it.
func createSearchedReview(t *testing.T, ws *app.Workspace, name, src string, q evidence.PICO, query string, limit int) app.Reviewer {
	t.Helper()
	r, err := ws.Reviews().Create(name, src, q)
	if err != nil {
		t.Fatal(err)
	}
	r.Update(func(p *evidence.Project) { p.Query = query })
	if _, err := r.Search(context.Background(), limit); err != nil {
		_ = r.Close()
		t.Fatal(err)
	}
	return r
}

// ablationPICO is the PICO of the small reviews searched with the query
// "ablation" on the demo literature.
var ablationPICO = evidence.PICO{Population: "hepatocellular carcinoma", Intervention: "ablation"}

// withReview opens the saved review name of the workspace wsDir as the
// desktop app opens it (ws.Reviews().Open), runs do on it, then saves and
// closes it, failing the test if saving fails.
func withReview(t *testing.T, wsDir, name string, do func(r app.Reviewer)) {
	t.Helper()
	ws := openWorkspace(t, wsDir)
	defer ws.Close()
	r, err := ws.Reviews().Open(name)
	if err != nil {
		t.Fatal(err)
	}
	closed := false
	defer func() {
		if !closed { // do failed the test
			_ = r.Close()
		}
	}()
	do(r)
	closed = true
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
}

// searchJSONOf runs "evidence search" with args and --json in the
// workspace wsDir, fails the test unless it succeeds, and returns its
// output decoded and the IDs of its hits in order.
func searchJSONOf(t *testing.T, wsDir string, args ...string) (got searchJSON, ids []string) {
	t.Helper()
	out, stderr, code := run(t, wsDir, append(append([]string{"evidence", "search"}, args...), "--json")...)
	if code != 0 {
		t.Fatalf("search %s: exit %d: %s", strings.Join(args, " "), code, stderr)
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	for _, h := range got.Hits {
		ids = append(ids, h.ID)
	}
	return got, ids
}

// scriptedLiterature starts a scripted chat model (llama3.1:8b, through
// the real client) that answers with reply, or with the replies queued
// when reply is nil, a workspace that uses it, and the test literature
// imported there. It returns the model server, the workspace directory
// and the literature's path.
func scriptedLiterature(t *testing.T, reply func(api.ChatRequest) ollamatest.ChatReply) (srv *ollamatest.Server, wsDir, db string) {
	t.Helper()
	srv = ollamatest.New(t, ollamatest.Model{Name: "llama3.1:8b"})
	if reply != nil {
		srv.HandleChat(reply)
	}
	wsDir = workspaceWithHost(t, srv.URL)
	return srv, wsDir, importedLiterature(t, wsDir)
}

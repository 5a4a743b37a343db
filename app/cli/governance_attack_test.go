package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/datasets/realdata"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// TestTable1JSONOfASmallCohortOnAnAggregateOnlySource: `cohort table1
// --json` on an aggregate-only source printed the exact number of
// patients of a cohort of 3 ("patients": 3) beside a table that
// suppressed it; it prints "<11".
func TestTable1JSONOfASmallCohortOnAnAggregateOnlySource(t *testing.T) {
	ws := t.TempDir()
	if _, stderr, code := run(t, ws, "demo", "init", "--patients", "30"); code != 0 {
		t.Fatalf("demo init: %s", stderr)
	}
	if _, stderr, code := run(t, ws, "sources", "set", "demo", "--access", "aggregate-only"); code != 0 {
		t.Fatalf("sources set: %s", stderr)
	}
	const sql = "SELECT subject_id FROM patients WHERE subject_id IN (SELECT subject_id FROM patients ORDER BY subject_id LIMIT 3)"
	out, stderr, code := run(t, ws, "cohort", "table1", "--db", "demo", "--sql", sql, "--json")
	if code != 0 {
		t.Fatalf("table1: %s", stderr)
	}
	var got struct {
		Patients any        `json:"patients"`
		Rows     [][]string `json:"rows"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if got.Patients != "<11" {
		t.Errorf("patients = %v, want <11", got.Patients)
	}
	for _, r := range got.Rows {
		for _, c := range r[1:] {
			if c == "3" || strings.HasPrefix(c, "3 ") {
				t.Errorf("row %q shows the exact count", r)
			}
		}
	}
}

// TestEvalEHRSQLRefusesAnAggregateOnlySource: `eval ehrsql --db SOURCE`
// wrote every question's exact answer and gold answer (patient rows,
// small counts) to ehrsql-*-results.json and .xlsx, outside the export
// rules and the audit trail; on an aggregate-only source it is refused
// before anything runs, and nothing is written.
func TestEvalEHRSQLRefusesAnAggregateOnlySource(t *testing.T) {
	dir := realdata.Path(t, "ehrsql-2024-mimic-iv-demo")
	srv := ollamatest.New(t, ollamatest.Model{Name: "qwen2.5-coder:7b"}, ollamatest.Model{Name: "llama3.1:8b"})
	srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
		if req.Format == nil {
			return ollamatest.ChatReply{Content: "Done."}
		}
		return classifyReply("SELECT count(*) FROM patients WHERE gender = 'F'")
	})
	ws := workspaceWithHost(t, srv.URL)
	if _, stderr, code := run(t, ws, "demo", "init", "--patients", "30"); code != 0 {
		t.Fatalf("demo init: %s", stderr)
	}
	if _, stderr, code := run(t, ws, "sources", "set", "demo", "--access", "aggregate-only"); code != 0 {
		t.Fatalf("sources set: %s", stderr)
	}
	out := filepath.Join(t.TempDir(), "run")
	_, stderr, code := run(t, ws, "eval", "ehrsql", "--ehrsql", dir, "--db", "demo", "--limit", "2", "--out", out, "--json")
	if code == 0 || !strings.Contains(stderr, "aggregate-only") {
		t.Errorf("eval ehrsql on an aggregate-only source: exit %d: %s", code, stderr)
	}
	for _, p := range []string{out + ".json", out + ".xlsx"} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s was written", p)
		}
	}
}

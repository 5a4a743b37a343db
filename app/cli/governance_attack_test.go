package cli

import (
	"encoding/json"
	"fmt"
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

// TestAggregateOnlyPostgresErrorsShowNoValues: PostgreSQL's data errors
// quote the value that failed ("invalid input syntax for type integer:
// \"F\""), so a cast in a WHERE clause read a patient's values through
// the error of an aggregate-only source; such errors are reported without
// the value.
func TestAggregateOnlyPostgresErrorsShowNoValues(t *testing.T) {
	_, _, dsn := mimicOnPostgres(t)
	ws := t.TempDir()
	if _, stderr, code := run(t, ws, "sources", "add", "pg", "--postgres", dsn, "--schemas", "mimiciv_hosp,mimiciv_icu", "--password-env", "CLI_READER_PW"); code != 0 {
		t.Fatalf("sources add: %s", stderr)
	}
	ref, stderr, code := run(t, ws, "sql", "--db", "pg", "--json", "SELECT anchor_age FROM patients ORDER BY subject_id LIMIT 1")
	if code != 0 {
		t.Fatalf("reference: %s", stderr)
	}
	var r struct {
		Rows [][]any `json:"rows"`
	}
	if err := json.Unmarshal([]byte(ref), &r); err != nil || len(r.Rows) != 1 {
		t.Fatalf("reference %s: %v", ref, err)
	}
	age := fmt.Sprint(r.Rows[0][0])
	if _, stderr, code := run(t, ws, "sources", "set", "pg", "--access", "aggregate-only"); code != 0 {
		t.Fatalf("sources set: %s", stderr)
	}
	q := "SELECT count(*) FROM patients WHERE subject_id = (SELECT min(subject_id) FROM patients) AND (anchor_age::text || 'y')::int = 0"
	_, stderr, code = run(t, ws, "sql", "--db", "pg", "--json", q)
	if code == 0 {
		t.Fatal("the failing cast ran")
	}
	if strings.Contains(stderr, `"`+age+`y"`) || strings.Contains(stderr, age+"y") {
		t.Errorf("the error shows the patient's age %s: %s", age, stderr)
	}
}

package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/localllm/ollamatest"
)

const cliGenderSQL = "SELECT gender, count(*) FROM patients GROUP BY gender ORDER BY gender"

// disclosureWorkspace is a workspace with the 30-patient demo (one gender
// under 11) and a scripted model server; it returns the raw gender counts.
func disclosureWorkspace(t *testing.T) (string, *ollamatest.Server, [2]int) {
	t.Helper()
	srv := ollamatest.New(t, ollamatest.Model{Name: "qwen2.5-coder:7b"}, ollamatest.Model{Name: "llama3.1:8b"})
	ws := workspaceWithHost(t, srv.URL)
	if _, stderr, code := run(t, ws, "demo", "init", "--patients", "30", "--seed", "7"); code != 0 {
		t.Fatalf("demo init: %s", stderr)
	}
	out, stderr, code := run(t, ws, "sql", "--db", "demo", "--json", cliGenderSQL)
	var res struct {
		Rows       [][]any `json:"rows"`
		Suppressed []any   `json:"suppressed"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &res) != nil || len(res.Rows) != 2 {
		t.Fatalf("sql: %d %s %s", code, out, stderr)
	}
	n := [2]int{int(res.Rows[0][1].(float64)), int(res.Rows[1][1].(float64))}
	if n[0] >= 11 || n[1] < 11 {
		t.Fatalf("the demo's genders changed: %v (the test needs one group under 11, one above)", n)
	}
	if res.Suppressed != nil || strings.Contains(out, "min_cell") {
		t.Errorf("a row-level source's --json has a suppression marker: %s", out)
	}
	return ws, srv, n
}

// TestSQLAggregateOnlyJSON: with the source set to aggregate-only, sql
// --json shows "<11" with a separate marker, and the raw counts appear
// nowhere; patient-level rows and exact exports are refused; a
// patient-level export of a row-level source needs --patient-level.
func TestSQLAggregateOnlyJSON(t *testing.T) {
	ws, _, n := disclosureWorkspace(t)
	out, stderr, code := run(t, ws, "sources", "set", "demo", "--access", "aggregate-only")
	if code != 0 || !strings.Contains(out, `data source "demo": aggregate-only, minimum cell size 11`) {
		t.Fatalf("sources set: %d %q %q", code, out, stderr)
	}
	out, stderr, code = run(t, ws, "sql", "--db", "demo", "--json", cliGenderSQL)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	want := `{"columns":["gender","count(*)"],"rows":[["F","<11"],["M","<11"]],"truncated":false,` +
		`"suppressed":[{"row":0,"column":"count(*)","shown":"<11"},{"row":1,"column":"count(*)","shown":"<11"}],"min_cell":11,"individual_column":"subject_id"}`
	if strings.TrimSpace(out) != want {
		t.Errorf("--json:\n%s\nwant\n%s", out, want)
	}
	for _, raw := range n {
		if strings.Contains(out+stderr, fmt.Sprint(raw)) {
			t.Errorf("the raw count %d is in the output: %s %s", raw, out, stderr)
		}
	}
	if _, stderr, code = run(t, ws, "sql", "--db", "demo", "SELECT subject_id, gender FROM patients"); code != 1 ||
		!strings.Contains(stderr, "aggregate-only: ask for counts or statistics") {
		t.Errorf("patient-level rows: %d %q", code, stderr)
	}
	xlsx := filepath.Join(t.TempDir(), "g.xlsx")
	if _, stderr, code = run(t, ws, "sql", "--db", "demo", "--xlsx", xlsx, "--exact", cliGenderSQL); code != 1 ||
		!strings.Contains(stderr, "exact values cannot be exported from an aggregate-only data source") {
		t.Errorf("--exact: %d %q", code, stderr)
	}
	if _, stderr, code = run(t, ws, "sources", "set", "demo", "--access", "row-level", "--min-cell", "1"); code != 1 ||
		!strings.Contains(stderr, "between 2 and 1000") {
		t.Errorf("--min-cell 1: %d %q", code, stderr)
	}

	run(t, ws, "sources", "set", "demo", "--access", "row-level")
	q := "SELECT subject_id, gender FROM patients"
	if _, stderr, code = run(t, ws, "sql", "--db", "demo", "--xlsx", xlsx, q); code != 1 ||
		!strings.Contains(stderr, "identifier columns: subject_id") || !strings.Contains(stderr, "--patient-level") {
		t.Errorf("unconfirmed patient-level export: %d %q", code, stderr)
	}
	if _, stderr, code = run(t, ws, "sql", "--db", "demo", "--xlsx", xlsx, "--patient-level", q); code != 0 {
		t.Fatalf("confirmed: %s", stderr)
	}
	wb, err := excelize.OpenFile(xlsx)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	rows, _ := wb.GetRows("Results")
	if len(rows) != 31 || len(rows[1][0]) != 16 || strings.HasPrefix(rows[1][0], "100") {
		t.Errorf("pseudonyms: %v", rows[:2])
	}
}

// TestAskAggregateOnly: the cohort answer of an aggregate-only source is
// suppressed in --json (with the marker, raw counts absent), the
// explanation request carries only the suppressed table, "fewer than 11"
// is a verified number, and the workbook has "<11".
func TestAskAggregateOnly(t *testing.T) {
	ws, srv, n := disclosureWorkspace(t)
	for _, access := range []string{"row-level", "aggregate-only"} {
		t.Run(access, func(t *testing.T) {
			run(t, ws, "sources", "set", "demo", "--access", access)
			srv.QueueChat(classifyReply(cliGenderSQL), ollamatest.ChatReply{Content: "Fewer than 11 patients of each sex."})
			xlsx := filepath.Join(t.TempDir(), "cohort.xlsx")
			out, stderr, code := run(t, ws, "ask", "--db", "demo", "--json", "--xlsx", xlsx, "How many patients of each sex?")
			if code != 0 {
				t.Fatalf("exit %d: %s", code, stderr)
			}
			var ans struct {
				Rows       [][]any `json:"rows"`
				Unverified []string
				Suppressed []struct {
					Row    int    `json:"row"`
					Column string `json:"column"`
					Shown  string `json:"shown"`
				} `json:"suppressed"`
				MinCell int `json:"min_cell"`
			}
			if err := json.Unmarshal([]byte(out), &ans); err != nil {
				t.Fatal(err)
			}
			reqs := srv.ChatRequests()
			explain := reqs[len(reqs)-1].Messages[len(reqs[len(reqs)-1].Messages)-1].Content
			if access == "row-level" {
				if ans.Rows[0][1] != float64(n[0]) || ans.Suppressed != nil || !strings.Contains(explain, fmt.Sprintf("F | %d", n[0])) {
					t.Errorf("row-level: rows %v, marker %v, explain request:\n%s", ans.Rows, ans.Suppressed, explain)
				}
			} else {
				if ans.Rows[0][1] != "<11" || ans.Rows[1][1] != "<11" || len(ans.Suppressed) != 2 || ans.Suppressed[0].Shown != "<11" || ans.MinCell != 11 {
					t.Errorf("aggregate-only: rows %v, marker %+v", ans.Rows, ans.Suppressed)
				}
				if !strings.Contains(explain, "F | <11") || strings.Contains(explain, fmt.Sprintf("F | %d", n[0])) {
					t.Errorf("the explanation request shows:\n%s", explain)
				}
				for _, raw := range n {
					if strings.Contains(out, fmt.Sprintf(",%d]", raw)) || strings.Contains(out, fmt.Sprintf(`"%d"`, raw)) {
						t.Errorf("raw count %d in --json: %s", raw, out)
					}
				}
				if len(ans.Unverified) != 0 {
					t.Errorf("'fewer than 11' unverified: %v", ans.Unverified)
				}
			}
			wb, err := excelize.OpenFile(xlsx)
			if err != nil {
				t.Fatal(err)
			}
			defer wb.Close()
			rows, _ := wb.GetRows("Cohort")
			if len(rows) != 3 || rows[1][1] != "<11" || rows[2][1] != "<11" {
				t.Errorf("Cohort sheet %v", rows)
			}
		})
	}
}

// TestAggregateOnlyOnPostgres: the individuals behind each row are counted
// by PostgreSQL itself (the augmented query, qualified when subject_id is
// ambiguous), checked against a hand-written reference query.
func TestAggregateOnlyOnPostgres(t *testing.T) {
	_, _, dsn := mimicOnPostgres(t)
	ws := t.TempDir()
	if _, stderr, code := run(t, ws, "sources", "add", "pg", "--postgres", dsn, "--schemas", "mimiciv_hosp,mimiciv_icu", "--password-env", "CLI_READER_PW"); code != 0 {
		t.Fatalf("sources add: %s", stderr)
	}
	type result struct {
		Rows       [][]any `json:"rows"`
		Suppressed []any   `json:"suppressed"`
		Individual string  `json:"individual_column"`
	}
	sql := func(q string) result {
		t.Helper()
		out, stderr, code := run(t, ws, "sql", "--db", "pg", "--json", q)
		var r result
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("%s: %d %s %s", q, code, out, stderr)
		}
		return r
	}
	join := " FROM admissions a JOIN patients p ON p.subject_id = a.subject_id WHERE a.admission_type = 'ELECTIVE' GROUP BY p.gender ORDER BY 1"
	ref := sql("SELECT p.gender, count(*), count(DISTINCT a.subject_id)" + join)
	run(t, ws, "sources", "set", "pg", "--access", "aggregate-only")
	got := sql("SELECT p.gender, count(*)" + join)
	if got.Individual != "a.subject_id" || len(got.Rows) != len(ref.Rows) || len(ref.Rows) == 0 {
		t.Fatalf("individuals counted by %q, rows %v (reference %v)", got.Individual, got.Rows, ref.Rows)
	}
	small := 0
	for i, r := range ref.Rows {
		n, ind := r[1].(float64), r[2].(float64)
		if n < 11 || ind < 11 {
			small++
			if got.Rows[i][1] != "<11" {
				t.Errorf("row %v (reference %v) not suppressed", got.Rows[i], r)
			}
		} else if small == 0 && len(ref.Rows) > 1 && got.Rows[i][1] != n && got.Rows[i][1] != "<11" {
			t.Errorf("row %v, reference %v", got.Rows[i], r)
		}
	}
	t.Logf("reference %v, shown %v, %d small groups", ref.Rows, got.Rows, small)
	if _, stderr, code := run(t, ws, "sql", "--db", "pg", "SELECT subject_id FROM patients"); code != 1 || !strings.Contains(stderr, "aggregate-only") {
		t.Errorf("patient-level rows on PostgreSQL: %d %s", code, stderr)
	}
}

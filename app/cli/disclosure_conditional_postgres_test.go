package cli

import (
	"encoding/json"
	"testing"
)

// TestConditionalCountsOnPostgres: on an aggregate-only PostgreSQL source,
// a sum of a condition (in-hospital deaths) in a group of many patients is
// hidden when fewer than 11 patients meet it, checked against a
// hand-written reference query; the mean length of stay (an interval,
// which PostgreSQL cannot compare with 0, so each aggregate is counted on
// its own) is still shown.
func TestConditionalCountsOnPostgres(t *testing.T) {
	_, _, dsn := mimicOnPostgres(t)
	ws := t.TempDir()
	if _, stderr, code := run(t, ws, "sources", "add", "pg", "--postgres", dsn, "--schemas", "mimiciv_hosp,mimiciv_icu", "--password-env", "CLI_READER_PW"); code != 0 {
		t.Fatalf("sources add: %s", stderr)
	}
	sql := func(q string) [][]any {
		t.Helper()
		out, stderr, code := run(t, ws, "sql", "--db", "pg", "--json", q)
		var r struct {
			Rows [][]any `json:"rows"`
		}
		if code != 0 || json.Unmarshal([]byte(out), &r) != nil {
			t.Fatalf("%s: %d %s %s", q, code, out, stderr)
		}
		return r.Rows
	}
	from := " FROM admissions a JOIN patients p ON p.subject_id = a.subject_id GROUP BY p.gender ORDER BY 1"
	ref := sql("SELECT p.gender, count(DISTINCT a.subject_id), count(DISTINCT CASE WHEN a.hospital_expire_flag = 1 THEN a.subject_id END)" + from)
	run(t, ws, "sources", "set", "pg", "--access", "aggregate-only")
	got := sql("SELECT p.gender, count(*) AS n, sum(CASE WHEN a.hospital_expire_flag = 1 THEN 1 ELSE 0 END) AS died, avg(a.dischtime - a.admittime) AS los" + from)
	if len(got) != len(ref) || len(ref) == 0 {
		t.Fatalf("rows %v, reference %v", got, ref)
	}
	small := 0
	for i, r := range ref {
		patients, died := r[1].(float64), r[2].(float64)
		if patients < 11 {
			t.Fatalf("group %v has fewer than 11 patients: the test needs large groups", r)
		}
		if died >= 1 && died < 11 {
			small++
			if got[i][2] != "<11" {
				t.Errorf("row %v: %v patients died, shown", got[i], died)
			}
		} else if got[i][2] == "<11" {
			t.Errorf("row %v: %v patients died, hidden", got[i], died)
		}
		if got[i][3] == "<11" || got[i][3] == nil {
			t.Errorf("row %v: the mean length of stay of %v patients is hidden", got[i], patients)
		}
	}
	if small == 0 {
		t.Fatalf("no group with 1 to 10 deaths (reference %v): the test checks nothing", ref)
	}
	t.Logf("reference %v, shown %v", ref, got)
}

package cli

import (
	"encoding/json"
	"strings"
	"testing"
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

package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
)

// TestCohortDefinitionsCLI saves a definition on the demo, exports it,
// imports it into a second workspace with the same demo and runs it there
// (same counts), and prints and exports Table 1.
func TestCohortDefinitionsCLI(t *testing.T) {
	ws1, ws2 := t.TempDir(), t.TempDir()
	for _, ws := range []string{ws1, ws2} {
		if _, stderr, code := run(t, ws, "demo", "init", "--patients", "40"); code != 0 {
			t.Fatalf("demo init: %s", stderr)
		}
	}
	const sql = "SELECT subject_id, hadm_id FROM admissions WHERE admission_type LIKE '%EMER%'"
	out, stderr, code := run(t, ws1, "cohort", "save", "--db", "demo", "--sql", sql, "--name", "Emergency admissions", "--json")
	if code != 0 {
		t.Fatalf("save: %s", stderr)
	}
	var saved struct {
		ID     string `json:"id"`
		Counts struct {
			Rows     int64 `json:"rows"`
			Patients int64 `json:"patients"`
		} `json:"counts"`
	}
	if err := json.Unmarshal([]byte(out), &saved); err != nil || !strings.HasPrefix(saved.ID, "emergency-admissions-") || saved.Counts.Patients <= 0 {
		t.Fatalf("saved %q: %v", out, err)
	}
	out, _, _ = run(t, ws1, "cohort", "list")
	if !strings.Contains(out, saved.ID) {
		t.Errorf("list: %q", out)
	}
	file := filepath.Join(t.TempDir(), "def.json")
	if _, stderr, code := run(t, ws1, "cohort", "export", saved.ID, file); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	if _, stderr, code := run(t, ws2, "cohort", "import", file, "--db", "nowhere"); code == 0 || !strings.Contains(stderr, "nowhere") {
		t.Errorf("import onto a missing source: exit %d, %q", code, stderr)
	}
	out, stderr, code = run(t, ws2, "cohort", "import", file)
	if code != 0 || !strings.Contains(out, saved.ID) {
		t.Fatalf("import: exit %d %q %q", code, out, stderr)
	}
	out, stderr, code = run(t, ws2, "cohort", "rerun", saved.ID, "--json")
	if code != 0 {
		t.Fatalf("rerun: %s", stderr)
	}
	var rr struct {
		Now struct {
			Rows     int64 `json:"rows"`
			Patients int64 `json:"patients"`
		} `json:"now"`
		RowsChange     int64 `json:"rows_change"`
		PatientsChange int64 `json:"patients_change"`
	}
	if err := json.Unmarshal([]byte(out), &rr); err != nil {
		t.Fatal(err)
	}
	if rr.Now.Rows != saved.Counts.Rows || rr.Now.Patients != saved.Counts.Patients || rr.RowsChange != 0 || rr.PatientsChange != 0 {
		t.Errorf("rerun in the second workspace %+v, saved %+v", rr, saved.Counts)
	}

	xlsx := filepath.Join(t.TempDir(), "t1.xlsx")
	out, stderr, code = run(t, ws2, "cohort", "table1", "--cohort", saved.ID, "--by", "sex", "--labs", "Creatinine", "--xlsx", xlsx)
	if code != 0 {
		t.Fatalf("table1: %s", stderr)
	}
	for _, want := range []string{"Characteristic", "Overall (n = ", "SMD", "Age, years, mean ± SD", "Creatinine at admission, mg/dL", "Admission type"} {
		if !strings.Contains(out, want) {
			t.Errorf("table1 output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "Table 1") {
		t.Errorf("table1 --xlsx: %q", stderr)
	}
	if _, stderr, code := run(t, ws2, "cohort", "table1", "--db", "demo", "--sql", "SELECT 1 AS x"); code == 0 || !strings.Contains(stderr, "identifies patients") {
		t.Errorf("table1 without a patient column: exit %d %q", code, stderr)
	}
}

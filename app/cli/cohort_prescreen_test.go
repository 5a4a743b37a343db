package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"
)

// TestCohortPrescreenCLI pre-screens a saved demo cohort for the demo
// trials without a model: the trials come by how many patients might
// qualify, the matrix holds every patient, the workbook has the Matrix,
// Criteria and Trials sheets with pseudonyms for the patient ids; on an
// aggregate-only source only the trials' counts come out, small ones as
// <k, and no patient id.
func TestCohortPrescreenCLI(t *testing.T) {
	ws := t.TempDir()
	if _, stderr, code := run(t, ws, "demo", "init", "--patients", "40"); code != 0 {
		t.Fatalf("demo init: %s", stderr)
	}
	if _, stderr, code := run(t, ws, "cohort", "save", "--db", "demo", "--sql", "SELECT subject_id FROM patients", "--name", "Everyone"); code != 0 {
		t.Fatalf("save: %s", stderr)
	}
	ids, _, _ := run(t, ws, "sql", "--db", "demo", "--json", "SELECT subject_id FROM patients")
	rawIDs := regexp.MustCompile(`1\d{7}`).FindAllString(ids, -1)
	if len(rawIDs) != 40 {
		t.Fatalf("%d patient ids in %q", len(rawIDs), ids)
	}

	if _, stderr, code := run(t, ws, "cohort", "prescreen", "--cohort", "nobody", "--trials", "demo", "--no-llm"); code == 0 || !strings.Contains(stderr, "cohort list") {
		t.Errorf("an unknown cohort: exit %d, %q", code, stderr)
	}

	xlsx := filepath.Join(t.TempDir(), "pre.xlsx")
	// A workbook with a row per patient needs --patient-level.
	if _, stderr, code := run(t, ws, "cohort", "prescreen", "--cohort", "Everyone", "--trials", "demo", "--no-llm", "--top", "5", "--xlsx", xlsx); code == 0 ||
		!regexp.MustCompile(`(?m)^.*row per patient.*--patient-level.*$`).MatchString(stderr) {
		t.Errorf("an unconfirmed patient-level export: exit %d, %q", code, stderr)
	}
	if _, err := os.Stat(xlsx); err == nil {
		t.Error("the unconfirmed workbook was written")
	}
	out, stderr, code := run(t, ws, "cohort", "prescreen", "--cohort", "Everyone", "--trials", "demo", "--no-llm", "--top", "5", "--json", "--xlsx", xlsx, "--patient-level")
	if code != 0 {
		t.Fatalf("prescreen: %s", stderr)
	}
	var res struct {
		Total  string `json:"cohort_patients"`
		Trials []struct {
			ID    string `json:"id"`
			Might string `json:"might_qualify"`
		} `json:"trials"`
		Matrix *struct {
			Patients []struct {
				ID string `json:"id"`
			} `json:"patients"`
			Top int `json:"top"`
		} `json:"matrix"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("json: %v: %q", err, out)
	}
	if res.Total != "40" || res.Matrix == nil || len(res.Matrix.Patients) != 40 || res.Matrix.Top != 5 || len(res.Trials) == 0 {
		t.Fatalf("result: %+v", res)
	}
	f, err := excelize.OpenFile(xlsx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := strings.Join(f.GetSheetList(), ","); got != "Matrix,Criteria,Trials,Provenance" {
		t.Errorf("sheets %s", got)
	}
	rows, _ := f.GetRows("Matrix")
	if len(rows) != 42 { // header, "might qualify", 40 patients
		t.Fatalf("matrix sheet has %d rows", len(rows))
	}
	hex := regexp.MustCompile(`^[0-9a-f]{16}$`)
	for _, r := range rows[2:] {
		if !hex.MatchString(r[0]) {
			t.Errorf("matrix patient %q is not a pseudonym", r[0])
		}
	}
	// Counts of patients under k are suppressed unless --exact.
	trialRows, _ := f.GetRows("Trials")
	if !strings.Contains(fmt.Sprint(trialRows), "<11") {
		t.Errorf("no count suppressed in the Trials sheet: %v", trialRows[:min(len(trialRows), 5)])
	}
	exact := filepath.Join(t.TempDir(), "exact.xlsx")
	if _, stderr, code := run(t, ws, "cohort", "prescreen", "--cohort", "Everyone", "--trials", "demo", "--no-llm", "--top", "5", "--xlsx", exact, "--patient-level", "--exact"); code != 0 {
		t.Fatalf("exact export: %s", stderr)
	}
	if e, err := excelize.OpenFile(exact); err != nil {
		t.Fatal(err)
	} else {
		er, _ := e.GetRows("Trials")
		e.Close()
		if strings.Contains(fmt.Sprint(er), "<11") || len(er) != len(trialRows) {
			t.Errorf("exact export's Trials sheet: %v", er[:min(len(er), 5)])
		}
	}
	crit, _ := f.GetRows("Criteria")
	dated := 0
	for _, r := range crit[1:] {
		if !hex.MatchString(r[0]) {
			t.Fatalf("criteria patient %q is not a pseudonym", r[0])
		}
		if len(r) > 12 && regexp.MustCompile(`^\d{4}-\d{2}-\d{2}$`).MatchString(r[12]) {
			dated++
		}
	}
	if dated == 0 {
		t.Error("no criterion cites a value with its date")
	}
	for _, sheet := range f.GetSheetList() {
		all, _ := f.GetRows(sheet)
		for _, r := range all {
			for _, c := range r {
				for _, id := range rawIDs {
					if strings.Contains(c, id) {
						t.Fatalf("sheet %s holds the patient id %s: %q", sheet, id, c)
					}
				}
			}
		}
	}
	text, _, code := run(t, ws, "cohort", "prescreen", "--cohort", "Everyone", "--trials", "demo", "--no-llm", "--top", "5")
	if code != 0 || !strings.Contains(text, "might qualify") || !strings.Contains(text, res.Trials[0].ID) {
		t.Errorf("text output: %q", text)
	}

	// Aggregate-only: the trials' counts only, small ones suppressed.
	if _, stderr, code := run(t, ws, "sources", "set", "demo", "--access", "aggregate-only", "--min-cell", "11"); code != 0 {
		t.Fatalf("sources set: %s", stderr)
	}
	xlsx2 := filepath.Join(t.TempDir(), "agg.xlsx")
	out, stderr, code = run(t, ws, "cohort", "prescreen", "--cohort", "Everyone", "--trials", "demo", "--no-llm", "--top", "5", "--json", "--xlsx", xlsx2)
	if code != 0 {
		t.Fatalf("aggregate-only prescreen: %s", stderr)
	}
	if strings.Contains(out, `"matrix"`) || strings.Contains(out, `"patients":[`) {
		t.Errorf("aggregate-only JSON lists patients: %q", out)
	}
	for _, id := range rawIDs {
		if strings.Contains(out, id) {
			t.Fatalf("aggregate-only JSON holds patient id %s", id)
		}
	}
	var agg struct {
		Trials []struct {
			Might string `json:"might_qualify"`
		} `json:"trials"`
	}
	if err := json.Unmarshal([]byte(out), &agg); err != nil {
		t.Fatal(err)
	}
	small := 0
	for _, tr := range agg.Trials {
		switch tr.Might {
		case "<11":
			small++
		case "1", "2", "3", "4", "5", "6", "7", "8", "9", "10":
			t.Errorf("a count of %s patients is shown on an aggregate-only source", tr.Might)
		}
	}
	if small == 0 {
		t.Error("no small count to suppress: the test cannot tell")
	}
	g, err := excelize.OpenFile(xlsx2)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if got := strings.Join(g.GetSheetList(), ","); got != "Trials,Provenance" {
		t.Errorf("aggregate-only sheets %s", got)
	}
}

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

// cliChain is a demo cohort written as four criteria after the base.
const cliChain = `WITH
-- all admitted patients
base AS (SELECT DISTINCT p.subject_id, p.gender, p.anchor_age FROM patients p JOIN admissions a ON a.subject_id = p.subject_id),
-- women
women AS (SELECT * FROM base WHERE gender = 'F'),
-- aged 65 or more
aged_65_plus AS (SELECT * FROM women WHERE anchor_age >= 65),
-- with hypertension, coronary disease or acute kidney failure
diagnosed AS (SELECT * FROM aged_65_plus WHERE subject_id IN (SELECT subject_id FROM diagnoses_icd WHERE icd_code = 'I10' OR icd_code LIKE 'I25%' OR icd_code LIKE 'N17%')),
-- given acetaminophen
on_acetaminophen AS (SELECT * FROM diagnosed WHERE subject_id IN (SELECT subject_id FROM prescriptions WHERE LOWER(drug) LIKE '%acetaminophen%'))
SELECT COUNT(DISTINCT subject_id) AS patients FROM on_acetaminophen`

// cliChainReferences count each step of cliChain by hand, then steps 3
// and 4 without the age criterion (step 2).
var cliChainReferences = []string{
	`SELECT COUNT(DISTINCT subject_id) FROM admissions`,
	`SELECT COUNT(*) FROM patients WHERE gender = 'F' AND subject_id IN (SELECT subject_id FROM admissions)`,
	`SELECT COUNT(*) FROM patients WHERE gender = 'F' AND anchor_age >= 65 AND subject_id IN (SELECT subject_id FROM admissions)`,
	`SELECT COUNT(DISTINCT p.subject_id) FROM patients p JOIN diagnoses_icd d ON d.subject_id = p.subject_id WHERE p.gender = 'F' AND p.anchor_age >= 65 AND (d.icd_code = 'I10' OR d.icd_code LIKE 'I25%' OR d.icd_code LIKE 'N17%')`,
	`SELECT COUNT(DISTINCT p.subject_id) FROM patients p JOIN diagnoses_icd d ON d.subject_id = p.subject_id JOIN prescriptions r ON r.subject_id = p.subject_id WHERE p.gender = 'F' AND p.anchor_age >= 65 AND (d.icd_code = 'I10' OR d.icd_code LIKE 'I25%' OR d.icd_code LIKE 'N17%') AND LOWER(r.drug) LIKE '%acetaminophen%'`,
	`SELECT COUNT(DISTINCT p.subject_id) FROM patients p JOIN diagnoses_icd d ON d.subject_id = p.subject_id WHERE p.gender = 'F' AND (d.icd_code = 'I10' OR d.icd_code LIKE 'I25%' OR d.icd_code LIKE 'N17%')`,
	`SELECT COUNT(DISTINCT p.subject_id) FROM patients p JOIN diagnoses_icd d ON d.subject_id = p.subject_id JOIN prescriptions r ON r.subject_id = p.subject_id WHERE p.gender = 'F' AND (d.icd_code = 'I10' OR d.icd_code LIKE 'I25%' OR d.icd_code LIKE 'N17%') AND LOWER(r.drug) LIKE '%acetaminophen%'`,
}

// TestAskAttrition: ask prints the attrition of a cohort written as
// criteria, --json carries it, --without-step switches a criterion off
// and counts again without a model request, and the workbook's Attrition
// sheet shows counts under 11 as <11.
func TestAskAttrition(t *testing.T) {
	ws, srv := cohortWorkspace(t, false)
	var want []int64
	for _, q := range cliChainReferences {
		out, stderr, code := run(t, ws, "sql", "--db", "demo", "--json", q)
		var res struct{ Rows [][]float64 }
		if code != 0 || json.Unmarshal([]byte(out), &res) != nil {
			t.Fatalf("sql %s: %s %s", q, out, stderr)
		}
		want = append(want, int64(res.Rows[0][0]))
	}
	if want[4] >= 11 || want[2] < 11 {
		t.Fatalf("the reference counts %v do not test suppression in the workbook", want)
	}

	srv.QueueChat(classifyReply(cliChain), ollamatest.ChatReply{Content: "The cohort is described."})
	out, stderr, code := run(t, ws, "ask", "--db", "demo", "--json", "--without-step", "2", "Older women with hypertension given acetaminophen")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := len(srv.ChatRequests()); n != 2 {
		t.Errorf("%d model requests, want 2 (generate, explain): switching a step off asked the model", n)
	}
	var ans struct {
		Attrition struct {
			PatientColumn string `json:"patient_column"`
			Off           []int  `json:"off"`
			Steps         []struct {
				Step      int    `json:"step"`
				Criterion string `json:"criterion"`
				On        bool   `json:"on"`
				Patients  any    `json:"patients"`
				Removed   any    `json:"removed"`
			} `json:"steps"`
		} `json:"attrition"`
	}
	if err := json.Unmarshal([]byte(out), &ans); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	a := ans.Attrition
	if a.PatientColumn != "subject_id" || len(a.Off) != 1 || a.Off[0] != 2 || len(a.Steps) != 5 {
		t.Fatalf("attrition = %+v", a)
	}
	counted := []any{float64(want[0]), float64(want[1]), nil, float64(want[5]), float64(want[6])}
	for i, s := range a.Steps {
		if s.Patients != counted[i] || s.On != (i != 2) {
			t.Errorf("step %d = %+v, want %v patients", i, s, counted[i])
		}
	}
	if a.Steps[3].Removed != float64(want[1]-want[5]) {
		t.Errorf("step 3 removed %v, want %d", a.Steps[3].Removed, want[1]-want[5])
	}
	// The count without step 2 is in the audit trail, with its statement.
	trail, _, code := run(t, ws, "audit", "show", "--json")
	recorded := false
	for _, line := range strings.Split(strings.TrimSpace(trail), "\n") {
		var rec struct {
			Action  string         `json:"action"`
			Details map[string]any `json:"details"`
		}
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Action == "sql" && rec.Details["what"] == "attrition" {
			sql, _ := rec.Details["sql"].(string)
			recorded = fmt.Sprint(rec.Details["steps_off"]) == "[2]" && sql != "" && !strings.Contains(sql, "aged_65_plus")
		}
	}
	if code != 0 || !recorded {
		t.Errorf("no audit record of the count without step 2 (exit %d):\n%s", code, trail)
	}

	// The text output, and the workbook: an Attrition sheet with the
	// counts under 11 suppressed (exports always are).
	srv.QueueChat(classifyReply(cliChain), ollamatest.ChatReply{Content: "Described again."})
	xlsx := filepath.Join(t.TempDir(), "cohort.xlsx")
	out, stderr, code = run(t, ws, "ask", "--db", "demo", "--xlsx", xlsx, "Older women with hypertension given acetaminophen")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, w := range []string{"Attrition:", "Patients remaining", "aged 65 or more", "given acetaminophen", "--without-step N", fmt.Sprintf("  %d ", want[4])} {
		if !strings.Contains(out, w) {
			t.Errorf("the text output lacks %q:\n%s", w, out)
		}
	}

	f, err := excelize.OpenFile(xlsx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows("Attrition")
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 6 || rows[0][3] != "patients remaining" || rows[2][1] != "women" || rows[3][2] != "yes" {
		t.Fatalf("Attrition sheet = %q", rows)
	}
	for i, n := range want[:5] {
		cell := fmt.Sprint(n)
		if n < 11 {
			cell = "<11"
		}
		if rows[i+1][3] != cell {
			t.Errorf("Attrition sheet step %d: %q, want %s", i, rows[i+1], cell)
		}
	}

	// A single statistic has no steps to switch off.
	srv.QueueChat(classifyReply(cliFemaleSQL), ollamatest.ChatReply{Content: "Some women."})
	out, stderr, code = run(t, ws, "ask", "--db", "demo", "--without-step", "1", "How many female patients are there?")
	if code == 0 || !strings.Contains(stderr, "not a list of criteria") || strings.Contains(out, "Attrition:") {
		t.Errorf("single statistic with --without-step: exit %d, %s\n%s", code, stderr, out)
	}
}

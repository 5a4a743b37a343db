package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// attritionChain is a cohort of the demo written as a chain of four
// criteria, as the generation prompt asks for it.
const attritionChain = `WITH
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

// attritionReferences are hand-written counts of each step of
// attritionChain, then of steps 3 and 4 without the age criterion.
var attritionReferences = []string{
	`SELECT COUNT(DISTINCT subject_id) FROM admissions`,
	`SELECT COUNT(*) FROM patients WHERE gender = 'F' AND subject_id IN (SELECT subject_id FROM admissions)`,
	`SELECT COUNT(*) FROM patients WHERE gender = 'F' AND anchor_age >= 65 AND subject_id IN (SELECT subject_id FROM admissions)`,
	`SELECT COUNT(DISTINCT p.subject_id) FROM patients p JOIN diagnoses_icd d ON d.subject_id = p.subject_id WHERE p.gender = 'F' AND p.anchor_age >= 65 AND (d.icd_code = 'I10' OR d.icd_code LIKE 'I25%' OR d.icd_code LIKE 'N17%')`,
	`SELECT COUNT(DISTINCT p.subject_id) FROM patients p JOIN diagnoses_icd d ON d.subject_id = p.subject_id JOIN prescriptions r ON r.subject_id = p.subject_id WHERE p.gender = 'F' AND p.anchor_age >= 65 AND (d.icd_code = 'I10' OR d.icd_code LIKE 'I25%' OR d.icd_code LIKE 'N17%') AND LOWER(r.drug) LIKE '%acetaminophen%'`,
	`SELECT COUNT(DISTINCT p.subject_id) FROM patients p JOIN diagnoses_icd d ON d.subject_id = p.subject_id WHERE p.gender = 'F' AND (d.icd_code = 'I10' OR d.icd_code LIKE 'I25%' OR d.icd_code LIKE 'N17%')`,
	`SELECT COUNT(DISTINCT p.subject_id) FROM patients p JOIN diagnoses_icd d ON d.subject_id = p.subject_id JOIN prescriptions r ON r.subject_id = p.subject_id WHERE p.gender = 'F' AND (d.icd_code = 'I10' OR d.icd_code LIKE 'I25%' OR d.icd_code LIKE 'N17%') AND LOWER(r.drug) LIKE '%acetaminophen%'`,
}

// newAttritionDemo makes a workspace with the 60-patient demo and a
// scripted model server, and returns the reference counts.
func newAttritionDemo(t *testing.T) (*app.Workspace, *ollamatest.Server, []string) {
	t.Helper()
	srv := ollamatest.New(t, ollamatest.Model{Name: "qwen2.5-coder:7b"}, ollamatest.Model{Name: "llama3.1:8b"})
	ws := newEmptyWorkspace(t)
	opts := demo.DefaultOptions()
	opts.Patients = 60
	if _, err := ws.InitDemo(context.Background(), opts, false); err != nil {
		t.Fatal(err)
	}
	if err := ws.UpdateConfig(func(c *app.Config) { c.OllamaHost = srv.URL }); err != nil {
		t.Fatal(err)
	}
	r, err := datasets.NewRunner(context.Background(), ws.Sources()[0].Path, datasets.RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	var want []string
	for _, q := range attritionReferences {
		res, err := r.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, fmt.Sprint(res.Rows[0][0]))
	}
	return ws, srv, want
}

// TestCohortScreenAttrition asks for a cohort written as four criteria:
// the Attrition tab shows the patients after each step (equal to reference
// queries) and its funnel; unticking a criterion counts again without the
// model; a single statistic clears the tab.
func TestCohortScreenAttrition(t *testing.T) {
	ws, srv, want := newAttritionDemo(t)
	mw := newTestMainWindow(t, ws)
	s := mw.Cohort
	waitUntil(t, "the example questions of the demo source", func() bool { return len(s.examples.Options) > 0 })
	srv.QueueChat(cohortReply(attritionChain), ollamatest.ChatReply{Content: "The cohort is described."})
	onUI(t, func(t testing.TB) {
		s.question.SetText("Women aged 65 or more with hypertension, coronary disease or acute kidney failure given acetaminophen")
		test.Tap(s.askBtn)
	})
	waitUntil(t, "the answer", func() bool { return strings.Contains(s.status.Text, " attempt(s) · ") })
	x := s.attrition
	requests := len(srv.ChatRequests())
	onUI(t, func(t testing.TB) {
		if len(x.rows) != 5 || len(x.header) != 5 || x.header[2] != "Patients remaining" {
			t.Fatalf("header %q, rows %q; status %q", x.header, x.rows, x.status.Text)
		}
		for i, r := range x.rows {
			if r[2] != want[i] {
				t.Errorf("step %d: %q, want %s patients", i, r, want[i])
			}
		}
		if x.rows[1][1] != "women" || x.rows[0][0] != "Base" || x.rows[2][4] == "" {
			t.Errorf("rows %q", x.rows)
		}
		if len(x.checks) != 4 || !strings.HasPrefix(x.status.Text, want[4]+" patients remain after 4 of 4 criteria") {
			t.Errorf("%d checks; status %q", len(x.checks), x.status.Text)
		}
		if len(x.funnel.Objects) != 6 { // the heading and one row per step
			t.Errorf("funnel objects %d", len(x.funnel.Objects))
		}
		test.Tap(x.checks[1]) // criterion 2, aged 65 or more: off
	})
	waitUntil(t, "the counts without the age criterion", func() bool {
		return len(x.rows) == 5 && x.rows[2][2] == "switched off" && x.busyRow.Hidden
	})
	onUI(t, func(t testing.TB) {
		if x.rows[3][2] != want[5] || x.rows[4][2] != want[6] || x.rows[1][2] != want[1] {
			t.Errorf("without step 2: %q, want steps 3 and 4 at %s and %s", x.rows, want[5], want[6])
		}
		if !strings.HasPrefix(x.status.Text, want[6]+" patients remain after 3 of 4 criteria") {
			t.Errorf("status %q", x.status.Text)
		}
		if s.last.Attrition == nil || len(s.last.Attrition.Off) != 1 {
			t.Errorf("the answer to export does not hold the table shown: %+v", s.last.Attrition)
		}
	})
	if n := len(srv.ChatRequests()); n != requests {
		t.Errorf("switching a criterion off sent %d model requests", n-requests)
	}
	onUI(t, func(t testing.TB) { test.Tap(x.checks[1]) }) // criterion 2 on again
	waitUntil(t, "the counts with every criterion again", func() bool {
		return len(x.rows) == 5 && x.rows[2][2] == want[2] && x.busyRow.Hidden
	})

	// A single statistic is no cohort: the tab says so.
	srv.QueueChat(cohortReply("SELECT COUNT(*) AS patients FROM patients WHERE gender = 'F'"), ollamatest.ChatReply{Content: "Some women."})
	onUI(t, func(t testing.TB) {
		s.question.SetText("How many female patients are there?")
		test.Tap(s.askBtn)
	})
	waitUntil(t, "the second answer", func() bool { return s.last != nil && s.last.Question == "How many female patients are there?" })
	onUI(t, func(t testing.TB) {
		if len(x.rows) != 0 || len(x.checks) != 0 || x.status.Text != attritionIntro {
			t.Errorf("single statistic: rows %q, checks %d, status %q", x.rows, len(x.checks), x.status.Text)
		}
	})
}

// TestScreenshotCohortAttrition renders the Cohort screen's Attrition tab
// for a cohort of four criteria on the demo (the main window, the app's
// theme, Fyne's software painter), checks the picture is drawn and writes
// it as cohort-attrition.png to screenshotDir ($CLINSIGHT_SCREENSHOT_DIR).
func TestScreenshotCohortAttrition(t *testing.T) {
	ws, srv, want := newAttritionDemo(t)
	mw := newTestMainWindow(t, ws)
	t.Cleanup(func() { onUI(t, func(testing.TB) { mw.Window.Close() }) })
	s := mw.Cohort
	waitUntil(t, "the example questions of the demo source", func() bool { return len(s.examples.Options) > 0 })
	srv.QueueChat(cohortReply(attritionChain), ollamatest.ChatReply{Content: fmt.Sprintf(
		"%s patients are women aged 65 or more with hypertension, coronary disease or acute kidney failure who were given acetaminophen.", want[4])})
	onUI(t, func(t testing.TB) {
		if err := mw.Show("cohort"); err != nil {
			t.Fatal(err)
		}
		s.question.SetText("Women aged 65 or more with hypertension, coronary disease or acute kidney failure who were given acetaminophen")
		test.Tap(s.askBtn)
	})
	waitUntil(t, "the answer", func() bool { return strings.Contains(s.status.Text, " attempt(s) · ") && len(s.attrition.rows) == 5 })
	path := filepath.Join(screenshotDir(t), "cohort-attrition.png")
	onUI(t, func(t testing.TB) {
		withTheme(NewTheme(), func() {
			s.tabs.Select(s.attrition.tab)
			mw.Window.Resize(fyne.NewSize(1280, 900))
			mw.Window.Content().Refresh()
			capturePNG(t, mw.Window.Canvas(), path)
		})
	})
}

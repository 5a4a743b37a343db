package ui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// TestCohortScreenTable1AndSavedCohorts asks a question on the demo, shows
// its Table 1 by sex, saves the cohort, runs it again (counts unchanged),
// exports the definition and imports it back.
func TestCohortScreenTable1AndSavedCohorts(t *testing.T) {
	srv, mw := newDemoCohortWindow(t, 60)
	s := mw.Cohort

	const sql = "SELECT subject_id, hadm_id, admission_type FROM admissions WHERE admission_type LIKE '%EMER%'"
	srv.QueueChat(cohortReply(sql), ollamatest.ChatReply{Content: "These are the emergency admissions."})
	onUI(t, func(t testing.TB) {
		if s.extras == nil {
			t.Fatal("the Table 1 and Saved cohorts tabs are missing")
		}
		s.question.SetText("Which admissions were emergencies?")
		test.Tap(s.askBtn)
	})
	waitUntil(t, "the answer", func() bool { return strings.Contains(s.status.Text, " attempt(s) · ") })
	x := s.extras

	onUI(t, func(t testing.TB) {
		x.strata.SetSelected(table1Strata[1])
		test.Tap(x.t1Btn)
	})
	waitUntil(t, "Table 1", func() bool { return strings.Contains(x.t1Status.Text, "patients (by subject_id)") })
	onUI(t, func(t testing.TB) {
		if len(x.t1Header) != 5 || x.t1Header[0] != "Characteristic" || x.t1Header[4] != "SMD" || !strings.HasPrefix(x.t1Header[2], "F (n = ") {
			t.Errorf("header %q", x.t1Header)
		}
		if len(x.t1Rows) < 10 || x.t1Rows[0][0] != "Patients, n" || x.t1Rows[1][0] != "Age, years, mean ± SD" {
			t.Errorf("rows %q", x.t1Rows)
		}
		if x.t1Export.Disabled() {
			t.Error("Export Table 1 is disabled")
		}
		x.saveName.SetText("Emergency admissions")
		test.Tap(x.saveBtn)
	})
	waitUntil(t, "the saved cohort", func() bool {
		return strings.HasPrefix(x.savedStatus.Text, `Saved "Emergency admissions"`) && len(x.saved) == 1
	})
	onUI(t, func(t testing.TB) {
		x.savedList.Select(0)
		test.Tap(x.rerunBtn)
	})
	waitUntil(t, "the cohort run again", func() bool { return strings.Contains(x.savedStatus.Text, "since it was saved") })
	onUI(t, func(t testing.TB) {
		if !strings.Contains(x.savedStatus.Text, "rows") || !strings.Contains(x.savedStatus.Text, "unchanged") || strings.Contains(x.savedStatus.Text, "→") {
			t.Errorf("rerun status %q", x.savedStatus.Text)
		}
	})
	// Ask again: the model writes a narrower statement this time; it is
	// counted, put in the SQL box, and the saved statement is kept.
	const narrower = "SELECT subject_id, hadm_id, admission_type FROM admissions WHERE admission_type = 'EW EMER.'"
	srv.QueueChat(cohortReply(narrower), ollamatest.ChatReply{Content: "These are the EW emergency admissions."})
	onUI(t, func(t testing.TB) {
		x.savedList.Select(0)
		test.Tap(x.regenBtn)
	})
	waitUntil(t, "the question asked again", func() bool { return strings.HasPrefix(x.savedStatus.Text, "The model wrote a new statement") })
	onUI(t, func(t testing.TB) {
		if s.sqlEntry.Text != narrower || !strings.Contains(x.savedStatus.Text, "→") {
			t.Errorf("after Ask again: SQL box %q, status %q", s.sqlEntry.Text, x.savedStatus.Text)
		}
		if len(x.saved) != 1 || x.saved[0].SQL != sql {
			t.Errorf("the saved statement changed: %+v", x.saved)
		}
	})
	// Table 1 of the saved cohort, from the Saved cohorts tab.
	onUI(t, func(t testing.TB) {
		x.t1Status.SetText("")
		x.strata.SetSelected(table1Strata[2])
		x.savedList.Select(0) // the list was reloaded after the run
		test.Tap(x.t1SavedBtn)
	})
	waitUntil(t, "Table 1 of the saved cohort", func() bool { return strings.Contains(x.t1Status.Text, "patients (by subject_id)") })
	onUI(t, func(t testing.TB) {
		if s.tabs.Selected() != x.t1Tab || x.t1Query != sql || len(x.t1Header) != 5 || !strings.HasPrefix(x.t1Header[2], "Cohort (n = ") || !strings.HasPrefix(x.t1Header[3], "Rest (n = ") {
			t.Errorf("Table 1 of the saved cohort: tab %v, query %q, header %q", s.tabs.Selected().Text, x.t1Query, x.t1Header)
		}
	})
	file := filepath.Join(t.TempDir(), "emergency.json")
	id := ""
	onUI(t, func(t testing.TB) {
		id = x.saved[0].ID
		x.ExportDefinition(id, file)
	})
	waitUntil(t, "the exported file", func() bool { return strings.HasPrefix(x.savedStatus.Text, "Wrote "+file) })
	onUI(t, func(t testing.TB) { x.ImportDefinition(file, "") })
	waitUntil(t, "the imported definition", func() bool { return len(x.saved) == 2 })
	onUI(t, func(t testing.TB) {
		if !strings.HasPrefix(x.savedStatus.Text, `Imported "Emergency admissions" to run on demo`) {
			t.Errorf("import status %q", x.savedStatus.Text)
		}
	})
}

// newDemoCohortWindow opens a main window on a workspace holding a demo of
// the given number of patients, its model server a scripted one with a
// SQL and a chat model, and waits for the Cohort screen's example
// questions of the demo source.
func newDemoCohortWindow(t *testing.T, patients int) (*ollamatest.Server, *MainWindow) {
	t.Helper()
	srv := ollamatest.New(t, ollamatest.Model{Name: "qwen2.5-coder:7b"}, ollamatest.Model{Name: "llama3.1:8b"})
	ws := newEmptyWorkspace(t)
	opts := demo.DefaultOptions()
	opts.Patients = patients
	if _, err := ws.InitDemo(context.Background(), opts, false); err != nil {
		t.Fatal(err)
	}
	if err := ws.UpdateConfig(func(c *app.Config) { c.OllamaHost = srv.URL }); err != nil {
		t.Fatal(err)
	}
	mw := newTestMainWindow(t, ws)
	waitUntil(t, "the example questions of the demo source", func() bool { return len(mw.Cohort.examples.Options) > 0 })
	return srv, mw
}

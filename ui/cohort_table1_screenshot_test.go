package ui

import (
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// TestScreenshotCohortTable1 renders the Cohort screen's Table 1 tab for
// the emergency admissions of a 300-patient demo, by sex (the main window,
// the app's theme, Fyne's software painter), checks the picture is drawn
// and writes it as cohort-table1.png to screenshotDir
// ($CLINSIGHT_SCREENSHOT_DIR).
func TestScreenshotCohortTable1(t *testing.T) {
	srv, mw := newDemoCohortWindow(t, 300)
	t.Cleanup(func() { onUI(t, func(testing.TB) { mw.Window.Close() }) })
	s := mw.Cohort
	const sql = "SELECT subject_id, hadm_id, admission_type FROM admissions WHERE admission_type LIKE '%EMER%'"
	srv.QueueChat(cohortReply(sql), ollamatest.ChatReply{Content: "These are the emergency admissions."})
	onUI(t, func(t testing.TB) {
		if err := mw.Show("cohort"); err != nil {
			t.Fatal(err)
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
	path := filepath.Join(screenshotDir(t), "cohort-table1.png")
	onUI(t, func(t testing.TB) {
		withTheme(NewTheme(), func() {
			s.tabs.Select(x.t1Tab)
			mw.Window.Resize(fyne.NewSize(1920, 1080))
			mw.Window.Content().Refresh()
			capturePNG(t, mw.Window.Canvas(), path)
		})
	})
}

package ui

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// shotSizes are the window sizes every screen must fit and read at: a
// small laptop display and a full-HD monitor.
var shotSizes = []fyne.Size{{Width: 1024, Height: 640}, {Width: 1920, Height: 1080}}

// screenShot is one picture of the main window: a screen (tab), brought
// into the state shown.
type screenShot struct {
	// name is the picture's file name without the size and extension
	// (cohort → cohort-1024x640.png).
	name string
	// tab is the main window's tab shown (as mw.Show takes it).
	tab string
	// prepare, when set, brings the screen into the state pictured: it
	// waits for the screen's data (waitUntil) and taps through it (onUI).
	// It runs once, before the pictures at each size.
	prepare func(t *testing.T, mw *MainWindow)
	// available, when set, says whether the screen has what is pictured
	// (a tab another part of the app adds); the picture is skipped when
	// not. It runs on the UI goroutine.
	available func(mw *MainWindow) bool
	// done, when set, undoes what prepare opened (a dialog) after the
	// pictures.
	done func(t *testing.T, mw *MainWindow)
}

// screenShots are the pictures TestScreensAtBothSizes takes and checks, in
// order (each may build on the state the ones before left). A new screen or
// tab adds a row here.
var screenShots = []screenShot{
	{name: "data", tab: "data", prepare: func(t *testing.T, mw *MainWindow) {
		waitUntil(t, "the first table of the demo source", func() bool { return strings.HasSuffix(mw.Data.browseStatus.Text, " rows") })
	}},
	{name: "export-confirm", tab: "data", prepare: func(t *testing.T, mw *MainWindow) {
		cols := []string{"subject_id", "hadm_id", "gender", "anchor_age", "admittime", "dod"}
		pl := &disclosure.PatientLevelError{Identifiers: disclosure.Classify(cols, app.SourceMIMICIV), RowLevel: true}
		onUI(t, func(testing.TB) { confirmPatientLevel(mw.Window, pl, func(bool) {}) })
	}, done: dismissOverlays},
	{name: "cohort", tab: "cohort", prepare: func(t *testing.T, mw *MainWindow) {
		waitUntil(t, "the example questions of the demo source", func() bool { return len(mw.Cohort.examples.Options) > 0 })
	}},
	cohortTab("cohort-table1", "Table 1"),
	cohortTab("cohort-saved", "Saved cohorts"),
	cohortTab("cohort-concepts", "Concept sets"),
	cohortTab("cohort-attrition", "Attrition"),
	cohortTab("cohort-prescreen", "Trial pre-screening"),
	{name: "trials", tab: "trials", prepare: func(t *testing.T, mw *MainWindow) {
		s := mw.Trials
		waitUntil(t, "the demo patients", func() bool { return len(s.patientSel.Options) > 0 })
		onUI(t, func(testing.TB) {
			s.patientSel.SetSelected(s.patientSel.Options[0])
			s.useModel.SetChecked(false)
			s.matchBtn.OnTapped()
		})
		waitUntil(t, "the ranked trials", func() bool { return s.result != nil && s.running == nil })
	}},
	{name: "evidence", tab: "evidence", prepare: func(t *testing.T, mw *MainWindow) {
		s := mw.Evidence
		waitUntil(t, "the demo review", func() bool { return s.project() != nil })
		onUI(t, func(testing.TB) { s.steps.SelectIndex(2) }) // Screen
		waitUntil(t, "the ranking", func() bool { return s.screening.ranking != nil && !s.screening.rankBusy })
		onUI(t, func(testing.TB) { s.screening.table.Select(widget.TableCellID{Row: 0, Col: 3}) })
		waitUntil(t, "the abstract", func() bool { return len(s.loadingTexts) == 0 })
	}},
	{name: "meta-analysis", tab: "meta-analysis", prepare: func(t *testing.T, mw *MainWindow) {
		onUI(t, func(testing.TB) { mw.Meta.LoadExample() })
		waitUntil(t, "the forest plot", func() bool { return mw.Meta.plot.Image != nil })
	}},
	{name: "impressions", tab: "impressions", prepare: func(t *testing.T, mw *MainWindow) {
		s := mw.Impressions
		waitUntil(t, "the report corpus", func() bool { return s.corpus != nil })
		onUI(t, func(testing.TB) {
			s.useModel.SetChecked(false)
			s.exampleBtn.OnTapped()
			s.generateBtn.OnTapped()
		})
		waitUntil(t, "the impression", func() bool { return strings.HasPrefix(s.status.Text, "Done in ") })
	}},
	{name: "audit", tab: "audit", prepare: func(t *testing.T, mw *MainWindow) {
		waitUntil(t, "the audit records", func() bool { return len(mw.Audit.records) > 0 })
	}},
	{name: "settings", tab: "settings", prepare: func(t *testing.T, mw *MainWindow) {
		waitUntil(t, "the model check", func() bool { return !strings.HasPrefix(mw.Settings.statusLabel.Text, "Checking ") })
	}},
}

// cohortTab is a picture of the Cohort screen's tab titled title (before
// any question: what a user sees first); none when the screen has no such
// tab.
func cohortTab(name, title string) screenShot {
	return screenShot{name: name, tab: "cohort", prepare: func(t *testing.T, mw *MainWindow) {
		waitUntil(t, "the example questions of the demo source", func() bool { return len(mw.Cohort.examples.Options) > 0 })
		onUI(t, func(testing.TB) { mw.Cohort.tabs.SelectIndex(tabIndex(mw.Cohort.tabs, title)) })
	}, available: func(mw *MainWindow) bool { return tabIndex(mw.Cohort.tabs, title) >= 0 }, done: func(t *testing.T, mw *MainWindow) {
		onUI(t, func(testing.TB) { mw.Cohort.tabs.SelectIndex(0) })
	}}
}

// tabIndex is the index of the tab titled title, -1 when there is none.
func tabIndex(tabs *container.AppTabs, title string) int {
	for i, it := range tabs.Items {
		if it.Text == title {
			return i
		}
	}
	return -1
}

// dismissOverlays closes the dialogs shown over the main window.
func dismissOverlays(t *testing.T, mw *MainWindow) {
	onUI(t, func(testing.TB) {
		for o := mw.Window.Canvas().Overlays().Top(); o != nil; o = mw.Window.Canvas().Overlays().Top() {
			mw.Window.Canvas().Overlays().Remove(o)
		}
	})
}

// newScreenshotWorkspace is the demo workspace (as `clinsight demo init`
// makes it) with a scripted model server that has the SQL and chat models
// but no embedding model.
func newScreenshotWorkspace(t *testing.T) *app.Workspace {
	t.Helper()
	ws := newEmptyWorkspace(t)
	if _, err := ws.InitDemo(context.Background(), demo.DefaultOptions(), false); err != nil {
		t.Fatal(err)
	}
	srv := ollamatest.New(t, ollamatest.Model{Name: "qwen2.5-coder:7b"}, ollamatest.Model{Name: "llama3.1:8b"})
	if err := ws.UpdateConfig(func(c *app.Config) { c.OllamaHost = srv.URL }); err != nil {
		t.Fatal(err)
	}
	return ws
}

// TestScreensAtBothSizes shows every screen of the main window over the
// demo workspace at 1024×640 and 1920×1080, with the app's theme and
// Fyne's software painter, and checks that it fits and reads: nothing needs
// more room than the window has, no form scrolls sideways, no text is cut
// with an ellipsis (layoutProblems). It writes each picture as
// NAME-WxH.png to screenshotDir ($CLINSIGHT_SCREENSHOT_DIR: make
// screenshot writes docs/screenshots).
func TestScreensAtBothSizes(t *testing.T) {
	a := newTestApp(t)
	ws := newScreenshotWorkspace(t)
	dir := screenshotDir(t)
	var prev fyne.Theme
	onUI(t, func(testing.TB) { prev = a.Settings().Theme(); a.Settings().SetTheme(NewTheme()) })
	t.Cleanup(func() { onUI(t, func(testing.TB) { a.Settings().SetTheme(prev) }) })
	mw := newTestMainWindow(t, ws)
	t.Cleanup(func() { onUI(t, func(testing.TB) { mw.Window.Close() }) })
	for _, sc := range screenShots {
		skip := false
		onUI(t, func(t testing.TB) {
			if err := mw.Show(sc.tab); err != nil {
				t.Fatal(err)
			}
			skip = sc.available != nil && !sc.available(mw)
		})
		if skip {
			t.Logf("%s: not on this screen; no picture", sc.name)
			continue
		}
		if sc.prepare != nil {
			sc.prepare(t, mw)
		}
		for _, size := range shotSizes {
			name := fmt.Sprintf("%s-%.0fx%.0f", sc.name, size.Width, size.Height)
			onUI(t, func(t testing.TB) {
				mw.Window.Resize(size)
				mw.Window.Content().Refresh() // the next frame: wrapped labels have their height for the new width
				for _, p := range layoutProblems(mw.Window.Canvas()) {
					t.Errorf("%s: %s", name, p)
				}
				capturePNG(t, mw.Window.Canvas(), filepath.Join(dir, name+".png"))
			})
		}
		if sc.done != nil {
			sc.done(t, mw)
		}
	}
}

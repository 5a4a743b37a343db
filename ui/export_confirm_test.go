package ui

import (
	"context"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
)

// findButton returns the button labelled text under o, or nil.
func findButton(o fyne.CanvasObject, text string) *widget.Button {
	switch w := o.(type) {
	case *widget.Button:
		if w.Text == text {
			return w
		}
	case *fyne.Container:
		for _, c := range w.Objects {
			if b := findButton(c, text); b != nil {
				return b
			}
		}
		return nil
	}
	if w, ok := o.(fyne.Widget); ok {
		for _, c := range test.WidgetRenderer(w).Objects() {
			if b := findButton(c, text); b != nil {
				return b
			}
		}
	}
	return nil
}

// confirmPatientLevelExport waits for the patient-level confirmation of w,
// checks that it names want (identifier columns), ticks "shift dates" when
// shift is set and confirms.
func confirmPatientLevelExport(t *testing.T, w fyne.Window, shift bool, want ...string) {
	t.Helper()
	var text string
	waitUntil(t, "the patient-level confirmation", func() bool { // runs on the UI goroutine
		top := w.Canvas().Overlays().Top()
		if top == nil || findButton(top, confirmExportLabel) == nil {
			return false
		}
		text = labelsText(top)
		return true
	})
	for _, s := range want {
		if !strings.Contains(text, s) {
			t.Errorf("the confirmation does not name %q:\n%s", s, text)
		}
	}
	onUI(t, func(t testing.TB) {
		top := w.Canvas().Overlays().Top()
		if shift {
			var check func(o fyne.CanvasObject) *widget.Check
			check = func(o fyne.CanvasObject) *widget.Check {
				switch c := o.(type) {
				case *widget.Check:
					return c
				case *fyne.Container:
					for _, x := range c.Objects {
						if r := check(x); r != nil {
							return r
						}
					}
					return nil
				}
				if wd, ok := o.(fyne.Widget); ok {
					for _, x := range test.WidgetRenderer(wd).Objects() {
						if r := check(x); r != nil {
							return r
						}
					}
				}
				return nil
			}
			check(top).SetChecked(true)
		}
		test.Tap(findButton(top, confirmExportLabel))
	})
}

// refusingData refuses unconfirmed patient-level exports, as app.Data
// does, and records the options of each export.
type refusingData struct {
	*fakeData
	mu   sync.Mutex
	opts []app.ExportOptions
}

func (f *refusingData) Export(_ context.Context, _ string, _ *datasets.Result, _ export.Provenance, opts app.ExportOptions) (export.Summary, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opts = append(f.opts, opts)
	if !opts.PatientLevel {
		return export.Summary{}, &disclosure.PatientLevelError{RowLevel: true, Identifiers: []disclosure.Identifier{
			{Column: "subject_id", Kind: disclosure.Direct}, {Column: "anchor_age", Kind: disclosure.Quasi, What: "age"}}}
	}
	return export.Summary{Rows: 2}, nil
}

func (f *refusingData) exports() []app.ExportOptions {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]app.ExportOptions(nil), f.opts...)
}

// TestDataScreenConfirmsPatientLevelExport: a refused patient-level export
// shows the confirmation naming the identifier columns; confirming
// exports again with PatientLevel (and ShiftDates when ticked).
func TestDataScreenConfirmsPatientLevelExport(t *testing.T) {
	a := newTestApp(t)
	data := &refusingData{fakeData: &fakeData{}}
	var s *DataScreen
	onUI(t, func(t testing.TB) {
		s = NewDataScreen(t.Context(), data, a.NewWindow("data"), "test")
		s.Refresh()
	})
	waitUntil(t, "the first table", func() bool { return s.browseStatus.Text == "notes: 0 rows" })
	onUI(t, func(testing.TB) { s.RunSQL("SELECT subject_id, anchor_age FROM patients") })
	waitUntil(t, "the result", func() bool { return strings.Contains(s.resultStatus.Text, " rows · ") })
	path := t.TempDir() + "/x.xlsx"
	onUI(t, func(testing.TB) { s.ExportResult(path) })
	confirmPatientLevelExport(t, s.window, true, "subject_id", "anchor_age", "pseudonyms")
	waitUntil(t, "the confirmed export", func() bool { return len(data.exports()) == 2 })
	got := data.exports()
	if got[0].PatientLevel || !got[1].PatientLevel || !got[1].ShiftDates || got[1].Source.Name != fakeSource.Name || got[1].Exact {
		t.Errorf("exports %+v", got)
	}
	// "Exact counts" asks the service for exact values.
	onUI(t, func(testing.TB) {
		s.exportExact.SetChecked(true)
		s.ExportResult(path)
	})
	confirmPatientLevelExport(t, s.window, false, "subject_id")
	waitUntil(t, "the exact export", func() bool { return len(data.exports()) == 4 })
	if got := data.exports(); !got[2].Exact || !got[3].Exact || !got[3].PatientLevel {
		t.Errorf("exact exports %+v", got[2:])
	}
}

// TestResultSummarySaysWhatWasSuppressed: the status under a result of an
// aggregate-only source says how many cells are shown as "<k".
func TestResultSummarySaysWhatWasSuppressed(t *testing.T) {
	res := &datasets.Result{Columns: []datasets.Column{{Name: "gender"}, {Name: "n"}},
		Rows: [][]any{{"F", disclosure.Suppressed{K: 11}}, {"M", disclosure.Suppressed{K: 11}}, {"X", int64(40)}}}
	if got := resultSummary(res); !strings.Contains(got, "3 rows") || !strings.Contains(got, "2 cells shown as <11 (small-cell suppression)") {
		t.Errorf("summary %q", got)
	}
	res.Rows = res.Rows[2:]
	if got := resultSummary(res); strings.Contains(got, "suppression") {
		t.Errorf("summary %q", got)
	}
}

package ui

import (
	"context"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/app/prescreen"
	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/internal/progress"
)

// newPrescreenWorkspace is a workspace whose source "demo" holds 30 demo
// hospital patients and the 400 demo trials, without a chat model.
func newPrescreenWorkspace(t *testing.T) *app.Workspace {
	t.Helper()
	ctx := context.Background()
	ws := newEmptyWorkspace(t)
	path := filepath.Join(t.TempDir(), "demo.sqlite")
	opts := demo.DefaultOptions()
	opts.Patients = 30
	if _, err := demo.Generate(ctx, path, opts); err != nil {
		t.Fatal(err)
	}
	db, err := datasets.OpenReadWrite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := trials.DemoData(ctx, db, 1); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if _, err := ws.RegisterSQLite(ctx, path, "demo"); err != nil {
		t.Fatal(err)
	}
	if err := ws.UpdateConfig(func(c *app.Config) { c.Models.Chat = "" }); err != nil {
		t.Fatal(err)
	}
	return ws
}

// openPrescreen builds the Cohort screen on cohorts with the answer
// "every patient" on the demo source and waits for the tab's choices.
func openPrescreen(t *testing.T, a fyne.App, cohorts app.CohortService) (*CohortScreen, fyne.Window) {
	t.Helper()
	var s *CohortScreen
	var w fyne.Window
	onUI(t, func(t testing.TB) {
		w = a.NewWindow("Clinsight")
		w.Resize(fyne.NewSize(1280, 820))
		s = NewCohortScreen(t.Context(), cohorts, w, "test")
		w.SetContent(s.content)
		s.Refresh()
	})
	waitUntil(t, "the demo source and the trials source", func() bool {
		return s.source == "demo" && s.prescreen != nil && s.prescreen.trialsSel.Selected == "demo"
	})
	onUI(t, func(testing.TB) {
		s.last = &cohort.Answer{Question: "All patients", SQL: "SELECT subject_id FROM patients", Status: cohort.StatusAnswered}
		for i, tab := range s.tabs.Items {
			if tab.Text == "Trial pre-screening" {
				s.tabs.SelectIndex(i)
			}
		}
	})
	return s, w
}

// TestCohortPrescreenMatrix: the tab pre-screens the answer's 30 demo
// patients against the demo trials without a model: the header counts
// are the service's, trials come by how many might qualify, a trial's
// header sorts the patients by their verdict for it, and a cell shows its
// criteria with the values cited. It writes cohort-prescreen.png to
// screenshotDir.
func TestCohortPrescreenMatrix(t *testing.T) {
	a := newTestApp(t)
	ws := newPrescreenWorkspace(t)
	s, w := openPrescreen(t, a, ws.Cohort())
	x := s.prescreen
	onUI(t, func(testing.TB) { x.topSel.SetSelected("5") })
	tapOnUI(t, x.runBtn)
	waitUntil(t, "the matrix", func() bool { return x.res != nil && strings.Contains(x.status.Text, "patients ×") })
	var structured [2]int
	onUI(t, func(t testing.TB) {
		res := x.res
		if res.Screened != 30 || len(res.Patients) != 30 || len(res.Trials) == 0 || res.Top != 5 {
			t.Fatalf("result: %d patients screened, %d trials, top %d", res.Screened, len(res.Trials), res.Top)
		}
		if rows, cols := x.size(); rows != 31 || cols != len(res.Trials)+1 {
			t.Errorf("table %d × %d", rows, cols)
		}
		prev := 1 << 30
		for c := 1; c <= len(res.Trials); c++ {
			j := x.cols[c-1]
			head, _ := x.CellText(0, c)
			n := res.TrialCounts(j).Might()
			if !strings.HasPrefix(head, res.Trials[j].ID+" (") || !strings.HasSuffix(head, "("+strconv.Itoa(n)+")") {
				t.Errorf("header %q for %s, %d might qualify", head, res.Trials[j].ID, n)
			}
			if n > prev {
				t.Errorf("trials not by patients who might qualify: %d after %d", n, prev)
			}
			prev = n
		}
		// A trial's header sorts the patients by their verdict for it.
		x.selected(widget.TableCellID{Row: 0, Col: 1})
		j := x.cols[0]
		last := -1
		for _, i := range x.rows {
			r := statusRank(res.Cells[i][j])
			if r < last {
				t.Fatalf("patients not sorted by their verdict for %s", res.Trials[j].ID)
			}
			last = r
		}
		// A cell with a structured check shows it, value and date cited.
		for r, i := range x.rows {
			for c, jj := range x.cols {
				for _, cr := range res.Cells[i][jj].Criteria {
					if len(cr.Checks) > 0 && cr.Checks[0].Value != nil && cr.Checks[0].Check.Analyte != prescreen.AgeKey &&
						(structured[0] == 0 || cr.Status == prescreen.NotEligible && res.Cells[x.rows[structured[0]-1]][x.cols[structured[1]-1]].Status != prescreen.NotEligible) {
						structured = [2]int{r + 1, c + 1} // a lab value that rules the patient out, if any
					}
				}
			}
		}
		if structured[0] == 0 {
			t.Fatal("no cell with a lab value checked")
		}
		x.selected(widget.TableCellID{Row: structured[0], Col: structured[1]})
		if d := x.detail.Text; !strings.Contains(d, "Patient ") || !strings.Contains(d, " on ") || !strings.Contains(d, "structured values") {
			t.Errorf("cell detail: %q", d)
		}
	})

	path := filepath.Join(screenshotDir(t), "cohort-prescreen.png")
	onUI(t, func(t testing.TB) {
		withTheme(theme.DefaultTheme(), func() {
			x.table.ScrollTo(widget.TableCellID{Row: structured[0], Col: structured[1]})
			capturePNG(t, w.Canvas(), path)
		})
	})

	// Export: the workbook's sheets, patient ids pseudonymised.
	out := filepath.Join(t.TempDir(), "pre.xlsx")
	onUI(t, func(testing.TB) { x.export(out, true) })
	waitUntil(t, "the export", func() bool { return strings.HasPrefix(x.status.Text, "Exported to ") })
	f, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := strings.Join(f.GetSheetList(), ","); got != "Matrix,Criteria,Trials,Provenance" {
		t.Errorf("sheets %s", got)
	}
	rows, _ := f.GetRows("Matrix")
	onUI(t, func(t testing.TB) {
		for _, r := range rows[2:] {
			for _, p := range x.res.Patients {
				if r[0] == p.ID {
					t.Fatalf("patient id %s exported as it is", p.ID)
				}
			}
		}
		w.Close()
	})
}

// prescreenCohorts is a cohort service whose pre-screening is svc.
type prescreenCohorts struct {
	app.CohortService
	svc app.PrescreenService
}

func (p prescreenCohorts) Prescreener() app.PrescreenService { return p.svc }

// heldPrescreen reports one patient ranked and then holds until Cancel.
type heldPrescreen struct{ app.PrescreenService }

func (h heldPrescreen) Prescreen(ctx context.Context, req app.PrescreenRequest) (*app.PrescreenResult, error) {
	req.Progress(progress.Report{Stage: "Ranking the trials for each patient", Done: 1, Total: 30, Unit: "patients"})
	<-ctx.Done()
	return nil, ctx.Err()
}

// TestCohortPrescreenProgressAndCancel: a running pre-screening shows its
// progress; Cancel stops it (the service sees its context end) and the
// tab says so, ready to run again.
func TestCohortPrescreenProgressAndCancel(t *testing.T) {
	a := newTestApp(t)
	ws := newPrescreenWorkspace(t)
	s, w := openPrescreen(t, a, prescreenCohorts{CohortService: ws.Cohort(), svc: heldPrescreen{ws.Prescreen()}})
	defer onUI(t, func(testing.TB) { w.Close() })
	x := s.prescreen
	tapOnUI(t, x.runBtn)
	waitUntil(t, "the progress", func() bool {
		return x.status.Text == "Ranking the trials for each patient: 1 of 30 patients" && x.bar.Visible() && x.bar.Value > 0.03 && x.runBtn.Disabled() && !x.cancelBtn.Disabled()
	})
	tapOnUI(t, x.cancelBtn)
	waitUntil(t, "the cancellation", func() bool {
		return x.status.Text == "Cancelled." && !x.runBtn.Disabled() && x.cancelBtn.Disabled() && !x.bar.Visible() && x.res == nil
	})
}

package ui

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/prescreen"
	"github.com/clinsight/clinsight/internal/durfmt"
	"github.com/clinsight/clinsight/internal/progress"
)

// The Cohort screen's "Trial pre-screening" tab (issue 19 item 6): the
// patients of the answer (or of a saved cohort) against the trials of a
// trials source, as a patient × trial matrix. A trial's header sorts the
// patients by their verdict for it; a patient's sorts the trials by the
// patient's verdicts; a cell shows each criterion with the value cited.
// The rules are app.PrescreenService's; this file only shows them.

// prescreenCurrent is the cohort choice of the screen's answer.
const prescreenCurrent = "The current answer"

// prescreenTops are the choices of K.
var prescreenTops = []string{"5", "10", "20"}

// cohortPrescreen is the tab's widgets and state (UI goroutine only).
type cohortPrescreen struct {
	s   *CohortScreen
	svc app.PrescreenService

	cohortSel *widget.Select
	trialsSel *widget.Select
	topSel    *widget.Select
	useModel  *widget.Check
	runBtn    *widget.Button
	cancelBtn *widget.Button
	exportBtn *widget.Button
	bar       *widget.ProgressBar
	status    *widget.Label
	table     *widget.Table
	detail    *widget.Label

	res     *app.PrescreenResult
	rows    []int // patients in display order (trials for an aggregate-only result)
	cols    []int // trials in display order
	trials  []app.Source
	saved   map[string]string // cohort choice → saved definition id
	cancel  context.CancelFunc
	running bool
}

// addPrescreen appends the tab when the screen's service offers
// pre-screening.
func (s *CohortScreen) addPrescreen() {
	p, ok := s.cohorts.(app.PrescreenProvider)
	if !ok {
		return
	}
	x := &cohortPrescreen{s: s, svc: p.Prescreener()}
	s.tabs.Append(container.NewTabItem("Trial pre-screening", x.panel()))
	s.prescreen = x
	x.reload()
}

func (x *cohortPrescreen) panel() fyne.CanvasObject {
	x.cohortSel = widget.NewSelect([]string{prescreenCurrent}, nil)
	x.cohortSel.SetSelected(prescreenCurrent)
	x.trialsSel = widget.NewSelect(nil, nil)
	x.trialsSel.PlaceHolder = "(trials source)"
	x.topSel = widget.NewSelect(prescreenTops, nil)
	x.topSel.SetSelected("10")
	x.useModel = widget.NewCheck("Use the model for the other criteria", nil)
	x.runBtn = widget.NewButtonWithIcon("Pre-screen", theme.SearchIcon(), x.Run)
	x.runBtn.Importance = widget.HighImportance
	x.cancelBtn = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), x.Cancel)
	x.cancelBtn.Disable()
	x.exportBtn = widget.NewButtonWithIcon("Export…", theme.DocumentSaveIcon(), func() {
		chooseSaveFile(x.s.window, "clinsight-prescreening.xlsx", x.confirmExport)
	})
	x.exportBtn.Disable()
	x.bar = widget.NewProgressBar()
	x.bar.Hide()
	x.status = widget.NewLabel("Choose a cohort and the trials source, then Pre-screen. Lab, age and sex criteria are checked against the patients' recorded values.")
	x.status.Wrapping = fyne.TextWrapWord
	x.detail = widget.NewLabel("Select a cell to see each criterion with the value it was checked against.")
	x.detail.Wrapping = fyne.TextWrapWord
	x.table = widget.NewTable(x.size, func() fyne.CanvasObject {
		l := widget.NewLabel("")
		l.Truncation = fyne.TextTruncateEllipsis
		return l
	}, x.update)
	x.table.StickyRowCount, x.table.StickyColumnCount = 1, 1
	x.table.OnSelected = x.selected
	choose := container.NewBorder(nil, nil, widget.NewLabel("Cohort"), container.NewHBox(widget.NewLabel("Trials"), x.trialsSel), x.cohortSel)
	run := container.NewVBox( // two rows: one needed 841 pixels, more than a 1024-pixel window leaves (TestScreensAtBothSizes)
		container.NewHBox(widget.NewLabel("Trials per patient"), x.topSel, x.useModel),
		container.NewHBox(x.runBtn, x.cancelBtn, x.exportBtn))
	top := container.NewVBox(choose, container.NewHScroll(run), x.bar, x.status)
	split := container.NewVSplit(x.table, container.NewVScroll(x.detail))
	split.Offset = 0.7
	return container.NewBorder(top, nil, nil, nil, split)
}

// reload lists the saved cohorts and the trials sources.
func (x *cohortPrescreen) reload() {
	ctx := x.s.ctx
	defs, _ := x.s.cohorts.(app.CohortDefinitionsService)
	go func() {
		srcs := x.svc.TrialSources(ctx)
		choices := []string{prescreenCurrent}
		saved := map[string]string{}
		if defs != nil {
			if list, _, err := defs.List(ctx); err == nil {
				for _, d := range list {
					label := d.Name + " (" + d.Source.Name + ")"
					choices = append(choices, label)
					saved[label] = d.ID
				}
			}
		}
		fyne.Do(func() {
			x.trials, x.saved = srcs, saved
			names := make([]string, len(srcs))
			for i, s := range srcs {
				names[i] = s.Name
			}
			x.trialsSel.SetOptions(names)
			if x.trialsSel.Selected == "" && len(names) > 0 {
				x.trialsSel.SetSelected(names[0])
			}
			sel := x.cohortSel.Selected
			x.cohortSel.SetOptions(choices)
			if !slices.Contains(choices, sel) {
				sel = prescreenCurrent
			}
			x.cohortSel.SetSelected(sel)
		})
	}()
}

// request builds the pre-screening request from the controls.
func (x *cohortPrescreen) request() (app.PrescreenRequest, error) {
	var req app.PrescreenRequest
	if x.cohortSel.Selected == prescreenCurrent || x.cohortSel.Selected == "" {
		ans := x.s.last
		src, ok := x.s.sourceNamed(x.s.source)
		if ans == nil || strings.TrimSpace(ans.SQL) == "" || !ok {
			return req, errors.New("ask a question whose result lists patients first, or choose a saved cohort")
		}
		req.Source, req.Query = src, ans.SQL
	} else {
		req.Cohort = x.saved[x.cohortSel.Selected]
	}
	for _, t := range x.trials {
		if t.Name == x.trialsSel.Selected {
			req.Trials = t
		}
	}
	if req.Trials.Name == "" {
		return req, errors.New("choose the data source that holds the trials")
	}
	fmt.Sscan(x.topSel.Selected, &req.Top)
	req.NoModel = !x.useModel.Checked
	return req, nil
}

// Run starts the pre-screening; Cancel stops it.
func (x *cohortPrescreen) Run() {
	if x.running {
		return
	}
	req, err := x.request()
	if err != nil {
		x.status.SetText(err.Error())
		return
	}
	ctx, cancel := context.WithCancel(x.s.ctx)
	x.cancel, x.running = cancel, true
	x.runBtn.Disable()
	x.cancelBtn.Enable()
	x.exportBtn.Disable()
	x.bar.SetValue(0)
	x.bar.Show()
	x.status.SetText("Reading the patients…")
	req.Progress = func(p progress.Report) {
		fyne.Do(func() {
			if !x.running {
				return
			}
			if p.Total > 0 && p.Unit == "%" {
				x.bar.SetValue(float64(p.Done) / float64(p.Total))
				x.status.SetText(fmt.Sprintf("%s: %d%%", p.Stage, p.Done*100/p.Total))
			} else if p.Total > 0 {
				x.bar.SetValue(float64(p.Done) / float64(p.Total))
				x.status.SetText(fmt.Sprintf("%s: %d of %d %s", p.Stage, p.Done, p.Total, p.Unit))
			} else if p.Stage != "" {
				x.status.SetText(p.Stage + "…")
			}
		})
	}
	go func() {
		res, err := x.svc.Prescreen(ctx, req)
		fyne.Do(func() { x.finished(ctx, res, err) })
	}()
}

// Cancel stops a running pre-screening.
func (x *cohortPrescreen) Cancel() {
	if x.cancel != nil {
		x.status.SetText("Cancelling…")
		x.cancel()
	}
}

func (x *cohortPrescreen) finished(ctx context.Context, res *app.PrescreenResult, err error) {
	x.running = false
	x.cancel = nil
	x.runBtn.Enable()
	x.cancelBtn.Disable()
	x.bar.Hide()
	switch {
	case ctx.Err() != nil && (err != nil || res == nil):
		x.status.SetText("Cancelled.")
		return
	case err != nil:
		x.status.SetText("The pre-screening could not be done: " + firstSentence(err))
		return
	}
	x.show(res)
}

// firstSentence is an error's message for the status line.
func firstSentence(err error) string {
	msg := err.Error()
	msg = strings.TrimPrefix(msg, "pre-screen: ")
	if msg != "" {
		msg = strings.ToUpper(msg[:1]) + msg[1:]
	}
	return msg
}

// show displays a result, trials by patients who might qualify, patients
// by trials that might fit.
func (x *cohortPrescreen) show(res *app.PrescreenResult) {
	x.res = res
	x.cols = res.TrialOrder()
	if res.AggregateOnly {
		x.rows = nil
	} else {
		x.rows = res.PatientOrder()
	}
	x.exportBtn.Enable()
	who := res.Cohort
	if who == "" {
		who = "The answer's patients"
	}
	msg := fmt.Sprintf("%s: %s patients × %d trials (top %d per patient) in %s.", who, res.CountText(res.Screened), len(res.Trials), res.Top, durfmt.Human(res.Elapsed))
	if res.AggregateOnly {
		msg += " The data source shows aggregates only: trials with their counts, no patients."
	} else {
		msg += " (n): patients who might qualify for a trial, trials a patient might fit. Select a trial to sort the patients by it, a patient to sort the trials, a cell for its criteria."
	}
	if len(res.Notices) > 0 {
		msg += " " + strings.Join(res.Notices, " ")
	}
	x.status.SetText(msg)
	x.detail.SetText("Select a cell to see each criterion with the value it was checked against.")
	x.layoutColumns()
	x.table.Refresh()
}

func (x *cohortPrescreen) layoutColumns() {
	if x.res == nil {
		return
	}
	if x.res.AggregateOnly {
		for c, w := range []float32{130, 110, 80, 80, 100, 420} {
			x.table.SetColumnWidth(c, w)
		}
		return
	}
	x.table.SetColumnWidth(0, 210)
	for c := 1; c <= len(x.cols); c++ {
		x.table.SetColumnWidth(c, 175)
	}
}

// aggregateColumns are the columns of an aggregate-only result.
var aggregateColumns = []string{"Trial", "Might qualify", "Eligible", "Unknown", "Not eligible", "Title"}

func (x *cohortPrescreen) size() (int, int) {
	switch {
	case x.res == nil:
		return 0, 0
	case x.res.AggregateOnly:
		return len(x.cols) + 1, len(aggregateColumns)
	}
	return len(x.rows) + 1, len(x.cols) + 1
}

// CellText is what the matrix shows at a cell, and its importance.
func (x *cohortPrescreen) CellText(row, col int) (string, widget.Importance) {
	res := x.res
	if res.AggregateOnly {
		if row == 0 {
			return aggregateColumns[col], widget.MediumImportance
		}
		j := x.cols[row-1]
		c := res.Shown(j)
		return []string{res.Trials[j].ID, c.Might, c.Eligible, c.Unknown, c.NotEligible, res.Trials[j].Title}[col], widget.MediumImportance
	}
	switch {
	case row == 0 && col == 0:
		return "Patient · age sex (trials)", widget.MediumImportance
	case row == 0:
		j := x.cols[col-1]
		return fmt.Sprintf("%s (%d)", res.Trials[j].ID, res.Counts[j].Might()), widget.MediumImportance
	case col == 0:
		i := x.rows[row-1]
		p := res.Patients[i]
		age := "?"
		if p.HasAge {
			age = fmt.Sprint(p.Age)
		}
		sex := map[string]string{"female": "F", "male": "M"}[string(p.Sex)]
		return fmt.Sprintf("%s · %s %s (%d)", p.ID, age, sex, res.PatientCounts(i).Might()), widget.MediumImportance
	}
	c := res.Cells[x.rows[row-1]][x.cols[col-1]]
	if !c.Ranked {
		return "", widget.LowImportance
	}
	met, _, open := c.Counts()
	switch c.Status {
	case prescreen.Eligible:
		return fmt.Sprintf("✓ #%d eligible", c.Rank), widget.SuccessImportance
	case prescreen.NotEligible:
		return fmt.Sprintf("✗ #%d %s", c.Rank, failing(c)), widget.DangerImportance
	}
	return fmt.Sprintf("? #%d · %d met, %d open", c.Rank, met, open), widget.MediumImportance
}

// failing names what rules a patient out of a trial: the first failing
// check's value ("Creatinine 3.3"), else the criterion's basis.
func failing(c prescreen.Cell) string {
	for _, r := range c.Criteria {
		if r.Status != prescreen.NotEligible {
			continue
		}
		for _, ch := range r.Checks {
			if ch.Value != nil && ch.Outcome != prescreen.Undecided {
				if ch.Check.Analyte == prescreen.AgeKey {
					return fmt.Sprintf("age %g", ch.Value.Value)
				}
				return fmt.Sprintf("%s %g", ch.Check.Name(), ch.Value.Value)
			}
		}
		if r.Kind == prescreen.RecordKind {
			return strings.ToLower(strings.SplitN(r.Text, ":", 2)[0])
		}
		return "by the " + r.Basis
	}
	return "not eligible"
}

func (x *cohortPrescreen) update(id widget.TableCellID, o fyne.CanvasObject) {
	l := o.(*widget.Label)
	if r, c := x.size(); x.res == nil || id.Row >= r || id.Col >= c { // sticky cells are drawn before any result
		l.SetText("")
		return
	}
	text, imp := x.CellText(id.Row, id.Col)
	l.Importance = imp
	l.TextStyle = fyne.TextStyle{Bold: id.Row == 0 || id.Col == 0 && !x.res.AggregateOnly}
	l.SetText(text)
}

// selected sorts by a header or shows a cell's criteria.
func (x *cohortPrescreen) selected(id widget.TableCellID) {
	defer x.table.UnselectAll()
	if x.res == nil || x.res.AggregateOnly {
		return
	}
	switch {
	case id.Row == 0 && id.Col == 0:
		x.rows, x.cols = x.res.PatientOrder(), x.res.TrialOrder()
	case id.Row == 0:
		x.SortPatientsBy(x.cols[id.Col-1])
	case id.Col == 0:
		x.SortTrialsBy(x.rows[id.Row-1])
	default:
		x.showCell(x.rows[id.Row-1], x.cols[id.Col-1])
		return
	}
	x.table.Refresh()
}

// statusRank orders verdicts: eligible, unknown, not eligible, not
// ranked.
func statusRank(c prescreen.Cell) int {
	if !c.Ranked {
		return 3
	}
	return map[prescreen.Status]int{prescreen.Eligible: 0, prescreen.Unknown: 1, prescreen.NotEligible: 2}[c.Status]
}

// SortPatientsBy orders the patients by their verdict for trial j, then
// its rank.
func (x *cohortPrescreen) SortPatientsBy(j int) {
	slices.SortStableFunc(x.rows, func(a, b int) int {
		ca, cb := x.res.Cells[a][j], x.res.Cells[b][j]
		if c := cmp.Compare(statusRank(ca), statusRank(cb)); c != 0 {
			return c
		}
		return cmp.Compare(ca.Rank, cb.Rank)
	})
	x.table.Refresh()
}

// SortTrialsBy orders the trials by patient i's verdicts, then rank.
func (x *cohortPrescreen) SortTrialsBy(i int) {
	slices.SortStableFunc(x.cols, func(a, b int) int {
		ca, cb := x.res.Cells[i][a], x.res.Cells[i][b]
		if c := cmp.Compare(statusRank(ca), statusRank(cb)); c != 0 {
			return c
		}
		return cmp.Compare(ca.Rank, cb.Rank)
	})
	x.table.Refresh()
}

// showCell writes a cell's criteria in the detail pane.
func (x *cohortPrescreen) showCell(i, j int) {
	p, t, c := x.res.Patients[i], x.res.Trials[j], x.res.Cells[i][j]
	if !c.Ranked {
		x.detail.SetText(fmt.Sprintf("%s is not among the %d best-ranked trials for patient %s.", t.ID, x.res.Top, p.ID))
		return
	}
	var b strings.Builder
	fmt.Fprintf(&b, "Patient %s × %s (rank %d): %s\n%s\n", p.ID, t.ID, c.Rank, c.Status, t.Title)
	for _, r := range c.Criteria {
		if r.Status == prescreen.NotEligible {
			fmt.Fprintf(&b, "Ruled out by: %s — %s\n", r.Text, r.Reason)
			break
		}
	}
	if c.ModelError != "" {
		fmt.Fprintf(&b, "The model could not assess this trial: %s\n", c.ModelError)
	}
	for _, r := range c.Criteria {
		mark := map[prescreen.Status]string{prescreen.Eligible: "✓", prescreen.NotEligible: "✗"}[r.Status]
		if mark == "" {
			mark = "?"
		}
		what := string(r.Kind)
		if r.Index > 0 {
			what += fmt.Sprintf(" %d", r.Index)
		}
		fmt.Fprintf(&b, "\n%s %s — %s: %s — %s (%s)", mark, what, r.Text, r.Status, r.Reason, r.Basis)
	}
	x.detail.SetText(b.String())
}

// confirmExport says what the workbook holds before writing it: for a
// row-level source, its rows per patient are exported only once confirmed
// here (export's PatientLevel).
func (x *cohortPrescreen) confirmExport(path string) {
	if x.res == nil {
		return
	}
	if x.res.AggregateOnly {
		x.export(path, false)
		return
	}
	shift := widget.NewCheck("Shift each patient's dates by a number of days of their own", nil)
	msg := widget.NewLabel(fmt.Sprintf("The workbook holds one row per patient (%d patients) with the values and dates its verdicts rest on. "+
		"Patient identifiers are replaced by pseudonyms made for this workbook only; counts of fewer than %d patients are shown as <%d.", len(x.res.Patients), x.res.MinCell, x.res.MinCell))
	msg.Wrapping = fyne.TextWrapWord
	d := dialog.NewCustomConfirm("Export the pre-screening", "Export", "Cancel", container.NewVBox(msg, shift), func(ok bool) {
		if ok {
			x.export(path, shift.Checked)
		}
	}, x.s.window)
	d.Resize(fyne.NewSize(520, 220))
	d.Show()
}

func (x *cohortPrescreen) export(path string, shift bool) {
	res := x.res
	go func() {
		// A row-level result reaches here through confirmExport's dialog:
		// that is the patient-level confirmation.
		sum, err := x.svc.Export(x.s.ctx, path, res, app.PrescreenExportOptions{ShiftDates: shift, Version: x.s.version, PatientLevel: !res.AggregateOnly})
		fyne.Do(func() {
			if err != nil {
				showError(x.s.window, err)
				return
			}
			x.status.SetText(fmt.Sprintf("Exported to %s (%d sheets; patient identifiers pseudonymised).", sum.Path, len(sum.Sheets)))
		})
	}()
}

package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/internal/progress"
)

// The Cohort screen's "Attrition" tab (issue 19 item 1): when the answer's
// statement is a chain of criteria, the patients remaining after each step
// as a table and a funnel, with a check per criterion to switch it off and
// count again — through the session, read-only, without the model.

// attritionIntro is the tab's text before an answer with criteria.
const attritionIntro = "Attrition shows how many patients each criterion of a cohort removes. It appears when the answer's query is written as a list of criteria (a base population, then one step per criterion)."

// cohortAttrition holds the tab's widgets and state (UI goroutine only).
type cohortAttrition struct {
	s   *CohortScreen
	tab *container.TabItem

	status    *widget.Label
	bar       *widget.ProgressBar
	cancelBtn *widget.Button
	busyRow   *fyne.Container
	table     *widget.Table
	checks    *fyne.Container
	funnel    *fyne.Container

	header []string
	rows   [][]string
	ans    *cohort.Answer    // the answer counted
	att    *cohort.Attrition // the table shown
	cancel context.CancelFunc
	gen    int // recount generation: late results are dropped
}

// addAttrition appends the Attrition tab to the screen.
func (s *CohortScreen) addAttrition() *cohortAttrition {
	x := &cohortAttrition{s: s}
	x.status = widget.NewLabel(attritionIntro)
	x.status.Wrapping = fyne.TextWrapWord
	x.bar = widget.NewProgressBar()
	x.cancelBtn = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), func() {
		if x.cancel != nil {
			x.cancel()
		}
	})
	x.busyRow = container.NewBorder(nil, nil, nil, x.cancelBtn, x.bar)
	x.busyRow.Hide()
	x.table = widget.NewTable(
		func() (int, int) { return len(x.rows), len(x.header) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.TableCellID, o fyne.CanvasObject) {
			text := ""
			if id.Row < len(x.rows) && id.Col < len(x.rows[id.Row]) {
				text = x.rows[id.Row][id.Col]
			}
			o.(*widget.Label).SetText(text)
		},
	)
	x.table.ShowHeaderRow = true
	x.table.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	x.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Col >= 0 && id.Col < len(x.header) {
			o.(*widget.Label).SetText(x.header[id.Col])
		}
	}
	for i, w := range []float32{60, 300, 150, 90, 90} {
		x.table.SetColumnWidth(i, w)
	}
	x.checks = container.NewVBox()
	x.funnel = container.NewVBox()
	criteria := container.NewBorder(bold("Criteria in use"), nil, nil, nil, container.NewVScroll(x.checks))
	lower := container.NewHSplit(criteria, container.NewVScroll(x.funnel))
	lower.Offset = 0.4
	body := container.NewVSplit(x.table, lower)
	body.Offset = 0.45
	x.tab = container.NewTabItem("Attrition", container.NewBorder(container.NewVBox(x.status, x.busyRow), nil, nil, nil, body))
	s.tabs.Append(x.tab)
	return x
}

// showAnswer shows the attrition of a new answer (or clears the tab when
// it has none), dropping any count in progress.
func (x *cohortAttrition) showAnswer(ans *cohort.Answer) {
	x.stop()
	x.ans = ans
	var a *cohort.Attrition
	if ans != nil {
		a = ans.Attrition
	}
	x.show(a)
	x.setChecks(a)
}

// stop cancels a count in progress and drops its result.
func (x *cohortAttrition) stop() {
	x.gen++
	if x.cancel != nil {
		x.cancel()
		x.cancel = nil
	}
	x.busyRow.Hide()
}

// show draws a table and its funnel.
func (x *cohortAttrition) show(a *cohort.Attrition) {
	x.att = a
	x.header, x.rows = nil, nil
	if a == nil {
		x.status.SetText(attritionIntro)
	} else {
		x.header, x.rows = a.Cells()
		x.status.SetText(attritionStatus(a))
	}
	x.table.Refresh()
	x.drawFunnel(a)
}

// attritionStatus describes a table in one sentence or two.
func attritionStatus(a *cohort.Attrition) string {
	if a.Error != "" {
		return "The patients could not be counted after each criterion: " + a.Error
	}
	msg := fmt.Sprintf("Patients remaining after each criterion (distinct %s). Untick a criterion to count without it; the model is not asked again.", a.PatientColumn)
	if fin := a.Final(); fin != nil {
		msg = fmt.Sprintf("%s patients remain after %d of %d criteria (distinct %s). Untick a criterion to count without it; the model is not asked again.",
			fin.Patients, len(a.Steps)-1-len(a.Off), len(a.Steps)-1, a.PatientColumn)
	}
	if a.MinCell >= 2 {
		msg += fmt.Sprintf(" The source shows aggregates only: counts below %d are shown as <%d.", a.MinCell, a.MinCell)
	}
	return msg
}

// setChecks makes one check per criterion (the base population has none).
func (x *cohortAttrition) setChecks(a *cohort.Attrition) {
	x.checks.RemoveAll()
	if a != nil {
		for _, st := range a.Steps[1:] {
			n := st.Number
			c := widget.NewCheck(fmt.Sprintf("%d. %s", n, st.Criterion), nil)
			c.SetChecked(st.On)
			c.OnChanged = func(bool) { x.recount() }
			x.checks.Add(c)
		}
	}
	x.checks.Refresh()
}

// off returns the criteria whose checks are cleared.
func (x *cohortAttrition) off() []int {
	var out []int
	for i, o := range x.checks.Objects {
		if c, ok := o.(*widget.Check); ok && !c.Checked {
			out = append(out, i+1)
		}
	}
	return out
}

// SetStep switches criterion n (from 1) on or off, as its check does.
func (x *cohortAttrition) SetStep(n int, on bool) {
	if n >= 1 && n <= len(x.checks.Objects) {
		x.checks.Objects[n-1].(*widget.Check).SetChecked(on)
	}
}

// recount counts the patients again with the criteria that are off, off
// the UI goroutine, with progress and Cancel; a newer count or answer
// drops this one's result.
func (x *cohortAttrition) recount() {
	ans := x.ans
	if ans == nil || ans.Attrition == nil {
		return
	}
	off := x.off()
	if x.att != nil && slices.Equal(off, x.att.Off) && x.att.Error == "" {
		return
	}
	x.stop()
	gen := x.gen
	x.bar.SetValue(0)
	x.busyRow.Show()
	x.status.SetText("Counting the patients after each criterion…")
	x.s.withPipeline(func(p app.CohortSession) {
		if gen != x.gen {
			return
		}
		ctx, cancel := context.WithCancel(x.s.ctx)
		x.cancel = cancel
		go func() {
			a, err := p.Attrition(ctx, ans, off, func(r progress.Report) {
				fyne.Do(func() {
					if gen != x.gen {
						return
					}
					if r.Total > 0 {
						x.bar.SetValue(float64(r.Done) / float64(r.Total))
					}
					x.status.SetText(r.Stage + "…")
				})
			})
			cancel()
			fyne.Do(func() { x.counted(gen, ans, a, err) })
		}()
	})
}

// counted shows a recount's result unless a newer count or answer came.
func (x *cohortAttrition) counted(gen int, ans *cohort.Answer, a *cohort.Attrition, err error) {
	if gen != x.gen {
		return
	}
	x.cancel = nil
	x.busyRow.Hide()
	if err != nil {
		if errors.Is(err, context.Canceled) {
			x.status.SetText("Cancelled: the table shows the last counts.")
		} else {
			x.status.SetText("The patients could not be counted: " + err.Error())
		}
		x.setChecks(x.att) // the checks say what the table shows
		return
	}
	x.show(a)
	// The export writes the table as shown (the answer is copied: the
	// statement and result are unchanged).
	if x.s.last == ans {
		cp := *ans
		cp.Attrition = a
		x.s.last, x.ans = &cp, &cp
	}
}

// drawFunnel draws one centred bar per step that is on, its width the
// share of the base population; a hidden count (<k) is drawn at zero and
// labelled.
func (x *cohortAttrition) drawFunnel(a *cohort.Attrition) {
	x.funnel.RemoveAll()
	if a == nil || a.Error != "" || len(a.Steps) == 0 {
		x.funnel.Refresh()
		return
	}
	base := a.Steps[0].Patients
	form := container.New(layout.NewFormLayout())
	for _, st := range a.Steps {
		if !st.On {
			continue
		}
		frac := float32(0)
		if !st.Patients.Hidden() && !base.Hidden() && base.N > 0 && st.Patients.N > 0 {
			frac = float32(float64(st.Patients.N) / float64(base.N))
		}
		label := st.Patients.String()
		if st.PercentOfBase != nil {
			label += fmt.Sprintf(" (%.0f%%)", *st.PercentOfBase)
		}
		name := st.Criterion
		if st.Number == 0 {
			name = "Base: " + name
		}
		if r := []rune(name); len(r) > 32 {
			name = string(r[:31]) + "…"
		}
		bar := canvas.NewRectangle(theme.Color(theme.ColorNamePrimary))
		form.Add(widget.NewLabel(name))
		form.Add(container.NewBorder(nil, nil, nil, widget.NewLabel(label), container.New(funnelLayout{frac: frac}, bar)))
	}
	x.funnel.Add(bold("Patients remaining"))
	x.funnel.Add(form)
	x.funnel.Refresh()
}

// funnelLayout centres its one object at a fraction of the width.
type funnelLayout struct{ frac float32 }

// MinSize implements fyne.Layout.
func (funnelLayout) MinSize([]fyne.CanvasObject) fyne.Size { return fyne.NewSize(60, 22) }

// Layout implements fyne.Layout.
func (l funnelLayout) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	for _, o := range objs {
		h := size.Height * 0.8
		w := max(1, size.Width*l.frac)
		o.Resize(fyne.NewSize(w, h))
		o.Move(fyne.NewPos((size.Width-w)/2, (size.Height-h)/2))
	}
}

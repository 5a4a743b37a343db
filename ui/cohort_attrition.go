package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
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
	// funnel holds one row per step: the criterion's check (the base
	// population's label), its bar and its count.
	funnel *fyne.Container
	checks []*widget.Check // criterion n's check is checks[n-1]

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
	x.table = newCellsTable(func() []string { return x.header }, func() [][]string { return x.rows })
	for i, w := range []float32{50, 320, 150, 85, 85} {
		x.table.SetColumnWidth(i, w)
	}
	x.funnel = container.NewVBox()
	body := container.NewVSplit(x.table, container.NewVScroll(x.funnel))
	body.Offset = 0.5
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

// show draws a table, its funnel and the criteria's checks.
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
	if fin := a.Final(); fin != nil && !fin.Patients.Withheld {
		msg = fmt.Sprintf("%s patients remain after %d of %d criteria (distinct %s). Untick a criterion to count without it; the model is not asked again.",
			fin.Patients, len(a.Steps)-1-len(a.Off), len(a.Steps)-1, a.PatientColumn)
	}
	if note := a.HiddenNote(); note != "" {
		msg += " The source shows aggregates only: " + note + "."
	}
	return msg
}

// off returns the criteria whose checks are cleared.
func (x *cohortAttrition) off() []int {
	var out []int
	for i, c := range x.checks {
		if !c.Checked {
			out = append(out, i+1)
		}
	}
	return out
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
		msg := x.status.Text
		x.drawFunnel(x.att) // the checks say again what the table shows
		x.status.SetText(msg)
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

// drawFunnel draws one row per step: the criterion's check (the base
// population's name), a centred bar whose width is the step's share of the
// base population (a funnel), and the count. A hidden count (<k) is drawn
// at zero and labelled; a criterion switched off has no bar.
func (x *cohortAttrition) drawFunnel(a *cohort.Attrition) {
	x.funnel.RemoveAll()
	x.checks = nil
	if a == nil || len(a.Steps) == 0 {
		x.funnel.Refresh()
		return
	}
	base := a.Steps[0].Patients
	x.funnel.Add(bold("Criteria in use and patients remaining"))
	for _, st := range a.Steps {
		var left fyne.CanvasObject
		if st.Number == 0 {
			left = widget.NewLabel("Base: " + clipWords(st.Criterion, 30))
		} else {
			// The criterion in full is in the table above: a long one is
			// clipped here, so that the bars keep their room.
			c := widget.NewCheck(fmt.Sprintf("%d. %s", st.Number, clipWords(st.Criterion, 30)), nil)
			c.SetChecked(st.On)
			c.OnChanged = func(bool) { x.recount() }
			x.checks = append(x.checks, c)
			left = c
		}
		frac := float32(0)
		if st.On && !st.Patients.Hidden() && !base.Hidden() && base.N > 0 && st.Patients.N > 0 {
			frac = float32(float64(st.Patients.N) / float64(base.N))
		}
		value := "switched off"
		if st.On {
			value = st.Patients.String()
			if st.PercentOfBase != nil {
				value += fmt.Sprintf(" (%.0f%%)", *st.PercentOfBase)
			}
		}
		bar := canvas.NewRectangle(theme.Color(theme.ColorNamePrimary))
		x.funnel.Add(container.New(funnelRow{frac: frac}, left, bar, widget.NewLabel(value)))
	}
	x.funnel.Refresh()
}

// funnelRow lays out a row of the funnel: the criterion on the left (42%
// of the width), the bar centred in the middle at its fraction of the
// middle's width, the count on the right.
type funnelRow struct{ frac float32 }

// MinSize implements fyne.Layout.
func (funnelRow) MinSize(objs []fyne.CanvasObject) fyne.Size {
	left, value := objs[0].MinSize(), objs[2].MinSize()
	return fyne.NewSize(left.Width+80+value.Width, max(left.Height, value.Height))
}

// Layout implements fyne.Layout.
func (l funnelRow) Layout(objs []fyne.CanvasObject, size fyne.Size) {
	left, bar, value := objs[0], objs[1], objs[2]
	lw := max(left.MinSize().Width, size.Width*0.42)
	vw := value.MinSize().Width
	left.Resize(fyne.NewSize(lw, size.Height))
	left.Move(fyne.NewPos(0, 0))
	value.Resize(fyne.NewSize(vw, size.Height))
	value.Move(fyne.NewPos(size.Width-vw, 0))
	mid := max(0, size.Width-lw-vw-8)
	w, h := max(1, mid*l.frac), size.Height*0.5
	bar.Resize(fyne.NewSize(w, h))
	bar.Move(fyne.NewPos(lw+(mid-w)/2, (size.Height-h)/2))
}

// clipWords shortens text to at most n characters, ending with "…".
func clipWords(text string, n int) string {
	r := []rune(text)
	if len(r) <= n {
		return text
	}
	return string(r[:n-1]) + "…"
}

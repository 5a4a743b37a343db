package ui

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/internal/progress"
)

// resultShapes are the result shapes offered, with their labels.
var resultShapes = []struct {
	measure evidence.Measure
	label   string
}{
	{evidence.TwoGroups, "Two groups: events and totals (OR, RR, RD)"},
	{evidence.SingleArm, "Single arm: events and total (rates: PR, PLO, PFT)"},
	{evidence.MeansSDs, "Two groups: means and SDs (MD, SMD)"},
	{evidence.RatioCI, "Reported ratio with its 95% CI (HR, OR, RR)"},
}

// resultsView is the Results step: the result to extract, the groups as
// extracted (correctable) and the standardized table computed from them.
type resultsView struct {
	s       *EvidenceScreen
	content fyne.CanvasObject

	outcome       *widget.Entry
	cohort        *widget.Entry
	shapeSel      *widget.Select
	resultsBtn    *widget.Button
	editGroupBtn  *widget.Button
	status        *widget.Label
	groupsTable   *widget.Table
	standardTable *widget.Table
	problems      *widget.Label

	groupRows     []evidence.ResultRow
	selectedGroup int
	standardCols  []tableColumn
	standardVals  []evidence.StandardColumn
	standardRows  []evidence.StandardRow
	problemList   []string
}

func newResultsView(s *EvidenceScreen) *resultsView {
	v := &resultsView{s: s, selectedGroup: -1}
	v.outcome = widget.NewEntry()
	v.outcome.SetPlaceHolder("e.g. local tumor progression")
	v.outcome.OnChanged = func(string) { v.specChanged() }
	v.cohort = widget.NewEntry()
	v.cohort.SetPlaceHolder("e.g. microwave ablation (treatment) vs radiofrequency ablation (control)")
	v.cohort.OnChanged = func(string) { v.specChanged() }
	labels := make([]string, len(resultShapes))
	for i, r := range resultShapes {
		labels[i] = r.label
	}
	v.shapeSel = widget.NewSelect(labels, func(string) { v.specChanged() })
	v.shapeSel.PlaceHolder = "(shape of the result)"
	v.resultsBtn = widget.NewButtonWithIcon("Extract results", theme.MediaPlayIcon(), v.ExtractResults)
	v.resultsBtn.Importance = widget.HighImportance
	v.editGroupBtn = widget.NewButtonWithIcon("Edit selected…", theme.DocumentCreateIcon(), v.showEditGroupDialog)
	v.editGroupBtn.Disable()
	v.status = widget.NewLabel("")
	v.status.Wrapping = fyne.TextWrapWord
	v.groupsTable = newTextTable([]tableColumn{{"Study", 140}, {"Group", 200}, {"Role", 80}, {"N", 70}, {"Events", 70}, {"%", 70}, {"Mean", 70}, {"SD", 70}, {"Chunks", 70}, {"Check", 170}},
		func() int { return len(v.groupRows) }, v.groupCell)
	v.groupsTable.OnSelected = func(id widget.TableCellID) {
		v.selectedGroup = id.Row
		v.editGroupBtn.Enable()
	}
	v.standardTable = widget.NewTable(
		func() (int, int) { return len(v.standardRows), len(v.standardCols) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.TableCellID, o fyne.CanvasObject) {
			o.(*widget.Label).SetText(v.standardCell(id.Row, id.Col))
		},
	)
	v.standardTable.ShowHeaderRow = true
	v.standardTable.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	v.standardTable.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Col >= 0 && id.Col < len(v.standardCols) {
			o.(*widget.Label).SetText(v.standardCols[id.Col].title)
		}
	}
	v.problems = widget.NewLabel("")
	v.problems.Wrapping = fyne.TextWrapWord
	v.problems.Importance = widget.WarningImportance

	form := widget.NewForm(
		widget.NewFormItem("Outcome", v.outcome),
		widget.NewFormItem("Cohort", v.cohort),
		widget.NewFormItem("Shape", v.shapeSel),
	)
	top := container.NewVBox(form, container.NewHBox(v.resultsBtn, v.editGroupBtn), v.status)
	tables := container.NewVSplit(
		container.NewBorder(bold("Groups as extracted (⚠: the number is not in its cited chunks)"), nil, nil, nil, v.groupsTable),
		container.NewBorder(bold("Standardized table (computed, the input of the meta-analysis)"), v.problems, nil, nil, v.standardTable),
	)
	v.content = container.NewBorder(top, nil, nil, nil, tables)
	return v
}

// show fills the result to extract and shows the groups and the
// standardized table.
func (v *resultsView) show(p *evidence.Project) {
	was := v.s.updating
	v.s.updating = true
	v.outcome.SetText(p.Result.Outcome)
	v.cohort.SetText(p.Result.Cohort)
	v.shapeSel.ClearSelected()
	for i, r := range resultShapes {
		if r.measure == p.Result.Measure {
			v.shapeSel.SetSelectedIndex(i)
		}
	}
	v.s.updating = was
	v.showTables(p)
}

func (v *resultsView) specChanged() {
	spec := evidence.ResultSpec{Outcome: v.outcome.Text, Cohort: v.cohort.Text}
	if i := v.shapeSel.SelectedIndex(); i >= 0 {
		spec.Measure = resultShapes[i].measure
	}
	if v.s.edit(func(p *evidence.Project) { p.SetResult(spec) }) {
		p := v.s.project()
		v.s.meta.show(p)
		v.showTables(p)
	}
}

// showTables shows the extracted groups and the standardized table.
func (v *resultsView) showTables(p *evidence.Project) {
	v.groupRows = p.ResultRows()
	v.selectedGroup = -1
	v.groupsTable.UnselectAll()
	v.editGroupBtn.Disable()
	v.groupsTable.Refresh()
	included := p.Included()
	with := 0
	for _, id := range included {
		if _, ok := p.Results[id]; ok {
			with++
		}
	}
	if len(included) == 0 {
		v.status.SetText("Include studies on the Screen step: their results are extracted here.")
	} else {
		v.status.SetText(fmt.Sprintf("%d of %d included studies have an extracted result. Select a row and Edit to correct a number.", with, len(included)))
	}

	v.standardRows, v.problemList = p.StandardTable()
	v.standardVals = evidence.StandardColumns(p.Result.Measure)
	v.standardCols = []tableColumn{{"Study", 150}}
	for _, c := range v.standardVals {
		v.standardCols = append(v.standardCols, tableColumn{c.Header, float32(max(75, 8*len(c.Header)))})
	}
	v.standardCols = append(v.standardCols, tableColumn{"Chunks", 70}, tableColumn{"Check", 200}, tableColumn{"How computed", 360})
	for i, c := range v.standardCols {
		v.standardTable.SetColumnWidth(i, c.width)
	}
	v.standardTable.Refresh()
	if len(v.problemList) > 0 {
		v.problems.SetText("• " + strings.Join(v.problemList, "\n• "))
		v.problems.Show()
	} else {
		v.problems.SetText("")
		v.problems.Hide()
	}
}

// numberText formats an extracted number, flagged when unsupported.
func numberText(n *evidence.Number) string {
	if n == nil {
		return ""
	}
	t := strconv.FormatFloat(n.Value, 'g', -1, 64)
	if n.Unsupported {
		t += " ⚠"
	}
	return t
}

// groupCell is the text of a groups table cell.
func (v *resultsView) groupCell(row, col int) string {
	p := v.s.project()
	if p == nil || row >= len(v.groupRows) {
		return ""
	}
	r := v.groupRows[row]
	switch col {
	case 0:
		return p.Label(r.StudyID)
	case 1:
		if r.Group < 0 { // the reported effect: kind, est (lower–upper)
			return fmt.Sprintf("Reported %s %s (%s – %s)", r.EffectKind, numberText(r.Numbers[0]), numberText(r.Numbers[1]), numberText(r.Numbers[2]))
		}
		return r.Name
	case 2:
		return r.Role
	case 3, 4, 5, 6, 7:
		if r.Group >= 0 {
			return numberText(r.Numbers[col-3])
		}
	case 8:
		return intList(r.Sources)
	case 9:
		var flags []string
		if r.Unsupported {
			flags = append(flags, "⚠ not in its chunk")
		}
		if r.Edited {
			flags = append(flags, "edited")
		}
		return strings.Join(flags, ", ")
	}
	return ""
}

// standardCell is the text of a standardized table cell.
func (v *resultsView) standardCell(row, col int) string {
	if row >= len(v.standardRows) || col >= len(v.standardCols) {
		return ""
	}
	r := v.standardRows[row]
	n := len(v.standardVals)
	switch {
	case col == 0:
		return r.Label
	case col <= n:
		return v.standardVals[col-1].Text(r)
	case col == n+1:
		return intList(r.Sources)
	case col == n+2:
		if len(r.Unsupported) > 0 {
			return "⚠ not in its chunk: " + strings.Join(r.Unsupported, ", ")
		}
		return ""
	case col == n+3:
		return strings.Join(r.Derivations, "; ")
	}
	return ""
}

// showEditGroupDialog lets the user correct the numbers of the selected
// group (or reported effect); blank means not reported.
func (v *resultsView) showEditGroupDialog() {
	p := v.s.project()
	if p == nil || v.selectedGroup < 0 || v.selectedGroup >= len(v.groupRows) {
		return
	}
	gr := v.groupRows[v.selectedGroup]
	labels := evidence.GroupNumbers
	if gr.Group < 0 {
		labels = evidence.EffectNumbers
	}
	var items []*widget.FormItem
	roles := make([]string, len(evidence.Roles))
	for i, r := range evidence.Roles {
		roles[i] = roleChoice(r)
	}
	role := widget.NewSelect(roles, nil)
	if gr.Group >= 0 {
		role.SetSelected(roleChoice(gr.Role))
		items = append(items, widget.NewFormItem("Role", role))
	}
	entries := make([]*widget.Entry, len(labels))
	for i, n := range gr.Numbers {
		e := widget.NewEntry()
		if n != nil {
			e.SetText(strconv.FormatFloat(n.Value, 'g', -1, 64))
		}
		e.SetPlaceHolder("not reported")
		entries[i] = e
		items = append(items, widget.NewFormItem(labels[i], e))
	}
	d := dialog.NewForm("Correct "+p.Label(gr.StudyID), "Save", "Cancel", items, func(ok bool) {
		if !ok {
			return
		}
		vals := make([]string, len(entries))
		for i, e := range entries {
			vals[i] = e.Text
		}
		rl := ""
		if i := role.SelectedIndex(); i >= 0 {
			rl = evidence.Roles[i]
		}
		if err := v.EditGroup(gr.StudyID, gr.Group, rl, vals); err != nil {
			showError(v.s.window, err)
		}
	}, v.s.window)
	d.Resize(fyne.NewSize(420, 360))
	d.Show()
}

// roleChoice labels a group's role.
func roleChoice(role string) string {
	if role == "" {
		return "(other)"
	}
	return role
}

// EditGroup corrects the numbers of a study's group (group -1: its
// reported effect) from the user's text, through the review.
func (v *resultsView) EditGroup(id string, group int, role string, values []string) error {
	if v.s.review == nil {
		return nil
	}
	if err := v.s.review.EditGroup(id, group, role, values); err != nil {
		return err
	}
	v.s.changed()
	v.showTables(v.s.project())
	return nil
}

// ExtractResults extracts the result of every included study.
func (v *resultsView) ExtractResults() {
	v.s.runStep("Extracting results", func(ctx context.Context, r app.Reviewer, report progress.Func) error {
		return r.ExtractResults(ctx, 0, stepProgress(report, "Extracted the results of"))
	}, nil)
}

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

// resultShape is a result shape offered, with its label.
type resultShape struct {
	measure evidence.Measure
	label   string
}

// resultShapes are the result shapes offered.
var resultShapes = []resultShape{
	{evidence.TwoGroups, "Two groups: events and totals (OR, RR, RD)"},
	{evidence.SingleArm, "Single arm: events and total (rates: PR, PLO, PFT)"},
	{evidence.MeansSDs, "Two groups: means and SDs (MD, SMD)"},
	{evidence.RatioCI, "Reported ratio with its 95% CI (HR, OR, RR)"},
}

// resultsView is the Results step of the outcome chosen (outcomeBar): the
// result to extract, the groups as extracted (correctable), the groups
// that form a multi-arm study's comparison (armsDialog) and the
// standardized table computed from them.
type resultsView struct {
	s       *EvidenceScreen
	content fyne.CanvasObject

	bar           *outcomeBar
	outcome       *widget.Entry
	cohort        *widget.Entry
	shapeSel      *widget.Select
	resultsBtn    *widget.Button
	editGroupBtn  *widget.Button
	armsBtn       *widget.Button
	status        *widget.Label
	groupsTable   *widget.Table
	standardTable *widget.Table
	problems      *widget.Label

	groupRows     []evidence.ResultRow
	selectedGroup int
	standardCols  []tableColumn
	standardVals  []evidence.StandardColumn
	standardRows  []evidence.StandardRow // with an empty row for each study awaiting its arm choice
	problemList   []string

	current   int             // the outcome shown (both steps), an index of the project's outcomes
	shownFor  string          // the project whose outcome is shown
	needArms  map[string]bool // included studies of the outcome awaiting an arm choice
	armsStudy string          // the study whose arms Choose arms… opens, "" for none
	addDlg    *outcomeDialog  // the Add outcome dialog open, nil when none
	armsDlg   *armsDialog     // the arms dialog open, nil when none
}

func newResultsView(s *EvidenceScreen) *resultsView {
	v := &resultsView{s: s, selectedGroup: -1}
	v.bar = newOutcomeBar(s)
	v.outcome = widget.NewEntry()
	v.outcome.SetPlaceHolder("e.g. local tumor progression")
	v.outcome.OnChanged = func(string) { v.specChanged() }
	v.cohort = widget.NewEntry()
	v.cohort.SetPlaceHolder("e.g. microwave ablation (treatment) vs radiofrequency ablation (control)")
	v.cohort.OnChanged = func(string) { v.specChanged() }
	v.shapeSel = widget.NewSelect(shapeLabels(), func(string) { v.specChanged() })
	v.shapeSel.PlaceHolder = "(shape of the result)"
	v.resultsBtn = widget.NewButtonWithIcon("Extract results", theme.MediaPlayIcon(), v.ExtractResults)
	v.resultsBtn.Importance = widget.HighImportance
	v.editGroupBtn = widget.NewButtonWithIcon("Edit selected…", theme.DocumentCreateIcon(), v.showEditGroupDialog)
	v.editGroupBtn.Disable()
	v.armsBtn = widget.NewButtonWithIcon("Choose arms…", theme.ListIcon(), func() { v.showArmsDialog(v.armsStudy) })
	v.armsBtn.Disable()
	v.status = widget.NewLabel("")
	v.status.Wrapping = fyne.TextWrapWord
	v.groupsTable = newTextTable([]tableColumn{{"Study", 140}, {"Group", 200}, {"Role", 80}, {"N", 70}, {"Events", 70}, {"%", 70}, {"Mean", 70}, {"SD", 70}, {"Chunks", 70}, {"Check", 170}},
		func() int { return len(v.groupRows) }, v.groupCell)
	v.groupsTable.OnSelected = func(id widget.TableCellID) {
		v.selectedGroup = id.Row
		v.editGroupBtn.Enable()
		if id.Row < len(v.groupRows) {
			v.chooseArmsOf(v.groupRows[id.Row].StudyID)
		}
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
	v.standardTable.OnSelected = func(id widget.TableCellID) {
		if id.Row < len(v.standardRows) {
			v.chooseArmsOf(v.standardRows[id.Row].StudyID)
		}
	}
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

	// Two rows for the outcome's spec and the buttons, so that the tables
	// keep their room at 1024×640.
	top := container.NewVBox(
		v.bar.content,
		container.NewGridWithColumns(2, widget.NewForm(widget.NewFormItem("Name", v.outcome)), widget.NewForm(widget.NewFormItem("Cohort", v.cohort))),
		container.NewBorder(nil, nil, nil, container.NewHBox(v.resultsBtn, v.editGroupBtn, v.armsBtn), widget.NewForm(widget.NewFormItem("Shape", v.shapeSel))),
		v.status)
	tables := container.NewVSplit(
		container.NewBorder(bold("Groups as extracted (⚠: the number is not in its cited chunks)"), nil, nil, nil, v.groupsTable),
		container.NewBorder(bold("Standardized table (computed, the input of the meta-analysis)"), v.problems, nil, nil, v.standardTable),
	)
	v.content = container.NewBorder(top, nil, nil, nil, tables)
	return v
}

// show fills the result to extract of the outcome shown (the first when
// another project is shown) and shows its groups and standardized table.
func (v *resultsView) show(p *evidence.Project) {
	if p.Name != v.shownFor || v.current < 0 || v.current >= p.NumOutcomes() {
		v.shownFor, v.current = p.Name, 0
	}
	v.bar.show(p, v.current)
	spec := p.OutcomeAt(v.current).Result
	was := v.s.updating
	v.s.updating = true
	v.outcome.SetText(spec.Outcome)
	v.cohort.SetText(spec.Cohort)
	if i := shapeIndex(spec.Measure); i >= 0 {
		v.shapeSel.SetSelectedIndex(i)
	} else {
		v.shapeSel.ClearSelected()
	}
	v.s.updating = was
	v.showTables(p)
}

func (v *resultsView) specChanged() {
	spec := evidence.ResultSpec{Outcome: v.outcome.Text, Cohort: v.cohort.Text}
	if i := v.shapeSel.SelectedIndex(); i >= 0 {
		spec.Measure = resultShapes[i].measure
	}
	i := v.current
	if v.s.edit(func(p *evidence.Project) {
		if o := p.OutcomeAt(i); o != nil {
			o.SetResult(spec)
		}
	}) {
		p := v.s.project()
		v.bar.show(p, v.current) // the outcome's name may have changed
		v.s.meta.show(p)
		v.showTables(p)
	}
}

// chooseArmsOf makes Choose arms… open the arms of study id, when the
// outcome shown has its result's groups.
func (v *resultsView) chooseArmsOf(id string) {
	v.armsStudy = ""
	v.armsBtn.Disable()
	if o := v.shownOutcome(); o != nil && len(o.Results[id].Groups) > 0 {
		v.armsStudy = id
		v.armsBtn.Enable()
	}
}

// showTables shows the outcome's extracted groups and its standardized
// table, where a study awaiting its arm choice has a row that says so.
func (v *resultsView) showTables(p *evidence.Project) {
	i := v.current
	o := p.OutcomeAt(i)
	if o == nil {
		return
	}
	v.groupRows = p.ResultRowsFor(i)
	v.selectedGroup = -1
	v.groupsTable.UnselectAll()
	v.editGroupBtn.Disable()
	v.groupsTable.Refresh()
	included := p.Included()
	with := 0
	for _, id := range included {
		if _, ok := o.Results[id]; ok {
			with++
		}
	}
	v.needArms = map[string]bool{}
	for _, id := range p.ArmsNeeded(i) {
		v.needArms[id] = true
	}
	labels := p.UniqueLabels(included)
	switch {
	case len(included) == 0:
		v.status.SetText("Include studies on the Screen step: their results are extracted here.")
	case len(v.needArms) > 0:
		var names []string
		for _, id := range included {
			if v.needArms[id] {
				names = append(names, labels[id])
			}
		}
		v.status.SetText(fmt.Sprintf("%d of %d included studies have an extracted result. More groups than the outcome compares, left out of the analysis until you choose the groups to compare (select the row, then Choose arms…): %s.",
			with, len(included), strings.Join(names, ", ")))
	default:
		v.status.SetText(fmt.Sprintf("%d of %d included studies have an extracted result. Select a row and Edit to correct a number.", with, len(included)))
	}

	rows, problems := p.StandardTableFor(i)
	v.problemList = problems
	byID := map[string]evidence.StandardRow{}
	for _, r := range rows {
		byID[r.StudyID] = r
	}
	v.standardRows = v.standardRows[:0]
	for _, id := range included {
		if r, ok := byID[id]; ok {
			v.standardRows = append(v.standardRows, r)
		} else if v.needArms[id] {
			v.standardRows = append(v.standardRows, evidence.StandardRow{StudyID: id, Label: labels[id]})
		}
	}
	v.standardTable.UnselectAll()
	v.chooseArmsOf("")
	v.standardVals = evidence.StandardColumns(o.Result.Measure)
	v.standardCols = []tableColumn{{"Study", 150}, {"Arms", 320}}
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
	case col == 1:
		return v.armsText(r.StudyID)
	case v.needArms[r.StudyID]:
		if col == n+3 {
			return "not analysed until the groups to compare are chosen (Choose arms…)"
		}
		return ""
	case col <= n+1:
		return v.standardVals[col-2].Text(r)
	case col == n+2:
		return intList(r.Sources)
	case col == n+3:
		if len(r.Unsupported) > 0 {
			return "⚠ not in its chunk: " + strings.Join(r.Unsupported, ", ")
		}
		return ""
	case col == n+4:
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
// reported effect) for the outcome shown, from the user's text, through
// the review.
func (v *resultsView) EditGroup(id string, group int, role string, values []string) error {
	if v.s.review == nil {
		return nil
	}
	if err := v.s.review.EditOutcomeGroup(v.current, id, group, role, values); err != nil {
		return err
	}
	v.s.changed()
	v.showTables(v.s.project())
	return nil
}

// ExtractResults extracts the result of the outcome shown from every
// included study.
func (v *resultsView) ExtractResults() {
	i := v.current
	v.s.runStep("Extracting results", func(ctx context.Context, r app.Reviewer, report progress.Func) error {
		return r.ExtractResults(ctx, i, stepProgress(report, "Extracted the results of"))
	}, nil)
}

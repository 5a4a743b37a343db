package ui

import (
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app/evidence"
)

// A review has one or more outcomes, each with its own result to extract,
// standardized table and meta-analysis (evidence.Outcome). The Results and
// the Meta-analysis steps each show an outcomeBar; the outcome chosen is
// the same in both (resultsView.current) and every action of the two
// steps acts on it. The rules (names, limits, which arms may form a
// comparison and how groups are combined) are app/evidence's: the screens
// only show what it returns.

// outcomeBar chooses the outcome shown, adds one and removes one.
type outcomeBar struct {
	s         *EvidenceScreen
	sel       *widget.Select
	addBtn    *widget.Button
	removeBtn *widget.Button
	content   fyne.CanvasObject
}

func newOutcomeBar(s *EvidenceScreen) *outcomeBar {
	b := &outcomeBar{s: s}
	b.sel = widget.NewSelect(nil, func(string) {
		if !s.updating {
			s.results.selectOutcome(b.sel.SelectedIndex())
		}
	})
	b.sel.PlaceHolder = "(outcome)"
	b.addBtn = widget.NewButtonWithIcon("Add outcome…", theme.ContentAddIcon(), func() { s.results.showAddOutcomeDialog() })
	b.removeBtn = widget.NewButtonWithIcon("Remove outcome", theme.DeleteIcon(), func() { s.results.confirmRemoveOutcome() })
	b.content = container.NewBorder(nil, nil, bold("Outcome"), container.NewHBox(b.addBtn, b.removeBtn), b.sel)
	return b
}

// show lists the project's outcomes by name with outcome cur selected;
// the last outcome cannot be removed.
func (b *outcomeBar) show(p *evidence.Project, cur int) {
	was := b.s.updating
	b.s.updating = true
	defer func() { b.s.updating = was }()
	b.sel.SetOptions(outcomeNames(p))
	b.sel.SetSelectedIndex(cur)
	if p.NumOutcomes() > 1 {
		b.removeBtn.Enable()
	} else {
		b.removeBtn.Disable()
	}
}

// outcomeNames names the project's outcomes for the selector, in order.
func outcomeNames(p *evidence.Project) []string {
	names := make([]string, p.NumOutcomes())
	for i := range names {
		names[i] = outcomeName(p, i)
	}
	return names
}

// outcomeName is outcome i's name, or its number while it has none.
func outcomeName(p *evidence.Project, i int) string {
	o := p.OutcomeAt(i)
	if o == nil || strings.TrimSpace(o.Result.Outcome) == "" {
		return fmt.Sprintf("Outcome %d (not named yet)", i+1)
	}
	return o.Result.Outcome
}

// outcome is the outcome shown; never nil while a project is open.
func (v *resultsView) shownOutcome() *evidence.Outcome {
	p := v.s.project()
	if p == nil {
		return nil
	}
	return p.OutcomeAt(v.current)
}

// selectOutcome shows outcome i in the Results and Meta-analysis steps.
func (v *resultsView) selectOutcome(i int) {
	p := v.s.project()
	if p == nil || i < 0 || i >= p.NumOutcomes() || i == v.current {
		return
	}
	v.current = i
	v.show(p)
	v.s.meta.outcomeChanged(p)
}

// --- adding and removing outcomes ---

// outcomeDialog is the dialog that adds an outcome: its name, cohort and
// shape, with the review's objection shown in it (nothing typed is lost).
type outcomeDialog struct {
	d        *dialog.CustomDialog
	outcome  *widget.Entry
	cohort   *widget.Entry
	shape    *widget.Select
	errLabel *widget.Label
	addBtn   *widget.Button
}

// showAddOutcomeDialog asks for a new outcome and adds it (selected) to
// the review.
func (v *resultsView) showAddOutcomeDialog() {
	if v.s.review == nil {
		return
	}
	od := &outcomeDialog{outcome: widget.NewEntry(), cohort: widget.NewEntry(), shape: widget.NewSelect(shapeLabels(), nil)}
	od.outcome.SetPlaceHolder("e.g. major complications")
	od.cohort.SetPlaceHolder("e.g. microwave ablation (treatment) vs radiofrequency ablation (control)")
	od.shape.PlaceHolder = "(shape of the result)"
	if o := v.shownOutcome(); o != nil { // the same groups are the usual start
		od.cohort.SetText(o.Result.Cohort)
		od.shape.SetSelectedIndex(shapeIndex(o.Result.Measure))
	}
	od.errLabel = errorLabel()
	form := widget.NewForm(
		widget.NewFormItem("Outcome", od.outcome),
		widget.NewFormItem("Cohort", od.cohort),
		widget.NewFormItem("Shape", od.shape),
	)
	content := container.NewVBox(
		hint("Each outcome has its own result extraction, standardized table and meta-analysis."),
		form, od.errLabel)
	od.d = dialog.NewCustomWithoutButtons("Add an outcome", content, v.s.window)
	cancel := widget.NewButton("Cancel", func() { od.d.Hide(); v.addDlg = nil })
	od.addBtn = widget.NewButtonWithIcon("Add", theme.ConfirmIcon(), func() {
		spec := evidence.ResultSpec{Outcome: od.outcome.Text, Cohort: od.cohort.Text}
		if i := od.shape.SelectedIndex(); i >= 0 {
			spec.Measure = resultShapes[i].measure
		}
		if err := v.AddOutcome(spec); err != nil {
			showDialogError(od.d, od.errLabel, err)
			return
		}
		od.d.Hide()
		v.addDlg = nil
	})
	od.addBtn.Importance = widget.HighImportance
	od.d.SetButtons([]fyne.CanvasObject{cancel, od.addBtn})
	od.d.Resize(fyne.NewSize(600, 300))
	v.addDlg = od
	od.d.Show()
}

// AddOutcome adds an outcome to the review and shows it.
func (v *resultsView) AddOutcome(spec evidence.ResultSpec) error {
	if v.s.review == nil {
		return nil
	}
	i, err := v.s.review.AddOutcome(spec)
	if err != nil {
		return err
	}
	v.s.changed()
	v.current = -1 // shown anew
	v.selectOutcome(i)
	return nil
}

// confirmRemoveOutcome asks before removing the outcome shown.
func (v *resultsView) confirmRemoveOutcome() {
	p := v.s.project()
	if p == nil {
		return
	}
	i := v.current
	msg := fmt.Sprintf("Remove the outcome “%s” with its extracted results, arm choices and meta-analysis settings?\nThe review's other outcomes are kept.", outcomeName(p, i))
	d := dialog.NewConfirm("Remove outcome", msg, func(ok bool) {
		if ok {
			if err := v.RemoveOutcome(i); err != nil {
				showError(v.s.window, err)
			}
		}
	}, v.s.window)
	d.SetConfirmText("Remove")
	d.SetConfirmImportance(widget.DangerImportance)
	d.Show()
}

// RemoveOutcome removes outcome i from the review (the review refuses to
// remove the last one) and shows the one before it.
func (v *resultsView) RemoveOutcome(i int) error {
	if v.s.review == nil {
		return nil
	}
	if err := v.s.review.RemoveOutcome(i); err != nil {
		return err
	}
	v.s.changed()
	p := v.s.project()
	v.current = -1
	v.selectOutcome(min(max(i-1, 0), p.NumOutcomes()-1))
	return nil
}

// --- the groups that form a comparison ---

// armsDialog lets the user choose, for one study and the outcome shown,
// the groups on the treatment side and on the control side; several on a
// side are combined by the review. The review's objection is shown in the
// dialog, the checks stay as the user left them.
type armsDialog struct {
	d        *dialog.CustomDialog
	outcome  int
	id       string
	groups   []string // the study's group names, in its order
	treat    []*widget.Check
	control  []*widget.Check // nil for a single-arm result
	errLabel *widget.Label
	okBtn    *widget.Button
	clearBtn *widget.Button
}

// showArmsDialog opens the arms dialog for study id of the outcome shown.
func (v *resultsView) showArmsDialog(id string) {
	p, o := v.s.project(), v.shownOutcome()
	if p == nil || o == nil {
		return
	}
	r, ok := o.Results[id]
	if !ok || len(r.Groups) == 0 {
		return
	}
	single := o.Result.Measure == evidence.SingleArm
	ad := &armsDialog{outcome: v.current, id: id, errLabel: errorLabel()}
	chosen := o.Arms[id]
	cols := []string{"Group", "N"}
	if o.Result.Measure == evidence.MeansSDs {
		cols = append(cols, "Mean", "SD")
	} else {
		cols = append(cols, "Events", "%")
	}
	if single {
		cols = append(cols, "Analysed")
	} else {
		cols = append(cols, "Treatment", "Control")
	}
	var cells []fyne.CanvasObject
	for _, c := range cols {
		cells = append(cells, bold(c))
	}
	for _, g := range r.Groups {
		ad.groups = append(ad.groups, g.Name)
		name := widget.NewLabel(g.Name)
		name.Wrapping = fyne.TextWrapWord
		cells = append(cells, name, widget.NewLabel(numberText(g.N)))
		if o.Result.Measure == evidence.MeansSDs {
			cells = append(cells, widget.NewLabel(numberText(g.Mean)), widget.NewLabel(numberText(g.SD)))
		} else {
			cells = append(cells, widget.NewLabel(numberText(g.Events)), widget.NewLabel(numberText(g.Percent)))
		}
		t := widget.NewCheck("", nil)
		t.SetChecked(slices.Contains(chosen.Treatment, g.Name))
		ad.treat = append(ad.treat, t)
		cells = append(cells, t)
		if !single {
			c := widget.NewCheck("", nil)
			c.SetChecked(slices.Contains(chosen.Control, g.Name))
			ad.control = append(ad.control, c)
			cells = append(cells, c)
		}
	}
	how := "Check one group on each side to compare two groups. Several groups checked on one side are combined into one " +
		"(Cochrane Handbook 6.5.2.10: events and totals added; means and SDs pooled by its formula). Groups left unchecked are not analysed for this outcome."
	if single {
		how = "Check the group to analyse. Several groups checked are combined into one (Cochrane Handbook 6.5.2.10: events and totals added)."
	}
	intro := widget.NewLabel(fmt.Sprintf("%s has %d groups for the outcome “%s”. %s", p.Label(id), len(r.Groups), outcomeName(p, v.current), how))
	intro.Wrapping = fyne.TextWrapWord
	content := container.NewBorder(intro, ad.errLabel, nil, nil,
		container.NewVScroll(container.NewGridWithColumns(len(cols), cells...)))
	ad.d = dialog.NewCustomWithoutButtons("Choose the groups to compare — "+p.Label(id), content, v.s.window)
	cancel := widget.NewButton("Cancel", func() { ad.d.Hide(); v.armsDlg = nil })
	ad.clearBtn = widget.NewButton("Clear", func() {
		v.ClearArms(ad.outcome, ad.id)
		ad.d.Hide()
		v.armsDlg = nil
	})
	if len(chosen.Treatment) == 0 && len(chosen.Control) == 0 {
		ad.clearBtn.Disable()
	}
	ad.okBtn = widget.NewButtonWithIcon("OK", theme.ConfirmIcon(), func() {
		if err := v.SetArms(ad.outcome, ad.id, ad.choice()); err != nil {
			showDialogError(ad.d, ad.errLabel, err)
			return
		}
		ad.d.Hide()
		v.armsDlg = nil
	})
	ad.okBtn.Importance = widget.HighImportance
	ad.d.SetButtons([]fyne.CanvasObject{cancel, ad.clearBtn, ad.okBtn})
	ad.d.Resize(fyne.NewSize(720, float32(min(260+44*len(r.Groups), 620))))
	v.armsDlg = ad
	ad.d.Show()
}

// choice is the groups checked on each side.
func (ad *armsDialog) choice() evidence.ArmChoice {
	var c evidence.ArmChoice
	for i, name := range ad.groups {
		if ad.treat[i].Checked {
			c.Treatment = append(c.Treatment, name)
		}
		if ad.control != nil && ad.control[i].Checked {
			c.Control = append(c.Control, name)
		}
	}
	return c
}

// SetArms records the groups that form study id's comparison for outcome
// i, through the review (which checks them).
func (v *resultsView) SetArms(i int, id string, c evidence.ArmChoice) error {
	if v.s.review == nil {
		return nil
	}
	if err := v.s.review.SetArms(i, id, c); err != nil {
		return err
	}
	v.armsChanged()
	return nil
}

// ClearArms forgets the arm choice of study id for outcome i.
func (v *resultsView) ClearArms(i int, id string) {
	if v.s.review == nil {
		return
	}
	v.s.review.ClearArms(i, id)
	v.armsChanged()
}

// armsChanged shows the tables after a change of arms.
func (v *resultsView) armsChanged() {
	v.s.changed()
	if p := v.s.project(); p != nil {
		v.showTables(p)
	}
}

// armsText says which groups form a study's comparison for the outcome
// shown: "A + B vs C", or that the user must choose.
func (v *resultsView) armsText(id string) string {
	if v.needArms[id] {
		o := v.shownOutcome()
		n := 0
		if o != nil {
			n = len(o.Results[id].Groups)
		}
		return fmt.Sprintf("⚠ %d groups: choose arms", n)
	}
	o := v.shownOutcome()
	if o == nil {
		return ""
	}
	c, ok := o.Arms[id]
	if !ok {
		return ""
	}
	side := func(names []string) string {
		t := strings.Join(names, " + ")
		if len(names) > 1 {
			t += " (combined)"
		}
		return t
	}
	if len(c.Control) == 0 {
		return side(c.Treatment)
	}
	return side(c.Treatment) + " vs " + side(c.Control)
}

// --- small helpers ---

// shapeLabels are the result shapes' labels, in the order of resultShapes.
func shapeLabels() []string {
	labels := make([]string, len(resultShapes))
	for i, r := range resultShapes {
		labels[i] = r.label
	}
	return labels
}

// shapeIndex is the index of shape m in resultShapes, -1 for none.
func shapeIndex(m evidence.Measure) int {
	return slices.IndexFunc(resultShapes, func(r resultShape) bool { return r.measure == m })
}

// errorLabel is a dialog's label for the review's objection, hidden while
// there is none.
func errorLabel() *widget.Label {
	l := widget.NewLabel("")
	l.Wrapping = fyne.TextWrapWord
	l.Importance = widget.DangerImportance
	l.Hide()
	return l
}

// showDialogError shows err's sentence in dialog d's error label.
func showDialogError(d dialog.Dialog, l *widget.Label, err error) {
	l.SetText(errorSummary(err))
	l.Show()
	d.Refresh()
}

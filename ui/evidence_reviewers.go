package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app/evidence"
)

// teamBar is the Screen step's bar for dual screening (issue 17 item 4):
// who is screening now, the reviewers, their agreement per stage, their
// conflicts and the exchange of decisions files. The rules are the
// review's (app.ReviewTeam); the bar shows and collects.
type teamBar struct {
	v       *screeningView
	content fyne.CanvasObject

	screenerSel  *widget.Select
	reviewers    *widget.Label
	agreement    *widget.Label
	manageBtn    *widget.Button
	conflictsBtn *widget.Button
	exportBtn    *widget.Button
	importBtn    *widget.Button
	updating     bool
}

func newTeamBar(v *screeningView) *teamBar {
	b := &teamBar{v: v}
	b.screenerSel = widget.NewSelect(nil, b.screenerChosen)
	b.screenerSel.PlaceHolder = "(who is screening?)"
	b.reviewers = widget.NewLabel("")
	b.reviewers.Wrapping = fyne.TextWrapWord // on its own row: beside the buttons it was cut to "One review…" at 1024 pixels
	b.agreement = widget.NewLabel("")
	b.agreement.Wrapping = fyne.TextWrapWord
	b.manageBtn = widget.NewButtonWithIcon("Reviewers…", theme.AccountIcon(), b.showReviewersDialog)
	b.conflictsBtn = widget.NewButtonWithIcon("Conflicts…", theme.WarningIcon(), b.showConflictsDialog)
	b.exportBtn = widget.NewButtonWithIcon("Export my decisions…", theme.UploadIcon(), func() {
		p, who := b.v.s.project(), b.screener()
		if p == nil || who == "" {
			showError(b.v.s.window, fmt.Errorf("say who is screening first: the file holds that reviewer's decisions"))
			return
		}
		chooseSaveFile(b.v.s.window, p.Name+" - "+who+" decisions.json", func(path string) { b.ExportDecisions(path, who) })
	})
	b.importBtn = widget.NewButtonWithIcon("Import decisions…", theme.DownloadIcon(), func() {
		chooseOpenFile(b.v.s.window, []string{".json"}, b.ImportDecisions)
	})
	sel := container.NewGridWrap(fyne.NewSize(190, b.screenerSel.MinSize().Height), b.screenerSel)
	b.content = container.NewVBox(
		container.NewBorder(nil, nil,
			container.NewHBox(widget.NewLabel("Screening as"), sel, b.manageBtn),
			container.NewHBox(b.conflictsBtn, b.exportBtn, b.importBtn)),
		b.reviewers,
		b.agreement,
	)
	return b
}

// screener returns who is screening now ("" for nobody).
func (b *teamBar) screener() string {
	if r := b.v.s.review; r != nil {
		return r.Screener()
	}
	return ""
}

// show shows the reviewers, who is screening and their agreement.
func (b *teamBar) show(p *evidence.Project) {
	b.updating = true
	defer func() { b.updating = false }()
	names := p.ReviewerNames()
	b.screenerSel.SetOptions(names)
	who := b.screener()
	b.screenerSel.SetSelected(who)
	if len(names) == 0 {
		b.screenerSel.Disable()
		b.reviewers.SetText("One reviewer (no pair named)")
		b.setAgreement("")
		for _, btn := range []*widget.Button{b.conflictsBtn, b.exportBtn} {
			btn.Disable()
		}
		return
	}
	b.screenerSel.Enable()
	b.exportBtn.Enable()
	text := "Reviewers: " + strings.Join(names, ", ")
	if who == "" {
		text += ". Say who is screening before deciding."
	}
	b.reviewers.SetText(text)
	if len(names) < 2 {
		b.conflictsBtn.Disable()
		b.setAgreement("Name the second reviewer, or import their decisions file, to compare decisions.")
		return
	}
	b.conflictsBtn.Enable()
	b.setAgreement(agreementText(p))
}

// setAgreement shows the agreement line, hidden (taking no room) when
// there is none.
func (b *teamBar) setAgreement(text string) {
	b.agreement.SetText(text)
	if text == "" && b.agreement.Visible() {
		b.agreement.Hide()
		b.content.Refresh()
	} else if text != "" && !b.agreement.Visible() {
		b.agreement.Show()
		b.content.Refresh()
	}
}

// agreementText says the reviewers' agreement and conflicts per stage.
func agreementText(p *evidence.Project) string {
	var lines []string
	for _, st := range evidence.Stages {
		if st == evidence.StageFullText && !p.FullTextStage {
			continue
		}
		ag, err := p.Agreement(st)
		if err != nil {
			continue
		}
		line := st.Label() + ": "
		if ag.Records == 0 {
			line += "no record decided by both yet"
		} else {
			line += fmt.Sprintf("%d records decided by both, agreement %.0f%%, Cohen's kappa %.2f", ag.Records, 100*ag.Raw, ag.Kappa)
		}
		conf := p.Conflicts(st)
		line += fmt.Sprintf("; %d conflicts, %d open", len(conf), p.OpenConflicts(st))
		lines = append(lines, line)
	}
	return strings.Join(lines, "\n")
}

// screenerChosen switches who is screening: their own decisions show, the
// other's stay hidden until both have decided a record.
func (b *teamBar) screenerChosen(name string) {
	r := b.v.s.review
	if b.updating || r == nil {
		return
	}
	if err := r.SetScreener(name); err != nil {
		showError(b.v.s.window, err)
		return
	}
	b.v.ranking = nil // the learner follows this reviewer's decisions
	b.v.decisionsChanged()
}

// AddReviewer names a reviewer of the review.
func (b *teamBar) AddReviewer(name string) {
	if r := b.v.s.review; r != nil {
		if err := r.AddReviewer(name); err != nil {
			showError(b.v.s.window, err)
			return
		}
		b.v.s.changed()
		b.v.decisionsChanged()
	}
}

// RemoveReviewer removes a reviewer without decisions.
func (b *teamBar) RemoveReviewer(name string) {
	if r := b.v.s.review; r != nil {
		if err := r.RemoveReviewer(name); err != nil {
			showError(b.v.s.window, err)
			return
		}
		b.v.s.changed()
		b.v.decisionsChanged()
	}
}

// showReviewersDialog lists the reviewers, to add or remove one.
func (b *teamBar) showReviewersDialog() {
	p := b.v.s.project()
	if p == nil {
		return
	}
	name := widget.NewEntry()
	name.SetPlaceHolder("the reviewer's name, e.g. Ana")
	name.Validator = evidence.ValidateReviewerName
	remove := widget.NewSelect(p.ReviewerNames(), nil)
	remove.PlaceHolder = "(a reviewer without decisions)"
	text := fmt.Sprintf("Up to %d reviewers screen independently; a third person resolves their conflicts. "+
		"The first reviewer named takes over the decisions made so far.", evidence.MaxReviewers)
	items := []*widget.FormItem{widget.NewFormItem("Add", name), widget.NewFormItem("Remove", remove)}
	d := dialog.NewForm("Reviewers", "Apply", "Cancel", items, func(ok bool) {
		if !ok {
			return
		}
		if strings.TrimSpace(name.Text) != "" {
			b.AddReviewer(strings.TrimSpace(name.Text))
		}
		if remove.Selected != "" {
			b.RemoveReviewer(remove.Selected)
		}
	}, b.v.s.window)
	items[0].HintText = text
	d.Resize(fyne.NewSize(560, 280))
	d.Show()
}

// Resolve resolves a conflict between the reviewers.
func (b *teamBar) Resolve(stage evidence.Stage, id string, include bool, reason, note, by string) bool {
	r := b.v.s.review
	if r == nil {
		return false
	}
	if err := r.Resolve(stage, id, include, reason, note, by); err != nil {
		showError(b.v.s.window, err)
		return false
	}
	b.v.s.changed()
	b.v.decisionsChanged()
	return true
}

// conflictLine describes a conflict for the list.
func conflictLine(p *evidence.Project, c evidence.Conflict) string {
	parts := make([]string, len(c.Decisions))
	names := p.ReviewerNames()
	for i, d := range c.Decisions {
		dec := "include"
		if !d.Include {
			dec = "exclude (" + d.Reason + ")"
		}
		parts[i] = names[i] + ": " + dec
	}
	status := "open"
	if r := c.Resolution; r != nil {
		status = "resolved: include"
		if !r.Include {
			status = "resolved: exclude (" + r.Reason + ")"
		}
	}
	return fmt.Sprintf("[%s] %s — %s — %s", c.Stage.Label(), p.Label(c.ID), strings.Join(parts, "; "), status)
}

// showConflictsDialog lists the conflicts of both stages; the one chosen
// is resolved with a decision, its reason and how it was resolved.
func (b *teamBar) showConflictsDialog() {
	p := b.v.s.project()
	if p == nil {
		return
	}
	var all []evidence.Conflict
	for _, st := range evidence.Stages {
		all = append(all, p.Conflicts(st)...)
	}
	if len(all) == 0 {
		dialog.ShowInformation("Conflicts", "The reviewers have not decided any record differently.", b.v.s.window)
		return
	}
	lines := make([]string, len(all))
	for i, c := range all {
		lines[i] = conflictLine(p, c)
	}
	pick := widget.NewSelect(lines, nil)
	pick.SetSelectedIndex(0)
	decision := widget.NewRadioGroup([]string{"Include", "Exclude"}, nil)
	decision.Horizontal = true
	decision.SetSelected("Include")
	reason := widget.NewSelectEntry(p.ExclusionReasonsFor(""))
	reason.SetPlaceHolder("why it is excluded (for an exclusion)")
	note := widget.NewEntry()
	note.SetPlaceHolder("how it was resolved: discussed, a third reviewer decided, …")
	by := widget.NewEntry()
	by.SetPlaceHolder("who resolved it (optional)")
	items := []*widget.FormItem{
		widget.NewFormItem("Conflict", pick), widget.NewFormItem("Decision", decision),
		widget.NewFormItem("Reason", reason), widget.NewFormItem("How", note), widget.NewFormItem("By", by),
	}
	d := dialog.NewForm(fmt.Sprintf("Conflicts (%d open)", p.OpenConflicts(evidence.StageTitleAbstract)+p.OpenConflicts(evidence.StageFullText)),
		"Resolve", "Close", items, func(ok bool) {
			i := pick.SelectedIndex()
			if !ok || i < 0 || i >= len(all) {
				return
			}
			b.Resolve(all[i].Stage, all[i].ID, decision.Selected == "Include", reason.Text, note.Text, by.Text)
		}, b.v.s.window)
	d.Resize(fyne.NewSize(760, 380))
	d.Show()
}

// ExportDecisions writes a reviewer's decisions to a file for the other
// reviewer.
func (b *teamBar) ExportDecisions(path, reviewer string) {
	r := b.v.s.review
	if r == nil {
		return
	}
	if err := r.ExportDecisions(path, reviewer); err != nil {
		showError(b.v.s.window, err)
		return
	}
	dialog.ShowInformation("Export decisions", fmt.Sprintf("Wrote %s's decisions to %s. The other reviewer imports this file into the same review.", reviewer, path), b.v.s.window)
}

// ImportDecisions merges the other reviewer's decisions file and says what
// it did, conflicts included.
func (b *teamBar) ImportDecisions(path string) {
	r := b.v.s.review
	if r == nil {
		return
	}
	rep, err := r.ImportDecisions(path)
	if err != nil {
		showError(b.v.s.window, err)
		return
	}
	b.v.s.changed()
	b.v.decisionsChanged()
	b.v.s.setNotice(rep.Summary())
}

// ownDecision returns the decision at title and abstract the Screen step
// shows as the user's: the screener's own when the review has reviewers.
func (v *screeningView) ownDecision(p *evidence.Project, id string) (evidence.Decision, bool) {
	return stageOwnDecision(v.s, p, evidence.StageTitleAbstract, id)
}

// stageOwnDecision returns the user's decision at a stage: the screener's
// own with reviewers, else the review's.
func stageOwnDecision(s *EvidenceScreen, p *evidence.Project, stage evidence.Stage, id string) (evidence.Decision, bool) {
	if p.HasReviewers() {
		if s.review == nil {
			return evidence.Decision{}, false
		}
		return p.ReviewerDecision(s.review.Screener(), stage, id)
	}
	d, ok := p.DecisionsOf("", stage)[id]
	return d, ok
}

// stageDecisionText describes the decision on a record at a stage as the
// screener may see it: their own, and once every reviewer has decided it,
// the review's (agreed or resolved) or the conflict. The other reviewer's
// decision stays hidden until then.
func stageDecisionText(s *EvidenceScreen, p *evidence.Project, stage evidence.Stage, id string) (string, widget.Importance) {
	d, ok := stageOwnDecision(s, p, stage, id)
	text, imp := "—", widget.LowImportance
	switch {
	case !ok:
	case d.Include:
		text, imp = "Included", widget.SuccessImportance
	default:
		text, imp = "Excluded: "+d.Reason, widget.DangerImportance
	}
	if !p.HasReviewers() || !p.OthersDecided(stage, id) {
		return text, imp
	}
	var agreed map[string]evidence.Decision
	if stage == evidence.StageFullText {
		agreed = p.FullText
	} else {
		agreed = p.Decisions
	}
	a, settled := agreed[id]
	switch {
	case !settled:
		return text + " · conflict", widget.WarningImportance
	case len(p.Reviewers) < 2:
		return text, imp
	case p.Resolutions[stage][id].Note != "":
		if a.Include {
			return text + " · resolved: included", widget.SuccessImportance
		}
		return text + " · resolved: excluded", widget.DangerImportance
	}
	return text + " · agreed", imp
}

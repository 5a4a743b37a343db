package ui

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/png"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/internal/progress"
)

// screeningView is the Screen step: the eligibility criteria, the
// screened candidates with their verdicts, the user's decisions and the
// PRISMA counts.
type screeningView struct {
	s       *EvidenceScreen
	content fyne.CanvasObject

	criteriaBox        *fyne.Container
	criterionText      []*widget.Entry // the criteria's text entries, in order
	addCriterionBtn    *widget.Button
	suggestCriteriaBtn *widget.Button
	screenBtn          *widget.Button
	status             *widget.Label
	table              *widget.Table
	detail             *widget.RichText
	includeBtn         *widget.Button
	excludeBtn         *widget.Button
	undecideBtn        *widget.Button
	prismaCounts       *widget.Label
	prismaImg          *canvas.Image
	learnStatus        *widget.Label
	curveImg           *canvas.Image
	consecutiveEntry   *widget.Entry
	sampleEntry        *widget.Entry
	sampleBtn          *widget.Button
	stopStatus         *widget.Label

	rows      []string // the record IDs of the table, in order
	screened  screeningIndex
	selected  string // the study shown, "" for none
	prismaGen int

	// The active learner's ranking (app.Reviewer.Rank), applied below
	// the selected row; one Rank runs at a time, and a decision made while
	// it runs asks for another when it ends.
	ranking   *evidence.Ranking
	rankBusy  bool
	rankAgain bool
	rankGen   int // counts the project states shown: a ranking of an older one is not applied

	team     *teamBar      // who is screening, the reviewers (evidence_reviewers.go)
	fulltext *fullTextView // the full-text stage (evidence_fulltext.go)
}

func newScreeningView(s *EvidenceScreen) *screeningView {
	v := &screeningView{s: s}
	v.criteriaBox = container.NewVBox()
	v.addCriterionBtn = widget.NewButtonWithIcon("Add criterion", theme.ContentAddIcon(), v.AddCriterion)
	v.suggestCriteriaBtn = widget.NewButtonWithIcon("Suggest criteria", theme.HelpIcon(), v.SuggestCriteria)
	v.screenBtn = widget.NewButtonWithIcon("Screen", theme.MediaPlayIcon(), v.Screen)
	v.screenBtn.Importance = widget.HighImportance
	v.status = widget.NewLabel("")
	v.status.Wrapping = fyne.TextWrapWord
	v.prismaCounts = widget.NewLabel("")
	v.prismaCounts.Wrapping = fyne.TextWrapWord
	v.prismaImg = canvas.NewImageFromImage(nil)
	v.prismaImg.FillMode = canvas.ImageFillContain
	v.prismaImg.SetMinSize(fyne.NewSize(300, 330))
	v.learnStatus = widget.NewLabel("")
	v.learnStatus.Wrapping = fyne.TextWrapWord
	v.curveImg = canvas.NewImageFromImage(nil)
	v.curveImg.FillMode = canvas.ImageFillContain
	v.curveImg.SetMinSize(fyne.NewSize(300, 180))
	v.consecutiveEntry = widget.NewEntry()
	v.consecutiveEntry.SetPlaceHolder("off")
	v.consecutiveEntry.Validator = func(t string) error { _, err := parseCount(t); return err }
	v.consecutiveEntry.OnChanged = v.setConsecutive
	v.sampleEntry = widget.NewEntry()
	v.sampleEntry.SetText("200")
	v.sampleEntry.Validator = func(t string) error { _, err := parseCount(t); return err }
	v.sampleBtn = widget.NewButtonWithIcon("Draw random sample", theme.ViewRefreshIcon(), v.DrawSample)
	v.stopStatus = widget.NewLabel("")
	v.stopStatus.Wrapping = fyne.TextWrapWord

	v.table = widget.NewTable(
		func() (int, int) { return len(v.rows), len(v.columns()) },
		func() fyne.CanvasObject { return newFullTextLabel() }, // titles in full on hover (fulltext_label.go)
		func(id widget.TableCellID, o fyne.CanvasObject) {
			l := o.(*fullTextLabel)
			l.Text, l.Importance = v.cell(id.Row, id.Col)
			l.Refresh()
		},
	)
	v.table.ShowHeaderRow = true
	v.table.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	v.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if cols := v.columns(); id.Col >= 0 && id.Col < len(cols) {
			o.(*widget.Label).SetText(cols[id.Col].title)
		}
	}
	v.table.OnSelected = func(id widget.TableCellID) {
		if id.Row >= 0 && id.Row < len(v.rows) {
			v.ShowStudy(v.rows[id.Row])
		}
	}
	v.detail = widget.NewRichText()
	v.detail.Wrapping = fyne.TextWrapWord
	v.includeBtn = widget.NewButtonWithIcon("Include", theme.ConfirmIcon(), func() { v.decideAndNext(v.selected, true, "") })
	v.includeBtn.Importance = widget.SuccessImportance
	v.excludeBtn = widget.NewButtonWithIcon("Exclude…", theme.CancelIcon(), v.showExcludeDialog)
	v.excludeBtn.Importance = widget.DangerImportance
	v.undecideBtn = widget.NewButtonWithIcon("Undecide", theme.ContentUndoIcon(), v.Undecide)

	left := container.NewVBox(
		bold("Eligibility criteria"),
		hint("Each study gets YES (✓), NO (✗) or UNCERTAIN (?) per criterion. The score is the weighted mean of YES = 1, UNCERTAIN = 0, NO = −1 over the criteria switched on."),
		v.criteriaBox,
		container.NewHBox(v.addCriterionBtn, v.suggestCriteriaBtn),
		container.NewHBox(v.screenBtn),
		v.status,
		bold("Learning from your decisions"),
		hint("After each decision the undecided studies are ranked again, most likely relevant first, by a classifier trained on your decisions (before any, by similarity to the question: the PICO and the criteria). The list below the selected study follows the new order."),
		v.learnStatus,
		bold("When to stop"),
		hint("Relevant studies found against studies decided, in the order you decided them; the dashed line is a constant rate of finding."),
		v.curveImg,
		container.NewBorder(nil, nil, widget.NewLabel("Stop after this many irrelevant studies in a row:"), nil, v.consecutiveEntry),
		hint(evidence.ConsecutiveAssumption),
		container.NewBorder(nil, nil, widget.NewLabel("Recall test: sample size"), v.sampleBtn, v.sampleEntry),
		hint(evidence.RecallTestAssumption+fmt.Sprintf(" When the whole sample is screened, it estimates the recall reached with %.0f%% confidence; screening may stop when recall of at least %.0f%% is shown.", 100*evidence.StopConfidence, 100*evidence.StopTargetRecall)),
		v.stopStatus,
		bold("PRISMA"),
		v.prismaCounts,
		v.prismaImg,
	)
	detail := container.NewBorder(nil, container.NewHBox(v.includeBtn, v.excludeBtn, v.undecideBtn), nil, nil,
		container.NewVScroll(v.detail))
	right := container.NewVSplit(
		container.NewBorder(bold("Studies (most likely relevant first)"), nil, nil, nil, v.table),
		detail)
	split := container.NewHSplit(container.NewScroll(left), right)
	split.Offset = 0.45
	v.team, v.fulltext = newTeamBar(v), newFullTextView(s)
	v.content = container.NewBorder(v.team.content, nil, nil, nil, container.NewAppTabs(
		container.NewTabItem(evidence.StageTitleAbstract.Label(), split),
		container.NewTabItem(evidence.StageFullText.Label(), v.fulltext.content)))
	return v
}

// show shows the criteria, the screening, the PRISMA counts and the
// selected study.
func (v *screeningView) show(p *evidence.Project) {
	v.rebuildCriteria(p)
	if v.selected != "" && !p.IsCandidate(v.selected) {
		v.selected = ""
	}
	// A project opened or changed by a step: its order (the chat model's
	// screening) until the learner's ranking of it arrives.
	v.rows, v.ranking = p.Candidates(), nil
	v.rankGen++
	v.showTable(p)
	v.showPRISMA(p)
	v.team.show(p)
	v.fulltext.show(p)
}

// AddCriterion adds an empty criterion (weight 1) for the user to write.
func (v *screeningView) AddCriterion() {
	if v.editCriteria(func(p *evidence.Project) { p.Criteria = append(p.Criteria, evidence.Criterion{Weight: 1}) }) {
		v.rebuildCriteria(v.s.project())
	}
}

// rebuildCriteria shows one editable row per criterion: its text, weight,
// whether it counts, and a delete button.
func (v *screeningView) rebuildCriteria(p *evidence.Project) {
	v.criteriaBox.RemoveAll()
	v.criterionText = v.criterionText[:0]
	// change edits criterion i, unless it is gone.
	change := func(i int, f func(c *evidence.Criterion)) {
		v.editCriteria(func(p *evidence.Project) {
			if i < len(p.Criteria) {
				f(&p.Criteria[i])
			}
		})
	}
	for i, c := range p.Criteria {
		text := widget.NewMultiLineEntry()
		text.Wrapping = fyne.TextWrapWord
		text.SetMinRowsVisible(2)
		text.SetPlaceHolder("a statement a study meets or not, e.g. The study is a randomized controlled trial")
		text.SetText(c.Text)
		v.criterionText = append(v.criterionText, text)
		text.OnChanged = func(t string) { change(i, func(c *evidence.Criterion) { c.Text = t }) }
		weight := widget.NewEntry()
		weight.SetText(strconv.FormatFloat(c.Weight, 'g', -1, 64))
		weight.Validator = func(t string) error { _, err := evidence.ParseWeight(t); return err }
		weight.OnChanged = func(t string) {
			if w, err := evidence.ParseWeight(t); err == nil {
				change(i, func(c *evidence.Criterion) { c.Weight = w })
			}
		}
		on := widget.NewCheck("", func(b bool) { change(i, func(c *evidence.Criterion) { c.Disabled = !b }) })
		on.SetChecked(!c.Disabled)
		del := widget.NewButtonWithIcon("", theme.DeleteIcon(), func() {
			if v.editCriteria(func(p *evidence.Project) {
				if i < len(p.Criteria) {
					p.Criteria = slices.Delete(p.Criteria, i, i+1)
				}
			}) {
				v.rebuildCriteria(v.s.project())
			}
		})
		w := container.NewGridWrap(fyne.NewSize(84, weight.MinSize().Height), weight)
		v.criteriaBox.Add(container.NewBorder(nil, nil, bold(fmt.Sprintf("C%d", i+1)), container.NewHBox(w, on, del), text))
	}
	if len(p.Criteria) == 0 {
		v.criteriaBox.Add(hint("No criteria yet: add them, or ask the model to suggest some from the PICO."))
	}
	v.criteriaBox.Refresh()
}

// editCriteria edits the criteria and rescores the screening for them (no
// model call); it reports whether the edit was made.
func (v *screeningView) editCriteria(edit func(p *evidence.Project)) bool {
	if !v.s.edit(func(p *evidence.Project) { edit(p); p.Rescore() }) {
		return false
	}
	v.showTable(v.s.project())
	return true
}

// columns are the table's columns: rank, decision, score, title, then one
// per criterion.
func (v *screeningView) columns() []tableColumn {
	cols := []tableColumn{{"#", 56}, {"Decision", 110}, {"Score", 60}, {"Title", 300}}
	n := 0
	if p := v.s.project(); p != nil {
		n = len(p.Criteria)
		for _, st := range p.Screening {
			n = max(n, len(st.Verdicts))
		}
	}
	for i := range n {
		cols = append(cols, tableColumn{fmt.Sprintf("C%d", i+1), 42})
	}
	return cols
}

// screenedStudy returns the screening of a study, nil when it has none.
func screenedStudy(p *evidence.Project, id string) *evidence.ScreenedStudy {
	for i := range p.Screening {
		if p.Screening[i].ID == id {
			return &p.Screening[i]
		}
	}
	return nil
}

// screeningIndex finds a study's screening by its ID for the table's
// cells: a review may screen up to evidence.MaxCandidates studies, too many
// to scan for each cell. It is rebuilt when the screening is another slice
// or an entry moved.
type screeningIndex struct {
	first *evidence.ScreenedStudy
	n     int
	at    map[string]int
}

// of returns the screening of a study, nil when it has none.
func (x *screeningIndex) of(p *evidence.Project, id string) *evidence.ScreenedStudy {
	if len(p.Screening) == 0 {
		return nil
	}
	for range 2 {
		if x.first == &p.Screening[0] && x.n == len(p.Screening) {
			i, ok := x.at[id]
			if !ok {
				return nil
			}
			if p.Screening[i].ID == id {
				return &p.Screening[i]
			}
		}
		x.first, x.n, x.at = &p.Screening[0], len(p.Screening), make(map[string]int, len(p.Screening))
		for i := range p.Screening {
			x.at[p.Screening[i].ID] = i
		}
	}
	return nil
}

// verdictMark is a verdict's symbol and colour.
func verdictMark(v evidence.Verdict) (string, widget.Importance) {
	switch v {
	case evidence.Yes:
		return "✓", widget.SuccessImportance
	case evidence.No:
		return "✗", widget.DangerImportance
	case evidence.Uncertain:
		return "?", widget.WarningImportance
	}
	return "", widget.MediumImportance
}

// cell is the text and colour of a table cell.
func (v *screeningView) cell(row, col int) (string, widget.Importance) {
	p := v.s.project()
	if p == nil || row >= len(v.rows) {
		return "", widget.MediumImportance
	}
	id := v.rows[row]
	st := v.screened.of(p, id)
	switch col {
	case 0:
		return strconv.Itoa(row + 1), widget.MediumImportance
	case 1:
		return stageDecisionText(v.s, p, evidence.StageTitleAbstract, id)
	case 2:
		switch {
		case st == nil:
			return "—", widget.LowImportance
		case st.Error != "":
			return "failed", widget.DangerImportance
		}
		return fmt.Sprintf("%.2f", st.Score), widget.MediumImportance
	case 3:
		if t := p.Studies[id].Title; t != "" {
			return t, widget.MediumImportance
		}
		if st != nil && st.Title != "" {
			return st.Title, widget.MediumImportance
		}
		return id, widget.MediumImportance
	}
	if st == nil || col-4 >= len(st.Verdicts) {
		return "", widget.MediumImportance
	}
	return verdictMark(st.Verdicts[col-4])
}

// showTable shows the screening table, its status and the selected study.
func (v *screeningView) showTable(p *evidence.Project) {
	if cand := p.Candidates(); !sameMembers(v.rows, cand) {
		v.rows, v.ranking = cand, nil
	}
	v.requestRank()
	for i, c := range v.columns() {
		v.table.SetColumnWidth(i, c.width)
	}
	v.table.Refresh()

	screened, failed := 0, 0
	for _, st := range p.Screening {
		if p.IsCandidate(st.ID) {
			screened++
			if st.Error != "" {
				failed++
			}
		}
	}
	var status []string
	switch {
	case p.Search == nil:
		status = append(status, "Run a search first: its candidates are screened here.")
	case screened == 0:
		status = append(status, fmt.Sprintf("%d candidates not screened yet.", len(p.Search.IDs)))
	default:
		status = append(status, fmt.Sprintf("%d of %d candidates screened.", screened-failed, len(p.Search.IDs)))
		if failed > 0 {
			status = append(status, fmt.Sprintf("%d could not be screened (select one to see why); Screen again to retry them.", failed))
		}
	}
	if p.ScreeningStale() {
		status = append(status, "The criteria changed since the screening: Screen again to update the verdicts.")
	}
	v.status.SetText(strings.Join(status, " "))
	if v.selected != "" {
		v.ShowStudy(v.selected)
	} else {
		v.detail.ParseMarkdown("Select a study to see its abstract and verdicts, then include or exclude it.")
		v.setDecisionButtons(false)
	}
}

func (v *screeningView) setDecisionButtons(on bool) {
	for _, b := range []*widget.Button{v.includeBtn, v.excludeBtn, v.undecideBtn} {
		if on {
			b.Enable()
		} else {
			b.Disable()
		}
	}
}

// ShowStudy shows a candidate's title, decision, verdicts per criterion
// and abstract (read off the UI goroutine the first time).
func (v *screeningView) ShowStudy(id string) {
	p := v.s.project()
	if p == nil || !p.IsCandidate(id) {
		return
	}
	v.selected = id
	v.setDecisionButtons(true)
	seg := func(text string, style widget.RichTextStyle) *widget.TextSegment {
		return &widget.TextSegment{Text: text, Style: style}
	}
	colored := func(text string, imp widget.Importance) *widget.TextSegment {
		style := widget.RichTextStyleParagraph
		style.ColorName = importanceColor(imp)
		return seg(text, style)
	}
	info := p.Studies[id]
	title := info.Title
	if title == "" {
		title = id
	}
	segs := []widget.RichTextSegment{seg(title, widget.RichTextStyleSubHeading)}
	line := p.Label(id) + " · " + id
	if info.PMID != "" {
		line += " · PMID " + info.PMID
	}
	segs = append(segs, seg(line, widget.RichTextStyleParagraph))
	dec, imp := stageDecisionText(v.s, p, evidence.StageTitleAbstract, id)
	segs = append(segs, colored("Decision: "+dec, imp))
	if conf, ok := v.ranking.Confidence(id); ok {
		segs = append(segs, seg(fmt.Sprintf("Relevance by the learner: %.0f%% (%s, %d decisions)", 100*conf, v.ranking.Model, v.ranking.Decisions), widget.RichTextStyleParagraph))
		var terms []string
		for _, tw := range v.ranking.TopTerms(id, 8) {
			terms = append(terms, tw.Term)
		}
		if len(terms) > 0 {
			segs = append(segs, seg("Terms that raised its rank: "+strings.Join(terms, ", "), widget.RichTextStyleParagraph))
		}
	}

	st := screenedStudy(p, id)
	switch {
	case st == nil:
		segs = append(segs, seg("Not screened yet.", widget.RichTextStyleParagraph))
	case st.Error != "":
		segs = append(segs, colored("Could not be screened: "+st.Error, widget.DangerImportance))
	default:
		segs = append(segs, seg(fmt.Sprintf("Verdicts (score %.2f)", st.Score), widget.RichTextStyleSubHeading))
		for i, verdict := range st.Verdicts {
			text := fmt.Sprintf("C%d", i+1)
			if i < len(p.Criteria) {
				text += " " + p.Criteria[i].Text
				if p.Criteria[i].Disabled {
					text += " (switched off)"
				}
			}
			mark, imp := verdictMark(verdict)
			segs = append(segs, colored(fmt.Sprintf("%s %s — %s", mark, verdict, text), imp))
		}
	}
	if t, ok := v.s.review.CachedText(id); ok {
		heading := "Abstract"
		if t.FullText {
			heading = fmt.Sprintf("Full text (%d passages)", len(t.Chunks))
		}
		segs = append(segs, seg(heading, widget.RichTextStyleSubHeading))
		n := 0
		for _, c := range t.Chunks {
			if c.N == 1 && !t.FullText && c.Section == "Title" {
				continue // the title is shown above
			}
			text := c.Text
			if c.Section != "" {
				text = c.Section + ": " + text
			}
			segs = append(segs, seg(text, widget.RichTextStyleParagraph))
			n++
		}
		if n == 0 {
			segs = append(segs, seg("(no abstract)", widget.RichTextStyleParagraph))
		}
	} else {
		segs = append(segs, seg("Abstract", widget.RichTextStyleSubHeading), seg("Reading…", widget.RichTextStyleParagraph))
		v.s.loadText(id, func() {
			if v.selected == id {
				v.ShowStudy(id)
			}
		})
	}
	v.detail.Segments = segs
	v.detail.Refresh()
}

// importanceColor is the theme colour of a label importance.
func importanceColor(imp widget.Importance) fyne.ThemeColorName {
	switch imp {
	case widget.SuccessImportance:
		return theme.ColorNameSuccess
	case widget.DangerImportance:
		return theme.ColorNameError
	case widget.WarningImportance:
		return theme.ColorNameWarning
	}
	return theme.ColorNameForeground
}

// Decide records the user's decision on a study.
func (v *screeningView) Decide(id string, include bool, reason string) {
	if v.s.review == nil || id == "" {
		return
	}
	if err := v.s.review.Decide(id, include, reason); err != nil {
		showError(v.s.window, err)
		return
	}
	v.s.changed()
	v.decisionsChanged()
}

// Undecide removes the decision on the selected study.
func (v *screeningView) Undecide() {
	if v.s.review == nil || v.selected == "" {
		return
	}
	v.s.review.Undecide(v.selected)
	v.s.changed()
	v.decisionsChanged()
}

func (v *screeningView) decisionsChanged() {
	p := v.s.project()
	v.requestRank()
	v.table.Refresh()
	v.showPRISMA(p)
	v.team.show(p)
	v.fulltext.show(p)
	if v.selected != "" {
		v.ShowStudy(v.selected)
	}
	v.s.extract.showStudies(p)
	v.s.results.showTables(p)
}

// showExcludeDialog asks why the selected study is excluded.
func (v *screeningView) showExcludeDialog() {
	id, p := v.selected, v.s.project()
	if p == nil || id == "" {
		return
	}
	reason := widget.NewSelectEntry(p.ExclusionReasonsFor(id))
	reason.SetPlaceHolder("why the study is excluded")
	d := dialog.NewForm("Exclude "+p.Label(id), "Exclude", "Cancel",
		[]*widget.FormItem{widget.NewFormItem("Reason", reason)}, func(ok bool) {
			if ok {
				v.decideAndNext(id, false, reason.Text)
			}
		}, v.s.window)
	d.Resize(fyne.NewSize(560, 200))
	d.Show()
}

// showPRISMA shows the PRISMA counts and draws the flow diagram off the UI
// goroutine.
func (v *screeningView) showPRISMA(p *evidence.Project) {
	c := p.PRISMA()
	text := fmt.Sprintf("Identified %d · duplicates %d · screened %d · excluded %d · undecided %d · included %d · not screened %d",
		c.Identified, c.Duplicates, c.Screened, c.Excluded, c.Undecided, c.Included, c.NotScreened)
	if len(c.Reasons) > 0 {
		var rs []string
		for _, r := range sortedKeys(c.Reasons) {
			rs = append(rs, fmt.Sprintf("%s: %d", r, c.Reasons[r]))
		}
		text += "\nExcluded: " + strings.Join(rs, "; ")
	}
	if c.StoppingRule != "" {
		text += "\nStopping rule: " + c.StoppingRule
	}
	v.prismaCounts.SetText(text)
	v.showStopping(p)
	v.prismaGen++
	gen := v.prismaGen
	curve, total := p.ScreeningCurve(), 0
	if p.Search != nil {
		total = len(p.Search.IDs)
	}
	go func() {
		var buf bytes.Buffer
		var img, curveImg image.Image
		err := evidence.WritePRISMADiagram(&buf, c)
		if err == nil {
			img, err = png.Decode(&buf)
		}
		var cbuf bytes.Buffer
		cerr := evidence.WriteScreeningCurve(&cbuf, curve, total)
		if cerr == nil {
			curveImg, cerr = png.Decode(&cbuf)
		}
		fyne.Do(func() {
			if gen != v.prismaGen {
				return
			}
			if err != nil {
				v.s.logger.Warn("evidence screen: PRISMA diagram", "err", err)
				v.prismaCounts.SetText(text + "\nThe diagram could not be drawn: " + err.Error())
			}
			if cerr != nil {
				v.s.logger.Warn("evidence screen: progress curve", "err", cerr)
			}
			v.prismaImg.Image = img
			v.prismaImg.Refresh()
			v.curveImg.Image = curveImg
			v.curveImg.Refresh()
		})
	}()
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// SuggestCriteria asks the model for eligibility criteria from the PICO.
func (v *screeningView) SuggestCriteria() {
	v.s.runStep("Suggesting eligibility criteria", func(ctx context.Context, r app.Reviewer, report progress.Func) error {
		report(progress.Report{Stage: "Asking the chat model for eligibility criteria"})
		return r.SuggestCriteria(ctx)
	}, nil)
}

// Screen screens the candidates against the criteria.
func (v *screeningView) Screen() {
	v.s.runStep("Screening", func(ctx context.Context, r app.Reviewer, report progress.Func) error {
		return r.Screen(ctx, stepProgress(report, "Screened"))
	}, nil)
}

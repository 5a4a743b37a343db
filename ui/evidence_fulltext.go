package ui

import (
	"fmt"
	"strconv"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app/evidence"
)

// fullTextView is the Screen step's second stage (issue 17 item 5): the
// records included at title and abstract (the reports sought), each
// assessed against its full text when one is imported (else marked not
// retrieved), with its own exclusion reasons; as the screener when the
// review has reviewers.
type fullTextView struct {
	s       *EvidenceScreen
	content fyne.CanvasObject

	stageCheck     *widget.Check
	status         *widget.Label
	table          *widget.Table
	detail         *widget.RichText
	includeBtn     *widget.Button
	excludeBtn     *widget.Button
	undecideBtn    *widget.Button
	notRetrieveBtn *widget.Button

	rows     []string // the reports sought, in order
	selected string
	updating bool
}

func newFullTextView(s *EvidenceScreen) *fullTextView {
	v := &fullTextView{s: s}
	v.stageCheck = widget.NewCheck("Screen the full texts of the records included at title and abstract (a second stage: the studies included are then those included at full text)", v.setStage)
	v.status = widget.NewLabel("")
	v.status.Wrapping = fyne.TextWrapWord
	cols := []tableColumn{{"#", 40}, {"Decision", 150}, {"Retrieval", 110}, {"Title", 320}}
	v.table = widget.NewTable(
		func() (int, int) { return len(v.rows), len(cols) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.TableCellID, o fyne.CanvasObject) {
			l := o.(*widget.Label)
			l.Text, l.Importance = v.cell(id.Row, id.Col)
			l.Refresh()
		},
	)
	for i, c := range cols {
		v.table.SetColumnWidth(i, c.width)
	}
	v.table.ShowHeaderRow = true
	v.table.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	v.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Col >= 0 && id.Col < len(cols) {
			o.(*widget.Label).SetText(cols[id.Col].title)
		}
	}
	v.table.OnSelected = func(id widget.TableCellID) {
		if id.Row >= 0 && id.Row < len(v.rows) {
			v.ShowReport(v.rows[id.Row])
		}
	}
	v.detail = widget.NewRichText()
	v.detail.Wrapping = fyne.TextWrapWord
	v.includeBtn = widget.NewButtonWithIcon("Include", theme.ConfirmIcon(), func() { v.Decide(v.selected, true, "") })
	v.includeBtn.Importance = widget.SuccessImportance
	v.excludeBtn = widget.NewButtonWithIcon("Exclude…", theme.CancelIcon(), v.showExcludeDialog)
	v.excludeBtn.Importance = widget.DangerImportance
	v.undecideBtn = widget.NewButtonWithIcon("Undecide", theme.ContentUndoIcon(), v.Undecide)
	v.notRetrieveBtn = widget.NewButtonWithIcon("Not retrieved…", theme.ErrorIcon(), v.showNotRetrievedDialog)
	detail := container.NewBorder(nil, container.NewHBox(v.includeBtn, v.excludeBtn, v.undecideBtn, v.notRetrieveBtn), nil, nil,
		container.NewVScroll(v.detail))
	split := container.NewHSplit(container.NewBorder(bold("Reports sought for retrieval"), nil, nil, nil, v.table), detail)
	split.Offset = 0.5
	v.content = container.NewBorder(container.NewVBox(v.stageCheck,
		hint("Import the full texts (PDF, JATS XML or text) with Import…; a report whose full text cannot be obtained is marked not retrieved. PRISMA counts the reports sought, not retrieved, assessed and excluded per reason."),
		v.status), nil, nil, nil, split)
	return v
}

// setStage switches the full-text stage on or off.
func (v *fullTextView) setStage(on bool) {
	if v.updating {
		return
	}
	if v.s.edit(func(p *evidence.Project) { p.SetFullTextStage(on) }) {
		v.s.screening.decisionsChanged()
	}
}

// show shows the reports sought and the counts of the stage.
func (v *fullTextView) show(p *evidence.Project) {
	v.updating = true
	v.stageCheck.SetChecked(p.FullTextStage)
	v.updating = false
	v.rows = p.Sought()
	v.table.Refresh()
	c := p.PRISMA()
	if !p.FullTextStage {
		v.status.SetText(fmt.Sprintf("%d records included at title and abstract. Switch the stage on to assess them on their full texts.", len(v.rows)))
	} else {
		text := fmt.Sprintf("Reports sought %d · not retrieved %d · assessed %d · excluded %d · awaiting %d · studies included %d",
			c.Sought, c.NotRetrieved, c.Assessed, c.ReportsExcluded, c.AwaitingFullText, c.Included)
		if c.FullTextConflicts > 0 {
			text += fmt.Sprintf(" · conflicts between reviewers %d", c.FullTextConflicts)
		}
		v.status.SetText(text)
	}
	for _, b := range []*widget.Button{v.includeBtn, v.excludeBtn, v.undecideBtn, v.notRetrieveBtn} {
		if p.FullTextStage && v.selected != "" {
			b.Enable()
		} else {
			b.Disable()
		}
	}
	if v.selected != "" {
		v.ShowReport(v.selected)
	}
}

// cell is the text and colour of a table cell.
func (v *fullTextView) cell(row, col int) (string, widget.Importance) {
	p := v.s.project()
	if p == nil || row >= len(v.rows) {
		return "", widget.MediumImportance
	}
	id := v.rows[row]
	switch col {
	case 0:
		return strconv.Itoa(row + 1), widget.MediumImportance
	case 1:
		if _, gone := p.NotRetrieved[id]; gone {
			return "—", widget.LowImportance
		}
		return stageDecisionText(v.s, p, evidence.StageFullText, id)
	case 2:
		if note, gone := p.NotRetrieved[id]; gone {
			return "not retrieved: " + note, widget.WarningImportance
		}
		if t, ok := v.s.review.CachedText(id); ok && t.FullText {
			return "full text", widget.SuccessImportance
		}
		return "", widget.MediumImportance
	}
	if t := p.Studies[id].Title; t != "" {
		return t, widget.MediumImportance
	}
	return id, widget.MediumImportance
}

// ShowReport shows a report sought: its decision and its full text (or
// its abstract, saying that no full text was imported).
func (v *fullTextView) ShowReport(id string) {
	p := v.s.project()
	if p == nil {
		return
	}
	v.selected = id
	on := p.FullTextStage
	for _, b := range []*widget.Button{v.includeBtn, v.excludeBtn, v.undecideBtn, v.notRetrieveBtn} {
		if on {
			b.Enable()
		} else {
			b.Disable()
		}
	}
	seg := func(text string, style widget.RichTextStyle) *widget.TextSegment {
		return &widget.TextSegment{Text: text, Style: style}
	}
	title := p.Studies[id].Title
	if title == "" {
		title = id
	}
	dec, _ := stageDecisionText(v.s, p, evidence.StageFullText, id)
	segs := []widget.RichTextSegment{seg(title, widget.RichTextStyleSubHeading), seg(p.Label(id)+" · "+id, widget.RichTextStyleParagraph),
		seg("Full-text decision: "+dec, widget.RichTextStyleParagraph)}
	if note, gone := p.NotRetrieved[id]; gone {
		segs = append(segs, seg("Full text not retrieved: "+note, widget.RichTextStyleParagraph))
	}
	if t, ok := v.s.review.CachedText(id); ok {
		if t.FullText {
			segs = append(segs, seg(fmt.Sprintf("Full text (%s, %d passages)", t.Source, len(t.Chunks)), widget.RichTextStyleSubHeading))
		} else {
			segs = append(segs, seg("No full text imported: the abstract", widget.RichTextStyleSubHeading),
				seg("Import its PDF, JATS XML or text with Import… (named after its PMID), or mark it not retrieved.", widget.RichTextStyleParagraph))
		}
		for _, c := range t.Chunks {
			text := c.Text
			if c.Section != "" {
				text = c.Section + ": " + text
			}
			segs = append(segs, seg(text, widget.RichTextStyleParagraph))
		}
	} else {
		segs = append(segs, seg("Reading…", widget.RichTextStyleParagraph))
		v.s.loadText(id, func() {
			if v.selected == id {
				v.ShowReport(id)
				v.table.Refresh()
			}
		})
	}
	v.detail.Segments = segs
	v.detail.Refresh()
}

// Decide records a full-text decision on a report (as the screener).
func (v *fullTextView) Decide(id string, include bool, reason string) {
	r := v.s.review
	if r == nil || id == "" {
		return
	}
	if err := r.DecideStage(evidence.StageFullText, id, include, reason); err != nil {
		showError(v.s.window, err)
		return
	}
	v.s.changed()
	v.s.screening.decisionsChanged()
}

// Undecide removes the full-text decision on the selected report.
func (v *fullTextView) Undecide() {
	r := v.s.review
	if r == nil || v.selected == "" {
		return
	}
	if err := r.UndecideStage(evidence.StageFullText, v.selected); err != nil {
		showError(v.s.window, err)
		return
	}
	v.s.changed()
	v.s.screening.decisionsChanged()
}

// SetNotRetrieved marks a report not retrieved (note "" clears it).
func (v *fullTextView) SetNotRetrieved(id, note string) {
	r := v.s.review
	if r == nil || id == "" {
		return
	}
	if err := r.SetNotRetrieved(id, note); err != nil {
		showError(v.s.window, err)
		return
	}
	v.s.changed()
	v.s.screening.decisionsChanged()
}

// showExcludeDialog asks why the selected report is excluded, offering the
// full-text reasons.
func (v *fullTextView) showExcludeDialog() {
	id, p := v.selected, v.s.project()
	if p == nil || id == "" {
		return
	}
	reason := widget.NewSelectEntry(p.FullTextReasonsFor())
	reason.SetPlaceHolder("why the report is excluded")
	d := dialog.NewForm("Exclude "+p.Label(id)+" at full text", "Exclude", "Cancel",
		[]*widget.FormItem{widget.NewFormItem("Reason", reason)}, func(ok bool) {
			if ok {
				v.Decide(id, false, reason.Text)
			}
		}, v.s.window)
	d.Resize(fyne.NewSize(560, 200))
	d.Show()
}

// showNotRetrievedDialog asks why the selected report's full text could
// not be obtained (empty clears the mark).
func (v *fullTextView) showNotRetrievedDialog() {
	id, p := v.selected, v.s.project()
	if p == nil || id == "" {
		return
	}
	note := widget.NewEntry()
	note.SetText(p.NotRetrieved[id])
	note.SetPlaceHolder("why: no access, not found, … (empty: retrieved after all)")
	d := dialog.NewForm("Full text of "+p.Label(id), "Save", "Cancel",
		[]*widget.FormItem{widget.NewFormItem("Not retrieved", note)}, func(ok bool) {
			if ok {
				v.SetNotRetrieved(id, note.Text)
			}
		}, v.s.window)
	d.Resize(fyne.NewSize(560, 200))
	d.Show()
}

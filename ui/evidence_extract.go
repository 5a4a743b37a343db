package ui

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/internal/progress"
)

// extractView is the Extract step: the fields to extract, and each
// included study's values beside the chunks they cite, for the user to
// check and correct.
type extractView struct {
	s       *EvidenceScreen
	content fyne.CanvasObject

	fieldsBox    *fyne.Container
	fieldEntries [][2]*widget.Entry // each field's name and description entries
	addFieldBtn  *widget.Button
	extractBtn   *widget.Button
	status       *widget.Label
	studySel     *widget.Select
	valuesBox    *fyne.Container
	valueEntries map[string]*widget.Entry // the shown study's value entries, by field name
	valueFlags   map[string]*widget.Label // and their flags
	studies      []string                 // the included studies offered, in order
}

func newExtractView(s *EvidenceScreen) *extractView {
	v := &extractView{s: s}
	v.fieldsBox = container.NewVBox()
	v.addFieldBtn = widget.NewButtonWithIcon("Add field", theme.ContentAddIcon(), v.AddField)
	v.extractBtn = widget.NewButtonWithIcon("Extract", theme.MediaPlayIcon(), v.ExtractFields)
	v.extractBtn.Importance = widget.HighImportance
	v.status = widget.NewLabel("")
	v.status.Wrapping = fyne.TextWrapWord
	v.studySel = widget.NewSelect(nil, func(string) {
		if !v.s.updating {
			v.showValues()
		}
	})
	v.studySel.PlaceHolder = "(included study)"
	v.valuesBox = container.NewVBox()

	left := container.NewVBox(
		bold("Fields to extract"),
		hint("Describe each field in plain words. The model gives each value with the passages (chunks) it was read from, or NP when the study does not report it."),
		v.fieldsBox,
		container.NewHBox(v.addFieldBtn, v.extractBtn),
		v.status,
	)
	right := container.NewBorder(
		container.NewVBox(bold("Values of the included study"), v.studySel),
		nil, nil, nil, container.NewVScroll(v.valuesBox))
	split := container.NewHSplit(container.NewScroll(left), right)
	split.Offset = 0.38
	v.content = split
	return v
}

// show shows the fields and the included studies with their values.
func (v *extractView) show(p *evidence.Project) {
	v.rebuildFields(p)
	v.showStudies(p)
}

// AddField adds an empty field for the user to describe.
func (v *extractView) AddField() {
	if v.s.edit(func(p *evidence.Project) { p.Fields = append(p.Fields, evidence.FieldSpec{}) }) {
		v.rebuildFields(v.s.project())
		v.showValues()
	}
}

// rebuildFields shows one editable row per field: name, description and a
// delete button.
func (v *extractView) rebuildFields(p *evidence.Project) {
	v.fieldsBox.RemoveAll()
	v.fieldEntries = v.fieldEntries[:0]
	// change edits field i, unless it is gone.
	change := func(i int, f func(fs *evidence.FieldSpec)) bool {
		return v.s.edit(func(p *evidence.Project) {
			if i < len(p.Fields) {
				f(&p.Fields[i])
			}
		})
	}
	for i, f := range p.Fields {
		name := widget.NewEntry()
		name.SetPlaceHolder("name, e.g. median age")
		name.SetText(f.Name)
		name.OnChanged = func(t string) {
			if change(i, func(fs *evidence.FieldSpec) { fs.Name = t }) {
				v.showValues()
			}
		}
		desc := widget.NewMultiLineEntry()
		desc.Wrapping = fyne.TextWrapWord
		desc.SetMinRowsVisible(2)
		desc.SetPlaceHolder("what to extract, e.g. the median age of the patients at enrolment, in years")
		desc.SetText(f.Description)
		desc.OnChanged = func(t string) { change(i, func(fs *evidence.FieldSpec) { fs.Description = t }) }
		del := widget.NewButtonWithIcon("", theme.DeleteIcon(), func() {
			if v.s.edit(func(p *evidence.Project) {
				if i < len(p.Fields) {
					p.Fields = slices.Delete(p.Fields, i, i+1)
				}
			}) {
				v.rebuildFields(v.s.project())
				v.showValues()
			}
		})
		v.fieldEntries = append(v.fieldEntries, [2]*widget.Entry{name, desc})
		v.fieldsBox.Add(container.NewBorder(nil, nil, nil, del, container.NewVBox(name, desc)))
	}
	if len(p.Fields) == 0 {
		v.fieldsBox.Add(hint("No fields yet: add one per piece of information to extract from every included study."))
	}
	v.fieldsBox.Refresh()
}

// showStudies lists the included studies, keeping the one shown.
func (v *extractView) showStudies(p *evidence.Project) {
	ids := p.Included()
	labels := make([]string, len(ids))
	cur := v.studyID()
	sel := -1
	for i, id := range ids {
		labels[i] = p.Label(id) + " — " + id
		if id == cur {
			sel = i
		}
	}
	v.studies = ids
	was := v.s.updating
	v.s.updating = true
	v.studySel.SetOptions(labels)
	switch {
	case sel >= 0:
		v.studySel.SetSelectedIndex(sel)
	case len(ids) > 0:
		v.studySel.SetSelectedIndex(0)
	default:
		v.studySel.ClearSelected()
	}
	v.s.updating = was
	n := 0
	for _, id := range ids {
		if len(p.Extractions[id]) > 0 {
			n++
		}
	}
	if len(ids) == 0 {
		v.status.SetText("Include studies on the Screen step: their fields are extracted here.")
	} else {
		v.status.SetText(fmt.Sprintf("%d included studies, %d with extracted values.", len(ids), n))
	}
	v.showValues()
}

// studyID is the study shown, "" for none.
func (v *extractView) studyID() string {
	if i := v.studySel.SelectedIndex(); i >= 0 && i < len(v.studies) {
		return v.studies[i]
	}
	return ""
}

// showValues shows the selected study's values, each beside the chunks it
// cites, unsupported values flagged; a value is editable.
func (v *extractView) showValues() {
	v.valuesBox.RemoveAll()
	v.valueEntries = map[string]*widget.Entry{}
	v.valueFlags = map[string]*widget.Label{}
	p, id := v.s.project(), v.studyID()
	if p == nil || id == "" {
		v.valuesBox.Refresh()
		return
	}
	t, haveText := v.s.review.CachedText(id)
	if !haveText {
		v.s.loadText(id, func() {
			if v.studyID() == id {
				v.showValues()
			}
		})
	}
	if len(p.Fields) == 0 {
		v.valuesBox.Add(hint("Add the fields to extract on the left."))
	}
	for _, f := range p.Fields {
		if strings.TrimSpace(f.Name) == "" {
			continue
		}
		val, _ := p.FieldValueOf(id, f.Name)
		flag := widget.NewLabel("")
		flag.Wrapping = fyne.TextWrapWord
		showFlag(flag, val)
		value := widget.NewEntry()
		value.SetPlaceHolder("not extracted yet: type the value, or NP when the study does not report it")
		value.SetText(val.Value)
		name := f.Name
		value.OnChanged = func(text string) {
			if !v.s.updating && v.s.review != nil {
				showFlag(flag, v.s.review.EditValue(id, name, text))
				v.s.changed()
			}
		}
		v.valueEntries[name], v.valueFlags[name] = value, flag
		box := container.NewVBox(bold(f.Name), value, flag)
		for _, n := range val.Sources {
			box.Add(chunkLabel(t, haveText, n))
		}
		v.valuesBox.Add(widget.NewCard("", "", box))
	}
	v.valuesBox.Refresh()
}

// chunkLabel shows a cited chunk's text.
func chunkLabel(t evidence.StudyText, haveText bool, n int) fyne.CanvasObject {
	var text string
	c, ok := t.Chunk(n)
	switch {
	case !haveText:
		text = fmt.Sprintf("[%d] reading…", n)
	case !ok:
		text = fmt.Sprintf("[%d] no such chunk in the study's text", n)
	case c.Section != "":
		text = fmt.Sprintf("[%d] %s: %s", n, c.Section, c.Text)
	default:
		text = fmt.Sprintf("[%d] %s", n, c.Text)
	}
	l := widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Italic: true})
	l.Wrapping = fyne.TextWrapWord
	return l
}

// showFlag says whether a value is supported by its chunks, not reported
// or edited.
func showFlag(l *widget.Label, v evidence.FieldValue) {
	var parts []string
	l.Importance = widget.LowImportance
	switch {
	case v.Unsupported:
		parts = append(parts, "⚠ Unsupported: a number of this value is not in the cited text — check it.")
		l.Importance = widget.DangerImportance
	case v.Value == evidence.NotPresent:
		parts = append(parts, "Not reported (NP).")
	case v.Value != "" && len(v.Sources) > 0:
		parts = append(parts, fmt.Sprintf("Read from chunk %s.", intList(v.Sources)))
	}
	if v.Edited {
		parts = append(parts, "Edited by you.")
	}
	l.SetText(strings.Join(parts, " "))
}

// intList formats chunk numbers as "3, 4".
func intList(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// ExtractFields extracts the fields from the included studies (the review
// then reads their texts, to show every value beside its cited chunks).
func (v *extractView) ExtractFields() {
	v.s.runStep("Extracting fields", func(ctx context.Context, r app.Reviewer, report progress.Func) error {
		return r.ExtractFields(ctx, stepProgress(report, "Extracted"))
	}, nil)
}

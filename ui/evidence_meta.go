package ui

import (
	"bytes"
	"fmt"
	"image"
	"image/png"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/app/meta"
)

// metaView is the Meta-analysis step of the outcome chosen (outcomeBar,
// shared with the Results step): the measure and model, and the pooled
// result of the outcome's standardized table with its forest plot.
type metaView struct {
	s       *EvidenceScreen
	content fyne.CanvasObject

	bar        *outcomeBar
	measureSel *widget.Select
	methodSel  *widget.Select
	hk         *widget.Check
	runBtn     *widget.Button
	status     *widget.Label
	forest     *canvas.Image
	summary    *widget.Label
	measures   []meta.Measure
	methods    []meta.Method
	running    bool // an analysis runs
}

func newMetaView(s *EvidenceScreen) *metaView {
	v := &metaView{s: s}
	v.bar = newOutcomeBar(s)
	v.measureSel = widget.NewSelect(nil, func(string) { v.settingsChanged() })
	v.measureSel.PlaceHolder = "(effect measure)"
	v.methodSel = widget.NewSelect(nil, func(string) { v.settingsChanged() })
	v.methodSel.PlaceHolder = "(model)"
	v.hk = widget.NewCheck("Knapp–Hartung adjustment", func(bool) { v.settingsChanged() })
	v.runBtn = widget.NewButtonWithIcon("Run", theme.MediaPlayIcon(), v.RunMeta)
	v.runBtn.Importance = widget.HighImportance
	v.status = widget.NewLabel("")
	v.status.Wrapping = fyne.TextWrapWord
	v.forest = canvas.NewImageFromImage(nil)
	v.forest.FillMode = canvas.ImageFillContain
	v.forest.ScaleMode = canvas.ImageScaleSmooth
	v.forest.SetMinSize(fyne.NewSize(320, 240))
	v.summary = widget.NewLabel("")
	v.summary.Wrapping = fyne.TextWrapWord

	top := container.NewVBox(
		v.bar.content,
		container.NewGridWithColumns(2, v.measureSel, v.methodSel),
		container.NewHBox(v.hk, v.runBtn),
		v.status,
	)
	split := container.NewHSplit(v.forest, container.NewVScroll(v.summary))
	split.Offset = 0.62
	v.content = container.NewBorder(top, nil, nil, nil, split)
	return v
}

// show offers the measures of the outcome's result shape and every
// pooling method of the chosen measure (meta.MethodsFor: all τ²
// estimators, EE, MH and Peto where they apply), with the outcome's
// choices selected.
func (v *metaView) show(p *evidence.Project) {
	o := p.OutcomeAt(v.s.results.current)
	if o == nil {
		return
	}
	v.bar.show(p, v.s.results.current)
	was := v.s.updating
	v.s.updating = true
	defer func() { v.s.updating = was }()
	v.measures = evidence.MeasuresFor(o.Result.Measure)
	labels := make([]string, len(v.measures))
	sel := -1
	cur := meta.Measure(o.Meta.Measure)
	if cur == "" && o.Result.Measure != "" {
		cur = evidence.DefaultMeasure(o.Result.Measure)
	}
	for i, m := range v.measures {
		labels[i] = measureChoice(m)
		if m == cur {
			sel = i
		}
	}
	v.measureSel.SetOptions(labels)
	if sel >= 0 {
		v.measureSel.SetSelectedIndex(sel)
	} else {
		v.measureSel.ClearSelected()
	}
	v.methods = meta.MethodsFor(cur)
	labels = make([]string, len(v.methods))
	sel = 0
	for i, m := range v.methods {
		labels[i] = modelChoice(m)
		if string(m) == o.Meta.Method {
			sel = i
		}
	}
	v.methodSel.SetOptions(labels)
	v.methodSel.SetSelectedIndex(sel)
	v.hk.SetChecked(o.Meta.KnappHartung)
	if m := v.methods[sel]; m == meta.MH || m == meta.PETO { // no Knapp–Hartung adjustment
		v.hk.Disable()
	} else {
		v.hk.Enable()
	}
	if v.running {
		return // the run says where it stands
	}
	if o.Result.Measure == "" {
		v.status.SetText("Choose the shape of the result on the Results step: it decides the effect measures offered.")
	} else {
		v.status.SetText("Run pools the outcome's standardized table of the Results step." + v.armsNote(p))
	}
}

// outcomeChanged shows the outcome chosen: the pooled result shown was
// another outcome's.
func (v *metaView) outcomeChanged(p *evidence.Project) {
	v.forest.Image = nil
	v.forest.Refresh()
	v.summary.SetText("")
	v.show(p)
}

// armsNote names the included studies left out of the outcome's analysis
// until the user chooses the groups to compare, "" for none.
func (v *metaView) armsNote(p *evidence.Project) string {
	ids := p.ArmsNeeded(v.s.results.current)
	if len(ids) == 0 {
		return ""
	}
	labels := p.UniqueLabels(p.Included())
	names := make([]string, len(ids))
	for i, id := range ids {
		names[i] = labels[id]
	}
	return " Not in the analysis until the groups to compare are chosen (Results step, Choose arms…): " + strings.Join(names, ", ") + "."
}

func (v *metaView) settingsChanged() {
	p := v.s.project()
	if v.s.updating || p == nil {
		return
	}
	i := v.s.results.current
	o := p.OutcomeAt(i)
	if o == nil {
		return
	}
	m := o.Meta
	if i := v.measureSel.SelectedIndex(); i >= 0 && i < len(v.measures) {
		m.Measure = string(v.measures[i])
	}
	if i := v.methodSel.SelectedIndex(); i >= 0 && i < len(v.methods) {
		m.Method = string(v.methods[i])
	}
	m.KnappHartung = v.hk.Checked
	if v.s.edit(func(p *evidence.Project) {
		if o := p.OutcomeAt(i); o != nil {
			o.SetMeta(m)
		}
	}) {
		v.show(v.s.project())
	}
}

// RunMeta pools the outcome's standardized table with its settings, off
// the UI goroutine, and shows the forest plot and the summary.
func (v *metaView) RunMeta() {
	r := v.s.review
	if r == nil {
		return
	}
	i := v.s.results.current
	v.runBtn.Disable()
	v.running = true
	v.status.SetText("Analysing…")
	go func() {
		res, err := r.Analyze(i)
		var img image.Image
		if err == nil {
			var buf bytes.Buffer
			if err = meta.WriteForestPlot(&buf, res, meta.PlotOptions{}); err == nil {
				img, err = png.Decode(&buf)
			}
		}
		fyne.Do(func() {
			v.runBtn.Enable()
			v.running = false
			if r != v.s.review || i != v.s.results.current {
				if p := v.s.project(); p != nil {
					v.show(p) // another outcome or review is shown now
				}
				return
			}
			if err != nil {
				v.forest.Image = nil
				v.forest.Refresh()
				v.summary.SetText("")
				v.status.SetText("The meta-analysis could not run: " + meta.ErrorMessage(err))
				return
			}
			v.forest.Image = img
			v.forest.Refresh()
			v.summary.SetText(metaSummaryText(res))
			v.status.SetText(fmt.Sprintf("%s, %s: k = %d.", res.ModelLabel(), res.Measure.Label(), res.K) + v.armsNote(v.s.project()))
		})
	}()
}

// metaSummaryText lists the pooled result's statistics and notes.
func metaSummaryText(res meta.Result) string {
	var lines, notes []string
	for _, st := range res.Statistics() {
		if st.Key == "note" {
			notes = append(notes, "• "+st.Text())
			continue
		}
		lines = append(lines, st.Label+": "+st.Text())
	}
	return strings.Join(append(lines, notes...), "\n")
}

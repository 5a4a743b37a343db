package ui

import (
	"bytes"
	"image"
	"image/png"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app/meta"
)

// trimFillChoices are the trim-and-fill options offered.
var trimFillChoices = []string{"No trim and fill", "Trim and fill (L0)", "Trim and fill (R0)"}

// metaAnalysesForm holds the choices of further analyses: subgroups,
// meta-regression, small-study effects and sensitivity analyses.
type metaAnalysesForm struct {
	subgroup, mods, cumulBy *widget.Entry
	egger, begg             *widget.Check
	trimFill                *widget.Select
	leave1out, cumul, infl  *widget.Check
	contours                *widget.Check
	add                     *widget.Entry
	to                      *widget.Select
	drop00                  *widget.Check
	runBtn                  *widget.Button
}

// zeroCellRules are metafor's "to" choices, in the order offered.
var zeroCellRules = []meta.ZeroCells{meta.Only0, meta.All, meta.If0All, meta.None}

func newMetaAnalysesForm(run func()) *metaAnalysesForm {
	f := &metaAnalysesForm{}
	f.subgroup = widget.NewEntry()
	f.subgroup.SetPlaceHolder("column, e.g. alloc")
	f.mods = widget.NewEntry()
	f.mods.SetPlaceHolder("columns, e.g. ablat, year")
	f.cumulBy = widget.NewEntry()
	f.cumulBy.SetPlaceHolder("data order, or a column such as year")
	f.egger = widget.NewCheck("Egger's test", nil)
	f.begg = widget.NewCheck("Begg's test", nil)
	f.trimFill = widget.NewSelect(trimFillChoices, nil)
	f.trimFill.SetSelectedIndex(0)
	f.leave1out = widget.NewCheck("Leave-one-out", nil)
	f.cumul = widget.NewCheck("Cumulative", nil)
	f.infl = widget.NewCheck("Influence diagnostics", nil)
	f.contours = widget.NewCheck("Contour-enhanced funnel plot", nil)
	f.add = widget.NewEntry()
	f.add.SetPlaceHolder("0.5")
	labels := make([]string, len(zeroCellRules))
	for i, z := range zeroCellRules {
		labels[i] = string(z)
	}
	f.to = widget.NewSelect(labels, nil)
	f.to.SetSelectedIndex(0)
	f.drop00 = widget.NewCheck("Drop double-zero studies (drop00)", nil)
	f.runBtn = widget.NewButtonWithIcon("Run analyses", theme.MediaPlayIcon(), run)
	return f
}

// card lays the form out for the screen's left column.
func (f *metaAnalysesForm) card() fyne.CanvasObject {
	return widget.NewCard("Further analyses", "",
		container.NewVBox(
			widget.NewForm(
				widget.NewFormItem("Subgroups by", f.subgroup),
				widget.NewFormItem("Moderators", f.mods),
				widget.NewFormItem("Cumulative order", f.cumulBy),
				widget.NewFormItem("Zero cells: add", f.add),
				widget.NewFormItem("… to studies", f.to),
			),
			f.drop00,
			container.New(layout.NewGridLayout(2), f.egger, f.begg, f.leave1out, f.cumul, f.infl, f.contours),
			f.trimFill,
			f.runBtn,
		))
}

// plan reads the chosen analyses.
func (f *metaAnalysesForm) plan() meta.Plan {
	p := meta.Plan{
		Subgroup: strings.TrimSpace(f.subgroup.Text),
		Egger:    f.egger.Checked, Begg: f.begg.Checked,
		LeaveOneOut: f.leave1out.Checked, Influence: f.infl.Checked,
		Cumulative: f.cumul.Checked, CumulativeBy: strings.TrimSpace(f.cumulBy.Text),
	}
	switch f.trimFill.SelectedIndex() {
	case 1:
		p.TrimFill = "L0"
	case 2:
		p.TrimFill = "R0"
	}
	if !p.Cumulative {
		p.CumulativeBy = ""
	}
	for _, m := range strings.Split(f.mods.Text, ",") {
		if m = strings.TrimSpace(m); m != "" {
			p.Mods = append(p.Mods, m)
		}
	}
	return p
}

// metaFigures are the pictures and text drawn for a report, off the UI
// goroutine.
type metaFigures struct {
	forestPNG, funnelPNG, bubblePNG []byte
	forest, funnel, bubble, cumul   image.Image
	text                            string
}

// drawMetaFigures draws the forest (by subgroup when subgroups were run),
// funnel, cumulative and (one moderator) bubble plots
// and the analyses' text of rep; a plot that cannot be drawn is left nil.
func drawMetaFigures(rep meta.Report, contours bool) metaFigures {
	var f metaFigures
	draw := func(fn func(*bytes.Buffer) error) ([]byte, image.Image) {
		var buf bytes.Buffer
		if err := fn(&buf); err != nil {
			return nil, nil
		}
		img, err := png.Decode(bytes.NewReader(buf.Bytes()))
		if err != nil {
			return nil, nil
		}
		return buf.Bytes(), img
	}
	f.forestPNG, f.forest = draw(func(b *bytes.Buffer) error {
		if rep.Subgroups != nil {
			return meta.WriteSubgroupForestPlot(b, *rep.Subgroups, rep.Result, meta.PlotOptions{})
		}
		return meta.WriteForestPlot(b, rep.Result, meta.PlotOptions{})
	})
	if len(rep.Cumulative) > 0 {
		_, f.cumul = draw(func(b *bytes.Buffer) error {
			return meta.WriteCumulativeForestPlot(b, rep.Cumulative, rep.Result, meta.PlotOptions{})
		})
	}
	f.funnelPNG, f.funnel = draw(func(b *bytes.Buffer) error {
		return meta.WriteFunnelPlot(b, rep.Result, meta.FunnelOptions{Contours: contours, TrimFill: rep.TrimFill})
	})
	if rep.Regression != nil && len(rep.Regression.Mods) == 1 {
		f.bubblePNG, f.bubble = draw(func(b *bytes.Buffer) error { return meta.WriteBubblePlot(b, *rep.Regression, "png", 0) })
	}
	var sb strings.Builder
	for _, p := range rep.Problems {
		sb.WriteString("Not computed — " + p + "\n")
	}
	if err := rep.WriteText(&sb); err != nil {
		sb.WriteString(err.Error())
	}
	f.text = sb.String()
	return f
}

// zeroCells applies the zero-cell choices to opts: the value added (empty
// keeps metafor's 1/2; see meta.Options.SetAdd), the studies it is added
// to and drop00.
func (f *metaAnalysesForm) zeroCells(opts *meta.Options) error {
	if err := opts.SetAdd(f.add.Text); err != nil {
		return err
	}
	if i := f.to.SelectedIndex(); i >= 0 && opts.To == "" {
		opts.To = zeroCellRules[i]
	}
	opts.Drop00 = f.drop00.Checked
	return nil
}

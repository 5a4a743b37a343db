package meta

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"

	xfont "golang.org/x/image/font"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/clinsight/clinsight/internal/atomicfile"
)

// PlotOptions configures a forest plot. The zero value draws a PNG with
// automatic limits and the default "favours" labels of the measure (see
// DefaultFavours).
type PlotOptions struct {
	// Format is "png" or "svg"; empty means PNG (SaveForestPlot uses the
	// file extension).
	Format string
	// Title is drawn above the plot; empty means "<measure> (k = N)".
	Title string
	// FavoursLeft and FavoursRight label the two sides of the null line,
	// e.g. "Favours vaccine" and "Favours control"; both empty means
	// DefaultFavours of the measure.
	FavoursLeft, FavoursRight string
	// HideFavours leaves out the "favours" labels.
	HideFavours bool
	// XMin and XMax fix the axis limits on the display scale (ratios for OR,
	// RR and GENRatio, proportions for PR, PLO and PFT); both 0 chooses them
	// from the data. Intervals beyond the limits end in an arrow.
	XMin, XMax float64
	// FontSize is the body text size in points; 0 means 11.
	FontSize float64
	// DPI is the PNG resolution; 0 means 120.
	DPI int
	// HidePrediction leaves out the prediction-interval row of
	// random-effects models.
	HidePrediction bool
}

// Validate checks the options: a known format, ordered limits (positive for
// ratio scales is checked when drawing), a sensible font size and DPI.
func (o PlotOptions) Validate() error {
	switch strings.ToLower(strings.TrimPrefix(o.Format, ".")) {
	case "", "png", "svg":
	default:
		return errorf(EINVALID, "unknown plot format %q (use png or svg)", o.Format)
	}
	if (o.XMin != 0 || o.XMax != 0) && !(o.XMin < o.XMax) {
		return errorf(EINVALID, "the axis limits must satisfy XMin < XMax, got %g and %g", o.XMin, o.XMax)
	}
	if o.FontSize < 0 || o.FontSize > 48 || math.IsNaN(o.FontSize) {
		return errorf(EINVALID, "font size %g is outside 0–48 points", o.FontSize)
	}
	if o.DPI < 0 || o.DPI > 1200 {
		return errorf(EINVALID, "DPI %d is outside 0–1200", o.DPI)
	}
	return nil
}

// SaveForestPlot writes the forest plot to path, as PNG or SVG after the
// file extension unless opts.Format is set. The file is replaced
// atomically: on any error (a full disk, a file-size limit) an existing
// plot at path is left as it was and no partial file remains.
func SaveForestPlot(path string, res Result, opts PlotOptions) error {
	if opts.Format == "" {
		opts.Format = strings.TrimPrefix(strings.ToLower(filepath.Ext(path)), ".")
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	// Draw first, so that a plot that cannot be drawn does not touch the
	// folder at all.
	var buf bytes.Buffer
	if err := WriteForestPlot(&buf, res, opts); err != nil {
		return err
	}
	if err := atomicfile.WriteFile(path, buf.Bytes(), 0o666); err != nil {
		return fmt.Errorf("meta: saving the forest plot: %w", err)
	}
	return nil
}

// WriteForestPlot draws the forest plot of res to w: one row per study with
// its label, a square sized by weight on its confidence interval, the
// estimate with its CI and the weight as text; the pooled diamond named by
// model; the prediction interval for random-effects models; a heterogeneity
// line (τ², I², Q and its p-value); a log axis for ratios with the null line
// at 1 (0 for differences); and optional "favours" labels. The height grows
// with the number of studies.
func WriteForestPlot(w io.Writer, res Result, opts PlotOptions) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	if len(res.Studies) == 0 {
		return errorf(EINVALID, "the result has no studies to plot")
	}
	if !isFinite(res.Est) || !isFinite(res.CILB) || !isFinite(res.CIUB) {
		return errorf(ENOTESTIMABLE, "the pooled estimate is not finite, so there is nothing to plot")
	}
	lay, err := newForestLayout(res, opts, nil)
	if err != nil {
		return err
	}
	return lay.render(w)
}

// render writes the laid-out plot as PNG or SVG.
func (lay *forestLayout) render(w io.Writer) error {
	opts := lay.opts
	width, height := lay.size()
	switch strings.ToLower(strings.TrimPrefix(opts.Format, ".")) {
	case "svg":
		c := vgsvg.New(width, height)
		lay.draw(draw.New(c))
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			return fmt.Errorf("meta: rendering forest plot SVG: %w", err)
		}
		// Liberation Sans is metric-compatible with Arial: name fallbacks so
		// viewers without it keep the layout.
		out := bytes.ReplaceAll(buf.Bytes(), []byte(`font-family:Liberation Sans;`),
			[]byte(`font-family:'Liberation Sans',Arial,Helvetica,sans-serif;`))
		if _, err := w.Write(out); err != nil {
			return fmt.Errorf("meta: writing forest plot SVG: %w", err)
		}
	default:
		dpi := opts.DPI
		if dpi == 0 {
			dpi = 120
		}
		c := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
		lay.draw(draw.New(c))
		if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(w); err != nil {
			return fmt.Errorf("meta: writing forest plot PNG: %w", err)
		}
	}
	return nil
}

type rowKind int

const (
	rowStudy rowKind = iota
	rowBlank
	rowPooled
	rowPI
	rowHeader // a bold label only (a subgroup's name)
)

// forestRow is one line of the plot, from the top.
type forestRow struct {
	kind              rowKind
	label, est, wtext string
	y, lo, hi         float64 // analysis scale
	weight            float64 // percent
	ok                bool
}

// forestLayout holds everything measured before drawing.
type forestLayout struct {
	res                Result
	opts               PlotOptions
	rows               []forestRow
	body, bold, small  text.Style
	titleSty, axisSty  text.Style
	title, estHead     string
	hetLines           []string
	xmin, xmax         float64 // analysis scale
	rowH, pad          vg.Length
	labelW, estW, wtW  vg.Length
	panelW             vg.Length
	maxWeight          float64
	ticks              []plot.Tick
	axisLabel          string
	hetH, favH, titleH vg.Length
	headerH, axisH     vg.Length
	ratio              bool
	decimals           int
}

// rgb is an opaque colour written as a constant 0xRRGGBB.
type rgb uint32

// RGBA implements color.Color.
func (c rgb) RGBA() (r, g, b, a uint32) {
	return uint32(c>>16&0xff) * 0x101, uint32(c>>8&0xff) * 0x101, uint32(c&0xff) * 0x101, 0xffff
}

const (
	colInk     rgb = 0x222222
	colSquare  rgb = 0x1f4e79
	colDiamond rgb = 0xa51c30
	colGrid    rgb = 0x888888
	colMuted   rgb = 0x555555
)

func newForestLayout(res Result, opts PlotOptions, build func(*forestLayout)) (*forestLayout, error) {
	size := opts.FontSize
	if size == 0 {
		size = 11
	}
	fs := vg.Length(size)
	sans := font.Font{Typeface: "Liberation", Variant: "Sans"}
	boldFont := sans
	boldFont.Weight = xfont.WeightBold
	sty := func(f font.Font, sz vg.Length, c color.Color) text.Style {
		return text.Style{Color: c, Font: font.From(f, sz), Handler: plot.DefaultTextHandler, YAlign: draw.YCenter}
	}
	l := &forestLayout{
		res: res, opts: opts, ratio: res.IsRatio(),
		body:     sty(sans, fs, colInk),
		bold:     sty(boldFont, fs, colInk),
		small:    sty(sans, fs*0.9, colMuted),
		titleSty: sty(boldFont, fs*1.2, colInk),
		axisSty:  sty(sans, fs*0.95, colInk),
		rowH:     fs * 1.75,
		pad:      fs * 1.2,
		panelW:   4.2 * vg.Inch,
	}
	if opts.HideFavours {
		l.opts.FavoursLeft, l.opts.FavoursRight = "", ""
	} else if opts.FavoursLeft == "" && opts.FavoursRight == "" {
		l.opts.FavoursLeft, l.opts.FavoursRight = DefaultFavours(res.Measure)
	}
	l.title = opts.Title
	if l.title == "" {
		l.title = fmt.Sprintf("%s \u2014 %s, k = %d", res.Measure.Label(), res.ModelLabel(), res.K)
	}
	l.estHead = fmt.Sprintf("%s [%s%% CI]", res.Measure.Label(), trimFloat(100*res.Level))
	if err := l.chooseLimits(); err != nil {
		return nil, err
	}
	l.decimals = l.chooseDecimals()
	l.buildHeterogeneity()
	if build != nil {
		build(l) // rows (and heterogeneity lines) of a grouped or cumulative plot
	} else {
		l.buildRows()
	}
	l.measure()
	return l, nil
}

// chooseLimits sets the axis range on the analysis scale: from the user, or
// covering the estimates, pooled CI, prediction interval and null value,
// widened to the study CIs but not beyond the core span on each side.
func (l *forestLayout) chooseLimits() error {
	res := l.res
	if l.opts.XMin != 0 || l.opts.XMax != 0 {
		lo, hi := l.opts.XMin, l.opts.XMax
		if l.ratio {
			if lo <= 0 {
				return errorf(EINVALID, "axis limits of a ratio must be above 0, got %g", lo)
			}
			lo, hi = math.Log(lo), math.Log(hi)
		}
		if res.Measure.IsProportion() {
			lo, hi = forwardProportion(res.Measure, lo, res.HarmonicN), forwardProportion(res.Measure, hi, res.HarmonicN)
			if !isFinite(lo) || !isFinite(hi) {
				return errorf(EINVALID, "axis limits of a proportion must lie between 0 and 1 (strictly for the logit), got %g and %g", l.opts.XMin, l.opts.XMax)
			}
		}
		l.xmin, l.xmax = lo, hi
	} else {
		coreLo, coreHi := math.Min(0, res.CILB), math.Max(0, res.CIUB)
		if res.Measure.IsProportion() { // no null value
			coreLo, coreHi = res.CILB, res.CIUB
		}
		widen := func(lo, hi *float64, v float64) {
			if isFinite(v) {
				*lo, *hi = math.Min(*lo, v), math.Max(*hi, v)
			}
		}
		if res.IsRandom() && !l.opts.HidePrediction {
			widen(&coreLo, &coreHi, res.PILB)
			widen(&coreLo, &coreHi, res.PIUB)
		}
		for _, s := range res.Studies {
			if s.Estimable {
				widen(&coreLo, &coreHi, s.YI)
			}
		}
		span := coreHi - coreLo
		if span <= 0 {
			span = 1
		}
		lo, hi := coreLo, coreHi
		for _, s := range res.Studies {
			if s.Estimable {
				widen(&lo, &hi, s.CILB)
				widen(&lo, &hi, s.CIUB)
			}
		}
		lo = math.Max(lo, coreLo-span)
		hi = math.Min(hi, coreHi+span)
		pad := 0.03 * (hi - lo)
		l.xmin, l.xmax = lo-pad, hi+pad
	}
	if l.ratio {
		l.ticks = ratioTicks(l.xmin, l.xmax)
		l.axisLabel = res.Measure.Label() + " (log scale)"
	} else if res.Measure == PLO || res.Measure == PFT {
		l.ticks = proportionTicks(res.Measure, res.HarmonicN, l.xmin, l.xmax)
		l.axisLabel = "Proportion (" + proportionScale(res.Measure) + " scale)"
	} else {
		l.ticks = nil
		for _, v := range linearTicks(l.xmin, l.xmax) {
			l.ticks = append(l.ticks, plot.Tick{Value: v, Label: trimFloat(v)})
		}
		l.axisLabel = res.Measure.Label()
	}
	return nil
}

// chooseDecimals picks the number of decimals for the estimate column from
// the width of the pooled confidence interval on the display scale.
func (l *forestLayout) chooseDecimals() int {
	w := math.Abs(l.res.Back(l.res.CIUB) - l.res.Back(l.res.CILB))
	switch {
	case !(w > 0) || w >= 0.1:
		return 2
	case w >= 0.01:
		return 3
	case w >= 0.001:
		return 4
	}
	return 5
}

func (l *forestLayout) fmtCI(y, lo, hi float64) string {
	b := l.res.Back
	return fmt.Sprintf("%s [%s, %s]", l.fmtNum(b(y)), l.fmtNum(b(lo)), l.fmtNum(b(hi)))
}

func (l *forestLayout) fmtNum(v float64) string {
	s := strconv.FormatFloat(v, 'f', l.decimals, 64)
	if strings.Trim(s, "-0.") == "" { // "-0.00"
		s = strings.TrimPrefix(s, "-")
	}
	return strings.Replace(s, "-", "\u2212", 1)
}

func (l *forestLayout) buildRows() {
	res := l.res
	for _, s := range res.Studies {
		r := forestRow{kind: rowStudy, label: LabelWithYear(s.Label, s.Year), ok: s.Estimable, y: s.YI, lo: s.CILB, hi: s.CIUB, weight: s.Weight}
		if s.Estimable {
			r.est = l.fmtCI(s.YI, s.CILB, s.CIUB)
		} else {
			r.est = "not estimable"
		}
		r.wtext = fmt.Sprintf("%.1f%%", s.Weight)
		if s.Weight > l.maxWeight {
			l.maxWeight = s.Weight
		}
		l.rows = append(l.rows, r)
	}
	l.rows = append(l.rows, forestRow{kind: rowBlank})
	l.rows = append(l.rows, forestRow{
		kind: rowPooled, label: pooledLabel(res), ok: true, y: res.Est, lo: res.CILB, hi: res.CIUB,
		est: l.fmtCI(res.Est, res.CILB, res.CIUB), wtext: "100%",
	})
	if res.IsRandom() && !l.opts.HidePrediction && isFinite(res.PILB) && res.K > 1 {
		l.rows = append(l.rows, forestRow{
			kind: rowPI, label: "Prediction interval", ok: true, y: res.Est, lo: res.PILB, hi: res.PIUB,
			est: fmt.Sprintf("[%s, %s]", l.fmtNum(res.Back(res.PILB)), l.fmtNum(res.Back(res.PIUB))),
		})
	}
}

func (l *forestLayout) buildHeterogeneity() {
	res := l.res
	var het string
	switch {
	case res.K < 2 || res.QEdf == 0:
		het = "Heterogeneity: not applicable (one study)"
	case res.IsRandom():
		het = fmt.Sprintf("Heterogeneity: \u03c4\u00b2 = %s, I\u00b2 = %.1f%%, Q = %.2f (df = %d), p %s",
			sigFig(res.Tau2), res.I2, res.QE, res.QEdf, fmtP(res.QEp))
	default:
		het = fmt.Sprintf("Heterogeneity: I\u00b2 = %.1f%%, Q = %.2f (df = %d), p %s", res.I2, res.QE, res.QEdf, fmtP(res.QEp))
	}
	stat := "z"
	if res.DF > 0 {
		stat = fmt.Sprintf("t(%d)", res.DF)
	}
	test := fmt.Sprintf("Test for overall effect: %s = %s, p %s", stat, minus(fmt.Sprintf("%.2f", res.Stat)), fmtP(res.Pval))
	l.hetLines = []string{het, test}
}

// measure computes column widths and the heights of each band.
func (l *forestLayout) measure() {
	const maxLabelW = 3.2 * vg.Inch
	l.labelW = l.bold.Width("Study")
	for i := range l.rows {
		r := &l.rows[i]
		st := l.body
		if r.kind != rowStudy {
			st = l.bold
		}
		for r.kind == rowStudy && st.Width(r.label) > maxLabelW && len([]rune(r.label)) > 4 {
			rs := []rune(strings.TrimSuffix(r.label, "…"))
			r.label = string(rs[:len(rs)-2]) + "…"
		}
		l.labelW = max(l.labelW, st.Width(r.label))
		l.estW = max(l.estW, st.Width(r.est))
		l.wtW = max(l.wtW, st.Width(r.wtext))
	}
	l.estW = max(l.estW, l.bold.Width(l.estHead))
	l.wtW = max(l.wtW, l.bold.Width("Weight"))
	l.titleH = l.titleSty.Height(l.title) * 1.6
	l.headerH = l.rowH * 1.2
	l.hetH = vg.Length(len(l.hetLines)) * l.small.Height("Hg") * 1.35
	// x axis: tick length, tick labels, axis label, spacing.
	l.axisH = 4 + l.axisSty.Height("0")*1.4 + l.axisSty.Height(l.axisLabel)*1.6
	if l.opts.FavoursLeft != "" || l.opts.FavoursRight != "" {
		l.favH = l.small.Height("Hg") * 1.6
	}
	// Keep the favours labels inside the panel.
	favW := max(l.small.Width("\u2190 "+l.opts.FavoursLeft), l.small.Width(l.opts.FavoursRight+" \u2192"))
	l.panelW = max(l.panelW, 2*favW+l.pad)
}

func (l *forestLayout) size() (w, h vg.Length) {
	w = l.pad + l.labelW + l.pad + l.panelW + l.pad + l.estW + l.pad + l.wtW + l.pad
	h = l.pad/2 + l.titleH + l.headerH + vg.Length(len(l.rows))*l.rowH + l.axisH + l.favH + l.pad/2 + l.hetH + l.pad/2
	return w, h
}

func (l *forestLayout) draw(c draw.Canvas) {
	c.SetColor(color.White)
	c.Fill(c.Rectangle.Path())

	xLabel := c.Min.X + l.pad
	xPanel := xLabel + l.labelW + l.pad
	xEst := xPanel + l.panelW + l.pad
	xWt := xEst + l.estW + l.pad

	top := c.Max.Y - l.pad/2
	// Title.
	ts := l.titleSty
	ts.YAlign = draw.YTop
	c.FillText(ts, vg.Point{X: xLabel, Y: top}, l.title)
	top -= l.titleH

	// Column headers and rule.
	hy := top - l.headerH/2
	c.FillText(l.bold, vg.Point{X: xLabel, Y: hy}, "Study")
	hs := l.bold
	hs.XAlign = draw.XRight
	c.FillText(hs, vg.Point{X: xEst + l.estW, Y: hy}, l.estHead)
	c.FillText(hs, vg.Point{X: xWt + l.wtW, Y: hy}, "Weight")
	top -= l.headerH
	rule := draw.LineStyle{Color: colGrid, Width: vg.Points(0.6)}
	c.StrokeLine2(rule, xLabel, top, xWt+l.wtW, top)

	// The panel: rows plus the x axis, drawn by gonum/plot.
	rowsH := vg.Length(len(l.rows)) * l.rowH
	panelBottom := top - rowsH - l.axisH
	p := l.newPlot()
	pc := draw.Crop(c, xPanel-c.Min.X, -(c.Max.X - xPanel - l.panelW), panelBottom-c.Min.Y, -(c.Max.Y - top))
	p.Draw(pc)
	dc := p.DataCanvas(pc)
	trX, trY := p.Transforms(&dc)

	// Text columns aligned with the panel rows.
	for i, r := range l.rows {
		y := trY(-float64(i))
		st := l.body
		if r.kind == rowPooled || r.kind == rowHeader {
			st = l.bold
		}
		if r.kind == rowPI {
			st = l.small
		}
		if r.kind == rowBlank {
			continue
		}
		c.FillText(st, vg.Point{X: xLabel, Y: y}, r.label)
		rs := st
		rs.XAlign = draw.XRight
		if !r.ok {
			rs.Color = colMuted
		}
		c.FillText(rs, vg.Point{X: xEst + l.estW, Y: y}, r.est)
		if r.wtext != "" {
			c.FillText(rs, vg.Point{X: xWt + l.wtW, Y: y}, r.wtext)
		}
	}

	// Favours labels under the axis, either side of the null line.
	y := panelBottom - l.favH/2
	if l.favH > 0 {
		gap := vg.Length(6)
		x0 := trX(0)
		if !(l.xmin <= 0 && 0 <= l.xmax) {
			x0 = xPanel + l.panelW/2 // the null value is off the axis
		}
		// Keep both labels on the canvas, however near an edge the null is.
		leftW := l.small.Width("\u2190 " + l.opts.FavoursLeft)
		rightW := l.small.Width(l.opts.FavoursRight + " \u2192")
		x0 = max(x0, xLabel+leftW+gap)
		x0 = min(x0, xWt+l.wtW-rightW-gap)
		if l.opts.FavoursLeft != "" {
			fs := l.small
			fs.XAlign = draw.XRight
			c.FillText(fs, vg.Point{X: x0 - gap, Y: y}, "\u2190 "+l.opts.FavoursLeft)
		}
		if l.opts.FavoursRight != "" {
			c.FillText(l.small, vg.Point{X: x0 + gap, Y: y}, l.opts.FavoursRight+" \u2192")
		}
	}
	// Heterogeneity and overall test, left-aligned under everything.
	y = panelBottom - l.favH - l.pad/2
	lineH := l.small.Height("Hg") * 1.35
	for _, s := range l.hetLines {
		y -= lineH / 2
		c.FillText(l.small, vg.Point{X: xLabel, Y: y}, s)
		y -= lineH / 2
	}
}

// newPlot builds the gonum plot of the panel: x axis with ticks and label,
// no y axis, the forest marks as a plotter.
func (l *forestLayout) newPlot() *plot.Plot {
	p := plot.New()
	p.BackgroundColor = nil
	p.HideY()
	p.Y.Padding = 0
	p.X.Padding = 0
	p.X.Min, p.X.Max = l.xmin, l.xmax
	p.Y.Min, p.Y.Max = -float64(len(l.rows))+0.5, 0.5
	p.X.Tick.Marker = plot.ConstantTicks(l.ticks)
	p.X.Tick.Label = l.axisSty
	p.X.Tick.Label.XAlign = draw.XCenter
	p.X.Tick.Label.YAlign = draw.YTop
	p.X.Label.Text = l.axisLabel
	p.X.Label.TextStyle = l.axisSty
	p.X.Label.TextStyle.XAlign = draw.XCenter
	p.X.Label.TextStyle.YAlign = draw.YBottom
	p.X.Label.Padding = 2
	p.X.LineStyle.Color = colInk
	p.X.Tick.LineStyle.Color = colInk
	p.Add(forestMarks{l})
	return p
}

// forestMarks draws the null line, study squares and CIs, the diamond and
// the prediction interval in data coordinates.
type forestMarks struct{ l *forestLayout }

// Plot implements plot.Plotter.
func (m forestMarks) Plot(c draw.Canvas, p *plot.Plot) {
	l := m.l
	trX, trY := p.Transforms(&c)
	inX := func(v float64) bool { return v >= l.xmin && v <= l.xmax }
	clampX := func(v float64) vg.Length { return trX(math.Max(l.xmin, math.Min(l.xmax, v))) }

	// Null line from the first study to the pooled rows.
	if inX(0) && !l.res.Measure.IsProportion() {
		null := draw.LineStyle{Color: colGrid, Width: vg.Points(0.8), Dashes: []vg.Length{vg.Points(3), vg.Points(3)}}
		c.StrokeLine2(null, trX(0), c.Max.Y, trX(0), c.Min.Y)
	}
	ciSty := draw.LineStyle{Color: colInk, Width: vg.Points(1)}
	maxSide := l.rowH * 0.8
	for i, r := range l.rows {
		if !r.ok || r.kind == rowBlank {
			continue
		}
		y := trY(-float64(i))
		switch r.kind {
		case rowStudy:
			x0, x1 := clampX(r.lo), clampX(r.hi)
			c.StrokeLine2(ciSty, x0, y, x1, y)
			arrowHead := l.rowH * 0.18
			if r.lo < l.xmin {
				c.FillPolygon(colInk, []vg.Point{{X: x0, Y: y}, {X: x0 + 2*arrowHead, Y: y + arrowHead}, {X: x0 + 2*arrowHead, Y: y - arrowHead}})
			}
			if r.hi > l.xmax {
				c.FillPolygon(colInk, []vg.Point{{X: x1, Y: y}, {X: x1 - 2*arrowHead, Y: y + arrowHead}, {X: x1 - 2*arrowHead, Y: y - arrowHead}})
			}
			if inX(r.y) && l.maxWeight > 0 {
				side := maxSide * vg.Length(math.Sqrt(r.weight/l.maxWeight))
				side = max(side, vg.Points(3.5))
				x := trX(r.y)
				c.FillPolygon(colSquare, []vg.Point{
					{X: x - side/2, Y: y - side/2}, {X: x + side/2, Y: y - side/2},
					{X: x + side/2, Y: y + side/2}, {X: x - side/2, Y: y + side/2},
				})
			}
		case rowPooled:
			h := l.rowH * 0.38
			pts := []vg.Point{{X: clampX(r.lo), Y: y}, {X: clampX(r.y), Y: y + h}, {X: clampX(r.hi), Y: y}, {X: clampX(r.y), Y: y - h}}
			c.FillPolygon(colDiamond, pts)
		case rowPI:
			pi := draw.LineStyle{Color: colDiamond, Width: vg.Points(1.6)}
			x0, x1 := clampX(r.lo), clampX(r.hi)
			c.StrokeLine2(pi, x0, y, x1, y)
			tick := l.rowH * 0.2
			c.StrokeLine2(pi, x0, y-tick, x0, y+tick)
			c.StrokeLine2(pi, x1, y-tick, x1, y+tick)
		}
	}
}

// DefaultFavours returns the "favours" labels drawn either side of the null
// line when none are given: for effect measures comparing two groups (OR,
// RR, RD, MD, SMD, generic), an effect below the null favours the
// treatment (fewer harmful events, lower scores), as RevMan labels it; a
// proportion has no comparison and so no labels. Reviews whose outcome is
// beneficial give their own labels.
func DefaultFavours(m Measure) (left, right string) {
	if m.IsProportion() {
		return "", ""
	}
	return "Favours treatment", "Favours control"
}

// pooledLabel is the short model name of the diamond row.
func pooledLabel(res Result) string {
	var s string
	switch res.Method {
	case EE:
		s = "Common effect (IV"
	case MH:
		s = "Common effect (MH"
	case DL:
		s = "Random effects (DL"
	case REML:
		s = "Random effects (REML"
	default:
		s = "Pooled (" + string(res.Method)
	}
	if res.Test == TestKnHa {
		s += ", HK"
	}
	return s + ")"
}

// trimFloat formats v with up to 4 significant decimals and no trailing
// zeros (0.25, 1, 2.5).
func trimFloat(v float64) string {
	s := strconv.FormatFloat(v, 'f', 4, 64)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" {
		s = "0"
	}
	return strings.Replace(s, "-", "\u2212", 1)
}

// minus replaces a leading hyphen with a typographic minus sign.
func minus(s string) string { return strings.Replace(s, "-", "\u2212", 1) }

// sigFig formats v with 4 significant digits.
func sigFig(v float64) string {
	if v == 0 {
		return "0"
	}
	return strconv.FormatFloat(v, 'g', 4, 64)
}

// fmtP formats a p-value with its relation: "= 0.042", "< 0.001".
func fmtP(p float64) string {
	switch {
	case math.IsNaN(p):
		return "= n/a"
	case p < 0.001:
		return "< 0.001"
	case p < 0.01:
		return fmt.Sprintf("= %.3f", p)
	}
	return fmt.Sprintf("= %.2f", p)
}

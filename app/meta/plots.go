package meta

import (
	"bytes"
	"fmt"
	"image/color"
	"io"
	"math"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"
)

// FunnelOptions configures a funnel plot.
type FunnelOptions struct {
	// Format is "png" (default) or "svg".
	Format string
	// Contours shades the regions where a study would be significant at
	// p < 0.10, 0.05 and 0.01 around 0 (contour-enhanced funnel plot, as
	// metafor's funnel(refline = 0, level = c(90, 95, 99))).
	Contours bool
	// TrimFill adds the filled studies (open points) and centres the
	// pseudo-confidence region on the adjusted estimate.
	TrimFill *TrimFill
	// DPI is the PNG resolution; 0 means 120.
	DPI int
}

var (
	colStudy  = color.RGBA{R: 0x1f, G: 0x3a, B: 0x5f, A: 0xff}
	colFilled = color.RGBA{R: 0xc0, G: 0x39, B: 0x2b, A: 0xff}
	colGuide  = color.RGBA{R: 0x55, G: 0x55, B: 0x55, A: 0xff}
)

// axisName is the analysis-scale name of the measure, e.g. "log Risk Ratio".
func axisName(m Measure) string {
	if m.IsRatio() {
		return "log " + m.Label()
	}
	return m.Label()
}

// WriteFunnelPlot draws the funnel plot of res as metafor's funnel: each
// study's effect (analysis scale) against its standard error (0 at the top),
// the pooled estimate as a vertical line and its pseudo 95% confidence
// region; optionally contour-enhanced and with trim-and-fill studies.
func WriteFunnelPlot(w io.Writer, res Result, opts FunnelOptions) error {
	y, v, _, _ := modelInputs(res)
	if len(y) == 0 {
		return errorf(EINVALID, "the result has no studies to plot")
	}
	center := res.Est
	var fy, fv []float64
	if tf := opts.TrimFill; tf != nil && tf.K0 > 0 {
		center = tf.Result.Est
		for _, s := range tf.Filled {
			fy, fv = append(fy, s.YI), append(fv, s.VI)
		}
	}
	maxSE := 0.0
	for _, vi := range append(append([]float64(nil), v...), fv...) {
		maxSE = math.Max(maxSE, math.Sqrt(vi))
	}
	maxSE *= 1.05
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Funnel plot (k = %d)", len(y))
	p.X.Label.Text = axisName(res.Measure)
	p.Y.Label.Text = "Standard error"
	p.Y.Scale = plot.InvertedScale{Normalizer: plot.LinearScale{}}
	p.Y.Min, p.Y.Max = 0, maxSE
	z := distuv.UnitNormal.Quantile(0.975)
	half := z * maxSE
	for _, yi := range append(append([]float64(nil), y...), fy...) {
		half = math.Max(half, math.Abs(yi-center))
	}
	xMin, xMax := center-1.1*half, center+1.1*half
	if opts.Contours {
		// The shaded regions are centred on 0: show it.
		xMin, xMax = math.Min(xMin, -0.1*half), math.Max(xMax, 0.1*half)
	}
	if opts.Contours {
		for _, c := range []struct {
			level float64
			grey  uint8
		}{{0.90, 0xf2}, {0.95, 0xdc}, {0.99, 0xc4}} {
			zc := distuv.UnitNormal.Quantile(1 - (1-c.level)/2)
			for _, side := range []float64{-1, 1} {
				poly, err := plotter.NewPolygon(plotter.XYs{{X: 0, Y: 0}, {X: side * zc * maxSE, Y: maxSE}, {X: side * 10 * zc * maxSE, Y: maxSE}, {X: side * 10 * zc * maxSE, Y: 0}})
				if err != nil {
					return err
				}
				poly.Color = color.Gray{Y: c.grey}
				poly.LineStyle.Width = 0
				p.Add(poly)
			}
		}
	}
	lines := []plotter.XYs{
		{{X: center, Y: 0}, {X: center - z*maxSE, Y: maxSE}},
		{{X: center, Y: 0}, {X: center + z*maxSE, Y: maxSE}},
		{{X: center, Y: 0}, {X: center, Y: maxSE}},
	}
	for i, l := range lines {
		ln, err := plotter.NewLine(l)
		if err != nil {
			return err
		}
		ln.Color = colGuide
		if i < 2 {
			ln.Dashes = []vg.Length{vg.Points(4), vg.Points(3)}
		}
		p.Add(ln)
	}
	// The legend goes under the plot, where it cannot hide a study.
	leg := plot.NewLegend()
	leg.Left = true
	add := func(ys, vs []float64, col color.Color, filled bool, legend string) error {
		if len(ys) == 0 {
			return nil
		}
		pts := make(plotter.XYs, len(ys))
		for i := range ys {
			pts[i] = plotter.XY{X: ys[i], Y: math.Sqrt(vs[i])}
		}
		sc, err := plotter.NewScatter(pts)
		if err != nil {
			return err
		}
		sc.GlyphStyle.Color = col
		sc.GlyphStyle.Radius = vg.Points(3.5)
		sc.GlyphStyle.Shape = draw.CircleGlyph{}
		if !filled {
			sc.GlyphStyle.Shape = draw.RingGlyph{}
		}
		p.Add(sc)
		leg.Add(legend, sc)
		return nil
	}
	if err := add(y, v, colStudy, true, "Studies"); err != nil {
		return err
	}
	if err := add(fy, fv, colFilled, false, "Filled by trim and fill"); err != nil {
		return err
	}
	// After Add, which widens the axes to every plotter's data range.
	p.X.Min, p.X.Max = xMin, xMax
	p.Y.Min, p.Y.Max = 0, maxSE
	p.X.Tick.Marker = plot.ConstantTicks(labelledTicks(xMin, xMax))
	return renderCanvas(w, 16*vg.Centimeter, 13*vg.Centimeter, opts.Format, opts.DPI, func(c draw.Canvas) {
		r := leg.Rectangle(c)
		pad := vg.Points(6)
		p.Draw(draw.Crop(c, 0, 0, r.Max.Y-r.Min.Y+2*pad, 0))
		leg.Draw(draw.Crop(c, pad, 0, pad, 0))
	})
}

// labelledTicks returns 4 to 7 labelled major ticks across [lo, hi] with
// unlabelled minor ticks halfway between them.
func labelledTicks(lo, hi float64) []plot.Tick {
	major := linearTicks(lo, hi)
	var ticks []plot.Tick
	for i, v := range major {
		ticks = append(ticks, plot.Tick{Value: v, Label: trimFloat(v)})
		if i > 0 {
			ticks = append(ticks, plot.Tick{Value: (major[i-1] + v) / 2})
		}
	}
	return ticks
}

// WriteBubblePlot draws a meta-regression on one continuous moderator as
// metafor's regplot: each study's effect against the moderator, point area
// proportional to its weight, with the fitted line.
func WriteBubblePlot(w io.Writer, reg Regression, format string, dpi int) error {
	if len(reg.Coefficients) != 2 || len(reg.Studies) == 0 || len(reg.Studies[0].X) != 1 {
		return errorf(EINVALID, "a bubble plot needs a meta-regression on exactly one continuous moderator")
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("Meta-regression on %s (k = %d)", reg.Mods[0], reg.K)
	p.X.Label.Text = reg.Mods[0]
	p.Y.Label.Text = axisName(reg.Measure)
	tau2 := float64(reg.Tau2)
	if !isFinite(tau2) {
		tau2 = 0
	}
	maxW, lo, hi := 0.0, math.Inf(1), math.Inf(-1)
	for _, s := range reg.Studies {
		maxW = math.Max(maxW, 1/(s.VI+tau2))
		lo, hi = math.Min(lo, s.X[0]), math.Max(hi, s.X[0])
	}
	for _, s := range reg.Studies {
		sc, err := plotter.NewScatter(plotter.XYs{{X: s.X[0], Y: s.YI}})
		if err != nil {
			return err
		}
		sc.GlyphStyle.Shape = draw.RingGlyph{}
		sc.GlyphStyle.Color = colStudy
		sc.GlyphStyle.Radius = vg.Points(2 + 10*math.Sqrt((1/(s.VI+tau2))/maxW))
		p.Add(sc)
	}
	b0, b1 := float64(reg.Coefficients[0].Est), float64(reg.Coefficients[1].Est)
	ln, err := plotter.NewLine(plotter.XYs{{X: lo, Y: b0 + b1*lo}, {X: hi, Y: b0 + b1*hi}})
	if err != nil {
		return err
	}
	ln.Color = colFilled
	ln.Width = vg.Points(1.5)
	p.Add(ln)
	// Room around the data so that no bubble is cut at an edge, and
	// labelled ticks on both axes.
	ylo, yhi := math.Inf(1), math.Inf(-1)
	for _, s := range reg.Studies {
		ylo, yhi = math.Min(ylo, s.YI), math.Max(yhi, s.YI)
	}
	widen := func(lo, hi float64) (float64, float64) {
		m := 0.08 * (hi - lo)
		if !(m > 0) {
			m = 0.5
		}
		return lo - m, hi + m
	}
	p.X.Min, p.X.Max = widen(lo, hi)
	p.Y.Min, p.Y.Max = widen(ylo, yhi)
	p.X.Tick.Marker = plot.ConstantTicks(labelledTicks(p.X.Min, p.X.Max))
	p.Y.Tick.Marker = plot.ConstantTicks(labelledTicks(p.Y.Min, p.Y.Max))
	return renderPlot(w, p, 16*vg.Centimeter, 12*vg.Centimeter, format, dpi)
}

// renderPlot writes p as PNG or SVG.
func renderPlot(w io.Writer, p *plot.Plot, width, height vg.Length, format string, dpi int) error {
	return renderCanvas(w, width, height, format, dpi, p.Draw)
}

// renderCanvas writes what paint draws on a width × height canvas as PNG
// or SVG.
func renderCanvas(w io.Writer, width, height vg.Length, format string, dpi int, paint func(draw.Canvas)) error {
	switch strings.ToLower(strings.TrimPrefix(format, ".")) {
	case "svg":
		c := vgsvg.New(width, height)
		paint(draw.New(c))
		var buf bytes.Buffer
		if _, err := c.WriteTo(&buf); err != nil {
			return fmt.Errorf("meta: rendering plot SVG: %w", err)
		}
		if _, err := w.Write(buf.Bytes()); err != nil {
			return fmt.Errorf("meta: writing plot SVG: %w", err)
		}
	case "", "png":
		if dpi == 0 {
			dpi = 120
		}
		c := vgimg.NewWith(vgimg.UseWH(width, height), vgimg.UseDPI(dpi), vgimg.UseBackgroundColor(color.White))
		paint(draw.New(c))
		if _, err := (vgimg.PngCanvas{Canvas: c}).WriteTo(w); err != nil {
			return fmt.Errorf("meta: writing plot PNG: %w", err)
		}
	default:
		return errorf(EINVALID, "unknown plot format %q (use png or svg)", format)
	}
	return nil
}

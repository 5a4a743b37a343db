package evidence

import (
	"fmt"
	"image/color"
	"io"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// maxCurvePoints bounds the points of the drawn progress curve, so that a
// redraw after each decision costs the same on any review.
const maxCurvePoints = 400

// WriteScreeningCurve draws the screening's progress (relevant records
// found against records screened, ScreeningCurve) as a small PNG, with a
// dashed line of a constant rate of finding (a curve well above it has
// found the relevant records early). total is the number of candidates.
func WriteScreeningCurve(w io.Writer, found []int, total int) error {
	p := plot.New()
	p.X.Label.Text = "Records screened"
	p.Y.Label.Text = "Relevant found"
	p.X.Min, p.Y.Min = 0, 0
	pts := curvePoints(found, maxCurvePoints)
	xy := make(plotter.XYs, len(pts))
	for i, pt := range pts {
		xy[i] = plotter.XY{X: float64(pt[0]), Y: float64(pt[1])}
	}
	n := len(found)
	p.X.Max = float64(max(n, 10))
	last := 0
	if n > 0 {
		last = found[n-1]
	}
	p.Y.Max = float64(max(last, 1)) * 1.1
	if total > 0 && n > 0 {
		// Random order finds relevant records at the rate of the screened
		// ones: last/n per record.
		rnd, err := plotter.NewLine(plotter.XYs{{X: 0, Y: 0}, {X: float64(n), Y: float64(last)}})
		if err != nil {
			return fmt.Errorf("evidence: drawing the progress curve: %w", err)
		}
		rnd.Color = color.Gray{Y: 0x90}
		rnd.Dashes = []vg.Length{vg.Points(3), vg.Points(3)}
		p.Add(rnd)
	}
	ln, err := plotter.NewLine(xy)
	if err != nil {
		return fmt.Errorf("evidence: drawing the progress curve: %w", err)
	}
	ln.Color = color.RGBA{R: 0x1f, G: 0x6f, B: 0xb4, A: 0xff}
	ln.Width = vg.Points(1.5)
	p.Add(ln)
	wt, err := p.WriterTo(4*vg.Inch, 2.4*vg.Inch, "png")
	if err != nil {
		return fmt.Errorf("evidence: drawing the progress curve: %w", err)
	}
	if _, err := wt.WriteTo(w); err != nil {
		return fmt.Errorf("evidence: drawing the progress curve: %w", err)
	}
	return nil
}

package meta

import (
	"math"

	"gonum.org/v1/plot"
)

// ratioTicks places labelled ticks at readable ratios on the log scale:
// the first of 1-2-5 (0.2, 0.5, 1, 2, 5), powers of 2 (0.25, 0.5, 1, 2, 4)
// and powers of 10 that gives 4 to 8 ticks in [lo, hi] (else 3 to 8), and
// plain linear ticks in ratio units for very narrow ranges.
func ratioTicks(lo, hi float64) []plot.Tick {
	gen := func(next func(i int) float64) []plot.Tick {
		var ticks []plot.Tick
		for i := -40; i <= 40; i++ {
			v := next(i)
			if lv := math.Log(v); lv >= lo && lv <= hi {
				ticks = append(ticks, plot.Tick{Value: lv, Label: trimFloat(v)})
			}
		}
		return ticks
	}
	ladders := [][]plot.Tick{
		gen(func(i int) float64 { // 1-2-5
			e := math.Floor(float64(i) / 3)
			return []float64{1, 2, 5}[i-3*int(e)] * math.Pow(10, e)
		}),
		gen(func(i int) float64 { return math.Pow(2, float64(i)) }),
		gen(func(i int) float64 { return math.Pow(10, float64(i)) }),
	}
	for _, minTicks := range []int{4, 3} {
		for _, t := range ladders {
			if len(t) >= minTicks && len(t) <= 8 {
				return t
			}
		}
	}
	var ticks []plot.Tick
	for _, t := range linearTicks(math.Exp(lo), math.Exp(hi)) {
		if t > 0 {
			ticks = append(ticks, plot.Tick{Value: math.Log(t), Label: trimFloat(t)})
		}
	}
	return ticks
}

// linearTicks returns multiples of a 1, 2, 2.5 or 5 ×10ⁿ step inside
// [lo, hi], at most 7 of them.
func linearTicks(lo, hi float64) []float64 {
	span := hi - lo
	if !(span > 0) || !isFinite(span) {
		return nil
	}
	mag := math.Pow(10, math.Floor(math.Log10(span/5)))
	var out []float64
	for _, m := range []float64{1, 2, 2.5, 5, 10, 20} {
		step := m * mag
		out = out[:0]
		for v := math.Ceil(lo/step) * step; v <= hi+step*1e-9; v += step {
			if math.Abs(v) < step*1e-9 {
				v = 0
			}
			out = append(out, v)
		}
		if len(out) <= 7 {
			return out
		}
	}
	return out
}

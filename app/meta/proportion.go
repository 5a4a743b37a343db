package meta

import (
	"fmt"
	"math"

	"gonum.org/v1/plot"
)

// Single-arm proportions (response rates, toxicity rates) as metafor's
// escalc computes them from events xi and totals ni:
//
//   - PR, the raw proportion: yi = xi/ni, vi = yi(1−yi)/ni (vtype "LS").
//   - PLO, the logit: yi = log(xi/(ni−xi)), vi = 1/xi + 1/(ni−xi), shown
//     back-transformed with the inverse logit (transf.ilogit).
//   - PFT, the Freeman–Tukey double arcsine:
//     yi = ½·(asin √(xi/(ni+1)) + asin √((xi+1)/(ni+1))), vi = 1/(4ni+2),
//     shown back-transformed with Miller's inverse at the harmonic mean of
//     the study sizes (transf.ipft.hm).
//
// PR and PLO add Options.Add (½) to the events and non-events of studies
// with no events or only events (to = "only0"), as escalc does; PFT needs
// no correction, so its default Add is 0 (metafor sets add = 0 for PFT
// unless add is given).

// IsProportion reports whether the measure pools single-arm proportions
// (PR, PLO, PFT).
func (m Measure) IsProportion() bool { return m == PR || m == PLO || m == PFT }

// Transformed reports whether the measure is analysed on a scale other than
// the one it is shown on: the log scale of ratios (OR, RR, GENRatio), the
// logit (PLO) and the double arcsine (PFT).
func (m Measure) Transformed() bool { return m.IsRatio() || m == PLO || m == PFT }

// validateProportion checks a single-arm study: finite counts, events
// between 0 and the total, a total above 0 (escalc's checks).
func (s *Study) validateProportion() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"xi", s.XI}, {"ni", s.NI}} {
		if !isFinite(f.v) {
			return rowError(s, "%s is not a finite number", f.name)
		}
		if f.v < 0 {
			return rowError(s, "%s = %s is negative; counts must be 0 or more", f.name, fmtNum(f.v))
		}
	}
	if s.NI <= 0 {
		return rowError(s, "ni = %s: the group must have at least 1 participant", fmtNum(s.NI))
	}
	if s.XI > s.NI {
		return rowError(s, "xi = %s events is more than the group total ni = %s", fmtNum(s.XI), fmtNum(s.NI))
	}
	return nil
}

// proportionAdd is the value escalc adds to the cells of zero studies for a
// measure: the user's Add when given, else ½ for PR and PLO and 0 for PFT.
func proportionAdd(m Measure, userAdd float64) float64 {
	switch {
	case userAdd != 0:
		return userAdd
	case m == PFT:
		return 0
	}
	return 0.5
}

// hasZeroProportion reports whether a single-arm study has no events or
// only events (escalc's id0 for proportions).
func hasZeroProportion(s *Study) bool { return s.XI == 0 || s.NI-s.XI == 0 }

// proportionEffects computes PR, PLO or PFT per study as metafor's escalc
// does (addyi = addvi = TRUE, vtype = "LS").
func proportionEffects(studies []Study, m Measure, add float64, to ZeroCells) []effect {
	anyZero := false
	for i := range studies {
		if hasZeroProportion(&studies[i]) {
			anyZero = true
		}
	}
	out := make([]effect, len(studies))
	for i := range studies {
		s := &studies[i]
		xi, mi := s.XI, s.NI-s.XI
		corr := false
		switch to {
		case All:
			corr = true
		case Only0:
			corr = hasZeroProportion(s)
		case If0All:
			corr = anyZero
		}
		if corr {
			xi, mi = xi+add, mi+add
		}
		ni := xi + mi
		pri := xi / ni
		var yi, vi float64
		switch m {
		case PR:
			yi, vi = pri, pri*(1-pri)/ni
		case PLO:
			yi, vi = math.Log(pri/(1-pri)), 1/xi+1/mi
		case PFT:
			yi = 0.5 * (math.Asin(math.Sqrt(xi/(ni+1))) + math.Asin(math.Sqrt((xi+1)/(ni+1))))
			vi = 1 / (4*ni + 2)
		}
		out[i] = checkEffect(yi, vi, "proportion not estimable from these counts without a correction for 0 or all events")
	}
	return out
}

// proportionCorrectionNote says which studies received the correction for
// no events or only events.
func proportionCorrectionNote(studies []Study, m Measure, to ZeroCells, add float64) string {
	if add == 0 && to != None {
		return ""
	}
	n := 0
	for i := range studies {
		if hasZeroProportion(&studies[i]) {
			n++
		}
	}
	switch {
	case to == All:
		return fmt.Sprintf("%g added to the events and non-events of every study (to = \"all\").", add)
	case to == If0All && n > 0:
		return fmt.Sprintf("%g added to the events and non-events of every study because %s no events or only events (to = \"if0all\").", add, plural(n, "study has", "studies have"))
	case to == Only0 && n > 0:
		return fmt.Sprintf("%g added to the events and non-events of %s with no events or only events (metafor's default for %s).", add, plural(n, "study", "studies"), m)
	}
	return ""
}

// harmonicN is the harmonic mean of the sizes of the studies with an
// estimable effect, as transf.ipft.hm computes it from the study sizes
// (NaN when there are none).
func harmonicN(studies []Study, eff []effect) float64 {
	var s float64
	n := 0
	for i, e := range eff {
		if e.ok {
			s += 1 / studies[i].NI
			n++
		}
	}
	if n == 0 {
		return math.NaN()
	}
	return float64(n) / s
}

// ILogit is the inverse logit 1/(1+e^−x) (metafor's transf.ilogit).
func ILogit(x float64) float64 {
	if x >= 0 {
		return 1 / (1 + math.Exp(-x))
	}
	e := math.Exp(x)
	return e / (1 + e)
}

// Logit is log(p/(1−p)).
func Logit(p float64) float64 { return math.Log(p / (1 - p)) }

// PFTransform is the Freeman–Tukey double arcsine of a proportion p with
// total n (metafor's transf.pft): with x = p·n,
// ½·(asin √(x/(n+1)) + asin √((x+1)/(n+1))).
func PFTransform(p, n float64) float64 {
	x := p * n
	return 0.5 * (math.Asin(math.Sqrt(x/(n+1))) + math.Asin(math.Sqrt((x+1)/(n+1))))
}

// IPFT is Miller's (1978) inverse of the Freeman–Tukey double arcsine for a
// total n (metafor's transf.ipft):
// ½·(1 − sign(cos 2t)·√(1 − (sin 2t + (sin 2t − 1/sin 2t)/n)²)),
// 0 below PFTransform(0, n), 1 above PFTransform(1, n), NaN where undefined.
func IPFT(t, n float64) float64 {
	if math.IsNaN(t) || math.IsNaN(n) {
		return math.NaN()
	}
	if t > PFTransform(1, n) {
		return 1
	}
	if t < PFTransform(0, n) {
		return 0
	}
	s := math.Sin(2 * t)
	r := 1 - math.Pow(s+(s-1/s)/n, 2)
	z := 0.5 * (1 - sign(math.Cos(2*t))*math.Sqrt(r))
	if math.IsNaN(z) || math.IsInf(z, 0) {
		return math.NaN()
	}
	return z
}

// sign is R's sign(): −1, 0 or 1.
func sign(x float64) float64 {
	switch {
	case x > 0:
		return 1
	case x < 0:
		return -1
	}
	return 0
}

// backProportion transforms a value of a proportion measure's analysis
// scale to a proportion: unchanged for PR, the inverse logit for PLO and
// the inverse double arcsine at the harmonic mean size nhm for PFT.
func backProportion(m Measure, x, nhm float64) float64 {
	switch m {
	case PLO:
		return ILogit(x)
	case PFT:
		return IPFT(x, nhm)
	}
	return x
}

// forwardProportion maps a proportion to a measure's analysis scale, the
// inverse of backProportion.
func forwardProportion(m Measure, p, nhm float64) float64 {
	switch m {
	case PLO:
		return Logit(p)
	case PFT:
		return PFTransform(p, nhm)
	}
	return p
}

// proportionTicks places labelled ticks at readable proportions (multiples
// of 0.01 to 0.25 between 0 and 1) on the analysis scale [lo, hi] of a
// transformed proportion measure.
func proportionTicks(m Measure, nhm, lo, hi float64) []plot.Tick {
	plo, phi := backProportion(m, lo, nhm), backProportion(m, hi, nhm)
	if !(phi > plo) {
		return nil
	}
	plo, phi = math.Max(0, plo), math.Min(1, phi)
	var ticks []plot.Tick
	for _, v := range linearTicks(plo, phi) {
		if v < 0 || v > 1 {
			continue
		}
		x := forwardProportion(m, v, nhm)
		if isFinite(x) && x >= lo && x <= hi {
			ticks = append(ticks, plot.Tick{Value: x, Label: trimFloat(v)})
		}
	}
	return ticks
}

// proportionScale names the analysis scale of a proportion measure for
// tables ("" for other measures).
func proportionScale(m Measure) string {
	switch m {
	case PR:
		return "proportion"
	case PLO:
		return "logit proportion"
	case PFT:
		return "double arcsine"
	}
	return ""
}

// proportionZeroRule describes the correction for single-arm studies with
// no events or only events, for the workbook's provenance.
func proportionZeroRule(o Options) string {
	add := proportionAdd(o.Measure, o.Add)
	switch {
	case o.To == None:
		return `no correction (to = "none"): studies whose proportion is then not estimable are left out`
	case add == 0:
		return "no correction needed (metafor's default for the double arcsine)"
	case o.To == All:
		return fmt.Sprintf(`%g added to the events and non-events of every study (add = %g, to = "all")`, add, add)
	case o.To == If0All:
		return fmt.Sprintf(`%g added to the events and non-events of every study when any study has no events or only events (add = %g, to = "if0all")`, add, add)
	}
	return fmt.Sprintf(`%g added to the events and non-events of studies with no events or only events (add = %g, to = "only0")`, add, add)
}

package meta

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// effect is one study's observed effect yi and sampling variance vi on the
// analysis scale. When ok is false the study takes no part in the
// inverse-variance computations and reason says why.
type effect struct {
	yi, vi float64
	ok     bool
	reason string
}

// isDoubleZero reports whether a 2x2 table has no events in both arms or
// only events in both arms (escalc's drop00 test).
func isDoubleZero(s *Study) bool {
	bi, di := s.N1I-s.AI, s.N2I-s.CI
	return (s.AI == 0 && s.CI == 0) || (bi == 0 && di == 0)
}

func hasZeroCell(s *Study) bool {
	return s.AI == 0 || s.CI == 0 || s.N1I-s.AI == 0 || s.N2I-s.CI == 0
}

// binaryEffects computes OR, RR or RD per study as metafor's escalc does
// (addyi = addvi = TRUE, vtype = "LS").
func binaryEffects(studies []Study, m Measure, add float64, to ZeroCells, drop00 bool) []effect {
	out := make([]effect, len(studies))
	dropped := make([]bool, len(studies))
	anyZero := false
	for i := range studies {
		if drop00 && isDoubleZero(&studies[i]) {
			dropped[i] = true
			continue
		}
		if hasZeroCell(&studies[i]) {
			anyZero = true
		}
	}
	for i := range studies {
		s := &studies[i]
		if dropped[i] {
			out[i] = effect{reason: "double-zero study (no events, or only events, in both groups) dropped"}
			continue
		}
		a, b, c, d := s.AI, s.N1I-s.AI, s.CI, s.N2I-s.CI
		corr := false
		switch to {
		case All:
			corr = true
		case Only0:
			corr = hasZeroCell(s)
		case If0All:
			corr = anyZero
		}
		if corr {
			a, b, c, d = a+add, b+add, c+add, d+add
		}
		n1, n2 := a+b, c+d
		p1, p2 := a/n1, c/n2
		var yi, vi float64
		switch m {
		case RR:
			yi = math.Log(p1) - math.Log(p2)
			vi = 1/a - 1/n1 + 1/c - 1/n2
		case OR:
			yi = math.Log(p1/(1-p1)) - math.Log(p2/(1-p2))
			vi = 1/a + 1/b + 1/c + 1/d
		case RD:
			yi = p1 - p2
			vi = p1*(1-p1)/n1 + p2*(1-p2)/n2
		}
		out[i] = checkEffect(yi, vi, "effect not estimable from these counts without a zero-cell correction")
	}
	return out
}

// checkEffect marks effects with a non-finite yi or a non-positive or
// non-finite vi as not estimable.
func checkEffect(yi, vi float64, reason string) effect {
	if !isFinite(yi) || !isFinite(vi) || vi <= 0 {
		return effect{yi: yi, vi: vi, reason: reason}
	}
	return effect{yi: yi, vi: vi, ok: true}
}

// hedgesCorrection is metafor's exact small-sample correction factor
// c(m) = Γ(m/2) / (√(m/2) · Γ((m−1)/2)), NaN for m ≤ 1.
func hedgesCorrection(mi float64) float64 {
	if mi <= 1 {
		return math.NaN()
	}
	a, _ := math.Lgamma(mi / 2)
	b, _ := math.Lgamma((mi - 1) / 2)
	return math.Exp(a - math.Log(math.Sqrt(mi/2)) - b)
}

// continuousEffects computes MD (vtype "LS": sd1²/n1 + sd2²/n2) or SMD
// (Hedges' g with vtype "LS": 1/n1 + 1/n2 + g²/(2(n1+n2))).
func continuousEffects(studies []Study, m Measure) []effect {
	out := make([]effect, len(studies))
	for i := range studies {
		s := &studies[i]
		n1, n2 := s.N1I, s.N2I
		switch m {
		case MD:
			out[i] = checkEffect(s.M1I-s.M2I, s.SD1I*s.SD1I/n1+s.SD2I*s.SD2I/n2, "mean difference not estimable")
		case SMD:
			mi := n1 + n2 - 2
			sdp := math.Sqrt(((n1-1)*s.SD1I*s.SD1I + (n2-1)*s.SD2I*s.SD2I) / mi)
			g := hedgesCorrection(mi) * (s.M1I - s.M2I) / sdp
			out[i] = checkEffect(g, 1/n1+1/n2+g*g/(2*(n1+n2)), "standardized mean difference not estimable (too few participants)")
		}
	}
	return out
}

// genericEffects converts reported estimates and CIs (or SEs) to yi and vi:
// yi = Est (GEN) or log(Est) (GENRatio); SE = (UB − LB) / (2·z) on the same
// scale, z the normal quantile of the input level.
func genericEffects(studies []Study, m Measure, inputLevel float64) ([]effect, error) {
	z := distuv.UnitNormal.Quantile(1 - (1-inputLevel)/2)
	out := make([]effect, len(studies))
	for i := range studies {
		s := &studies[i]
		if m == GENRatio && (s.Est <= 0 || (s.SE == 0 && s.LB <= 0)) {
			return nil, rowError(s, "a ratio and its confidence limits must be greater than 0 (got %s [%s, %s])", fmtNum(s.Est), fmtNum(s.LB), fmtNum(s.UB))
		}
		yi, lb, ub := s.Est, s.LB, s.UB
		if m == GENRatio {
			yi, lb, ub = math.Log(yi), math.Log(lb), math.Log(ub)
		}
		se := s.SE
		if se <= 0 {
			se = (ub - lb) / (2 * z)
		}
		out[i] = checkEffect(yi, se*se, "standard error not usable")
	}
	return out, nil
}

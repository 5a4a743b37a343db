package meta

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// petoEffects computes each study's Peto log odds ratio as escalc(measure =
// "PETO") does for rma.peto's per-study values: double-zero studies dropped
// (drop00 = TRUE), add (1/2) added to the cells of studies with a zero cell
// (to = "only0"), yi = (ai − Ei)/Vi and vi = 1/Vi.
func petoEffects(studies []Study, add float64, to ZeroCells) []effect {
	out := make([]effect, len(studies))
	anyZero := false
	for i := range studies {
		if !isDoubleZero(&studies[i]) && hasZeroCell(&studies[i]) {
			anyZero = true
		}
	}
	for i := range studies {
		s := &studies[i]
		if isDoubleZero(s) {
			out[i] = effect{reason: "double-zero study (no events, or only events, in both groups) dropped"}
			continue
		}
		a, b, c, d := s.AI, s.N1I-s.AI, s.CI, s.N2I-s.CI
		if to == All || (to == Only0 && hasZeroCell(s)) || (to == If0All && anyZero) {
			a, b, c, d = a+add, b+add, c+add, d+add
		}
		ei, vi := petoMoments(a, b, c, d)
		out[i] = checkEffect((a-ei)/vi, 1/vi, "Peto's odds ratio is not estimable for this study")
	}
	return out
}

// petoMoments returns the expected events Ei and the hypergeometric
// variance Vi of a 2x2 table under no effect.
func petoMoments(a, b, c, d float64) (ei, vi float64) {
	n1, n2 := a+b, c+d
	n := n1 + n2
	xt, yt := a+c, b+d
	return xt * n1 / n, xt * yt * (n1 / n) * (n2 / n) / (n - 1)
}

// fitPeto is metafor's rma.peto with its defaults: the pooled log odds
// ratio Σ(ai − Ei)/ΣVi on the uncorrected tables, its variance 1/ΣVi, and
// Q = Σ(ai − Ei)²/Vi − (Σ(ai − Ei))²/ΣVi over the tables with Vi > 0, with
// k.yi − 1 degrees of freedom (k.yi: studies whose escalc value exists).
// It returns the fit and each table's weight in percent (Vi/ΣVi).
func fitPeto(tables []Study, kyi int, level float64) (fit, []float64, error) {
	k := len(tables)
	f := fit{seTau2: math.NaN()}.noCI()
	var sumO, sumV, sumO2V float64
	vis := make([]float64, k)
	kPos := 0
	for i := range tables {
		a, b, c, d, _ := cells(&tables[i])
		ei, vi := petoMoments(a, b, c, d)
		if math.IsNaN(vi) {
			vi = 0
		}
		vis[i] = vi
		sumO += a - ei
		if vi > 0 {
			kPos++
			sumV += vi
			sumO2V += (a - ei) * (a - ei) / vi
		}
	}
	if sumV == 0 {
		return fit{}, nil, errorf(ENOTESTIMABLE, "Peto's odds ratio cannot be estimated: no study has events in one group and non-events in the other")
	}
	f.est = sumO / sumV
	f.se = math.Sqrt(1 / sumV)
	f.crit = distuv.UnitNormal.Quantile(1 - (1-level)/2)
	f.zval = f.est / f.se
	f.pval = normTwoSided(f.zval)
	f.ciLB, f.ciUB = f.est-f.crit*f.se, f.est+f.crit*f.se
	f.qe = math.Max(0, sumO2V-sumO*sumO/sumV)
	if kPos > 1 {
		f.qeDF = kyi - 1
		f.qep = distuv.ChiSquared{K: float64(f.qeDF)}.Survival(f.qe)
		f.i2 = math.Max(0, 100*(f.qe-float64(kyi-1))/f.qe)
		f.h2 = f.qe / float64(kyi-1)
	} else {
		f.qeDF = max(kyi-1, 0)
		f.qep, f.i2, f.h2 = 1, 0, 1
	}
	wt := make([]float64, k)
	for i, vi := range vis {
		wt[i] = 100 * vi / sumV
	}
	return f, wt, nil
}

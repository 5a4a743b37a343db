package meta

import (
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// fitMH is metafor's rma.mh for OR, RR and RD on the uncorrected tables:
// the Mantel–Haenszel estimate with the Robins–Breslow–Greenland variance
// (OR), Greenland and Robins' variance (RR) or the Sato/Greenland–Robins
// variance (RD). yi/vi (escalc with drop00 = TRUE) feed the Q statistic.
// It returns the fit and each table's weight in percent.
func fitMH(tables []Study, m Measure, y, v []float64, level float64) (fit, []float64, error) {
	k := len(tables)
	f := fit{seTau2: math.NaN()}.noCI()
	wt := make([]float64, k)
	switch m {
	case OR:
		var r, s, sPR, sPSQR, sQS float64
		for i := range tables {
			a, b, c, d, n := cells(&tables[i])
			p := a/n + d/n
			q := b/n + c/n
			ri := (a / n) * d
			si := (b / n) * c
			r += ri
			s += si
			sPR += p * ri
			sPSQR += p*si + q*ri
			sQS += q * si
			wt[i] = si
		}
		if r == 0 || s == 0 {
			return fit{}, nil, errorf(ENOTESTIMABLE, "the Mantel–Haenszel odds ratio cannot be estimated: %s", orZeroReason(r, s))
		}
		f.est = math.Log(r / s)
		f.se = math.Sqrt(0.5 * (sPR/(r*r) + sPSQR/(r*s) + sQS/(s*s)))
	case RR:
		var r, s, sa, sc, num float64
		for i := range tables {
			a, b, c, _, n := cells(&tables[i])
			n1, n2 := a+b, tables[i].N2I
			r += a * (n2 / n)
			s += c * (n1 / n)
			sa += a
			sc += c
			num += (n1/n)*(n2/n)*(a+c) - (a/n)*c
			wt[i] = (c / n) * n1
		}
		if sa == 0 || sc == 0 {
			return fit{}, nil, errorf(ENOTESTIMABLE, "the Mantel–Haenszel risk ratio cannot be estimated: no study has an event in the %s group", zeroArm(sa))
		}
		f.est = math.Log(r / s)
		f.se = math.Sqrt(num / (r * s))
	case RD:
		var num, den, t1, t2 float64
		for i := range tables {
			a, _, c, _, n := cells(&tables[i])
			n1, n2 := tables[i].N1I, tables[i].N2I
			num += a*(n2/n) - c*(n1/n)
			den += n1 * (n2 / n)
			t1 += c*(n1/n)*(n1/n) - a*(n2/n)*(n2/n) + (n1/n)*(n2/n)*(n2-n1)/2
			t2 += a*(n2-c)/n + c*(n1-a)/n
			wt[i] = (n1 / n) * n2
		}
		f.est = num / den
		f.se = math.Sqrt((f.est*t1 + t2/2) / (den * den))
		if !(f.se > 0) {
			return fit{}, nil, errorf(ENOTESTIMABLE, "the Mantel–Haenszel risk difference has no variance (no events, or only events, in every study); use another method")
		}
	}
	var sw float64
	for _, w := range wt {
		sw += w
	}
	for i := range wt {
		wt[i] = 100 * wt[i] / sw
	}
	f.crit = distuv.UnitNormal.Quantile(1 - (1-level)/2)
	f.zval = f.est / f.se
	f.pval = normTwoSided(f.zval)
	f.ciLB = f.est - f.crit*f.se
	f.ciUB = f.est + f.crit*f.se

	kyi := len(y)
	if kyi > 1 {
		var qe float64
		for i := range y {
			d := y[i] - f.est
			qe += d * d / v[i]
		}
		f.qeDF = kyi - 1
		f.qe = math.Max(0, qe)
		f.qep = distuv.ChiSquared{K: float64(f.qeDF)}.Survival(f.qe)
		f.i2 = math.Max(0, 100*(f.qe-float64(kyi-1))/f.qe)
		f.h2 = f.qe / float64(kyi-1)
	} else {
		f.qe, f.qep, f.i2, f.h2 = 0, 1, 0, 1
	}
	return f, wt, nil
}

// cells returns a study's 2x2 table a, b, c, d and total N.
func cells(s *Study) (a, b, c, d, n float64) {
	a, b, c, d = s.AI, s.N1I-s.AI, s.CI, s.N2I-s.CI
	return a, b, c, d, a + b + c + d
}

func orZeroReason(r, s float64) string {
	if r == 0 && s == 0 {
		return "no study has both an event in one group and a non-event in the other"
	}
	return "the odds ratio of every study is 0 or infinite (zero cells in the same position)"
}

func zeroArm(sa float64) string {
	if sa == 0 {
		return "treatment"
	}
	return "control"
}

package meta

import (
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// llTol is metafor's control$tol, .Machine$double.eps^0.25, used to decide
// whether τ² = 0 has a higher restricted likelihood than the REML solution.
const llTol = 0x1p-13

// fit is the outcome of pooling yi/vi (rma.uni) or 2x2 tables (rma.mh).
type fit struct {
	est, se, zval, pval, ciLB, ciUB float64
	crit                            float64 // critical value of the CI
	df                              int     // t degrees of freedom, 0 for z
	tau2, seTau2                    float64 // seTau2 NaN when not available
	qe, qep, i2, h2                 float64
	qeDF                            int
	iter                            int
	notes                           []string
}

// weightSums holds the sums needed for an intercept-only weighted model with
// weights w: s = Σw, s2 = Σw², s3 = Σw³, the weighted mean and
// rss = Σw(y−mean)² = y'Py.
type weightSums struct {
	s, s2, s3, mean, rss float64
}

func sums(y, w []float64) weightSums {
	var ws weightSums
	var sy float64
	for i, wi := range w {
		ws.s += wi
		ws.s2 += wi * wi
		ws.s3 += wi * wi * wi
		sy += wi * y[i]
	}
	ws.mean = sy / ws.s
	for i, wi := range w {
		d := y[i] - ws.mean
		ws.rss += wi * d * d
	}
	return ws
}

// trP is tr(P) for P = W − w w'/Σw.
func (ws weightSums) trP() float64 { return ws.s - ws.s2/ws.s }

// sumPP is Σ P_ij² = tr(PP) for P = W − w w'/Σw.
func (ws weightSums) sumPP() float64 {
	return ws.s2 - 2*ws.s3/ws.s + ws.s2*ws.s2/(ws.s*ws.s)
}

func weights(v []float64, tau2 float64) []float64 {
	w := make([]float64, len(v))
	for i := range v {
		w[i] = 1 / (v[i] + tau2)
	}
	return w
}

// fitUni is metafor's rma.uni for an intercept-only model with all vi > 0.
func fitUni(y, v []float64, method Method, test Test, level float64, ctl Control) (fit, error) {
	k := len(y)
	f := fit{seTau2: math.NaN()}
	if k == 1 && test == TestKnHa {
		// metafor: 'Setting argument test="z" since k=1.'
		test = TestZ
		f.notes = append(f.notes, "The Knapp–Hartung adjustment needs at least 2 studies; the z test is used instead.")
	}
	w0 := weights(v, 0)
	fe := sums(y, w0)
	if k > 1 {
		switch method {
		case DL:
			trP := fe.trP()
			f.tau2 = math.Max(0, (fe.rss-float64(k-1))/trP)
			t := f.tau2
			f.seTau2 = math.Sqrt(1 / (trP * trP) * (2*float64(k-1) + 4*t*trP + 2*t*t*fe.sumPP()))
		case REML:
			tau2, iter, note, err := remlTau2(y, v, ctl)
			if err != nil {
				return fit{}, err
			}
			if note != "" {
				f.notes = append(f.notes, note)
			}
			f.tau2, f.iter = tau2, iter
			re := sums(y, weights(v, tau2))
			f.seTau2 = math.Sqrt(2 / re.sumPP())
		}
	}

	re := sums(y, weights(v, f.tau2))
	f.est = re.mean
	vb := 1 / re.s
	if test == TestKnHa {
		if method == EE {
			f.notes = append(f.notes, "The Knapp–Hartung adjustment is not meant for equal-effects models (metafor warns likewise).")
		}
		s2w := 0.0
		if re.rss > 0x1p-52 { // .Machine$double.eps
			s2w = re.rss / float64(k-1)
		} else {
			f.notes = append(f.notes, "The studies agree exactly, so the Knapp–Hartung scaling factor is 0 and the interval has zero width (as in metafor).")
		}
		vb *= s2w
		f.df = k - 1
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(f.df)}
		f.crit = t.Quantile(1 - (1-level)/2)
		f.se = math.Sqrt(vb)
		f.zval = f.est / f.se
		f.pval = 2 * t.Survival(math.Abs(f.zval))
	} else {
		f.crit = distuv.UnitNormal.Quantile(1 - (1-level)/2)
		f.se = math.Sqrt(vb)
		f.zval = f.est / f.se
		f.pval = 2 * distuv.UnitNormal.Survival(math.Abs(f.zval))
	}
	f.ciLB = f.est - f.crit*f.se
	f.ciUB = f.est + f.crit*f.se

	// Heterogeneity, always from the equal-effects weights.
	if k > 1 {
		f.qeDF = k - 1
		f.qe = math.Max(0, fe.rss)
		f.qep = distuv.ChiSquared{K: float64(f.qeDF)}.Survival(f.qe)
		if method.IsRandom() {
			vt := float64(k-1) / fe.trP()
			f.i2 = 100 * f.tau2 / (vt + f.tau2)
			f.h2 = f.tau2/vt + 1
		} else {
			f.i2 = math.Max(0, 100*(f.qe-float64(k-1))/f.qe)
			f.h2 = f.qe / float64(k-1)
		}
	} else {
		f.qe, f.qep, f.i2, f.h2 = 0, 1, 0, 1
	}
	return f, nil
}

// remlTau2 estimates τ² by metafor's Fisher scoring for REML: Hedges'
// estimator (truncated at 0) as the start, steps (y'PPy − tr P)/tr(PP)
// halved while they would make τ² negative, until τ² changes by at most
// ctl.Threshold; then metafor's check against a better likelihood at τ² = 0.
func remlTau2(y, v []float64, ctl Control) (tau2 float64, iter int, note string, err error) {
	k := len(y)
	// Hedges (HE) estimator: (Σ(y−ȳ)² − (1−1/k)Σv) / (k−1).
	var my, sv float64
	for i := range y {
		my += y[i]
		sv += v[i]
	}
	my /= float64(k)
	var rss float64
	for _, yi := range y {
		rss += (yi - my) * (yi - my)
	}
	tau2 = math.Max(0, (rss-sv*(1-1/float64(k)))/float64(k-1))

	change := ctl.Threshold + 1
	for change > ctl.Threshold {
		iter++
		old := tau2
		w := weights(v, tau2)
		ws := sums(y, w)
		var ypppy float64
		for i := range y {
			r := w[i] * (y[i] - ws.mean) // (Py)_i
			ypppy += r * r
		}
		adj := (ypppy - ws.trP()) / ws.sumPP() * ctl.StepAdj
		if math.IsNaN(adj) {
			adj = 0
		}
		for tau2+adj < 0 {
			adj /= 2
		}
		tau2 += adj
		change = math.Abs(old - tau2)
		if iter > ctl.MaxIter {
			return 0, iter, "", errorf(ENOTCONVERGED,
				"the REML estimate of the between-study variance did not converge in %d iterations; try a smaller step (Control.StepAdj) or more iterations, or use DL", ctl.MaxIter)
		}
	}

	if ll0, ll := remlLogLik(y, v, 0), remlLogLik(y, v, tau2); ll0-ll > llTol && tau2 > ctl.Threshold {
		note = fmt.Sprintf("REML Fisher scoring may have stopped at a local maximum (τ² = %.4g); τ² set to 0, as metafor does.", tau2)
		tau2 = 0
	}
	return math.Max(0, tau2), iter, note, nil
}

// remlLogLik is the restricted log-likelihood of the intercept-only model.
func remlLogLik(y, v []float64, tau2 float64) float64 {
	k := float64(len(y))
	ws := sums(y, weights(v, tau2))
	var sl float64
	for _, vi := range v {
		sl += math.Log(vi + tau2)
	}
	return -0.5*(k-1)*math.Log(2*math.Pi) - 0.5*sl - 0.5*math.Log(ws.s) - 0.5*ws.rss
}

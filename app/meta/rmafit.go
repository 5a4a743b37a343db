package meta

import (
	"context"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/mat"
	"gonum.org/v1/gonum/stat/distuv"
)

// uniModel is the input of metafor's rma.uni: effects y with sampling
// variances v (all > 0), a design matrix x (nil: intercept only) whose
// first column is the intercept when intercept is set.
type uniModel struct {
	y, v      []float64
	x         [][]float64
	intercept bool
	method    Method
	test      Test
	level     float64
	ctl       Control
	// noR2 skips the R² refit (leave-one-out and influence refits, as
	// metafor's skipr2).
	noR2 bool
	// noCI skips the Q-profile confidence interval of τ², I² and H² (the
	// refits of the sensitivity analyses and of trim and fill, which do not
	// report it); the other quantities are the same either way.
	noCI bool
}

// uniFit is an rma.uni fit with metafor's quantities.
type uniFit struct {
	k, p                 int
	beta, se, stat, pval []float64
	ciLB, ciUB           []float64
	vb                   [][]float64
	crit                 float64
	df                   int // t degrees of freedom (k − p) for knha, 0 for z
	test                 Test
	tau2, seTau2         float64
	s2w                  float64
	qe, qep              float64
	qeDF                 int
	qm, qmp              float64
	qmDF1, qmDF2         int
	i2, h2, vt, r2       float64
	tau2Lo, tau2Hi       float64 // Q-profile CI (NaN for EE)
	i2Lo, i2Hi           float64
	h2Lo, h2Hi           float64
	w                    []float64 // 1/(vᵢ + τ²)
	iter                 int
	notes                []string
	x                    [][]float64
}

// interceptOnly is the design matrix of a model without moderators: a
// column of k ones (one backing array, not k).
func interceptOnly(k int) [][]float64 {
	ones := make([]float64, k)
	x := make([][]float64, k)
	for i := range x {
		ones[i] = 1
		x[i] = ones[i : i+1 : i+1]
	}
	return x
}

// mad is R's mad(): 1.4826 · median |y − median y|.
func mad(y []float64) float64 {
	med := median(y)
	d := make([]float64, len(y))
	for i, v := range y {
		d[i] = math.Abs(v - med)
	}
	return 1.4826 * median(d)
}

func median(y []float64) float64 {
	s := append([]float64(nil), y...)
	sort.Float64s(s)
	n := len(s)
	if n == 0 {
		return math.NaN()
	}
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// fitRMA fits the model as metafor's rma.uni does, τ² by the chosen
// estimator with metafor's control defaults, then the Q-profile confidence
// interval of τ², I² and H² (confint.rma.uni) for random-effects models.
// It stops with an ECANCELLED error when ctx is cancelled (checked at every
// iteration of the τ² estimators and of the root searches).
func fitRMA(ctx context.Context, m uniModel) (uniFit, error) {
	if ctx.Err() != nil {
		return uniFit{}, stopped(ctx, "Model fit")
	}
	k := len(m.y)
	if k == 0 {
		return uniFit{}, errorf(ENOTESTIMABLE, "no study has an estimable effect")
	}
	if m.x == nil {
		m.x, m.intercept = interceptOnly(k), true
	}
	p := len(m.x[0])
	f := uniFit{k: k, p: p, seTau2: math.NaN(), r2: math.NaN(), test: m.test, x: m.x,
		tau2Lo: math.NaN(), tau2Hi: math.NaN(), i2Lo: math.NaN(), i2Hi: math.NaN(), h2Lo: math.NaN(), h2Hi: math.NaN()}
	intOnly := p == 1 && m.intercept
	random := m.method.IsRandom()
	if !(intOnly && k == 1) {
		if (!random && p > k) || (random && p+1 > k) {
			return uniFit{}, errorf(ENOTESTIMABLE, "the model has %d coefficients%s but only %d studies; fewer moderators or more studies are needed",
				p, map[bool]string{true: " and a between-study variance", false: ""}[random], k)
		}
	}
	if !fullRank(m.x) {
		return uniFit{}, errSingular()
	}
	if k == 1 && m.test == TestKnHa {
		f.test = TestZ
		f.notes = append(f.notes, "The Knapp–Hartung adjustment needs at least 2 studies; the z test is used instead.")
	}
	if random && k > 1 {
		if err := f.estimateTau2(ctx, m); err != nil {
			return uniFit{}, err
		}
	}

	f.w = weights(m.v, f.tau2)
	pr, ok := newProjection(m.x, f.w, m.y)
	if !ok {
		return uniFit{}, errSingular()
	}
	f.beta = pr.beta
	f.vb = pr.a
	f.s2w = 1
	if f.test == TestKnHa {
		if !random {
			f.notes = append(f.notes, "The Knapp–Hartung adjustment is not meant for equal-effects models (metafor warns likewise).")
		}
		rss := pr.yPy()
		if rss <= 0x1p-52 {
			f.s2w = 0
			f.notes = append(f.notes, "The studies agree exactly, so the Knapp–Hartung scaling factor is 0 and the interval has zero width (as in metafor).")
		} else {
			f.s2w = rss / float64(k-p)
		}
		for i := range f.vb {
			for j := range f.vb[i] {
				f.vb[i][j] *= f.s2w
			}
		}
	}
	f.se = make([]float64, p)
	f.stat = make([]float64, p)
	f.pval = make([]float64, p)
	f.ciLB = make([]float64, p)
	f.ciUB = make([]float64, p)
	alpha := 1 - m.level
	if f.test == TestKnHa {
		f.df = k - p
	}
	switch {
	case f.test == TestKnHa && f.df > 0:
		t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(f.df)}
		f.crit = t.Quantile(1 - alpha/2)
	case f.test == TestKnHa:
		f.crit = math.NaN()
	default:
		f.crit = distuv.UnitNormal.Quantile(1 - alpha/2)
	}
	for j := 0; j < p; j++ {
		f.se[j] = math.Sqrt(f.vb[j][j])
		f.stat[j] = f.beta[j] / f.se[j]
		switch {
		case f.test == TestKnHa && f.df > 0:
			f.pval[j] = 2 * distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(f.df)}.Survival(math.Abs(f.stat[j]))
		case f.test == TestKnHa:
			f.pval[j] = math.NaN()
		default:
			f.pval[j] = normTwoSided(f.stat[j])
		}
		f.ciLB[j] = f.beta[j] - f.crit*f.se[j]
		f.ciUB[j] = f.beta[j] + f.crit*f.se[j]
	}

	// Omnibus test of the moderators (all coefficients but the intercept).
	btt := make([]int, 0, p)
	for j := 0; j < p; j++ {
		if !(m.intercept && p > 1 && j == 0) {
			btt = append(btt, j)
		}
	}
	f.qm, f.qmp = math.NaN(), math.NaN()
	if inv, _, ok := symInverse(subMatrix(f.vb, btt)); ok {
		b := make([]float64, len(btt))
		for i, j := range btt {
			b[i] = f.beta[j]
		}
		var q float64
		for i := range b {
			for j := range b {
				q += b[i] * inv[i][j] * b[j]
			}
		}
		f.qm = q
	}
	f.qmDF1 = len(btt)
	if f.test == TestKnHa {
		f.qm /= float64(len(btt))
		f.qmDF2 = k - p
		if f.qmDF2 > 0 && !math.IsNaN(f.qm) {
			f.qmp = distuv.F{D1: float64(f.qmDF1), D2: float64(f.qmDF2)}.Survival(f.qm)
		}
	} else if !math.IsNaN(f.qm) {
		f.qmp = distuv.ChiSquared{K: float64(f.qmDF1)}.Survival(f.qm)
	}

	// Heterogeneity from the equal-effects weights.
	if k > p {
		fe, ok := newProjection(m.x, weights(m.v, 0), centered(m.y))
		if !ok {
			return uniFit{}, errSingular()
		}
		f.qe = math.Max(0, fe.yPy())
		f.qeDF = k - p
		f.qep = distuv.ChiSquared{K: float64(f.qeDF)}.Survival(f.qe)
		f.vt = float64(k-p) / fe.trPD(nil)
		if random {
			f.i2 = 100 * f.tau2 / (f.vt + f.tau2)
			f.h2 = f.tau2/f.vt + 1
		} else {
			f.i2 = math.Max(0, 100*(f.qe-float64(k-p))/f.qe)
			f.h2 = f.qe / float64(k-p)
		}
	} else {
		f.qe, f.qep, f.i2, f.h2, f.vt = 0, 1, 0, 1, 0
	}
	if random && k > 1 && !m.noCI {
		f.qprofile(ctx, m)
		if ctx.Err() != nil {
			return uniFit{}, stopped(ctx, "Model fit")
		}
	}
	if !intOnly && m.intercept && !m.noR2 {
		f.r2 = rSquared(ctx, m, f)
		if ctx.Err() != nil {
			return uniFit{}, stopped(ctx, "Model fit")
		}
	}
	return f, nil
}

func ones(k int) []float64 {
	o := make([]float64, k)
	for i := range o {
		o[i] = 1
	}
	return o
}

// centered returns y minus its mean (metafor estimates τ² from scale(yi)).
func centered(y []float64) []float64 {
	mean := rMean(y)
	out := make([]float64, len(y))
	for i, v := range y {
		out[i] = v - mean
	}
	return out
}

// qAt is the generalized Q statistic y'P(τ²)y.
func qAt(x [][]float64, y, v []float64, tau2 float64) float64 {
	pr, ok := newProjection(x, weights(v, tau2), y)
	if !ok {
		return math.NaN()
	}
	return pr.yPy()
}

// estimateTau2 sets f.tau2, f.seTau2 and f.iter by m.method.
func (f *uniFit) estimateTau2(ctx context.Context, m uniModel) error {
	k, p := float64(f.k), float64(f.p)
	ymc := centered(m.y)
	x, v := m.x, m.v
	ctl := m.ctl
	switch m.method {
	case HS:
		pr, ok := newProjection(x, weights(v, 0), ymc)
		if !ok {
			return errSingular()
		}
		sw := sum(pr.w)
		f.tau2 = math.Max(0, (pr.yPy()-k)/sw)
		t := f.tau2
		f.seTau2 = math.Sqrt(1 / (sw * sw) * (2*(k-p) + 4*t*pr.trPD(nil) + 2*t*t*pr.trPPD(nil)))
	case HE:
		pr, ok := newProjection(x, ones(f.k), ymc)
		if !ok {
			return errSingular()
		}
		trPV := pr.trPD(v)
		f.tau2 = math.Max(0, (pr.yPy()-trPV)/(k-p))
		t := f.tau2
		f.seTau2 = math.Sqrt(1 / ((k - p) * (k - p)) * (2*pr.trPDPD(v) + 4*t*trPV + 2*t*t*(k-p)))
	case DL:
		pr, ok := newProjection(x, weights(v, 0), ymc)
		if !ok {
			return errSingular()
		}
		trP := pr.trPD(nil)
		f.tau2 = math.Max(0, (pr.yPy()-(k-p))/trP)
		t := f.tau2
		f.seTau2 = math.Sqrt(1 / (trP * trP) * (2*(k-p) + 4*t*trP + 2*t*t*pr.trPPD(nil)))
	case SJ:
		var vy float64
		for _, d := range ymc {
			vy += d * d
		}
		tau0 := vy / (k - 1) * (k - 1) / k
		pr, ok := newProjection(x, weights(v, tau0), ymc)
		if !ok {
			return errSingular()
		}
		f.tau2 = math.Max(0, tau0*pr.yPy()/(k-p))
		t := f.tau2
		f.seTau2 = math.Sqrt(tau0 * tau0 / ((k - p) * (k - p)) * (2*pr.trPDPD(v) + 4*t*pr.trPPD(v) + 2*t*t*pr.trPPD(nil)))
	case PM:
		target := k - p
		tauMax := math.Max(100, 10*math.Pow(mad(m.y), 2))
		q := func(t float64) float64 { return qAt(x, ymc, v, t) - target }
		q0 := q(0)
		switch {
		case q0 < 0:
			f.tau2 = 0
		default:
			qMax := q(tauMax)
			if qMax > 0 {
				return errorf(ENOTESTIMABLE, "the Paule–Mandel estimate of the between-study variance lies above %g, the upper end of its search range (as metafor, which stops here); use another estimator", tauMax)
			}
			root, ok := zeroin(ctx, q, 0, tauMax, q0, qMax, rootTol, ctl.MaxIter)
			if ctx.Err() != nil {
				return stopped(ctx, "Paule–Mandel estimate")
			}
			if !ok {
				return errorf(ENOTCONVERGED, "the Paule–Mandel estimate of the between-study variance did not converge in %d iterations; use another estimator", ctl.MaxIter)
			}
			f.tau2 = math.Max(0, root)
		}
		sw := sum(weights(v, f.tau2))
		f.seTau2 = math.Sqrt(2 * k * k / (k - p) / (sw * sw))
	case ML, REML, EB:
		pr, ok := newProjection(x, ones(f.k), ymc)
		if !ok {
			return errSingular()
		}
		tau2 := math.Max(0, (pr.yPy()-pr.trPD(v))/(k-p)) // Hedges' start
		change := ctl.Threshold + 1
		iter := 0
		for change > ctl.Threshold {
			if ctx.Err() != nil {
				return stopped(ctx, string(m.method)+" estimate")
			}
			iter++
			old := tau2
			pr, ok := newProjection(x, weights(v, tau2), ymc)
			if !ok {
				return errSingular()
			}
			var adj float64
			switch m.method {
			case ML:
				w2 := pr.powWD(2, nil)
				adj = (pr.yPPy() - sum(pr.w)) / sum(w2)
			case REML:
				adj = (pr.yPPy() - pr.trPD(nil)) / pr.trPPD(nil)
			case EB:
				adj = (pr.yPy()*k/(k-p) - k) / sum(pr.w)
			}
			adj *= ctl.StepAdj
			if math.IsNaN(adj) {
				adj = 0
			}
			for tau2+adj < 0 {
				adj /= 2
			}
			tau2 += adj
			change = math.Abs(old - tau2)
			if iter > ctl.MaxIter {
				return errorf(ENOTCONVERGED,
					"the %s estimate of the between-study variance did not converge in %d iterations; try a smaller step or more iterations, or another estimator such as DL", m.method, ctl.MaxIter)
			}
		}
		f.iter = iter
		if m.method != EB {
			ll := func(t float64) float64 {
				pr, ok := newProjection(x, weights(v, t), ymc)
				if !ok {
					return math.Inf(-1)
				}
				var sl float64
				for _, vi := range v {
					sl += math.Log(vi + t)
				}
				if m.method == ML {
					return -0.5*k*math.Log(2*math.Pi) - 0.5*sl - 0.5*pr.yPy()
				}
				return -0.5*(k-p)*math.Log(2*math.Pi) - 0.5*sl - 0.5*pr.logDet - 0.5*pr.yPy()
			}
			if ll(0)-ll(tau2) > llTol && tau2 > ctl.Threshold {
				f.notes = append(f.notes, fmt.Sprintf("%s Fisher scoring may have stopped at a local maximum (τ² = %.4g); τ² set to 0, as metafor does.", m.method, tau2))
				tau2 = 0
			}
		}
		f.tau2 = math.Max(0, tau2)
		w := weights(v, f.tau2)
		switch m.method {
		case ML:
			var s2 float64
			for _, wi := range w {
				s2 += wi * wi
			}
			f.seTau2 = math.Sqrt(2 / s2)
		case REML:
			pr, ok := newProjection(x, w, ymc)
			if !ok {
				return errSingular()
			}
			f.seTau2 = math.Sqrt(2 / pr.trPPD(nil))
		case EB:
			sw := sum(w)
			f.seTau2 = math.Sqrt(2 * k * k / (k - p) / (sw * sw))
		}
	default:
		return errorf(EINVALID, "unknown estimator %q of the between-study variance", m.method)
	}
	return nil
}

// qprofile sets the Q-profile confidence interval of τ² (and with it of I²
// and H²), as confint.rma.uni's default type="QP": the τ² values at which
// the generalized Q statistic equals the χ²(k−p) quantiles, searched in
// [0, max(100, 10τ²)] with uniroot's tolerance.
func (f *uniFit) qprofile(ctx context.Context, m uniModel) {
	df := float64(f.k - f.p)
	alpha := 1 - m.level
	chi := distuv.ChiSquared{K: df}
	critU := chi.Quantile(1 - alpha/2)
	critL := chi.Quantile(alpha / 2)
	tMin, tMax := 0.0, math.Max(100, 10*f.tau2)
	q := func(t float64) float64 { return qAt(m.x, m.y, m.v, t) }
	qMin, qMax := q(tMin), q(tMax)
	const maxIter = 1000
	lb, ub := math.NaN(), math.NaN()
	if qMin < critL {
		lb, ub = tMin, tMin
	} else {
		if qMax > critL {
			ub = tMax
		} else if r, ok := zeroin(ctx, func(t float64) float64 { return q(t) - critL }, tMin, tMax, qMin-critL, qMax-critL, rootTol, maxIter); ok {
			ub = r
		}
	}
	if qMax > critU {
		lb, ub = tMax, tMax
	} else if qMin < critU {
		lb = tMin
	} else if r, ok := zeroin(ctx, func(t float64) float64 { return q(t) - critU }, tMin, tMax, qMin-critU, qMax-critU, rootTol, maxIter); ok {
		lb = r
	}
	f.tau2Lo, f.tau2Hi = lb, ub
	f.i2Lo, f.i2Hi = 100*lb/(f.vt+lb), 100*ub/(f.vt+ub)
	f.h2Lo, f.h2Hi = lb/f.vt+1, ub/f.vt+1
}

// rSquared is metafor's pseudo-R² (in percent): for random-effects models
// the proportional reduction of τ² against the model without moderators
// (0 when that τ² is 0); for equal-effects models the adjusted R² of the
// weighted least-squares regression. NaN when the reduced model fails.
func rSquared(ctx context.Context, m uniModel, f uniFit) float64 {
	k := f.k
	if !m.method.IsRandom() {
		var mean, n float64
		for _, y := range m.y {
			mean += y
			n++
		}
		mean /= n
		var vy float64
		for _, y := range m.y {
			vy += (y - mean) * (y - mean)
		}
		if vy == 0 {
			return 0
		}
		w := weights(m.v, 0)
		var sw, swy float64
		for i, wi := range w {
			sw += wi
			swy += wi * m.y[i]
		}
		wm := swy / sw
		var rss, tss float64
		for i, wi := range w {
			var fit float64
			for j, xv := range m.x[i] {
				fit += xv * f.beta[j]
			}
			rss += wi * (m.y[i] - fit) * (m.y[i] - fit)
			tss += wi * (m.y[i] - wm) * (m.y[i] - wm)
		}
		r2 := 1 - rss/tss
		adj := 1 - (1-r2)*float64(k-1)/float64(k-f.p)
		return math.Max(0, 100*adj)
	}
	re, err := fitRMA(ctx, uniModel{y: m.y, v: m.v, method: m.method, test: m.test, level: m.level, ctl: m.ctl, noR2: true, noCI: true})
	if err != nil {
		return math.NaN()
	}
	if re.tau2 == 0 {
		return 0
	}
	return math.Max(0, 100*(re.tau2-f.tau2)/re.tau2)
}

// rMean is the mean with R's second pass correcting the rounding of the
// first, so that the mean of identical values is that value exactly.
func rMean(y []float64) float64 {
	n := float64(len(y))
	var s float64
	for _, v := range y {
		s += v
	}
	m := s / n
	var t float64
	for _, v := range y {
		t += v - m
	}
	return m + t/n
}

// errSingular is metafor's "Model matrix not of full rank. Cannot fit
// model." in words.
func errSingular() error {
	return errorf(ENOTESTIMABLE, "the model cannot be fitted: a moderator (or the standard error, for Egger's test) is constant or redundant across the studies")
}

// fullRank is metafor's check that no eigenvalue of X'X is at or below
// its evtol (1e-7).
func fullRank(x [][]float64) bool {
	g := gram(x, ones(len(x)))
	p := len(g)
	sym := mat.NewSymDense(p, nil)
	for i := 0; i < p; i++ {
		for j := i; j < p; j++ {
			sym.SetSym(i, j, g[i][j])
		}
	}
	var eig mat.EigenSym
	if !eig.Factorize(sym, false) {
		return false
	}
	for _, v := range eig.Values(nil) {
		if !(v > 1e-7) {
			return false
		}
	}
	return true
}

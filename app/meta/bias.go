package meta

import (
	"context"
	"fmt"
	"math"
	"sort"

	"gonum.org/v1/gonum/stat/distuv"
)

// maxExactKendall bounds the study count for which Begg's test computes
// the exact null distribution of Kendall's tau (O(k³) work); above it the
// normal approximation is used, with a note.
const maxExactKendall = 500

// modelInputs returns the estimable studies' effects, variances and indices
// in res.Studies, and the uni-model settings res was fitted with (MH and
// Peto results are treated as the equal-effects model metafor falls back to
// for their yi/vi).
func modelInputs(res Result) (y, v []float64, idx []int, m uniModel) {
	for i, s := range res.Studies {
		if s.Estimable {
			y, v, idx = append(y, s.YI), append(v, s.VI), append(idx, i)
		}
	}
	o := res.Options.withDefaults()
	m = uniModel{y: y, v: v, method: o.Method, test: o.Test, level: o.Level, ctl: o.Control}
	if o.Method == MH || o.Method == PETO {
		m.method, m.test = EE, TestZ
	}
	return y, v, idx, m
}

// EggerTest is Egger's regression test for funnel-plot asymmetry as
// metafor's regtest with its defaults (model "rma", predictor "sei"): the
// model refitted with the standard error as moderator, same estimator and
// test.
type EggerTest struct {
	// Stat is the z (or t, Knapp–Hartung) statistic of the sei coefficient,
	// Pval its p-value, DF the t degrees of freedom (0 for z).
	Stat Float `json:"zval"`
	Pval Float `json:"pval"`
	DF   int   `json:"df,omitempty"`
	// Slope is the sei coefficient.
	Slope Float `json:"slope"`
	// Limit is the limit estimate as sei → 0 (the intercept), with its CI.
	Limit     Float `json:"limit_est"`
	LimitCILB Float `json:"limit_ci_lb"`
	LimitCIUB Float `json:"limit_ci_ub"`
}

// Egger runs Egger's regression test on the studies of res.
func Egger(res Result) (EggerTest, error) {
	return egger(context.Background(), res)
}

func egger(ctx context.Context, res Result) (EggerTest, error) {
	y, v, _, m := modelInputs(res)
	if len(y) < 3 && (m.method.IsRandom() || len(y) < 2) {
		// metafor: "Number of parameters to be estimated is larger than
		// the number of observations."
		return EggerTest{}, errorf(ENOTESTIMABLE, "Egger's test needs at least 3 studies with a random-effects model, 2 with a common-effect model (there are %d)", len(y))
	}
	m.x = make([][]float64, len(y))
	for i := range y {
		m.x[i] = []float64{1, math.Sqrt(v[i])}
	}
	m.intercept, m.noR2 = true, true
	u, err := fitRMA(ctx, m)
	if err != nil {
		if ctx.Err() != nil {
			return EggerTest{}, stopped(ctx, "Egger's test")
		}
		return EggerTest{}, fmt.Errorf("the Egger test: %w", err)
	}
	return EggerTest{Stat: Float(u.stat[1]), Pval: Float(u.pval[1]), DF: u.df, Slope: Float(u.beta[1]),
		Limit: Float(u.beta[0]), LimitCILB: Float(u.ciLB[0]), LimitCIUB: Float(u.ciUB[0])}, nil
}

// BeggTest is Begg and Mazumdar's rank correlation test as metafor's
// ranktest: Kendall's tau between the standardized deviates from the
// equal-effects estimate and the sampling variances, with the exact
// p-value when there are no ties and the normal approximation otherwise.
type BeggTest struct {
	Tau   Float `json:"tau"`
	Pval  Float `json:"pval"`
	Exact bool  `json:"exact"`
	// Note says why the exact p-value was not used, if it was not.
	Note string `json:"note,omitempty"`
}

// Begg runs the rank correlation test on the studies of res.
func Begg(res Result) (BeggTest, error) {
	return begg(context.Background(), res)
}

func begg(ctx context.Context, res Result) (BeggTest, error) {
	y, v, _, _ := modelInputs(res)
	k := len(y)
	if k < 2 {
		return BeggTest{}, errorf(ENOTESTIMABLE, "Begg's test needs at least 2 studies (there is %d)", k)
	}
	var sw, swy float64
	for i := range y {
		sw += 1 / v[i]
		swy += y[i] / v[i]
	}
	theta, vb := swy/sw, 1/sw
	ys := make([]float64, k)
	for i := range y {
		ys[i] = (y[i] - theta) / math.Sqrt(v[i]-vb)
	}
	b, ok := kendallTest(ctx, ys, v)
	if !ok {
		return BeggTest{}, stopped(ctx, "Begg's test")
	}
	return b, nil
}

// kendallTest is R's cor.test(x, y, method = "kendall", exact = TRUE). ok
// is false when ctx was cancelled (checked for every row of the pairs).
func kendallTest(ctx context.Context, x, y []float64) (_ BeggTest, ok bool) {
	n := len(x)
	s, nx, ny, ok := kendallSums(x, y)
	if !ok {
		s, nx, ny, ok = kendallSumsPairs(ctx, x, y)
		if !ok {
			return BeggTest{}, false
		}
	}
	r := s / math.Sqrt(nx*ny)
	out := BeggTest{Tau: Float(r)}
	if math.IsNaN(r) || math.IsInf(r, 0) {
		out.Tau, out.Pval = Float(math.NaN()), Float(math.NaN())
		return out, true
	}
	fn := float64(n)
	ties := distinct(x) < n || distinct(y) < n
	if !ties && n <= maxExactKendall {
		q := math.RoundToEven((r + 1) * fn * (fn - 1) / 4)
		dist := kendallDist(n)
		cdf := func(q float64) float64 {
			var p float64
			for i := 0; i <= int(q) && i < len(dist); i++ {
				p += dist[i]
			}
			return p
		}
		var p float64
		if q > fn*(fn-1)/4 {
			p = 1 - cdf(q-1)
		} else {
			p = cdf(q)
		}
		out.Pval, out.Exact = Float(math.Min(2*p, 1)), true
		return out, true
	}
	if ties {
		out.Note = "Exact p-value not available with tied values; normal approximation used (as R)."
	} else {
		out.Note = fmt.Sprintf("More than %d studies: normal approximation used for the p-value.", maxExactKendall)
	}
	tx, ty := tieSizes(x), tieSizes(y)
	t0 := fn * (fn - 1) / 2
	var t1, t2, vt, vu, v1a, v1b, v2a, v2b float64
	for _, t := range tx {
		t1 += t * (t - 1) / 2
		vt += t * (t - 1) * (2*t + 5)
		v1a += t * (t - 1)
		v2a += t * (t - 1) * (t - 2)
	}
	for _, t := range ty {
		t2 += t * (t - 1) / 2
		vu += t * (t - 1) * (2*t + 5)
		v1b += t * (t - 1)
		v2b += t * (t - 1) * (t - 2)
	}
	sStat := r * math.Sqrt((t0-t1)*(t0-t2))
	varS := (fn*(fn-1)*(2*fn+5)-vt-vu)/18 + v1a*v1b/(2*fn*(fn-1)) + v2a*v2b/(9*fn*(fn-1)*(fn-2))
	z := sStat / math.Sqrt(varS)
	out.Pval = Float(normTwoSided(z))
	return out, true
}

// kendallSumsPairs returns, over all ordered pairs (i, j), the sums of
// sgn(xᵢ−xⱼ)·sgn(yᵢ−yⱼ), sgn(xᵢ−xⱼ)² and sgn(yᵢ−yⱼ)², visiting every pair
// (O(n²)); ok is false when ctx was cancelled (checked for every row).
func kendallSumsPairs(ctx context.Context, x, y []float64) (s, nx, ny float64, ok bool) {
	n := len(x)
	for i := 0; i < n; i++ {
		if ctx.Err() != nil {
			return 0, 0, 0, false
		}
		for j := 0; j < n; j++ {
			a, b := sgn(x[i]-x[j]), sgn(y[i]-y[j])
			s += a * b
			nx += a * a
			ny += b * b
		}
	}
	return s, nx, ny, true
}

// kendallSums returns the sums of kendallSumsPairs in O(n log n) by
// Knight's algorithm: sort by x then y; the discordant pairs are the
// inversions of y, counted by a merge sort; the tied pairs come from the
// runs of equal values. Every sum is a whole number below 2⁵³, so the
// result is kendallSumsPairs' to the last bit. ok is false (and the pairs
// must be visited) when a value is NaN, which is tied with every other.
func kendallSums(x, y []float64) (s, nx, ny float64, ok bool) {
	n := len(x)
	for i := range x {
		if math.IsNaN(x[i]) || math.IsNaN(y[i]) {
			return 0, 0, 0, false
		}
	}
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	sort.Slice(idx, func(a, b int) bool {
		i, j := idx[a], idx[b]
		return x[i] < x[j] || (x[i] == x[j] && y[i] < y[j])
	})
	pairs := func(t int64) int64 { return t * (t - 1) / 2 }
	var tiedX, tiedXY int64
	for a := 0; a < n; {
		b, c := a+1, a
		for ; b < n && x[idx[b]] == x[idx[a]]; b++ {
		}
		tiedX += pairs(int64(b - a))
		for c < b { // runs of equal y within the run of equal x
			d := c + 1
			for ; d < b && y[idx[d]] == y[idx[c]]; d++ {
			}
			tiedXY += pairs(int64(d - c))
			c = d
		}
		a = b
	}
	ys := make([]float64, n)
	for a, i := range idx {
		ys[a] = y[i]
	}
	discordant := inversions(ys, make([]float64, n))
	sort.Float64s(ys)
	var tiedY int64
	for a := 0; a < n; {
		b := a + 1
		for ; b < n && ys[b] == ys[a]; b++ {
		}
		tiedY += pairs(int64(b - a))
		a = b
	}
	all := pairs(int64(n))
	cMinusD := all - tiedX - tiedY + tiedXY - 2*discordant
	return float64(2 * cMinusD), float64(2 * (all - tiedX)), float64(2 * (all - tiedY)), true
}

// inversions sorts v (merge sort, buf as scratch of the same length) and
// returns the number of pairs i < j with v[i] > v[j].
func inversions(v, buf []float64) int64 {
	n := len(v)
	if n < 2 {
		return 0
	}
	m := n / 2
	inv := inversions(v[:m], buf[:m]) + inversions(v[m:], buf[m:])
	i, j, k := 0, m, 0
	for i < m && j < n {
		if v[j] < v[i] {
			inv += int64(m - i)
			buf[k] = v[j]
			j++
		} else {
			buf[k] = v[i]
			i++
		}
		k++
	}
	k += copy(buf[k:], v[i:m])
	copy(buf[k:], v[j:n])
	copy(v, buf)
	return inv
}

func sgn(d float64) float64 {
	switch {
	case d > 0:
		return 1
	case d < 0:
		return -1
	}
	return 0
}

func distinct(x []float64) int {
	m := make(map[float64]bool, len(x))
	for _, v := range x {
		m[v] = true
	}
	return len(m)
}

// tieSizes returns the sizes of the groups of equal values (size ≥ 2).
func tieSizes(x []float64) []float64 {
	c := map[float64]float64{}
	for _, v := range x {
		c[v]++
	}
	var out []float64
	for _, n := range c {
		if n > 1 {
			out = append(out, n)
		}
	}
	sort.Float64s(out)
	return out
}

// kendallDist returns P(T = t), t = 0..n(n−1)/2, for the number of
// concordant pairs of n untied observations under independence (R's
// ckendall/pKendall, as probabilities to avoid overflowing n!).
func kendallDist(n int) []float64 {
	size := n*(n-1)/2 + 1
	p, next := make([]float64, 1, size), make([]float64, 0, size)
	p[0] = 1
	for m := 2; m <= n; m++ {
		u := m * (m - 1) / 2
		next = next[:u+1]
		var window float64
		for t := 0; t <= u; t++ {
			if t < len(p) {
				window += p[t]
			}
			if j := t - m; j >= 0 && j < len(p) {
				window -= p[j]
			}
			next[t] = window / float64(m)
		}
		p, next = next, p
	}
	return p
}

// TrimFill is the trim-and-fill analysis of metafor's trimfill: the
// estimated number of missing studies k0 on the chosen side, and the model
// refitted with the filled (mirrored) studies added.
type TrimFill struct {
	// Estimator is "L0" or "R0".
	Estimator string `json:"estimator"`
	// Side is the side of the funnel plot the missing studies are imputed
	// on: "left" or "right" (chosen from the sign of Egger's slope, as
	// metafor, unless given).
	Side string `json:"side"`
	// K0 is the estimated number of missing studies, SEK0 its standard error.
	K0   int   `json:"k0"`
	SEK0 Float `json:"se_k0"`
	// Result is the model with the filled studies (the original result when
	// k0 = 0). metafor refits it with the z test at the 95% level.
	Result Result `json:"result"`
	// Filled are the imputed studies (yi, vi), labelled "Filled 1", ....
	Filled []StudyResult `json:"filled"`
}

// TrimFillAnalysis runs trim and fill on the studies of res with estimator
// "L0" (default) or "R0" and side "left", "right" or "" (chosen as metafor
// does). It needs an inverse-variance model (EE or random effects).
func TrimFillAnalysis(res Result, estimator, side string) (TrimFill, error) {
	return trimFill(context.Background(), res, estimator, side)
}

func trimFill(ctx context.Context, res Result, estimator, side string) (TrimFill, error) {
	if res.Method == MH || res.Method == PETO {
		return TrimFill{}, errorf(EINVALID, "trim and fill needs an inverse-variance model (EE or a random-effects model), not %s", res.Method.Label())
	}
	if estimator == "" {
		estimator = "L0"
	}
	if estimator != "L0" && estimator != "R0" {
		return TrimFill{}, errorf(EINVALID, "unknown trim-and-fill estimator %q (use L0 or R0)", estimator)
	}
	y0, v0, _, m := modelInputs(res)
	k := len(y0)
	if k < 3 {
		return TrimFill{}, errorf(ENOTESTIMABLE, "trim and fill needs at least 3 studies (there are %d)", k)
	}
	base := uniModel{method: m.method, test: TestZ, level: 0.95, ctl: m.ctl, noR2: true}
	if side == "" {
		mm := base
		mm.y, mm.v = y0, v0
		mm.x = make([][]float64, k)
		for i := range y0 {
			mm.x[i] = []float64{1, math.Sqrt(v0[i])}
		}
		mm.intercept, mm.noCI = true, true
		u, err := fitRMA(ctx, mm)
		if err != nil {
			if ctx.Err() != nil {
				return TrimFill{}, stopped(ctx, "Trim and fill")
			}
			return TrimFill{}, fmt.Errorf("trim and fill (choosing the side): %w", err)
		}
		side = "left"
		if u.beta[1] < 0 {
			side = "right"
		}
	}
	if side != "left" && side != "right" {
		return TrimFill{}, errorf(EINVALID, "unknown side %q (use left or right)", side)
	}
	sign := 1.0
	if side == "right" {
		sign = -1
	}
	type sv struct{ y, v float64 }
	st := make([]sv, k)
	for i := range y0 {
		st[i] = sv{sign * y0[i], v0[i]}
	}
	sort.SliceStable(st, func(a, b int) bool { return st[a].y < st[b].y })
	y := make([]float64, k)
	v := make([]float64, k)
	for i, s := range st {
		y[i], v[i] = s.y, s.v
	}
	fk := float64(k)
	k0, k0sav := 0, -1
	var beta, seK0 float64
	var yc []float64
	for iter := 0; k0 != k0sav; iter++ {
		if iter >= m.ctl.MaxIter {
			return TrimFill{}, errorf(ENOTCONVERGED, "trim and fill did not converge in %d iterations", m.ctl.MaxIter)
		}
		k0sav = k0
		mm := base
		mm.y, mm.v, mm.noCI = y[:k-k0], v[:k-k0], true
		u, err := fitRMA(ctx, mm)
		if err != nil {
			if ctx.Err() != nil {
				return TrimFill{}, stopped(ctx, "Trim and fill")
			}
			return TrimFill{}, fmt.Errorf("trim and fill: %w", err)
		}
		beta = u.beta[0]
		yc = make([]float64, k)
		for i := range y {
			yc[i] = y[i] - beta
		}
		rs := signedRanks(yc)
		var est float64
		switch estimator {
		case "R0":
			maxNeg := 0.0
			for _, r := range rs {
				if r < 0 && -r > maxNeg {
					maxNeg = -r
				}
			}
			est = (fk - maxNeg) - 1
			seK0 = math.Sqrt(2*math.Max(0, est) + 2)
		default:
			var sr float64
			for _, r := range rs {
				if r > 0 {
					sr += r
				}
			}
			est = (4*sr - fk*(fk+1)) / (2*fk - 1)
			varSr := (fk*(fk+1)*(2*fk+1) + 10*est*est*est + 27*est*est + 17*est - 18*fk*est*est - 18*fk*est + 6*fk*fk*est) / 24
			seK0 = 4 * math.Sqrt(varSr) / (2*fk - 1)
		}
		k0 = int(math.Max(0, math.RoundToEven(est)))
		seK0 = math.Max(0, seK0)
		if k0 > k-1 {
			k0 = k - 1
		}
	}
	tf := TrimFill{Estimator: estimator, Side: side, K0: k0, SEK0: Float(seK0), Result: res}
	if k0 == 0 {
		return tf, nil
	}
	// Filled studies: mirror images of the k0 most extreme ones about beta.
	yf := append([]float64(nil), y0...)
	vf := append([]float64(nil), v0...)
	for i := k - k0; i < k; i++ {
		c := yc[i] - beta
		if side == "right" {
			c = -(yc[i] - beta)
		}
		fy := -c
		yf, vf = append(yf, fy), append(vf, v[i])
		tf.Filled = append(tf.Filled, StudyResult{Label: fmt.Sprintf("Filled %d", len(tf.Filled)+1), Estimable: true, YI: fy, VI: v[i], SEI: math.Sqrt(v[i])})
	}
	mm := base
	mm.y, mm.v = yf, vf
	u, err := fitRMA(ctx, mm)
	if err != nil {
		if ctx.Err() != nil {
			return TrimFill{}, stopped(ctx, "Trim and fill")
		}
		return TrimFill{}, fmt.Errorf("trim and fill (filled model): %w", err)
	}
	r := res
	r.Test, r.Level, r.Model, r.DF = TestZ, 0.95, modelName(res.Method, TestZ), 0
	r.K = len(yf)
	r.Est, r.SE, r.Stat, r.Pval, r.CILB, r.CIUB = u.beta[0], u.se[0], u.stat[0], u.pval[0], u.ciLB[0], u.ciUB[0]
	r.Tau2, r.Tau, r.SETau2 = u.tau2, math.Sqrt(u.tau2), u.seTau2
	r.Tau2CILB, r.Tau2CIUB, r.I2CILB, r.I2CIUB, r.H2CILB, r.H2CIUB = u.tau2Lo, u.tau2Hi, u.i2Lo, u.i2Hi, u.h2Lo, u.h2Hi
	r.I2, r.H2, r.QE, r.QEp, r.QEdf, r.Iterations = u.i2, u.h2, u.qe, u.qep, u.qeDF, u.iter
	r.PILB, r.PIUB = math.NaN(), math.NaN()
	if res.Method.IsRandom() {
		h := u.crit * math.Sqrt(u.se[0]*u.se[0]+u.tau2)
		r.PILB, r.PIUB = u.beta[0]-h, u.beta[0]+h
	}
	z := distuv.UnitNormal.Quantile(0.975)
	var sw float64
	for _, wi := range u.w {
		sw += wi
	}
	r.Studies = nil
	for i := range yf {
		se := math.Sqrt(vf[i])
		label := ""
		if i < k {
			label = "" // filled in below from res
		} else {
			label = tf.Filled[i-k].Label
		}
		r.Studies = append(r.Studies, StudyResult{Label: label, Estimable: true, YI: yf[i], VI: vf[i], SEI: se,
			CILB: yf[i] - z*se, CIUB: yf[i] + z*se, Weight: 100 * u.w[i] / sw})
	}
	j := 0
	for _, s := range res.Studies {
		if s.Estimable {
			r.Studies[j].Label, r.Studies[j].Row = s.Label, s.Row
			j++
		}
	}
	for i := range tf.Filled {
		tf.Filled[i].CILB, tf.Filled[i].CIUB = r.Studies[k+i].CILB, r.Studies[k+i].CIUB
		tf.Filled[i].Weight = r.Studies[k+i].Weight
	}
	r.Notes = append(append([]string(nil), res.Notes...), fmt.Sprintf("Trim and fill (%s): %s imputed on the %s side.", estimator, plural(k0, "study", "studies"), side))
	tf.Result = r
	return tf, nil
}

// signedRanks returns sign(x)·rank(|x|) with ties ranked in order of
// appearance (R's rank(ties.method = "first")).
func signedRanks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return math.Abs(x[idx[a]]) < math.Abs(x[idx[b]]) })
	r := make([]float64, len(x))
	for rank, i := range idx {
		r[i] = sgn(x[i]) * float64(rank+1)
	}
	return r
}

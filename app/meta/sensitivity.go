package meta

import (
	"context"
	"fmt"
	"math"
	"runtime"
	"runtime/debug"
	"sort"
	"sync"
	"sync/atomic"

	"github.com/clinsight/clinsight/internal/progress"

	"gonum.org/v1/gonum/stat/distuv"
)

// SensitivityRow is one refit of a leave-one-out or cumulative analysis,
// with metafor's columns.
type SensitivityRow struct {
	// Study is the study left out (leave-one-out) or added last (cumulative).
	Study string `json:"study"`
	// Est, SE, Stat (z or t), Pval, CILB, CIUB describe the pooled estimate.
	Est  Float `json:"estimate"`
	SE   Float `json:"se"`
	Stat Float `json:"stat"`
	Pval Float `json:"pval"`
	CILB Float `json:"ci_lb"`
	CIUB Float `json:"ci_ub"`
	// Q and Qp are Cochran's Q and its p-value; Tau2, I2, H2 the
	// heterogeneity (Tau2 0 for common-effect models).
	Q    Float `json:"Q"`
	Qp   Float `json:"Qp"`
	Tau2 Float `json:"tau2"`
	I2   Float `json:"I2"`
	H2   Float `json:"H2"`
	// Note says why the refit failed (all values then null), as metafor
	// gives NA.
	Note string `json:"note,omitempty"`
}

func nanRow(label, note string) SensitivityRow {
	n := Float(math.NaN())
	return SensitivityRow{Study: label, Est: n, SE: n, Stat: n, Pval: n, CILB: n, CIUB: n, Q: n, Qp: n, Tau2: n, I2: n, H2: n, Note: note}
}

// refit is what the leave-one-out, cumulative and influence analyses keep
// of one refit: the pooled estimate and heterogeneity (never the studies'
// weights, so k refits take O(k) memory), or why it failed.
type refit struct {
	est, se, stat, pval, ciLB, ciUB float64
	qe, qep, tau2, i2, h2           float64
	vb, s2w                         float64
	// swv is Σ 1/(vᵢ + τ²) over all the studies of the full model, with
	// this refit's τ² (influence's DFBETAS).
	swv float64
	err error
}

func refitOf(u uniFit) refit {
	return refit{est: u.beta[0], se: u.se[0], stat: u.stat[0], pval: u.pval[0], ciLB: u.ciLB[0], ciUB: u.ciUB[0],
		qe: u.qe, qep: u.qep, tau2: u.tau2, i2: u.i2, h2: u.h2, vb: u.vb[0][0], s2w: u.s2w}
}

func (r refit) row(label string) SensitivityRow {
	if r.err != nil {
		return nanRow(label, r.err.Error())
	}
	return SensitivityRow{Study: label, Est: Float(r.est), SE: Float(r.se), Stat: Float(r.stat), Pval: Float(r.pval),
		CILB: Float(r.ciLB), CIUB: Float(r.ciUB), Q: Float(r.qe), Qp: Float(r.qep), Tau2: Float(r.tau2), I2: Float(r.i2), H2: Float(r.h2)}
}

func rowFromResult(label string, r Result) SensitivityRow {
	return SensitivityRow{Study: label, Est: Float(r.Est), SE: Float(r.SE), Stat: Float(r.Stat), Pval: Float(r.Pval),
		CILB: Float(r.CILB), CIUB: Float(r.CIUB), Q: Float(r.QE), Qp: Float(r.QEp), Tau2: Float(r.Tau2), I2: Float(r.I2), H2: Float(r.H2)}
}

// minParallelRefits is the number of refits from which they are spread
// over the processors; below it one goroutine does them all.
const minParallelRefits = 64

// refits calls fit(i) for i = 0..n−1, spread over the processors when n is
// large (each refit is independent of the others and writes only its own
// slot, so the numbers are those of a loop). It stops as soon as ctx is
// cancelled, with an ECANCELLED error naming what, and reports how many
// refits are done through prog (about every 1% of them).
func refits(ctx context.Context, what string, n int, prog progress.Func, fit func(i int)) error {
	if ctx.Err() != nil {
		return stopped(ctx, what)
	}
	every := max(1, int64(n)/100)
	var next, done atomic.Int64
	var mu sync.Mutex // one progress report at a time, counts increasing
	last := int64(-1)
	report := func(d int64) {
		if prog == nil || (d%every != 0 && d != int64(n)) {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if d <= last {
			return // a later count was reported first
		}
		last = d
		prog.Send(progress.Report{Stage: fmt.Sprintf("%s: %d of %d", what, d, n), Done: d, Total: int64(n), Unit: "refits"})
	}
	report(0)
	// A panic in a refit stops the others and is raised again in the
	// caller's goroutine (where it would have been without the workers).
	var (
		quit     atomic.Bool
		panicMu  sync.Mutex
		panicked any
	)
	work := func() {
		defer func() {
			if r := recover(); r != nil {
				quit.Store(true)
				panicMu.Lock()
				if panicked == nil {
					panicked = fmt.Sprintf("%v\n%s", r, debug.Stack())
				}
				panicMu.Unlock()
			}
		}()
		for ctx.Err() == nil && !quit.Load() {
			i := next.Add(1) - 1
			if i >= int64(n) {
				return
			}
			fit(int(i))
			report(done.Add(1))
		}
	}
	workers := 1
	if n >= minParallelRefits {
		workers = min(runtime.GOMAXPROCS(0), n)
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			work()
		}()
	}
	work()
	wg.Wait()
	if panicked != nil {
		panic(panicked)
	}
	if ctx.Err() != nil {
		return stopped(ctx, what)
	}
	return nil
}

// LeaveOneOut refits the model of res without each study in turn, as
// metafor's leave1out: from the studies' yi and vi for inverse-variance
// models (one row per estimable study); for MH and Peto by re-pooling the
// tables without each one (studies are then the input of res, one row per
// table). A refit that fails gives a row of nulls with the reason.
func LeaveOneOut(studies []Study, res Result) ([]SensitivityRow, error) {
	return leaveOneOut(context.Background(), studies, res, nil, nil)
}

// leaveOneOut is LeaveOneOut stopping when ctx is cancelled; dels, when
// not nil, are the deletion refits of res already made (deletionFits).
func leaveOneOut(ctx context.Context, studies []Study, res Result, dels []refit, prog progress.Func) ([]SensitivityRow, error) {
	const what = "Leave-one-out analysis"
	if res.K < 2 {
		return nil, errorf(ENOTESTIMABLE, "leave-one-out needs at least 2 studies")
	}
	if res.Method == MH || res.Method == PETO {
		used := tablesOf(studies)
		out := make([]SensitivityRow, len(used))
		err := refits(ctx, what, len(used), prog, func(i int) {
			rest := append(append([]Study(nil), used[:i]...), used[i+1:]...)
			r, err := analyze(ctx, rest, res.Options)
			if err != nil {
				out[i] = nanRow(used[i].Label, err.Error())
				return
			}
			out[i] = rowFromResult(used[i].Label, r)
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	if dels == nil {
		var err error
		if dels, err = deletionFits(ctx, what, res, prog); err != nil {
			return nil, err
		}
	}
	_, _, idx, _ := modelInputs(res)
	out := make([]SensitivityRow, len(dels))
	for i, d := range dels {
		out[i] = d.row(res.Studies[idx[i]].Label)
	}
	return out, nil
}

// deletionFits refits the inverse-variance model of res without each of
// its estimable studies in turn (leave-one-out and influence share them).
func deletionFits(ctx context.Context, what string, res Result, prog progress.Func) ([]refit, error) {
	y, v, _, m := modelInputs(res)
	m.noR2, m.noCI = true, true
	out := make([]refit, len(y))
	err := refits(ctx, what, len(y), prog, func(i int) {
		mm := m
		mm.y = append(append([]float64(nil), y[:i]...), y[i+1:]...)
		mm.v = append(append([]float64(nil), v[:i]...), v[i+1:]...)
		u, err := fitRMA(ctx, mm)
		if err != nil {
			out[i] = refit{err: err}
			return
		}
		r := refitOf(u)
		for _, vi := range v {
			r.swv += 1 / (vi + u.tau2)
		}
		out[i] = r
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// tablesOf returns the studies Analyze pools (Missing ones omitted).
func tablesOf(studies []Study) []Study {
	out := make([]Study, 0, len(studies))
	for _, s := range studies {
		if !s.Missing {
			out = append(out, s)
		}
	}
	return out
}

// Cumulative adds the studies one at a time and refits after each, as
// metafor's cumul: in data order when key is nil, else in increasing order
// of key (one value per study of res.Studies, e.g. the publication year;
// ties keep data order). Rows follow that order.
func Cumulative(studies []Study, res Result, key []float64) ([]SensitivityRow, error) {
	return cumulative(context.Background(), studies, res, key, nil)
}

// cumulative is Cumulative stopping when ctx is cancelled.
func cumulative(ctx context.Context, studies []Study, res Result, key []float64, prog progress.Func) ([]SensitivityRow, error) {
	const what = "Cumulative analysis"
	if key != nil && len(key) != len(res.Studies) {
		return nil, errorf(EINVALID, "the order has %d values for %d studies", len(key), len(res.Studies))
	}
	order := make([]int, len(res.Studies))
	for i := range order {
		order[i] = i
	}
	if key != nil {
		sort.SliceStable(order, func(a, b int) bool { return key[order[a]] < key[order[b]] })
	}
	if res.Method == MH || res.Method == PETO {
		used := tablesOf(studies)
		if len(used) != len(res.Studies) {
			return nil, errorf(EINVALID, "the studies do not match the result")
		}
		sorted := make([]Study, len(order))
		for j, i := range order {
			sorted[j] = used[i]
		}
		out := make([]SensitivityRow, len(sorted))
		err := refits(ctx, what, len(sorted), prog, func(j int) {
			r, err := analyze(ctx, sorted[:j+1:j+1], res.Options)
			if err != nil {
				out[j] = nanRow(sorted[j].Label, err.Error())
				return
			}
			out[j] = rowFromResult(sorted[j].Label, r)
		})
		if err != nil {
			return nil, err
		}
		return out, nil
	}
	_, _, _, m := modelInputs(res)
	m.noR2, m.noCI = true, true
	var y, v []float64
	var labels []string
	for _, i := range order {
		if s := res.Studies[i]; s.Estimable {
			y, v, labels = append(y, s.YI), append(v, s.VI), append(labels, s.Label)
		}
	}
	if len(y) == 0 {
		return nil, nil
	}
	out := make([]SensitivityRow, len(y))
	err := refits(ctx, what, len(y), prog, func(j int) {
		mm := m
		mm.y, mm.v = y[:j+1:j+1], v[:j+1:j+1]
		u, err := fitRMA(ctx, mm)
		if err != nil {
			out[j] = nanRow(labels[j], err.Error())
			return
		}
		out[j] = refitOf(u).row(labels[j])
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// InfluenceRow holds the case diagnostics of one study, as metafor's
// influence.rma.uni.
type InfluenceRow struct {
	Study string `json:"study"`
	// RStudent is the externally standardized residual.
	RStudent Float `json:"rstudent"`
	// DFFITS, CookD (Cook's distance) and CovR (covariance ratio) measure
	// the study's influence on the pooled estimate.
	DFFITS Float `json:"dffits"`
	CookD  Float `json:"cook_d"`
	CovR   Float `json:"cov_r"`
	// Tau2Del and QEDel are τ² and Q with the study left out.
	Tau2Del Float `json:"tau2_del"`
	QEDel   Float `json:"QE_del"`
	// Hat is the leverage, Weight the weight in percent.
	Hat    Float `json:"hat"`
	Weight Float `json:"weight"`
	// DFBETAS is the standardized change of the estimate.
	DFBETAS Float `json:"dfbetas"`
	// Influential is metafor's flag ("*"): |DFFITS| > 3√(p/(k−p)), or
	// P(χ²₁ ≤ Cook's D) > 0.5, or hat > 3p/k, or |DFBETAS| > 1.
	Influential bool `json:"influential"`
}

// Influence computes the influence diagnostics of every estimable study of
// an inverse-variance result, refitting without each study.
func Influence(res Result) ([]InfluenceRow, error) {
	return influence(context.Background(), res, nil, nil)
}

// influence is Influence stopping when ctx is cancelled; dels, when not
// nil, are the deletion refits of res already made (deletionFits).
func influence(ctx context.Context, res Result, dels []refit, prog progress.Func) ([]InfluenceRow, error) {
	const what = "Influence diagnostics"
	if res.Method == MH || res.Method == PETO {
		return nil, errorf(EINVALID, "influence diagnostics need an inverse-variance model (EE or a random-effects model), not %s", res.Method.Label())
	}
	y, v, idx, m := modelInputs(res)
	k := len(y)
	if k < 2 {
		return nil, errorf(ENOTESTIMABLE, "influence diagnostics need at least 2 studies")
	}
	m.noCI = true
	full, err := fitRMA(ctx, m)
	if err != nil {
		if ctx.Err() != nil {
			return nil, stopped(ctx, what)
		}
		return nil, err
	}
	if dels == nil {
		if dels, err = deletionFits(ctx, what, res, prog); err != nil {
			return nil, err
		}
	}
	x := interceptOnly(k)
	p := 1
	svb, ldVB, okVB := symInverse(full.vb)
	var sw float64
	for _, w := range full.w {
		sw += w
	}
	out := make([]InfluenceRow, k)
	nan := Float(math.NaN())
	for i := 0; i < k; i++ {
		hat := full.w[i] * x[i][0] * x[i][0] / sw // diag of X(X'WX)⁻¹X'W
		if hat > 1-10*0x1p-52 {
			hat = 1
		}
		row := InfluenceRow{Study: res.Studies[idx[i]].Label, Hat: Float(hat), Weight: Float(100 * full.w[i] / sw),
			RStudent: nan, DFFITS: nan, CookD: nan, CovR: nan, Tau2Del: nan, QEDel: nan, DFBETAS: nan}
		d := dels[i]
		if d.err != nil {
			out[i] = row
			continue
		}
		row.Tau2Del, row.QEDel = Float(d.tau2), Float(d.qe)
		delpred := d.est
		vdelpred := d.vb
		row.DFFITS = Float((full.beta[0] - delpred) / math.Sqrt(d.s2w*hat*(d.tau2+v[i])))
		vbDel := 1 / d.swv
		dfb := full.beta[0] - d.est
		row.DFBETAS = Float(dfb / math.Sqrt(d.s2w*vbDel))
		if okVB {
			row.CookD = Float(dfb * svb[0][0] * dfb)
			row.CovR = Float(math.Exp(math.Log(d.vb) - ldVB)) // det(vb₋ᵢ)/det(vb)
		}
		resid := y[i] - delpred
		if math.Abs(resid) < 100*0x1p-52 {
			resid = 0
		}
		row.RStudent = Float(resid / math.Sqrt(v[i]*d.s2w+vdelpred+d.tau2*d.s2w))
		out[i] = row
	}
	for i := range out {
		r := &out[i]
		fk, fp := float64(k), float64(p)
		r.Influential = math.Abs(float64(r.DFFITS)) > 3*math.Sqrt(fp/(fk-fp)) ||
			distuv.ChiSquared{K: fp}.CDF(float64(r.CookD)) > 0.5 ||
			float64(r.Hat) > 3*fp/fk || math.Abs(float64(r.DFBETAS)) > 1
	}
	return out, nil
}

package meta

import (
	"math"
	"sort"

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

func rowFromFit(label string, u uniFit) SensitivityRow {
	return SensitivityRow{Study: label, Est: Float(u.beta[0]), SE: Float(u.se[0]), Stat: Float(u.stat[0]), Pval: Float(u.pval[0]),
		CILB: Float(u.ciLB[0]), CIUB: Float(u.ciUB[0]), Q: Float(u.qe), Qp: Float(u.qep), Tau2: Float(u.tau2), I2: Float(u.i2), H2: Float(u.h2)}
}

func rowFromResult(label string, r Result) SensitivityRow {
	return SensitivityRow{Study: label, Est: Float(r.Est), SE: Float(r.SE), Stat: Float(r.Stat), Pval: Float(r.Pval),
		CILB: Float(r.CILB), CIUB: Float(r.CIUB), Q: Float(r.QE), Qp: Float(r.QEp), Tau2: Float(r.Tau2), I2: Float(r.I2), H2: Float(r.H2)}
}

// LeaveOneOut refits the model of res without each study in turn, as
// metafor's leave1out: from the studies' yi and vi for inverse-variance
// models (one row per estimable study); for MH and Peto by re-pooling the
// tables without each one (studies are then the input of res, one row per
// table). A refit that fails gives a row of nulls with the reason.
func LeaveOneOut(studies []Study, res Result) ([]SensitivityRow, error) {
	if res.K < 2 {
		return nil, errorf(ENOTESTIMABLE, "leave-one-out needs at least 2 studies")
	}
	if res.Method == MH || res.Method == PETO {
		used := tablesOf(studies)
		out := make([]SensitivityRow, 0, len(used))
		for i := range used {
			rest := append(append([]Study(nil), used[:i]...), used[i+1:]...)
			r, err := Analyze(rest, res.Options)
			if err != nil {
				out = append(out, nanRow(used[i].Label, err.Error()))
				continue
			}
			out = append(out, rowFromResult(used[i].Label, r))
		}
		return out, nil
	}
	y, v, idx, m := modelInputs(res)
	m.noR2 = true
	out := make([]SensitivityRow, 0, len(y))
	for i := range y {
		mm := m
		mm.y = append(append([]float64(nil), y[:i]...), y[i+1:]...)
		mm.v = append(append([]float64(nil), v[:i]...), v[i+1:]...)
		label := res.Studies[idx[i]].Label
		u, err := fitRMA(mm)
		if err != nil {
			out = append(out, nanRow(label, err.Error()))
			continue
		}
		out = append(out, rowFromFit(label, u))
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
		out := make([]SensitivityRow, 0, len(order))
		var sub []Study
		for _, i := range order {
			sub = append(sub, used[i])
			r, err := Analyze(sub, res.Options)
			if err != nil {
				out = append(out, nanRow(used[i].Label, err.Error()))
				continue
			}
			out = append(out, rowFromResult(used[i].Label, r))
		}
		return out, nil
	}
	_, _, _, m := modelInputs(res)
	m.noR2 = true
	var out []SensitivityRow
	var y, v []float64
	for _, i := range order {
		s := res.Studies[i]
		if !s.Estimable {
			continue
		}
		y, v = append(y, s.YI), append(v, s.VI)
		mm := m
		mm.y, mm.v = append([]float64(nil), y...), append([]float64(nil), v...)
		u, err := fitRMA(mm)
		if err != nil {
			out = append(out, nanRow(s.Label, err.Error()))
			continue
		}
		out = append(out, rowFromFit(s.Label, u))
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
	if res.Method == MH || res.Method == PETO {
		return nil, errorf(EINVALID, "influence diagnostics need an inverse-variance model (EE or a random-effects model), not %s", res.Method.Label())
	}
	y, v, idx, m := modelInputs(res)
	k := len(y)
	if k < 2 {
		return nil, errorf(ENOTESTIMABLE, "influence diagnostics need at least 2 studies")
	}
	full, err := fitRMA(m)
	if err != nil {
		return nil, err
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
		mm := m
		mm.noR2 = true
		mm.y = append(append([]float64(nil), y[:i]...), y[i+1:]...)
		mm.v = append(append([]float64(nil), v[:i]...), v[i+1:]...)
		d, err := fitRMA(mm)
		if err != nil {
			out[i] = row
			continue
		}
		row.Tau2Del, row.QEDel = Float(d.tau2), Float(d.qe)
		delpred := d.beta[0]
		vdelpred := d.vb[0][0]
		row.DFFITS = Float((full.beta[0] - delpred) / math.Sqrt(d.s2w*hat*(d.tau2+v[i])))
		var swd float64
		for _, vi := range v {
			swd += 1 / (vi + d.tau2)
		}
		vbDel := 1 / swd
		dfb := full.beta[0] - d.beta[0]
		row.DFBETAS = Float(dfb / math.Sqrt(d.s2w*vbDel))
		if okVB {
			row.CookD = Float(dfb * svb[0][0] * dfb)
			row.CovR = Float(math.Exp(math.Log(d.vb[0][0]) - ldVB)) // det(vb₋ᵢ)/det(vb)
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

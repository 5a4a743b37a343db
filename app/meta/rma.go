package meta

import (
	"context"
	"math"
)

// llTol is metafor's control$tol, .Machine$double.eps^0.25, used to decide
// whether τ² = 0 has a higher (restricted) likelihood than the ML or REML
// solution.
const llTol = 0x1p-13

// fit is the outcome of pooling: an intercept-only rma.uni, rma.mh or
// rma.peto.
type fit struct {
	est, se, zval, pval, ciLB, ciUB float64
	crit                            float64 // critical value of the CI
	df                              int     // t degrees of freedom, 0 for z
	tau2, seTau2                    float64 // seTau2 NaN when not available
	tau2Lo, tau2Hi                  float64 // Q-profile CI of τ², NaN when not available
	i2Lo, i2Hi, h2Lo, h2Hi          float64
	qe, qep, i2, h2                 float64
	qeDF                            int
	iter                            int
	notes                           []string
}

// noCI returns f with the τ², I² and H² intervals undefined.
func (f fit) noCI() fit {
	nan := math.NaN()
	f.tau2Lo, f.tau2Hi, f.i2Lo, f.i2Hi, f.h2Lo, f.h2Hi = nan, nan, nan, nan, nan, nan
	return f
}

func weights(v []float64, tau2 float64) []float64 {
	w := make([]float64, len(v))
	for i := range v {
		w[i] = 1 / (v[i] + tau2)
	}
	return w
}

// fitUni is metafor's rma.uni for an intercept-only model with all vi > 0.
func fitUni(ctx context.Context, y, v []float64, method Method, test Test, level float64, ctl Control) (fit, error) {
	u, err := fitRMA(ctx, uniModel{y: y, v: v, method: method, test: test, level: level, ctl: ctl})
	if err != nil {
		return fit{}, err
	}
	return fit{
		est: u.beta[0], se: u.se[0], zval: u.stat[0], pval: u.pval[0], ciLB: u.ciLB[0], ciUB: u.ciUB[0],
		crit: u.crit, df: u.df, tau2: u.tau2, seTau2: u.seTau2,
		tau2Lo: u.tau2Lo, tau2Hi: u.tau2Hi, i2Lo: u.i2Lo, i2Hi: u.i2Hi, h2Lo: u.h2Lo, h2Hi: u.h2Hi,
		qe: u.qe, qep: u.qep, i2: u.i2, h2: u.h2, qeDF: u.qeDF, iter: u.iter, notes: u.notes,
	}, nil
}

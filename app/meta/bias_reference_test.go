package meta

import (
	"fmt"
	"testing"
)

// TestMetaforSmallStudyEffects compares Egger's test (regtest), Begg's test
// (ranktest) and trim and fill (trimfill, L0 and R0) with metafor on every
// 2x2 dataset, OR/RR/RD, EE/DL/REML/PM.
func TestMetaforSmallStudyEffects(t *testing.T) {
	tab := readRefTable(t, "metafor_bias.csv")
	cache := map[string][]Study{}
	eg := &agreement{tol: 1e-8, abs: 1e-10}
	bg := &agreement{tol: 1e-8, abs: 1e-10}
	tf := &agreement{tol: 1e-8, abs: 1e-10}
	for _, row := range tab.rows {
		ds, measure, model, est := tab.str(t, row, "dataset"), tab.str(t, row, "measure"), tab.str(t, row, "model"), tab.str(t, row, "estimator")
		st, ok := cache[ds]
		if !ok {
			st = loadDataset(t, ds)
			cache[ds] = st
		}
		name := fmt.Sprintf("%s %s %s", ds, measure, model)
		res := mustAnalyze(t, st, Options{Measure: Measure(measure), Method: Method(model)})
		if e, err := Egger(res); err != nil {
			t.Errorf("%s: Egger: %v", name, err)
		} else {
			eg.check(t, name+" regtest z", float64(e.Stat), tab.num(t, row, "reg_z"))
			eg.check(t, name+" regtest p", float64(e.Pval), tab.num(t, row, "reg_p"))
			eg.check(t, name+" regtest limit", float64(e.Limit), tab.num(t, row, "reg_est"))
		}
		if b, err := Begg(res); err != nil {
			t.Errorf("%s: Begg: %v", name, err)
		} else {
			bg.check(t, name+" ranktest tau", float64(b.Tau), tab.num(t, row, "rank_tau"))
			bg.check(t, name+" ranktest p", float64(b.Pval), tab.num(t, row, "rank_p"))
		}
		f, err := TrimFillAnalysis(res, est, "")
		if tab.str(t, row, "k0") == "NA" {
			if err == nil {
				t.Errorf("%s %s: metafor's trimfill stops (a refit does not converge) but TrimFillAnalysis gives a result", name, est)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s %s: trim and fill: %v", name, est, err)
			continue
		}
		if got, want := f.K0, int(tab.num(t, row, "k0")); got != want {
			t.Errorf("%s %s: k0 = %d, metafor %d", name, est, got, want)
		}
		if got, want := f.Side, tab.str(t, row, "side"); got != want {
			t.Errorf("%s %s: side %s, metafor %s", name, est, got, want)
		}
		for _, c := range []struct {
			col string
			got float64
		}{{"tf_est", f.Result.Est}, {"tf_se", f.Result.SE}, {"tf_ci_lb", f.Result.CILB}, {"tf_ci_ub", f.Result.CIUB}, {"tf_tau2", f.Result.Tau2}} {
			tf.check(t, name+" "+est+" "+c.col, c.got, tab.num(t, row, c.col))
		}
	}
	eg.report(t, "regtest")
	bg.report(t, "ranktest")
	tf.report(t, "trimfill")
}

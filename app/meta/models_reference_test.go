package meta

import (
	"fmt"
	"strings"
	"testing"
)

// TestMetaforModels compares every pooled model of metafor_models.csv
// (every 2x2 dataset of the shared data, OR/RR/RD, the estimators EE, DL,
// REML, ML, HE, HS, SJ, PM, EB with z and Knapp–Hartung tests, MH and Peto)
// with Analyze: estimate, SE, test, CI, τ² with its SE and Q-profile CI, I²,
// H² with their CIs, Q and its p-value.
func TestMetaforModels(t *testing.T) {
	cache := map[string][]Study{}
	compareModels(t, "metafor_models.csv", func(ds string) []Study {
		studies, ok := cache[ds]
		if !ok {
			studies = loadDataset(t, ds)
			cache[ds] = studies
		}
		return studies
	}, 19)
}

// TestMetaforEdgeCases: k = 2, three identical studies and zero cells in
// every study, with every estimator and Peto (metafor_edge.csv).
func TestMetaforEdgeCases(t *testing.T) {
	edge := map[string][]Study{
		"k2":        binaryStudies([]float64{4, 10}, []float64{50, 60}, []float64{9, 12}, []float64{50, 61}),
		"identical": binaryStudies([]float64{5, 5, 5}, []float64{50, 50, 50}, []float64{9, 9, 9}, []float64{50, 50, 50}),
		"allzero":   binaryStudies([]float64{0, 1, 0, 2}, []float64{20, 25, 30, 40}, []float64{3, 0, 2, 0}, []float64{20, 24, 31, 40}),
	}
	compareModels(t, "metafor_edge.csv", func(ds string) []Study { return edge[ds] }, 19)
}

func compareModels(t *testing.T, file string, studiesOf func(string) []Study, wantModels int) {
	tab := readRefTable(t, file)
	agree := map[string]*agreement{}
	// p-values span 1e-80..1: relative, looser (distribution tails).
	pv := &agreement{tol: 1e-6, abs: 1e-300}
	for _, row := range tab.rows {
		ds, measure, model, test := tab.str(t, row, "dataset"), tab.str(t, row, "measure"), tab.str(t, row, "model"), tab.str(t, row, "test")
		studies := studiesOf(ds)
		o := Options{Measure: Measure(measure), Method: Method(model)}
		if measure == "PETO" {
			o.Measure = OR
		}
		if test == "knha" {
			o.Test = TestKnHa
		}
		name := fmt.Sprintf("%s %s %s %s", ds, measure, model, test)
		res, err := Analyze(studies, o)
		if msg := tab.str(t, row, "error"); msg != "" {
			if err == nil {
				t.Errorf("%s: metafor stops (%s) but Analyze gives a result", name, msg)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if got, want := res.K, int(tab.num(t, row, "k")); got != want {
			t.Errorf("%s: k = %d, metafor %d", name, got, want)
		}
		feature := model
		if test == "knha" {
			feature += "+HK"
		}
		a := agree[feature]
		if a == nil {
			a = &agreement{tol: 1e-8, abs: 1e-10}
			agree[feature] = a
		}
		for _, c := range []struct {
			col string
			got float64
		}{
			{"est", res.Est}, {"se", res.SE}, {"zval", res.Stat}, {"ci_lb", res.CILB}, {"ci_ub", res.CIUB},
			{"tau2", res.Tau2}, {"se_tau2", res.SETau2}, {"tau2_ci_lb", res.Tau2CILB}, {"tau2_ci_ub", res.Tau2CIUB},
			{"I2", res.I2}, {"I2_ci_lb", res.I2CILB}, {"I2_ci_ub", res.I2CIUB},
			{"H2", res.H2}, {"H2_ci_lb", res.H2CILB}, {"H2_ci_ub", res.H2CIUB}, {"QE", res.QE},
		} {
			a.check(t, name+" "+c.col, c.got, tab.num(t, row, c.col))
		}
		pv.check(t, name+" pval", res.Pval, tab.num(t, row, "pval"))
		pv.check(t, name+" QEp", res.QEp, tab.num(t, row, "QEp"))
	}
	pv.report(t, "p-values (pval, QEp)")
	var keys []string
	for k := range agree {
		keys = append(keys, k)
	}
	for _, m := range allMethods() {
		for _, k := range []string{string(m), string(m) + "+HK"} {
			if a, ok := agree[k]; ok {
				a.report(t, k)
			}
		}
	}
	if len(keys) < wantModels {
		t.Errorf("only the models %s were compared", strings.Join(keys, ", "))
	}
}

// TestMetaforPetoStudies compares each study's Peto log odds ratio and
// variance (escalc measure "PETO", as rma.peto shows them) with metafor.
func TestMetaforPetoStudies(t *testing.T) {
	tab := readRefTable(t, "metafor_peto_studies.csv")
	cache := map[string]Result{}
	next := map[string]int{}
	a := &agreement{tol: 1e-10, abs: 1e-12}
	for _, row := range tab.rows {
		ds := tab.str(t, row, "dataset")
		res, ok := cache[ds]
		if !ok {
			res = mustAnalyze(t, loadDataset(t, ds), Options{Measure: OR, Method: PETO})
			cache[ds] = res
		}
		i := next[ds]
		next[ds]++
		if i >= len(res.Studies) {
			t.Fatalf("%s: more reference studies than analysed", ds)
		}
		s := res.Studies[i]
		if s.Label != tab.str(t, row, "study") {
			t.Fatalf("%s study %d: %q, metafor %q", ds, i+1, s.Label, tab.str(t, row, "study"))
		}
		a.check(t, ds+" "+s.Label+" yi", s.YI, tab.num(t, row, "yi"))
		a.check(t, ds+" "+s.Label+" vi", s.VI, tab.num(t, row, "vi"))
	}
	a.report(t, "Peto per-study")
}

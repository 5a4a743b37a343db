package meta

import (
	"fmt"
	"os"
	"testing"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// loadBCG reads dat.bcg from the shared data with its moderators.
func loadBCG(t *testing.T) []Study {
	t.Helper()
	path := realdata.Path(t, "meta-analysis-2x2", "dat.bcg.csv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := LoadCSV(f, InputSpec{Kind: Binary, Columns: Columns{Study: "author", AI: "tpos", BI: "tneg", CI: "cpos", DI: "cneg"},
		Covariates: []string{"ablat", "year", "alloc"}})
	if err != nil {
		t.Fatalf("loading %s: %v", path, err)
	}
	return st
}

func refOptions(model, test string) Options {
	o := Options{Measure: RR, Method: Method(model)}
	if test == "knha" {
		o.Test = TestKnHa
	}
	return o
}

// TestMetaforMetaRegression compares Regress on dat.bcg (log RR) with
// metafor's rma(yi, vi, mods = ~ ablat), ~ ablat + year, ~ factor(alloc)
// and ~ year, for every estimator with z and Knapp–Hartung tests.
func TestMetaforMetaRegression(t *testing.T) {
	bcg := loadBCG(t)
	tab := readRefTable(t, "metafor_metareg.csv")
	a := &agreement{tol: 1e-8, abs: 1e-10}
	fits := map[string]Regression{}
	pos := map[string]int{}
	for _, row := range tab.rows {
		mods, model, test := tab.str(t, row, "mods"), tab.str(t, row, "model"), tab.str(t, row, "test")
		key := mods + " " + model + " " + test
		reg, ok := fits[key]
		if !ok {
			res := mustAnalyze(t, bcg, refOptions(model, test))
			var err error
			reg, err = Regress(res, map[string][]string{"ablat": {"ablat"}, "ablat+year": {"ablat", "year"}, "alloc": {"alloc"}, "year": {"year"}}[mods])
			if err != nil {
				t.Fatalf("%s: %v", key, err)
			}
			fits[key] = reg
		}
		j := pos[key]
		pos[key]++
		if j >= len(reg.Coefficients) {
			t.Fatalf("%s: %d coefficients, metafor more", key, len(reg.Coefficients))
		}
		c := reg.Coefficients[j]
		name := fmt.Sprintf("%s %s", key, c.Term)
		for _, v := range []struct {
			col string
			got Float
		}{
			{"estimate", c.Est}, {"se", c.SE}, {"zval", c.Stat}, {"ci_lb", c.CILB}, {"ci_ub", c.CIUB},
			{"tau2", reg.Tau2}, {"se_tau2", reg.SETau2}, {"QM", reg.QM}, {"QE", reg.QE}, {"I2", reg.I2}, {"H2", reg.H2}, {"R2", reg.R2},
		} {
			a.check(t, name+" "+v.col, float64(v.got), tab.num(t, row, v.col))
		}
		pv := &agreement{tol: 1e-6, abs: 1e-12}
		pv.check(t, name+" pval", float64(c.Pval), tab.num(t, row, "pval"))
		pv.check(t, name+" QMp", float64(reg.QMp), tab.num(t, row, "QMp"))
		pv.check(t, name+" QEp", float64(reg.QEp), tab.num(t, row, "QEp"))
		if got, want := reg.K, int(tab.num(t, row, "k")); got != want {
			t.Errorf("%s: k = %d, metafor %d", name, got, want)
		}
	}
	a.report(t, "meta-regression")
}

// TestMetaforSubgroups compares Subgroups on dat.bcg by alloc with metafor:
// each subgroup's model and the tests for subgroup differences with
// separate and pooled τ².
func TestMetaforSubgroups(t *testing.T) {
	bcg := loadBCG(t)
	tab := readRefTable(t, "metafor_subgroups.csv")
	a := &agreement{tol: 1e-8, abs: 1e-10}
	fits := map[string]SubgroupAnalysis{}
	for _, row := range tab.rows {
		model := tab.str(t, row, "model")
		sa, ok := fits[model]
		if !ok {
			var err error
			if sa, err = Subgroups(bcg, refOptions(model, "z"), "alloc"); err != nil {
				t.Fatalf("%s: %v", model, err)
			}
			fits[model] = sa
		}
		switch kind := tab.str(t, row, "kind"); kind {
		case "group":
			g := tab.str(t, row, "group")
			var r *Result
			for i := range sa.Groups {
				if sa.Groups[i].Name == g {
					r = &sa.Groups[i].Result
				}
			}
			if r == nil {
				t.Fatalf("%s: no subgroup %q", model, g)
			}
			name := model + " " + g
			for _, v := range []struct {
				col string
				got float64
			}{{"est", r.Est}, {"se", r.SE}, {"ci_lb", r.CILB}, {"ci_ub", r.CIUB}, {"tau2", r.Tau2}, {"QE", r.QE}, {"I2", r.I2}} {
				a.check(t, name+" "+v.col, v.got, tab.num(t, row, v.col))
			}
		case "between_separate":
			a.check(t, model+" Q_between", float64(sa.QBetween), tab.num(t, row, "Q"))
			a.check(t, model+" Q_between_p", float64(sa.PBetween), tab.num(t, row, "p"))
			if sa.DF != int(tab.num(t, row, "df")) {
				t.Errorf("%s: df %d, metafor %v", model, sa.DF, tab.num(t, row, "df"))
			}
		case "between_pooled":
			a.check(t, model+" Q_between_pooled", float64(sa.QPooled), tab.num(t, row, "Q"))
			a.check(t, model+" Q_between_pooled_p", float64(sa.PPooled), tab.num(t, row, "p"))
		default:
			t.Fatalf("unknown row kind %q", kind)
		}
	}
	a.report(t, "subgroups")
}

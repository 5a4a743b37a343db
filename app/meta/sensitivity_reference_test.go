package meta

import (
	"fmt"
	"strings"
	"testing"
)

type sensKey struct{ ds, measure, model, test string }

// sensitivityFits runs fn for each model of the reference table, caching
// the analysis per dataset/measure/model/test.
func sensitivityRows(t *testing.T, file string) (refTable, map[sensKey][]int) {
	tab := readRefTable(t, file)
	groups := map[sensKey][]int{}
	for i, row := range tab.rows {
		k := sensKey{tab.str(t, row, "dataset"), tab.str(t, row, "measure"), tab.str(t, row, "model"), tab.str(t, row, "test")}
		groups[k] = append(groups[k], i)
	}
	return tab, groups
}

func (k sensKey) options() Options {
	o := Options{Measure: Measure(k.measure), Method: Method(k.model)}
	if k.test == "knha" {
		o.Test = TestKnHa
	}
	return o
}

// TestMetaforLeaveOneOutAndCumulative compares LeaveOneOut and Cumulative
// with metafor's leave1out and cumul on five datasets, OR and RR,
// EE/DL/REML/PM with z and Knapp–Hartung tests.
func TestMetaforLeaveOneOutAndCumulative(t *testing.T) {
	cache := map[string][]Study{}
	for _, c := range []struct {
		file string
		run  func([]Study, Result) ([]SensitivityRow, error)
	}{
		{"metafor_leave1out.csv", LeaveOneOut},
		{"metafor_cumul.csv", func(s []Study, r Result) ([]SensitivityRow, error) { return Cumulative(s, r, nil) }},
	} {
		tab, groups := sensitivityRows(t, c.file)
		a := &agreement{tol: 1e-8, abs: 1e-10}
		for k, rows := range groups {
			st, ok := cache[k.ds]
			if !ok {
				st = loadDataset(t, k.ds)
				cache[k.ds] = st
			}
			res := mustAnalyze(t, st, k.options())
			got, err := c.run(st, res)
			if err != nil {
				t.Fatalf("%s %v: %v", c.file, k, err)
			}
			if len(got) != len(rows) {
				t.Fatalf("%s %v: %d rows, metafor %d", c.file, k, len(got), len(rows))
			}
			for j, ri := range rows {
				row, g := tab.rows[ri], got[j]
				name := fmt.Sprintf("%s %s/%s/%s/%s %s", c.file, k.ds, k.measure, k.model, k.test, g.Study)
				if want := tab.str(t, row, "study"); g.Study != want && !strings.HasPrefix(want, g.Study+".") { // metafor makes labels unique: "Shechter.1"
					t.Fatalf("%s: study %q, metafor %q", name, g.Study, tab.str(t, row, "study"))
				}
				tau2 := tab.num(t, row, "tau2")
				if k.model == "EE" {
					tau2 = 0
				}
				for _, v := range []struct {
					col       string
					got, want float64
				}{
					{"est", float64(g.Est), tab.num(t, row, "est")}, {"se", float64(g.SE), tab.num(t, row, "se")},
					{"stat", float64(g.Stat), tab.num(t, row, "stat")}, {"pval", float64(g.Pval), tab.num(t, row, "pval")},
					{"ci_lb", float64(g.CILB), tab.num(t, row, "ci_lb")}, {"ci_ub", float64(g.CIUB), tab.num(t, row, "ci_ub")},
					{"Q", float64(g.Q), tab.num(t, row, "Q")}, {"Qp", float64(g.Qp), tab.num(t, row, "Qp")},
					{"tau2", float64(g.Tau2), tau2}, {"I2", float64(g.I2), tab.num(t, row, "I2")}, {"H2", float64(g.H2), tab.num(t, row, "H2")},
				} {
					a.check(t, name+" "+v.col, v.got, v.want)
				}
			}
		}
		a.report(t, c.file)
	}
}

// TestMetaforInfluence compares Influence with influence.rma.uni.
func TestMetaforInfluence(t *testing.T) {
	tab, groups := sensitivityRows(t, "metafor_influence.csv")
	cache := map[string][]Study{}
	a := &agreement{tol: 1e-8, abs: 1e-10}
	flags := 0
	for k, rows := range groups {
		st, ok := cache[k.ds]
		if !ok {
			st = loadDataset(t, k.ds)
			cache[k.ds] = st
		}
		got, err := Influence(mustAnalyze(t, st, k.options()))
		if err != nil {
			t.Fatalf("%v: %v", k, err)
		}
		if len(got) != len(rows) {
			t.Fatalf("%v: %d rows, metafor %d", k, len(got), len(rows))
		}
		for j, ri := range rows {
			row, g := tab.rows[ri], got[j]
			name := fmt.Sprintf("%s/%s/%s/%s %s", k.ds, k.measure, k.model, k.test, g.Study)
			for _, v := range []struct {
				col string
				got Float
			}{
				{"rstudent", g.RStudent}, {"dffits", g.DFFITS}, {"cook_d", g.CookD}, {"cov_r", g.CovR},
				{"tau2_del", g.Tau2Del}, {"QE_del", g.QEDel}, {"hat", g.Hat}, {"weight", g.Weight}, {"dfbs", g.DFBETAS},
			} {
				a.check(t, name+" "+v.col, float64(v.got), tab.num(t, row, v.col))
			}
			if want := tab.str(t, row, "inf") == "*"; g.Influential != want {
				t.Errorf("%s: influential %v, metafor %v", name, g.Influential, want)
			}
			if g.Influential {
				flags++
			}
		}
	}
	a.report(t, "influence")
	t.Logf("%d studies flagged influential, as metafor", flags)
}

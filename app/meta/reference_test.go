package meta

import (
	"encoding/csv"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// refRow is one row of metafor_reference.csv (metafor 3.8-1, 10 significant
// digits; see PROVENANCE.md beside it).
type refRow struct {
	line                                   int
	dataset, measure, model                string
	k                                      int
	est, se, ciLB, ciUB, tau2, i2, qe, qep float64
}

func readReference(t *testing.T) []refRow {
	t.Helper()
	path := realdata.Path(t, "meta-analysis-2x2", "metafor_reference.csv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	var rows []refRow
	for i, r := range recs[1:] {
		num := func(j int) float64 {
			v, err := strconv.ParseFloat(r[j], 64)
			if err != nil {
				t.Fatalf("%s line %d column %d: %v", path, i+2, j+1, err)
			}
			return v
		}
		rows = append(rows, refRow{
			line: i + 2, dataset: r[0], k: int(num(1)), measure: r[2], model: r[3],
			est: num(4), se: num(5), ciLB: num(6), ciUB: num(7), tau2: num(8), i2: num(9), qe: num(10), qep: num(11),
		})
	}
	return rows
}

// loadDataset reads one dataset of studies_2x2.csv with metafor's na.omit.
func loadDataset(t *testing.T, dataset string) []Study {
	t.Helper()
	path := realdata.Path(t, "meta-analysis-2x2", "studies_2x2.csv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	studies, err := LoadCSV(f, InputSpec{Where: map[string]string{"dataset": dataset}, SkipMissing: true})
	if err != nil {
		t.Fatalf("loading %s from %s: %v", dataset, filepath.Base(path), err)
	}
	return studies
}

func optionsFor(measure, model string) Options {
	o := Options{Measure: Measure(measure)}
	switch model {
	case "HK":
		o.Method, o.Test = REML, TestKnHa
	default:
		o.Method = Method(model)
	}
	return o
}

// closeTo reports whether got agrees with want within 1e-6 relative, or 1e-9
// absolute near zero, and the relative error used for reporting.
func closeTo(got, want float64) (bool, float64) {
	d := math.Abs(got - want)
	if d <= 1e-9 {
		return true, 0
	}
	rel := d / math.Abs(want)
	return rel <= 1e-6, rel
}

func TestMetaforReference(t *testing.T) {
	rows := readReference(t)
	cache := map[string][]Study{}
	worst, worstAt := 0.0, ""
	matched := 0
	for _, r := range rows {
		name := fmt.Sprintf("%s/%s/%s", r.dataset, r.measure, r.model)
		t.Run(name, func(t *testing.T) {
			studies, ok := cache[r.dataset]
			if !ok {
				studies = loadDataset(t, r.dataset)
				cache[r.dataset] = studies
			}
			res, err := Analyze(studies, optionsFor(r.measure, r.model))
			if err != nil {
				t.Fatalf("reference line %d: Analyze: %v", r.line, err)
			}
			if res.K != r.k {
				t.Errorf("reference line %d %s: k = %d, metafor %d", r.line, name, res.K, r.k)
			}
			bad := false
			for _, c := range []struct {
				field     string
				got, want float64
			}{
				{"est", res.Est, r.est}, {"se", res.SE, r.se}, {"ci_lb", res.CILB, r.ciLB}, {"ci_ub", res.CIUB, r.ciUB},
				{"tau2", res.Tau2, r.tau2}, {"I2", res.I2, r.i2}, {"QE", res.QE, r.qe},
			} {
				ok, rel := closeTo(c.got, c.want)
				if rel > worst {
					worst, worstAt = rel, name+" "+c.field
				}
				if !ok {
					bad = true
					t.Errorf("reference line %d %s: %s = %.10g, metafor %.10g (relative error %.2g)", r.line, name, c.field, c.got, c.want, rel)
				}
			}
			// QEp spans 1e-75..1: compare relatively, more loosely (chi-square tail).
			if ok, rel := closeTo(res.QEp, r.qep); !ok && rel > 1e-5 {
				bad = true
				t.Errorf("reference line %d %s: QEp = %.10g, metafor %.10g (relative error %.2g)", r.line, name, res.QEp, r.qep, rel)
			}
			if !bad {
				matched++
			}
		})
	}
	t.Logf("%d of %d metafor reference rows matched; worst relative error %.3g (%s)", matched, len(rows), worst, worstAt)
	if matched != len(rows) {
		t.Errorf("only %d of %d reference rows matched", matched, len(rows))
	}
}

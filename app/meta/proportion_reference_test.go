package meta

import (
	"encoding/csv"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// trialMindRow is one row of metafor_reference_study_results.csv: metafor's
// pooled result for one outcome file of TrialReviewBench's study_results,
// one source of the numbers (truth, pred = TrialMind, gpt4), one measure
// and one model (missing rows dropped, as na.omit).
type trialMindRow struct {
	line                              int
	file, source, measure, model      string
	k                                 int
	est, se, ciLB, ciUB, tau2, i2, qe float64
}

func readTrialMindReference(t *testing.T) []trialMindRow {
	t.Helper()
	path := realdata.Path(t, "trialmind-reviewbench-sample", "metafor_reference_study_results.csv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	want := "file,source,measure,model,k,est,se,ci_lb,ci_ub,tau2,I2,QE"
	if got := strings.Join(recs[0], ","); got != want {
		t.Fatalf("%s: header %q, want %q", path, got, want)
	}
	var rows []trialMindRow
	for i, r := range recs[1:] {
		num := func(j int) float64 {
			v, err := strconv.ParseFloat(r[j], 64)
			if err != nil {
				t.Fatalf("%s line %d column %d: %v", path, i+2, j+1, err)
			}
			return v
		}
		rows = append(rows, trialMindRow{
			line: i + 2, file: r[0], source: r[1], measure: r[2], model: r[3], k: int(num(4)),
			est: num(5), se: num(6), ciLB: num(7), ciUB: num(8), tau2: num(9), i2: num(10), qe: num(11),
		})
	}
	return rows
}

// trialMindSpec maps an outcome file's columns for one source, as a user
// would with clinsight meta --cols: the source's prefix ("" for the truth,
// "pred_" for TrialMind, "gpt4_" for GPT-4) before the events and totals.
// Two-arm files name them n_<arm>, total_<arm> (the first arm is group 1);
// single-arm files n, total.
func trialMindSpec(t *testing.T, path, source string, kind Kind) InputSpec {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	header, err := csv.NewReader(f).Read()
	f.Close()
	if err != nil {
		t.Fatalf("reading the header of %s: %v", path, err)
	}
	prefix := map[string]string{"truth": "", "pred": "pred_", "gpt4": "gpt4_"}[source]
	spec := InputSpec{Kind: kind, SkipMissing: true}
	spec.Columns.Study = "Study"
	switch kind {
	case Proportion:
		spec.Columns.XI, spec.Columns.NI = prefix+"n", prefix+"total"
	case Binary:
		var arms []string
		for _, h := range header {
			if arm, ok := strings.CutPrefix(h, "n_"); ok {
				arms = append(arms, arm)
			}
		}
		if len(arms) != 2 {
			t.Fatalf("%s: expected two arms n_<arm>, found %q", path, arms)
		}
		spec.Columns.AI, spec.Columns.N1I = prefix+"n_"+arms[0], prefix+"total_"+arms[0]
		spec.Columns.CI, spec.Columns.N2I = prefix+"n_"+arms[1], prefix+"total_"+arms[1]
	}
	return spec
}

// TestTrialMindMetaforReference reproduces every row of metaforʼs reference
// on TrialReviewBench's per-study results (OR and RR from 2x2 counts; PR,
// PLO and PFT from single-arm counts; the true values and TrialMind's and
// GPT-4's extractions) within 1e-6 relative, reading the files as clinsight
// meta does (LoadFile with a column mapping and na.omit).
func TestTrialMindMetaforReference(t *testing.T) {
	rows := readTrialMindReference(t)
	if len(rows) != 60 {
		t.Errorf("the reference has %d rows, expected 60", len(rows))
	}
	worst, worstAt := 0.0, ""
	matched := 0
	measures := map[string]int{}
	for _, r := range rows {
		name := fmt.Sprintf("%s/%s/%s/%s", strings.TrimSuffix(r.file, ".csv"), r.source, r.measure, r.model)
		t.Run(name, func(t *testing.T) {
			m, err := ParseMeasure(r.measure)
			if err != nil {
				t.Fatal(err)
			}
			path := realdata.Path(t, "trialmind-reviewbench-sample", "study_results", r.file)
			studies, err := LoadFile(path, trialMindSpec(t, path, r.source, m.Kind()))
			if err != nil {
				t.Fatalf("loading %s: %v", filepath.Base(path), err)
			}
			res, err := Analyze(studies, Options{Measure: m, Method: Method(r.model)})
			if err != nil {
				t.Fatalf("reference line %d: Analyze: %v", r.line, err)
			}
			if res.K != r.k {
				t.Errorf("reference line %d: k = %d, metafor %d", r.line, res.K, r.k)
			}
			bad := res.K != r.k
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
					t.Errorf("reference line %d: %s = %.10g, metafor %.10g (relative error %.2g)", r.line, c.field, c.got, c.want, rel)
				}
			}
			if !bad {
				matched++
				measures[r.measure]++
			}
		})
	}
	t.Logf("%d of %d TrialMind metafor reference rows matched (by measure: %v); worst relative error %.3g (%s)", matched, len(rows), measures, worst, worstAt)
	if matched != len(rows) {
		t.Errorf("only %d of %d reference rows matched", matched, len(rows))
	}
	for _, m := range []string{"OR", "RR", "PR", "PLO", "PFT"} {
		if measures[m] == 0 {
			t.Errorf("no reference row of measure %s matched", m)
		}
	}
}

package cli

import (
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// trialMindCols returns the --cols mapping of a TrialReviewBench outcome
// file for one source of numbers: the prefix ("" for the truth, "pred_" for
// TrialMind, "gpt4_" for GPT-4) before n_<arm>/total_<arm> (two arms, the
// first is group 1) or n/total (single arm).
func trialMindCols(t *testing.T, path, source string, proportion bool) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	header, err := csv.NewReader(f).Read()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	p := map[string]string{"truth": "", "pred": "pred_", "gpt4": "gpt4_"}[source]
	if proportion {
		return fmt.Sprintf("study=Study,xi=%sn,ni=%stotal", p, p)
	}
	var arms []string
	for _, h := range header {
		if arm, ok := strings.CutPrefix(h, "n_"); ok {
			arms = append(arms, arm)
		}
	}
	if len(arms) != 2 {
		t.Fatalf("%s: expected two arms, found %q", path, arms)
	}
	return fmt.Sprintf("study=Study,ai=%sn_%s,n1i=%stotal_%s,ci=%sn_%s,n2i=%stotal_%s", p, arms[0], p, arms[0], p, arms[1], p, arms[1])
}

// TestMetaCLITrialMindReference reproduces every row of
// metafor_reference_study_results.csv (metafor on TrialReviewBench's
// per-study results: OR and RR from 2x2 counts, PR, PLO and PFT from
// single-arm counts; true values and TrialMind's and GPT-4's extractions)
// through "clinsight meta --json --skip-missing", within 1e-6 relative.
func TestMetaCLITrialMindReference(t *testing.T) {
	refPath := realdata.Path(t, "trialmind-reviewbench-sample", "metafor_reference_study_results.csv")
	f, err := os.Open(refPath)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs[0], ","); got != "file,source,measure,model,k,est,se,ci_lb,ci_ub,tau2,I2,QE" {
		t.Fatalf("unexpected reference header %s", got)
	}
	matched, worst, worstAt := 0, 0.0, ""
	for i, r := range recs[1:] {
		line := i + 2
		name := fmt.Sprintf("%s/%s/%s/%s", strings.TrimSuffix(r[0], ".csv"), r[1], r[2], r[3])
		ok := t.Run(name, func(t *testing.T) {
			data := realdata.Path(t, "trialmind-reviewbench-sample", "study_results", r[0])
			proportion := r[2] == "PR" || r[2] == "PLO" || r[2] == "PFT"
			out, stderr, code := runMetaCLI(t, "--data", data, "--cols", trialMindCols(t, data, r[1], proportion),
				"--measure", r[2], "--model", r[3], "--skip-missing", "--json")
			if code != 0 {
				t.Fatalf("reference line %d: exit %d: %s", line, code, stderr)
			}
			var got metaJSON
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("reference line %d: %v in %s", line, err, out)
			}
			if k, _ := strconv.Atoi(r[4]); got.K != k {
				t.Errorf("reference line %d: k = %d, metafor %d", line, got.K, k)
			}
			for _, c := range []struct {
				field string
				got   *float64
				col   int
			}{
				{"est", got.Est, 5}, {"se", got.SE, 6}, {"ci_lb", got.CILB, 7}, {"ci_ub", got.CIUB, 8},
				{"tau2", got.Tau2, 9}, {"I2", got.I2, 10}, {"QE", got.QE, 11},
			} {
				want, err := strconv.ParseFloat(r[c.col], 64)
				if err != nil {
					t.Fatalf("reference line %d column %d: %v", line, c.col+1, err)
				}
				ok, rel := closeTo(c.got, want)
				if rel > worst && !math.IsInf(rel, 0) {
					worst, worstAt = rel, name+" "+c.field
				}
				if !ok {
					t.Errorf("reference line %d: %s = %v, metafor %.10g (relative error %.2g)", line, c.field, deref(c.got), want, rel)
				}
			}
		})
		if ok {
			matched++
		}
	}
	t.Logf("%d of %d TrialMind metafor reference rows reproduced through clinsight meta --json; worst relative error %.3g (%s)", matched, len(recs)-1, worst, worstAt)
	if matched != len(recs)-1 {
		t.Errorf("only %d of %d reference rows matched", matched, len(recs)-1)
	}
}

// TestMetaCLIProportionText checks the text summary of a proportion
// analysis: back-transformed values, the analysis scale and the harmonic
// mean size for PFT (synthetic single-arm data).
func TestMetaCLIProportionText(t *testing.T) {
	data := writeFile(t, "rates.csv", "trial,responders,treated\nA,0,15\nB,3,20\nC,12,40\nD,20,20\nE,7,30\n")
	out, stderr, code := runMetaCLI(t, "--data", data, "--cols", "responders,treated", "--measure", "pft")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"Proportion (Freeman–Tukey) (PFT), pooled on the double-arcsine scale and shown as proportions",
		"Pooled PFT     0.3326  (95% CI 0.0170 to 0.7700)", // metafor: predict(res, transf=transf.ipft.hm, targs=list(ni=ni))
		"Harmonic n    22.2222",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	out, _, code = runMetaCLI(t, "--data", data, "--cols", "responders,treated", "--measure", "PLO", "--model", "DL", "--json")
	var got struct {
		Proportion struct {
			Est float64 `json:"est"`
		} `json:"proportion"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || math.Abs(got.Proportion.Est-0.282371025937537) > 1e-9 {
		t.Errorf("PLO JSON proportion: %v (exit %d)\n%s", got.Proportion.Est, code, out)
	}
}

package cli

import (
	"encoding/csv"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// TestMetaCLIEveryEstimatorMatchesMetafor runs "clinsight meta --json" for
// every row of app/meta's metafor_models.csv (every 2x2 dataset, OR/RR/RD,
// EE, MH, PETO and the eight τ² estimators with and without --hk) and
// compares est, se, ci, tau2 with its CI, I2 with its CI, H2, QE and QEp.
func TestMetaCLIEveryEstimatorMatchesMetafor(t *testing.T) {
	data := realdata.Path(t, "meta-analysis-2x2", "studies_2x2.csv")
	f, err := os.Open(filepath.Join("..", "meta", "testdata", "metafor_models.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	col := map[string]int{}
	for i, h := range recs[0] {
		col[h] = i
	}
	keys := []string{"est", "se", "ci_lb", "ci_ub", "tau2", "tau2_ci_lb", "tau2_ci_ub", "I2", "I2_ci_lb", "I2_ci_ub", "H2", "QE", "QEp"}
	worst, n := 0.0, 0
	for _, rec := range recs[1:] {
		if rec[col["error"]] != "" {
			continue
		}
		ds, measure, model, test := rec[col["dataset"]], rec[col["measure"]], rec[col["model"]], rec[col["test"]]
		args := []string{"--data", data, "--filter", "dataset=" + ds, "--skip-missing", "--measure", measure, "--model", model, "--json"}
		if measure == "PETO" {
			args[6] = "OR"
		}
		if test == "knha" {
			args = append(args, "--hk")
		}
		stdout, stderr, code := runMetaCLI(t, args...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", strings.Join(args, " "), code, stderr)
		}
		var got map[string]any
		if err := json.Unmarshal([]byte(stdout), &got); err != nil {
			t.Fatalf("%s: %v", strings.Join(args, " "), err)
		}
		for _, k := range keys {
			want := math.NaN()
			if v := rec[col[k]]; v != "NA" {
				want, _ = strconv.ParseFloat(v, 64)
			}
			g, isNum := got[k].(float64)
			if math.IsNaN(want) {
				if got[k] != nil {
					t.Errorf("%s %s %s %s: %s = %v, metafor NA", ds, measure, model, test, k, got[k])
				}
				continue
			}
			if !isNum {
				t.Errorf("%s %s %s %s: %s = %v, metafor %v", ds, measure, model, test, k, got[k], want)
				continue
			}
			n++
			d := math.Abs(g - want)
			rel := 0.0
			if d > 0 {
				rel = d / math.Abs(want)
			}
			if math.Abs(want) > 1e-10 {
				worst = math.Max(worst, rel)
			}
			if d > 1e-10 && rel > 1e-8 {
				t.Errorf("%s %s %s %s: %s = %.15g, metafor %.15g (relative difference %.2g)", ds, measure, model, test, k, g, want, rel)
			}
		}
	}
	t.Logf("%d values through clinsight meta --json; max relative difference from metafor %.3g", n, worst)
}

// The planned analyses through the CLI: subgroups, meta-regression,
// small-study effects and sensitivity, in JSON and text, with a funnel and a
// bubble plot; an analysis that cannot run is a warning, not a failure.
func TestMetaCLIAnalyses(t *testing.T) {
	data := realdata.Path(t, "meta-analysis-2x2", "dat.bcg.csv")
	dir := t.TempDir()
	funnel, bubble, forest, cumul := filepath.Join(dir, "funnel.png"), filepath.Join(dir, "bubble.svg"), filepath.Join(dir, "forest.svg"), filepath.Join(dir, "cumul.png")
	args := []string{"--data", data, "--cols", bcgCols, "--measure", "RR", "--model", "PM", "--subgroup", "alloc", "--mods", "ablat",
		"--egger", "--begg", "--trimfill", "--leave1out", "--cumul-by", "year", "--influence", "--funnel", funnel, "--contours", "--bubble", bubble, "--plot", forest, "--cumul-plot", cumul}
	stdout, stderr, code := runMetaCLI(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var out struct {
		Est       float64 `json:"est"`
		Tau2CILB  float64 `json:"tau2_ci_lb"`
		Subgroups struct {
			QBetween float64 `json:"Q_between"`
		} `json:"subgroups"`
		Regression struct {
			R2 float64 `json:"R2"`
			QM float64 `json:"QM"`
		} `json:"regression"`
		Egger struct {
			Z float64 `json:"zval"`
		} `json:"egger"`
		Begg struct {
			Tau float64 `json:"tau"`
		} `json:"begg"`
		TrimFill struct {
			K0 *int `json:"k0"`
		} `json:"trimfill"`
		LeaveOneOut []json.RawMessage `json:"leave1out"`
		Cumulative  []struct {
			Study string `json:"study"`
		} `json:"cumulative"`
		Influence []json.RawMessage `json:"influence"`
		Summary   []string          `json:"summary"`
	}
	if err := json.Unmarshal([]byte(stdout), &out); err != nil {
		t.Fatal(err)
	}
	if out.Tau2CILB <= 0 || out.Subgroups.QBetween <= 0 || out.Regression.QM <= 0 || out.Egger.Z == 0 || out.Begg.Tau == 0 || out.TrimFill.K0 == nil ||
		len(out.LeaveOneOut) != 13 || len(out.Cumulative) != 13 || out.Cumulative[0].Study != "Aronson" || len(out.Influence) != 13 || len(out.Summary) < 5 {
		t.Errorf("JSON lacks an analysis: %s", stdout)
	}
	if svg, err := os.ReadFile(forest); err != nil || !strings.Contains(string(svg), "Test for subgroup differences") {
		t.Errorf("forest plot by subgroup: %v", err)
	}
	for _, p := range []string{funnel, bubble, cumul} {
		if st, err := os.Stat(p); err != nil || st.Size() < 1000 {
			t.Errorf("plot %s: %v", p, err)
		}
	}
	text, _, code := runMetaCLI(t, args[:len(args)-9]...)
	if code != 0 {
		t.Fatal("text run failed")
	}
	for _, want := range []string{"Q-profile", "Subgroups by alloc", "Meta-regression on ablat", "Egger's test", "Begg's test", "Trim and fill (L0)", "Leave-one-out", "Cumulative", "Influence diagnostics", "In words"} {
		if !strings.Contains(text, want) {
			t.Errorf("text output lacks %q", want)
		}
	}
	// k = 2: the small-study tests are reported as not computed.
	two := writeFile(t, "two.csv", "study,ai,n1i,ci,n2i\nA,4,50,9,50\nB,10,60,12,61\n")
	_, stderr, code = runMetaCLI(t, "--data", two, "--measure", "OR", "--egger", "--begg")
	if code != 0 || !strings.Contains(stderr, "warning: Egger's test: Egger's test needs at least 3 studies") {
		t.Errorf("k = 2: exit %d, stderr %q", code, stderr)
	}
}

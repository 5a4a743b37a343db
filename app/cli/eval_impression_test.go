package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// TestEvalImpressionsContradictionRate: `eval impressions --json` reports
// contradiction_rate next to the ROUGE figures; on the Open-i dev file
// (leave-one-out, no model) preferring consistent impressions at least
// halves it and costs at most 0.3 ROUGE points, against
// --ignore-consistency (issue 20).
func TestEvalImpressionsContradictionRate(t *testing.T) {
	pairs := realdata.Path(t, "openi-chest-xray-reports", "findings_impression_pairs_dev.csv")
	ws := t.TempDir()
	eval := func(extra ...string) map[string]float64 {
		t.Helper()
		out, stderr, code := run(t, ws, append([]string{"eval", "impressions", "--corpus", pairs, "--no-llm", "--json"}, extra...)...)
		if code != 0 {
			t.Fatalf("code %d: %s", code, stderr)
		}
		var m map[string]float64
		if err := json.Unmarshal([]byte(out), &m); err != nil {
			t.Fatalf("%v: %s", err, out)
		}
		for _, k := range []string{"n", "rouge1", "rouge2", "rougeL", "contradiction_rate", "reference_contradiction_rate"} {
			if _, ok := m[k]; !ok {
				t.Fatalf("no %q in %s", k, out)
			}
		}
		return m
	}
	before, after := eval("--ignore-consistency"), eval()
	t.Logf("before: %v", before)
	t.Logf("after:  %v", after)
	if before["n"] != 2229 || after["n"] != 2229 {
		t.Fatalf("n %v / %v", before["n"], after["n"])
	}
	if before["contradiction_rate"] <= 0 || after["contradiction_rate"] > before["contradiction_rate"]/2 {
		t.Errorf("contradiction rate %.4f → %.4f: not halved", before["contradiction_rate"], after["contradiction_rate"])
	}
	for _, k := range []string{"rouge1", "rouge2", "rougeL"} {
		if before[k]-after[k] > 0.3 {
			t.Errorf("%s %.2f → %.2f: dropped more than 0.3 points", k, before[k], after[k])
		}
	}
	if r := after["reference_contradiction_rate"]; r != before["reference_contradiction_rate"] || r <= 0 || r >= 1 {
		t.Errorf("reference rate %v / %v", r, before["reference_contradiction_rate"])
	}
}

// TestEvalImpressionsText: the text report names the contradiction rate,
// and --out lists each impression's contradictions.
func TestEvalImpressionsText(t *testing.T) {
	src := reportsCSV(t, 40)
	outCSV := filepath.Join(t.TempDir(), "scores.csv")
	out, stderr, code := run(t, t.TempDir(), "eval", "impressions", "--corpus", src, "--no-llm", "--out", outCSV)
	if code != 0 || !strings.Contains(out, "ROUGE-1") || !strings.Contains(out, "contradicting their findings: ") {
		t.Fatalf("code %d: %s %s", code, out, stderr)
	}
	raw, err := os.ReadFile(outCSV)
	if err != nil || !strings.HasSuffix(strings.SplitN(string(raw), "\n", 2)[0], ",contradictions") {
		t.Errorf("out csv: %v %q", err, raw)
	}
}

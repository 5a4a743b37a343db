package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets/realdata"
	"github.com/clinsight/clinsight/localllm/ollamatest"
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

// TestImpressionFlagsContradiction: `clinsight impression` says when the
// impression contradicts the findings, in text and JSON.
func TestImpressionFlagsContradiction(t *testing.T) {
	ws := t.TempDir()
	db := filepath.Join(t.TempDir(), "reports.sqlite")
	if out, stderr, code := run(t, ws, "reports", "import", reportsCSV(t, 60), "--db", db); code != 0 {
		t.Fatalf("import: %d %s %s", code, out, stderr)
	}
	srv := ollamatest.New(t, ollamatest.Model{Name: "tiny"})
	srv.HandleChat(func(api.ChatRequest) ollamatest.ChatReply {
		return ollamatest.ChatReply{Content: "No acute cardiopulmonary abnormality."}
	})
	w, err := app.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.UpdateConfig(func(c *app.Config) { c.OllamaHost = srv.URL }); err != nil {
		t.Fatal(err)
	}
	w.Close()
	const findings = "Moderate cardiomegaly. Small left pleural effusion. No pneumothorax."
	out, stderr, code := run(t, ws, "impression", "--db", db, "--model", "tiny", "--iterations", "1", findings)
	if code != 0 || !strings.Contains(out, "Check before using it: The impression calls the study normal, but the findings report Cardiomegaly, Pleural Effusion.") {
		t.Errorf("text: code %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = run(t, ws, "impression", "--db", db, "--model", "tiny", "--iterations", "1", "--json", findings)
	var res struct {
		Contradictions []string `json:"contradictions"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || len(res.Contradictions) != 1 ||
		!strings.HasPrefix(res.Contradictions[0], "calls the study normal") {
		t.Errorf("json: %v %d %s %s", err, code, out, stderr)
	}
	// Retrieval among the synthetic reports finds a consistent impression.
	out, _, code = run(t, ws, "impression", "--db", db, "--no-llm", "--json", findings)
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || res.Contradictions == nil || len(res.Contradictions) != 0 {
		t.Errorf("retrieved: %v %s", err, out)
	}
}

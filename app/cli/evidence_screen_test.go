package cli

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// screenModelReply is a scripted chat model for "evidence screen": it
// writes two criteria when asked for criteria, and screens a study by its
// title (hepatocellular: YES YES; cryotherapy: a server error; else NO
// UNCERTAIN).
func screenModelReply(calls *atomic.Int32) func(api.ChatRequest) ollamatest.ChatReply {
	return func(req api.ChatRequest) ollamatest.ChatReply {
		calls.Add(1)
		if strings.Contains(string(req.Format), "title_criteria") {
			return ollamatest.ChatReply{Content: `{"analysis":"HCC ablation trials","title_criteria":["Hepatocellular carcinoma"],"content_criteria":["Randomized trial"]}`}
		}
		user := req.Messages[len(req.Messages)-1].Content
		switch {
		case strings.Contains(user, "Title: Microwave versus radiofrequency"):
			return ollamatest.ChatReply{Content: `{"verdicts":["YES","YES"]}`}
		case strings.Contains(user, "Title: Salvage cryotherapy"):
			return ollamatest.ChatReply{Fault: ollamatest.Fault{Status: 500, Error: "model runner crashed"}}
		}
		return ollamatest.ChatReply{Content: `{"verdicts":["NO","UNCERTAIN"]}`}
	}
}

func TestEvidenceScreen(t *testing.T) {
	var calls atomic.Int32
	_, ws, db := scriptedLiterature(t, screenModelReply(&calls))
	pico := writeFile(t, "pico.json", `{"P":"hepatocellular carcinoma","I":"microwave ablation","C":"radiofrequency ablation","O":"local tumor progression"}`)
	criteria := writeFile(t, "criteria.json", `["Hepatocellular carcinoma", {"text":"Randomized trial","kind":"content","weight":3}]`)

	// Given criteria, JSON: ranked by score, the failed study last with its
	// error, the others intact; the exit code says a study failed.
	out, stderr, code := run(t, ws, "evidence", "screen", "--db", db, "--pico", pico, "--criteria", criteria,
		"--query", "ablation OR cryotherapy OR brachytherapy", "--concurrency", "2", "--json")
	if code == 0 || !strings.Contains(stderr, "1 of 4 studies could not be screened") || strings.Count(stderr, "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
	var got screenJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if got.Total != 4 || len(got.Studies) != 4 || got.Model != "llama3.1:8b" || len(got.Criteria) != 2 || got.Criteria[1].Weight != 3 {
		t.Fatalf("screen --json: %+v", got)
	}
	first, last := got.Studies[0], got.Studies[3]
	if first.PMID != "90000001" || first.Score == nil || *first.Score != 1 || len(first.Verdicts) != 2 || first.Verdicts[0] != "YES" {
		t.Errorf("first %+v", first)
	}
	if got.Studies[1].Score == nil || *got.Studies[1].Score != -0.25 || got.Studies[1].Verdicts[1] != "UNCERTAIN" {
		t.Errorf("second %+v", got.Studies[1])
	}
	if last.Score != nil || !strings.Contains(last.Error, "model runner crashed") || !strings.Contains(last.Title, "cryotherapy") {
		t.Errorf("failed study %+v", last)
	}
	if n := calls.Load(); n != 4 {
		t.Errorf("%d model calls, want 4", n)
	}

	// Criteria written by the model, text output.
	calls.Store(0)
	out, stderr, code = run(t, ws, "evidence", "screen", "--db", db, "--pico", pico, "--query", "ablation", "--limit", "5")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"2 records match; 2 screened by llama3.1:8b", "C1. Hepatocellular carcinoma (title, 1)", "C2. Randomized trial (content, 1)",
		"90000001", "+1.00", "C1=YES C2=YES", "-0.50", "C1=NO C2=UNCERTAIN", "Thermal ablation of papillary thyroid"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("%d model calls, want 3 (criteria + 2 studies)", n)
	}

	// Errors: bad criteria file, missing PICO, malformed query.
	bad := writeFile(t, "bad.json", `[{"text":"x","weight":-2}]`)
	if _, stderr, code := run(t, ws, "evidence", "screen", "--db", db, "--pico", pico, "--criteria", bad, "--query", "ablation"); code == 0 || !strings.Contains(stderr, "criterion 1: weight -2") {
		t.Errorf("bad criteria: %d %q", code, stderr)
	}
	if _, stderr, code := run(t, ws, "evidence", "screen", "--db", db, "--pico", filepath.Join(t.TempDir(), "none.json"), "--query", "ablation"); code == 0 || !strings.Contains(stderr, "reading the PICO") {
		t.Errorf("missing pico: %d %q", code, stderr)
	}
	if _, stderr, code := run(t, ws, "evidence", "screen", "--db", db, "--pico", pico, "--query", "ablation AND"); code == 0 || !strings.Contains(stderr, "AND needs a term after it") {
		t.Errorf("bad query: %d %q", code, stderr)
	}
}

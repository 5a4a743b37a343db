package cli

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// evalReviews writes three small TrialReviewBench reviews (half of each
// review's studies name its PICO in the title, half use synonyms) and
// returns the folder and each population's included titles.
func evalReviews(t *testing.T) (string, map[string]map[string]bool) {
	t.Helper()
	dir := t.TempDir()
	included := map[string]map[string]bool{}
	for ri, r := range []struct{ p, i, direct, syn string }{
		{"adults with asthma", "inhaled corticosteroids", "Inhaled corticosteroids for adults with asthma: trial %d", "Budesonide in grown-up wheezy patients, cohort %d"},
		{"children with asthma", "montelukast", "Montelukast and asthma exacerbations in children: trial %d", "Leukotriene receptor antagonist for young wheezers, cohort %d"},
		{"adults with COPD", "inhaled corticosteroids", "Inhaled corticosteroids and exacerbations of COPD in adults: trial %d", "Fluticasone in smokers with chronic bronchitis, cohort %d"},
	} {
		included[r.p] = map[string]bool{}
		var trials []map[string]string
		for j := range 12 {
			title := fmt.Sprintf(r.direct, j)
			if j%2 == 1 {
				title = fmt.Sprintf(r.syn, j)
			}
			included[r.p][title] = true
			trials = append(trials, map[string]string{"pmid": fmt.Sprint((ri+1)*100 + j), "title": title})
		}
		b, err := json.Marshal(map[string]any{"pmid": fmt.Sprint(ri + 1), "title": "Review", "PICO": map[string]string{"P": r.p, "I": r.i, "O": "exacerbations"}, "trials": trials})
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("%d.json", ri+1)), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir, included
}

var (
	evalPopulation = regexp.MustCompile(`(?m)^Population: (.*)$`)
	evalTitle      = regexp.MustCompile(`(?m)^Title: (.*)$`)
)

// evalOracleReply writes two criteria, then answers YES YES when the title
// is one of the included studies of the review whose population is in the
// prompt, NO NO otherwise; a title containing fail gets a server error.
func evalOracleReply(included map[string]map[string]bool, fail string, calls *atomic.Int32) func(api.ChatRequest) ollamatest.ChatReply {
	return func(req api.ChatRequest) ollamatest.ChatReply {
		calls.Add(1)
		user := req.Messages[len(req.Messages)-1].Content
		if strings.Contains(string(req.Format), "title_criteria") {
			return ollamatest.ChatReply{Content: `{"analysis":"a","title_criteria":["Population"],"content_criteria":["Randomized trial"]}`}
		}
		var pop, title string
		if m := evalPopulation.FindStringSubmatch(user); m != nil {
			pop = m[1]
		}
		if m := evalTitle.FindStringSubmatch(user); m != nil {
			title = m[1]
		}
		if fail != "" && strings.Contains(title, fail) {
			return ollamatest.ChatReply{Fault: ollamatest.Fault{Status: 500, Error: "model runner crashed"}}
		}
		if included[pop][title] {
			return ollamatest.ChatReply{Content: `{"verdicts":["YES","YES"]}`}
		}
		return ollamatest.ChatReply{Content: `{"verdicts":["NO","NO"]}`}
	}
}

func TestEvalScreeningModelCLI(t *testing.T) {
	dir, included := evalReviews(t)
	srv := ollamatest.New(t, ollamatest.Model{Name: "llama3.1:8b"})
	var calls atomic.Int32
	srv.HandleChat(evalOracleReply(included, "young wheezers, cohort 5", &calls))
	ws := workspaceWithHost(t, srv.URL)

	out, stderr, code := run(t, ws, "eval", "screening", "--reviews", dir, "--no-llm", "--json")
	if code != 0 {
		t.Fatalf("--no-llm: exit %d: %s", code, stderr)
	}
	var base screeningJSON
	if err := json.Unmarshal([]byte(out), &base); err != nil || calls.Load() != 0 {
		t.Fatalf("%v in %s; %d model calls", err, out, calls.Load())
	}

	// The model re-ranks: JSON with the seven keys, Recall@20 above the
	// LLM-free figure, the failing study counted in each review; no
	// progress on stderr.
	out, stderr, code = run(t, ws, "eval", "screening", "--reviews", dir, "--json", "--concurrency", "2")
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	var keys map[string]any
	if err := json.Unmarshal([]byte(out), &keys); err != nil || len(keys) != 7 {
		t.Fatalf("keys %v (%v) in %s", keys, err, out)
	}
	var got screeningJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	t.Logf("LLM-free %s; with the oracle model %s", strings.TrimSpace(fmt.Sprint(base)), strings.TrimSpace(out))
	if got.Reviews != 3 || got.Model != "llama3.1:8b" || got.Rerank != 50 || got.Calls == nil || *got.Calls != 3*37 || int(calls.Load()) != 3*37 ||
		got.Failed == nil || *got.Failed != 3 || got.RecallAt20 <= base.RecallAt20 || got.RecallAt50 != base.RecallAt50 {
		t.Errorf("model JSON %+v (LLM-free %+v), %d calls", got, base, calls.Load())
	}

	// Text: progress and the failures on stderr, the table with the model's
	// columns on stdout; --rerank bounds the screening.
	calls.Store(0)
	out, stderr, code = run(t, ws, "eval", "screening", "--reviews", dir, "--rerank", "10")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"best 10 re-ordered by llama3.1:8b's screening (33 model calls, 0 studies failed)", "Screened  Failed", "Recall@20 "} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{"screening the 10 best matches of 3 reviews with llama3.1:8b", "eligibility criteria: 100% (3 reviews)", "screening: 100% (30 studies; 3 of 3 reviews done)"} {
		if !strings.Contains(stderr, want) {
			t.Errorf("stderr lacks %q:\n%s", want, stderr)
		}
	}
	_, stderr, _ = run(t, ws, "eval", "screening", "--reviews", dir)
	if !strings.Contains(stderr, "3 studies could not be screened and count as UNCERTAIN (score 0); the first error: ") || !strings.Contains(stderr, "model runner crashed") {
		t.Errorf("failures on stderr:\n%s", stderr)
	}

	// Flag errors.
	for args, want := range map[string]string{
		"--no-llm --rerank 20": "--rerank sets the model screening: leave out --no-llm",
		"--rerank 0":           "--rerank must be at least 1, not 0",
		"--concurrency 0":      "--concurrency must be at least 1, not 0",
	} {
		if _, stderr, code := run(t, ws, append([]string{"eval", "screening", "--reviews", dir}, strings.Fields(args)...)...); code == 0 || !strings.Contains(stderr, want) {
			t.Errorf("%s: exit %d, stderr %q", args, code, stderr)
		}
	}

	// No chat model configured: say where to choose one, or --no-llm.
	w, err := app.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.UpdateConfig(func(c *app.Config) { c.Models.Chat = "" }); err != nil {
		t.Fatal(err)
	}
	w.Close()
	calls.Store(0)
	_, stderr, code = run(t, ws, "eval", "screening", "--reviews", dir, "--json")
	if code == 0 || !strings.Contains(stderr, "no chat model is configured: choose one in Settings (models.chat), or rank without a model with --no-llm") || calls.Load() != 0 {
		t.Errorf("no chat model: exit %d, stderr %q", code, stderr)
	}
}

func TestEvalScreeningHelp(t *testing.T) {
	out, _, code := run(t, t.TempDir(), "eval", "screening", "--help")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	for _, want := range []string{"--rerank int", "(default 50)", "--concurrency int", "(default 4)", "about 25 x 51 = 1,275 calls",
		"counts as UNCERTAIN", "Recall@50 cannot change"} {
		if !strings.Contains(out, want) {
			t.Errorf("help lacks %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "not available yet") {
		t.Errorf("help still says model screening is not available:\n%s", out)
	}
}

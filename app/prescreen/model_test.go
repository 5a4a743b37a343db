package prescreen

import (
	"context"
	"encoding/json"
	"log/slog"
	"regexp"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

func isEligibilityPrompt(req api.ChatRequest) bool {
	return strings.Contains(req.Messages[0].Content, "eligible for a clinical trial")
}

// includeAll answers an eligibility prompt: every inclusion criterion
// met, no exclusion criterion met.
func includeAll(req api.ChatRequest) ollamatest.ChatReply {
	user := req.Messages[len(req.Messages)-1].Content
	type v struct {
		ID          string `json:"id"`
		Verdict     string `json:"verdict"`
		Evidence    int    `json:"evidence_sentence"`
		Explanation string `json:"explanation"`
	}
	var out []v
	for _, m := range regexp.MustCompile(`(?m)^([IE]\d+) \(`).FindAllStringSubmatch(user, -1) {
		verdict := "included"
		if m[1][0] == 'E' {
			verdict = "not excluded"
		}
		out = append(out, v{m[1], verdict, 1, "scripted"})
	}
	raw, _ := json.Marshal(map[string]any{"criteria": out})
	return ollamatest.ChatReply{Content: string(raw)}
}

// TestRunWithTheModel: with a model (a scripted server through the real
// client), each patient's top K trials are assessed criterion by
// criterion — K eligibility requests per patient, carrying the patient's
// structured summary — and the model's verdicts fill the criteria without
// a structured check, while a structured value that fails still rules
// the patient out and a missing value stays unknown though the model
// says "included".
func TestRunWithTheModel(t *testing.T) {
	ctx := context.Background()
	srv := ollamatest.New(t, ollamatest.Model{Name: "m"})
	srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
		if isEligibilityPrompt(req) {
			return includeAll(req)
		}
		return ollamatest.ChatReply{Content: `{"age": 60, "sex": "male", "concepts": [
			{"text": "type 2 diabetes mellitus", "kind": "diagnosis", "weight": 1, "negated": false},
			{"text": "hypertension", "kind": "condition", "weight": 0.5, "negated": false}]}`}
	})
	client, err := localllm.New(localllm.Config{Host: srv.URL, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	const k = 3
	p := demoPipelineWith(t, trials.Config{Chat: client, Model: "m", Options: trials.Options{EligibilityTop: k}})
	pats := demoSummaries(t, 6)
	mx, err := Run(ctx, p, pats, Options{Top: k, UseModel: true, Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if mx.Model != "m" {
		t.Errorf("matrix model %q", mx.Model)
	}
	var prompts []string
	for _, req := range srv.ChatRequests() {
		if isEligibilityPrompt(req) {
			prompts = append(prompts, req.Messages[len(req.Messages)-1].Content)
		}
	}
	if len(prompts) != len(pats)*k {
		t.Errorf("%d eligibility requests, want %d (K per patient)", len(prompts), len(pats)*k)
	}
	for _, s := range pats {
		if v, ok := s.Labs["creatinine"]; ok {
			want := v.Text()
			found := false
			for _, pr := range prompts {
				found = found || strings.Contains(pr, want)
			}
			if !found {
				t.Errorf("patient %s: no eligibility prompt carries %q", s.ID, want)
			}
		}
	}
	var byModel, missingKept, failedKept int
	for i := range pats {
		for _, c := range mx.Cells[i] {
			if !c.Ranked {
				continue
			}
			if c.ModelScore == nil {
				t.Errorf("patient %s: a top-%d trial without the model's assessment (%q)", pats[i].ID, k, c.ModelError)
			}
			for _, r := range c.Criteria {
				if r.Kind == RecordKind {
					continue
				}
				if r.Model == "" {
					t.Errorf("criterion %q without the model's verdict", r.Text)
				}
				var undecided, failed bool
				for _, ch := range r.Checks {
					undecided = undecided || ch.Outcome == Undecided
					failed = failed || (r.Kind == trials.Inclusion && ch.Outcome == False && !r.Partial)
				}
				switch {
				case len(r.Checks) == 0:
					if r.Status != Eligible || r.Basis != BasisModel {
						t.Errorf("criterion %q: %s by %s, want eligible by the model", r.Text, r.Status, r.Basis)
					}
					byModel++
				case undecided && len(r.Checks) == 1:
					if r.Status != Unknown {
						t.Errorf("criterion %q without its value: %s (model %s), want unknown", r.Text, r.Status, r.Model)
					}
					missingKept++
				case failed && len(r.Checks) == 1:
					if r.Status != NotEligible || r.Basis != BasisStructured {
						t.Errorf("criterion %q failed by the value: %s by %s", r.Text, r.Status, r.Basis)
					}
					failedKept++
				}
			}
		}
	}
	t.Logf("criteria: %d by the model, %d unknown without their value, %d failed by the value", byModel, missingKept, failedKept)
	if byModel == 0 || missingKept+failedKept == 0 {
		t.Errorf("the sample does not exercise the model and the structured checks together")
	}
}

package evidence

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// scriptedModel is the model name the scripted tests use.
const scriptedModel = "tiny"

// scriptedClient starts a scripted Ollama server with the test model and
// returns it with the real client talking to it.
func scriptedClient(t *testing.T) (*ollamatest.Server, *localllm.Client) {
	t.Helper()
	srv := ollamatest.New(t, ollamatest.Model{Name: scriptedModel})
	c, err := localllm.New(localllm.Config{Host: srv.URL, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

var hccPICO = PICO{Population: "hepatocellular carcinoma", Intervention: "microwave ablation", Comparison: "radiofrequency ablation", Outcome: "local tumor progression"}

const termsReply = `{
 "primary": {"conditions": ["hepatocellular carcinoma"], "treatments": ["microwave ablation", "radiofrequency ablation"], "outcomes": ["local tumor progression"]},
 "core": {"conditions": ["hepatocellular carcinoma"], "treatments": ["microwave ablation", "radiofrequency ablation"], "outcomes": []},
 "expanded": {"conditions": ["Hepatocellular Carcinoma", "HCC", "liver cancer", "hepatoma*"],
   "treatments": ["MWA", "RFA", "(thermal) ablation", "microwave", "OR"],
   "outcomes": ["  "]}
}`

func TestGenerateTermsToQuery(t *testing.T) {
	srv, c := scriptedClient(t)
	srv.QueueChat(ollamatest.ChatReply{Content: termsReply})
	steps, err := GenerateTerms(context.Background(), c, scriptedModel, hccPICO, TermOptions{
		References: []string{"Microwave versus radiofrequency ablation for HCC.\n\nMETHODS: ...", "b", "c", "d", "e", "f (not shown)"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps.Primary.Outcomes) != 1 || steps.Primary.Outcomes[0] != "local tumor progression" {
		t.Errorf("primary terms %+v", steps.Primary)
	}
	final := steps.Final()
	want := SearchTerms{
		Conditions: []string{"hepatocellular carcinoma", "HCC", "liver cancer", "hepatoma"},
		Treatments: []string{"microwave ablation", "radiofrequency ablation", "MWA", "RFA", "thermal ablation", "microwave", "OR"},
		Outcomes:   []string{},
	}
	if strings.Join(final.Conditions, "|") != strings.Join(want.Conditions, "|") ||
		strings.Join(final.Treatments, "|") != strings.Join(want.Treatments, "|") || len(final.Outcomes) != 0 {
		t.Errorf("final terms\n got %+v\nwant %+v", final, want)
	}
	q, err := final.Query()
	if err != nil {
		t.Fatal(err)
	}
	wantQ := `("hepatocellular carcinoma" OR HCC OR "liver cancer" OR hepatoma) AND ("microwave ablation" OR "radiofrequency ablation" OR MWA OR RFA OR "thermal ablation" OR microwave OR "OR")`
	if q != wantQ {
		t.Errorf("query\n got %s\nwant %s", q, wantQ)
	}
	if _, err := ParseQuery(q); err != nil {
		t.Errorf("query does not parse: %v", err)
	}

	// The prompt: the PICO and at most MaxReferences references, in one
	// request with the schema as format.
	reqs := srv.ChatRequests()
	if len(reqs) != 1 {
		t.Fatalf("%d requests", len(reqs))
	}
	user := reqs[0].Messages[1].Content
	for _, s := range []string{"Population (condition): hepatocellular carcinoma", "Comparison (treatment): radiofrequency ablation", "[1] Microwave versus radiofrequency ablation for HCC. METHODS", "[5] e"} {
		if !strings.Contains(user, s) {
			t.Errorf("prompt lacks %q:\n%s", s, user)
		}
	}
	if strings.Contains(user, "not shown") {
		t.Error("more than MaxReferences references in the prompt")
	}
	if !strings.Contains(string(reqs[0].Format), `"expanded"`) {
		t.Errorf("format = %s", reqs[0].Format)
	}
}

func TestGenerateTermsInvalidReplyRetried(t *testing.T) {
	srv, c := scriptedClient(t)
	srv.QueueChat(
		ollamatest.ChatReply{Content: `{"primary": {"conditions": ["HCC"]}}`},
		ollamatest.ChatReply{Content: termsReply},
	)
	steps, err := GenerateTerms(context.Background(), c, scriptedModel, hccPICO, TermOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(steps.Expanded.Conditions) != 4 {
		t.Errorf("expanded %+v", steps.Expanded)
	}
	reqs := srv.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2", len(reqs))
	}
	msgs := reqs[1].Messages
	last := msgs[len(msgs)-1].Content
	if !strings.Contains(last, "not valid") || !strings.Contains(last, "core") {
		t.Errorf("the retry does not carry the validation error: %q", last)
	}

	// A reply that never validates: a BadReply error.
	srv.HandleChat(func(_ api.ChatRequest) ollamatest.ChatReply { return ollamatest.ChatReply{Content: "terms: HCC"} })
	_, err = GenerateTerms(context.Background(), c, scriptedModel, hccPICO, TermOptions{})
	if localllm.KindOf(err) != localllm.BadReply || !strings.Contains(err.Error(), "generating search terms") {
		t.Errorf("never valid: %v", err)
	}
}

func TestSearchTermsQuery(t *testing.T) {
	for _, c := range []struct {
		terms SearchTerms
		want  string
	}{
		{SearchTerms{Conditions: []string{"asthma"}}, `asthma`},
		{SearchTerms{Conditions: []string{"asthma", "ASTHMA", "wheez*"}, Treatments: []string{"inhaled corticosteroids"}, Outcomes: []string{"exacerbation", "FEV1"}, JoinOutcomes: true},
			`(asthma OR wheez) AND "inhaled corticosteroids" AND (exacerbation OR FEV1)`},
		// By default the outcome terms are kept but not joined (P AND I).
		{SearchTerms{Conditions: []string{"asthma"}, Treatments: []string{"inhaled corticosteroids"}, Outcomes: []string{"exacerbation"}},
			`asthma AND "inhaled corticosteroids"`},
		{SearchTerms{Treatments: []string{`"quoted"  term`, "not"}}, `("quoted term" OR "not")`},
		{SearchTerms{Conditions: []string{"non-small-cell lung cancer", "NSCLC"}, Treatments: []string{"[x]"}}, `("non-small-cell lung cancer" OR NSCLC) AND x`},
	} {
		got, err := c.terms.Query()
		if err != nil || got != c.want {
			t.Errorf("%+v: got %q, %v; want %q", c.terms, got, err, c.want)
			continue
		}
		if _, err := ParseQuery(got); err != nil {
			t.Errorf("%q does not parse: %v", got, err)
		}
	}
	if _, err := (SearchTerms{Conditions: []string{"()", " "}}).Query(); !errors.Is(err, ErrNoTerms) {
		t.Errorf("no terms: %v", err)
	}
}

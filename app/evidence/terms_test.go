package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"slices"
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
 "primary": {"conditions": ["hepatocellular carcinoma"], "treatments": ["microwave ablation"], "comparators": ["radiofrequency ablation"], "outcomes": ["local tumor progression"]},
 "core": {"conditions": ["hepatocellular carcinoma"], "treatments": ["microwave ablation"], "comparators": ["radiofrequency ablation"], "outcomes": []},
 "expanded": {"conditions": ["Hepatocellular Carcinoma", "HCC", "liver cancer", "hepatoma*"],
   "treatments": ["MWA", "(thermal) ablation", "microwave", "OR", "rfa"],
   "comparators": ["RFA", "radiofrequency"],
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
		// "rfa", listed as a treatment too, is kept as a comparator only.
		Treatments:  []string{"microwave ablation", "MWA", "thermal ablation", "microwave", "OR"},
		Comparators: []string{"radiofrequency ablation", "RFA", "radiofrequency"},
		Outcomes:    []string{},
	}
	if strings.Join(final.Conditions, "|") != strings.Join(want.Conditions, "|") ||
		strings.Join(final.Treatments, "|") != strings.Join(want.Treatments, "|") ||
		strings.Join(final.Comparators, "|") != strings.Join(want.Comparators, "|") || len(final.Outcomes) != 0 {
		t.Errorf("final terms\n got %+v\nwant %+v", final, want)
	}
	q, err := final.Query()
	if err != nil {
		t.Fatal(err)
	}
	// By default the comparator terms are not in the query (P AND I).
	wantQ := `("hepatocellular carcinoma" OR HCC OR "liver cancer" OR hepatoma) AND ("microwave ablation" OR MWA OR "thermal ablation" OR microwave OR "OR")`
	if q != wantQ {
		t.Errorf("query\n got %s\nwant %s", q, wantQ)
	}
	// With the user's choice they are ANDed as a group of their own.
	final.JoinComparators = true
	if q, err := final.Query(); err != nil || q != wantQ+` AND ("radiofrequency ablation" OR RFA OR radiofrequency)` {
		t.Errorf("query with the comparison: %s, %v", q, err)
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
	for _, s := range []string{"Population (condition): hepatocellular carcinoma", "Comparison (comparator): radiofrequency ablation", "[1] Microwave versus radiofrequency ablation for HCC. METHODS", "[5] e"} {
		if !strings.Contains(user, s) {
			t.Errorf("prompt lacks %q:\n%s", s, user)
		}
	}
	if strings.Contains(user, "not shown") {
		t.Error("more than MaxReferences references in the prompt")
	}
	if sys := reqs[0].Messages[0].Content; !strings.Contains(sys, "comparator term goes under comparators only") {
		t.Errorf("the system prompt does not ask for the comparator terms apart:\n%s", sys)
	}
	if !strings.Contains(string(reqs[0].Format), `"expanded"`) || !strings.Contains(string(reqs[0].Format), `"comparators"`) {
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
		// By default the comparator terms are kept but not joined either;
		// with the user's choice they join as their own group, before the
		// outcome's.
		{SearchTerms{Conditions: []string{"asthma"}, Treatments: []string{"budesonide"}, Comparators: []string{"placebo", "montelukast"}, Outcomes: []string{"exacerbation"}},
			`asthma AND budesonide`},
		{SearchTerms{Conditions: []string{"asthma"}, Treatments: []string{"budesonide"}, Comparators: []string{"placebo", "montelukast"}, Outcomes: []string{"exacerbation"}, JoinComparators: true},
			`asthma AND budesonide AND (placebo OR montelukast)`},
		{SearchTerms{Conditions: []string{"asthma"}, Treatments: []string{"budesonide"}, Comparators: []string{"placebo"}, Outcomes: []string{"exacerbation"}, JoinComparators: true, JoinOutcomes: true},
			`asthma AND budesonide AND placebo AND exacerbation`},
		{SearchTerms{Conditions: []string{"asthma"}, Treatments: []string{"budesonide"}, Comparators: []string{"placebo"}, Outcomes: []string{"exacerbation"}, JoinOutcomes: true},
			`asthma AND budesonide AND exacerbation`},
		// Switched on with no comparator terms: nothing to join.
		{SearchTerms{Conditions: []string{"asthma"}, Treatments: []string{"budesonide"}, JoinComparators: true}, `asthma AND budesonide`},
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
	if _, err := (SearchTerms{Comparators: []string{"placebo"}}).Query(); !errors.Is(err, ErrNoTerms) {
		t.Errorf("comparator terms only, not joined: %v", err)
	}
}

// TestGenerateTermsReplyWithoutComparators: a reply in the shape before
// the comparator role (comparators left out, the comparator among the
// treatments) is valid and gives the query it gave then.
func TestGenerateTermsReplyWithoutComparators(t *testing.T) {
	srv, c := scriptedClient(t)
	srv.QueueChat(ollamatest.ChatReply{Content: `{
 "primary": {"conditions": ["hepatocellular carcinoma"], "treatments": ["microwave ablation", "radiofrequency ablation"], "outcomes": []},
 "core": {"conditions": ["hepatocellular carcinoma"], "treatments": ["microwave ablation", "radiofrequency ablation"], "outcomes": []},
 "expanded": {"conditions": ["HCC"], "treatments": ["MWA", "RFA"], "outcomes": []}
}`})
	steps, err := GenerateTerms(context.Background(), c, scriptedModel, hccPICO, TermOptions{})
	if err != nil {
		t.Fatal(err)
	}
	final := steps.Final()
	if final.Comparators != nil || len(srv.ChatRequests()) != 1 {
		t.Errorf("comparators %q after %d requests, want none after one", final.Comparators, len(srv.ChatRequests()))
	}
	final.JoinComparators = true // nothing to join
	q, err := final.Query()
	if want := `("hepatocellular carcinoma" OR HCC) AND ("microwave ablation" OR "radiofrequency ablation" OR MWA OR RFA)`; err != nil || q != want {
		t.Errorf("query %s, %v; want %s", q, err, want)
	}
	// Saved, the terms have no comparator keys: the project file reads as
	// before.
	b, err := json.Marshal(steps.Final())
	if err != nil || strings.Contains(string(b), "comparator") {
		t.Errorf("saved terms %s, %v", b, err)
	}
}

// TestSearchTermsOldProjectLoadsUnchanged: search terms saved before the
// comparator role (the comparator's terms among the treatments) load with
// no comparator terms, give the same query, and are saved again byte for
// byte as they were.
func TestSearchTermsOldProjectLoadsUnchanged(t *testing.T) {
	const saved = `{"conditions":["hepatocellular carcinoma","HCC"],"treatments":["microwave ablation","radiofrequency ablation"],"outcomes":["local tumor progression"],"join_outcomes":true}`
	var terms SearchTerms
	if err := json.Unmarshal([]byte(saved), &terms); err != nil {
		t.Fatal(err)
	}
	if terms.Comparators != nil || terms.JoinComparators || !terms.JoinOutcomes {
		t.Errorf("loaded %+v", terms)
	}
	q, err := terms.Query()
	if want := `("hepatocellular carcinoma" OR HCC) AND ("microwave ablation" OR "radiofrequency ablation") AND "local tumor progression"`; err != nil || q != want {
		t.Errorf("query %s, %v; want %s", q, err, want)
	}
	b, err := json.Marshal(terms)
	if err != nil || string(b) != saved {
		t.Errorf("saved again as\n%s (%v), want\n%s", b, err, saved)
	}

	// A whole project saved before (format version 1): its terms and
	// query are as they were.
	p, _ := readOldProject(t)
	if p.Terms.Comparators != nil || p.Terms.JoinComparators {
		t.Errorf("version 1 project: terms %+v", p.Terms)
	}
	if q, err := p.Terms.Query(); err != nil || q != p.Query {
		t.Errorf("version 1 project: the terms give %s (%v), its query is %s", q, err, p.Query)
	}
	if b, err := json.Marshal(p); err != nil || strings.Contains(string(b), "comparator") {
		t.Errorf("version 1 project saved again with comparator keys (%v)", err)
	}
}

// TestSuggestTermsKeepsTheJoinChoices: new terms from the model keep the
// user's choices whether the comparison and the outcome join the query,
// and the query follows them.
func TestSuggestTermsKeepsTheJoinChoices(t *testing.T) {
	for _, choice := range []struct{ comparators, outcomes bool }{{false, false}, {true, false}, {true, true}} {
		s, _ := demoSession(t) // its model replies termsReply
		s.Project.Terms = SearchTerms{Conditions: []string{"old"}, JoinComparators: choice.comparators, JoinOutcomes: choice.outcomes}
		if err := s.SuggestTerms(context.Background()); err != nil {
			t.Fatal(err)
		}
		p := s.Project
		if p.Terms.JoinComparators != choice.comparators || p.Terms.JoinOutcomes != choice.outcomes {
			t.Errorf("%+v: choices after new terms: comparators %v, outcomes %v", choice, p.Terms.JoinComparators, p.Terms.JoinOutcomes)
		}
		if !slices.Equal(p.Terms.Comparators, []string{"radiofrequency ablation", "RFA", "radiofrequency"}) {
			t.Errorf("%+v: comparator terms %q", choice, p.Terms.Comparators)
		}
		joined := strings.HasSuffix(p.Query, ` AND ("radiofrequency ablation" OR RFA OR radiofrequency)`)
		if joined != choice.comparators || strings.Contains(p.Query, "old") {
			t.Errorf("%+v: query %s", choice, p.Query)
		}
	}
}

// TestDemoProjectSearchesPopulationAndIntervention: the demo review
// shows the comparison terms in their own role, left out of its query as
// a user following the Cochrane Handbook would leave them.
func TestDemoProjectSearchesPopulationAndIntervention(t *testing.T) {
	db, _ := openDB(t)
	if err := DemoData(context.Background(), db, 1); err != nil {
		t.Fatal(err)
	}
	p, err := DemoProject(context.Background(), NewCorpus(db), "lit")
	if err != nil {
		t.Fatal(err)
	}
	const want = `("hepatocellular carcinoma" OR HCC OR "liver cancer") AND ("microwave ablation" OR MWA)`
	if !slices.Equal(p.Terms.Comparators, []string{"radiofrequency ablation", "RFA"}) || p.Terms.JoinComparators || p.Query != want {
		t.Errorf("demo terms %+v, query %s", p.Terms, p.Query)
	}
	if p.Search == nil || p.Search.Query != want || len(p.Search.IDs) == 0 {
		t.Errorf("demo search %+v", p.Search)
	}
}

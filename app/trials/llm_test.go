package trials

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
	"github.com/clinsight/clinsight/vectorstore"
)

// fixtureTrials are four small trials in the TrialGPT format.
var fixtureTrials = []map[string]any{
	trialGPTRecord("NCT00000001", "Sacubitril in Chronic Heart Failure", []string{"Heart Failure"}, []string{"Sacubitril/Valsartan"},
		"inclusion criteria: \n\n Diagnosis of chronic heart failure \n\n Age 18 years or older \n\n ", ": \n\n Pregnancy \n\n Severe hepatic impairment"),
	trialGPTRecord("NCT00000002", "Amlodipine for Hypertension in Adults", []string{"Hypertension"}, []string{"Amlodipine"},
		"inclusion criteria: \n\n Essential hypertension \n\n Adults aged 18 to 80 years \n\n ", ": \n\n Secondary hypertension"),
	trialGPTRecord("NCT00000003", "Inhaled Budesonide in Childhood Asthma", []string{"Asthma"}, []string{"Budesonide"},
		"inclusion criteria: \n\n Children aged 6 to 12 years with asthma \n\n ", ": \n\n Cystic fibrosis"),
	trialGPTRecord("NCT00000004", "Metformin in Type 2 Diabetes", []string{"Type 2 Diabetes Mellitus"}, []string{"Metformin"},
		"inclusion criteria: \n\n Type 2 diabetes \n\n ", ": \n\n Type 1 diabetes"),
}

func trialGPTRecord(id, title string, diseases, drugs []string, inc, exc string) map[string]any {
	return map[string]any{"_id": id, "title": title, "text": title, "metadata": map[string]any{
		"brief_title": title, "diseases_list": diseases, "drugs_list": drugs,
		"inclusion_criteria": inc, "exclusion_criteria": exc, "brief_summary": "A study of " + strings.ToLower(title) + ".",
	}}
}

// fixtureDB imports records into a new database.
func fixtureDB(t *testing.T, records []map[string]any) (*sql.DB, string) {
	t.Helper()
	dir := t.TempDir()
	src := filepath.Join(dir, "trials.jsonl")
	var b strings.Builder
	for _, r := range records {
		raw, _ := json.Marshal(r)
		b.Write(raw)
		b.WriteByte('\n')
	}
	if err := os.WriteFile(src, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	db, err := datasets.OpenReadWrite(ctx, filepath.Join(dir, "t.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := Import(ctx, db, []string{src}, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	return db, dir
}

// modelPipeline builds a pipeline on the fixture with the real client
// talking to srv and model "m".
func modelPipeline(t *testing.T, srv *ollamatest.Server, opts Options) *Pipeline {
	t.Helper()
	db, dir := fixtureDB(t, fixtureTrials)
	client, err := localllm.New(localllm.Config{Host: srv.URL, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	store, err := vectorstore.Open(filepath.Join(dir, "vectors"), vectorstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	emb := vectorstore.NewLexicalEmbedder(0)
	items, err := store.Collection(context.Background(), "items", emb)
	if err != nil {
		t.Fatal(err)
	}
	p, err := New(Config{DB: db, Chat: client, Model: "m", Embedder: emb, Items: items, Options: opts})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

const patient = "A 60-year-old man with chronic heart failure and hypertension. He denies asthma. He takes amlodipine."

func conceptJSON(hfWeight, htnWeight float64) string {
	return fmt.Sprintf(`{"age": 60, "sex": "male", "concepts": [
		{"text": "heart failure", "kind": "diagnosis", "weight": %g, "negated": false},
		{"text": "hypertension", "kind": "condition", "weight": %g, "negated": false},
		{"text": "asthma", "kind": "condition", "weight": 0.9, "negated": true}]}`, hfWeight, htnWeight)
}

// eligibilityReply answers an eligibility prompt: every criterion of the
// hypertension trial is met, the heart failure trial's first inclusion
// criterion is not, others lack information.
func eligibilityReplyFor(req api.ChatRequest) ollamatest.ChatReply {
	user := req.Messages[len(req.Messages)-1].Content
	ids := regexp.MustCompile(`(?m)^([IE]\d+) \(`).FindAllStringSubmatch(user, -1)
	type v struct {
		ID          string `json:"id"`
		Verdict     string `json:"verdict"`
		Evidence    int    `json:"evidence_sentence"`
		Explanation string `json:"explanation"`
	}
	var out []v
	for _, m := range ids {
		id := m[1]
		verdict := "not enough information"
		switch {
		case strings.Contains(user, "Hypertension") && id[0] == 'I':
			verdict = "included"
		case strings.Contains(user, "Hypertension") && id[0] == 'E':
			verdict = "not excluded"
		case strings.Contains(user, "Heart Failure") && id == "I1":
			verdict = "not included"
		}
		out = append(out, v{id, verdict, 1, "scripted"})
	}
	raw, _ := json.Marshal(map[string]any{"criteria": out})
	return ollamatest.ChatReply{Content: string(raw)}
}

func isEligibilityPrompt(req api.ChatRequest) bool {
	return strings.Contains(req.Messages[0].Content, "eligible for a clinical trial")
}

// TestModelConceptsParsedAndWeighted: the model's concept JSON becomes
// the query (age, sex, weights, a negated concept that is not searched),
// and the weights really change the BM25 ranking.
func TestModelConceptsParsedAndWeighted(t *testing.T) {
	srv := ollamatest.New(t, ollamatest.Model{Name: "m"})
	p := modelPipeline(t, srv, Options{EligibilityTop: 1})
	srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
		if isEligibilityPrompt(req) {
			return eligibilityReplyFor(req)
		}
		return ollamatest.ChatReply{Content: conceptJSON(1, 0.2)}
	})
	res, err := p.Match(context.Background(), Request{Patient: patient, UseModel: true, Top: 4})
	if err != nil {
		t.Fatal(err)
	}
	q := res.Query
	if q.Source != "model m" || !q.HasAge || q.Age != 60 || q.Sex != SexMale {
		t.Errorf("query: source %q age %v/%v sex %q", q.Source, q.Age, q.HasAge, q.Sex)
	}
	var asthma *Concept
	for i := range q.Concepts {
		if q.Concepts[i].Text == "asthma" {
			asthma = &q.Concepts[i]
		}
	}
	if asthma == nil || !asthma.Negated || asthma.Weight != 0 {
		t.Errorf("asthma should be negated with weight 0: %+v", asthma)
	}
	for _, r := range res.Trials {
		if r.Trial.ID == "NCT00000003" && r.BM25.Score != 0 {
			t.Errorf("the negated asthma concept was searched: asthma trial BM25 %v", r.BM25.Score)
		}
	}
	if got := res.Trials[0].Trial.ID; got != "NCT00000001" {
		t.Errorf("heart failure weighs 1: top trial %s, want the heart failure trial", got)
	}
	hf1 := bm25Of(res, "NCT00000001")
	// The prompt carries the patient and the schema instruction.
	reqs := srv.ChatRequests()
	if !strings.Contains(reqs[0].Messages[1].Content, patient) || !strings.Contains(reqs[0].Messages[0].Content, "JSON Schema") {
		t.Errorf("concept prompt: %+v", reqs[0].Messages)
	}

	// Other weights, other scores and order.
	srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
		if isEligibilityPrompt(req) {
			return eligibilityReplyFor(req)
		}
		return ollamatest.ChatReply{Content: conceptJSON(0.2, 1)}
	})
	res2, err := p.Match(context.Background(), Request{Patient: patient, UseModel: true, Top: 4, FilterAge: true, FilterSex: true})
	if err != nil {
		t.Fatal(err)
	}
	if hf2 := bm25Of(res2, "NCT00000001"); !(hf2 < hf1) {
		t.Errorf("lowering the heart failure weight did not lower its BM25: %v → %v", hf1, hf2)
	}
	if got := res2.Trials[0].Trial.ID; got != "NCT00000002" {
		t.Errorf("hypertension weighs 1: top trial %s, want the hypertension trial", got)
	}
	for _, r := range res2.Trials {
		if r.Trial.ID == "NCT00000003" {
			t.Errorf("the children's asthma trial (6-12 years) passed the age filter for a 60-year-old")
		}
	}
}

func bm25Of(res *Result, id string) float64 {
	for _, r := range res.Trials {
		if r.Trial.ID == id {
			return r.BM25.Score
		}
	}
	return -1
}

// TestModelConceptsInvalidJSONRetried: an invalid reply is retried with
// the problems told to the model, and the second, valid reply is used.
func TestModelConceptsInvalidJSONRetried(t *testing.T) {
	srv := ollamatest.New(t, ollamatest.Model{Name: "m"})
	p := modelPipeline(t, srv, Options{EligibilityTop: 1})
	srv.QueueChat(
		ollamatest.ChatReply{Content: `{"age": 60, "concepts": "heart failure"}`},
		ollamatest.ChatReply{Content: conceptJSON(1, 0.5)},
	)
	srv.HandleChat(eligibilityReplyFor)
	res, err := p.Match(context.Background(), Request{Patient: patient, UseModel: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Query.Source != "model m" {
		t.Fatalf("the valid retry was not used: %q, notices %q", res.Query.Source, res.Notices)
	}
	reqs := srv.ChatRequests()
	if len(reqs) < 2 {
		t.Fatalf("%d chat requests, want a retry", len(reqs))
	}
	last := reqs[1].Messages[len(reqs[1].Messages)-1].Content
	if !strings.Contains(last, "not valid") {
		t.Errorf("the retry does not tell the model what was wrong: %q", last)
	}
}

// TestEligibilityReordersTopK: verdicts map to scores, evidence to the
// patient's sentences, and the eligibility score re-orders the top K.
func TestEligibilityReordersTopK(t *testing.T) {
	srv := ollamatest.New(t, ollamatest.Model{Name: "m"})
	p := modelPipeline(t, srv, Options{EligibilityTop: 2})
	srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
		if isEligibilityPrompt(req) {
			return eligibilityReplyFor(req)
		}
		return ollamatest.ChatReply{Content: conceptJSON(1, 0.3)}
	})
	res, err := p.Match(context.Background(), Request{Patient: patient, UseModel: true, Top: 4})
	if err != nil {
		t.Fatal(err)
	}
	// Heart failure leads the fusion, but fails an inclusion criterion;
	// the hypertension trial meets all of its criteria.
	if res.Trials[0].Trial.ID != "NCT00000002" || res.Trials[1].Trial.ID != "NCT00000001" {
		t.Fatalf("order %s, %s; want the eligible hypertension trial first", res.Trials[0].Trial.ID, res.Trials[1].Trial.ID)
	}
	if res.Trials[1].Combo.Rank != 1 {
		t.Errorf("the heart failure trial should have been first by fusion (combo rank %d)", res.Trials[1].Combo.Rank)
	}
	el := res.Trials[0].Eligibility
	if el == nil || el.Score != 1 {
		t.Fatalf("hypertension eligibility %+v, want score 1", el)
	}
	for _, v := range el.Verdicts {
		want := Included
		if v.Kind == Exclusion {
			want = NotExcluded
		}
		if v.Verdict != want || v.Evidence != "A 60-year-old man with chronic heart failure and hypertension." {
			t.Errorf("verdict %+v", v)
		}
	}
	hf := res.Trials[1].Eligibility
	if hf == nil || hf.Verdicts[0].Verdict != NotIncluded || hf.Score >= 0 {
		t.Errorf("heart failure eligibility %+v", hf)
	}
	for _, r := range res.Trials[2:] {
		if r.Eligibility != nil {
			t.Errorf("%s is outside the top K but was assessed", r.Trial.ID)
		}
	}
}

// TestModelFailureFallsBack: a model that is not installed gives the
// lexical ranking with visible notices, not an error.
func TestModelFailureFallsBack(t *testing.T) {
	srv := ollamatest.New(t) // no model installed: every chat is "model not found"
	p := modelPipeline(t, srv, Options{})
	res, err := p.Match(context.Background(), Request{Patient: patient, UseModel: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Query.Source != "deterministic extractor" || len(res.Trials) == 0 {
		t.Fatalf("no lexical fallback: %q, %d trials", res.Query.Source, len(res.Trials))
	}
	joined := strings.Join(res.Notices, " | ")
	if !strings.Contains(joined, "deterministic extractor was used") || !strings.Contains(joined, "lexical ranking order") {
		t.Errorf("notices do not tell the fallback: %q", joined)
	}
	// The server down mid-way: same.
	srv2 := ollamatest.New(t, ollamatest.Model{Name: "m"})
	p2 := modelPipeline(t, srv2, Options{})
	srv2.QueueChat(ollamatest.ChatReply{Content: conceptJSON(1, 1)})
	srv2.HandleChat(func(api.ChatRequest) ollamatest.ChatReply {
		return ollamatest.ChatReply{Fault: ollamatest.Fault{Status: 500, Error: "runner crashed"}}
	})
	res2, err := p2.Match(context.Background(), Request{Patient: patient, UseModel: true})
	if err != nil {
		t.Fatal(err)
	}
	if res2.Query.Source != "model m" || !strings.Contains(strings.Join(res2.Notices, " "), "could not check the eligibility") {
		t.Errorf("eligibility failure: source %q notices %q", res2.Query.Source, res2.Notices)
	}
	for _, r := range res2.Trials {
		if r.Eligibility != nil && r.Eligibility.Error == "" {
			t.Errorf("%s assessed although the model failed", r.Trial.ID)
		}
	}
}

// TestEligibilityChunksToNumCtx: a long criteria list is split over
// several requests that each fit the context window, and every criterion
// gets its verdict.
func TestEligibilityChunksToNumCtx(t *testing.T) {
	long := fixtureTrials[0]
	var inc strings.Builder
	inc.WriteString("inclusion criteria: \n\n")
	for i := range 30 {
		fmt.Fprintf(&inc, " Criterion number %d about chronic heart failure with a fairly long description of laboratory values and history \n\n", i+1)
	}
	rec := trialGPTRecord("NCT00000009", "Long Heart Failure Trial", []string{"Heart Failure"}, nil, inc.String(), ": \n\n Pregnancy")
	srv := ollamatest.New(t, ollamatest.Model{Name: "m"})
	db, dir := fixtureDB(t, []map[string]any{long, rec})
	client, _ := localllm.New(localllm.Config{Host: srv.URL, Logger: slog.New(slog.DiscardHandler)})
	store, _ := vectorstore.Open(filepath.Join(dir, "v"), vectorstore.Options{})
	emb := vectorstore.NewLexicalEmbedder(0)
	items, _ := store.Collection(context.Background(), "items", emb)
	p, err := New(Config{DB: db, Chat: client, Model: "m", Embedder: emb, Items: items, Options: Options{NumCtx: 1500, EligibilityTop: 2}})
	if err != nil {
		t.Fatal(err)
	}
	srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
		if isEligibilityPrompt(req) {
			if n, _ := req.Options["num_ctx"].(float64); n != 1500 {
				t.Errorf("num_ctx %v, want 1500", req.Options["num_ctx"])
			}
			return eligibilityReplyFor(req)
		}
		return ollamatest.ChatReply{Content: conceptJSON(1, 0.1)}
	})
	res, err := p.Match(context.Background(), Request{Patient: patient, UseModel: true})
	if err != nil {
		t.Fatal(err)
	}
	calls := 0
	for _, r := range srv.ChatRequests() {
		if isEligibilityPrompt(r) && strings.Contains(r.Messages[1].Content, "Long Heart Failure Trial") {
			calls++
			if words := len(strings.Fields(r.Messages[0].Content + r.Messages[1].Content)); words > 1500 {
				t.Errorf("a chunk of %d words cannot fit 1500 tokens", words)
			}
		}
	}
	if calls < 2 {
		t.Errorf("31 long criteria went in %d request(s), want several chunks", calls)
	}
	for _, r := range res.Trials {
		if r.Trial.ID != "NCT00000009" {
			continue
		}
		if r.Eligibility == nil || len(r.Eligibility.Verdicts) != 31 {
			t.Fatalf("long trial eligibility: %+v", r.Eligibility)
		}
		for _, v := range r.Eligibility.Verdicts {
			if v.Verdict == VerdictMissing {
				t.Errorf("criterion %s %d not assessed", v.Kind, v.Index)
			}
		}
	}
}

func TestEligibilityScore(t *testing.T) {
	vs := []CriterionVerdict{
		{Criterion: Criterion{Kind: Inclusion}, Verdict: Included},
		{Criterion: Criterion{Kind: Inclusion}, Verdict: Included},
		{Criterion: Criterion{Kind: Inclusion}, Verdict: NotIncluded},
		{Criterion: Criterion{Kind: Inclusion}, Verdict: NotEnoughInfo},
		{Criterion: Criterion{Kind: Exclusion}, Verdict: Excluded},
		{Criterion: Criterion{Kind: Exclusion}, Verdict: NotExcluded},
	}
	if got := EligibilityScore(vs); got != (2.0-1.0)/4-0.5 {
		t.Errorf("score %v, want %v", got, (2.0-1.0)/4-0.5)
	}
	for _, c := range []struct {
		kind CriterionKind
		in   Verdict
		want Verdict
	}{
		{Inclusion, Excluded, NotIncluded}, {Exclusion, Included, Excluded}, {Exclusion, NotIncluded, NotExcluded},
		{Inclusion, "maybe", NotEnoughInfo}, {Exclusion, VerdictMissing, VerdictMissing},
	} {
		if got := normalizeVerdict(c.kind, c.in); got != c.want {
			t.Errorf("normalizeVerdict(%s, %q) = %q, want %q", c.kind, c.in, got, c.want)
		}
	}
}

// TestModelConceptsMatchingNothingFallBack: concepts that match no trial
// (a small model's noise) give way to the deterministic ones, with a notice.
func TestModelConceptsMatchingNothingFallBack(t *testing.T) {
	srv := ollamatest.New(t, ollamatest.Model{Name: "m"})
	p := modelPipeline(t, srv, Options{EligibilityTop: 1})
	srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
		if isEligibilityPrompt(req) {
			return eligibilityReplyFor(req)
		}
		return ollamatest.ChatReply{Content: `{"age": 60, "sex": "male", "concepts": [{"text": "qzxv wplk", "kind": "finding", "weight": 1, "negated": false}]}`}
	})
	res, err := p.Match(context.Background(), Request{Patient: patient, UseModel: true})
	if err != nil {
		t.Fatal(err)
	}
	if res.Query.Source != "deterministic extractor" || len(res.Trials) == 0 ||
		!strings.Contains(strings.Join(res.Notices, " "), "match no trial") {
		t.Errorf("source %q, %d trials, notices %q", res.Query.Source, len(res.Trials), res.Notices)
	}
}

package impression

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// testCorpus is a small corpus: normal reports, cardiomegaly, effusion.
func testCorpus() *Corpus {
	mk := func(id int64, f, i string) Report {
		r := Report{ID: id, Source: "test", UID: "r" + string(rune('0'+id)), Findings: f, Impression: i}
		r.prepare()
		return r
	}
	return NewCorpus([]Report{
		mk(1, "The heart is normal in size. The lungs are clear. No pleural effusion or pneumothorax is seen.", "No acute cardiopulmonary abnormality."),
		mk(2, "Heart size is normal. The lungs are clear bilaterally. No pleural effusion or pneumothorax.", "No acute cardiopulmonary disease."),
		mk(3, "Normal heart size. Lungs are clear. No focal consolidation, effusion or pneumothorax.", "Normal chest radiograph, no acute abnormality."),
		mk(4, "Mild cardiomegaly. The lungs are clear. No pleural effusion. No pneumothorax identified today.", "Mild cardiomegaly without acute disease."),
		mk(5, "Moderate cardiomegaly. Small left pleural effusion with adjacent atelectasis of the left base.", "Cardiomegaly and small left pleural effusion."),
		mk(6, "Short findings here.", "Too short to be an example report."),
	})
}

const normalFindings = "The heart is normal in size. The lungs are clear. No effusion or pneumothorax."

// newTestClient returns the real client on a scripted server.
func newTestClient(t *testing.T) (*ollamatest.Server, *localllm.Client) {
	t.Helper()
	srv := ollamatest.New(t, ollamatest.Model{Name: "m"})
	c, err := localllm.New(localllm.Config{Host: srv.URL, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	return srv, c
}

// lastUser returns the final user message of a recorded request.
func lastUser(r api.ChatRequest) string { return r.Messages[len(r.Messages)-1].Content }

func TestGeneratePromptStructureAndFeedback(t *testing.T) {
	srv, client := newTestClient(t)
	corpus := testCorpus()
	replies := []string{
		"Cardiomegaly with edema.",               // 1: bad
		"No acute cardiopulmonary abnormality.",  // 2: good (the best)
		"Large pleural effusion.",                // 3: bad, replaces 1
		"IMPRESSION: No acute abnormality.",      // 4: good, replaces 2 (heading stripped)
		"No acute cardiopulmonary disease seen.", // 5
	}
	for _, r := range replies {
		srv.QueueChat(ollamatest.ChatReply{Content: r})
	}
	p, err := NewPipeline(corpus, client, Options{Model: "m", Examples: 3, Iterations: 5, Threshold: 0.5, MaxWords: 12, Seed: new(10)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	deltas := map[int]string{}
	var done []int
	res, err := p.Generate(context.Background(), Request{Findings: normalFindings}, func(e Event) {
		mu.Lock()
		defer mu.Unlock()
		deltas[e.Iteration] += e.Delta
		if e.Done != nil {
			done = append(done, e.Done.Number)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	reqs := srv.ChatRequests()
	if len(reqs) != 5 {
		t.Fatalf("%d chat requests, want 5", len(reqs))
	}
	// Role structure: system, (user question + FINDINGS, assistant
	// IMPRESSION) per example in order, then the user turn.
	ex := corpus.Similar(Query{Findings: normalFindings, N: 3, Candidates: 3})
	for i, m := range ex {
		if res.Examples[i].Report.ID != m.Report.ID {
			t.Fatalf("examples %v differ from Similar %v", res.Examples, ex)
		}
	}
	first := reqs[0]
	if len(first.Messages) != 2+2*3 || first.Messages[0].Role != "system" || !strings.Contains(first.Messages[0].Content, "chest radiologist") ||
		!strings.Contains(first.Messages[0].Content, "findings only") {
		t.Fatalf("prompt %+v", first.Messages)
	}
	for i, m := range ex {
		u, a := first.Messages[1+2*i], first.Messages[2+2*i]
		if u.Role != "user" || u.Content != "Write the IMPRESSION for these chest X-ray FINDINGS.\nFINDINGS: "+m.Report.Findings ||
			a.Role != "assistant" || a.Content != m.Report.Impression {
			t.Errorf("example %d: %+v / %+v", i, u, a)
		}
	}
	if got := lastUser(first); got != "Write the IMPRESSION for these chest X-ray FINDINGS.\nFINDINGS: "+normalFindings {
		t.Errorf("first final turn %q", got)
	}
	if o := first.Options; o["seed"] != float64(11) || o["temperature"] != 0.7 || o["num_ctx"] != float64(DefaultNumCtx) {
		t.Errorf("options %v", o)
	}
	const exc, neg = "Below is an excellent impression of the FINDINGS above:\n", "Below is a negative impression of the FINDINGS above:\n"
	for i, w := range []struct{ good, bad string }{
		{"", ""},
		{"", replies[0]},                      // after 1 (bad)
		{replies[1], replies[0]},              // after 2 (good)
		{replies[1], replies[2]},              // after 3: the bad one replaced
		{"No acute abnormality.", replies[2]}, // after 4: the good one replaced
	} {
		u := lastUser(reqs[i])
		if w.good == "" && strings.Contains(u, "excellent") || w.good != "" && !strings.Contains(u, exc+w.good+"\n") {
			t.Errorf("request %d: good %q not as expected in %q", i+1, w.good, u)
		}
		if w.bad == "" && strings.Contains(u, "negative impression") || w.bad != "" && !strings.Contains(u, neg+w.bad+"\n") {
			t.Errorf("request %d: bad %q not as expected in %q", i+1, w.bad, u)
		}
		if i > 0 && (!strings.Contains(u, "at most 12 words") || strings.Count(u, "Below is") != len(nonEmpty(w.good, w.bad))) {
			t.Errorf("request %d: no length limit or extra pairs: %q", i+1, u)
		}
		if len(reqs[i].Messages) != len(first.Messages) {
			t.Errorf("request %d has %d messages", i+1, len(reqs[i].Messages))
		}
	}
	var roles []string
	for _, it := range res.Iterations {
		roles = append(roles, it.Role)
	}
	if strings.Join(roles, ",") != "bad,good,bad,good,good" {
		t.Errorf("roles %v (scores %v)", roles, scores(res))
	}
	if !res.Generated || res.Best != 1 || res.Impression != replies[1] || res.Score != res.Iterations[1].Score || res.Notice != "" {
		t.Errorf("result: generated %v best %d %q score %.3f notice %q (scores %v)", res.Generated, res.Best, res.Impression, res.Score, res.Notice, scores(res))
	}
	for _, it := range res.Iterations {
		if it.Score > res.Score {
			t.Errorf("iteration %d scored %.3f above the returned %.3f", it.Number, it.Score, res.Score)
		}
	}
	if deltas[2] != replies[1] || len(done) != 5 || res.Usage.Calls != 5 {
		t.Errorf("streamed %q, done %v, usage %+v", deltas[2], done, res.Usage)
	}
}

func nonEmpty(s ...string) []string {
	var out []string
	for _, x := range s {
		if x != "" {
			out = append(out, x)
		}
	}
	return out
}

func scores(res Result) []float64 {
	var s []float64
	for _, it := range res.Iterations {
		s = append(s, it.Score)
	}
	return s
}

func TestGenerateFallsBackWhenTheModelFails(t *testing.T) {
	srv, client := newTestClient(t)
	srv.QueueFault("/api/chat", ollamatest.Fault{Status: 500, Error: "out of memory"}, ollamatest.Fault{Status: 500, Error: "out of memory"},
		ollamatest.Fault{Status: 500, Error: "out of memory"})
	p, err := NewPipeline(testCorpus(), client, Options{Model: "m", Examples: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Generate(context.Background(), Request{Findings: normalFindings}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := res.Examples[res.Retrieved].Report.Impression
	if res.Generated || res.Impression != want || res.Source() != "retrieved" || !strings.Contains(res.Notice, "retrieved, not generated") ||
		len(res.Iterations) != 3 || res.Iterations[0].Err == "" || res.Best != -1 {
		t.Errorf("fallback: %+v", res)
	}

	// A missing model: one call, then the fallback.
	srv2, client2 := newTestClient(t)
	p2, _ := NewPipeline(testCorpus(), client2, Options{Model: "absent"}, nil)
	res, err = p2.Generate(context.Background(), Request{Findings: normalFindings}, nil)
	if err != nil || res.Generated || len(res.Iterations) != 1 || !strings.Contains(res.Notice, "not installed") || srv2.Count("POST", "/api/chat") != 1 {
		t.Errorf("missing model: %v %+v", err, res)
	}

	// One failure among successes: the answer is generated.
	srv3, client3 := newTestClient(t)
	srv3.QueueFault("/api/chat", ollamatest.Fault{Status: 500, Error: "busy"})
	srv3.HandleChat(func(api.ChatRequest) ollamatest.ChatReply { return ollamatest.ChatReply{Content: "No acute disease."} })
	p3, _ := NewPipeline(testCorpus(), client3, Options{Model: "m", Iterations: 2}, nil)
	res, err = p3.Generate(context.Background(), Request{Findings: normalFindings}, nil)
	if err != nil || !res.Generated || res.Impression != "No acute disease." || res.Best != 1 || res.Iterations[0].Err == "" {
		t.Errorf("partial failure: %v %+v", err, res)
	}
}

func TestGenerateWithoutModel(t *testing.T) {
	p, err := NewPipeline(testCorpus(), nil, Options{NoLLM: true, Examples: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Generate(context.Background(), Request{Findings: normalFindings}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res.Generated || len(res.Iterations) != 0 || res.Notice != "" || res.Model != "" || len(res.Examples) < 3 || len(res.Examples) > 4 {
		t.Errorf("no-LLM result %+v", res)
	}
	// The retrieved impression is ChooseImpression's among the examples and
	// the next similar reports; one from beyond the examples follows them.
	c := testCorpus()
	labels := LabelText(normalFindings)
	cands := mergeMatches(c.Similar(Query{Findings: normalFindings, N: 3}), c.Similar(Query{Findings: normalFindings, N: RetrievalCandidates, Candidates: retrievalPool}))
	ch := ChooseImpression(labels, cands, 3)
	if res.Impression != cands[ch.Index].Report.Impression || res.Examples[res.Retrieved].Report.ID != cands[ch.Index].Report.ID ||
		res.Score != ch.Agreement || (ch.Index >= 3) != (len(res.Examples) == 4) {
		t.Errorf("retrieved %d (%q), chosen %d", res.Retrieved, res.Impression, ch.Index)
	}
	// IgnoreConsistency: the impression agreeing most with the others.
	pc, _ := NewPipeline(testCorpus(), nil, Options{NoLLM: true, Examples: 3, IgnoreConsistency: true}, nil)
	res, _ = pc.Generate(context.Background(), Request{Findings: normalFindings}, nil)
	k, score := ConsensusChoice(res.Examples)
	if len(res.Examples) != 3 || res.Retrieved != k || res.Impression != res.Examples[k].Report.Impression || res.Score != score {
		t.Errorf("retrieved %d (%q), consensus %d", res.Retrieved, res.Impression, k)
	}
	// The report itself is never an example.
	res, _ = p.Generate(context.Background(), Request{Findings: testCorpus().reports[0].Findings, ExcludeID: 1}, nil)
	for _, m := range res.Examples {
		if m.Report.ID == 1 || m.Report.ID == 6 {
			t.Errorf("example %d: the report itself or an ineligible report", m.Report.ID)
		}
	}
	if _, err := p.Generate(context.Background(), Request{Findings: "  "}, nil); err == nil {
		t.Error("empty findings accepted")
	}
	if _, err := NewPipeline(testCorpus(), nil, Options{}, nil); err == nil || !strings.Contains(err.Error(), "no chat model") {
		t.Errorf("no model: %v", err)
	}
	if _, err := NewPipeline(NewCorpus(nil), nil, Options{NoLLM: true}, nil); err == nil {
		t.Error("empty corpus accepted")
	}
}

func TestGenerateCancel(t *testing.T) {
	srv, client := newTestClient(t)
	ctx, cancel := context.WithCancel(context.Background())
	srv.HandleChat(func(api.ChatRequest) ollamatest.ChatReply {
		return ollamatest.ChatReply{Content: "one two three four five six", Fault: ollamatest.Fault{Delay: 50e6}}
	})
	p, _ := NewPipeline(testCorpus(), client, Options{Model: "m"}, nil)
	_, err := p.Generate(ctx, Request{Findings: normalFindings}, func(e Event) {
		if e.Delta != "" {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

func TestSimilarOrder(t *testing.T) {
	c := testCorpus()
	// Cardiomegaly and an effusion: report 5 has the same labels.
	q := "Moderate cardiomegaly. Small left pleural effusion."
	ms := c.Similar(Query{Findings: q, N: 5, Candidates: 100})
	if len(ms) != 5 || ms[0].Report.ID != 5 {
		t.Fatalf("nearest %+v", ms)
	}
	for i := 1; i < len(ms); i++ {
		a, b := ms[i-1], ms[i]
		if a.Distance > b.Distance || a.Distance == b.Distance && a.Similarity < b.Similarity {
			t.Errorf("order: %d (%.2f, %.3f) before %d (%.2f, %.3f)", a.Report.ID, a.Distance, a.Similarity, b.Report.ID, b.Distance, b.Similarity)
		}
		if b.Report.ID == 6 {
			t.Error("an ineligible report was returned")
		}
	}
	// Excluding the report itself, and its text.
	ms = c.Similar(Query{Findings: c.reports[4].Findings, N: 2, ExcludeID: 5})
	if ms[0].Report.ID == 5 {
		t.Error("the excluded report was returned")
	}
	ms = c.Similar(Query{Findings: c.reports[4].Findings, N: 5, ExcludeText: c.reports[4].Findings + " "})
	for _, m := range ms {
		if m.Report.ID == 5 {
			t.Error("the excluded text was returned")
		}
	}
	// Ties in label distance are broken by text similarity.
	ms = c.Similar(Query{Findings: "Heart size is normal. The lungs are clear bilaterally. No pleural effusion or pneumothorax.", N: 1, Candidates: 100})
	if ms[0].Report.ID != 2 || ms[0].Similarity < 0.99 {
		t.Errorf("tie-break: %+v", ms[0])
	}
}

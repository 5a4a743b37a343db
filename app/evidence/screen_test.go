package evidence

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/localllm"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

var testCriteria = []Criterion{
	{Text: "The study includes patients with hepatocellular carcinoma.", Kind: TitleCriterion, Weight: 1},
	{Text: "The study uses microwave ablation.", Kind: TitleCriterion, Weight: 2},
	{Text: "The study compares with radiofrequency ablation.", Kind: ContentCriterion, Weight: 1},
}

func testRecords(n int) []Record {
	out := make([]Record, n)
	for i := range out {
		out[i] = Record{ID: fmt.Sprintf("pmid:%d", 1000+i), PMID: fmt.Sprint(1000 + i), Title: fmt.Sprintf("Study number %d of ablation", i),
			Sections: []Section{{Label: "METHODS", Text: "Patients were randomised."}}}
	}
	return out
}

func TestGenerateCriteria(t *testing.T) {
	srv, c := scriptedClient(t)
	srv.QueueChat(ollamatest.ChatReply{Content: `{"analysis":"RCTs of MWA vs RFA in HCC.","title_criteria":["Hepatocellular carcinoma"," "],"content_criteria":["Randomized controlled trial","hepatocellular  carcinoma","Reports local tumor progression"]}`})
	set, err := GenerateCriteria(context.Background(), c, scriptedModel, hccPICO, localllm.Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := set.Criteria()
	want := []Criterion{{Text: "Hepatocellular carcinoma", Kind: TitleCriterion, Weight: 1},
		{Text: "Randomized controlled trial", Kind: ContentCriterion, Weight: 1},
		{Text: "Reports local tumor progression", Kind: ContentCriterion, Weight: 1}}
	if fmt.Sprint(got) != fmt.Sprint(want) || set.Analysis == "" {
		t.Errorf("criteria %+v", got)
	}
	if u := srv.ChatRequests()[0].Messages[1].Content; !strings.Contains(u, "Comparison: radiofrequency ablation") {
		t.Errorf("prompt %q", u)
	}
	// No criterion at all: an error.
	srv.QueueChat(ollamatest.ChatReply{Content: `{"analysis":"?","title_criteria":[],"content_criteria":[""]}`})
	if _, err := GenerateCriteria(context.Background(), c, scriptedModel, hccPICO, localllm.Options{}); err == nil || !strings.Contains(err.Error(), "no eligibility criteria") {
		t.Errorf("empty: %v", err)
	}
}

func TestParseCriteria(t *testing.T) {
	cs, err := ParseCriteria([]byte(`["Adults", {"text":"RCT","kind":"content","weight":0.5}, {"text":"English","disabled":true}, {"text":"Zero","weight":0}]`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Criterion{{Text: "Adults", Weight: 1}, {Text: "RCT", Kind: ContentCriterion, Weight: 0.5}, {Text: "English", Weight: 1, Disabled: true}, {Text: "Zero"}}
	if fmt.Sprint(cs) != fmt.Sprint(want) {
		t.Errorf("got %+v", cs)
	}
	for in, msg := range map[string]string{
		`[]`:                          "empty",
		`{"text":"x"}`:                "JSON list",
		`["ok", " "]`:                 "criterion 2: the criterion has no text",
		`[{"text":"x","weight":-1}]`:  "weight -1",
		`[{"text":"x","kind":"abc"}]`: `kind "abc"`,
		`[{"text":"x","wieght":2}]`:   "unknown field",
	} {
		if _, err := ParseCriteria([]byte(in)); err == nil || !strings.Contains(err.Error(), msg) {
			t.Errorf("%s: %v, want %q", in, err, msg)
		}
	}
}

func TestScreenVerdicts(t *testing.T) {
	srv, c := scriptedClient(t)
	s := &Screener{Chat: c, Model: scriptedModel, PICO: hccPICO, Criteria: testCriteria}
	rec := testRecords(1)[0]
	srv.QueueChat(ollamatest.ChatReply{Content: `{"verdicts":["YES","UNCERTAIN","NO"]}`})
	v, err := s.Screen(context.Background(), &rec)
	if err != nil || fmt.Sprint(v) != "[YES UNCERTAIN NO]" {
		t.Fatalf("verdicts %v, %v", v, err)
	}
	user := srv.ChatRequests()[0].Messages[1].Content
	for _, want := range []string{"Eligibility criteria (3):", "2. The study uses microwave ablation.", "Title: Study number 0 of ablation", "Abstract: METHODS: Patients were randomised.", "list of 3 verdicts"} {
		if !strings.Contains(user, want) {
			t.Errorf("prompt lacks %q:\n%s", want, user)
		}
	}
}

func TestScreenCountMismatchRetriedThenRejected(t *testing.T) {
	srv, c := scriptedClient(t)
	s := &Screener{Chat: c, Model: scriptedModel, PICO: hccPICO, Criteria: testCriteria}
	rec := testRecords(1)[0]

	// Wrong count, then right: accepted, the retry says how many.
	srv.QueueChat(ollamatest.ChatReply{Content: `{"verdicts":["YES","NO"]}`}, ollamatest.ChatReply{Content: `{"verdicts":["YES","NO","YES"]}`})
	v, err := s.Screen(context.Background(), &rec)
	if err != nil || len(v) != 3 {
		t.Fatalf("after retry: %v, %v", v, err)
	}
	reqs := srv.ChatRequests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	msgs := reqs[1].Messages
	if len(msgs) != 4 || msgs[2].Role != "assistant" || msgs[2].Content != `{"verdicts":["YES","NO"]}` ||
		!strings.Contains(msgs[3].Content, "Your reply has 2 verdicts, but there are 3 criteria. Reply again with exactly 3 verdicts") {
		t.Errorf("retry messages %+v", msgs)
	}

	// Wrong twice: rejected with a clear error, after exactly two requests.
	srv.QueueChat(ollamatest.ChatReply{Content: `{"verdicts":["YES","NO","YES","YES"]}`}, ollamatest.ChatReply{Content: `{"verdicts":[]}`})
	_, err = s.Screen(context.Background(), &rec)
	var ce *VerdictCountError
	if !errors.As(err, &ce) || ce.Want != 3 || ce.Got != 0 || !strings.Contains(err.Error(), "screening pmid:1000: model tiny gave 0 verdicts for 3 criteria") {
		t.Errorf("rejected: %v", err)
	}
	if n := len(srv.ChatRequests()); n != 4 {
		t.Errorf("%d requests in all, want 4", n)
	}
}

func TestScore(t *testing.T) {
	v := []Verdict{Yes, Uncertain, No}
	near := func(a, b float64) bool { return math.Abs(a-b) < 1e-12 }
	// Weighted mean of 1, 0, -1 with weights 1, 2, 1.
	if got := Score(v, testCriteria); !near(got, 0) {
		t.Errorf("all: %v", got)
	}
	cs := append([]Criterion(nil), testCriteria...)
	cs[2].Disabled = true // the NO no longer counts: (1*1 + 2*0) / 3
	if got := Score(v, cs); !near(got, 1.0/3) {
		t.Errorf("disabled: %v", got)
	}
	cs[1].Weight = 0 // only the YES counts
	if got := Score(v, cs); !near(got, 1) {
		t.Errorf("weight 0: %v", got)
	}
	cs[0].Disabled = true
	if got := Score(v, cs); got != 0 {
		t.Errorf("nothing enabled: %v", got)
	}
	cs = append([]Criterion(nil), testCriteria...)
	cs[0].Weight = 3 // (3*1 + 0 - 1) / 6
	if got := Score(v, cs); !near(got, 2.0/6) {
		t.Errorf("weight 3: %v", got)
	}
	if got := Score([]Verdict{No}, testCriteria); !near(got, -1.0/4) {
		t.Errorf("missing verdicts count as uncertain: %v", got)
	}
}

// screenHandler answers screening requests after a delay, counting the
// requests in flight and recording the most seen at once; a study whose
// title contains fail gets a server error.
type screenHandler struct {
	inFlight, peak atomic.Int32
	calls          atomic.Int32
	delay          time.Duration
	fail           string
}

func (h *screenHandler) handle(req api.ChatRequest) ollamatest.ChatReply {
	n := h.inFlight.Add(1)
	defer h.inFlight.Add(-1)
	h.calls.Add(1)
	for {
		p := h.peak.Load()
		if n <= p || h.peak.CompareAndSwap(p, n) {
			break
		}
	}
	time.Sleep(h.delay)
	if h.fail != "" && strings.Contains(req.Messages[len(req.Messages)-1].Content, h.fail) {
		return ollamatest.ChatReply{Fault: ollamatest.Fault{Status: 500, Error: "model runner crashed"}}
	}
	return ollamatest.ChatReply{Content: `{"verdicts":["YES","UNCERTAIN","NO"]}`}
}

func TestScreenAllConcurrencyBound(t *testing.T) {
	srv, c := scriptedClient(t)
	h := &screenHandler{delay: 20 * time.Millisecond, fail: "Study number 3 "}
	srv.HandleChat(h.handle)
	s := &Screener{Chat: c, Model: scriptedModel, PICO: hccPICO, Criteria: testCriteria}
	var mu sync.Mutex
	var progress []int
	res, err := s.ScreenAll(context.Background(), testRecords(12), ScreenOptions{Concurrency: 3, Progress: func(done, total int) {
		mu.Lock()
		defer mu.Unlock()
		if total != 12 {
			t.Errorf("total %d", total)
		}
		progress = append(progress, done)
	}})
	if err != nil {
		t.Fatal(err)
	}
	if p := h.peak.Load(); p > 3 || p < 2 {
		t.Errorf("peak in flight %d, want ≤ 3 (and parallel)", p)
	}
	if len(res) != 12 || len(progress) != 12 || progress[11] != 12 {
		t.Fatalf("%d results, progress %v", len(res), progress)
	}
	for i, r := range res {
		if r.Index != i || r.Record.PMID != fmt.Sprint(1000+i) {
			t.Errorf("result %d out of order: %+v", i, r)
		}
		if i == 3 {
			if r.Err == nil || localllm.KindOf(r.Err) != localllm.Server || !strings.Contains(r.Err.Error(), "screening pmid:1003") || r.Verdicts != nil {
				t.Errorf("failed study: %+v", r)
			}
			continue
		}
		if r.Err != nil || fmt.Sprint(r.Verdicts) != "[YES UNCERTAIN NO]" || r.Score != 0 {
			t.Errorf("study %d: %+v", i, r)
		}
	}
	if err := Failed(res); err == nil || !strings.Contains(err.Error(), "pmid:1003") || strings.Contains(err.Error(), "pmid:1004") {
		t.Errorf("Failed = %v", err)
	}
}

func TestScreenAllCancel(t *testing.T) {
	srv, c := scriptedClient(t)
	h := &screenHandler{delay: 30 * time.Millisecond}
	srv.HandleChat(h.handle)
	s := &Screener{Chat: c, Model: scriptedModel, PICO: hccPICO, Criteria: testCriteria}
	ctx, cancel := context.WithCancel(context.Background())
	res, err := s.ScreenAll(ctx, testRecords(40), ScreenOptions{Concurrency: 2, Progress: func(done, _ int) {
		if done == 2 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	var ok, cancelled int
	for _, r := range res {
		switch {
		case r.Err == nil:
			ok++
		case errors.Is(r.Err, context.Canceled) || localllm.KindOf(r.Err) == localllm.Cancelled:
			cancelled++
		default:
			t.Errorf("unexpected error %v", r.Err)
		}
	}
	if len(res) != 40 || ok < 2 || ok > 4 || cancelled != 40-ok {
		t.Errorf("%d results, %d screened, %d cancelled", len(res), ok, cancelled)
	}
	if n := h.calls.Load(); n > 5 {
		t.Errorf("%d model calls after cancelling at 2", n)
	}
}

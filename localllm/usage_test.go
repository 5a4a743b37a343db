package localllm_test

import (
	"sync"
	"testing"
	"time"

	"github.com/clinsight/clinsight/localllm"
)

func TestUsageAdd(t *testing.T) {
	a := localllm.Usage{Model: "m", Calls: 1, PromptTokens: 10, CompletionTokens: 5, TotalDuration: time.Second}
	b := localllm.Usage{Model: "m", Calls: 2, PromptTokens: 1, CompletionTokens: 1, EvalDuration: time.Millisecond}
	s := a.Add(b)
	if s.Model != "m" || s.Calls != 3 || s.PromptTokens != 11 || s.CompletionTokens != 6 || s.TotalDuration != time.Second || s.EvalDuration != time.Millisecond {
		t.Errorf("sum = %+v", s)
	}
	if got := (localllm.Usage{}).Add(a); got != a {
		t.Errorf("zero + a = %+v", got)
	}
	if got := a.Add(localllm.Usage{}); got != a {
		t.Errorf("a + zero = %+v", got)
	}
	if got := a.Add(localllm.Usage{Model: "other", Calls: 1}); got.Model != "" || got.Calls != 2 {
		t.Errorf("mixed models = %+v", got)
	}
}

func TestUsageCounterConcurrent(t *testing.T) {
	var c localllm.UsageCounter
	var wg sync.WaitGroup
	for i := range 50 {
		wg.Go(func() {
			model := "chat"
			if i%2 == 1 {
				model = "embed"
			}
			for range 20 {
				c.Add(localllm.Usage{Model: model, Calls: 1, PromptTokens: 3, CompletionTokens: 2, TotalDuration: time.Millisecond})
			}
		})
	}
	wg.Wait()
	total := c.Total()
	if total.Calls != 1000 || total.PromptTokens != 3000 || total.CompletionTokens != 2000 || total.TotalDuration != time.Second || total.Model != "" {
		t.Errorf("total = %+v", total)
	}
	by := c.ByModel()
	if by["chat"].Calls != 500 || by["embed"].Calls != 500 || by["chat"].Model != "chat" {
		t.Errorf("by model = %+v", by)
	}
	by["chat"] = localllm.Usage{}
	if c.ByModel()["chat"].Calls != 500 {
		t.Error("ByModel returned the internal map")
	}
	if r := c.Reset(); r.Calls != 1000 || c.Total().Calls != 0 || len(c.ByModel()) != 0 {
		t.Errorf("Reset = %+v, then %+v", r, c.Total())
	}
}

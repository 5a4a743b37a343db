package cohort

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/internal/cohortbench"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// benchQuestions are cohort questions on the demo data with SQL answering
// them, the scripted model's replies.
var benchQuestions = cohortbench.Questions

// BenchmarkQuestion measures, on the default-size demo data (3,000
// patients) with a scripted model answering every question right the
// first time, the time per question spent outside model calls (retrieval,
// guard, validation, execution, number checks) and the model calls per
// answered question. Reported: nonllm-ms-median (goal ≤ 50),
// nonllm-ms-max, llm-calls/answered (goal ≤ 2).
func BenchmarkQuestion(b *testing.B) {
	path := filepath.Join(b.TempDir(), "demo.sqlite")
	if _, err := demo.Generate(context.Background(), path, demo.DefaultOptions()); err != nil {
		b.Fatal(err)
	}
	sqlFor := map[string]string{}
	for _, q := range benchQuestions {
		sqlFor[q.Q] = q.SQL
	}
	f := newFixtureOn(b, path, Config{})
	f.srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
		if req.Format == nil {
			return text("The result answers the question.")
		}
		user := req.Messages[len(req.Messages)-1].Content
		return classify("answerable", "", sqlFor[strings.TrimPrefix(user, "Question: ")])
	})
	ctx := context.Background()
	var nonLLM []time.Duration
	calls, answered := 0, 0
	b.ResetTimer()
	for range b.N {
		for _, q := range benchQuestions {
			ans, err := f.p.Ask(ctx, Request{Question: q.Q}, nil)
			if err != nil || ans.Status != StatusAnswered || len(ans.Attempts) != 1 {
				b.Fatalf("%q: %v %s %+v", q.Q, err, ans.Status, ans.Attempts)
			}
			nonLLM = append(nonLLM, ans.NonLLMTime())
			if testing.Verbose() {
				var st []string
				for _, s := range ans.Stages {
					if s.Name != "classify+generate" && s.Name != "explain" {
						st = append(st, fmt.Sprintf("%s %s", s.Name, s.Duration.Round(10*time.Microsecond)))
					}
				}
				fmt.Printf("%-50s non-LLM %8s: %s\n", q.Q, ans.NonLLMTime().Round(10*time.Microsecond), strings.Join(st, ", "))
			}
			calls += ans.Calls()
			answered++
		}
	}
	b.StopTimer()
	slices.Sort(nonLLM)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
	b.ReportMetric(ms(nonLLM[len(nonLLM)/2]), "nonllm-ms-median")
	b.ReportMetric(ms(nonLLM[len(nonLLM)-1]), "nonllm-ms-max")
	b.ReportMetric(float64(calls)/float64(answered), "llm-calls/answered")
	b.ReportMetric(0, "ns/op")
	if testing.Verbose() {
		fmt.Printf("non-LLM time per question: median %s, max %s over %d questions\n", nonLLM[len(nonLLM)/2], nonLLM[len(nonLLM)-1], len(nonLLM))
	}
}

// BenchmarkRetrieveEHRSQL measures retrieval alone on the EHRSQL database.
func BenchmarkRetrieveEHRSQL(b *testing.B) {
	ix, _ := ehrsqlIndex(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := range b.N {
		if _, err := ix.Retrieve(ctx, benchQuestions[i%len(benchQuestions)].Q, 5); err != nil {
			b.Fatal(err)
		}
	}
}

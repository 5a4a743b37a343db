package cohort

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/app/eval"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// TestEHRSQLOracle runs the whole pipeline on a sample of the EHRSQL 2024
// valid split with a scripted model that replies with the gold SQL (and
// declines the unanswerable questions): every stage without a model —
// retrieval threshold, guard, validation, execution with the data set's
// fixed "now", re-checks of empty results, scoring with the task's answer
// conventions — must then reach a perfect score.
func TestEHRSQLOracle(t *testing.T) {
	ix, dir := ehrsqlIndex(t)
	items, err := eval.LoadEHRSQL(dir, "valid")
	if err != nil {
		t.Fatal(err)
	}
	var sample []eval.EHRSQLItem
	gold := map[string]string{}
	for i, it := range items {
		if it.Unrunnable || i%12 != 0 {
			continue
		}
		sample = append(sample, it)
		if it.Answerable {
			gold[it.Question] = eval.EHRSQLQuery(it.GoldSQL)
		}
	}
	srv := ollamatest.New(t, ollamatest.Model{Name: sqlModel})
	srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
		user := req.Messages[len(req.Messages)-1].Content
		switch {
		case req.Format != nil:
			q := strings.TrimPrefix(user, "Question: ")
			if sql, ok := gold[q]; ok {
				return classify("answerable", "", sql)
			}
			return classify("out_of_scope", "not recorded", "")
		case strings.Contains(user, "returned no rows"):
			return text("The filters are right.")
		}
		return text("Done.")
	})
	client := newClient(t, srv.URL)
	runner := newRunner(t, realdataPath(t))
	p, err := New(context.Background(), Config{Chat: client, Runner: runner, Index: ix, SQLModel: sqlModel, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	rep, err := EvaluateEHRSQL(context.Background(), p, sample, nil)
	if err != nil {
		t.Fatal(err)
	}
	m := rep.EHRSQLMetrics
	t.Logf("oracle on %d questions (%d answerable): EX %.4f, RS(10) %.2f, abstention P %.3f R %.3f, mean attempts %.2f, LLM calls %.2f, median %.0f ms",
		m.N, m.Answerable, m.ExecutionAccuracy, m.RS10, m.AbstainPrecision, m.AbstainRecall, rep.MeanAttempts, rep.LLMCallsPerQuestion, rep.MedianLatencyMS)
	for _, r := range rep.Records {
		if r.Answerable && !r.Correct {
			t.Errorf("%s %q: %s %s\n  sql %s\n  got %v\n  gold %s", r.ID, r.Question, r.Status, r.Message, r.SQL, r.Answer, r.Gold)
		}
	}
	if m.ExecutionAccuracy != 1 || m.RS10 != 100 || m.AbstainRecall != 1 || m.AbstainPrecision != 1 {
		t.Errorf("metrics = %+v", m)
	}
	if s := fmt.Sprint(m.N); m.N < 80 {
		t.Errorf("only %s questions sampled", s)
	}
}

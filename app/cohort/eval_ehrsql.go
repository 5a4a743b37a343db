package cohort

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"
	"time"

	"github.com/clinsight/clinsight/app/eval"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/localllm"
)

// EHRSQLRecord is the outcome of one EHRSQL question.
type EHRSQLRecord struct {
	ID         string   `json:"id"`
	Question   string   `json:"question"`
	Answerable bool     `json:"answerable"`
	GoldSQL    string   `json:"gold_sql,omitempty"`
	Gold       string   `json:"gold_answer,omitempty"`
	Status     Status   `json:"status"`
	Category   Category `json:"category,omitempty"`
	Abstained  bool     `json:"abstained"`
	Correct    bool     `json:"correct"`
	// Score is the reliability score with penalty 10.
	Score     float64    `json:"rs_10"`
	SQL       string     `json:"sql,omitempty"`
	Answer    [][]string `json:"answer,omitempty"`
	Message   string     `json:"message,omitempty"`
	Attempts  int        `json:"attempts"`
	LLMCalls  int        `json:"llm_calls"`
	Tokens    int        `json:"tokens"`
	LatencyMS int64      `json:"latency_ms"`
	NonLLMMS  int64      `json:"non_llm_ms"`
}

// EHRSQLReport is the outcome of EvaluateEHRSQL.
type EHRSQLReport struct {
	eval.EHRSQLMetrics
	// MeanAttempts is the mean number of statements tried per question
	// (0 for questions declined before any SQL).
	MeanAttempts float64 `json:"mean_attempts"`
	// LLMCallsPerQuestion and TokensPerQuestion are means over questions.
	LLMCallsPerQuestion float64 `json:"llm_calls_per_question"`
	TokensPerQuestion   float64 `json:"tokens_per_question"`
	// MedianLatencyMS is the median time per question.
	MedianLatencyMS float64 `json:"median_latency_ms"`
	// Records are the per-question outcomes.
	Records []EHRSQLRecord `json:"-"`
}

// EvaluateEHRSQL asks the pipeline every item and scores the answers as
// the EHRSQL 2024 task does: an answer is correct when its rows, rendered
// with the task's conventions (eval.EHRSQLAnswer), equal the gold answer; a
// question the pipeline declines (no data, refused, or no valid query
// found) is an abstention. It stops with an error when the model server is
// down or the model missing, or when ctx is cancelled; other model errors
// count as abstentions. progress, if not nil, is called after each item.
func EvaluateEHRSQL(ctx context.Context, p *Pipeline, items []eval.EHRSQLItem, progress func(done, total int)) (*EHRSQLReport, error) {
	rep := &EHRSQLReport{}
	var outcomes []eval.EHRSQLOutcome
	var lat []int64
	attempts, calls, tokens := 0, 0, 0
	for i, it := range items {
		ans, err := p.Ask(ctx, Request{Question: it.Question}, nil)
		if err != nil {
			switch k := localllm.KindOf(err); {
			case ctx.Err() != nil:
				return nil, ctx.Err()
			case k == localllm.ServerDown || k == localllm.ModelMissing || k == localllm.Cancelled || k == localllm.Invalid:
				return nil, fmt.Errorf("question %s: %w", it.ID, err)
			}
		}
		rec := EHRSQLRecord{ID: it.ID, Question: it.Question, Answerable: it.Answerable, GoldSQL: it.GoldSQL, Gold: it.GoldAnswer,
			Status: ans.Status, Category: ans.Category, SQL: ans.SQL, Message: ans.Message, Attempts: len(ans.Attempts),
			LLMCalls: ans.Calls(), Tokens: ans.Usage.Tokens(), LatencyMS: ans.Elapsed.Milliseconds(), NonLLMMS: ans.NonLLMTime().Milliseconds()}
		rec.Abstained = ans.Result == nil
		if !rec.Abstained {
			rec.Answer = eval.EHRSQLAnswer(ans.Result.Rows)
			if it.Answerable && it.GoldAnswer != "" {
				gold, perr := eval.ParseEHRSQLGold(it.GoldAnswer)
				if perr != nil {
					return nil, fmt.Errorf("question %s: %w", it.ID, perr)
				}
				rec.Correct = eval.SameEHRSQLAnswer(rec.Answer, gold)
			}
		}
		o := eval.EHRSQLOutcome{Answerable: it.Answerable, Abstained: rec.Abstained, Correct: rec.Correct}
		rec.Score = o.Score(10)
		outcomes = append(outcomes, o)
		rep.Records = append(rep.Records, rec)
		lat = append(lat, rec.LatencyMS)
		attempts += rec.Attempts
		calls += rec.LLMCalls
		tokens += rec.Tokens
		if progress != nil {
			progress(i+1, len(items))
		}
	}
	rep.EHRSQLMetrics = eval.SummarizeEHRSQL(outcomes)
	if n := float64(len(items)); n > 0 {
		rep.MeanAttempts, rep.LLMCallsPerQuestion, rep.TokensPerQuestion = float64(attempts)/n, float64(calls)/n, float64(tokens)/n
		slices.Sort(lat)
		rep.MedianLatencyMS = median(lat)
	}
	return rep, nil
}

// median of sorted values.
func median(xs []int64) float64 {
	if len(xs) == 0 {
		return 0
	}
	m := len(xs) / 2
	if len(xs)%2 == 1 {
		return float64(xs[m])
	}
	return float64(xs[m-1]+xs[m]) / 2
}

// WriteEHRSQLWorkbook writes the per-question records and the metrics to an
// .xlsx workbook (sheet "Questions", and the metrics on the Provenance
// sheet).
func WriteEHRSQLWorkbook(ctx context.Context, path string, rep *EHRSQLReport, prov export.Provenance) error {
	cols := []string{"id", "question", "answerable", "status", "category", "abstained", "correct", "rs_10", "sql", "answer",
		"gold_sql", "gold_answer", "message", "attempts", "llm_calls", "tokens", "latency_ms", "non_llm_ms"}
	rows := func(yield func([]any, error) bool) {
		for _, r := range rep.Records {
			answer := ""
			if r.Answer != nil {
				parts := make([]string, len(r.Answer))
				for i, row := range r.Answer {
					parts[i] = "(" + strings.Join(row, ", ") + ")"
				}
				answer = strings.Join(parts, " ")
			}
			if !yield([]any{r.ID, r.Question, r.Answerable, string(r.Status), string(r.Category), r.Abstained, r.Correct, r.Score,
				r.SQL, answer, r.GoldSQL, r.Gold, r.Message, int64(r.Attempts), int64(r.LLMCalls), int64(r.Tokens), r.LatencyMS, r.NonLLMMS}, nil) {
				return
			}
		}
	}
	m := rep.EHRSQLMetrics
	for _, e := range []export.Entry{
		{Key: "Questions", Value: int64(m.N)}, {Key: "Execution accuracy", Value: m.ExecutionAccuracy},
		{Key: "RS(0)", Value: m.RS0}, {Key: "RS(5)", Value: m.RS5}, {Key: "RS(10)", Value: m.RS10},
		{Key: "Abstention precision", Value: m.AbstainPrecision}, {Key: "Abstention recall", Value: m.AbstainRecall},
		{Key: "Mean attempts", Value: rep.MeanAttempts}, {Key: "LLM calls per question", Value: rep.LLMCallsPerQuestion},
		{Key: "Tokens per question", Value: rep.TokensPerQuestion}, {Key: "Median latency (ms)", Value: rep.MedianLatencyMS},
	} {
		prov.Add(e.Key, e.Value)
	}
	if prov.Created.IsZero() {
		prov.Created = time.Now()
	}
	_, err := export.WriteWorkbook(ctx, path, []export.Table{{Name: "Questions", Columns: cols, Rows: iter.Seq2[[]any, error](rows)}}, prov, export.Options{})
	return err
}

package impression

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/clinsight/clinsight/app/eval"
	"github.com/clinsight/clinsight/localllm"
)

// Defaults of Options.
const (
	DefaultIterations = 3
	DefaultNumCtx     = 4096
	DefaultNumPredict = 160
	// DefaultTemperature makes successive iterations differ.
	DefaultTemperature = 0.7
	// minMaxWords and maxMaxWords clamp the derived length limit.
	minMaxWords, maxMaxWords = 8, 80
)

// Options tune a Pipeline. The zero value uses the defaults.
type Options struct {
	// Model is the chat model (required unless NoLLM).
	Model string
	// Examples is N_s, the number of similar reports in the prompt
	// (DefaultExamples when ≤ 0).
	Examples int
	// Candidates is how many reports, the most similar by text, are
	// ordered by label distance to choose the examples (Examples when
	// ≤ 0; see Query.Candidates).
	Candidates int
	// Iterations is I, the number of model calls of the iterative
	// optimization (DefaultIterations when ≤ 0).
	Iterations int
	// Threshold is the mean ROUGE-1 F1 (0–1) at or above which a response
	// is "good" and below which it is "bad". 0 means adaptive: the
	// agreement of the retrieved impression with the other examples (what
	// retrieval alone achieves; 0.5 when there are fewer than 3 examples).
	Threshold float64
	// MaxWords is the length limit given to the model from the second
	// iteration on; 0 derives it from the examples (their longest
	// impression, clamped to 8–80 words).
	MaxWords int
	// Temperature, Seed, NumCtx and NumPredict are passed to the model
	// (defaults 0.7, none, 4096, 160). The seed of iteration i is Seed+i.
	Temperature *float64
	Seed        *int
	NumCtx      int
	NumPredict  int
	// NoLLM skips the model: the result is the retrieved impression.
	NoLLM bool
	// IgnoreConsistency chooses the retrieved impression as before the
	// consistency check: among the examples alone, by agreement
	// (ConsensusChoice), and the best iteration by score alone. For
	// comparison in evaluations; contradictions are still reported.
	IgnoreConsistency bool
}

func (o Options) withDefaults() Options {
	if o.Examples <= 0 {
		o.Examples = DefaultExamples
	}
	if o.Candidates <= 0 {
		o.Candidates = o.Examples
	}
	if o.Iterations <= 0 {
		o.Iterations = DefaultIterations
	}
	if o.NumCtx <= 0 {
		o.NumCtx = DefaultNumCtx
	}
	if o.NumPredict <= 0 {
		o.NumPredict = DefaultNumPredict
	}
	if o.Temperature == nil {
		o.Temperature = new(DefaultTemperature)
	}
	return o
}

// ErrNoChatModel is returned when a pipeline that writes with a model has
// none configured. Front ends add their own way out (the CLI its flags).
var ErrNoChatModel = errors.New("no chat model is configured: choose one in Settings, or work without a model")

// Validate checks the options.
func (o Options) Validate() error {
	switch {
	case o.Threshold < 0 || o.Threshold > 1:
		return fmt.Errorf("the ROUGE-1 threshold must be between 0 and 1, got %g", o.Threshold)
	case o.Examples > 50:
		return fmt.Errorf("at most 50 similar reports fit a prompt, got %d", o.Examples)
	case o.Iterations > 20:
		return fmt.Errorf("at most 20 iterations, got %d", o.Iterations)
	case !o.NoLLM && strings.TrimSpace(o.Model) == "":
		return ErrNoChatModel
	}
	return nil
}

// Pipeline generates impressions over one corpus. It is safe for
// concurrent use.
type Pipeline struct {
	corpus *Corpus
	llm    localllm.Chatter
	opts   Options
	logger *slog.Logger
}

// NewPipeline builds a pipeline over corpus; llm may be nil when
// opts.NoLLM is set. A nil logger discards logs.
func NewPipeline(corpus *Corpus, llm localllm.Chatter, opts Options, logger *slog.Logger) (*Pipeline, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if llm == nil && !opts.NoLLM {
		return nil, errors.New("no model client: use the retrieval-only mode (no LLM)")
	}
	if corpus == nil || corpus.Examples() == 0 {
		return nil, errors.New("the report corpus has no report eligible as an example (findings of at least 10 words and an impression of at least 3)")
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	return &Pipeline{corpus: corpus, llm: llm, opts: opts.withDefaults(), logger: logger}, nil
}

// Corpus returns the pipeline's corpus.
func (p *Pipeline) Corpus() *Corpus { return p.corpus }

// Options returns the options in force (defaults filled in).
func (p *Pipeline) Options() Options { return p.opts }

// Roles of an iteration's response.
const (
	RoleGood = "good"
	RoleBad  = "bad"
)

// Iteration is one model call of the iterative optimization.
type Iteration struct {
	// Number counts from 1.
	Number int
	// Messages is the prompt sent.
	Messages []localllm.Message
	// Response is the model's impression (cleaned); empty when Err is set.
	Response string
	// Score is the mean ROUGE-1 F1 (0–1) of Response against the
	// examples' impressions.
	Score float64
	// Role is RoleGood (Score ≥ threshold) or RoleBad.
	Role string
	// Err is the model's error for a failed call.
	Err string
	// Contradictions are the response's contradictions of the findings.
	Contradictions []Contradiction
	// Usage counts the call's tokens and time.
	Usage localllm.Usage
	// Elapsed is the call's wall time.
	Elapsed time.Duration
}

// Result is a generated (or retrieved) impression with how it was made.
type Result struct {
	// Findings is the input.
	Findings string
	// Labels are the input's observation labels.
	Labels Labels
	// Examples are the similar reports, nearest first: the prompt's
	// examples (Options.Examples of them), followed, when retrieval chose
	// the impression of a report further down the candidates, by that
	// report.
	Examples []Match
	// Impression is the answer.
	Impression string
	// Generated is true when Impression comes from the model; false when
	// it is the impression of a similar report (retrieved, not generated).
	Generated bool
	// Retrieved is the index in Examples of the report whose impression
	// retrieval chose (see ChooseImpression).
	Retrieved int
	// RetrievedScore is that impression's mean ROUGE-1 F1 against the
	// other examples' impressions.
	RetrievedScore float64
	// Contradictions are the ways Impression contradicts the findings by
	// the observation labeler (see Contradictions); none when consistent.
	// A front end flags them.
	Contradictions []Contradiction
	// Score is the answer's mean ROUGE-1 F1 against the examples'
	// impressions (for a retrieved answer, RetrievedScore).
	Score float64
	// Threshold is the good/bad threshold used.
	Threshold float64
	// MaxWords is the length limit given to the model.
	MaxWords int
	// Iterations are the model calls in order; Best indexes the one
	// returned (−1 when the answer is retrieved).
	Iterations []Iteration
	Best       int
	// Notice explains a fallback to the retrieved impression, for the
	// user; empty otherwise.
	Notice string
	// Model is the chat model ("" without a model).
	Model string
	// Usage sums the model calls.
	Usage localllm.Usage
	// Elapsed is the wall time.
	Elapsed time.Duration
}

// Source says "generated" or "retrieved".
func (r Result) Source() string {
	if r.Generated {
		return "generated"
	}
	return "retrieved"
}

// Event reports progress of Generate.
type Event struct {
	// Iteration is the model call concerned (1-based; 0 for retrieval).
	Iteration int
	// Delta is a piece of the response being streamed.
	Delta string
	// Done, when not nil, is the finished iteration.
	Done *Iteration
	// Examples, when not nil, are the similar reports found.
	Examples []Match
}

// Request is one impression to produce.
type Request struct {
	// Findings is the FINDINGS text.
	Findings string
	// ExcludeID leaves a corpus report out of the examples (the report
	// itself, in leave-one-out evaluation).
	ExcludeID int64
}

// Generate produces the impression of findings: similar reports, the
// dynamic prompt and the iterative optimization (the paper's Algorithm 1):
// each response is scored by its mean ROUGE-1 against the similar reports'
// impressions; at or above the threshold it becomes the "good" response
// (replacing the previous one), below it the "bad" one; the next prompt
// carries both; the best-scored response is returned. Without a model
// (NoLLM), or when every model call fails, the answer is the retrieved
// impression, with a Notice in the second case. onEvent (may be nil)
// receives progress on the calling goroutine. Only a cancellation or an
// invalid input is an error.
func (p *Pipeline) Generate(ctx context.Context, req Request, onEvent func(Event)) (Result, error) {
	start := time.Now()
	findings := strings.TrimSpace(req.Findings)
	if findings == "" {
		return Result{}, errors.New("no findings given: paste the FINDINGS section of a report")
	}
	emit := func(e Event) {
		if onEvent != nil {
			onEvent(e)
		}
	}
	labels := LabelText(findings)
	res := Result{Findings: findings, Labels: labels, Best: -1, Model: p.opts.Model}
	res.Examples = p.corpus.Similar(Query{Findings: findings, Labels: &labels, N: p.opts.Examples,
		Candidates: p.opts.Candidates, ExcludeID: req.ExcludeID})
	if len(res.Examples) == 0 {
		return res, errors.New("no similar report found in the corpus")
	}
	prompt := res.Examples // the prompt's examples; a retrieved report may follow them
	if p.opts.IgnoreConsistency {
		res.Retrieved, res.RetrievedScore = ConsensusChoice(res.Examples)
		res.Contradictions = Contradictions(labels, res.Examples[res.Retrieved].Report.Impression)
	} else {
		more := p.corpus.Similar(Query{Findings: findings, Labels: &labels, N: RetrievalCandidates,
			Candidates: max(retrievalPool, p.opts.Candidates), ExcludeID: req.ExcludeID})
		cands := mergeMatches(res.Examples, more)
		ch := ChooseImpression(labels, cands, len(res.Examples))
		res.Retrieved, res.RetrievedScore, res.Contradictions = ch.Index, ch.Agreement, ch.Contradictions
		if ch.Index >= len(res.Examples) {
			res.Examples = append(res.Examples[:len(prompt):len(prompt)], cands[ch.Index])
			res.Retrieved = len(res.Examples) - 1
		}
	}
	emit(Event{Examples: res.Examples})
	res.Impression = res.Examples[res.Retrieved].Report.Impression
	res.Score = res.RetrievedScore
	if p.opts.NoLLM {
		res.Model = ""
		res.Elapsed = time.Since(start)
		return res, ctx.Err()
	}

	targets := make([][]string, len(prompt))
	for i, ex := range prompt {
		targets[i] = eval.RougeTokens(ex.Report.Impression, false)
	}
	res.Threshold = p.opts.Threshold
	if res.Threshold == 0 {
		res.Threshold = res.RetrievedScore
		if len(prompt) < 3 {
			res.Threshold = 0.5
		}
	}
	res.MaxWords = p.opts.MaxWords
	if res.MaxWords <= 0 {
		for _, ex := range prompt {
			res.MaxWords = max(res.MaxWords, wordCount(ex.Report.Impression))
		}
		res.MaxWords = min(max(res.MaxWords, minMaxWords), maxMaxWords)
	}

	fb := Feedback{MaxWords: res.MaxWords}
	var lastErr error
	for i := 1; i <= p.opts.Iterations; i++ {
		it := Iteration{Number: i, Messages: BuildPrompt(prompt, findings, fb)}
		opts := localllm.Options{Temperature: p.opts.Temperature, NumCtx: p.opts.NumCtx, NumPredict: p.opts.NumPredict}
		if p.opts.Seed != nil {
			opts.Seed = new(*p.opts.Seed + i)
		}
		callStart := time.Now()
		cr, err := p.llm.Chat(ctx, localllm.ChatRequest{Model: p.opts.Model, Messages: it.Messages, Options: opts},
			func(d string) { emit(Event{Iteration: i, Delta: d}) })
		it.Elapsed = time.Since(callStart)
		it.Usage = cr.Usage
		res.Usage = res.Usage.Add(cr.Usage)
		if err == nil {
			it.Response = cleanResponse(cr.Content)
			if it.Response == "" {
				err = errors.New("the model answered with an empty impression")
			}
		}
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return res, ctxErr
			}
			lastErr = err
			it.Err = localllm.MessageOf(err)
			res.Iterations = append(res.Iterations, it)
			emit(Event{Iteration: i, Done: &res.Iterations[len(res.Iterations)-1]})
			p.logger.Warn("impression model call failed", "iteration", i, "model", p.opts.Model, "err", err)
			if k := localllm.KindOf(err); k == localllm.ServerDown || k == localllm.ModelMissing || k == localllm.Invalid {
				break // the next calls would fail the same way
			}
			continue
		}
		it.Score = meanRouge1(eval.RougeTokens(it.Response, false), targets)
		it.Contradictions = Contradictions(labels, it.Response)
		if it.Score >= res.Threshold {
			it.Role = RoleGood
			fb.Good = it.Response // replaces the previous good response
		} else {
			it.Role = RoleBad
			fb.Bad = it.Response // replaces the previous bad response
		}
		res.Iterations = append(res.Iterations, it)
		if res.Best < 0 || p.iterationRank(it) > p.iterationRank(res.Iterations[res.Best]) {
			res.Best = len(res.Iterations) - 1
		}
		emit(Event{Iteration: i, Done: &res.Iterations[len(res.Iterations)-1]})
	}
	if res.Best >= 0 {
		best := res.Iterations[res.Best]
		res.Impression, res.Score, res.Generated = best.Response, best.Score, true
		res.Contradictions = best.Contradictions
	} else {
		res.Notice = fmt.Sprintf("The model could not produce an impression (%s). Shown instead: the impression of a similar report — retrieved, not generated.",
			strings.TrimSuffix(localllm.MessageOf(lastErr), "."))
	}
	res.Elapsed = time.Since(start)
	p.logger.Info("impression", "model", p.opts.Model, "source", res.Source(), "iterations", len(res.Iterations),
		"score", res.Score, "threshold", res.Threshold, "elapsed_ms", res.Elapsed.Milliseconds())
	return res, nil
}

// iterationRank ranks a successful iteration for the choice of the best
// one: its score, less contradictionPenalty when it contradicts the
// findings (a consistent response is preferred unless it scores much
// worse), or the score alone with IgnoreConsistency.
func (p *Pipeline) iterationRank(it Iteration) float64 {
	if len(it.Contradictions) > 0 && !p.opts.IgnoreConsistency {
		return it.Score - contradictionPenalty
	}
	return it.Score
}

// meanRouge1 is the mean ROUGE-1 F1 of a response against the targets.
func meanRouge1(resp []string, targets [][]string) float64 {
	if len(targets) == 0 {
		return 0
	}
	var sum float64
	for _, t := range targets {
		sum += eval.RougeN(t, resp, 1).F1
	}
	return sum / float64(len(targets))
}

// cleanResponse trims a model's answer: surrounding space and quotes, and
// a leading "IMPRESSION:" heading.
func cleanResponse(s string) string {
	s = strings.TrimSpace(s)
	for _, h := range []string{"IMPRESSION:", "Impression:", "impression:", "**IMPRESSION:**", "**Impression:**"} {
		s = strings.TrimSpace(strings.TrimPrefix(s, h))
	}
	s = strings.Trim(s, "\"“” \n")
	return strings.TrimSpace(s)
}

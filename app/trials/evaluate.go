package trials

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/clinsight/clinsight/app/eval"
)

// Topic is an evaluation query: a patient description with its id.
type Topic struct {
	// ID is the topic id used by the qrels.
	ID string `json:"_id"`
	// Text is the patient description.
	Text string `json:"text"`
}

// ReadTopics reads topics as JSON lines {"_id": ..., "text": ...} (the
// BEIR/TrialGPT layout of the SIGIR and TREC topics).
func ReadTopics(r io.Reader) ([]Topic, error) {
	var out []Topic
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 16*1024*1024)
	line := 0
	for sc.Scan() {
		line++
		raw := strings.TrimSpace(sc.Text())
		if raw == "" {
			continue
		}
		var t Topic
		if err := json.Unmarshal([]byte(raw), &t); err != nil {
			return nil, fmt.Errorf("topics line %d: %w", line, err)
		}
		if t.ID == "" || strings.TrimSpace(t.Text) == "" {
			return nil, fmt.Errorf("topics line %d: a topic needs \"_id\" and \"text\"", line)
		}
		out = append(out, t)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read topics: %w", err)
	}
	if len(out) == 0 {
		return nil, errors.New("read topics: no topic found")
	}
	return out, nil
}

// EvalOptions configure [Pipeline.Evaluate].
type EvalOptions struct {
	// UseModel uses the chat model (concepts and eligibility).
	UseModel bool
	// Pool ranks, for each topic, only the trials judged for it in the
	// qrels (how the BIRCO reference numbers were made).
	Pool bool
	// FilterAge and FilterSex apply the patient's age and sex.
	FilterAge, FilterSex bool
	// Depth is how many trials per topic the run keeps (default 1000).
	Depth int
	// Progress, if set, is called after each topic.
	Progress func(done, total int)
}

// Evaluate ranks every topic (with a qrels entry) and scores the run like
// trec_eval (ndcg_cut.10, P_10 and recip_rank at relevance level 2). The
// run is returned for writing.
func (p *Pipeline) Evaluate(ctx context.Context, topics []Topic, qrels eval.Qrels, opts EvalOptions) (eval.Run, eval.TRECScores, error) {
	depth := opts.Depth
	if depth <= 0 {
		depth = 1000
	}
	run := eval.Run{}
	for i, tp := range topics {
		judged, ok := qrels[tp.ID]
		if !ok {
			continue
		}
		req := Request{Patient: tp.Text, Top: depth, UseModel: opts.UseModel, FilterAge: opts.FilterAge, FilterSex: opts.FilterSex}
		if opts.Pool {
			req.Pool = make([]string, 0, len(judged))
			for d := range judged {
				req.Pool = append(req.Pool, d)
			}
		}
		res, err := p.Match(ctx, req)
		if err != nil {
			return nil, eval.TRECScores{}, fmt.Errorf("topic %s: %w", tp.ID, err)
		}
		entries := make([]eval.RunEntry, len(res.Trials))
		for j, r := range res.Trials {
			entries[j] = eval.RunEntry{Doc: r.Trial.ID, Score: float64(len(res.Trials) - j)}
		}
		run[tp.ID] = entries
		if opts.Progress != nil {
			opts.Progress(i+1, len(topics))
		}
	}
	if len(run) == 0 {
		return nil, eval.TRECScores{}, errors.New("no topic has judgments in the qrels")
	}
	scores, err := eval.EvaluateRun(run, qrels, eval.DefaultRelevanceLevel)
	return run, scores, err
}

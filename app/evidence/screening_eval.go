package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/clinsight/clinsight/app/eval"
	"github.com/clinsight/clinsight/localllm"
	"golang.org/x/sync/errgroup"
)

// Review is one systematic review of TrialReviewBench (search_screen/*.json):
// its PICO and the studies it included.
type Review struct {
	// PMID is the review's own PubMed identifier.
	PMID string `json:"pmid"`
	// Title is the review's title.
	Title string `json:"title"`
	// PICO is the review question.
	PICO PICO `json:"PICO"`
	// Included are the studies the review included.
	Included []IncludedStudy `json:"trials"`
}

// IncludedStudy is a study included by a review.
type IncludedStudy struct {
	// PMID identifies the study.
	PMID string `json:"pmid"`
	// Title is the study's title ("" when the benchmark does not give it).
	Title string `json:"title"`
}

// LoadReviews reads every *.json review of a TrialReviewBench
// search_screen folder, sorted by file name.
func LoadReviews(dir string) ([]Review, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.json"))
	if err != nil {
		return nil, fmt.Errorf("evidence: listing %s: %w", dir, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("evidence: no review (*.json) in %s", dir)
	}
	sort.Strings(files)
	var out []Review
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, fmt.Errorf("evidence: reading %s: %w", f, err)
		}
		var r Review
		if err := json.Unmarshal(b, &r); err != nil {
			return nil, fmt.Errorf("evidence: %s: %w", filepath.Base(f), err)
		}
		if r.PMID == "" {
			r.PMID = strings.TrimSuffix(filepath.Base(f), ".json")
		}
		if err := r.PICO.Validate(); err != nil {
			return nil, fmt.Errorf("evidence: %s: %w", filepath.Base(f), err)
		}
		if len(r.Included) == 0 {
			return nil, fmt.Errorf("evidence: %s: the review lists no included study", filepath.Base(f))
		}
		out = append(out, r)
	}
	return out, nil
}

// ScreeningEval is the cross-review screening evaluation: the pool is the
// titles of every included study of every review; each review's PICO ranks
// the whole pool; recall at 20 and 50 of the review's own included studies,
// averaged over reviews.
type ScreeningEval struct {
	// RecallAt20 is the mean Recall@20 over reviews.
	RecallAt20 float64 `json:"recall_at_20"`
	// RecallAt50 is the mean Recall@50 over reviews.
	RecallAt50 float64 `json:"recall_at_50"`
	// Reviews is the number of reviews.
	Reviews int `json:"reviews"`
	// Model is the chat model that screened ("" for the LLM-free ranking).
	Model string `json:"model,omitempty"`
	// Rerank is how many of each review's best BM25 matches the model
	// screened (0 for the LLM-free ranking).
	Rerank int `json:"rerank,omitempty"`
	// Calls is the number of model requests: criteria and screening, the
	// retries included.
	Calls int `json:"calls,omitempty"`
	// Failed is the number of studies whose screening failed, over all
	// reviews (they count as UNCERTAIN: score 0).
	Failed int `json:"failed,omitempty"`
	// Pool is the number of distinct studies ranked.
	Pool int `json:"-"`
	// PerReview holds each review's figures, in input order.
	PerReview []ReviewRecall `json:"-"`
}

// ReviewRecall is one review's screening figures.
type ReviewRecall struct {
	// PMID identifies the review.
	PMID string
	// Included is the number of its included studies.
	Included int
	// RecallAt20 and RecallAt50 are its recalls.
	RecallAt20, RecallAt50 float64
	// Criteria are the eligibility criteria the model wrote from the
	// review's PICO (nil for the LLM-free ranking).
	Criteria []Criterion
	// Screened is the number of studies the model screened, Failed how many
	// of them failed, Calls the model requests for this review.
	Screened, Failed, Calls int
	// Errors joins the errors of the studies that failed (nil when none).
	Errors error
}

// screeningPool is the pool of the evaluation: every included study of
// every review, once, in review order.
func screeningPool(reviews []Review) []Doc {
	var docs []Doc
	seen := map[string]bool{}
	for _, r := range reviews {
		for _, s := range r.Included {
			if s.PMID == "" || seen[s.PMID] {
				continue
			}
			seen[s.PMID] = true
			docs = append(docs, Doc{ID: s.PMID, Text: s.Title})
		}
	}
	return docs
}

// scoredIDs returns the IDs of a ranking.
func scoredIDs(ranked []Scored) []string {
	ids := make([]string, len(ranked))
	for i, s := range ranked {
		ids[i] = s.ID
	}
	return ids
}

// recallOf returns the review's recall figures for a ranking of the pool.
func recallOf(r Review, ids []string) ReviewRecall {
	var rel []string
	for _, s := range r.Included {
		rel = append(rel, s.PMID)
	}
	return ReviewRecall{PMID: r.PMID, Included: len(rel),
		RecallAt20: eval.RecallAtK(ids, rel, 20), RecallAt50: eval.RecallAtK(ids, rel, 50)}
}

// add appends a review's figures; average ends the evaluation.
func (ev *ScreeningEval) add(rr ReviewRecall) {
	ev.RecallAt20 += rr.RecallAt20
	ev.RecallAt50 += rr.RecallAt50
	ev.Calls += rr.Calls
	ev.Failed += rr.Failed
	ev.PerReview = append(ev.PerReview, rr)
}

func (ev *ScreeningEval) average() {
	ev.RecallAt20 /= float64(ev.Reviews)
	ev.RecallAt50 /= float64(ev.Reviews)
}

// EvalScreening runs the cross-review screening evaluation with the
// LLM-free BM25 PICO ranker (RankByPICO). Studies without a title in the
// benchmark stay in the pool with an empty text (they rank last).
func EvalScreening(reviews []Review, opts RankOptions) (ScreeningEval, error) {
	if len(reviews) == 0 {
		return ScreeningEval{}, errors.New("evidence: no reviews to evaluate")
	}
	docs := screeningPool(reviews)
	rk := NewRanker(docs, opts)
	ev := ScreeningEval{Reviews: len(reviews), Pool: len(docs)}
	for _, r := range reviews {
		ev.add(recallOf(r, scoredIDs(rk.Rank(r.PICO))))
	}
	ev.average()
	return ev, nil
}

// DefaultRerank is how many of each review's best BM25 matches the model
// screens when ModelScreening.Rerank is not set.
const DefaultRerank = 50

// ModelScreening is the model pass of EvalScreeningWithModel.
type ModelScreening struct {
	// Chat is the model client.
	Chat localllm.Chatter
	// Model is the chat model's name.
	Model string
	// Options are the model options.
	Options localllm.Options
	// Rerank is how many of each review's best BM25 matches the model
	// screens and re-orders; ≤ 0 means DefaultRerank.
	Rerank int
	// Concurrency bounds the model calls in flight; ≤ 0 means 1.
	Concurrency int
	// Progress, if not nil, is called as reviews and studies are done
	// (from several goroutines, one call at a time).
	Progress func(EvalProgress)
}

// The stages of EvalProgress.
const (
	// EvalStageCriteria: the model writes each review's criteria.
	EvalStageCriteria = "criteria"
	// EvalStageScreening: the model screens each review's best matches.
	EvalStageScreening = "screening"
)

// EvalProgress is the progress of EvalScreeningWithModel.
type EvalProgress struct {
	// Stage is EvalStageCriteria or EvalStageScreening.
	Stage string
	// ReviewsDone of Reviews have their criteria (criteria stage) or are
	// screened (screening stage).
	ReviewsDone, Reviews int
	// StudiesDone of Studies are screened, over all reviews.
	StudiesDone, Studies int
}

// countingChatter counts the model requests made through it.
type countingChatter struct {
	localllm.Chatter
	n atomic.Int64
}

// requests is the number of requests a call made: its attempts, at least
// one when it succeeded.
func requests(res localllm.ChatResult, err error) int64 {
	if err == nil {
		return int64(max(res.Attempts, 1))
	}
	return int64(res.Attempts)
}

func (c *countingChatter) Chat(ctx context.Context, req localllm.ChatRequest, onDelta func(string)) (localllm.ChatResult, error) {
	res, err := c.Chatter.Chat(ctx, req, onDelta)
	c.n.Add(requests(res, err))
	return res, err
}

func (c *countingChatter) ChatJSON(ctx context.Context, req localllm.ChatRequest, schema *localllm.Schema, out any) (localllm.ChatResult, error) {
	res, err := c.Chatter.ChatJSON(ctx, req, schema, out)
	c.n.Add(requests(res, err))
	return res, err
}

// EvalScreeningWithModel runs the cross-review screening evaluation with
// the chat model on top of the LLM-free BM25 ranking (EvalScreening):
//
//  1. the model writes each review's eligibility criteria from its PICO
//     (GenerateCriteria); a review whose criteria fail stops the
//     evaluation with an error naming the review, before any screening;
//  2. the model screens the m.Rerank best BM25 matches of each review (the
//     pool's studies have titles only) against its criteria (Screener);
//  3. those studies are re-ordered by their screening score, best first,
//     ties keeping the BM25 order; the studies after them keep the BM25
//     order.
//
// A study whose screening fails (a model error, a wrong number of verdicts
// after the retry) counts as UNCERTAIN on every criterion: score 0, below
// the studies judged to meet the criteria on balance and above those judged
// not to; it is counted in Failed and its error kept in the review's
// Errors. A study without a title is not sent to the model (there is
// nothing to judge) and also scores 0. A model that always fails thus
// leaves the BM25 order.
//
// The cost is one criteria call per review and one screening call per
// screened study (two when the verdict count is asked again, more when the
// reply is not valid JSON): about len(reviews) × (m.Rerank + 1) calls.
// When ctx is cancelled the evaluation stops with ctx's error.
func EvalScreeningWithModel(ctx context.Context, reviews []Review, opts RankOptions, m ModelScreening) (ScreeningEval, error) {
	if len(reviews) == 0 {
		return ScreeningEval{}, errors.New("evidence: no reviews to evaluate")
	}
	if m.Chat == nil || strings.TrimSpace(m.Model) == "" {
		return ScreeningEval{}, ErrNoChatModel
	}
	k := m.Rerank
	if k <= 0 {
		k = DefaultRerank
	}
	docs := screeningPool(reviews)
	titles := make(map[string]string, len(docs))
	for _, d := range docs {
		titles[d.ID] = d.Text
	}
	rk := NewRanker(docs, opts)
	ranked := make([][]string, len(reviews))
	todo := make([][]Record, len(reviews))
	total := 0
	for i, r := range reviews {
		ranked[i] = scoredIDs(rk.Rank(r.PICO))
		for _, id := range ranked[i][:min(k, len(ranked[i]))] {
			if strings.TrimSpace(titles[id]) != "" {
				todo[i] = append(todo[i], Record{ID: "pmid:" + id, PMID: id, Title: titles[id]})
			}
		}
		total += len(todo[i])
	}

	var mu sync.Mutex
	report := func(p EvalProgress) {
		if m.Progress != nil {
			mu.Lock()
			defer mu.Unlock()
			p.Reviews, p.Studies = len(reviews), total
			m.Progress(p)
		}
	}
	chats := make([]*countingChatter, len(reviews))
	for i := range chats {
		chats[i] = &countingChatter{Chatter: m.Chat}
	}
	criteria, err := evalCriteria(ctx, reviews, chats, m, report)
	if err != nil {
		return ScreeningEval{}, err
	}

	ev := ScreeningEval{Reviews: len(reviews), Pool: len(docs), Model: m.Model, Rerank: k}
	done := 0
	for i, r := range reviews {
		s := &Screener{Chat: chats[i], Model: m.Model, PICO: r.PICO, Criteria: criteria[i], Options: m.Options}
		before := done
		results, err := s.ScreenAll(ctx, todo[i], ScreenOptions{Concurrency: m.Concurrency, Progress: func(n, all int) {
			reviewsDone := i
			if n == all {
				reviewsDone++
			}
			report(EvalProgress{Stage: EvalStageScreening, ReviewsDone: reviewsDone, StudiesDone: before + n})
		}})
		if err != nil {
			return ScreeningEval{}, fmt.Errorf("evidence: screening evaluation stopped at review %s: %w", r.PMID, err)
		}
		done += len(todo[i])
		score := make(map[string]float64, len(results))
		failed := 0
		for _, res := range results {
			if res.Err != nil {
				failed++
				continue
			}
			score[res.Record.PMID] = res.Score
		}
		rr := recallOf(r, rerankTop(ranked[i], k, score))
		rr.Criteria, rr.Screened, rr.Failed = criteria[i], len(results), failed
		rr.Calls, rr.Errors = int(chats[i].n.Load()), Failed(results)
		ev.add(rr)
		if len(todo[i]) == 0 {
			report(EvalProgress{Stage: EvalStageScreening, ReviewsDone: i + 1, StudiesDone: done})
		}
	}
	ev.average()
	return ev, nil
}

// evalCriteria has the model write every review's criteria, at most
// m.Concurrency at a time; the first failure cancels the others and is
// returned, naming its review.
func evalCriteria(parent context.Context, reviews []Review, chats []*countingChatter, m ModelScreening, report func(EvalProgress)) ([][]Criterion, error) {
	out := make([][]Criterion, len(reviews))
	g, ctx := errgroup.WithContext(parent)
	g.SetLimit(max(m.Concurrency, 1))
	var (
		mu   sync.Mutex
		done int
	)
	report(EvalProgress{Stage: EvalStageCriteria})
	for i, r := range reviews {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if err := ctx.Err(); err != nil { // cancelled while waiting for a slot
				return err
			}
			set, err := GenerateCriteria(ctx, chats[i], m.Model, r.PICO, m.Options)
			if err != nil {
				return fmt.Errorf("evidence: review %s: %w", r.PMID, err)
			}
			mu.Lock()
			defer mu.Unlock()
			out[i] = set.Criteria()
			done++
			report(EvalProgress{Stage: EvalStageCriteria, ReviewsDone: done})
			return nil
		})
	}
	err := g.Wait()
	if perr := parent.Err(); perr != nil {
		return nil, fmt.Errorf("evidence: screening evaluation stopped: %w", perr)
	}
	return out, err
}

// rerankTop re-orders the first k IDs of a ranking by score, best first
// (a missing score counts as 0), ties keeping their order; the IDs after
// them keep theirs. ids is not changed.
func rerankTop(ids []string, k int, score map[string]float64) []string {
	out := append([]string(nil), ids...)
	top := out[:min(k, len(out))]
	sort.SliceStable(top, func(a, b int) bool { return score[top[a]] > score[top[b]] })
	return out
}

package evidence

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/clinsight/clinsight/app/eval"
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
}

// EvalScreening runs the cross-review screening evaluation with the
// LLM-free BM25 PICO ranker (RankByPICO). Studies without a title in the
// benchmark stay in the pool with an empty text (they rank last).
func EvalScreening(reviews []Review, opts RankOptions) (ScreeningEval, error) {
	if len(reviews) == 0 {
		return ScreeningEval{}, errors.New("evidence: no reviews to evaluate")
	}
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
	rk := NewRanker(docs, opts)
	ev := ScreeningEval{Reviews: len(reviews), Pool: len(docs)}
	for _, r := range reviews {
		ranked := rk.Rank(r.PICO)
		ids := make([]string, len(ranked))
		for i, s := range ranked {
			ids[i] = s.ID
		}
		var rel []string
		for _, s := range r.Included {
			rel = append(rel, s.PMID)
		}
		rr := ReviewRecall{PMID: r.PMID, Included: len(rel),
			RecallAt20: eval.RecallAtK(ids, rel, 20), RecallAt50: eval.RecallAtK(ids, rel, 50)}
		ev.RecallAt20 += rr.RecallAt20
		ev.RecallAt50 += rr.RecallAt50
		ev.PerReview = append(ev.PerReview, rr)
	}
	ev.RecallAt20 /= float64(len(reviews))
	ev.RecallAt50 /= float64(len(reviews))
	return ev, nil
}

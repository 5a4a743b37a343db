package cohort

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/clinsight/clinsight/app/eval"
)

// RetrievalCase is one question of a retrieval evaluation.
type RetrievalCase struct {
	// ID and Question identify the question.
	ID       string `json:"id"`
	Question string `json:"question"`
	// Gold are the tables the gold SQL reads.
	Gold []string `json:"gold"`
	// Retrieved are the top-k tables.
	Retrieved []string `json:"retrieved"`
	// Recall is the share of Gold among Retrieved.
	Recall float64 `json:"recall"`
	// Half is "dev" or "test" (RetrievalHalf).
	Half string `json:"half"`
}

// RetrievalFigures are the figures of a set of retrieval cases.
type RetrievalFigures struct {
	// N is the number of questions.
	N int `json:"n"`
	// RecallAtK is the mean recall@k.
	RecallAtK float64 `json:"recall_at_k"`
	// AllTablesShare is the share of questions with every gold table
	// retrieved.
	AllTablesShare float64 `json:"all_tables_share"`
}

// RetrievalHalf assigns an EHRSQL question to the development ("dev") or
// the held-out ("test") half of a split, by the FNV-1a hash of its id: the
// same halves as the grounding evaluation's. Retrieval's tuned constants
// and vocabulary (the thesaurus, the generated profile's abbreviations) are
// chosen on the dev half; the floors are asserted on the test half.
func RetrievalHalf(id string) string { return groundingHalf(id) }

// figures computes the figures of the cases keep accepts.
func figures(cases []RetrievalCase, keep func(RetrievalCase) bool) RetrievalFigures {
	var f RetrievalFigures
	all, sum := 0, 0.0
	for _, c := range cases {
		if !keep(c) {
			continue
		}
		f.N++
		sum += c.Recall
		if c.Recall == 1 {
			all++
		}
	}
	if f.N > 0 {
		f.RecallAtK = sum / float64(f.N)
		f.AllTablesShare = float64(all) / float64(f.N)
	}
	return f
}

// RetrievalReport is the outcome of EvaluateRetrieval.
type RetrievalReport struct {
	// K is the number of tables retrieved per question.
	K int `json:"k"`
	// N is the number of questions evaluated.
	N int `json:"n"`
	// RecallAtK is the mean recall@k.
	RecallAtK float64 `json:"recall_at_k"`
	// AllTablesShare is the share of questions with every gold table
	// retrieved.
	AllTablesShare float64 `json:"all_tables_share"`
	// Dev and Test are the figures of the two halves of the questions
	// (RetrievalHalf).
	Dev  RetrievalFigures `json:"dev"`
	Test RetrievalFigures `json:"test"`
	// Embedder describes the embedder retrieval used.
	Embedder string `json:"embedder"`
	// MedianLatency is the median retrieval time per question.
	MedianLatency time.Duration `json:"-"`
	// Cases are the per-question results.
	Cases []RetrievalCase `json:"-"`
}

// EvaluateRetrieval retrieves k tables for every answerable item and
// compares them with the tables its gold SQL reads (ReferencedTables).
// Unanswerable items are skipped.
func EvaluateRetrieval(ctx context.Context, ix *Index, items []eval.EHRSQLItem, k int) (*RetrievalReport, error) {
	if k < 1 {
		k = DefaultTopK
	}
	rep := &RetrievalReport{K: k, Embedder: ix.Embedder()}
	var lat []time.Duration
	all := 0
	sum := 0.0
	for _, it := range items {
		if !it.Answerable {
			continue
		}
		gold := ReferencedTables(it.GoldSQL, ix.Catalog())
		if len(gold) == 0 {
			return nil, fmt.Errorf("question %s: its gold SQL reads no table of the database", it.ID)
		}
		r, err := ix.Retrieve(ctx, it.Question, k)
		if err != nil {
			return nil, fmt.Errorf("question %s: %w", it.ID, err)
		}
		lat = append(lat, r.Elapsed)
		names := r.Names()
		rec := eval.RecallAtK(names, gold, k)
		sum += rec
		if rec == 1 {
			all++
		}
		rep.Cases = append(rep.Cases, RetrievalCase{ID: it.ID, Question: it.Question, Gold: gold, Retrieved: names, Recall: rec, Half: RetrievalHalf(it.ID)})
	}
	rep.N = len(rep.Cases)
	if rep.N > 0 {
		rep.RecallAtK = sum / float64(rep.N)
		rep.AllTablesShare = float64(all) / float64(rep.N)
		slices.Sort(lat)
		rep.MedianLatency = lat[len(lat)/2]
	}
	rep.Dev = figures(rep.Cases, func(c RetrievalCase) bool { return c.Half == "dev" })
	rep.Test = figures(rep.Cases, func(c RetrievalCase) bool { return c.Half == "test" })
	return rep, nil
}

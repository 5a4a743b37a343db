package evidence

import (
	"encoding/json"
	"errors"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/clinsight/clinsight/internal/textsearch"
)

// PICO is a review question: population, intervention, comparison and
// outcome in plain words. JSON uses TrialMind's keys P, I, C, O (the long
// names population, intervention, comparison, outcome are read too).
type PICO struct {
	// Population is who is studied (P).
	Population string `json:"P"`
	// Intervention is the treatment or exposure (I).
	Intervention string `json:"I"`
	// Comparison is the comparator (C), "" when none.
	Comparison string `json:"C"`
	// Outcome is what is measured (O).
	Outcome string `json:"O"`
}

// UnmarshalJSON reads TrialMind's keys (P, I, C, O) or the long names.
func (p *PICO) UnmarshalJSON(b []byte) error {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	get := func(keys ...string) (string, error) {
		for _, k := range keys {
			for mk, v := range m {
				if strings.EqualFold(mk, k) {
					var s string
					if err := json.Unmarshal(v, &s); err != nil {
						return "", errors.New("PICO element " + mk + " must be a string")
					}
					return s, nil
				}
			}
		}
		return "", nil
	}
	var err error
	if p.Population, err = get("P", "population"); err != nil {
		return err
	}
	if p.Intervention, err = get("I", "intervention"); err != nil {
		return err
	}
	if p.Comparison, err = get("C", "comparison", "comparator"); err != nil {
		return err
	}
	p.Outcome, err = get("O", "outcome", "outcomes")
	return err
}

// Validate checks that the population or the intervention is given: the
// ranking has nothing to go on otherwise.
func (p PICO) Validate() error {
	if strings.TrimSpace(p.Population) == "" && strings.TrimSpace(p.Intervention) == "" {
		return errors.New("the PICO needs at least a population (P) or an intervention (I)")
	}
	return nil
}

// PICOWeights weigh the PICO elements in the ranking query.
type PICOWeights struct {
	P, I, C, O float64
}

// DefaultPICOWeights weigh population and intervention fully and
// comparison and outcome at 0.3: comparators ("chemotherapy") and outcomes
// ("overall survival") are shared by most trials of a field and say little
// about which review a study belongs to.
var DefaultPICOWeights = PICOWeights{P: 1, I: 1, C: 0.3, O: 0.3}

// RankOptions tunes RankByPICO. The zero value selects the defaults.
type RankOptions struct {
	// Weights weigh the PICO elements; zero means DefaultPICOWeights.
	Weights PICOWeights
	// K1 and B are BM25's term-frequency saturation and length
	// normalisation; zero means 1.2 and 0.75.
	K1, B float64
}

// withDefaults fills in the weights; textsearch.BM25Params fills in K1
// and B.
func (o RankOptions) withDefaults() RankOptions {
	if o.Weights == (PICOWeights{}) {
		o.Weights = DefaultPICOWeights
	}
	return o
}

// Doc is a text to rank (a title, or a title and abstract) with its ID.
type Doc struct {
	ID   string
	Text string
}

// DocOf returns the ranking text of a record: its title and abstract.
func DocOf(r *Record) Doc {
	return Doc{ID: r.ID, Text: r.Title + "\n" + r.Abstract()}
}

// Scored is a ranked document.
type Scored struct {
	// ID is the document's ID.
	ID string
	// Index is its position in the input.
	Index int
	// Score is its BM25 score for the PICO query (higher is better).
	Score float64
}

// Ranker ranks a fixed set of documents by BM25 against PICO questions;
// the index (terms, document frequencies) is built once.
type Ranker struct {
	docs []Doc
	bm   *textsearch.BM25
	opts RankOptions
}

// NewRanker indexes docs for ranking.
func NewRanker(docs []Doc, opts RankOptions) *Ranker {
	opts = opts.withDefaults()
	terms := make([][]string, len(docs))
	for i, d := range docs {
		terms[i] = rankTokens(d.Text)
	}
	return &Ranker{docs: docs, bm: textsearch.NewBM25(terms, textsearch.BM25Params{K1: opts.K1, B: opts.B}), opts: opts}
}

// Query returns the weighted query terms of a PICO: each element's
// distinct terms with the element's weight, summed over elements.
func (r *Ranker) Query(p PICO) map[string]float64 {
	q := map[string]float64{}
	w := r.opts.Weights
	for _, el := range []struct {
		text string
		w    float64
	}{{p.Population, w.P}, {p.Intervention, w.I}, {p.Comparison, w.C}, {p.Outcome, w.O}} {
		if el.w == 0 {
			continue
		}
		seen := map[string]bool{}
		for _, t := range rankTokens(el.text) {
			if !seen[t] {
				seen[t] = true
				q[t] += el.w
			}
		}
	}
	return q
}

// Rank scores every document for the PICO and returns them best first
// (ties keep the input order).
func (r *Ranker) Rank(p PICO) []Scored {
	q := r.Query(p)
	// Sum the terms in a fixed order: a map's order would change the
	// floating-point sums, and so the order of tied studies, between runs.
	terms := make([]textsearch.Term, 0, len(q))
	for _, t := range slices.Sorted(maps.Keys(q)) {
		terms = append(terms, textsearch.Term{Text: t, Weight: q[t]})
	}
	scores := r.bm.Scores(terms)
	out := make([]Scored, len(r.docs))
	for i, d := range r.docs {
		out[i] = Scored{ID: d.ID, Index: i, Score: scores[i]}
	}
	sort.SliceStable(out, func(a, c int) bool { return out[a].Score > out[c].Score })
	return out
}

// RankByPICO ranks docs by BM25 relevance to the PICO (see Ranker).
func RankByPICO(p PICO, docs []Doc, opts RankOptions) []Scored {
	return NewRanker(docs, opts).Rank(p)
}

// rankTokens returns the ranking terms of text: its words (see
// textsearch.Words) of at least two characters, plural endings stripped
// (textsearch.PluralStem: a PICO and titles are short, and Porter's
// stemming joined words of other meanings), without the English stop
// words and the evidence pipeline's own (reportWords), before or after
// stripping.
func rankTokens(text string) []string {
	return textsearch.Analyzer{MinLen: 2, Stop: isRankStop, Stem: textsearch.PluralStem}.Terms(text)
}

// reportWords are the evidence pipeline's domain stop words: words that
// every clinical-trial report uses, which do not tell topics apart.
var reportWords = textsearch.NewWordSet(`patients patient study trial versus vs phase randomized randomised
	analysis results clinical treatment treated`)

// isRankStop reports whether a lower-case word is an English stop word or
// one of reportWords.
func isRankStop(w string) bool { return textsearch.IsStopWord(w) || reportWords.Has(w) }

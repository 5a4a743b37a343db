package evidence

import (
	"encoding/json"
	"errors"
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"unicode"
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

func (o RankOptions) withDefaults() RankOptions {
	if o.Weights == (PICOWeights{}) {
		o.Weights = DefaultPICOWeights
	}
	if o.K1 == 0 {
		o.K1 = 1.2
	}
	if o.B == 0 {
		o.B = 0.75
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
// the index (tokens, document frequencies) is built once.
type Ranker struct {
	docs  []Doc
	tf    []map[string]float64
	dl    []float64
	df    map[string]int
	avgdl float64
	opts  RankOptions
}

// NewRanker indexes docs for ranking.
func NewRanker(docs []Doc, opts RankOptions) *Ranker {
	r := &Ranker{docs: docs, df: map[string]int{}, opts: opts.withDefaults()}
	var total float64
	for _, d := range docs {
		toks := rankTokens(d.Text)
		tf := make(map[string]float64, len(toks))
		for _, t := range toks {
			tf[t]++
		}
		for t := range tf {
			r.df[t]++
		}
		r.tf = append(r.tf, tf)
		r.dl = append(r.dl, float64(len(toks)))
		total += float64(len(toks))
	}
	if len(docs) > 0 {
		r.avgdl = total / float64(len(docs))
	}
	return r
}

// idf is BM25's inverse document frequency (always positive).
func (r *Ranker) idf(t string) float64 {
	n, df := float64(len(r.docs)), float64(r.df[t])
	return math.Log(1 + (n-df+0.5)/(df+0.5))
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
	terms := slices.Sorted(maps.Keys(q))
	k1, b := r.opts.K1, r.opts.B
	out := make([]Scored, len(r.docs))
	for i, d := range r.docs {
		var s float64
		norm := k1 * (1 - b + b*r.dl[i]/math.Max(r.avgdl, 1e-9))
		for _, t := range terms {
			qw := q[t]
			f := r.tf[i][t]
			if f == 0 {
				continue
			}
			s += qw * r.idf(t) * f * (k1 + 1) / (f + norm)
		}
		out[i] = Scored{ID: d.ID, Index: i, Score: s}
	}
	sort.SliceStable(out, func(a, c int) bool { return out[a].Score > out[c].Score })
	return out
}

// RankByPICO ranks docs by BM25 relevance to the PICO (see Ranker).
func RankByPICO(p PICO, docs []Doc, opts RankOptions) []Scored {
	return NewRanker(docs, opts).Rank(p)
}

// rankTokens lower-cases text, splits it into runs of letters and digits,
// drops one-character tokens and stop words (English function words and
// words every trial report uses: patients, study, trial, ...) and strips
// plural endings.
func rankTokens(text string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len([]rune(w)) < 2 || stopWords[w] {
			continue
		}
		if st := lightStem(w); !stopWords[st] {
			out = append(out, st)
		}
	}
	return out
}

// lightStem strips English plural endings: "studies" → "study", "tumors"
// → "tumor", leaving "-ss", "-us", "-is" and "-ous" words alone.
func lightStem(w string) string {
	if len(w) <= 3 {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies"):
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "ss"), strings.HasSuffix(w, "us"), strings.HasSuffix(w, "is"), strings.HasSuffix(w, "ous"):
		return w
	case strings.HasSuffix(w, "s"):
		return w[:len(w)-1]
	}
	return w
}

// stopWords are English function words (scikit-learn's list) and generic
// clinical-trial words that do not tell topics apart.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above across after afterwards again against all almost alone along already also although always am among amongst amoungst amount an and another any anyhow anyone anything anyway anywhere are around as at back be became because become becomes becoming been before beforehand behind being below beside besides between beyond bill both bottom but by call can cannot cant co con could couldnt cry de describe detail do done down due during each eg eight either eleven else elsewhere empty enough etc even ever every everyone everything everywhere except few fifteen fifty fill find fire first five for former formerly forty found four from front full further get give go had has hasnt have he hence her here hereafter hereby herein hereupon hers herself him himself his how however hundred i ie if in inc indeed interest into is it its itself keep last latter latterly least less ltd made many may me meanwhile might mill mine more moreover most mostly move much must my myself name namely neither never nevertheless next nine no nobody none noone nor not nothing now nowhere of off often on once one only onto or other others otherwise our ours ourselves out over own part per perhaps please put rather re same see seem seemed seeming seems serious several she should show side since sincere six sixty so some somehow someone something sometime sometimes somewhere still such system take ten than that the their them themselves then thence there thereafter thereby therefore therein thereupon these they thick thin third this those though three through throughout thru thus to together too top toward towards twelve twenty two un under until up upon us very via was we well were what whatever when whence whenever where whereafter whereas whereupon wherever whether which while whither who whoever whole whom whose why will with within without would yet you your yours yourself yourselves
		patients patient study trial versus vs phase randomized randomised analysis results clinical treatment treated`) {
		m[w] = true
	}
	return m
}()

package trials

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/clinsight/clinsight/internal/textsearch"
	"golang.org/x/sync/errgroup"
)

// ConceptKind classifies a query concept.
type ConceptKind string

// Kinds of concepts. The deterministic extractor produces terms and
// phrases; the model labels its concepts with the clinical kinds.
const (
	KindTerm       ConceptKind = "term"
	KindPhrase     ConceptKind = "phrase"
	KindDiagnosis  ConceptKind = "diagnosis"
	KindCondition  ConceptKind = "condition"
	KindProcedure  ConceptKind = "procedure"
	KindTreatment  ConceptKind = "treatment"
	KindFinding    ConceptKind = "finding"
	KindDemography ConceptKind = "demography"
)

// Concept is a weighted piece of the patient description that trials are
// searched for.
type Concept struct {
	// Text is the concept, e.g. "chest pain".
	Text string `json:"text"`
	// Kind says what it is.
	Kind ConceptKind `json:"kind"`
	// Weight is its importance in the query (≥ 0); a negated concept has
	// weight 0.
	Weight float64 `json:"weight"`
	// Negated is true for a concept the patient does not have ("denies
	// smoking"): shown, never searched.
	Negated bool `json:"negated,omitempty"`
}

// Query is a patient description turned into what the ranking searches.
type Query struct {
	// Patient is the description.
	Patient string `json:"patient"`
	// Age is the patient's age in years when HasAge.
	Age    float64 `json:"age,omitempty"`
	HasAge bool    `json:"has_age"`
	// Sex is the patient's sex (SexUnknown when not stated).
	Sex Sex `json:"sex"`
	// Concepts are the weighted concepts, heaviest first.
	Concepts []Concept `json:"concepts"`
	// Source says who extracted the concepts: "deterministic extractor" or
	// "model <name>".
	Source string `json:"source"`
}

// Validate checks that the query can be searched.
func (q *Query) Validate() error {
	if strings.TrimSpace(q.Patient) == "" {
		return errors.New("the patient description is empty: describe the patient (age, sex, conditions, findings)")
	}
	for _, c := range q.Concepts {
		if c.Weight > 0 && !c.Negated {
			return nil
		}
	}
	return errors.New("no searchable concept was found in the patient description: name the patient's conditions, findings or treatments")
}

// searchable returns the concepts with a positive weight.
func (q *Query) searchable() []Concept {
	var out []Concept
	for _, c := range q.Concepts {
		if c.Weight > 0 && !c.Negated {
			out = append(out, c)
		}
	}
	return out
}

// ExtractOptions tune the deterministic extractor.
type ExtractOptions struct {
	// PositionDecay lowers the weight of later sentences: sentence i (from
	// 0) weighs 1/(1+PositionDecay·i). Case descriptions state the main
	// problem first.
	PositionDecay float64
	// PhraseWeight is the weight of two-word phrases relative to single
	// terms.
	PhraseWeight float64
	// MaxConcepts caps the number of concepts kept (heaviest first).
	MaxConcepts int
}

// DefaultExtractOptions are the extractor settings tuned on the SIGIR
// development topics (see the evaluation test).
func DefaultExtractOptions() ExtractOptions {
	return ExtractOptions{PositionDecay: 0.6, PhraseWeight: 1, MaxConcepts: 64}
}

// DocFreq gives the number of indexed trials containing a concept, and the
// number of trials, for inverse document frequencies. ExtractConcepts calls
// it from several goroutines at once.
type DocFreq func(text string) (df, n int, err error)

// ExtractConcepts turns a patient description into weighted concepts
// without a model: sentences and clauses, negation cues ("denies", "no
// history of", "negative for" ...: the rest of the clause is negated),
// stopwords of English and of case narratives, clinical abbreviations
// expanded ("HTN" → "hypertension"), single terms and adjacent two-word
// phrases, weighted by sentence position and summed over mentions. With
// docFreq, concepts that no trial mentions are dropped and concepts found
// in most trials lose weight (their inverse document frequency is low).
func ExtractConcepts(text string, docFreq DocFreq, opts ExtractOptions) (*Query, error) {
	q := &Query{Patient: text, Source: "deterministic extractor"}
	q.Age, q.HasAge, q.Sex = PatientDemographics(text)
	type acc struct {
		c     Concept
		first int
	}
	found := map[string]*acc{}
	order := 0
	add := func(text string, kind ConceptKind, w float64, negated bool) {
		key := string(kind) + "\x00" + text
		a := found[key]
		if a == nil {
			a = &acc{c: Concept{Text: text, Kind: kind}, first: order}
			order++
			found[key] = a
		}
		if negated {
			a.c.Negated = a.c.Negated || a.c.Weight == 0
			return
		}
		a.c.Negated = false
		a.c.Weight += w
	}
	for i, s := range sentences(text) {
		w := 1 / (1 + opts.PositionDecay*float64(i))
		for _, cl := range clauses(s) {
			toks := textsearch.Tokens(cl.text)
			var prev string
			for _, tk := range toks {
				if exp, ok := abbreviations()[tk.Lower]; ok && (len(tk.Lower) > 2 || isUpper(tk.Text)) {
					add(tk.Lower, KindTerm, w, cl.negated)
					add(exp, KindPhrase, w*opts.PhraseWeight, cl.negated)
					prev = ""
					continue
				}
				if isStop(tk.Lower) {
					// A function word breaks a phrase, a narrative word
					// too ("pain started" is no concept).
					prev = ""
					continue
				}
				if !fillerWords.Has(tk.Lower) && !(cl.negated && weakWords.Has(tk.Lower)) { // alone it names nothing (fillers.go)
					add(tk.Lower, KindTerm, w, cl.negated)
				}
				if prev != "" {
					add(prev+" "+tk.Lower, KindPhrase, w*opts.PhraseWeight, cl.negated)
				}
				prev = tk.Lower
			}
		}
	}
	list := make([]*acc, 0, len(found))
	for _, a := range found {
		list = append(list, a)
	}
	if docFreq != nil {
		// The lookups are independent: they run on up to workers()
		// goroutines (each an FTS5 count on the index, 0.1-1 ms; a patient
		// has 30-60 concepts, looked up one after another they took
		// 13 ms of a 54 ms match at 375k trials, BenchmarkScale).
		dfs, ns := make([]int, len(list)), make([]int, len(list))
		var g errgroup.Group
		g.SetLimit(workers())
		for i, a := range list {
			if a.c.Negated {
				continue
			}
			g.Go(func() error {
				df, n, err := docFreq(a.c.Text)
				if err != nil {
					return fmt.Errorf("concept %q: %w", a.c.Text, err)
				}
				dfs[i], ns[i] = df, n
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		kept := list[:0]
		for i, a := range list {
			if a.c.Negated {
				kept = append(kept, a)
				continue
			}
			if dfs[i] == 0 {
				continue // no trial mentions it: nothing to search for
			}
			a.c.Weight *= idfFactor(dfs[i], ns[i])
			kept = append(kept, a)
		}
		list = kept
	}
	slices.SortFunc(list, func(a, b *acc) int {
		if c := cmp.Compare(b.c.Weight, a.c.Weight); c != 0 {
			return c
		}
		return cmp.Compare(a.first, b.first)
	})
	max := opts.MaxConcepts
	if max <= 0 {
		max = 64
	}
	for _, a := range list {
		if !a.c.Negated && a.c.Weight > 0 {
			if max == 0 {
				continue
			}
			max--
		}
		q.Concepts = append(q.Concepts, a.c)
	}
	return q, nil
}

// idfFactor scales a concept by how specific it is: 1 for concepts found
// in few trials, falling to 0 for concepts found in half of them or more
// (they say nothing about which trial fits).
func idfFactor(df, n int) float64 {
	if n <= 0 || df <= 0 {
		return 1
	}
	idf := math.Log(float64(n) / float64(df))
	ref := math.Log(2) // df = n/2
	if idf <= ref {
		return 0
	}
	return min(1, (idf-ref)/(math.Log(20)-ref)) // full weight below 5% of trials
}

func isUpper(s string) bool {
	return strings.ToUpper(s) == s && strings.ToLower(s) != s
}

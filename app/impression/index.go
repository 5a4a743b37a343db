package impression

import (
	"context"
	"database/sql"
	"math"
	"slices"
	"strings"

	"github.com/clinsight/clinsight/internal/textsearch"
)

// Corpus is the report corpus in memory, indexed for similar-report
// search: the label vectors of the reports eligible as examples and a
// TF-IDF index of their findings. It is read-only after construction and
// safe for concurrent use.
type Corpus struct {
	reports  []Report
	examples []int32           // indexes into reports of the eligible reports
	tfidf    *textsearch.TFIDF // the examples' findings, by position in examples
	byID     map[int64]int32
}

// LoadCorpus reads the corpus of db and indexes it.
func LoadCorpus(ctx context.Context, db *sql.DB) (*Corpus, error) {
	reports, err := LoadReports(ctx, db)
	if err != nil {
		return nil, err
	}
	return NewCorpus(reports), nil
}

// NewCorpus indexes reports (labelled and with their eligibility set, as
// LoadReports returns them). Reports without an ID get their position + 1.
func NewCorpus(reports []Report) *Corpus {
	c := &Corpus{reports: reports, byID: make(map[int64]int32, len(reports))}
	for i := range c.reports {
		if c.reports[i].ID == 0 {
			c.reports[i].ID = int64(i + 1)
		}
		c.byID[c.reports[i].ID] = int32(i)
		if c.reports[i].Eligible {
			c.examples = append(c.examples, int32(i))
		}
	}
	// TF-IDF as scikit-learn's TfidfVectorizer: raw counts times the
	// smoothed idf, L2-normalised per document.
	docs := make([][]string, len(c.examples))
	for k, ri := range c.examples {
		docs[k] = textTokens(c.reports[ri].Findings)
	}
	c.tfidf = textsearch.NewTFIDF(docs)
	return c
}

// textTokens splits text for the TF-IDF index: its words (textsearch.Words)
// of at least 2 characters, as scikit-learn's default token pattern.
func textTokens(s string) []string { return textsearch.Analyzer{MinLen: 2}.Terms(s) }

// Len returns the number of reports.
func (c *Corpus) Len() int { return len(c.reports) }

// Examples returns the number of reports eligible as examples.
func (c *Corpus) Examples() int { return len(c.examples) }

// Reports returns the reports (shared: do not modify).
func (c *Corpus) Reports() []Report { return c.reports }

// Report returns the report with the given id.
func (c *Corpus) Report(id int64) (Report, bool) {
	i, ok := c.byID[id]
	if !ok {
		return Report{}, false
	}
	return c.reports[i], true
}

// Match is a similar report found for a query.
type Match struct {
	// Report is the similar report.
	Report Report
	// Distance is the Euclidean distance between the label vectors.
	Distance float64
	// Similarity is the TF-IDF cosine similarity of the findings, which
	// breaks ties of Distance.
	Similarity float64
}

// Query asks for the reports most similar to some findings.
type Query struct {
	// Findings is the text searched for.
	Findings string
	// Labels are the query's observation labels; nil means
	// LabelText(Findings).
	Labels *Labels
	// N is the number of reports wanted (DefaultExamples when ≤ 0).
	N int
	// Candidates is how many reports, the most similar by text, are
	// ordered by label distance; ≤ 0 means N. A value of at least the
	// corpus size orders the whole corpus by label distance, as the paper
	// does (on Open-i that retrieves less fitting impressions: see the
	// README).
	Candidates int
	// ExcludeID leaves out the report with this id (the report itself, in
	// leave-one-out evaluation); 0 excludes nothing.
	ExcludeID int64
	// ExcludeText leaves out reports whose findings equal it (after
	// trimming spaces): the input itself when it was taken from the
	// corpus. Empty excludes nothing.
	ExcludeText string
}

// DefaultExamples is the number of similar reports used as examples.
const DefaultExamples = 5

// candidate is a report considered by Similar.
type candidate struct {
	pos int32 // position in examples
	d2  int
	sim float32
	id  int64
}

// Similar returns the eligible reports closest to the query, in two
// stages: the Candidates reports with the most similar findings (TF-IDF
// cosine), then among them ImpressionGPT's order: Euclidean distance of the
// label vectors first, ties (frequent: most reports are normal) broken by
// the text similarity, then by id. The report excluded by the query is
// never returned.
func (c *Corpus) Similar(q Query) []Match {
	n := q.N
	if n <= 0 {
		n = DefaultExamples
	}
	pool := q.Candidates
	if pool <= 0 {
		pool = n
	}
	pool = max(pool, n)
	labels := q.Labels
	if labels == nil {
		l := LabelText(q.Findings)
		labels = &l
	}
	sims := c.similarities(q.Findings)
	excludeText := strings.TrimSpace(q.ExcludeText)
	// Stage 1: the pool, by text similarity (then label distance, id).
	textFirst := func(a, b candidate) bool {
		if a.sim != b.sim {
			return a.sim > b.sim
		}
		if a.d2 != b.d2 {
			return a.d2 < b.d2
		}
		return a.id < b.id
	}
	var cands []candidate
	if pool >= len(c.examples) {
		cands = make([]candidate, 0, len(c.examples))
	}
	h := candHeap{less: textFirst}
	for k, ri := range c.examples {
		r := &c.reports[ri]
		if r.ID == q.ExcludeID {
			continue
		}
		cd := candidate{pos: int32(k), d2: labels.Distance2(r.Labels), sim: sims[k], id: r.ID}
		if cands != nil {
			if excludeText == "" || strings.TrimSpace(r.Findings) != excludeText {
				cands = append(cands, cd)
			}
			continue
		}
		if len(h.items) == pool && !textFirst(cd, h.items[0]) {
			continue
		}
		if excludeText != "" && strings.TrimSpace(r.Findings) == excludeText {
			continue
		}
		h.pushBounded(cd, pool)
	}
	if cands == nil {
		cands = h.items
	}
	// Stage 2: label distance, then text similarity, then id.
	slices.SortFunc(cands, func(a, b candidate) int {
		switch {
		case a.d2 != b.d2:
			return a.d2 - b.d2
		case a.sim > b.sim:
			return -1
		case a.sim < b.sim:
			return 1
		case a.id < b.id:
			return -1
		case a.id > b.id:
			return 1
		}
		return 0
	})
	if len(cands) > n {
		cands = cands[:n]
	}
	out := make([]Match, len(cands))
	for i, b := range cands {
		out[i] = Match{Report: c.reports[c.examples[b.pos]], Distance: math.Sqrt(float64(b.d2)), Similarity: float64(b.sim)}
	}
	return out
}

// candHeap keeps the best candidates with the worst at the root.
type candHeap struct {
	items []candidate
	less  func(a, b candidate) bool // a better than b
}

// pushBounded adds cd, dropping the worst when there are more than limit.
func (h *candHeap) pushBounded(cd candidate, limit int) {
	worse := func(i, j int) bool { return h.less(h.items[j], h.items[i]) } // items[i] worse than items[j]
	if len(h.items) < limit {
		h.items = append(h.items, cd)
		for i := len(h.items) - 1; i > 0; {
			p := (i - 1) / 2
			if !worse(i, p) {
				break
			}
			h.items[i], h.items[p] = h.items[p], h.items[i]
			i = p
		}
		return
	}
	h.items[0] = cd
	for i := 0; ; {
		l, r, w := 2*i+1, 2*i+2, i
		if l < len(h.items) && worse(l, w) {
			w = l
		}
		if r < len(h.items) && worse(r, w) {
			w = r
		}
		if w == i {
			return
		}
		h.items[i], h.items[w] = h.items[w], h.items[i]
		i = w
	}
}

// similarities returns the TF-IDF cosine similarity of text with every
// example (indexed like c.examples).
func (c *Corpus) similarities(text string) []float32 { return c.tfidf.Cosines(textTokens(text)) }

package evidence

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// This file puts the active learner (active.go) behind the Screen step: a
// ScreenLearner holds the features of a review's candidates, built once,
// and re-ranks the undecided ones after each decision; a Ranking is an
// immutable snapshot of one re-ranking that the front end reads while the
// next one trains.

// ScreenLearner ranks a review's candidates by the reviewer's decisions,
// most likely relevant first. At the start, the review's question (the
// PICO and the criteria) counts as one included record, so that the first
// order is by similarity to the question; seed records the reviewer
// includes join it. Its methods may be called from any goroutine; one
// re-ranking runs at a time.
type ScreenLearner struct {
	mu       sync.Mutex
	ids      []string
	index    map[string]int
	question int // the question's pseudo-record, -1 when there is none
	f        *Features
	a        *Active
}

// QuestionText is the text the learner reads as the review's question: the
// PICO and the criteria switched on.
func (p *Project) QuestionText() string {
	parts := []string{p.PICO.Population, p.PICO.Intervention, p.PICO.Comparison, p.PICO.Outcome}
	for _, c := range p.Criteria {
		if !c.Disabled {
			parts = append(parts, c.Text)
		}
	}
	var out []string
	for _, s := range parts {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return strings.Join(out, ". ")
}

// LearnerVerdicts returns the chat model's verdicts that the learner reads
// as features (ActiveDoc.Verdicts), by record ID: those of the studies
// screened without error against the current criteria (none when the
// criteria changed since the screening), with a key that changes when they
// do, so that the learner is built again.
func (p *Project) LearnerVerdicts() (map[string][]Verdict, string) {
	if len(p.Screening) == 0 || p.ScreeningStale() {
		return nil, ""
	}
	out := make(map[string][]Verdict, len(p.Screening))
	h := sha256.New()
	for _, st := range p.Screening {
		if st.Error != "" || len(st.Verdicts) == 0 {
			continue
		}
		out[st.ID] = st.Verdicts
		h.Write([]byte(st.ID))
		for _, v := range st.Verdicts {
			h.Write([]byte{0})
			h.Write([]byte(v))
		}
		h.Write([]byte{1})
	}
	if len(out) == 0 {
		return nil, ""
	}
	return out, hex.EncodeToString(h.Sum(nil)[:8])
}

// NewScreenLearner builds the features of the candidates ids (docs[i] is
// the text of ids[i]) and of the question (none when empty).
func NewScreenLearner(ctx context.Context, ids []string, docs []ActiveDoc, question string) (*ScreenLearner, error) {
	if len(ids) != len(docs) {
		return nil, fmt.Errorf("active learning: %d records but %d texts", len(ids), len(docs))
	}
	all := docs
	q := -1
	if strings.TrimSpace(question) != "" {
		all = append(slices.Clip(docs), ActiveDoc{Title: question})
		q = len(docs)
	}
	f, err := BuildFeatures(ctx, all, DefaultFeatureOptions)
	if err != nil {
		return nil, err
	}
	l := &ScreenLearner{ids: slices.Clone(ids), index: make(map[string]int, len(ids)), question: q, f: f, a: NewActive(f, DefaultLearner)}
	for i, id := range ids {
		l.index[id] = i
	}
	if q >= 0 {
		l.a.Label(q, true)
	}
	return l, nil
}

// Len returns the number of candidates the learner ranks.
func (l *ScreenLearner) Len() int { return len(l.ids) }

// Covers reports whether the learner was built for exactly these candidates
// (in any order).
func (l *ScreenLearner) Covers(ids []string) bool {
	if len(ids) != len(l.ids) {
		return false
	}
	for _, id := range ids {
		if _, ok := l.index[id]; !ok {
			return false
		}
	}
	return true
}

// Rank trains on the decisions (those on records the learner does not
// hold are ignored) and returns the undecided candidates' new order.
// Before the first decision, a non-empty prior (the chat model's
// screening order) is the order, the learner giving only the confidence.
// The undecided records of first (the recall test's sample) come before
// all others.
func (l *ScreenLearner) Rank(ctx context.Context, decisions map[string]Decision, prior, first []string) (*Ranking, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	start := time.Now()
	for i := range l.ids {
		d, ok := decisions[l.ids[i]]
		switch {
		case !ok:
			if l.a.Decided(i) {
				l.a.Unlabel(i)
			}
		case l.a.labels[i] == 0 || (l.a.labels[i] > 0) != d.Include:
			l.a.Label(i, d.Include)
		}
	}
	if err := l.a.Train(ctx); err != nil {
		return nil, err
	}
	ranked := l.a.Rank()
	r := &Ranking{
		Order:      make([]string, 0, len(ranked)),
		Model:      l.modelName(),
		Decisions:  l.a.nPos + l.a.nNeg,
		confidence: make(map[string]float64, len(ranked)),
		index:      l.index,
		f:          l.f,
		w:          slices.Clone(l.a.w),
	}
	if l.question >= 0 {
		r.Decisions--
	}
	for _, x := range ranked {
		if x.Index == l.question {
			continue
		}
		id := l.ids[x.Index]
		r.Order = append(r.Order, id)
		r.confidence[id] = x.Confidence
	}
	if r.Decisions == 0 && len(prior) > 0 {
		r.Order = MergeOrder(r.Order, 0, prior)
		r.Model = "the chat model's verdicts (no decision yet)"
	}
	if len(first) > 0 {
		r.Order = MergeOrder(r.Order, 0, first)
		r.Model += "; the recall test's sample first"
	}
	r.Took = time.Since(start)
	return r, nil
}

// modelName says which model the last Train fitted.
func (l *ScreenLearner) modelName() string {
	a := l.a
	switch {
	case a.nPos == 0:
		return "no included record yet: the search's order"
	case a.nNeg == 0:
		return "similarity to the question and the included records (no exclusion yet)"
	case a.nPos < a.cfg.NBUntil || a.cfg.Kind == LearnerNaiveBayes:
		return fmt.Sprintf("naive Bayes on your decisions (until %d records are included)", a.cfg.NBUntil)
	case a.cfg.Kind == LearnerLogistic:
		return "logistic regression on your decisions"
	}
	return "linear SVM on your decisions"
}

// Ranking is one re-ranking of a review's candidates: read-only, safe to
// share between goroutines.
type Ranking struct {
	// Order lists the undecided candidates, most likely relevant first.
	Order []string
	// Model says which model ranked them.
	Model string
	// Decisions is the number of decisions it learnt from.
	Decisions int
	// Took is how long training and ranking took.
	Took time.Duration

	confidence map[string]float64
	index      map[string]int
	f          *Features
	w          []float64
}

// Confidence returns the model's confidence that an undecided candidate
// is relevant (0-1; see Ranked.Confidence), false for a decided one.
func (r *Ranking) Confidence(id string) (float64, bool) {
	if r == nil {
		return 0, false
	}
	c, ok := r.confidence[id]
	return c, ok
}

// TopTerms returns the k terms that raised a candidate's score the most
// (see Active.TopTerms), nil for an unknown one.
func (r *Ranking) TopTerms(id string, k int) []TermWeight {
	if r == nil {
		return nil
	}
	i, ok := r.index[id]
	if !ok {
		return nil
	}
	return topTerms(r.f, r.w, i, k)
}

// MergeOrder applies a new ranking to a list shown to the reviewer without
// moving what they see: the first keep rows of current stay where they are
// (the selected row and those above it), then come the ranked records not
// among them, then the rest of current (the decided records) in its order.
// Records in ranked but not in current are left out.
func MergeOrder(current []string, keep int, ranked []string) []string {
	keep = min(max(keep, 0), len(current))
	out := make([]string, 0, len(current))
	have := make(map[string]bool, len(current))
	for _, id := range current {
		have[id] = true
	}
	used := make(map[string]bool, len(current))
	for _, id := range current[:keep] {
		out = append(out, id)
		used[id] = true
	}
	for _, id := range ranked {
		if have[id] && !used[id] {
			out = append(out, id)
			used[id] = true
		}
	}
	for _, id := range current[keep:] {
		if !used[id] {
			out = append(out, id)
			used[id] = true
		}
	}
	return out
}

// ActiveDocOf returns the text of a record the learner reads: its title, its
// abstract and its MeSH headings and keywords.
func ActiveDocOf(r *Record) ActiveDoc {
	return ActiveDoc{Title: r.Title, Abstract: r.Abstract(), Keywords: strings.Join(append(slices.Clone(r.MeSH), r.Keywords...), ";")}
}

package omop

import (
	"context"
	"fmt"
	"strconv"
	"unicode/utf8"

	"github.com/clinsight/clinsight/internal/textsearch"
)

// maxVocabNames bounds the concept names read to learn the vocabulary's
// words for spelling correction: the standard concepts of the clinical
// domains come first; a full Athena vocabulary has far more names, whose
// words are mostly already among these.
const maxVocabNames = 400_000

// spellVocab holds the words of concept names.
type spellVocab struct {
	count map[string]int  // word → names holding it
	stems map[string]bool // Porter stems of the words
	byLen map[int][]string
}

// loadVocab reads the words of concept names on first use (a failed or
// cancelled read is tried again next time).
func (r *Resolver) loadVocab(ctx context.Context) (*spellVocab, error) {
	r.vocabMu.Lock()
	defer r.vocabMu.Unlock()
	if r.vocab != nil {
		return r.vocab, nil
	}
	v := &spellVocab{count: map[string]int{}, stems: map[string]bool{}, byLen: map[int][]string{}}
	err := r.db.Scan(ctx, "SELECT concept_name FROM concept WHERE concept_name IS NOT NULL ORDER BY (standard_concept = 'S') DESC, (domain_id IN ('Condition','Drug','Measurement','Procedure','Observation')) DESC, concept_id LIMIT "+strconv.Itoa(maxVocabNames), func(vals []any) error {
		for _, w := range textsearch.Words(asText(vals[0])) {
			if v.count[w] == 0 {
				v.stems[textsearch.PorterStem(w)] = true
				n := utf8.RuneCountInString(w)
				v.byLen[n] = append(v.byLen[n], w)
			}
			v.count[w]++
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read concept names: %w", err)
	}
	r.vocab = v
	return v, nil
}

// correct replaces the words of a term that no concept name holds (in any
// inflection) by the closest word of the vocabulary: one edit away for
// words of 4-6 letters, two for longer ones; ties go to the more frequent
// word. Short words, numbers and known words are kept.
func (r *Resolver) correct(ctx context.Context, words []string) ([]string, error) {
	var v *spellVocab
	out := make([]string, len(words))
	for i, w := range words {
		out[i] = w
		n := utf8.RuneCountInString(w)
		if n < 4 || !textsearch.HasLetter(w) || hasDigit(w) {
			continue
		}
		if v == nil {
			var err error
			if v, err = r.loadVocab(ctx); err != nil {
				return nil, err
			}
		}
		if v.count[w] > 0 || v.stems[textsearch.PorterStem(w)] {
			continue
		}
		maxDist := 1
		if n >= 7 {
			maxDist = 2
		}
		best, bestDist, bestCount := "", maxDist+1, 0
		for l := n - maxDist; l <= n+maxDist; l++ {
			for _, cand := range v.byLen[l] {
				d := editDistance(w, cand, maxDist)
				if d < bestDist || (d == bestDist && v.count[cand] > bestCount) {
					best, bestDist, bestCount = cand, d, v.count[cand]
				}
			}
		}
		if best != "" {
			out[i] = best
		}
	}
	return out, nil
}

func hasDigit(s string) bool {
	for _, r := range s {
		if r >= '0' && r <= '9' {
			return true
		}
	}
	return false
}

// editDistance is the optimal-string-alignment distance between a and b
// (insertions, deletions, substitutions and transpositions of adjacent
// letters), or max+1 as soon as it must exceed max.
func editDistance(a, b string, max int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d > max || -d > max {
		return max + 1
	}
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				cur[j] = min(cur[j], prev2[j-2]+1)
			}
			rowMin = min(rowMin, cur[j])
		}
		if rowMin > max {
			return max + 1
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}

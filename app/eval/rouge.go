package eval

import (
	"strings"
	"unicode"

	"github.com/clinsight/clinsight/internal/textsearch"
)

// ROUGE-1, ROUGE-2 and ROUGE-L (F1, precision, recall) exactly as Google's
// rouge-score package (rouge_scorer.RougeScorer) computes them:
//
//   - tokens: the text lowercased, every run of characters other than a-z
//     and 0-9 a separator (so punctuation, accents and other scripts split
//     words and are dropped); with stemming, tokens longer than 3 letters
//     go through the Porter stemmer as NLTK's PorterStemmer() (its default
//     NLTK_EXTENSIONS mode) stems them;
//   - ROUGE-N: n-gram counts clipped to the smaller of the two counts, so
//     repeated tokens match at most as often as they occur on both sides;
//     precision = overlap / max(prediction n-grams, 1), recall = overlap /
//     max(target n-grams, 1);
//   - ROUGE-L: the longest common subsequence of the token lists; 0 when
//     either side has no token;
//   - F1 = 2PR/(P+R), 0 when P+R is 0.
//
// Scores are fractions in [0, 1]; callers multiply by 100 to report percent.

// RougeScore is one ROUGE measure of a prediction against a target.
type RougeScore struct {
	// Precision is the share of the prediction's units found in the target.
	Precision float64 `json:"precision"`
	// Recall is the share of the target's units found in the prediction.
	Recall float64 `json:"recall"`
	// F1 is the harmonic mean of Precision and Recall.
	F1 float64 `json:"f1"`
}

// Rouge holds ROUGE-1, ROUGE-2 and ROUGE-L of a prediction.
type Rouge struct {
	// R1 is unigram overlap.
	R1 RougeScore `json:"rouge1"`
	// R2 is bigram overlap.
	R2 RougeScore `json:"rouge2"`
	// RL is the longest common subsequence.
	RL RougeScore `json:"rougeL"`
}

// RougeOptions tune ROUGE scoring.
type RougeOptions struct {
	// Stem applies the Porter stemmer to tokens longer than 3 letters
	// (rouge-score's use_stemmer=True).
	Stem bool
}

// ComputeRouge scores prediction against target (the reference) with
// ROUGE-1, ROUGE-2 and ROUGE-L.
func ComputeRouge(target, prediction string, opts RougeOptions) Rouge {
	t := RougeTokens(target, opts.Stem)
	p := RougeTokens(prediction, opts.Stem)
	return Rouge{R1: RougeN(t, p, 1), R2: RougeN(t, p, 2), RL: RougeL(t, p)}
}

// RougeTokens splits text into ROUGE tokens: lowercase, runs of characters
// other than a-z and 0-9 as separators, and (with stem) the Porter stem of
// tokens longer than 3 letters.
func RougeTokens(text string, stem bool) []string {
	var tokens []string
	var cur strings.Builder
	flush := func() {
		if cur.Len() == 0 {
			return
		}
		tok := cur.String()
		cur.Reset()
		if stem && len(tok) > 3 {
			tok = textsearch.PorterStem(tok)
		}
		tokens = append(tokens, tok)
	}
	for _, r := range text {
		if r == 'İ' {
			// Python lowercases U+0130 to "i" + U+0307 (combining dot),
			// which ends the token after the i.
			cur.WriteByte('i')
			flush()
			continue
		}
		r = unicode.ToLower(r)
		if ('a' <= r && r <= 'z') || ('0' <= r && r <= '9') {
			cur.WriteRune(r)
			continue
		}
		flush()
	}
	flush()
	return tokens
}

// RougeN scores n-gram overlap between target and prediction tokens.
func RougeN(target, prediction []string, n int) RougeScore {
	if n <= 0 {
		return RougeScore{}
	}
	tc := ngramCounts(target, n)
	pc := ngramCounts(prediction, n)
	overlap := 0
	for g, c := range tc {
		overlap += min(c, pc[g])
	}
	tn := max(len(target)-n+1, 0)
	pn := max(len(prediction)-n+1, 0)
	return rougeScore(float64(overlap)/float64(max(pn, 1)), float64(overlap)/float64(max(tn, 1)))
}

// ngramCounts counts the n-grams of tokens, keyed by the tokens joined
// with a byte that cannot occur in a token.
func ngramCounts(tokens []string, n int) map[string]int {
	counts := make(map[string]int, len(tokens))
	for i := 0; i+n <= len(tokens); i++ {
		var key string
		if n == 1 {
			key = tokens[i]
		} else {
			key = strings.Join(tokens[i:i+n], "\x00")
		}
		counts[key]++
	}
	return counts
}

// RougeL scores the longest common subsequence of target and prediction
// tokens.
func RougeL(target, prediction []string) RougeScore {
	if len(target) == 0 || len(prediction) == 0 {
		return RougeScore{}
	}
	lcs := LCSLength(target, prediction)
	return rougeScore(float64(lcs)/float64(len(prediction)), float64(lcs)/float64(len(target)))
}

// LCSLength returns the length of the longest common subsequence of a and
// b (two rows of the dynamic-programming table).
func LCSLength(a, b []string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for i := range a {
		for j := range b {
			if a[i] == b[j] {
				cur[j+1] = prev[j] + 1
			} else {
				cur[j+1] = max(prev[j+1], cur[j])
			}
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

func rougeScore(p, r float64) RougeScore {
	s := RougeScore{Precision: p, Recall: r}
	if p+r > 0 {
		s.F1 = 2 * p * r / (p + r)
	}
	return s
}

// RougeMean accumulates ROUGE scores to report their means, as the
// evaluation scripts of ImpressionGPT and the Open-i baselines do (the mean
// of per-report F1).
type RougeMean struct {
	// N is the number of scores added.
	N int
	// Sum holds the running sums.
	Sum Rouge
}

// Add adds one report's scores.
func (m *RougeMean) Add(r Rouge) {
	m.N++
	add := func(s *RougeScore, x RougeScore) {
		s.Precision += x.Precision
		s.Recall += x.Recall
		s.F1 += x.F1
	}
	add(&m.Sum.R1, r.R1)
	add(&m.Sum.R2, r.R2)
	add(&m.Sum.RL, r.RL)
}

// Mean returns the mean scores (zero when nothing was added).
func (m RougeMean) Mean() Rouge {
	if m.N == 0 {
		return Rouge{}
	}
	n := float64(m.N)
	div := func(s RougeScore) RougeScore {
		return RougeScore{Precision: s.Precision / n, Recall: s.Recall / n, F1: s.F1 / n}
	}
	return Rouge{R1: div(m.Sum.R1), R2: div(m.Sum.R2), RL: div(m.Sum.RL)}
}

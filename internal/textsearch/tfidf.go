package textsearch

import (
	"math"
	"slices"
)

// SmoothIDF is the smoothed inverse document frequency of a term found in
// df of n documents, ln((1+n)/(1+df)) + 1, as scikit-learn's
// TfidfVectorizer computes it (smooth_idf=True): as if one more document
// held every term, so no term weighs zero or divides by zero.
func SmoothIDF(n, df int) float64 {
	return math.Log((1+float64(n))/(1+float64(df))) + 1
}

// TFIDF is a TF-IDF index over documents held in memory, each given as its
// terms, for cosine similarity: a document's vector is its raw term counts
// times SmoothIDF, L2-normalised (scikit-learn's TfidfVectorizer defaults).
// Weights are kept as float32, halving the memory of a large corpus. It is
// read-only once built and safe for concurrent use; a query costs the
// postings of its terms, not the number of documents.
type TFIDF struct {
	n        int
	vocab    map[string]int32
	idf      []float32
	postings [][]weighted // per term id: the documents holding it, in order
}

// weighted is one document's L2-normalised TF-IDF weight for a term.
type weighted struct {
	doc int32
	w   float32
}

// NewTFIDF indexes docs, each given as its terms.
func NewTFIDF(docs [][]string) *TFIDF {
	ix := &TFIDF{n: len(docs), vocab: map[string]int32{}}
	var df []int32
	counts := make([]map[int32]int32, len(docs))
	for i, d := range docs {
		tf := map[int32]int32{}
		for _, t := range d {
			id, ok := ix.vocab[t]
			if !ok {
				id = int32(len(df))
				ix.vocab[t] = id
				df = append(df, 0)
			}
			if tf[id] == 0 {
				df[id]++
			}
			tf[id]++
		}
		counts[i] = tf
	}
	ix.idf = make([]float32, len(df))
	ix.postings = make([][]weighted, len(df))
	for t, d := range df {
		ix.idf[t] = float32(SmoothIDF(len(docs), int(d)))
		ix.postings[t] = make([]weighted, 0, d)
	}
	for i, tf := range counts {
		terms, norm := ix.sortedTerms(tf)
		for _, t := range terms {
			ix.postings[t] = append(ix.postings[t], weighted{doc: int32(i), w: float32(float64(tf[t]) * float64(ix.idf[t]) / norm)})
		}
	}
	return ix
}

// sortedTerms returns the term ids of a count vector in increasing order
// (a fixed order of the floating-point sums) and its TF-IDF L2 norm.
func (ix *TFIDF) sortedTerms(tf map[int32]int32) ([]int32, float64) {
	terms := make([]int32, 0, len(tf))
	for t := range tf {
		terms = append(terms, t)
	}
	slices.Sort(terms)
	var sum float64
	for _, t := range terms {
		w := float64(tf[t]) * float64(ix.idf[t])
		sum += w * w
	}
	return terms, math.Sqrt(sum)
}

// Len returns the number of documents.
func (ix *TFIDF) Len() int { return ix.n }

// Cosines returns the cosine similarity of the query's TF-IDF vector with
// every document's (by document index), from 0 to 1. Query terms no
// document holds are ignored; a query without a known term is 0 to all.
func (ix *TFIDF) Cosines(query []string) []float32 {
	sims := make([]float32, ix.n)
	tf := map[int32]int32{}
	for _, t := range query {
		if id, ok := ix.vocab[t]; ok {
			tf[id]++
		}
	}
	terms, norm := ix.sortedTerms(tf)
	if norm == 0 {
		return sims
	}
	for _, t := range terms {
		qw := float32(float64(tf[t]) * float64(ix.idf[t]) / norm)
		for _, p := range ix.postings[t] {
			sims[p.doc] += qw * p.w
		}
	}
	return sims
}

package textsearch

import "math"

// BM25Params are Okapi BM25's parameters. The zero value selects
// Robertson's usual values, K1 1.2 and B 0.75.
type BM25Params struct {
	// K1 is the term-frequency saturation (0 means 1.2).
	K1 float64
	// B is the document-length normalisation, from 0 (none) to 1 (0 means
	// 0.75; a B of exactly 0 cannot be asked for).
	B float64
}

func (p BM25Params) withDefaults() BM25Params {
	if p.K1 == 0 {
		p.K1 = 1.2
	}
	if p.B == 0 {
		p.B = 0.75
	}
	return p
}

// BM25 is an Okapi BM25 index over documents held in memory, each given as
// its terms (the output of an Analyzer). It is read-only once built and
// safe for concurrent use. Ranking many documents by a query costs the
// number of postings of the query's terms, not the number of documents.
type BM25 struct {
	params   BM25Params
	n        int
	norm     []float64            // per document: K1 · (1 − B + B·len/avgdl)
	postings map[string][]posting // per term: the documents holding it
}

// posting is a term's count in one document.
type posting struct {
	doc int32
	tf  float64
}

// NewBM25 indexes docs, each given as its terms.
func NewBM25(docs [][]string, p BM25Params) *BM25 {
	p = p.withDefaults()
	ix := &BM25{params: p, n: len(docs), norm: make([]float64, len(docs)), postings: map[string][]posting{}}
	total := 0
	for i, d := range docs {
		tf := make(map[string]float64, len(d))
		for _, t := range d {
			if tf[t] == 0 {
				// First occurrence: the posting lists stay in document
				// order, and a document's terms in first-occurrence order.
				ix.postings[t] = append(ix.postings[t], posting{doc: int32(i)})
			}
			tf[t]++
		}
		for t, f := range tf {
			ps := ix.postings[t]
			ps[len(ps)-1].tf = f
		}
		total += len(d)
	}
	avgdl := 0.0
	if len(docs) > 0 {
		avgdl = float64(total) / float64(len(docs))
	}
	for i, d := range docs {
		ix.norm[i] = p.K1 * (1 - p.B + p.B*float64(len(d))/math.Max(avgdl, 1e-9))
	}
	return ix
}

// Len returns the number of documents.
func (ix *BM25) Len() int { return ix.n }

// DocFreq returns the number of documents holding term.
func (ix *BM25) DocFreq(term string) int { return len(ix.postings[term]) }

// IDF is BM25's inverse document frequency of term, ln(1 + (N − df + 0.5)
// / (df + 0.5)): never negative, so a term found in most documents still
// counts a little.
func (ix *BM25) IDF(term string) float64 {
	n, df := float64(ix.n), float64(len(ix.postings[term]))
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// Term is a query term with its weight.
type Term struct {
	// Text is the term, as the documents' terms were made.
	Text string
	// Weight multiplies the term's BM25 contribution.
	Weight float64
}

// UniqueTerms returns the distinct terms of a query, each of weight 1, in
// the order they first occur.
func UniqueTerms(terms []string) []Term {
	out := make([]Term, 0, len(terms))
	seen := make(map[string]bool, len(terms))
	for _, t := range terms {
		if !seen[t] {
			seen[t] = true
			out = append(out, Term{Text: t, Weight: 1})
		}
	}
	return out
}

// Scores returns the BM25 score of every document for the query (by
// document index; 0 for a document holding no query term): the sum over
// the query terms, in their order, of weight · idf · tf·(K1+1) / (tf +
// K1·(1 − B + B·len/avgdl)). A term given twice counts twice. The order of
// the terms fixes the order of the floating-point additions, so callers
// that need the same scores run after run give the terms in a fixed order
// (not a map's).
func (ix *BM25) Scores(query []Term) []float64 {
	out := make([]float64, ix.n)
	k1 := ix.params.K1
	for _, q := range query {
		ps := ix.postings[q.Text]
		if len(ps) == 0 {
			continue
		}
		idf := ix.IDF(q.Text)
		for _, p := range ps {
			out[p.doc] += q.Weight * idf * p.tf * (k1 + 1) / (p.tf + ix.norm[p.doc])
		}
	}
	return out
}

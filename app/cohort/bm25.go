package cohort

import "math"

// BM25 parameters (Robertson's usual values).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// bm25 is an Okapi BM25 index over a handful of documents (the table docs
// of one database), on word stems.
type bm25 struct {
	tf    []map[string]int
	len   []int
	avgdl float64
	df    map[string]int
}

// newBM25 indexes docs, each given as its stems.
func newBM25(docs [][]string) *bm25 {
	ix := &bm25{df: map[string]int{}}
	total := 0
	for _, d := range docs {
		tf := map[string]int{}
		for _, s := range d {
			tf[s]++
		}
		for s := range tf {
			ix.df[s]++
		}
		ix.tf = append(ix.tf, tf)
		ix.len = append(ix.len, len(d))
		total += len(d)
	}
	if len(docs) > 0 {
		ix.avgdl = float64(total) / float64(len(docs))
	}
	return ix
}

// idf is the BM25 inverse document frequency of a stem (never negative).
func (ix *bm25) idf(s string) float64 {
	n, df := float64(len(ix.tf)), float64(ix.df[s])
	return math.Log(1 + (n-df+0.5)/(df+0.5))
}

// scores returns the BM25 score of every document for the query stems
// (each distinct stem counted once).
func (ix *bm25) scores(query []string) []float64 {
	out := make([]float64, len(ix.tf))
	seen := map[string]bool{}
	for _, q := range query {
		if seen[q] || ix.df[q] == 0 {
			continue
		}
		seen[q] = true
		idf := ix.idf(q)
		for d, tf := range ix.tf {
			f := float64(tf[q])
			if f == 0 {
				continue
			}
			norm := 1 - bm25B + bm25B*float64(ix.len[d])/ix.avgdl
			out[d] += idf * f * (bm25K1 + 1) / (f + bm25K1*norm)
		}
	}
	return out
}

package textsearch

import (
	"math"
	"testing"
)

// bm25Naive is BM25 written out from its definition, document by
// document, to check the posting-list index against.
func bm25Naive(docs [][]string, query []Term, k1, b float64) []float64 {
	n := float64(len(docs))
	var total float64
	for _, d := range docs {
		total += float64(len(d))
	}
	avgdl := total / n
	df := map[string]float64{}
	for _, d := range docs {
		seen := map[string]bool{}
		for _, t := range d {
			if !seen[t] {
				seen[t] = true
				df[t]++
			}
		}
	}
	out := make([]float64, len(docs))
	for i, d := range docs {
		for _, q := range query {
			f := 0.0
			for _, t := range d {
				if t == q.Text {
					f++
				}
			}
			if f == 0 {
				continue
			}
			idf := math.Log(1 + (n-df[q.Text]+0.5)/(df[q.Text]+0.5))
			out[i] += q.Weight * idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(len(d))/avgdl))
		}
	}
	return out
}

func TestBM25MatchesDefinition(t *testing.T) {
	docs := [][]string{
		{"liver", "cancer", "ablation", "ablation"},
		{"lung", "cancer", "chemotherapy"},
		{"microwave", "ablation", "of", "liver", "tumour", "in", "a", "long", "trial"},
		{},
		{"cancer"},
	}
	ix := NewBM25(docs, BM25Params{})
	if ix.Len() != 5 || ix.DocFreq("cancer") != 3 || ix.DocFreq("none") != 0 {
		t.Fatalf("Len %d, DocFreq(cancer) %d", ix.Len(), ix.DocFreq("cancer"))
	}
	query := []Term{{"liver", 1}, {"ablation", 0.5}, {"cancer", 0.3}, {"absent", 1}}
	got := ix.Scores(query)
	want := bm25Naive(docs, query, 1.2, 0.75)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("doc %d: score %v, want %v", i, got[i], want[i])
		}
	}
	if got[3] != 0 || !(got[0] > got[2]) || !(got[0] > got[1]) {
		t.Errorf("scores %v: want the short liver ablation document first and the empty one at 0", got)
	}
	// Other parameters change the scores as the definition says.
	got = NewBM25(docs, BM25Params{K1: 2, B: 0.3}).Scores(query)
	want = bm25Naive(docs, query, 2, 0.3)
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-12 {
			t.Errorf("K1 2, B 0.3, doc %d: score %v, want %v", i, got[i], want[i])
		}
	}
	// IDF never negative, even for a term in every document.
	if idf := NewBM25([][]string{{"x"}, {"x"}}, BM25Params{}).IDF("x"); idf <= 0 {
		t.Errorf("IDF of a term in every document = %v, want > 0", idf)
	}
	if s := NewBM25(nil, BM25Params{}).Scores(query); len(s) != 0 {
		t.Errorf("empty index: %v", s)
	}
}

func TestUniqueTerms(t *testing.T) {
	got := UniqueTerms([]string{"b", "a", "b", "c", "a"})
	want := []Term{{"b", 1}, {"a", 1}, {"c", 1}}
	if len(got) != len(want) {
		t.Fatalf("%v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("%v, want %v", got, want)
		}
	}
}

package textsearch

import (
	"math"
	"testing"
)

func TestTFIDFCosines(t *testing.T) {
	docs := [][]string{
		{"heart", "size", "normal", "lungs", "clear"},
		{"small", "left", "pleural", "effusion", "effusion"},
		{"heart", "enlarged", "pleural", "effusion"},
		{},
	}
	ix := NewTFIDF(docs)
	if ix.Len() != 4 {
		t.Fatalf("Len %d", ix.Len())
	}
	// By hand: n = 4; df(pleural) = df(effusion) = df(heart) = 2, the others 1.
	idf2 := math.Log(5.0/3) + 1
	idf1 := math.Log(5.0/2) + 1
	if got := SmoothIDF(4, 2); math.Abs(got-idf2) > 1e-15 {
		t.Errorf("SmoothIDF(4, 2) = %v, want %v", got, idf2)
	}
	// Query "pleural effusion": unit vector (1,1)/√2 over (pleural, effusion).
	// Doc 1: counts small 1, left 1, pleural 1, effusion 2.
	n1 := math.Sqrt(2*idf1*idf1 + idf2*idf2 + 4*idf2*idf2)
	want1 := (idf2/n1 + 2*idf2/n1) / math.Sqrt2
	// Doc 2: heart 1, enlarged 1, pleural 1, effusion 1.
	n2 := math.Sqrt(3*idf2*idf2 + idf1*idf1)
	want2 := (idf2/n2 + idf2/n2) / math.Sqrt2
	got := ix.Cosines([]string{"pleural", "effusion", "unknown"})
	for i, want := range []float64{0, want1, want2, 0} {
		if math.Abs(float64(got[i])-want) > 1e-6 {
			t.Errorf("doc %d: cosine %v, want %v", i, got[i], want)
		}
	}
	if self := ix.Cosines(docs[1]); math.Abs(float64(self[1])-1) > 1e-6 {
		t.Errorf("a document's cosine with itself = %v, want 1", self[1])
	}
	for _, s := range ix.Cosines([]string{"unknown"}) {
		if s != 0 {
			t.Errorf("a query without a known term scored %v", s)
		}
	}
}

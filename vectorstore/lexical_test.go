package vectorstore

import (
	"context"
	"math"
	"slices"
	"strings"
	"testing"
)

func cosine(a, b []float32) float64 {
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return dot / math.Sqrt(na*nb)
}

func embedOne(t *testing.T, e Embedder, text string) []float32 {
	t.Helper()
	v, err := e.Embed(context.Background(), []string{text})
	if err != nil {
		t.Fatal(err)
	}
	return v[0]
}

func TestLexicalSimilarity(t *testing.T) {
	tests := []struct{ query, similar, unrelated string }{
		{"metformin for type 2 diabetes", "Type 2 diabetes treated with metformin", "Fracture of the left femur after a fall"},
		{"diabetic patients", "patients with diabetes mellitus", "acute appendicitis in children"},
		{"pleural effusion", "small left pleural effusions", "no acute intracranial hemorrhage"},
		{"ICU admissions with sepsis", "sepsis at admission to the intensive care unit (ICU)", "outpatient dermatology visits"},
		{"hypertension", "Hypertensive patients on ACE inhibitors", "lung cancer screening"},
		{"COVID-19 vaccine trial", "a randomized trial of a covid 19 vaccine", "knee osteoarthritis physiotherapy"},
		{"lab results: creatinine", "serum creatinine laboratory values", "chest radiograph impression"},
	}
	for _, dim := range []int{128, 384} {
		e := NewLexicalEmbedder(dim)
		for _, tt := range tests {
			q := embedOne(t, e, tt.query)
			sim := cosine(q, embedOne(t, e, tt.similar))
			unrel := cosine(q, embedOne(t, e, tt.unrelated))
			if sim <= unrel {
				t.Errorf("dim %d, %q: similar %.3f <= unrelated %.3f", dim, tt.query, sim, unrel)
			}
		}
	}
}

func TestLexicalDeterministicAndNormalised(t *testing.T) {
	texts := []string{"Metformin 500 mg twice daily", "", "   ", "the of and", "ÉTUDE clinique: diabète", "a"}
	e1, e2 := NewLexicalEmbedder(384), NewLexicalEmbedder(384)
	v1, err := e1.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	v2, _ := e2.Embed(context.Background(), texts)
	for i := range texts {
		if !slices.Equal(v1[i], v2[i]) {
			t.Errorf("%q: two embedders disagree", texts[i])
		}
		if len(v1[i]) != 384 {
			t.Errorf("%q: length %d", texts[i], len(v1[i]))
		}
		var n float64
		for _, x := range v1[i] {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-5 {
			t.Errorf("%q: squared norm %v, want 1", texts[i], n)
		}
	}
	// Case and punctuation do not matter.
	if !slices.Equal(embedOne(t, e1, "Metformin, 500 MG!"), embedOne(t, e1, "metformin 500 mg")) {
		t.Error("case or punctuation changed the vector")
	}
	for _, tt := range []struct {
		dim  int
		name string
	}{{384, "lexical-hash-v2/384"}, {0, "lexical-hash-v2/384"}, {-5, "lexical-hash-v2/384"}, {64, "lexical-hash-v2/64"}, {1 << 20, "lexical-hash-v2/65536"}} {
		if got := NewLexicalEmbedder(tt.dim).EmbedderName(); got != tt.name {
			t.Errorf("NewLexicalEmbedder(%d).EmbedderName() = %q, want %q", tt.dim, got, tt.name)
		}
	}
	if !IsLexical(e1.EmbedderName()) || IsLexical("nomic-embed-text") {
		t.Error("IsLexical")
	}
}

func TestLexicalFit(t *testing.T) {
	docs := []string{
		"patient with diabetes", "patient with asthma", "patient with sepsis",
		"patient with fracture", "patient admitted", "patient discharged",
	}
	base := NewLexicalEmbedder(256)
	f1, f2 := base.Fit(docs), base.Fit(slices.Clone(docs))
	if base.EmbedderName() != "lexical-hash-v2/256" {
		t.Errorf("Fit changed the receiver's name: %q", base.EmbedderName())
	}
	if f1.EmbedderName() != f2.EmbedderName() || !strings.HasPrefix(f1.EmbedderName(), "lexical-hash-idf-v2/256/") || !IsLexical(f1.EmbedderName()) {
		t.Errorf("fitted names %q, %q", f1.EmbedderName(), f2.EmbedderName())
	}
	if other := base.Fit(docs[:3]); other.EmbedderName() == f1.EmbedderName() {
		t.Error("fitting on another corpus gave the same name")
	}
	if !slices.Equal(embedOne(t, f1, "diabetes"), embedOne(t, f2, "diabetes")) {
		t.Error("fitted embedders disagree")
	}
	// IDF: a query sharing only the ubiquitous word "patient" scores lower
	// once fitted, relative to one sharing the rare word.
	q := "patient with diabetes"
	rare, common := "diabetes", "patient"
	gap := func(e *LexicalEmbedder) float64 {
		v := embedOne(t, e, q)
		return cosine(v, embedOne(t, e, rare)) - cosine(v, embedOne(t, e, common))
	}
	if gap(f1) <= gap(base) {
		t.Errorf("IDF did not favour the rare word: gap fitted %.3f, unfitted %.3f", gap(f1), gap(base))
	}
}

func TestLexicalEmbedCancel(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewLexicalEmbedder(8).Embed(ctx, []string{"x"}); err == nil {
		t.Error("Embed with a cancelled context: no error")
	}
}

func FuzzLexicalEmbed(f *testing.F) {
	for _, s := range []string{"", "Hello, World!", "COVID-19", "bad\xffutf8", "ǅungla İstanbul ΣΑΣ", "a1-b2_c3", "\u0130\u212a"} {
		f.Add(s)
	}
	e := NewLexicalEmbedder(32)
	f.Fuzz(func(t *testing.T, s string) {
		// The embedding of any text is a unit vector.
		v := embedOne(t, e, s)
		var n float64
		for _, x := range v {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-4 {
			t.Fatalf("squared norm %v for %q", n, s)
		}
	})
}

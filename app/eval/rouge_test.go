package eval

import (
	"math"
	"slices"
	"testing"
)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-12 }

// f1 is the harmonic mean used to write expected values by hand.
func f1(p, r float64) float64 {
	if p+r == 0 {
		return 0
	}
	return 2 * p * r / (p + r)
}

func TestRougeTokens(t *testing.T) {
	for _, c := range []struct {
		in   string
		stem bool
		want []string
	}{
		{"The heart-size: NORMAL.", false, []string{"the", "heart", "size", "normal"}},
		{"1.5cm nodule; x-ray (PA/lat)", false, []string{"1", "5cm", "nodule", "x", "ray", "pa", "lat"}},
		{"  \t\n ", false, nil},
		{"!!! ... ---", false, nil},
		{"", false, nil},
		{"Pleural effusión", false, []string{"pleural", "effusi", "n"}},
		{"XXXX-year-old", false, []string{"xxxx", "year", "old"}},
		{"İstanbul", false, []string{"i", "stanbul"}},
		// The Kelvin sign lowercases to an ASCII k, as in Python.
		{"\u212Aidney", false, []string{"kidney"}},
		// Stemming leaves tokens of 3 letters or fewer alone.
		{"The effusions were resolving; was", true, []string{"the", "effus", "were", "resolv", "was"}},
	} {
		if got := RougeTokens(c.in, c.stem); !slices.Equal(got, c.want) {
			t.Errorf("RougeTokens(%q, %v) = %q, want %q", c.in, c.stem, got, c.want)
		}
	}
}

func TestRougeHandComputed(t *testing.T) {
	type want struct{ p1, r1, p2, r2, pl, rl float64 }
	for _, c := range []struct {
		name, target, prediction string
		stem                     bool
		want                     want
	}{
		{
			// rouge-score's docstring example. Unigrams: the×2, quick,
			// brown, dog, jumps match (6 of 8 predicted, 6 of 9 target);
			// bigrams "the quick", "quick brown" (2 of 7, 2 of 8); LCS
			// "the quick brown jumps the" (5).
			name:       "docstring example",
			target:     "The quick brown fox jumps over the lazy dog",
			prediction: "The quick brown dog jumps on the log.",
			want:       want{6.0 / 8, 6.0 / 9, 2.0 / 7, 2.0 / 8, 5.0 / 8, 5.0 / 9},
		},
		{
			// Repeated tokens are clipped: "no" occurs 3 times in the
			// target and once in the prediction, "effusion" once and twice:
			// overlap 1 + 1. Bigrams: no-no×2, no-effusion vs no-effusion,
			// effusion-effusion: overlap 1. LCS "no effusion".
			name:       "repeated tokens",
			target:     "no no no effusion",
			prediction: "no effusion effusion",
			want:       want{2.0 / 3, 2.0 / 4, 1.0 / 2, 1.0 / 3, 2.0 / 3, 2.0 / 4},
		},
		{
			name:       "punctuation and case only",
			target:     "Heart size: normal. No effusion!",
			prediction: "heart size normal, no effusion",
			want:       want{1, 1, 1, 1, 1, 1},
		},
		{
			name:       "empty target",
			target:     "",
			prediction: "no acute disease",
			want:       want{},
		},
		{
			name:       "empty prediction",
			target:     "no acute disease",
			prediction: "   ",
			want:       want{},
		},
		{
			name:       "both empty",
			target:     "...",
			prediction: "",
			want:       want{},
		},
		{
			// One token: no bigram on either side, so ROUGE-2 is 0/max(0,1).
			name:       "single token",
			target:     "normal",
			prediction: "normal",
			want:       want{1, 1, 0, 0, 1, 1},
		},
		{
			// LCS is order-sensitive while ROUGE-1 is not.
			name:       "reordered",
			target:     "a b c d",
			prediction: "d c b a",
			want:       want{1, 1, 0, 0, 1.0 / 4, 1.0 / 4},
		},
		{
			name:       "no stemming",
			target:     "pleural effusions",
			prediction: "pleural effusion",
			want:       want{1.0 / 2, 1.0 / 2, 0, 0, 1.0 / 2, 1.0 / 2},
		},
		{
			name:       "stemming",
			target:     "pleural effusions",
			prediction: "pleural effusion",
			stem:       true,
			want:       want{1, 1, 1, 1, 1, 1},
		},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := ComputeRouge(c.target, c.prediction, RougeOptions{Stem: c.stem})
			check := func(name string, s RougeScore, p, r float64) {
				if !near(s.Precision, p) || !near(s.Recall, r) || !near(s.F1, f1(p, r)) {
					t.Errorf("%s = %+v, want P %.6f R %.6f F1 %.6f", name, s, p, r, f1(p, r))
				}
			}
			check("ROUGE-1", got.R1, c.want.p1, c.want.r1)
			check("ROUGE-2", got.R2, c.want.p2, c.want.r2)
			check("ROUGE-L", got.RL, c.want.pl, c.want.rl)
		})
	}
	// The docstring example's F1 values written out: 12/17, 4/15, 10/17.
	got := ComputeRouge("The quick brown fox jumps over the lazy dog", "The quick brown dog jumps on the log.", RougeOptions{})
	if !near(got.R1.F1, 12.0/17) || !near(got.R2.F1, 4.0/15) || !near(got.RL.F1, 10.0/17) {
		t.Errorf("F1 = %v %v %v", got.R1.F1, got.R2.F1, got.RL.F1)
	}
}

func TestLCSLength(t *testing.T) {
	s := func(x string) []string { return RougeTokens(x, false) }
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"a b c b d a b", "b d c a b a", 4},
		{"a", "b", 0},
		{"", "a b", 0},
		{"x x x", "x x", 2},
	} {
		if got := LCSLength(s(c.a), s(c.b)); got != c.want {
			t.Errorf("LCS(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestRougeMean(t *testing.T) {
	var m RougeMean
	if m.Mean() != (Rouge{}) {
		t.Error("empty mean not zero")
	}
	m.Add(ComputeRouge("a b", "a b", RougeOptions{}))
	m.Add(ComputeRouge("a b", "c d", RougeOptions{}))
	got := m.Mean()
	if m.N != 2 || !near(got.R1.F1, 0.5) || !near(got.R2.F1, 0.5) || !near(got.RL.Recall, 0.5) {
		t.Errorf("mean = %+v (n %d)", got, m.N)
	}
}

func BenchmarkComputeRouge(b *testing.B) {
	target := "No acute cardiopulmonary abnormality. Stable mild cardiomegaly without pulmonary edema."
	pred := "Mild cardiomegaly, stable. No acute cardiopulmonary disease or edema."
	for b.Loop() {
		ComputeRouge(target, pred, RougeOptions{Stem: true})
	}
}

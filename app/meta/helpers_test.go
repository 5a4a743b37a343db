package meta

import (
	"math"
	"testing"
)

// near asserts got ≈ want within rel relative error (or 1e-12 absolute
// near zero), naming the quantity in the failure message.
func near(t *testing.T, name string, got, want, rel float64) {
	t.Helper()
	if math.IsNaN(want) {
		if !math.IsNaN(got) {
			t.Errorf("%s = %.15g, want NaN", name, got)
		}
		return
	}
	d := math.Abs(got - want)
	if d <= 1e-12 || d <= rel*math.Abs(want) {
		return
	}
	t.Errorf("%s = %.15g, want %.15g (relative error %.2g)", name, got, want, d/math.Abs(want))
}

func nearAll(t *testing.T, name string, got, want []float64, rel float64) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%s: got %d values, want %d", name, len(got), len(want))
	}
	for i := range want {
		near(t, name+"["+itoa(i+1)+"]", got[i], want[i], rel)
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

func mustAnalyze(t *testing.T, studies []Study, o Options) Result {
	t.Helper()
	res, err := Analyze(studies, o)
	if err != nil {
		t.Fatalf("Analyze(%+v): %v", o, err)
	}
	return res
}

func yis(res Result) []float64 {
	out := make([]float64, len(res.Studies))
	for i, s := range res.Studies {
		out[i] = s.YI
	}
	return out
}

func vis(res Result) []float64 {
	out := make([]float64, len(res.Studies))
	for i, s := range res.Studies {
		out[i] = s.VI
	}
	return out
}

func wts(res Result) []float64 {
	out := make([]float64, len(res.Studies))
	for i, s := range res.Studies {
		out[i] = s.Weight
	}
	return out
}

// binaryStudies builds 2x2 studies from parallel slices.
func binaryStudies(ai, n1i, ci, n2i []float64) []Study {
	s := make([]Study, len(ai))
	for i := range ai {
		s[i] = Study{Label: "S" + itoa(i+1), Row: i + 1, Kind: Binary, AI: ai[i], N1I: n1i[i], CI: ci[i], N2I: n2i[i]}
	}
	return s
}

package evidence

import (
	"math"
	"testing"
)

// TestCohenKappaByHand: 50 records, both include 20, only A 5, only B 10,
// both exclude 15. Raw 35/50 = 0.7; chance 0.5·0.6 + 0.5·0.4 = 0.5; kappa
// (0.7 − 0.5)/(1 − 0.5) = 0.4.
func TestCohenKappaByHand(t *testing.T) {
	var a, b []bool
	add := func(n int, x, y bool) {
		for range n {
			a, b = append(a, x), append(b, y)
		}
	}
	add(20, true, true)
	add(5, true, false)
	add(10, false, true)
	add(15, false, false)
	ag, err := CohenKappa(a, b)
	if err != nil {
		t.Fatal(err)
	}
	if ag.Records != 50 || math.Abs(ag.Raw-0.7) > 1e-12 || math.Abs(ag.Kappa-0.4) > 1e-12 {
		t.Errorf("got %+v, want 50 records, raw 0.7, kappa 0.4", ag)
	}
	if _, err := CohenKappa(a, b[:3]); err == nil {
		t.Error("different lengths accepted")
	}
}

package meta

import (
	"context"
	"math/rand/v2"
	"testing"
)

// Small, awkward data sets (k = 1..6, zero cells, double zeros, identical
// studies, constant moderators, one-study subgroups) through every method
// and every analysis: a result or an error, never a panic.
func TestRunNeverPanics(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 2026))
	plan := Plan{Subgroup: "g", Mods: []string{"x"}, Egger: true, Begg: true, TrimFill: "L0", LeaveOneOut: true, Influence: true, Cumulative: true, CumulativeBy: "x"}
	for trial := 0; trial < 150; trial++ {
		k := 1 + rng.IntN(6)
		st := make([]Study, k)
		for i := range st {
			n1, n2 := float64(5+rng.IntN(40)), float64(5+rng.IntN(40))
			a, c := float64(rng.IntN(4)), float64(rng.IntN(4))
			if trial%5 == 0 {
				a, c = 0, 0
			}
			if trial%7 == 0 {
				a, c, n1, n2 = 3, 5, 30, 30
			}
			st[i] = Study{Label: "S" + itoa(i+1), Kind: Binary, AI: a, N1I: n1, CI: c, N2I: n2,
				Covariates: map[string]string{"g": []string{"a", "b"}[rng.IntN(2)], "x": itoa(1 + rng.IntN(3)*(trial%3))}}
		}
		for _, m := range allMethods() {
			for _, test := range []Test{TestZ, TestKnHa} {
				for _, measure := range []Measure{OR, RR, RD} {
					o := Options{Measure: measure, Method: m, Test: test}
					if o.Validate() != nil {
						continue
					}
					rep, err := Run(context.Background(), st, o, plan)
					if err == nil && rep.Result.K == 0 {
						t.Errorf("trial %d %s %s %s: a result with k = 0", trial, m, test, measure)
					}
				}
			}
		}
	}
}

package evidence

import (
	"context"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// TestHyperCDFByHand: 10 records, 3 relevant, a sample of 2 holds none
// with probability C(7,2)/C(10,2) = 21/45.
func TestHyperCDFByHand(t *testing.T) {
	if p := hyperCDF(0, 10, 3, 2); math.Abs(p-21.0/45) > 1e-12 {
		t.Errorf("P(X<=0) = %v, want 21/45", p)
	}
	if p := hyperCDF(2, 10, 3, 2); math.Abs(p-1) > 1e-12 {
		t.Errorf("P(X<=2) = %v, want 1", p)
	}
}

// TestRecallBoundOnCohenScreening screens OralHypoglycemics (Cohen 2006) in the
// learner's order, stops after 30% of the records, and draws 40 random
// samples of 60 of the rest: the 95% lower bound on recall must hold (true
// recall of the records seen at least the bound) in at least 36 of the 40
// (expected 38; 5% may fail), and must say something: a mean bound above
// 0.45 (the true recall of the records seen is about 0.64 here).
func TestRecallBoundOnCohenScreening(t *testing.T) {
	dir := realdata.Path(t, "screening-cohen-2006")
	rev, err := ReadLabelledCSV(filepath.Join(dir, "OralHypoglycemics.csv"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := BuildFeatures(context.Background(), rev.Docs, DefaultFeatureOptions)
	if err != nil {
		t.Fatal(err)
	}
	sim, err := Simulate(context.Background(), rev, f, SimOptions{Learner: DefaultLearner}, 0)
	if err != nil {
		t.Fatal(err)
	}
	cut := len(sim.Order) * 3 / 10
	before := 0
	for _, i := range sim.Order[:cut] {
		if rev.Included[i] {
			before++
		}
	}
	rest := sim.Order[cut:]
	total := rev.Relevant()
	if before == total {
		t.Fatalf("all %d included records found in the first 30%%: the test would be trivial", total)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	held, sumBound := 0, 0.0
	const samples, n = 40, 60
	for range samples {
		perm := rng.Perm(len(rest))
		found := 0
		for _, p := range perm[:n] {
			if rev.Included[rest[p]] {
				found++
			}
		}
		rt := RecallTest{FoundBefore: before, Remaining: len(rest), Sample: n, FoundInSample: found}
		lb, err := rt.RecallLowerBound(0.95)
		if err != nil {
			t.Fatal(err)
		}
		sumBound += lb / samples
		if truth := float64(before+found) / float64(total); truth >= lb {
			held++
		}
	}
	t.Logf("OralHypoglycemics: %d of %d found in the first 30%%; 95%% bound held in %d of %d samples; mean bound %.3f", before, total, held, samples, sumBound)
	if held < 36 {
		t.Errorf("the 95%% recall bound held in only %d of %d samples", held, samples)
	}
	if sumBound <= 0.45 {
		t.Errorf("mean bound %.3f: the test says nothing", sumBound)
	}
}

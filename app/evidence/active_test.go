package evidence

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestActiveRanksLikeDecisions trains on hand-made decisions: records
// about aspirin and stroke included, knee surgery excluded; the undecided
// aspirin record must rank first, with "aspirin" among its top terms.
func TestActiveRanksLikeDecisions(t *testing.T) {
	docs := []ActiveDoc{
		{Title: "Aspirin for secondary prevention of stroke", Abstract: "Randomised trial of aspirin after ischaemic stroke."},
		{Title: "Knee arthroscopy outcomes", Abstract: "Surgery of the knee in older adults."},
		{Title: "Low-dose aspirin and recurrent stroke", Abstract: "Aspirin reduced recurrent stroke in this trial."},
		{Title: "Total knee replacement rehabilitation", Abstract: "Physiotherapy after knee surgery."},
		{Title: "Knee pain and surgery waiting lists", Abstract: "Surgery delays for knee pain."},
		{Title: "Aspirin dose after stroke: a randomised trial", Abstract: "Two aspirin doses compared after stroke."},
	}
	for _, lc := range []LearnerConfig{DefaultLearner, {Kind: LearnerLogistic, C: 1, Ratio: 1}, {Kind: LearnerNaiveBayes, Alpha: 1, Ratio: 1}} {
		f, err := BuildFeatures(context.Background(), docs, FeatureOptions{Bigrams: true, MinDF: 1})
		if err != nil {
			t.Fatal(err)
		}
		a := NewActive(f, lc)
		a.Label(0, true)
		a.Label(1, false)
		a.Label(2, true)
		a.Label(3, false)
		ranked, err := a.Retrain(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if len(ranked) != 2 || ranked[0].Index != 5 || ranked[1].Index != 4 {
			t.Fatalf("%s: ranking %+v, want record 5 (aspirin) then 4 (knee)", lc, ranked)
		}
		if !(ranked[0].Confidence > ranked[1].Confidence) {
			t.Errorf("%s: confidence %v not above %v", lc, ranked[0].Confidence, ranked[1].Confidence)
		}
		var terms []string
		for _, tw := range a.TopTerms(5, 3) {
			terms = append(terms, tw.Term)
		}
		if !slices.Contains(terms, "aspirin") && !slices.Contains(terms, "stroke") {
			t.Errorf("%s: top terms of the aspirin record %v lack aspirin and stroke", lc, terms)
		}
	}
}

// TestScreeningMetricsByHand checks WSS and RRF on a 20-record order with 4
// included records at positions 1, 2, 5 and 10.
func TestScreeningMetricsByHand(t *testing.T) {
	included := make([]bool, 20)
	order := make([]int, 20)
	for i := range order {
		order[i] = 19 - i
	}
	for _, pos := range []int{1, 2, 5, 10} {
		included[order[pos-1]] = true
	}
	m := ScreeningMetrics(order, included)
	// 95% of 4 is 3.8 → all 4 needed: found at 10 → (20-10)/20 - 0.05.
	if m.N95 != 10 || fmt.Sprintf("%.4f", m.WSS95) != "0.4500" || fmt.Sprintf("%.4f", m.WSS100) != "0.5000" {
		t.Errorf("got %+v, want N95 10, WSS@95 0.45, WSS@100 0.5", m)
	}
	// 10% of 20 is 2 records: 2 of 4 found.
	if m.RRF10 != 0.5 {
		t.Errorf("RRF@10 %v, want 0.5", m.RRF10)
	}
}

// syntheticReview makes n records over a Zipf vocabulary, about 1 in 20
// relevant, whose text leans to a topic vocabulary.
func syntheticReview(n int) LabelledReview {
	rng := rand.New(rand.NewPCG(7, 7))
	z := rand.NewZipf(rng, 1.1, 1, 20000)
	rev := LabelledReview{Name: "synthetic"}
	for i := range n {
		rel := rng.IntN(20) == 0
		var b strings.Builder
		for range 180 {
			w := z.Uint64()
			if rel && rng.IntN(8) == 0 {
				w = 20000 + uint64(rng.IntN(50))
			}
			fmt.Fprintf(&b, "w%d ", w)
		}
		rev.Docs = append(rev.Docs, ActiveDoc{Title: fmt.Sprintf("record %d", i), Abstract: b.String()})
		rev.Included = append(rev.Included, rel)
	}
	return rev
}

// BenchmarkActiveRerank10k measures one decision's re-ranking (retrain +
// score + sort) on 10,000 records with 2,000 decided (past the naive Bayes warm-up, so the SVM trains), and reports the median
// in ms (issue 17: <= 300 ms).
func BenchmarkActiveRerank10k(b *testing.B) {
	rev := syntheticReview(10_000)
	f, err := BuildFeatures(context.Background(), rev.Docs, DefaultFeatureOptions)
	if err != nil {
		b.Fatal(err)
	}
	a := NewActive(f, DefaultLearner)
	for i := range 2000 {
		a.Label(i, rev.Included[i])
	}
	if _, err := a.Retrain(context.Background()); err != nil {
		b.Fatal(err)
	}
	var times []time.Duration
	next := 2000
	b.ResetTimer()
	for range b.N {
		start := time.Now()
		a.Label(next%len(rev.Docs), rev.Included[next%len(rev.Docs)])
		if _, err := a.Retrain(context.Background()); err != nil {
			b.Fatal(err)
		}
		times = append(times, time.Since(start))
		next++
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	med := times[len(times)/2]
	b.ReportMetric(float64(med.Microseconds())/1000, "ms-median")
	b.Logf("10,000 records, %d features: median re-rank after a decision %v over %d decisions", f.Dim(), med, len(times))
}

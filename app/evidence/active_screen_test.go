package evidence

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"testing"
	"time"
)

var screenLearnerDocs = []ActiveDoc{
	{Title: "Knee arthroscopy outcomes", Abstract: "Surgery of the knee in older adults."},
	{Title: "Total knee replacement rehabilitation", Abstract: "Physiotherapy after knee surgery."},
	{Title: "Aspirin for secondary prevention of stroke", Abstract: "Randomised trial of aspirin after ischaemic stroke."},
	{Title: "Knee pain and surgery waiting lists", Abstract: "Surgery delays for knee pain."},
	{Title: "Low-dose aspirin and recurrent stroke", Abstract: "Aspirin reduced recurrent stroke in this trial."},
	{Title: "Aspirin dose after stroke: a randomised trial", Abstract: "Two aspirin doses compared after stroke."},
	{Title: "Hip fracture surgery in older adults", Abstract: "Surgery timing and knee and hip outcomes."},
}

var screenLearnerIDs = []string{"k1", "k2", "a1", "k3", "a2", "a3", "h1"}

// TestScreenLearnerQuestionThenDecisions: before any decision the records
// most similar to the question come first; after the reviewer includes an
// aspirin record and excludes a knee one, the aspirin records lead, their
// confidence above the knee ones', with aspirin or stroke among the top
// terms; decided records leave the order and come back when undecided.
func TestScreenLearnerQuestionThenDecisions(t *testing.T) {
	ctx := context.Background()
	p := NewProject("q", "demo", PICO{Population: "adults after ischaemic stroke", Intervention: "aspirin"})
	l, err := NewScreenLearner(ctx, screenLearnerIDs, screenLearnerDocs, p.QuestionText())
	if err != nil {
		t.Fatal(err)
	}
	r, err := l.Rank(ctx, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Order) != 7 || r.Decisions != 0 {
		t.Fatalf("order %v (%d decisions), want all 7 records and 0 decisions", r.Order, r.Decisions)
	}
	if got := r.Order[:3]; !sameSet(got, []string{"a1", "a2", "a3"}) {
		t.Errorf("first three by the question %v, want the aspirin records (model %q)", got, r.Model)
	}
	// The chat model's order leads until the first decision.
	prior := []string{"h1", "k3"}
	if r, err := l.Rank(ctx, nil, prior, nil); err != nil || !slices.Equal(r.Order[:2], prior) || len(r.Order) != 7 {
		t.Fatalf("with the model's order %v: %v, %v", prior, r, err)
	}
	dec := map[string]Decision{"a1": {Include: true}, "k1": {Include: false, Reason: "wrong population"}}
	r, err = l.Rank(ctx, dec, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Order) != 5 || slices.Contains(r.Order, "a1") || slices.Contains(r.Order, "k1") || r.Decisions != 2 {
		t.Fatalf("order after 2 decisions %v (%d decisions), want the 5 undecided", r.Order, r.Decisions)
	}
	if got := r.Order[:2]; !sameSet(got, []string{"a2", "a3"}) {
		t.Errorf("first two after the decisions %v, want a2 and a3 (model %q)", got, r.Model)
	}
	ca, _ := r.Confidence("a2")
	ck, ok := r.Confidence("k2")
	if !ok || !(ca > ck) {
		t.Errorf("confidence a2 %v, k2 %v (%v): want a2 above", ca, ck, ok)
	}
	if _, ok := r.Confidence("a1"); ok {
		t.Error("a decided record has a confidence")
	}
	var terms []string
	for _, tw := range r.TopTerms("a3", 5) {
		terms = append(terms, tw.Term)
	}
	if !slices.Contains(terms, "aspirin") && !slices.Contains(terms, "stroke") {
		t.Errorf("top terms of a3 %v lack aspirin and stroke", terms)
	}
	delete(dec, "k1")
	r, err = l.Rank(ctx, dec, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Order) != 6 || !slices.Contains(r.Order, "k1") {
		t.Errorf("after undeciding k1 the order %v lacks it", r.Order)
	}
	// The recall test's sample comes first (its decided records left out).
	if r, err := l.Rank(ctx, dec, nil, []string{"k3", "a1", "h1"}); err != nil || !slices.Equal(r.Order[:2], []string{"k3", "h1"}) {
		t.Errorf("with the sample first: %v, %v", r.Order, err)
	}
	if !l.Covers([]string{"h1", "k1", "k2", "k3", "a1", "a2", "a3"}) || l.Covers(screenLearnerIDs[:6]) {
		t.Error("Covers does not compare the candidate sets")
	}
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// TestMergeOrderKeepsRowsAboveTheCursor: the rows up to the selected one
// stay; the new ranking fills the rows below; decided rows (not ranked) go
// last in their order.
func TestMergeOrderKeepsRowsAboveTheCursor(t *testing.T) {
	cur := []string{"a", "b", "c", "d", "e", "f"}
	// b selected (keep 2); e and a decided, so not ranked.
	got := MergeOrder(cur, 2, []string{"f", "d", "c", "b", "x"})
	want := []string{"a", "b", "f", "d", "c", "e"}
	if !slices.Equal(got, want) {
		t.Errorf("MergeOrder = %v, want %v", got, want)
	}
	if got := MergeOrder(cur, 0, []string{"f"}); !slices.Equal(got, []string{"f", "a", "b", "c", "d", "e"}) {
		t.Errorf("MergeOrder keep 0 = %v", got)
	}
	if got := MergeOrder(cur, 99, []string{"f"}); !slices.Equal(got, cur) {
		t.Errorf("MergeOrder keep all = %v", got)
	}
}

// BenchmarkScreenLearnerRank10k measures what the Screen step waits for
// after a decision on a 10,000-record review with 2,000 decided: syncing
// the decisions, training, ranking and the snapshot (issue 17: ≤ 300 ms
// median).
func BenchmarkScreenLearnerRank10k(b *testing.B) {
	rev := syntheticReview(10_000)
	ids := make([]string, len(rev.Docs))
	for i := range ids {
		ids[i] = fmt.Sprintf("r%d", i)
	}
	ctx := context.Background()
	l, err := NewScreenLearner(ctx, ids, rev.Docs, "w20001 w20002 w20003")
	if err != nil {
		b.Fatal(err)
	}
	dec := map[string]Decision{}
	for i := range 2000 {
		dec[ids[i]] = Decision{Include: rev.Included[i], Reason: "x"}
	}
	if _, err := l.Rank(ctx, dec, nil, nil); err != nil {
		b.Fatal(err)
	}
	var times []time.Duration
	next := 2000
	b.ResetTimer()
	for range b.N {
		i := next % len(ids)
		dec[ids[i]] = Decision{Include: rev.Included[i], Reason: "x"}
		r, err := l.Rank(ctx, dec, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		times = append(times, r.Took)
		next++
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	med := times[len(times)/2]
	b.ReportMetric(float64(med.Microseconds())/1000, "ms-median")
}

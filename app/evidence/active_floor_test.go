package evidence

import (
	"context"
	"testing"
)

// TestActiveFloorsOnCohen simulates screening the seven Cohen 2006 reviews
// (issue 17 acceptance: 5 seeds, retraining after every decision, the
// default learner and features, no model) and checks the floors: mean
// WSS@95 >= 0.45 (ASReview's default model: 0.423 on the same files), mean
// RRF@10 >= 0.45, and no review worse than random order (WSS@95 > 0,
// RRF@10 >= 0.10). It fails in CI when the data is missing.
func TestActiveFloorsOnCohen(t *testing.T) {
	revs := cohenReviews(t)
	ev, err := EvalActive(context.Background(), revs, SimOptions{Learner: DefaultLearner, Features: DefaultFeatureOptions, Batch: 1}, 5)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range ev.Reviews {
		t.Logf("%-20s WSS@95 %.3f WSS@100 %.3f RRF@10 %.3f screened to 95%% %.1f of %d", r.Name, r.WSS95, r.WSS100, r.RRF10, r.N95Mean, r.Records)
		if r.WSS95 <= 0 || r.RRF10 < 0.10 {
			t.Errorf("%s: WSS@95 %.3f, RRF@10 %.3f: no better than random order", r.Name, r.WSS95, r.RRF10)
		}
	}
	t.Logf("mean WSS@95 %.4f WSS@100 %.4f RRF@10 %.4f (%s, %+v)", ev.WSS95, ev.WSS100, ev.RRF10, DefaultLearner, DefaultFeatureOptions)
	if ev.WSS95 < 0.45 {
		t.Errorf("mean WSS@95 %.3f, want >= 0.45", ev.WSS95)
	}
	if ev.RRF10 < 0.45 {
		t.Errorf("mean RRF@10 %.3f, want >= 0.45", ev.RRF10)
	}
}

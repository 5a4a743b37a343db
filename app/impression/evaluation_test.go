package impression

import (
	"context"
	"testing"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// Evaluation tests on the real Open-i reports in ../shared/data (skipped
// when absent). The floors are the acceptance criteria of the issue.

func TestEvaluationLabelerOpenI(t *testing.T) {
	path := realdata.Path(t, "openi-chest-xray-reports", "indiana_reports_dev.csv")
	reports, err := ReadReferenceReports(path)
	if err != nil {
		t.Fatal(err)
	}
	ev, err := EvaluateLabeler(context.Background(), reports, true)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d reports evaluated, %d skipped (no MeSH indexing or no text)", ev.Reports, ev.Skipped)
	for o, s := range ev.Scores {
		t.Logf("%-27s P %.3f R %.3f F1 %.3f (support %d)", Observation(o), s.Precision, s.Recall, s.F1, s.Support)
	}
	for o, floor := range map[Observation]float64{Cardiomegaly: 0.80, PleuralEffusion: 0.80, NoFinding: 0.75} {
		if f := ev.Scores[o].F1; f < floor {
			t.Errorf("%s F1 %.3f below the floor %.2f", o, f, floor)
		}
	}
}

func TestEvaluationRetrievalOpenI(t *testing.T) {
	path := realdata.Path(t, "openi-chest-xray-reports", "findings_impression_pairs_dev.csv")
	ctx := context.Background()
	reports, err := ReadReports(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewPipeline(NewCorpus(reports), nil, Options{NoLLM: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := EvaluateImpressions(ctx, p, reports, true, nil)
	if err != nil {
		t.Fatal(err)
	}
	r1, r2, rl := 100*sum.Mean.R1.F1, 100*sum.Mean.R2.F1, 100*sum.Mean.RL.F1
	t.Logf("leave-one-out retrieval over %d reports (%d examples): R-1 %.2f R-2 %.2f R-L %.2f", sum.N, p.Corpus().Examples(), r1, r2, rl)
	if sum.N != 2229 || sum.Generated != 0 {
		t.Errorf("n %d generated %d", sum.N, sum.Generated)
	}
	// The TF-IDF nearest-neighbour baseline of ../shared/data/README.md.
	if r1 < 61.36 || r2 < 53.52 || rl < 60.82 {
		t.Errorf("retrieval below the TF-IDF nearest-neighbour baseline (61.36 / 53.52 / 60.82)")
	}
	// The top-5 consensus figure (64.12 / 56.59 / 63.62) is the goal.
	if r1 < 64.12 || r2 < 56.59 || rl < 63.62 {
		t.Errorf("retrieval below the top-5 consensus figure (64.12 / 56.59 / 63.62)")
	}
}

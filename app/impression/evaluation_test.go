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

// TestEvaluationConsistencyOpenI is issue 20's acceptance test: on the dev
// file, leave-one-out without a model, the retrieval that prefers
// impressions consistent with the findings must at least halve the share of
// chosen impressions contradicting their findings' labels, and lose at most
// 0.3 points of ROUGE-1, -2 and -L against the choice that ignores
// consistency. (The choice's settings were tuned on this file by
// leave-one-out; see ChooseImpression.)
func TestEvaluationConsistencyOpenI(t *testing.T) {
	path := realdata.Path(t, "openi-chest-xray-reports", "findings_impression_pairs_dev.csv")
	ctx := context.Background()
	reports, err := ReadReports(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	corpus := NewCorpus(reports)
	run := func(opts Options) EvalSummary {
		t.Helper()
		p, err := NewPipeline(corpus, nil, opts, nil)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := EvaluateImpressions(ctx, p, reports, true, nil)
		if err != nil {
			t.Fatal(err)
		}
		if sum.N != 2229 {
			t.Fatalf("%d reports evaluated, want 2229", sum.N)
		}
		return sum
	}
	before := run(Options{NoLLM: true, IgnoreConsistency: true})
	after := run(Options{NoLLM: true})
	kinds := func(sum EvalSummary) map[string]int {
		k := map[string]int{}
		for _, it := range sum.Items {
			for _, c := range it.Contradictions {
				k[c.Kind.String()]++
			}
		}
		return k
	}
	pts := func(r float64) float64 { return 100 * r }
	t.Logf("reference impressions contradicting their findings: %.2f%%", pts(after.ReferenceContradictionRate))
	for _, x := range []struct {
		name string
		sum  EvalSummary
	}{{"before (consensus among the examples)", before}, {"after (consistent preferred)", after}} {
		m := x.sum.Mean
		t.Logf("%s: contradiction rate %.2f%% %v; R-1 %.2f R-2 %.2f R-L %.2f", x.name, pts(x.sum.ContradictionRate), kinds(x.sum),
			pts(m.R1.F1), pts(m.R2.F1), pts(m.RL.F1))
	}
	if before.ContradictionRate < 0.10 {
		t.Errorf("before: contradiction rate %.4f; the labeler or the comparison changed (it was 0.2598)", before.ContradictionRate)
	}
	if after.ContradictionRate > before.ContradictionRate/2 {
		t.Errorf("contradiction rate %.4f → %.4f: not halved", before.ContradictionRate, after.ContradictionRate)
	}
	for _, r := range []struct {
		name          string
		before, after float64
	}{
		{"ROUGE-1", before.Mean.R1.F1, after.Mean.R1.F1},
		{"ROUGE-2", before.Mean.R2.F1, after.Mean.R2.F1},
		{"ROUGE-L", before.Mean.RL.F1, after.Mean.RL.F1},
	} {
		if drop := pts(r.before) - pts(r.after); drop > 0.3 {
			t.Errorf("%s dropped %.2f points (%.2f → %.2f), more than 0.3", r.name, drop, pts(r.before), pts(r.after))
		}
	}
	// Each item's flag matches its hypothesis.
	for _, it := range after.Items[:50] {
		if got := len(Contradictions(LabelText(it.Findings), it.Hypothesis)) > 0; got != (len(it.Contradictions) > 0) {
			t.Errorf("%s: flagged %v, hypothesis %q contradicts %v", it.UID, it.Contradictions, it.Hypothesis, got)
		}
	}
}

package meta

import (
	"context"
	"strings"
	"testing"
)

func TestRunPlanOnBCG(t *testing.T) {
	bcg := loadBCG(t)
	plan := Plan{Subgroup: "alloc", Mods: []string{"ablat"}, Egger: true, Begg: true, TrimFill: "L0",
		LeaveOneOut: true, Influence: true, Cumulative: true, CumulativeBy: "year"}
	rep, err := Run(context.Background(), bcg, Options{Measure: RR}, plan)
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Problems) > 0 {
		t.Fatalf("problems: %q", rep.Problems)
	}
	if rep.Subgroups == nil || rep.Regression == nil || rep.Egger == nil || rep.Begg == nil || rep.TrimFill == nil ||
		len(rep.LeaveOneOut) != 13 || len(rep.Cumulative) != 13 || len(rep.Influence) != 13 {
		t.Fatalf("an analysis is missing: %+v", rep)
	}
	// Cumulative by year: the first row is the earliest study (Aronson, 1948).
	if rep.Cumulative[0].Study != "Aronson" {
		t.Errorf("cumulative by year starts with %q", rep.Cumulative[0].Study)
	}
	text := strings.Join(rep.Sentences, " ")
	for _, want := range []string{"Across 13 studies, the pooled risk ratio was 0.489 (95% CI 0.344 to 0.696", "I² = 92.2%", "By alloc:", "Meta-regression on ablat", "Egger's regression test", "Trim and fill (L0)"} {
		if !strings.Contains(text, want) {
			t.Errorf("summary lacks %q:\n%s", want, text)
		}
	}
}

// With k = 2 the small-study tests cannot run: the report says so and
// still gives the pooled model and the other analyses.
func TestRunPlanTwoStudies(t *testing.T) {
	st := binaryStudies([]float64{4, 10}, []float64{50, 60}, []float64{9, 12}, []float64{50, 61})
	rep, err := Run(context.Background(), st, Options{Measure: OR}, Plan{Egger: true, Begg: true, TrimFill: "L0", LeaveOneOut: true, Influence: true})
	if err != nil {
		t.Fatal(err)
	}
	// As metafor: regtest and trimfill stop (too many parameters for the
	// random-effects model), ranktest gives tau = -1, p = 1 here.
	if len(rep.Problems) != 2 || !strings.Contains(rep.Problems[0], "at least 3 studies") || !strings.Contains(rep.Problems[1], "Trim and fill") {
		t.Errorf("problems = %q", rep.Problems)
	}
	if rep.Begg == nil || rep.Begg.Tau != -1 || rep.Begg.Pval != 1 {
		t.Errorf("Begg with k = 2: %+v, metafor tau = -1, p = 1", rep.Begg)
	}
	if len(rep.LeaveOneOut) != 2 || len(rep.Influence) != 2 {
		t.Errorf("leave-one-out %d rows, influence %d", len(rep.LeaveOneOut), len(rep.Influence))
	}
}

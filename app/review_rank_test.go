package app

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/evidence"
)

// TestReviewRankLearnsFromDecisions runs the real review service on the
// demo literature: Rank reads the candidates' texts and ranks them all by
// the question first; after decisions it ranks only the undecided ones, a
// random sample for the recall test comes first, the stopping rule is
// saved and reaches the PRISMA counts, and a closed review ranks no more.
func TestReviewRankLearnsFromDecisions(t *testing.T) {
	ctx := context.Background()
	ws := literatureWorkspace(t)
	r := searchedReview(t, ws, "Rank", "ablation OR carcinoma OR hepatocellular", 40)
	ids := r.Project().Search.IDs
	if len(ids) < 10 {
		t.Fatalf("only %d candidates", len(ids))
	}
	rk, err := r.Rank(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(rk.Order) != len(ids) || rk.Decisions != 0 || !strings.Contains(rk.Model, "similarity to the question") {
		t.Fatalf("first ranking: %d of %d records, %d decisions, model %q", len(rk.Order), len(ids), rk.Decisions, rk.Model)
	}
	if c, ok := rk.Confidence(rk.Order[0]); !ok || c <= 0.5 {
		t.Errorf("the first record's confidence %v, %v", c, ok)
	}
	if len(rk.TopTerms(rk.Order[0], 5)) == 0 {
		t.Error("the first record has no top terms")
	}
	if err := r.Decide(rk.Order[0], true, ""); err != nil {
		t.Fatal(err)
	}
	if err := r.Decide(rk.Order[len(rk.Order)-1], false, "Wrong population"); err != nil {
		t.Fatal(err)
	}
	if err := r.SetStoppingRule(30); err != nil {
		t.Fatal(err)
	}
	if err := r.DrawRecallSample(3); err != nil {
		t.Fatal(err)
	}
	rk, err = r.Rank(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sample := r.Project().Stopping.Sample.IDs
	if len(rk.Order) != len(ids)-2 || rk.Decisions != 2 || !slices.Equal(rk.Order[:3], sample) {
		t.Errorf("after 2 decisions: %d records, %d decisions, first %v, sample %v", len(rk.Order), rk.Decisions, rk.Order[:3], sample)
	}
	if c := r.Project().PRISMA(); !strings.Contains(c.StoppingRule, "stop after 30 in a row") || !strings.Contains(c.StoppingRule, "Recall test") {
		t.Errorf("PRISMA stopping rule %q", c.StoppingRule)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	p := savedProject(t, ws, "Rank", "the stopping rule", func(p *evidence.Project) bool { return p.Stopping.Consecutive == 30 })
	if p.Stopping.Sample == nil || !slices.Equal(p.Stopping.Sample.IDs, sample) {
		t.Errorf("saved sample %+v", p.Stopping.Sample)
	}
	if _, err := r.Rank(ctx); err == nil {
		t.Error("a closed review ranked")
	}
}

// TestReviewRankReadsTheModelsVerdicts: once the model's screening holds
// verdicts for the current criteria, Rank builds the learner again with
// them as features, and a verdict drives the rank of an undecided record
// like its words do (its top terms name the criterion).
func TestReviewRankReadsTheModelsVerdicts(t *testing.T) {
	ctx := context.Background()
	ws := literatureWorkspace(t)
	r := searchedReview(t, ws, "Verdicts", "ablation OR carcinoma OR hepatocellular", 0)
	ids := r.Project().Search.IDs
	if len(ids) < 20 {
		t.Fatalf("only %d candidates", len(ids))
	}
	if _, err := r.Rank(ctx); err != nil {
		t.Fatal(err)
	}
	met := func(i int) bool { return i%3 == 0 }
	r.Update(func(p *evidence.Project) {
		p.Criteria = []evidence.Criterion{{Text: "Adults with hepatocellular carcinoma", Weight: 1}}
		p.ScreenedCriteria = []string{"Adults with hepatocellular carcinoma"}
		for i, id := range ids {
			v := evidence.No
			if met(i) {
				v = evidence.Yes
			}
			p.Screening = append(p.Screening, evidence.ScreenedStudy{ID: id, Title: p.Studies[id].Title, Verdicts: []evidence.Verdict{v}})
		}
	})
	for i, id := range ids[:12] {
		if err := r.Decide(id, met(i), map[bool]string{true: "", false: "Wrong population"}[met(i)]); err != nil {
			t.Fatal(err)
		}
	}
	rk, err := r.Rank(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var metIDs []string
	for i, id := range ids[12:] {
		if met(i + 12) {
			metIDs = append(metIDs, id)
		}
	}
	found := false
	for _, id := range metIDs {
		for _, tw := range rk.TopTerms(id, 10) {
			if tw.Term == "[criterion 1: met]" {
				found = true
			}
		}
	}
	if !found {
		t.Fatalf("no undecided record with the criterion met has it among its top terms (model %q)", rk.Model)
	}
	// The records the model found met rank, on average, above the others.
	var sumMet, sumNot float64
	var nMet, nNot int
	for pos, id := range rk.Order {
		if slices.Contains(metIDs, id) {
			sumMet, nMet = sumMet+float64(pos), nMet+1
		} else {
			sumNot, nNot = sumNot+float64(pos), nNot+1
		}
	}
	if nMet == 0 || nNot == 0 || sumMet/float64(nMet) >= sumNot/float64(nNot) {
		t.Errorf("mean rank of met %v, of not met %v (model %q)", sumMet/float64(max(nMet, 1)), sumNot/float64(max(nNot, 1)), rk.Model)
	}
	if !strings.Contains(rk.Model, "naive Bayes") && !strings.Contains(rk.Model, "SVM") {
		t.Logf("model %q", rk.Model)
	}
}

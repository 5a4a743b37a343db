package app

import (
	"context"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/evidence"
)

// TestReviewOutcomesSaved: outcomes, a correction of the second outcome's
// result (checked against the study's text) and an arm choice go through
// the review service and are saved; the saved project reads back with them.
func TestReviewOutcomesSaved(t *testing.T) {
	ctx := context.Background()
	ws := literatureWorkspace(t)
	r := searchedReview(t, ws, "Outcomes", `"microwave ablation"`, 3)
	defer r.Close()
	id := r.Project().Search.IDs[0]
	if err := r.Decide(id, true, ""); err != nil {
		t.Fatal(err)
	}
	if i, err := r.AddOutcome(evidence.ResultSpec{Outcome: "response", Measure: evidence.TwoGroups}); err != nil || i != 0 {
		t.Fatalf("first outcome: %d, %v", i, err)
	}
	if i, err := r.AddOutcome(evidence.ResultSpec{Outcome: "pain", Measure: evidence.MeansSDs}); err != nil || i != 1 {
		t.Fatalf("second outcome: %d, %v", i, err)
	}
	if _, err := r.StudyText(ctx, id); err != nil {
		t.Fatal(err)
	}
	num := func(v float64) *evidence.Number { return &evidence.Number{Value: v, Sources: []int{1}} }
	r.Update(func(p *evidence.Project) {
		p.OutcomeAt(1).CorrectResult(id, evidence.ResultExtraction{Groups: []evidence.ResultGroup{
			{Name: "A", N: num(10), Mean: num(5), SD: num(2)}, {Name: "B", N: num(20), Mean: num(8), SD: num(3)}, {Name: "C", N: num(5), Mean: num(4), SD: num(1)}}})
	})
	// A number the study's text does not have is flagged.
	if err := r.EditOutcomeGroup(1, id, 2, evidence.RoleControl, []string{"5", "", "", "4", "987654"}); err != nil {
		t.Fatal(err)
	}
	if g := r.Project().OutcomeAt(1).Results[id].Groups[2]; g.SD.Value != 987654 || !g.SD.Unsupported || g.Role != evidence.RoleControl {
		t.Errorf("edited group %+v", g.SD)
	}
	if err := r.SetArms(1, id, evidence.ArmChoice{Treatment: []string{"A", "B"}, Control: []string{"D"}}); err == nil || !strings.Contains(err.Error(), `no group "D"; its groups are "A", "B", "C"`) {
		t.Errorf("bad arm choice: %v", err)
	}
	if err := r.SetArms(1, id, evidence.ArmChoice{Treatment: []string{"A", "B"}, Control: []string{"C"}}); err != nil {
		t.Fatal(err)
	}
	res, err := r.Analyze(1)
	if err != nil || res.K != 1 {
		t.Errorf("analysis of the second outcome: k=%d, %v", res.K, err)
	}
	if err := r.Save(); err != nil {
		t.Fatal(err)
	}
	p := savedProject(t, ws, "Outcomes", "the outcomes", func(p *evidence.Project) bool { return p.NumOutcomes() == 2 })
	if p.Version != 3 || p.OutcomeAt(1).Name() != "pain" || len(p.OutcomeAt(1).Arms[id].Treatment) != 2 || len(p.ArmsNeeded(1)) != 0 {
		t.Errorf("saved: version %d, outcomes %q, arms %+v", p.Version, p.OutcomeNames(), p.OutcomeAt(1).Arms)
	}
	r.ClearArms(1, id)
	if err := r.RemoveOutcome(0); err != nil || r.Project().NumOutcomes() != 1 || r.Project().OutcomeAt(0).Name() != "pain" {
		t.Errorf("remove: %v, %q", err, r.Project().OutcomeNames())
	}
	if got := r.Project().ArmsNeeded(0); len(got) != 1 || got[0] != id {
		t.Errorf("after clearing: arms needed %v", got)
	}
}

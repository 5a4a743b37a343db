package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/evidence"
)

// outcomesReview creates a saved review with three included studies and
// two outcomes, response (two groups) and pain (means), whose results are
// set as a user's corrections would be: two two-arm trials and a
// three-arm trial (two doses and a placebo). It returns the workspace
// directory, the review's name and the three studies' IDs.
func outcomesReview(t *testing.T) (dir, name string, ids []string) {
	t.Helper()
	dir, name = t.TempDir(), "outcomes review"
	ws := openWorkspace(t, dir)
	defer ws.Close()
	r := createSearchedReview(t, ws, name, demoLiterature(t), ablationPICO, "ablation", 20)
	ids = r.Project().Search.IDs[:3]
	for _, id := range ids {
		if err := r.Decide(id, true, ""); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := r.AddOutcome(evidence.ResultSpec{Outcome: "response", Cohort: "drug vs placebo", Measure: evidence.TwoGroups}); err != nil {
		t.Fatal(err)
	}
	if _, err := r.AddOutcome(evidence.ResultSpec{Outcome: "pain", Cohort: "drug vs placebo", Measure: evidence.MeansSDs}); err != nil {
		t.Fatal(err)
	}
	num := func(v float64) *evidence.Number { return &evidence.Number{Value: v} }
	group := func(name, role string, n, events, mean, sd float64) evidence.ResultGroup {
		return evidence.ResultGroup{Name: name, Role: role, N: num(n), Events: num(events), Mean: num(mean), SD: num(sd)}
	}
	results := map[string]evidence.ResultExtraction{
		ids[0]: {Groups: []evidence.ResultGroup{group("drug", "treatment", 30, 12, 6, 2), group("placebo", "control", 30, 6, 4, 2)}},
		ids[1]: {Groups: []evidence.ResultGroup{group("drug", "treatment", 40, 20, 7, 3), group("placebo", "control", 40, 10, 5, 3)}},
		ids[2]: {Groups: []evidence.ResultGroup{group("low dose", "treatment", 10, 4, 5, 2), group("high dose", "treatment", 20, 12, 8, 3),
			group("placebo", "control", 5, 1, 4, 1)}},
	}
	r.Update(func(p *evidence.Project) {
		for i := range 2 {
			for id, res := range results {
				p.OutcomeAt(i).CorrectResult(id, res)
			}
		}
	})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	return dir, name, ids
}

// TestEvidenceThreeArmStudyNeedsTheArmChoice is the acceptance test of
// issue 17 ("a three-arm study is never analysed without the user's arm
// choice") through the command line: the three-arm study is listed as
// waiting, left out of the standardized table and the meta-analysis with
// the reason until its arms are chosen; then its row equals the values
// computed by hand, with the groups used as chosen or combined.
func TestEvidenceThreeArmStudyNeedsTheArmChoice(t *testing.T) {
	dir, name, ids := outcomesReview(t)
	three := ids[2]

	out, stderr, code := run(t, dir, "evidence", "outcomes", "--project", name, "--json")
	var list []outcomeJSON
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 2 {
		t.Fatalf("outcomes: %d %s %s", code, out, stderr)
	}
	for _, o := range list {
		if o.WithResults != 3 || o.Standardized != 2 || len(o.ArmsNeeded) != 1 || o.ArmsNeeded[0].ID != three ||
			strings.Join(o.ArmsNeeded[0].Groups, ",") != "low dose,high dose,placebo" {
			t.Errorf("outcome %d: %+v", o.Number, o)
		}
	}
	if out, _, _ := run(t, dir, "evidence", "outcomes", "--project", name); !strings.Contains(out, "left out until you choose their arms") || !strings.Contains(out, "--project 'outcomes review' --outcome N") {
		t.Errorf("outcomes text:\n%s", out)
	}

	analyze := func(outcome string) analyzeJSON {
		t.Helper()
		out, stderr, code := run(t, dir, "evidence", "analyze", "--project", name, "--outcome", outcome, "--json")
		var list []analyzeJSON
		if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 {
			t.Fatalf("analyze --outcome %s: %d %s %s", outcome, code, out, stderr)
		}
		return list[0]
	}
	rowOf := func(a analyzeJSON, id string) *evidence.StandardRow {
		for i := range a.Rows {
			if a.Rows[i].StudyID == id {
				return &a.Rows[i]
			}
		}
		return nil
	}
	// Without a choice: left out of both outcomes, with the reason.
	for _, n := range []string{"1", "2"} {
		a := analyze(n)
		if rowOf(a, three) != nil || a.Meta == nil || a.Meta.K != 2 || len(a.Problems) != 1 ||
			!strings.Contains(a.Problems[0], "the study has 3 groups (low dose, high dose, placebo): choose the groups that form the comparison, or combine groups") {
			t.Errorf("outcome %s without a choice: rows %d, problems %q, meta %+v", n, len(a.Rows), a.Problems, a.Meta)
		}
	}
	out, _, code = run(t, dir, "evidence", "analyze", "--project", name)
	if code != 0 || !strings.Contains(out, "Left out:") || !strings.Contains(out, "Outcome 2: pain") || !strings.Contains(out, "k = 2") {
		t.Errorf("analyze text: %d\n%s", code, out)
	}

	// Pain: both doses combined. By hand (Cochrane Handbook Table 6.5.a):
	// N = 10+20 = 30, M = (10·5 + 20·8)/30 = 7,
	// SD = sqrt((9·4 + 19·9 + 10·20/30·(25+64−80))/29) = sqrt(267/29) = 3.0342868.
	out, stderr, code = run(t, dir, "evidence", "arms", "--project", name, "--outcome", "2", "--id", three,
		"--treatment", "low dose", "--treatment", "high dose", "--control", "placebo", "--json")
	var arms armsJSON
	if code != 0 || json.Unmarshal([]byte(out), &arms) != nil || arms.Row == nil {
		t.Fatalf("arms: %d %s %s", code, out, stderr)
	}
	check := func(what string, r *evidence.StandardRow, got []float64, want []float64) {
		t.Helper()
		for i := range want {
			if math.Abs(got[i]-want[i]) > 1e-6 {
				t.Errorf("%s: %v, want %v (row %+v)", what, got, want, r)
				return
			}
		}
	}
	r := arms.Row
	check("pain combined", r, []float64{r.Total1, r.Mean1, r.SD1, r.Total2, r.Mean2, r.SD2}, []float64{30, 7, math.Sqrt(267.0 / 29), 5, 4, 1})
	a := analyze("2")
	if r := rowOf(a, three); r == nil || a.Meta == nil || a.Meta.K != 3 || len(a.Problems) != 0 {
		t.Fatalf("pain with the choice: %+v", a)
	} else {
		check("pain combined (analyze)", r, []float64{r.Total1, r.Mean1, r.SD1}, []float64{30, 7, 3.0342868})
	}
	// Response is still waiting: the choice is per outcome.
	if a := analyze("1"); rowOf(a, three) != nil || a.Meta.K != 2 {
		t.Errorf("response after the pain choice: %+v", a)
	}
	// Response: the high dose against placebo, not combined: 12/20 vs 1/5.
	out, stderr, code = run(t, dir, "evidence", "arms", "--project", name, "--outcome", "1", "--id", three, "--treatment", "high dose", "--control", "placebo")
	if code != 0 || !strings.Contains(out, `Arm choice: treatment "high dose" vs control "placebo"`) {
		t.Fatalf("arms text: %d %s %s", code, out, stderr)
	}
	a = analyze("1")
	if r := rowOf(a, three); r == nil || a.Meta.K != 3 {
		t.Fatalf("response with the choice: %+v", a)
	} else {
		check("response high dose", r, []float64{r.Events1, r.Total1, r.Events2, r.Total2}, []float64{12, 20, 1, 5})
	}
	// Cleared: waiting again.
	if _, stderr, code := run(t, dir, "evidence", "arms", "--project", name, "--outcome", "1", "--id", three, "--clear"); code != 0 {
		t.Fatalf("--clear: %s", stderr)
	}
	if a := analyze("1"); rowOf(a, three) != nil || a.Meta.K != 2 || len(a.ArmsNeeded) != 1 {
		t.Errorf("after --clear: %+v", a)
	}
}

// TestEvidenceOutcomesAndArmsErrors: bad input names the outcome, the
// study or the group, and lists the valid ones.
func TestEvidenceOutcomesAndArmsErrors(t *testing.T) {
	dir, name, ids := outcomesReview(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"arms", "--id", ids[2], "--treatment", "low dose", "--control", "placebo"}, `the review has 2 outcomes: choose one with --outcome N (1 "response", 2 "pain")`},
		{[]string{"arms", "--outcome", "3", "--id", ids[2], "--treatment", "low dose"}, `--outcome 3: the review has no outcome 3; its outcomes are 1 "response", 2 "pain"`},
		{[]string{"arms", "--outcome", "1", "--id", "nope", "--treatment", "x"}, `--id "nope": no study with a result for outcome 1 "response" has that ID; studies with a result: ` + ids[0]},
		{[]string{"arms", "--outcome", "1", "--id", ids[2], "--treatment", "medium dose", "--control", "placebo"}, `has no group "medium dose"; its groups are "low dose", "high dose", "placebo"`},
		{[]string{"arms", "--outcome", "1", "--id", ids[2], "--treatment", "low dose"}, `choose at least one control group`},
		{[]string{"arms", "--outcome", "1", "--id", ids[2], "--treatment", "low dose", "--clear"}, `give --clear or the groups`},
		{[]string{"outcomes", "--remove", "5"}, `--remove 5: the review has no outcome 5; its outcomes are 1 "response", 2 "pain"`},
		{[]string{"analyze", "--outcome", "0"}, `--outcome 0: the review has no outcome 0`},
	} {
		args := append([]string{"evidence"}, tc.args...)
		args = append(args, "--project", name)
		if out, stderr, code := run(t, dir, args...); code == 0 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%q: %d %s\nstderr %s\nwant %q", tc.args, code, out, stderr, tc.want)
		}
	}

	// Add an outcome from a file, then remove it.
	spec := filepath.Join(t.TempDir(), "survival.json")
	if err := os.WriteFile(spec, []byte(`{"outcome": "overall survival", "measure": "ratio"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, dir, "evidence", "outcomes", "--project", name, "--add", spec)
	if code != 0 || !strings.Contains(out, `Added outcome 3 "overall survival".`) || !strings.Contains(out, "overall survival  ratio") {
		t.Fatalf("--add: %d %s %s", code, out, stderr)
	}
	if _, stderr, code := run(t, dir, "evidence", "outcomes", "--project", name, "--add", spec); code == 0 || !strings.Contains(stderr, `already has the outcome "overall survival" (outcome 3)`) {
		t.Errorf("--add twice: %d %s", code, stderr)
	}
	if _, stderr, code := run(t, dir, "evidence", "analyze", "--project", name, "--outcome", "3"); code == 0 || !strings.Contains(stderr, `outcome 3 "overall survival": `) {
		t.Errorf("analyze an outcome without results: %d %s", code, stderr)
	}
	out, _, code = run(t, dir, "evidence", "outcomes", "--project", name, "--remove", "1", "--json")
	var list []outcomeJSON
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 2 || list[0].Name != "pain" || list[1].Name != "overall survival" {
		t.Errorf("--remove 1: %d %s", code, out)
	}
}

package evidence

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/meta"
)

// TestOldProjectLoadsAsOneOutcome reads a project saved before several
// outcomes existed (format version 1, written by that version's code):
// its result, results and meta settings are the first (and only)
// outcome, it analyses as before, and it is saved again as the same JSON.
func TestOldProjectLoadsAsOneOutcome(t *testing.T) {
	p, raw := readOldProject(t)
	if p.NumOutcomes() != 1 || p.OutcomeAt(1) != nil || p.OutcomeAt(-1) != nil {
		t.Fatalf("%d outcomes", p.NumOutcomes())
	}
	o := p.OutcomeAt(0)
	if o.Name() != "local tumor progression" || o.Result.Measure != TwoGroups || len(o.Results) != 2 || o.Meta.Method != "DL" {
		t.Fatalf("first outcome %+v", o)
	}
	rows, problems := p.StandardTableFor(0)
	if len(rows) != 2 || len(problems) != 0 || rows[0].Events1 != 12 || rows[0].Total2 != 82 {
		t.Fatalf("table %+v, %v", rows, problems)
	}
	if _, res, err := p.AnalyzeOutcome(0); err != nil || res.K != 2 {
		t.Fatalf("analysis k=%d, %v", res.K, err)
	}
	checkSavedAgainUnchanged(t, p, raw)

	// A second outcome raises the format version (an older Clinsight
	// refuses the file rather than dropping the outcome) and survives a
	// save and a read; the first is unchanged at the top level.
	i, err := p.AddOutcome(ResultSpec{Outcome: " Complete  ablation ", Cohort: "MWA vs RFA", Measure: TwoGroups})
	if err != nil || i != 1 {
		t.Fatalf("AddOutcome: %d, %v", i, err)
	}
	if p.Version != 3 {
		t.Errorf("version %d after a second outcome", p.Version)
	}
	saved, err := json.Marshal(p)
	mustDo(t, err)
	var top map[string]json.RawMessage
	mustDo(t, json.Unmarshal(saved, &top))
	if _, ok := top["other_outcomes"]; !ok || !strings.Contains(string(top["result"]), "local tumor progression") {
		t.Errorf("saved keys: result %s, other_outcomes %s", top["result"], top["other_outcomes"])
	}
	back, err := ParseProject(saved)
	mustDo(t, err)
	if !slices.Equal(back.OutcomeNames(), []string{"local tumor progression", "Complete ablation"}) || back.OutcomeAt(1).Results == nil {
		t.Errorf("read back: %q", back.OutcomeNames())
	}
}

func TestAddRemoveOutcomes(t *testing.T) {
	p := NewProject("Outcomes", "literature", PICO{Population: "adults with chronic pain", Intervention: "drug X"})
	// The empty first outcome is filled first.
	if i, err := p.AddOutcome(ResultSpec{Outcome: "overall survival", Measure: RatioCI}); err != nil || i != 0 || p.NumOutcomes() != 1 || p.Version != 1 {
		t.Fatalf("first: %d, %v, %d outcomes, version %d", i, err, p.NumOutcomes(), p.Version)
	}
	if _, err := p.AddOutcome(ResultSpec{Outcome: "Overall Survival", Measure: TwoGroups}); err == nil || !strings.Contains(err.Error(), `already has the outcome "Overall Survival" (outcome 1)`) {
		t.Errorf("duplicate name: %v", err)
	}
	if _, err := p.AddOutcome(ResultSpec{Outcome: "toxicity"}); err == nil {
		t.Error("an outcome without a shape was added")
	}
	if i, err := p.AddOutcome(ResultSpec{Outcome: "toxicity", Measure: SingleArm}); err != nil || i != 1 {
		t.Fatalf("second: %d, %v", i, err)
	}
	if i, err := p.AddOutcome(ResultSpec{Outcome: "pain", Measure: MeansSDs}); err != nil || i != 2 {
		t.Fatalf("third: %d, %v", i, err)
	}
	if err := p.RemoveOutcome(5); err == nil || !strings.Contains(err.Error(), `no outcome 6; its outcomes are 1 "overall survival", 2 "toxicity", 3 "pain"`) {
		t.Errorf("bad index: %v", err)
	}
	mustDo(t, p.RemoveOutcome(0))
	if !slices.Equal(p.OutcomeNames(), []string{"toxicity", "pain"}) {
		t.Errorf("after removing the first: %q", p.OutcomeNames())
	}
	mustDo(t, p.RemoveOutcome(1))
	if err := p.RemoveOutcome(0); err == nil || p.NumOutcomes() != 1 || p.OtherOutcomes != nil {
		t.Errorf("the last outcome: %v, %d", err, p.NumOutcomes())
	}
	for p.NumOutcomes() < MaxOutcomes {
		if _, err := p.AddOutcome(ResultSpec{Outcome: "o" + strings.Repeat("x", p.NumOutcomes()), Measure: TwoGroups}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := p.AddOutcome(ResultSpec{Outcome: "one too many", Measure: TwoGroups}); err == nil {
		t.Error("more than MaxOutcomes")
	}
	mustDo(t, p.Validate())
}

// TestCombineMeansByHand checks the Cochrane Handbook's formula (Table
// 6.5.a) against values computed by hand from the groups' sums:
//
//	A: N=10, M=5, SD=2  → Σx = 50,  Σx² = 9·4 + 10·25 = 286
//	B: N=20, M=8, SD=3  → Σx = 160, Σx² = 19·9 + 20·64 = 1451
//	C: N=5,  M=4, SD=1  → Σx = 20,  Σx² = 4·1 + 5·16 = 84
//
// A+B: N=30, M=210/30=7, SD² = (1737 − 210²/30)/29 = 267/29, SD = 3.0342868...
// (the formula: (9·4 + 19·9 + 10·20/30·(25+64−80))/29 = (36+171+60)/29, the same).
// A+B+C: N=35, M=230/35=6.5714286, SD² = (1821 − 230²/35)/34 = 309.5714286/34,
// SD = 3.0174562...
func TestCombineMeansByHand(t *testing.T) {
	n, m, sd := CombineMeans(10, 5, 2, 20, 8, 3)
	if n != 30 || math.Abs(m-7) > 1e-12 || math.Abs(sd-math.Sqrt(267.0/29)) > 1e-12 || math.Abs(sd-3.0342868) > 1e-7 {
		t.Errorf("A+B: %v %v %v", n, m, sd)
	}
	n, m, sd = CombineMeans(n, m, sd, 5, 4, 1)
	wantSD := math.Sqrt((1821 - 230.0*230/35) / 34)
	if n != 35 || math.Abs(m-230.0/35) > 1e-12 || math.Abs(sd-wantSD) > 1e-12 || math.Abs(sd-3.0174562) > 1e-7 {
		t.Errorf("A+B+C: %v %v %v (want SD %v)", n, m, sd, wantSD)
	}
}

// threeArmResult is a three-arm trial's result for pain (means) and
// response (counts): two doses of a drug and a placebo.
var threeArmResult = ResultExtraction{StudyID: "t3", Groups: []ResultGroup{
	{Name: "low dose", Role: RoleTreatment, N: resNum(10, 1), Mean: resNum(5, 1), SD: resNum(2, 1), Events: resNum(4, 1)},
	{Name: "high dose", Role: RoleTreatment, N: resNum(20, 2), Mean: resNum(8, 2), SD: resNum(3, 2), Events: resNum(12, 2)},
	{Name: "placebo", Role: RoleControl, N: resNum(5, 3), Mean: resNum(4, 3), SD: resNum(1, 3), Events: resNum(1, 3)},
}}

func TestStandardizeArmChoices(t *testing.T) {
	means := ResultSpec{Outcome: "pain", Measure: MeansSDs}
	if _, err := Standardize(threeArmResult, means, "Tan 2020", nil); err == nil ||
		!strings.Contains(err.Error(), "the study has 3 groups (low dose, high dose, placebo): choose the groups that form the comparison, or combine groups") {
		t.Fatalf("no choice: %v", err)
	}
	// One group a side: those groups, as chosen.
	row, err := Standardize(threeArmResult, means, "Tan 2020", &ArmChoice{Treatment: []string{"high dose"}, Control: []string{"placebo"}})
	if err != nil || row.Total1 != 20 || row.Mean1 != 8 || row.SD1 != 3 || row.Total2 != 5 || row.Mean2 != 4 || row.SD2 != 1 || fmt.Sprint(row.Sources) != "[2 3]" {
		t.Fatalf("high dose vs placebo: %+v, %v", row, err)
	}
	// Both doses combined (hand values in TestCombineMeansByHand).
	row, err = Standardize(threeArmResult, means, "Tan 2020", &ArmChoice{Treatment: []string{"low dose", "high dose"}, Control: []string{"placebo"}})
	if err != nil || row.Total1 != 30 || math.Abs(row.Mean1-7) > 1e-12 || math.Abs(row.SD1-3.0342868) > 1e-7 || row.Total2 != 5 || row.Mean2 != 4 {
		t.Fatalf("doses combined: %+v, %v", row, err)
	}
	wantD := `treatment groups "low dose" + "high dose" combined (Cochrane Handbook Table 6.5.a): total1 = 10 + 20 = 30, mean1 = (10×5 + 20×8)/30 = 7, sd1 = 3.03429`
	if !slices.Contains(row.Derivations, wantD) {
		t.Errorf("derivations %q", row.Derivations)
	}
	// Counts: events and totals summed (4+12 of 10+20).
	counts := ResultSpec{Outcome: "response", Measure: TwoGroups}
	row, err = Standardize(threeArmResult, counts, "", &ArmChoice{Treatment: []string{"low dose", "high dose"}, Control: []string{"placebo"}})
	if err != nil || row.Events1 != 16 || row.Total1 != 30 || row.Events2 != 1 || row.Total2 != 5 {
		t.Fatalf("counts combined: %+v, %v", row, err)
	}
	// A choice that no longer fits the result names the groups it has.
	_, err = Standardize(threeArmResult, counts, "", &ArmChoice{Treatment: []string{"medium dose"}, Control: []string{"placebo"}})
	if err == nil || !strings.Contains(err.Error(), `the group "medium dose", which the study's result does not have (its groups: "low dose", "high dose", "placebo")`) {
		t.Errorf("stale choice: %v", err)
	}
	// Single arm: two of three groups combined.
	row, err = Standardize(threeArmResult, ResultSpec{Outcome: "response", Measure: SingleArm}, "", &ArmChoice{Treatment: []string{"low dose", "high dose"}})
	if err != nil || row.Events1 != 16 || row.Total1 != 30 {
		t.Errorf("single arm combined: %+v, %v", row, err)
	}
}

// armsProject is a review with two outcomes and three included studies:
// two two-arm trials and the three-arm trial t3.
func armsProject(t *testing.T) *Project {
	t.Helper()
	p := NewProject("Arms", "literature", PICO{Population: "adults with chronic pain", Intervention: "drug X"})
	p.Search = &SearchRun{IDs: []string{"t1", "t2", "t3"}, Total: 3}
	p.Studies = map[string]StudyInfo{"t1": {FirstAuthor: "Abe", Year: 2018}, "t2": {FirstAuthor: "Bo", Year: 2019}, "t3": {FirstAuthor: "Tan", Year: 2020}}
	for _, id := range p.Search.IDs {
		mustDo(t, p.Decide(id, true, ""))
	}
	_, err := p.AddOutcome(ResultSpec{Outcome: "response", Measure: TwoGroups})
	mustDo(t, err)
	_, err = p.AddOutcome(ResultSpec{Outcome: "pain", Measure: MeansSDs})
	mustDo(t, err)
	two := func(id string, n1, e1, m1, s1, n2, e2, m2, s2 float64) ResultExtraction {
		return ResultExtraction{StudyID: id, Groups: []ResultGroup{
			{Name: "drug", Role: RoleTreatment, N: resNum(n1), Events: resNum(e1), Mean: resNum(m1), SD: resNum(s1)},
			{Name: "placebo", Role: RoleControl, N: resNum(n2), Events: resNum(e2), Mean: resNum(m2), SD: resNum(s2)}}}
	}
	for i := range 2 {
		o := p.OutcomeAt(i)
		o.Results["t1"] = two("t1", 30, 12, 6, 2, 30, 6, 4, 2)
		o.Results["t2"] = two("t2", 40, 20, 7, 3, 40, 10, 5, 3)
		o.Results["t3"] = threeArmResult
	}
	return p
}

func TestThreeArmStudyNeedsTheUsersChoice(t *testing.T) {
	p := armsProject(t)
	for i := range 2 {
		if got := p.ArmsNeeded(i); !slices.Equal(got, []string{"t3"}) {
			t.Errorf("outcome %d: arms needed %v", i, got)
		}
		rows, problems := p.StandardTableFor(i)
		if len(rows) != 2 || len(problems) != 1 || !strings.Contains(problems[0], "Tan 2020: the study has 3 groups (low dose, high dose, placebo): choose") {
			t.Errorf("outcome %d: %d rows, problems %q", i, len(rows), problems)
		}
		studies, res, err := p.AnalyzeOutcome(i)
		if err != nil || res.K != 2 || len(studies) != 2 || slices.ContainsFunc(studies, func(s meta.Study) bool { return s.Label == "Tan 2020" }) {
			t.Errorf("outcome %d analysed k=%d with %v: %v", i, res.K, studies, err)
		}
	}
	// Bad choices name the study's groups.
	for _, tc := range []struct {
		outcome int
		id      string
		c       ArmChoice
		want    string
	}{
		{0, "t3", ArmChoice{Treatment: []string{"medium dose"}, Control: []string{"placebo"}}, `Tan 2020 has no group "medium dose"; its groups are "low dose", "high dose", "placebo"`},
		{0, "t3", ArmChoice{Treatment: []string{"high dose"}}, `choose at least one control group of Tan 2020`},
		{0, "t3", ArmChoice{Treatment: []string{"high dose"}, Control: []string{"high dose"}}, `"high dose" of Tan 2020 is chosen twice`},
		{0, "t9", ArmChoice{Treatment: []string{"a"}, Control: []string{"b"}}, `t9 has no result extracted for "response"`},
		{7, "t3", ArmChoice{Treatment: []string{"a"}}, `no outcome 8; its outcomes are 1 "response", 2 "pain"`},
	} {
		if err := p.SetArms(tc.outcome, tc.id, tc.c); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("SetArms(%d, %s, %v): %v, want %q", tc.outcome, tc.id, tc.c, err, tc.want)
		}
	}
	// The choice of one outcome leaves the other waiting.
	mustDo(t, p.SetArms(1, "t3", ArmChoice{Treatment: []string{"low dose", " high dose "}, Control: []string{"placebo"}}))
	if p.Version != 3 || len(p.ArmsNeeded(1)) != 0 || !slices.Equal(p.ArmsNeeded(0), []string{"t3"}) {
		t.Errorf("version %d, needed %v / %v", p.Version, p.ArmsNeeded(0), p.ArmsNeeded(1))
	}
	rows, problems := p.StandardTableFor(1)
	if len(rows) != 3 || len(problems) != 0 || rows[2].Total1 != 30 || math.Abs(rows[2].SD1-3.0342868) > 1e-7 {
		t.Errorf("pain with the choice: %+v, %q", rows, problems)
	}
	if _, res, err := p.AnalyzeOutcome(1); err != nil || res.K != 3 {
		t.Errorf("pain analysed k=%d: %v", res.K, err)
	}
	p.ClearArms(1, "t3")
	if !slices.Equal(p.ArmsNeeded(1), []string{"t3"}) || p.OutcomeAt(1).Arms != nil {
		t.Errorf("cleared: %v", p.ArmsNeeded(1))
	}
}

// TestOutcomeEditsAndNextStep: a correction of one outcome's result leaves
// the other's alone, and a resumed review opens on Results while an
// outcome lacks a study's result.
func TestOutcomeEditsAndNextStep(t *testing.T) {
	p := armsProject(t)
	p.PICO = PICO{Population: "adults with chronic pain", Intervention: "drug X"}
	if got := p.NextStep(); got != StepMeta {
		t.Errorf("next step %s with every result", got)
	}
	mustDo(t, p.EditGroupFor(1, "t1", 0, RoleTreatment, []string{"31", "", "", "6.5", "2"}, nil))
	if g := p.OutcomeAt(1).Results["t1"].Groups[0]; g.N.Value != 31 || g.Mean.Value != 6.5 || !p.OutcomeAt(1).Results["t1"].Edited {
		t.Errorf("edited group %+v", g)
	}
	if g := p.OutcomeAt(0).Results["t1"].Groups[0]; g.N.Value != 30 || p.OutcomeAt(0).Results["t1"].Edited {
		t.Errorf("the other outcome's group changed: %+v", g)
	}
	if rows := p.ResultRowsFor(1); len(rows) != 7 || rows[0].Numbers[0].Value != 31 || !rows[0].Edited {
		t.Errorf("result rows %+v", rows)
	}
	if err := p.EditGroupFor(4, "t1", 0, "", nil, nil); err == nil || !strings.Contains(err.Error(), "no outcome 5") {
		t.Errorf("unknown outcome: %v", err)
	}
	delete(p.OutcomeAt(1).Results, "t2")
	if got := p.NextStep(); got != StepResults {
		t.Errorf("next step %s with a result missing in the second outcome", got)
	}
}

package evidence

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

// teamProject is a review whose search found n candidates r1..rn (of
// total records identified, dup of them removed as duplicates).
func teamProject(t *testing.T, n, total, dup int) *Project {
	t.Helper()
	p := NewProject("team review", "literature", PICO{Population: "adults", Intervention: "drug"})
	p.Search = &SearchRun{Query: "drug AND adults", Total: int64(total), At: time.Date(2026, 11, 1, 0, 0, 0, 0, time.UTC), DuplicateOf: map[string]string{}}
	for i := range n {
		p.Search.IDs = append(p.Search.IDs, fmt.Sprintf("r%d", i+1))
	}
	for i := range dup {
		p.Search.DuplicateOf[fmt.Sprintf("d%d", i+1)] = "r1"
	}
	return p
}

func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// readOldProject reads testdata/project_v1.json, a project saved by the
// Clinsight of format version 1 (written by that version's code), and
// returns it parsed, with the file's bytes.
func readOldProject(t *testing.T) (*Project, []byte) {
	t.Helper()
	raw, err := os.ReadFile("testdata/project_v1.json")
	mustDo(t, err)
	p, err := ParseProject(raw)
	mustDo(t, err)
	return p, raw
}

// checkSavedAgainUnchanged fails the test unless p, saved again as the app
// saves it (indented JSON), is the same JSON as raw, the file it was read
// from.
func checkSavedAgainUnchanged(t *testing.T, p *Project, raw []byte) {
	t.Helper()
	again, err := json.MarshalIndent(p, "", "  ")
	mustDo(t, err)
	var before, after any
	mustDo(t, json.Unmarshal(raw, &before))
	mustDo(t, json.Unmarshal(again, &after))
	if !reflect.DeepEqual(before, after) {
		t.Errorf("the old project changed when saved again:\n%s", again)
	}
}

// TestAgreementAgainstAHandComputedExample checks Cohen's kappa and the raw
// agreement of two reviewers against the textbook example computed by
// hand: 50 records, both include 20, both exclude 15, only the first
// includes 5, only the second 10. Raw agreement po = 35/50 = 0.7; the
// first includes 25/50 = 0.5, the second 30/50 = 0.6, so chance agreement
// pe = 0.5·0.6 + 0.5·0.4 = 0.5 and kappa = (0.7 − 0.5)/(1 − 0.5) = 0.4.
func TestAgreementAgainstAHandComputedExample(t *testing.T) {
	p := teamProject(t, 52, 52, 0)
	mustDo(t, p.AddReviewer("Ana"))
	mustDo(t, p.AddReviewer("Ben"))
	decide := func(who string, from, to int, include bool) {
		for i := from; i <= to; i++ {
			reason := ""
			if !include {
				reason = "Wrong population"
			}
			mustDo(t, p.DecideAs(who, StageTitleAbstract, fmt.Sprintf("r%d", i), include, reason))
		}
	}
	decide("Ana", 1, 25, true) // r1-r20 both, r21-r25 Ana only
	decide("Ben", 1, 20, true)
	decide("Ana", 26, 50, false)
	decide("Ben", 21, 25, false)
	decide("Ben", 26, 35, true) // Ben only
	decide("Ben", 36, 50, false)
	decide("Ana", 51, 51, true) // r51: Ben has not decided it; r52 nobody
	ag, err := p.Agreement(StageTitleAbstract)
	mustDo(t, err)
	if ag.Records != 50 || ag.BothInclude != 20 || ag.BothExclude != 15 || ag.OnlyFirst != 5 || ag.OnlySecond != 10 {
		t.Fatalf("2×2 table %+v, want 50 records: 20, 15, 5, 10", ag)
	}
	if math.Abs(ag.Raw-0.7) > 1e-12 || math.Abs(ag.Kappa-0.4) > 1e-12 {
		t.Errorf("raw %v kappa %v, want 0.7 and 0.4", ag.Raw, ag.Kappa)
	}
	if ag.Reviewers != [2]string{"Ana", "Ben"} {
		t.Errorf("reviewers %v", ag.Reviewers)
	}
	// The 15 records decided differently are the conflicts; the review's
	// decisions are the 35 agreed ones, nothing for r51 (Ben has not
	// decided it) or for the conflicts.
	if got := len(p.Conflicts(StageTitleAbstract)); got != 15 {
		t.Errorf("%d conflicts, want 15", got)
	}
	if len(p.Decisions) != 35 || len(p.Included()) != 20 {
		t.Errorf("%d agreed decisions and %d included, want 35 and 20", len(p.Decisions), len(p.Included()))
	}
	c := p.PRISMA()
	// Screened: the 50 both decided and r51 (awaiting Ben, with the 15
	// conflicts).
	if c.Screened != 51 || c.Included != 20 || c.Excluded != 15 || c.Undecided != 16 || c.Conflicts != 15 {
		t.Errorf("PRISMA %+v", c)
	}
	// Screening is blind: Ana sees Ben's decision on r1 (both decided),
	// not whether Ben decided r51.
	if !p.OthersDecided(StageTitleAbstract, "r1") || p.OthersDecided(StageTitleAbstract, "r51") {
		t.Error("OthersDecided does not follow who decided")
	}
	// Only the reviewer's own decisions feed their learner.
	if got := p.DecisionsOf("Ben", StageTitleAbstract); len(got) != 50 || !got["r30"].Include {
		t.Errorf("Ben's decisions: %d", len(got))
	}
}

func TestConflictResolution(t *testing.T) {
	p := teamProject(t, 3, 3, 0)
	if err := p.Decide("r1", true, ""); err != nil {
		t.Fatal(err)
	}
	mustDo(t, p.AddReviewer("Ana")) // takes over the decision on r1
	if d, ok := p.ReviewerDecision("Ana", StageTitleAbstract, "r1"); !ok || !d.Include {
		t.Fatalf("the first reviewer did not take over the decisions: %+v %v", d, ok)
	}
	if len(p.Decisions) != 1 {
		t.Errorf("with one reviewer her decisions are the review's: %v", p.Decisions)
	}
	mustDo(t, p.AddReviewer("Ben"))
	if len(p.Decisions) != 0 {
		t.Errorf("with two reviewers, r1 waits for Ben: %v", p.Decisions)
	}
	if err := p.AddReviewer("Cy"); err == nil {
		t.Error("a third reviewer was added")
	}
	if err := p.Decide("r2", true, ""); err == nil || !strings.Contains(err.Error(), "say who is screening") {
		t.Errorf("Decide without a reviewer: %v", err)
	}
	mustDo(t, p.DecideAs("Ben", StageTitleAbstract, "r1", false, "Wrong outcome"))
	conf := p.Conflicts(StageTitleAbstract)
	if len(conf) != 1 || conf[0].ID != "r1" || conf[0].Resolution != nil || !conf[0].Decisions[0].Include || conf[0].Decisions[1].Reason != "Wrong outcome" {
		t.Fatalf("conflicts %+v", conf)
	}
	if err := p.Resolve(StageTitleAbstract, "r1", true, "", "", "Cy"); err == nil {
		t.Error("a resolution without a note was accepted")
	}
	if err := p.Resolve(StageTitleAbstract, "r2", true, "", "talked", "Cy"); err == nil {
		t.Error("a record without a conflict was resolved")
	}
	mustDo(t, p.Resolve(StageTitleAbstract, "r1", true, "", "The methods section reports the outcome", "Cy"))
	if d := p.Decisions["r1"]; !d.Include {
		t.Errorf("the resolution is not the review's decision: %+v", d)
	}
	if p.OpenConflicts(StageTitleAbstract) != 0 || len(p.Conflicts(StageTitleAbstract)) != 1 {
		t.Error("a resolved conflict is still open, or no longer listed")
	}
	if err := p.RemoveReviewer("Ben"); err == nil {
		t.Error("a reviewer with decisions was removed")
	}
	raw, err := json.Marshal(p)
	mustDo(t, err)
	back, err := ParseProject(raw)
	mustDo(t, err)
	if back.Version != 2 || !slices.Equal(back.ReviewerNames(), []string{"Ana", "Ben"}) || len(back.Reviewers[1].Decisions) != 1 || back.Resolutions[StageTitleAbstract]["r1"].By != "Cy" {
		t.Errorf("the team did not round-trip: version %d %+v", back.Version, back.Resolutions)
	}
	p.Unresolve(StageTitleAbstract, "r1")
	if _, ok := p.Decisions["r1"]; ok {
		t.Error("an unresolved conflict keeps a decision")
	}
}

// TestDecisionsExchangedBetweenTwoReviewerFilesMerge has two reviewers
// screen the same review on their own computers, exchange their decisions
// files and merge them: the conflicts are found on both sides, the agreed
// decisions become the review's, and merging again changes nothing.
func TestDecisionsExchangedBetweenTwoReviewerFilesMerge(t *testing.T) {
	base := teamProject(t, 6, 6, 0)
	ana, err := base.Clone()
	mustDo(t, err)
	ben, err := base.Clone()
	mustDo(t, err)
	mustDo(t, ana.AddReviewer("Ana"))
	mustDo(t, ben.AddReviewer("Ben"))
	for id, inc := range map[string]bool{"r1": true, "r2": true, "r3": false, "r4": false, "r5": true} {
		mustDo(t, ana.DecideAs("Ana", StageTitleAbstract, id, inc, "Wrong population"))
	}
	for id, inc := range map[string]bool{"r1": true, "r2": false, "r3": false, "r4": true, "r6": false} {
		mustDo(t, ben.DecideAs("Ben", StageTitleAbstract, id, inc, "Wrong design"))
	}
	exchange := func(from *Project, who string) DecisionsFile {
		t.Helper()
		f, err := from.ExportDecisions(who)
		mustDo(t, err)
		var buf bytes.Buffer
		mustDo(t, WriteDecisionsFile(&buf, f))
		if strings.Contains(buf.String(), "Ana") && strings.Contains(buf.String(), "Ben") {
			t.Errorf("%s's file names the other reviewer: screening is no longer blind", who)
		}
		back, err := ReadDecisionsFile(&buf)
		mustDo(t, err)
		return back
	}
	anaFile, benFile := exchange(ana, "Ana"), exchange(ben, "Ben")
	if len(anaFile.Decisions) != 5 || anaFile.Decisions[0].ID != "r1" {
		t.Fatalf("Ana's file: %+v", anaFile.Decisions)
	}

	rep, err := ana.MergeDecisions(benFile)
	mustDo(t, err)
	if !rep.NewReviewer || rep.Added != 5 || rep.Skipped != 0 || rep.Conflicts[StageTitleAbstract] != 2 {
		t.Errorf("Ana merging Ben's: %+v", rep)
	}
	rep, err = ben.MergeDecisions(anaFile)
	mustDo(t, err)
	if rep.Added != 5 || rep.Conflicts[StageTitleAbstract] != 2 {
		t.Errorf("Ben merging Ana's: %+v", rep)
	}
	ids := func(cs []Conflict) []string {
		var out []string
		for _, c := range cs {
			out = append(out, c.ID)
		}
		return out
	}
	for _, p := range []*Project{ana, ben} {
		if got := ids(p.Conflicts(StageTitleAbstract)); !slices.Equal(got, []string{"r2", "r4"}) {
			t.Errorf("conflicts %v, want r2 and r4", got)
		}
		// Agreed: r1 included, r3 excluded; r5 and r6 wait for the other.
		if len(p.Decisions) != 2 || !p.Decisions["r1"].Include || p.Decisions["r3"].Include {
			t.Errorf("agreed decisions %v", p.Decisions)
		}
	}
	// Merging the same file again changes nothing.
	rep, err = ana.MergeDecisions(benFile)
	mustDo(t, err)
	if rep.Added != 0 || rep.Updated != 0 || rep.Unchanged != 5 || rep.NewReviewer {
		t.Errorf("merging again: %+v", rep)
	}
	// Ben changes his mind on r4 later: the newer decision replaces his
	// old one and the conflict is gone; an older one is kept out.
	mustDo(t, ben.DecideAs("Ben", StageTitleAbstract, "r4", false, "Wrong design"))
	newer := exchange(ben, "Ben")
	rep, err = ana.MergeDecisions(newer)
	mustDo(t, err)
	if rep.Updated != 1 || rep.Conflicts[StageTitleAbstract] != 1 {
		t.Errorf("newer decisions: %+v", rep)
	}
	rep, err = ana.MergeDecisions(benFile)
	mustDo(t, err)
	if rep.KeptNewer != 1 || rep.Updated != 0 {
		t.Errorf("older decisions: %+v", rep)
	}
	if d := ana.Decisions["r4"]; d.Include || d.Reason == "" {
		t.Errorf("r4 should be excluded by both now: %+v", d)
	}
	// A record outside the review's search is skipped and counted.
	stray := benFile
	stray.Decisions = append(slices.Clone(stray.Decisions), ExchangedDecision{ID: "elsewhere", Stage: StageTitleAbstract, Include: true, At: time.Now()})
	rep, err = ana.MergeDecisions(stray)
	mustDo(t, err)
	if rep.Skipped != 1 || rep.SkippedIDs[0] != "elsewhere" || !strings.Contains(rep.Summary(), "elsewhere") {
		t.Errorf("stray record: %+v", rep)
	}
	// A third reviewer's file is refused.
	cy := benFile
	cy.Reviewer = "Cy"
	if _, err := ana.MergeDecisions(cy); err == nil || !strings.Contains(err.Error(), "Ana and Ben") {
		t.Errorf("a third reviewer's file: %v", err)
	}
	// A review with unowned decisions asks for its reviewers first.
	solo := teamProject(t, 6, 6, 0)
	mustDo(t, solo.Decide("r1", true, ""))
	if _, err := solo.MergeDecisions(benFile); err == nil || !strings.Contains(err.Error(), "first reviewer") {
		t.Errorf("merging into a review without reviewers: %v", err)
	}
}

func TestReadDecisionsFileRefusesBadFiles(t *testing.T) {
	good := `{"format":"clinsight-screening-decisions","version":1,"review":"x","reviewer":"Ana","decisions":[{"id":"r1","stage":"title-abstract","include":true,"at":"2026-11-01T00:00:00Z"}]}`
	if _, err := ReadDecisionsFile(strings.NewReader(good)); err != nil {
		t.Fatalf("a good file: %v", err)
	}
	for name, tc := range map[string]struct{ body, want string }{
		"not JSON":       {`{"format":`, "invalid JSON"},
		"other format":   {`{"format":"x","version":1,"reviewer":"Ana"}`, "not a file of screening decisions"},
		"newer version":  {strings.Replace(good, `"version":1`, `"version":9`, 1), "update Clinsight"},
		"bad reviewer":   {strings.Replace(good, `"Ana"`, `"A/na"`, 1), "character '/'"},
		"unknown stage":  {strings.Replace(good, "title-abstract", "abstract", 1), "unknown screening stage"},
		"no reason":      {strings.Replace(good, `"include":true`, `"include":false`, 1), "without a reason"},
		"no id":          {strings.Replace(good, `"id":"r1"`, `"id":""`, 1), "no valid record ID"},
		"decided twice":  {strings.Replace(good, `]}`, `,{"id":"r1","stage":"title-abstract","include":true}]}`, 1), "decided twice"},
		"too large file": {`{"format":"` + strings.Repeat("x", MaxDecisionsFileBytes) + `"}`, "larger than"},
	} {
		_, err := ReadDecisionsFile(strings.NewReader(tc.body))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", name, err, tc.want)
		}
	}
}

// TestPRISMACountsOfBothStagesEqualHandCounts screens a review at title
// and abstract and then at full text, with two reviewers, and checks every
// box of the PRISMA 2020 flow diagram against counts made by hand.
//
// 14 records identified, 2 duplicates removed: 12 candidates r1..r12.
// Title/abstract (both reviewers): r1-r6 included by both; r7, r8
// excluded by both (Wrong population); r9 excluded by both for different
// reasons (agreed exclusion, the first reviewer's reason); r10 a conflict
// resolved as included; r11 an open conflict; r12 not screened.
// So: screened 11 (r1-r11), excluded 3, awaiting a decision 1 (r11, a
// conflict), sought 7 (r1-r6, r10), not yet screened 14 − 2 − 11 = 1.
// Full text: r6 not retrieved; r1, r2 included by both; r3 excluded by
// both (Wrong outcome); r4 excluded by both, Ana for Wrong outcome, Ben
// for Wrong design (a full-text conflict, open); r5 decided by Ana only;
// r10 excluded by both (Conference abstract only).
// So: not retrieved 1, assessed 4 (r1, r2, r3, r10), reports excluded 2
// (Wrong outcome 1, Conference abstract only 1), awaiting 2 (r4, r5; one
// conflict), studies included 2.
func TestPRISMACountsOfBothStagesEqualHandCounts(t *testing.T) {
	p := teamProject(t, 12, 14, 2)
	mustDo(t, p.AddReviewer("Ana"))
	mustDo(t, p.AddReviewer("Ben"))
	both := func(stage Stage, id string, include bool, reasonA, reasonB string) {
		t.Helper()
		mustDo(t, p.DecideAs("Ana", stage, id, include, reasonA))
		mustDo(t, p.DecideAs("Ben", stage, id, include, reasonB))
	}
	ta := StageTitleAbstract
	for i := 1; i <= 6; i++ {
		both(ta, fmt.Sprintf("r%d", i), true, "", "")
	}
	both(ta, "r7", false, "Wrong population", "Wrong population")
	both(ta, "r8", false, "Wrong population", "Wrong population")
	both(ta, "r9", false, "Wrong design", "Wrong population")
	mustDo(t, p.DecideAs("Ana", ta, "r10", true, ""))
	mustDo(t, p.DecideAs("Ben", ta, "r10", false, "Wrong population"))
	mustDo(t, p.Resolve(ta, "r10", true, "", "discussed", ""))
	mustDo(t, p.DecideAs("Ana", ta, "r11", false, "Wrong population"))
	mustDo(t, p.DecideAs("Ben", ta, "r11", true, ""))

	p.SetFullTextStage(true)
	if len(p.Included()) != 0 {
		t.Errorf("with the full-text stage on, nothing is included before it: %v", p.Included())
	}
	ft := StageFullText
	mustDo(t, p.SetNotRetrieved("r6", "no access through the library"))
	both(ft, "r1", true, "", "")
	both(ft, "r2", true, "", "")
	both(ft, "r3", false, "Wrong outcome", "wrong outcome")
	both(ft, "r4", false, "Wrong outcome", "Wrong design")
	mustDo(t, p.DecideAs("Ana", ft, "r5", true, ""))
	both(ft, "r10", false, "Conference abstract only", "Conference abstract only")
	if err := p.DecideAs("Ana", ft, "r6", true, ""); err == nil {
		t.Error("a report not retrieved was assessed")
	}
	if err := p.DecideAs("Ana", ft, "r7", true, ""); err == nil {
		t.Error("a record excluded at title and abstract was assessed at full text")
	}

	got := p.PRISMA()
	want := PRISMACounts{
		Identified: 14, Duplicates: 2, Screened: 11, Excluded: 3, NotScreened: 1, Undecided: 1, Conflicts: 1,
		Reasons:       map[string]int{"Wrong population": 2, "Wrong design": 1},
		FullTextStage: true, Sought: 7, NotRetrieved: 1, Assessed: 4, ReportsExcluded: 2,
		ReportReasons:    map[string]int{"Wrong outcome": 1, "Conference abstract only": 1},
		AwaitingFullText: 2, FullTextConflicts: 1, Included: 2,
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("PRISMA counts\n got %+v\nwant %+v", got, want)
	}
	if !slices.Equal(p.Included(), []string{"r1", "r2"}) {
		t.Errorf("included %v", p.Included())
	}
	// The boxes add up as the diagram draws them.
	if got.Screened != got.Excluded+got.Undecided+got.Sought || got.Sought != got.NotRetrieved+got.Assessed+got.AwaitingFullText ||
		got.Assessed != got.ReportsExcluded+got.Included || got.Identified != got.Duplicates+got.NotScreened+got.Screened {
		t.Errorf("the counts do not add up: %+v", got)
	}
	ag, err := p.Agreement(ft)
	mustDo(t, err)
	if ag.Records != 5 || ag.BothInclude != 2 || ag.BothExclude != 3 || ag.Kappa != 1 {
		t.Errorf("full-text agreement %+v (include/exclude agree on r1-r4 and r10; r4's reasons differ)", ag)
	}
	var buf bytes.Buffer
	mustDo(t, WritePRISMADiagram(&buf, got))
	if buf.Len() == 0 {
		t.Error("no diagram")
	}
}

// TestOldSavedReviewLoadsUnchanged reads a project saved by the Clinsight
// of before reviewers and the full-text stage (format version 1, written
// by that version's code) and checks that it is read, counted and saved
// again exactly as before.
func TestOldSavedReviewLoadsUnchanged(t *testing.T) {
	p, raw := readOldProject(t)
	if p.Version != 1 || p.HasReviewers() || p.FullTextStage || len(p.Decisions) != 6 {
		t.Fatalf("read as version %d, reviewers %v, full-text stage %v, %d decisions", p.Version, p.Reviewers, p.FullTextStage, len(p.Decisions))
	}
	if got := p.Included(); !slices.Equal(got, []string{"a1", "a6"}) {
		t.Errorf("included %v, want a1 and a6", got)
	}
	c := p.PRISMA()
	if c.Identified != 40 || c.Screened != 6 || c.Excluded != 3 || c.Included != 2 || c.Undecided != 1 || c.FullTextStage || c.Sought != 0 {
		t.Errorf("PRISMA %+v", c)
	}
	// Saved again, it is the same JSON, still version 1.
	checkSavedAgainUnchanged(t, p, raw)
	// One decision in it goes on as before.
	mustDo(t, p.Decide("a7", false, "Wrong population"))
	if p.Version != 1 {
		t.Error("a decision changed the format version")
	}
}

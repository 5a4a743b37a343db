package ui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app/evidence"
)

// decisionCell returns the Screen step's decision cell of a record.
func decisionCell(t testing.TB, v *screeningView, id string) string {
	i := slices.Index(v.rows, id)
	if i < 0 {
		t.Fatalf("%s is not in the table %v", id, v.rows)
	}
	text, _ := v.cell(i, 1)
	return text
}

// TestEvidenceScreenReviewerSwitchAndFullTextStage: two reviewers are
// named in the Screen step and take turns (the step asks who is
// screening); each sees only their own decisions until both have decided
// a record, then the agreement or the conflict; the agreement and kappa
// are shown, a conflict is resolved; then the full-text stage assesses the
// records included, against the full text when imported, with a report
// not retrieved, and the studies included follow both reviewers' full-text
// decisions. A decisions file exported from the bar merges back.
func TestEvidenceScreenReviewerSwitchAndFullTextStage(t *testing.T) {
	svc := newFakeReviews("lit")
	ri, err := svc.Create("pair", "lit", evidence.PICO{Population: "adults", Intervention: "statins"})
	if err != nil {
		t.Fatal(err)
	}
	r := ri.(*fakeReview)
	ids := []string{"r1", "r2", "r3", "r4"}
	r.p.Search = &evidence.SearchRun{Query: "statins", Total: 4, IDs: ids, At: time.Now()}
	for _, id := range ids {
		r.p.Studies[id] = evidence.StudyInfo{Title: "Statins trial " + id, Year: 2021}
	}
	r.texts = map[string]evidence.StudyText{"r1": {ID: "r1", FullText: true, Source: "r1.pdf",
		Chunks: []evidence.Chunk{{N: 1, Section: "Methods", Text: "Adults were randomised to statins."}}}}

	s := newTestEvidenceScreen(t, svc, nil)
	waitUntil(t, "the project opened", func() bool { return s.project() != nil && len(s.screening.rows) == len(ids) })
	v := s.screening
	onUI(t, func(t testing.TB) {
		if !v.team.screenerSel.Disabled() || !strings.Contains(v.team.reviewers.Text, "One reviewer") {
			t.Fatalf("a review without reviewers: %q", v.team.reviewers.Text)
		}
		v.team.AddReviewer("Ana")
		v.team.AddReviewer("Ben")
		if !slices.Equal(v.team.screenerSel.Options, []string{"Ana", "Ben"}) || !strings.Contains(v.team.reviewers.Text, "Say who is screening") {
			t.Fatalf("reviewers %v, %q", v.team.screenerSel.Options, v.team.reviewers.Text)
		}
		// Ana screens.
		v.team.screenerSel.SetSelected("Ana")
		if r.Screener() != "Ana" {
			t.Fatalf("screener %q", r.Screener())
		}
		v.Decide("r1", true, "")
		v.Decide("r2", false, "Wrong population")
		v.Decide("r3", true, "")
		if got := decisionCell(t, v, "r1"); got != "Included" {
			t.Fatalf("Ana's decision on r1 shows %q", got)
		}
		// Ben's turn: Ana's decisions are hidden from him.
		v.team.screenerSel.SetSelected("Ben")
		for _, id := range []string{"r1", "r2", "r3"} {
			if got := decisionCell(t, v, id); got != "—" {
				t.Fatalf("Ben sees %q on %s before deciding it: screening is not blind", got, id)
			}
		}
		v.Decide("r1", true, "")
		v.Decide("r2", true, "")
		v.Decide("r3", true, "")
		if got := decisionCell(t, v, "r1"); got != "Included · agreed" {
			t.Fatalf("r1 after both decided: %q", got)
		}
		if got := decisionCell(t, v, "r2"); got != "Included · conflict" {
			t.Fatalf("r2 after both decided: %q", got)
		}
		// Ana r1 I, r2 E, r3 I; Ben I, I, I: po 2/3, pe 2/3·1 + 1/3·0 =
		// 2/3, kappa 0.
		want := "Title and abstract: 3 records decided by both, agreement 67%, Cohen's kappa 0.00; 1 conflicts, 1 open"
		if v.team.agreement.Text != want {
			t.Fatalf("agreement %q, want %q", v.team.agreement.Text, want)
		}
		if !v.team.Resolve(evidence.StageTitleAbstract, "r2", false, "Wrong population", "Ben misread the population", "Cy") {
			t.Fatal("the conflict was not resolved")
		}
		if !strings.HasSuffix(v.team.agreement.Text, "1 conflicts, 0 open") || !strings.Contains(v.prismaCounts.Text, "included 2") {
			t.Fatalf("after the resolution: %q; PRISMA %q", v.team.agreement.Text, v.prismaCounts.Text)
		}
		if got := decisionCell(t, v, "r2"); got != "Included · resolved: excluded" {
			t.Fatalf("r2 after the resolution, as Ben: %q", got)
		}

		// The full-text stage, Ben screening.
		v.fulltext.stageCheck.SetChecked(true)
		if p := s.project(); !p.FullTextStage || len(p.Included()) != 0 {
			t.Fatalf("full-text stage %v, included %v", p.FullTextStage, p.Included())
		}
		if !slices.Equal(v.fulltext.rows, []string{"r1", "r3"}) || !strings.Contains(v.fulltext.status.Text, "Reports sought 2") {
			t.Fatalf("reports sought %v, %q", v.fulltext.rows, v.fulltext.status.Text)
		}
		v.fulltext.table.Select(widget.TableCellID{Row: 0, Col: 3})
		if !strings.Contains(richText(v.fulltext.detail), "Full text (r1.pdf, 1 passages)") || !strings.Contains(richText(v.fulltext.detail), "randomised to statins") {
			t.Fatalf("the report's full text is not shown: %q", richText(v.fulltext.detail))
		}
		v.fulltext.Decide("r1", true, "")
		v.fulltext.SetNotRetrieved("r3", "no access through the library")
		if !strings.Contains(v.fulltext.status.Text, "not retrieved 1 · assessed 0 · excluded 0 · awaiting 1 · studies included 0") {
			t.Fatalf("after Ben's full-text decision: %q", v.fulltext.status.Text)
		}
		// Ana's turn at full text: Ben's decision is hidden.
		v.team.screenerSel.SetSelected("Ana")
		if got, _ := v.fulltext.cell(0, 1); got != "—" {
			t.Fatalf("Ana sees %q on r1 at full text before deciding it", got)
		}
		v.fulltext.Decide("r1", true, "")
		if !strings.Contains(v.fulltext.status.Text, "assessed 1 · excluded 0 · awaiting 0 · studies included 1") {
			t.Fatalf("after both full-text decisions: %q", v.fulltext.status.Text)
		}
		if got := s.project().Included(); !slices.Equal(got, []string{"r1"}) {
			t.Fatalf("included %v", got)
		}
		if !strings.Contains(v.team.agreement.Text, "Full text: 1 records decided by both, agreement 100%") {
			t.Fatalf("full-text agreement %q", v.team.agreement.Text)
		}
	})

	// Ana's decisions go out as a file and merge back unchanged.
	path := filepath.Join(t.TempDir(), "ana.json")
	onUI(t, func(t testing.TB) {
		if err := r.ExportDecisions(path, "Ana"); err != nil {
			t.Fatal(err)
		}
		v.team.ImportDecisions(path)
		if !strings.Contains(s.notice.Text, "Merged Ana's decisions: 0 new, 0 updated, 4 unchanged") {
			t.Fatalf("import notice %q", s.notice.Text)
		}
	})
	if raw, err := os.ReadFile(path); err != nil || strings.Contains(string(raw), "Ben") {
		t.Errorf("Ana's file names Ben (%v)", err)
	}
}

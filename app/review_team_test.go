package app

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/export"
)

// TestReviewTeamScreensBlindThenFullText runs the real review service on
// the demo literature (with its imported full texts): decisions need a
// screener once the review has reviewers; the learner learns from the
// screener's own decisions only; the decisions both reviewers agree on
// become the review's; the full-text stage includes what both include at
// full text; the saved project keeps the reviewers; and the workbook
// names the file each report's full text came from.
func TestReviewTeamScreensBlindThenFullText(t *testing.T) {
	ctx := context.Background()
	ws := literatureWorkspace(t)
	r := searchedReview(t, ws, "Team", "ablation OR carcinoma OR hepatocellular", 200)
	// Three candidates with a full text and one without.
	var withText, without []string
	for _, id := range r.Project().Search.IDs {
		st, err := r.StudyText(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if st.FullText && len(withText) < 3 {
			withText = append(withText, id)
		} else if !st.FullText && len(without) < 1 {
			without = append(without, id)
		}
	}
	if len(withText) < 3 || len(without) < 1 {
		t.Fatalf("candidates with a full text %v, without %v", withText, without)
	}
	chosen := append(slices.Clone(withText), without...)

	for _, n := range []string{"Ana", "Ben"} {
		if err := r.AddReviewer(n); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.Decide(chosen[0], true, ""); err == nil || !strings.Contains(err.Error(), "say who is screening") {
		t.Fatalf("a decision without a screener: %v", err)
	}
	if err := r.SetScreener("Cy"); err == nil {
		t.Error("a screener who is not a reviewer was accepted")
	}
	mustSet := func(who string) {
		t.Helper()
		if err := r.SetScreener(who); err != nil {
			t.Fatal(err)
		}
	}
	mustSet("Ana")
	for _, id := range chosen {
		if err := r.Decide(id, true, ""); err != nil {
			t.Fatal(err)
		}
	}
	rk, err := r.Rank(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rk.Decisions != 4 {
		t.Errorf("Ana's ranking learned from %d decisions, want her 4", rk.Decisions)
	}
	mustSet("Ben")
	if rk, err = r.Rank(ctx); err != nil || rk.Decisions != 0 {
		t.Fatalf("Ben's ranking learned from %d decisions (%v): Ana's decisions leaked into his screening", rk.Decisions, err)
	}
	for _, id := range chosen {
		if err := r.Decide(id, true, ""); err != nil {
			t.Fatal(err)
		}
	}
	if got := r.Project().Included(); len(got) != 4 {
		t.Fatalf("included %v, want the 4 both included", got)
	}

	r.Update(func(p *evidence.Project) { p.SetFullTextStage(true) })
	for _, who := range []string{"Ana", "Ben"} {
		mustSet(who)
		for _, id := range withText[:2] {
			if err := r.DecideStage(evidence.StageFullText, id, true, ""); err != nil {
				t.Fatal(err)
			}
		}
		if err := r.DecideStage(evidence.StageFullText, withText[2], false, "Wrong outcome"); err != nil {
			t.Fatal(err)
		}
	}
	if err := r.SetNotRetrieved(without[0], "not in the library"); err != nil {
		t.Fatal(err)
	}
	c := r.Project().PRISMA()
	if c.Sought != 4 || c.NotRetrieved != 1 || c.Assessed != 3 || c.ReportsExcluded != 1 || c.Included != 2 || c.ReportReasons["Wrong outcome"] != 1 {
		t.Errorf("PRISMA %+v", c)
	}

	path := filepath.Join(t.TempDir(), "team.xlsx")
	if err := r.ExportWorkbook(ctx, path, export.Provenance{}); err != nil {
		t.Fatal(err)
	}
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	saved, err := ws.LoadReviewProject("Team")
	if err != nil {
		t.Fatal(err)
	}
	if saved.Version != 2 || !slices.Equal(saved.ReviewerNames(), []string{"Ana", "Ben"}) || !saved.FullTextStage || len(saved.Included()) != 2 {
		t.Errorf("saved: version %d, reviewers %v, full-text stage %v, included %v", saved.Version, saved.ReviewerNames(), saved.FullTextStage, saved.Included())
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows(evidence.FullTextSheet)
	if err != nil || len(rows) != 5 {
		t.Fatalf("full-text sheet: %v, %q", err, rows)
	}
	col := slices.Index(rows[0], "Full text imported from")
	sources := 0
	for _, row := range rows[1:] {
		if col < len(row) && row[col] != "" {
			sources++
		}
	}
	if sources != 3 {
		t.Errorf("%d reports name their full text's file, want 3: %q", sources, rows)
	}
	for _, sheet := range []string{evidence.AgreementSheet, evidence.ConflictsSheet, "Reviewer Ana", "Reviewer Ben"} {
		if idx, _ := f.GetSheetIndex(sheet); idx < 0 {
			t.Errorf("the workbook has no %q sheet", sheet)
		}
	}
}

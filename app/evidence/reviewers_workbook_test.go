package evidence

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/export"
)

// TestWorkbookHasEachReviewersDecisionsAndTheConflicts writes the workbook
// of a review screened by two reviewers at title and abstract and at full
// text, and reads back each reviewer's sheet, the conflicts with their
// resolution, the agreement, the full-text sheet and the PRISMA rows of
// both stages.
func TestWorkbookHasEachReviewersDecisionsAndTheConflicts(t *testing.T) {
	p := teamProject(t, 4, 5, 1)
	p.Studies = map[string]StudyInfo{"r1": {Title: "Drug A in adults", Year: 2020, FirstAuthor: "Smith"}}
	mustDo(t, p.AddReviewer("Ana"))
	mustDo(t, p.AddReviewer("Ben"))
	ta, ft := StageTitleAbstract, StageFullText
	for _, id := range []string{"r1", "r2"} {
		mustDo(t, p.DecideAs("Ana", ta, id, true, ""))
		mustDo(t, p.DecideAs("Ben", ta, id, true, ""))
	}
	mustDo(t, p.DecideAs("Ana", ta, "r3", true, ""))
	mustDo(t, p.DecideAs("Ben", ta, "r3", false, "Wrong population"))
	mustDo(t, p.Resolve(ta, "r3", false, "Wrong population", "The abstract says children", "Cy"))
	mustDo(t, p.DecideAs("Ana", ta, "r4", false, "Wrong design"))
	mustDo(t, p.DecideAs("Ben", ta, "r4", true, ""))
	p.SetFullTextStage(true)
	mustDo(t, p.DecideAs("Ana", ft, "r1", true, ""))
	mustDo(t, p.DecideAs("Ben", ft, "r1", true, ""))
	mustDo(t, p.SetNotRetrieved("r2", "not found"))

	path := filepath.Join(t.TempDir(), "team.xlsx")
	x := &ProjectExport{Project: p, FullTexts: map[string]string{"r1": "r1.pdf"}}
	if _, err := WriteProjectWorkbook(context.Background(), path, x, export.Provenance{}, export.Options{}); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	mustDo(t, err)
	defer f.Close()
	sheets := f.GetSheetList()
	for _, want := range []string{FullTextSheet, AgreementSheet, ConflictsSheet, "Reviewer Ana", "Reviewer Ben"} {
		if !slices.Contains(sheets, want) {
			t.Errorf("sheets %q lack %q", sheets, want)
		}
	}
	if i, j := slices.Index(sheets, ScreeningSheet), slices.Index(sheets, FullTextSheet); j != i+1 {
		t.Errorf("sheets %q: the full-text sheet should follow the screening", sheets)
	}

	ana := wbSheetRows(t, f, "Reviewer Ana")
	if len(ana) != 1+5 { // 4 at title and abstract, 1 at full text
		t.Errorf("Ana's sheet has %d rows: %q", len(ana), ana)
	}
	if r := wbFindRow(ana, "Title and abstract", "r4", "Excluded", "Wrong design", "conflict"); r == nil {
		t.Errorf("Ana's sheet lacks her exclusion of r4: %q", ana)
	}
	if r := wbFindRow(ana, "Full text", "r1", "Included"); r == nil {
		t.Errorf("Ana's sheet lacks her full-text decision: %q", ana)
	}
	ben := wbSheetRows(t, f, "Reviewer Ben")
	if r := wbFindRow(ben, "r3", "Excluded", "Wrong population", "Excluded: Wrong population"); r == nil {
		t.Errorf("Ben's sheet lacks r3 with the review's decision: %q", ben)
	}

	conf := wbSheetRows(t, f, ConflictsSheet)
	if len(conf) != 3 {
		t.Fatalf("conflicts sheet %q: want r3 and r4", conf)
	}
	r3 := wbFindRow(conf, "r3")
	if r3 == nil || wbCell(t, conf, r3, "Status") != "resolved" || wbCell(t, conf, r3, "How it was resolved") != "The abstract says children" ||
		wbCell(t, conf, r3, "Resolved by") != "Cy" || wbCell(t, conf, r3, "Ana: decision") != "Included" || wbCell(t, conf, r3, "Ben: reason") != "Wrong population" {
		t.Errorf("r3's conflict row %q", r3)
	}
	if r4 := wbFindRow(conf, "r4"); r4 == nil || wbCell(t, conf, r4, "Status") != "open" {
		t.Errorf("r4's conflict row %q", r4)
	}

	agr := wbSheetRows(t, f, AgreementSheet)
	// Title and abstract: 4 records, both include 2, Ana only 1, Ben only
	// 1: po 0.5, pe 0.75·0.75 + 0.25·0.25 = 0.625, kappa −1/3.
	row := wbFindRow(agr, "Title and abstract")
	if row == nil || wbCell(t, agr, row, "Records both decided") != "4" || wbCell(t, agr, row, "Raw agreement") != "0.5" ||
		wbCell(t, agr, row, "Cohen's kappa") != "-0.333333333333333" || wbCell(t, agr, row, "Conflicts open") != "1" {
		t.Errorf("agreement row %q", row)
	}

	fts := wbSheetRows(t, f, FullTextSheet)
	if r := wbFindRow(fts, "r1", "r1.pdf", "retrieved", "Included"); r == nil {
		t.Errorf("full-text sheet lacks r1: %q", fts)
	}
	if r := wbFindRow(fts, "r2", "not retrieved: not found"); r == nil {
		t.Errorf("full-text sheet lacks r2 not retrieved: %q", fts)
	}
	prisma := wbSheetRows(t, f, PRISMASheet)
	for _, want := range [][]string{
		{"Reports sought for retrieval", "2"}, {"Reports not retrieved", "1"}, {"Reports assessed for eligibility", "1"},
		{"Studies included in review", "1"}, {"Records awaiting a decision: conflicts between reviewers", "1"},
	} {
		if wbFindRow(prisma, want...) == nil {
			t.Errorf("PRISMA sheet lacks %q: %q", want, prisma)
		}
	}
}

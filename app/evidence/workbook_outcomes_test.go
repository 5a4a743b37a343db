package evidence

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/export"
)

func TestOutcomeSheetNames(t *testing.T) {
	for _, tc := range []struct {
		i          int
		name, what string
		want       string
	}{
		{0, "pain", "Results", "O1 Results - pain"},
		{1, "overall survival at five years after surgery", "Standardized", "O2 Standardized - overall survi"},
		{11, "x: y/z", "Results", "O12 Results - x_ y_z"},
		{2, "pain", "Small-study effects", "O3 Small-study effects - pain"},
		{2, "anything", "Leave-one-out plot with a long name", "O3 Leave-one-out plot with a long name"},
	} {
		got := OutcomeSheet(tc.i, tc.name, tc.what)
		if got != tc.want || (utf8.RuneCountInString(got) > maxSheetName && tc.what != "Leave-one-out plot with a long name") {
			t.Errorf("OutcomeSheet(%d, %q, %q) = %q, want %q", tc.i, tc.name, tc.what, got, tc.want)
		}
	}
}

// TestWorkbookOneBlockPerOutcome writes a review with two outcomes (a
// three-arm study awaiting the arm choice in one, its doses combined in
// the other) and reads the workbook back: one block of sheets per outcome,
// named by the outcome, the arm choices recorded, the combined row equal to
// the hand-computed values (TestCombineMeansByHand).
func TestWorkbookOneBlockPerOutcome(t *testing.T) {
	ctx := context.Background()
	p := armsProject(t)
	mustDo(t, p.SetArms(1, "t3", ArmChoice{Treatment: []string{"low dose", "high dose"}, Control: []string{"placebo"}}))
	x := &ProjectExport{Project: p, OtherMeta: map[int]*OutcomeAnalysis{}}
	studies, rep, err := p.AnalyzeReport(ctx, ReviewMetaPlan())
	mustDo(t, err)
	x.Meta, x.MetaStudies, x.MetaReport, x.MetaPlan = &rep.Result, studies, &rep, ReviewMetaPlan()
	studies, rep1, err := p.AnalyzeReportFor(ctx, 1, ReviewMetaPlan())
	mustDo(t, err)
	x.OtherMeta[1] = &OutcomeAnalysis{Meta: &rep1.Result, Studies: studies, Report: &rep1, Plan: ReviewMetaPlan()}
	if rep.Result.K != 2 || rep1.Result.K != 3 {
		t.Fatalf("k = %d and %d, want 2 (t3 awaits its arms) and 3", rep.Result.K, rep1.Result.K)
	}
	path := filepath.Join(t.TempDir(), "review.xlsx")
	if _, err := WriteProjectWorkbook(ctx, path, x, export.Provenance{AppVersion: "test"}, export.Options{}); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	mustDo(t, err)
	defer f.Close()
	sheets := f.GetSheetList()
	for _, want := range []string{OutcomesSheet, ArmsSheet,
		"O1 Results - response", "O1 Standardized - response", "O1 Meta-analysis - response", "O1 Pooled result - response", "O1 Forest plot - response",
		"O2 Results - pain", "O2 Standardized - pain", "O2 Meta-analysis - pain", "O2 Pooled result - pain", "O2 Forest plot - pain", "O2 Leave-one-out - pain"} {
		if !slices.Contains(sheets, want) {
			t.Errorf("no sheet %q in %q", want, sheets)
		}
	}
	for _, s := range []string{ResultsSheet, StandardSheet, MetaSheet} {
		if slices.Contains(sheets, s) {
			t.Errorf("a review with several outcomes has the single-outcome sheet %q", s)
		}
	}

	outcomes := wbSheetRows(t, f, OutcomesSheet)
	if r := wbFindRow(outcomes, "2", "pain"); r == nil || wbCell(t, outcomes, r, "Studies in the standardized table") != "3" || wbCell(t, outcomes, r, "Meta-analysis") != "MD, k = 3" {
		t.Errorf("Outcomes sheet: %q", outcomes)
	}
	if r := wbFindRow(outcomes, "1", "response"); r == nil || wbCell(t, outcomes, r, "Studies awaiting an arm choice") != "Tan 2020" {
		t.Errorf("Outcomes sheet: %q", outcomes)
	}

	arms := wbSheetRows(t, f, ArmsSheet)
	if r := wbFindRow(arms, "response", "Tan 2020"); r == nil || !strings.HasPrefix(wbCell(t, arms, r, "Status"), "awaiting the user's choice") {
		t.Errorf("Arm choices (response): %q", arms)
	}
	if r := wbFindRow(arms, "pain", "Tan 2020"); r == nil || wbCell(t, arms, r, "Treatment groups") != "low dose; high dose" ||
		wbCell(t, arms, r, "Control groups") != "placebo" || wbCell(t, arms, r, "Combined") != "TRUE" || wbCell(t, arms, r, "Status") != "used" {
		t.Errorf("Arm choices (pain): %q", arms)
	}

	// The response table leaves Tan 2020 out and says why.
	std1 := wbSheetRows(t, f, "O1 Standardized - response")
	if wbFindRow(std1, "Tan 2020", "t3") != nil || !strings.Contains(strings.Join(std1[len(std1)-1], " "), "Tan 2020: the study has 3 groups") {
		t.Errorf("O1 Standardized: %q", std1)
	}
	// The pain table has the doses combined, with the derivation.
	std2 := wbSheetRows(t, f, "O2 Standardized - pain")
	r := wbFindRow(std2, "Tan 2020", "t3")
	if r == nil {
		t.Fatalf("O2 Standardized: %q", std2)
	}
	if d := wbCell(t, std2, r, "Derivations"); !strings.Contains(d, `groups chosen by the user: treatment "low dose" + "high dose" (combined) vs control "placebo"`) ||
		!strings.Contains(d, "Cochrane Handbook Table 6.5.a") {
		t.Errorf("derivations %q", d)
	}
	meta2 := wbSheetRows(t, f, "O2 Meta-analysis - pain")
	mr := wbFindRow(meta2, "Tan 2020")
	if mr == nil {
		t.Fatalf("O2 Meta-analysis: %q", meta2)
	}
	for col, want := range map[string]float64{"m1i (treatment mean)": 7, "sd1i (treatment SD)": 3.0342868, "n1i (treatment size)": 30, "m2i (control mean)": 4, "n2i (control size)": 5} {
		v, err := strconv.ParseFloat(wbCell(t, meta2, mr, col), 64)
		if err != nil || math.Abs(v-want) > 1e-6 {
			t.Errorf("%s = %q, want %v", col, wbCell(t, meta2, mr, col), want)
		}
	}
	prov := wbSheetRows(t, f, "Provenance")
	if wbFindRow(prov, "Outcome 2") == nil || !strings.Contains(strings.Join(wbFindRow(prov, "Outcome 2"), " "), "pain (means and SDs in two groups)") {
		t.Errorf("provenance: %q", prov)
	}
}

// TestWorkbookOneOutcomeRecordsArmChoices: a review with one outcome keeps
// its sheet names, and the Arm choices sheet records the choice.
func TestWorkbookOneOutcomeRecordsArmChoices(t *testing.T) {
	p := armsProject(t)
	mustDo(t, p.RemoveOutcome(1))
	mustDo(t, p.SetArms(0, "t3", ArmChoice{Treatment: []string{"high dose"}, Control: []string{"placebo"}}))
	path := filepath.Join(t.TempDir(), "review.xlsx")
	if _, err := WriteProjectWorkbook(context.Background(), path, &ProjectExport{Project: p}, export.Provenance{AppVersion: "test"}, export.Options{}); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	mustDo(t, err)
	defer f.Close()
	if got := f.GetSheetList(); !slices.Contains(got, ResultsSheet) || !slices.Contains(got, StandardSheet) || !slices.Contains(got, ArmsSheet) || slices.Contains(got, OutcomesSheet) {
		t.Fatalf("sheets %q", got)
	}
	arms := wbSheetRows(t, f, ArmsSheet)
	if r := wbFindRow(arms, "response", "Tan 2020"); r == nil || wbCell(t, arms, r, "Treatment groups") != "high dose" || wbCell(t, arms, r, "Combined") != "FALSE" {
		t.Errorf("Arm choices: %q", arms)
	}
	std := wbSheetRows(t, f, StandardSheet)
	if r := wbFindRow(std, "Tan 2020", "t3", "12", "20", "1", "5"); r == nil || !strings.Contains(strings.Join(r, " "), `groups chosen by the user: treatment "high dose" vs control "placebo"`) {
		t.Errorf("standardized: %q", std)
	}
}

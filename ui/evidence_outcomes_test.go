package ui

import (
	"context"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app/evidence"
)

// Groups of the fake studies' results for the outcome "major
// complications": study b is a three-arm trial.
var (
	threeArms = []string{"MWA 60 W", "MWA 100 W", "RFA"}
	numberOf  = func(v float64) *evidence.Number { return &evidence.Number{Value: v, Sources: []int{1}} }
)

// complicationResults are the results the fake extraction gives: two
// groups for a and c, three for b.
func complicationResults() map[string]evidence.ResultExtraction {
	group := func(name, role string, events, n float64) evidence.ResultGroup {
		return evidence.ResultGroup{Name: name, Role: role, Events: numberOf(events), N: numberOf(n)}
	}
	return map[string]evidence.ResultExtraction{
		"a": {StudyID: "a", Groups: []evidence.ResultGroup{group("MWA", "treatment", 4, 40), group("RFA", "control", 9, 42)}},
		"b": {StudyID: "b", Groups: []evidence.ResultGroup{group(threeArms[0], "treatment", 10, 50), group(threeArms[1], "treatment", 8, 50), group(threeArms[2], "control", 20, 60)}},
		"c": {StudyID: "c", Groups: []evidence.ResultGroup{group("MWA", "treatment", 3, 30), group("RFA", "control", 7, 31)}},
	}
}

// fakeIncluded is a fake review whose three candidates are included and
// whose first outcome is mortality (two groups), nothing extracted yet.
func fakeIncluded(t *testing.T, svc *fakeReviews, name string) *fakeReview {
	t.Helper()
	r := fakeSearched(t, svc, name)
	for _, id := range r.p.Search.IDs {
		if err := r.p.Decide(id, true, ""); err != nil {
			t.Fatal(err)
		}
	}
	r.p.SetResult(evidence.ResultSpec{Outcome: "mortality", Cohort: "MWA (treatment) vs RFA (control)", Measure: evidence.TwoGroups})
	return r
}

// tapCheck taps a check box in the middle of its box, as a user does.
func tapCheck(c *widget.Check) {
	test.TapAt(c, fyne.NewPos(c.MinSize().Height/2, c.Size().Height/2))
}

// rowOf returns the standardized table's row of study id, -1 when absent.
func rowOf(v *resultsView, id string) int {
	return slices.IndexFunc(v.standardRows, func(r evidence.StandardRow) bool { return r.StudyID == id })
}

// TestEvidenceScreenOutcomes: a second outcome is added (a name already
// used is refused in the dialog, nothing typed lost), chosen in either
// step, and extracted and analysed on its own; its three-arm study says it
// needs an arm choice and stays out of the analysis until the user
// chooses; removing an outcome asks first and the last cannot be removed.
func TestEvidenceScreenOutcomes(t *testing.T) {
	svc := newFakeReviews("lit")
	r := fakeIncluded(t, svc, "outcomes")
	r.step = func(_ context.Context, p *evidence.Project) error {
		r.mu.Lock()
		i := r.extractedFor[len(r.extractedFor)-1]
		r.mu.Unlock()
		if o := p.OutcomeAt(i); o != nil && o.Result.Outcome == "major complications" {
			o.Results = complicationResults()
		}
		return nil
	}
	s := openTestEvidenceScreen(t, svc, nil)
	onUI(t, func(t testing.TB) {
		rv := s.results
		s.steps.SelectIndex(4)
		if !slices.Equal(rv.bar.sel.Options, []string{"mortality"}) || !rv.bar.removeBtn.Disabled() {
			t.Fatalf("outcomes offered %v, remove disabled %v", rv.bar.sel.Options, rv.bar.removeBtn.Disabled())
		}
		// A name already used: refused in the dialog, which stays open
		// with what was typed.
		test.Tap(rv.bar.addBtn)
		od := rv.addDlg
		if od == nil {
			t.Fatal("no Add outcome dialog")
		}
		od.outcome.SetText("Mortality")
		test.Tap(od.addBtn)
		if rv.addDlg != od || !od.errLabel.Visible() || !strings.Contains(od.errLabel.Text, "already has the outcome") || od.outcome.Text != "Mortality" {
			t.Fatalf("duplicate outcome: dialog open %v, error %q (visible %v), text %q", rv.addDlg == od, od.errLabel.Text, od.errLabel.Visible(), od.outcome.Text)
		}
		if od.cohort.Text != "MWA (treatment) vs RFA (control)" || od.shape.SelectedIndex() != shapeIndex(evidence.TwoGroups) {
			t.Errorf("the dialog did not start from the outcome shown: cohort %q, shape %q", od.cohort.Text, od.shape.Selected)
		}
		od.outcome.SetText("major complications")
		test.Tap(od.addBtn)
		if rv.addDlg != nil || s.project().NumOutcomes() != 2 {
			t.Fatalf("after Add: dialog open %v, %d outcomes", rv.addDlg != nil, s.project().NumOutcomes())
		}
		if want := []string{"mortality", "major complications"}; !slices.Equal(rv.bar.sel.Options, want) || rv.bar.sel.SelectedIndex() != 1 || rv.current != 1 {
			t.Fatalf("outcomes offered %v, selected %d (current %d)", rv.bar.sel.Options, rv.bar.sel.SelectedIndex(), rv.current)
		}
		if rv.outcome.Text != "major complications" || rv.bar.removeBtn.Disabled() || s.meta.bar.sel.SelectedIndex() != 1 {
			t.Errorf("the new outcome shown: name %q, remove disabled %v, meta step's outcome %d", rv.outcome.Text, rv.bar.removeBtn.Disabled(), s.meta.bar.sel.SelectedIndex())
		}
		test.Tap(rv.resultsBtn)
	})
	waitIdle(t, s)
	onUI(t, func(t testing.TB) {
		rv, p := s.results, s.project()
		r.mu.Lock()
		got := slices.Clone(r.extractedFor)
		r.mu.Unlock()
		if !slices.Equal(got, []int{1}) {
			t.Fatalf("extracted for outcomes %v, want [1]", got)
		}
		if len(p.OutcomeAt(0).Results) != 0 || len(p.OutcomeAt(1).Results) != 3 {
			t.Fatalf("results: mortality %d, complications %d", len(p.OutcomeAt(0).Results), len(p.OutcomeAt(1).Results))
		}
		if rows, _ := rv.groupsTable.Length(); rows != 7 {
			t.Errorf("groups table: %d rows, want 7", rows)
		}
		// The three-arm study has a row saying it needs a choice.
		b := rowOf(rv, "b")
		if len(rv.standardRows) != 3 || b < 0 {
			t.Fatalf("standardized rows %+v", rv.standardRows)
		}
		last := len(rv.standardCols) - 1
		if !strings.Contains(rv.standardCell(b, 1), "3 groups: choose arms") || !strings.Contains(rv.standardCell(b, last-1), "not analysed until") || rv.standardCell(b, 2) != "" {
			t.Errorf("row of the three-arm study: arms %q, check %q, events %q", rv.standardCell(b, 1), rv.standardCell(b, last-1), rv.standardCell(b, 2))
		}
		if !strings.Contains(rv.status.Text, "Study b 2020") || !strings.Contains(rv.status.Text, "Choose arms") {
			t.Errorf("status %q", rv.status.Text)
		}
		// The other outcome is as it was.
		s.steps.SelectIndex(5)
		s.meta.bar.sel.SetSelectedIndex(0)
		if rv.current != 0 || rv.outcome.Text != "mortality" || rv.bar.sel.SelectedIndex() != 0 {
			t.Fatalf("after choosing mortality on the Meta-analysis step: current %d, outcome %q", rv.current, rv.outcome.Text)
		}
		if rows, _ := rv.groupsTable.Length(); rows != 0 || len(rv.standardRows) != 0 {
			t.Errorf("mortality shows %d groups, %d standardized rows", rows, len(rv.standardRows))
		}
		test.Tap(s.meta.runBtn)
	})
	waitUntil(t, "mortality's analysis to fail", func() bool { return strings.Contains(s.meta.status.Text, "could not run") })
	onUI(t, func(testing.TB) {
		s.meta.bar.sel.SetSelectedIndex(1)
		test.Tap(s.meta.runBtn)
	})
	// Two studies pooled; the three-arm study is named as left out.
	waitUntil(t, "the complications' analysis", func() bool { return s.meta.forest.Image != nil && strings.Contains(s.meta.status.Text, "k = 2") })
	onUI(t, func(t testing.TB) {
		if st := s.meta.status.Text; !strings.Contains(st, "Not in the analysis until the groups to compare are chosen") || !strings.Contains(st, "Study b 2020") {
			t.Errorf("meta status %q", st)
		}
		// Choosing the arms: errors in the dialog, the checks kept.
		rv := s.results
		s.steps.SelectIndex(4)
		if !rv.armsBtn.Disabled() {
			t.Error("Choose arms… enabled with no study selected")
		}
		rv.standardTable.Select(widget.TableCellID{Row: rowOf(rv, "b"), Col: 0})
		test.Tap(rv.armsBtn)
		ad := rv.armsDlg
		if ad == nil || ad.id != "b" || !slices.Equal(ad.groups, threeArms) || len(ad.control) != 3 || !ad.clearBtn.Disabled() {
			t.Fatalf("arms dialog %+v", ad)
		}
		test.Tap(ad.okBtn)
		if rv.armsDlg != ad || !strings.Contains(ad.errLabel.Text, "Choose at least one treatment group of Study b 2020") {
			t.Fatalf("nothing chosen: dialog open %v, error %q", rv.armsDlg == ad, ad.errLabel.Text)
		}
		tapCheck(ad.treat[0])
		tapCheck(ad.control[0])
		test.Tap(ad.okBtn)
		if rv.armsDlg != ad || !strings.Contains(ad.errLabel.Text, "chosen twice") || !ad.treat[0].Checked || !ad.control[0].Checked {
			t.Fatalf("a group on both sides: error %q, checks %v %v", ad.errLabel.Text, ad.treat[0].Checked, ad.control[0].Checked)
		}
		if _, ok := s.project().OutcomeAt(1).Arms["b"]; ok {
			t.Fatal("a refused choice was recorded")
		}
		tapCheck(ad.control[0])
		tapCheck(ad.treat[1])
		tapCheck(ad.control[2])
		test.Tap(ad.okBtn)
		if rv.armsDlg != nil {
			t.Fatalf("dialog still open: %q", ad.errLabel.Text)
		}
		got := s.project().OutcomeAt(1).Arms["b"]
		if !slices.Equal(got.Treatment, threeArms[:2]) || !slices.Equal(got.Control, threeArms[2:]) {
			t.Fatalf("arm choice %+v", got)
		}
		if _, ok := s.project().OutcomeAt(0).Arms["b"]; ok {
			t.Error("the choice was recorded for mortality too")
		}
		b := rowOf(rv, "b")
		if !strings.Contains(rv.standardCell(b, 1), "(combined)") || rv.standardCell(b, 2) != "18" || rv.standardCell(b, 3) != "100" {
			t.Errorf("row of the three-arm study: arms %q, events %q of %q", rv.standardCell(b, 1), rv.standardCell(b, 2), rv.standardCell(b, 3))
		}
		if strings.Contains(rv.status.Text, "Choose arms") {
			t.Errorf("status still asks for a choice: %q", rv.status.Text)
		}
		test.Tap(s.meta.runBtn)
	})
	waitUntil(t, "the analysis with the three-arm study", func() bool { return strings.Contains(s.meta.status.Text, "k = 3") })
	onUI(t, func(t testing.TB) {
		if st := s.meta.status.Text; strings.Contains(st, "Not in the analysis") {
			t.Errorf("meta status %q", st)
		}
		// Clear forgets the choice.
		rv := s.results
		rv.standardTable.Select(widget.TableCellID{Row: rowOf(rv, "b"), Col: 0})
		test.Tap(rv.armsBtn)
		ad := rv.armsDlg
		if ad == nil || !ad.treat[0].Checked || !ad.treat[1].Checked || !ad.control[2].Checked || ad.clearBtn.Disabled() {
			t.Fatalf("the dialog does not show the choice: %+v", ad)
		}
		test.Tap(ad.clearBtn)
		if _, ok := s.project().OutcomeAt(1).Arms["b"]; ok || rv.armsDlg != nil || !strings.Contains(rv.standardCell(rowOf(rv, "b"), 1), "choose arms") {
			t.Fatalf("after Clear: arms %+v, row %q", s.project().OutcomeAt(1).Arms, rv.standardCell(rowOf(rv, "b"), 1))
		}

		// Removing asks first; the last outcome cannot be removed.
		test.Tap(rv.bar.removeBtn)
		top := s.window.Canvas().Overlays().Top()
		btn := findButton(top, "Remove")
		if btn == nil || !strings.Contains(labelsText(top), "major complications") {
			t.Fatalf("no confirmation naming the outcome: %q", labelsText(top))
		}
		test.Tap(btn)
		if p := s.project(); p.NumOutcomes() != 1 || p.Result.Outcome != "mortality" {
			t.Fatalf("after Remove: %d outcomes, first %q", p.NumOutcomes(), p.Result.Outcome)
		}
		if !slices.Equal(rv.bar.sel.Options, []string{"mortality"}) || rv.current != 0 || !rv.bar.removeBtn.Disabled() || !s.meta.bar.removeBtn.Disabled() {
			t.Errorf("after Remove: outcomes %v, current %d", rv.bar.sel.Options, rv.current)
		}
		if err := rv.RemoveOutcome(0); err == nil || s.project().NumOutcomes() != 1 {
			t.Errorf("the last outcome was removed (%v)", err)
		}
	})
}

package ui

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/clinsight/clinsight/app/evidence"
)

// TestEvidenceSearchEveryMatchAndPICOParts: the Search step builds the
// query from the population AND the treatment terms, the outcome terms
// only when the user asks (a choice saved with the review); by default a
// search keeps every match, all of them listed in the virtualised
// candidates table and the screening table, and the status says so.
func TestEvidenceSearchEveryMatchAndPICOParts(t *testing.T) {
	ws, _ := newLiteratureWorkspace(t, false)
	s := newTestEvidenceScreen(t, ws.Reviews(), ws.Logger())
	waitUntil(t, "the sources listed", func() bool { return slices.Contains(s.sources, "lit") })
	onUI(t, func(t testing.TB) {
		s.NewProject("every match", "lit", evidence.PICO{Population: "hepatocellular carcinoma", Intervention: "microwave ablation", Outcome: "local tumor progression"})
		v := s.search
		if v.joinOut.Checked || v.limitSel.Selected != "every match" {
			t.Fatalf("defaults: outcomes joined %v, limit %q", v.joinOut.Checked, v.limitSel.Selected)
		}
		v.terms[0].SetText("hepatocellular carcinoma\nHCC")
		v.terms[1].SetText("microwave ablation\nradiofrequency ablation")
		v.terms[3].SetText("local tumor progression")
		test.Tap(v.buildBtn)
		if want := `("hepatocellular carcinoma" OR HCC) AND ("microwave ablation" OR "radiofrequency ablation")`; v.query.Text != want {
			t.Fatalf("default query %q, want %q", v.query.Text, want)
		}
		v.joinOut.SetChecked(true)
		test.Tap(v.buildBtn)
		if !strings.HasSuffix(v.query.Text, ` AND "local tumor progression"`) || !s.project().Terms.JoinOutcomes {
			t.Fatalf("query with the outcome %q", v.query.Text)
		}
		v.joinOut.SetChecked(false)
		test.Tap(v.buildBtn)
		v.query.SetText("carcinoma OR ablation OR cancer")
		test.Tap(v.searchBtn)
	})
	waitDone(t, s, "search")
	onUI(t, func(t testing.TB) {
		p, v := s.project(), s.search
		if p.Search == nil || len(p.Search.IDs) < 30 || int64(len(p.Search.IDs)+len(p.Search.DuplicateOf)) != p.Search.Total {
			t.Fatalf("search of every match: %+v", p.Search)
		}
		if rows, _ := v.candidates.Length(); rows != len(p.Search.IDs) {
			t.Errorf("candidates table: %d rows, %d candidates", rows, len(p.Search.IDs))
		}
		if want := fmt.Sprintf("all %d are candidates", len(p.Search.IDs)); !strings.Contains(v.status.Text, want) {
			t.Errorf("status %q, want %q", v.status.Text, want)
		}
		s.screening.show(p)
		if rows, _ := s.screening.table.Length(); rows != len(p.Search.IDs) {
			t.Errorf("screening table: %d rows, %d candidates", rows, len(p.Search.IDs))
		}
		v.joinOut.SetChecked(true)
	})
	waitSaved(t, s)
	p, err := ws.LoadReviewProject("every match")
	if err != nil || !p.Terms.JoinOutcomes || len(p.Search.IDs) < 30 {
		t.Fatalf("saved: %+v, %v", p, err)
	}
}

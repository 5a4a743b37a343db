package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// TestEvidenceSearchComparisonTermsOptional: the terms editor shows the
// comparison terms in a row of their own; the query built from the terms
// joins the condition AND the treatment terms, leaves the comparison and
// the outcome terms out by default and ANDs each as its own group when the
// user requires it, choices kept in the project.
func TestEvidenceSearchComparisonTermsOptional(t *testing.T) {
	svc := newFakeReviews("lit")
	r := fakeSearched(t, svc, "comparison")
	r.p.Terms = evidence.SearchTerms{Conditions: []string{"asthma"}, Treatments: []string{"budesonide"},
		Comparators: []string{"placebo", "montelukast"}, Outcomes: []string{"exacerbation"}}
	s := openTestEvidenceScreen(t, svc, nil)
	onUI(t, func(t testing.TB) {
		v := s.search
		if got := v.terms[2].Text; got != "placebo\nmontelukast" {
			t.Fatalf("comparison row %q", got)
		}
		if v.joinComp.Checked || v.joinOut.Checked {
			t.Fatalf("required by default: the comparison terms %v, the outcome terms %v", v.joinComp.Checked, v.joinOut.Checked)
		}
		test.Tap(v.buildBtn)
		if q := s.project().Query; q != "asthma AND budesonide" {
			t.Fatalf("default query %q, want the comparison left out", q)
		}
		v.joinComp.SetChecked(true)
		test.Tap(v.buildBtn)
		p := s.project()
		if q := p.Query; q != "asthma AND budesonide AND (placebo OR montelukast)" || !p.Terms.JoinComparators || p.Terms.JoinOutcomes {
			t.Fatalf("with the comparison switched on: query %q, kept %v %v", q, p.Terms.JoinComparators, p.Terms.JoinOutcomes)
		}
		v.joinOut.SetChecked(true)
		v.terms[2].SetText("placebo")
		test.Tap(v.buildBtn)
		if q := s.project().Query; q != "asthma AND budesonide AND placebo AND exacerbation" {
			t.Fatalf("with both switched on: query %q", q)
		}
		v.joinComp.SetChecked(false)
		test.Tap(v.buildBtn)
		p = s.project()
		if q := p.Query; q != "asthma AND budesonide AND exacerbation" || p.Terms.JoinComparators || !p.Terms.JoinOutcomes {
			t.Fatalf("with the outcome alone switched on: query %q, kept %v %v", q, p.Terms.JoinComparators, p.Terms.JoinOutcomes)
		}
	})
}

// TestEvidenceSuggestTermsFillsTheComparisonRow: the model's terms (a
// scripted reply through the real client and review) fill the Comparison
// row, and the user's choice to require the comparison, made before,
// stays: the query then ANDs the comparator terms. The choice is saved.
func TestEvidenceSuggestTermsFillsTheComparisonRow(t *testing.T) {
	ws, srv := newLiteratureWorkspace(t, true)
	srv.QueueChat(ollamatest.ChatReply{Content: `{
 "primary": {"conditions": ["hepatocellular carcinoma"], "treatments": ["microwave ablation"], "comparators": ["radiofrequency ablation"], "outcomes": []},
 "core": {"conditions": ["hepatocellular carcinoma"], "treatments": ["microwave ablation"], "comparators": ["radiofrequency ablation"], "outcomes": []},
 "expanded": {"conditions": ["HCC"], "treatments": ["MWA"], "comparators": ["RFA"], "outcomes": []}
}`})
	s := newTestEvidenceScreen(t, ws.Reviews(), ws.Logger())
	waitUntil(t, "the sources listed", func() bool { return len(s.sources) > 0 })
	onUI(t, func(testing.TB) {
		s.NewProject("comparison", "lit", evidence.PICO{Population: "hepatocellular carcinoma", Intervention: "microwave ablation", Comparison: "radiofrequency ablation"})
		s.search.joinComp.SetChecked(true)
		test.Tap(s.pico.suggestBtn)
	})
	waitDone(t, s, "suggest terms")
	const want = `("hepatocellular carcinoma" OR HCC) AND ("microwave ablation" OR MWA) AND ("radiofrequency ablation" OR RFA)`
	onUI(t, func(t testing.TB) {
		v := s.search
		if v.terms[1].Text != "microwave ablation\nMWA" || v.terms[2].Text != "radiofrequency ablation\nRFA" {
			t.Fatalf("treatment row %q, comparison row %q", v.terms[1].Text, v.terms[2].Text)
		}
		if !v.joinComp.Checked || v.query.Text != want {
			t.Fatalf("comparison required %v, query %q", v.joinComp.Checked, v.query.Text)
		}
	})
	if reqs := srv.ChatRequests(); len(reqs) != 1 || !strings.Contains(reqs[0].Messages[len(reqs[0].Messages)-1].Content, "Comparison (comparator): radiofrequency ablation") {
		t.Errorf("%d chat requests; the prompt does not give the comparison", len(reqs))
	}
	waitSaved(t, s)
	p, err := ws.LoadReviewProject("comparison")
	if err != nil || !p.Terms.JoinComparators || p.Query != want {
		t.Fatalf("saved: terms %+v, query %q, %v", p.Terms, p.Query, err)
	}
}

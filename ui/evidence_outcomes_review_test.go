package ui

import (
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// TestEvidenceScreenOutcomesOnAReview runs the Results and Meta-analysis
// steps of a second outcome over the workspace's review service (app.Review)
// with a scripted model: Extract results asks the model for that outcome
// only and keeps the first outcome's results; the study the model reads
// three groups for stays out of the analysis until the user chooses its
// arms in the dialog; the choice is saved with the project.
func TestEvidenceScreenOutcomesOnAReview(t *testing.T) {
	ws, srv := newLiteratureWorkspace(t, true)
	r, err := ws.Reviews().Create("two outcomes", "lit", evidence.PICO{Population: "patients with hepatocellular carcinoma", Intervention: "microwave ablation"})
	if err != nil {
		t.Fatal(err)
	}
	r.Update(func(p *evidence.Project) {
		p.Query = `"hepatocellular carcinoma" AND (microwave OR radiofrequency)`
		p.SetResult(evidence.ResultSpec{Outcome: "local tumor progression", Cohort: "MWA (treatment) vs RFA (control)", Measure: evidence.TwoGroups})
	})
	if _, err := r.Search(t.Context(), 20); err != nil {
		t.Fatal(err)
	}
	ids := r.Project().Search.IDs
	if len(ids) < 3 {
		t.Fatalf("the search found %d records", len(ids))
	}
	for _, id := range ids[:3] {
		if err := r.Decide(id, true, ""); err != nil {
			t.Fatal(err)
		}
	}
	threeArm := ids[0]
	threeArmTitle := r.Project().Studies[threeArm].Title
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}

	// The model reads three groups in one study, two in the others, and
	// the test keeps the outcome each prompt asked for.
	var mu sync.Mutex
	var asked []string
	srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
		if !strings.Contains(req.Messages[0].Content, "You extract the result of a clinical study") {
			return ollamatest.ChatReply{Fault: ollamatest.Fault{Status: http.StatusBadRequest, Error: "unexpected prompt"}}
		}
		user := req.Messages[len(req.Messages)-1].Content
		_, outcome, _ := strings.Cut(user, "\nOutcome: ")
		outcome, _, _ = strings.Cut(outcome, "\n")
		mu.Lock()
		asked = append(asked, outcome)
		mu.Unlock()
		num := func(v int) map[string]any { return map[string]any{"value": v, "sources": []int{1}} }
		group := func(name, role string, events, n int) map[string]any {
			return map[string]any{"name": name, "role": role, "n": num(n), "events": num(events), "percent": nil}
		}
		groups := []map[string]any{group("MWA", "treatment", 4, 40), group("RFA", "control", 9, 42)}
		if strings.Contains(user, "Study: "+threeArmTitle) {
			groups = []map[string]any{group(threeArms[0], "treatment", 10, 50), group(threeArms[1], "treatment", 8, 50), group(threeArms[2], "control", 20, 60)}
		}
		raw, _ := json.Marshal(map[string]any{"groups": groups})
		return ollamatest.ChatReply{Content: string(raw)}
	})

	s := openTestEvidenceScreen(t, ws.Reviews(), ws.Logger())
	onUI(t, func(t testing.TB) {
		rv := s.results
		s.steps.SelectIndex(4)
		if err := rv.AddOutcome(evidence.ResultSpec{Outcome: "major complications", Cohort: "MWA (treatment) vs RFA (control)", Measure: evidence.TwoGroups}); err != nil {
			t.Fatal(err)
		}
		if rv.current != 1 || rv.bar.sel.Selected != "major complications" {
			t.Fatalf("outcome shown %d %q", rv.current, rv.bar.sel.Selected)
		}
		test.Tap(rv.resultsBtn)
	})
	waitDone(t, s, "extraction")
	mu.Lock()
	prompts := slices.Clone(asked)
	mu.Unlock()
	if len(prompts) != 3 || slices.ContainsFunc(prompts, func(o string) bool { return o != "major complications" }) {
		t.Fatalf("the model was asked for the outcomes %q, want major complications for the 3 included studies", prompts)
	}
	onUI(t, func(t testing.TB) {
		rv, p := s.results, s.project()
		if len(p.OutcomeAt(0).Results) != 0 || len(p.OutcomeAt(1).Results) != 3 {
			t.Fatalf("results: first outcome %d, second %d", len(p.OutcomeAt(0).Results), len(p.OutcomeAt(1).Results))
		}
		if need := p.ArmsNeeded(1); !slices.Equal(need, []string{threeArm}) {
			t.Fatalf("arms needed for %v, want %s", need, threeArm)
		}
		if !strings.Contains(rv.standardCell(rowOf(rv, threeArm), 1), "choose arms") {
			t.Errorf("the three-arm study's row: %q", rv.standardCell(rowOf(rv, threeArm), 1))
		}
		s.steps.SelectIndex(5)
		test.Tap(s.meta.runBtn)
	})
	waitUntil(t, "the analysis without the three-arm study", func() bool { return strings.Contains(s.meta.status.Text, "k = 2") })
	onUI(t, func(t testing.TB) {
		rv := s.results
		s.steps.SelectIndex(4)
		rv.standardTable.Select(widget.TableCellID{Row: rowOf(rv, threeArm), Col: 0})
		test.Tap(rv.armsBtn)
		ad := rv.armsDlg
		if ad == nil {
			t.Fatal("no arms dialog")
		}
		tapCheck(ad.treat[1])
		tapCheck(ad.control[2])
		test.Tap(ad.okBtn)
		if rv.armsDlg != nil {
			t.Fatalf("the choice was refused: %q", ad.errLabel.Text)
		}
		test.Tap(s.meta.runBtn)
	})
	waitUntil(t, "the analysis with the three-arm study", func() bool { return strings.Contains(s.meta.status.Text, "k = 3") })
	waitSaved(t, s)
	p, err := ws.LoadReviewProject("two outcomes")
	if err != nil {
		t.Fatal(err)
	}
	if o := p.OutcomeAt(1); o == nil || !slices.Equal(o.Arms[threeArm].Treatment, threeArms[1:2]) || !slices.Equal(o.Arms[threeArm].Control, threeArms[2:]) {
		t.Fatalf("saved outcomes %+v", p.OtherOutcomes)
	}
}

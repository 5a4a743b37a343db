package ui

import (
	"context"
	"database/sql"
	"encoding/json"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
	"github.com/ollama/ollama/api"
	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// newTrialsWorkspace opens a workspace with a source "ct" holding the demo
// trials and patients, and a scripted Ollama server with chat model "m".
func newTrialsWorkspace(t *testing.T) (*app.Workspace, *ollamatest.Server) {
	return newDemoSourceWorkspace(t, "ct", func(ctx context.Context, db *sql.DB) error { return trials.DemoData(ctx, db, 5) }, true)
}

// scriptedTrialModel answers concept prompts with the patient's first
// words and eligibility prompts with "included"/"not excluded" for every
// criterion.
func scriptedTrialModel(req api.ChatRequest) ollamatest.ChatReply {
	user := req.Messages[len(req.Messages)-1].Content
	if strings.Contains(req.Messages[0].Content, "eligible for a clinical trial") {
		var out []map[string]any
		for _, line := range strings.Split(user, "\n") {
			if len(line) > 3 && (line[0] == 'I' || line[0] == 'E') && strings.Contains(line, " (") {
				id := line[:strings.Index(line, " ")]
				v := "included"
				if id[0] == 'E' {
					v = "not excluded"
				}
				out = append(out, map[string]any{"id": id, "verdict": v, "evidence_sentence": 1, "explanation": "scripted"})
			}
		}
		raw, _ := json.Marshal(map[string]any{"criteria": out})
		return ollamatest.ChatReply{Content: string(raw)}
	}
	return ollamatest.ChatReply{Content: `{"age": null, "sex": "unknown", "concepts": [{"text": "diabetes", "kind": "diagnosis", "weight": 1, "negated": false}]}`}
}

func TestTrialsScreen(t *testing.T) {
	ws, srv := newTrialsWorkspace(t)
	srv.HandleChat(scriptedTrialModel)
	mw := newTestMainWindow(t, ws)
	s := mw.Trials
	onUI(t, func(t testing.TB) {
		if err := mw.Show("trials"); err != nil {
			t.Fatal(err)
		}
	})
	waitUntil(t, "the demo patients of the source", func() bool { return len(s.patientSel.Options) == trials.DemoPatients })
	onUI(t, func(t testing.TB) {
		if s.sourceSel.Selected != "ct" || len(s.patients) != trials.DemoPatients {
			t.Fatalf("source %q, %d demo patients", s.sourceSel.Selected, len(s.patients))
		}
		s.patientSel.SetSelected(s.patientSel.Options[0])
		if s.patient.Text != s.patients[0].Description {
			t.Fatalf("the demo patient did not fill the box: %q", s.patient.Text)
		}

		// Without the model.
		s.useModel.SetChecked(false)
		test.Tap(s.matchBtn)
	})
	waitUntil(t, "the model-free ranking", func() bool { return strings.Contains(s.query.Text, "(deterministic extractor)") })
	onUI(t, func(t testing.TB) {
		if s.result == nil || len(s.result.Trials) == 0 || s.result.Query.Source != "deterministic extractor" {
			t.Fatalf("model-free result: %+v", s.result)
		}
		if rows, cols := s.table.Length(); rows != len(s.result.Trials) || cols != len(trialColumns) {
			t.Errorf("table %dx%d", rows, cols)
		}
		if c := s.cell(0, colWhy); !strings.HasSuffix(c, ".") || !strings.Contains(c, "age") {
			t.Errorf("why cell %q", c)
		}
		if !s.scoringBox.Visible() || s.scoringBox.Items[0].Open || !regexp.MustCompile(`(?m)^BM25 \d+\.\d\d, #\d+: `).MatchString(s.scoring.Text) {
			t.Errorf("scoring details (visible %v): %q", s.scoringBox.Visible(), s.scoring.Text)
		}
		if !strings.Contains(s.status.Text, "word matching only — install an embedding model") || strings.Contains(s.status.Text, " 0s") {
			t.Errorf("status %q", s.status.Text)
		}
		if !strings.Contains(richText(s.detail), "Inclusion criteria") || !strings.Contains(richText(s.detail), s.result.Trials[0].Trial.ID) {
			t.Errorf("detail of the first trial: %q", richText(s.detail))
		}
		if !strings.Contains(s.notices.Text, "lexical fallback") {
			t.Errorf("notices: %q", s.notices.Text)
		}

		// With the (scripted) model: eligibility verdicts colour the criteria.
		s.useModel.SetChecked(true)
		test.Tap(s.matchBtn)
	})
	waitUntil(t, "the ranking with the model", func() bool { return strings.Contains(s.query.Text, "(model m)") })
	onUI(t, func(t testing.TB) {
		if s.result.Query.Source != "model m" || s.result.Trials[0].Eligibility == nil {
			t.Fatalf("model result: source %q, notices %q", s.result.Query.Source, s.result.Notices)
		}
		if d := richText(s.detail); !regexp.MustCompile(`Eligibility \(checked by the model\): (\d+) of (\d+) inclusion criteria met`).MatchString(d) || !strings.Contains(d, "Why this trial: ") {
			t.Errorf("detail lacks the eligibility summary or the why line: %q", d)
		}
		if s.cell(0, colEligibility) != "1.00" {
			t.Errorf("eligibility cell %q, want 1.00", s.cell(0, colEligibility))
		}
		s.ShowTrial(0)
		green := 0
		for _, seg := range s.detail.Segments {
			if ts, ok := seg.(*widget.TextSegment); ok && ts.Style.ColorName == theme.ColorNameSuccess {
				green++
			}
		}
		if green == 0 || !strings.Contains(richText(s.detail), "[included]") || !strings.Contains(richText(s.detail), "scripted") {
			t.Errorf("criteria not coloured by verdict (%d green): %q", green, richText(s.detail))
		}
	})

	// Export.
	out := filepath.Join(t.TempDir(), "trials.xlsx")
	onUI(t, func(testing.TB) { s.ExportWorkbook(out) })
	waitUntil(t, "the export", func() bool { return strings.Contains(s.status.Text, "\nExported ") })
	f, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := strings.Join(f.GetSheetList(), ","); got != "Ranked trials,Criteria,Concepts,Provenance" {
		t.Errorf("sheets %s", got)
	}
	crit, _ := f.GetRows("Criteria")
	if len(crit) < 2 || crit[1][5] != "included" {
		t.Errorf("criteria sheet: %v", crit[:min(2, len(crit))])
	}

	// Cancel: a slow model, cancelled while matching.
	srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
		r := scriptedTrialModel(req)
		r.Delay = 2 * time.Second
		return r
	})
	var before *trials.Result
	onUI(t, func(testing.TB) {
		before = s.result
		test.Tap(s.matchBtn)
	})
	var running *task
	waitUntil(t, "the matching to start", func() bool { running = s.running; return running != nil })
	onUI(t, func(testing.TB) { running.cancel() })
	waitUntil(t, "the matching to stop", func() bool { return !s.matchBtn.Disabled() })
	onUI(t, func(t testing.TB) {
		if s.result != before {
			t.Error("a cancelled matching replaced the result")
		}
		if s.running != nil || s.matchBtn.Disabled() {
			t.Error("the screen still shows a matching after Cancel")
		}
	})
}

// richText returns the text of a RichText's segments.
func richText(r *widget.RichText) string {
	var b strings.Builder
	for _, seg := range r.Segments {
		b.WriteString(seg.Textual())
		b.WriteByte('\n')
	}
	return b.String()
}

package ui

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"
	"github.com/ollama/ollama/api"
	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/app/meta"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// newLiteratureWorkspace opens a workspace with a source "lit" holding the
// demo literature and, when chat is set, a scripted Ollama server with
// chat model "m" configured.
func newLiteratureWorkspace(t *testing.T, chat bool) (*app.Workspace, *ollamatest.Server) {
	return newDemoSourceWorkspace(t, "lit", func(ctx context.Context, db *sql.DB) error { return evidence.DemoData(ctx, db, 1) }, chat)
}

// waitSaved saves the open review's pending change and waits until the
// screen says it is saved.
func waitSaved(t *testing.T, s *EvidenceScreen) {
	t.Helper()
	var r app.Reviewer
	onUI(t, func(testing.TB) { r = s.review })
	if r == nil {
		t.Fatal("no review open")
	}
	if err := r.Save(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the project to be saved", func() bool { return strings.HasPrefix(s.saveState.Text, "saved ") })
}

// waitIdle waits until no step of the screen runs (its progress dialog is
// gone) and returns the notice shown, "" for none.
func waitIdle(t *testing.T, s *EvidenceScreen) string {
	t.Helper()
	var notice string
	waitUntil(t, "the step to end", func() bool {
		notice = ""
		if s.notice.Visible() {
			notice = s.notice.Text
		}
		return s.running == nil
	})
	return notice
}

// waitDone waits until the running step ends (waitIdle) and fails the test
// with the notice the step left, if any.
func waitDone(t *testing.T, s *EvidenceScreen, step string) {
	t.Helper()
	if notice := waitIdle(t, s); notice != "" {
		t.Fatalf("%s: %s", step, notice)
	}
}

// screeningModel answers screening prompts: YES to criterion 1 for a
// randomized controlled trial (UNCERTAIN otherwise), NO to criterion 2.
func screeningReply(req api.ChatRequest) (ollamatest.ChatReply, bool) {
	if !strings.Contains(req.Messages[0].Content, "You screen studies") {
		return ollamatest.ChatReply{}, false
	}
	user := req.Messages[len(req.Messages)-1].Content
	first := "UNCERTAIN"
	if strings.Contains(user, "randomized controlled trial") {
		first = "YES"
	}
	raw, _ := json.Marshal(map[string]any{"verdicts": []string{first, "NO"}})
	return ollamatest.ChatReply{Content: string(raw)}, true
}

// enrolledChunk returns the number of the chunk of a demo study's text
// that says how many patients were enrolled, that number and the chunk's
// text; ok is false when the study has no abstract.
func enrolledChunk(t *testing.T, ws *app.Workspace, p *evidence.Project, id string) (n int, enrolled, text string, ok bool) {
	t.Helper()
	st, err := ws.Reviews().Scratch(p, app.ReviewOptions{}).StudyText(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`We enrolled (\d+) `)
	for _, c := range st.Chunks {
		if m := re.FindStringSubmatch(c.Text); m != nil {
			return c.N, m[1], c.Text, true
		}
	}
	return 0, "", "", false
}

// Passages of the demo abstracts, as the extraction prompts show them.
var (
	enrolledPassage = regexp.MustCompile(`\[(\d+)\] [^\n]*We enrolled (\d+) `)
	resultsPassage  = regexp.MustCompile(`\[(\d+)\] [^\n]* was (\d+) of (\d+) \([0-9.]+%\) with [^\n]* and (\d+) of (\d+) \(`)
)

// extractionReply answers field-extraction prompts with the number
// enrolled (cited from its passage) and a median age that is in no
// passage, and result prompts with both groups' events and totals read
// from the results passage.
func extractionReply(req api.ChatRequest) ollamatest.ChatReply {
	user := req.Messages[len(req.Messages)-1].Content
	atoi := func(s string) int { n, _ := strconv.Atoi(s); return n }
	var reply any
	switch {
	case strings.Contains(req.Messages[0].Content, "You extract data from a clinical study"):
		m := enrolledPassage.FindStringSubmatch(user)
		if m == nil {
			return ollamatest.ChatReply{Content: `{"fields":[{"name":"patients enrolled","value":"NP","sources":[]},{"name":"median age","value":"NP","sources":[]}]}`}
		}
		reply = map[string]any{"fields": []map[string]any{
			{"name": "patients enrolled", "value": m[2], "sources": []int{atoi(m[1])}},
			{"name": "median age", "value": "987 years", "sources": []int{atoi(m[1])}},
		}}
	case strings.Contains(req.Messages[0].Content, "You extract the result of a clinical study"):
		m := resultsPassage.FindStringSubmatch(user)
		if m == nil {
			return ollamatest.ChatReply{Content: `{"groups":[]}`}
		}
		src := []int{atoi(m[1])}
		num := func(s string) map[string]any { return map[string]any{"value": atoi(s), "sources": src} }
		reply = map[string]any{"groups": []map[string]any{
			{"name": "intervention arm", "role": "treatment", "n": num(m[3]), "events": num(m[2]), "percent": nil},
			{"name": "comparator arm", "role": "control", "n": num(m[5]), "events": num(m[4]), "percent": nil},
		}}
	default:
		return ollamatest.ChatReply{Fault: ollamatest.Fault{Status: http.StatusBadRequest, Error: "unexpected prompt"}}
	}
	raw, _ := json.Marshal(reply)
	return ollamatest.ChatReply{Content: string(raw)}
}

func TestEvidenceScreenReview(t *testing.T) {
	ws, srv := newLiteratureWorkspace(t, true)
	mw := newTestMainWindow(t, ws)
	s := mw.Evidence
	onUI(t, func(t testing.TB) {
		if err := mw.Show("evidence"); err != nil {
			t.Fatal(err)
		}
	})
	waitUntil(t, "the notice that there is no project yet", func() bool {
		return s.notice.Visible() && strings.Contains(s.notice.Text, "No review project yet") && slices.Contains(s.sources, "lit")
	})
	onUI(t, func(t testing.TB) {
		// A new project, its question completed on the PICO step.
		s.NewProject("HCC ablation", "lit", evidence.PICO{Population: "patients with hepatocellular carcinoma", Intervention: "microwave ablation"})
		if s.project() == nil {
			t.Fatalf("no project created; notice %q", s.notice.Text)
		}
		s.pico.entries[2].SetText("radiofrequency ablation")
		s.pico.entries[3].SetText("local tumor progression")
		if s.saveState.Text != "unsaved changes…" {
			t.Errorf("save state after an edit %q", s.saveState.Text)
		}
	})
	waitSaved(t, s)
	onUI(t, func(t testing.TB) {
		if got := s.project().PICO; got.Comparison != "radiofrequency ablation" || got.Population != "patients with hepatocellular carcinoma" {
			t.Fatalf("PICO %+v", got)
		}
		if names, _ := ws.ReviewProjects(); !slices.Equal(names, []string{"HCC ablation"}) || !slices.Equal(s.projectSel.Options, names) {
			t.Fatalf("projects saved %v, listed %v", names, s.projectSel.Options)
		}
		if p, err := ws.LoadReviewProject("HCC ablation"); err != nil || p.PICO.Outcome != "local tumor progression" {
			t.Fatalf("saved PICO %+v, %v", p, err)
		}

		// A typed query: a malformed one is pointed at, not run.
		v := s.search
		v.query.SetText(`"hepatocellular carcinoma" AND (microwave OR radiofrequency`)
		if !v.queryErr.Visible() || !strings.Contains(v.queryErr.Text, "^") || !strings.Contains(v.queryErr.Text, "position") {
			t.Fatalf("query error %q (visible %v)", v.queryErr.Text, v.queryErr.Visible())
		}
		v.query.SetText(`"hepatocellular carcinoma" AND (microwave OR radiofrequency)`)
		if v.queryErr.Visible() {
			t.Fatalf("a valid query shows an error: %q", v.queryErr.Text)
		}
		v.limitSel.SetSelected("20")
		test.Tap(v.searchBtn)
	})
	waitDone(t, s, "search")
	onUI(t, func(t testing.TB) {
		p, v := s.project(), s.search
		if p.Search == nil || p.Search.Total < 20 || len(p.Search.IDs) != 20 {
			t.Fatalf("search %+v", p.Search)
		}
		if rows, _ := v.candidates.Length(); rows != 20 || !strings.Contains(v.candidateCell(0, 3), "hepatocellular carcinoma") {
			t.Fatalf("candidates table: %d rows, first %q", rows, v.candidateCell(0, 3))
		}
		if !strings.Contains(v.status.Text, fmt.Sprintf("%d records match", p.Search.Total)) {
			t.Errorf("search status %q", v.status.Text)
		}

		// Criteria written by hand, then screening with scripted verdicts.
		sv := s.screening
		test.Tap(sv.addCriterionBtn)
		test.Tap(sv.addCriterionBtn)
		sv.criterionText[0].SetText("The study is a randomized controlled trial")
		sv.criterionText[1].SetText("The study reports paediatric patients")
		if c := s.project().Criteria; len(c) != 2 || c[1].Text != "The study reports paediatric patients" {
			t.Fatalf("criteria %+v", c)
		}
		srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
			r, _ := screeningReply(req)
			return r
		})
		test.Tap(sv.screenBtn)
	})
	waitUntil(t, "the screening", func() bool {
		return s.running == nil && strings.Contains(s.screening.status.Text, "20 of 20 candidates screened")
	})
	var inc, exc string
	var ranked []string
	var project *evidence.Project
	onUI(t, func(t testing.TB) {
		p, sv := s.project(), s.screening
		if len(p.Screening) != 20 || s.notice.Visible() {
			t.Fatalf("%d screened; notice %q", len(p.Screening), s.notice.Text)
		}
		if text, imp := sv.cell(0, 4); text != "✓" || imp != widget.SuccessImportance {
			t.Errorf("best study's C1 cell %q %v, want a green ✓", text, imp)
		}
		if text, imp := sv.cell(0, 5); text != "✗" || imp != widget.DangerImportance {
			t.Errorf("C2 cell %q %v, want a red ✗", text, imp)
		}
		if _, cols := sv.table.Length(); cols != 6 {
			t.Errorf("screening table has %d columns, want 4 + 2 criteria", cols)
		}
		last := sv.rows[len(sv.rows)-1]
		if st := screenedStudy(p, last); st.Score > screenedStudy(p, sv.rows[0]).Score {
			t.Errorf("screening not ranked best first: %v", st)
		}

		// Switching C2 off rescores without the model.
		calls := len(srv.ChatRequests())
		sv.editCriteria(func(p *evidence.Project) { p.Criteria[1].Disabled = true })
		if text, _ := sv.cell(0, 2); text != "1.00" {
			t.Errorf("score with C2 off = %s, want 1.00", text)
		}
		if len(srv.ChatRequests()) != calls {
			t.Error("rescoring called the model")
		}
		ranked = slices.Clone(sv.rows)
		inc, exc = ranked[0], ranked[1]
		var err error
		if project, err = s.project().Clone(); err != nil {
			t.Fatal(err)
		}
	})

	// A study's abstract and verdicts; include it and another with an
	// abstract, exclude a third.
	chunk, enrolled, chunkText, ok := enrolledChunk(t, ws, project, inc)
	if !ok {
		t.Fatalf("the best study %s has no abstract", inc)
	}
	inc2 := ""
	for _, id := range ranked[2:] {
		if _, _, _, ok := enrolledChunk(t, ws, project, id); ok {
			inc2 = id
			break
		}
	}
	onUI(t, func(testing.TB) { s.screening.ShowStudy(inc) })
	waitUntil(t, "the study's abstract", func() bool { return strings.Contains(richText(s.screening.detail), "We enrolled") })
	onUI(t, func(t testing.TB) {
		sv := s.screening
		if detail := richText(sv.detail); !strings.Contains(detail, "✓ YES — C1 The study is a randomized controlled trial") {
			t.Errorf("study detail:\n%s", detail)
		}
		test.Tap(sv.includeBtn)
		sv.Decide(inc2, true, "")
		sv.Decide(exc, false, "Wrong study design")
		c := s.project().PRISMA()
		if c.Included != 2 || c.Excluded != 1 || c.Reasons["Wrong study design"] != 1 {
			t.Fatalf("PRISMA %+v", c)
		}
		if !strings.Contains(sv.prismaCounts.Text, "included 2") || !strings.Contains(sv.prismaCounts.Text, "Wrong study design: 1") {
			t.Errorf("PRISMA counts %q", sv.prismaCounts.Text)
		}
		if text, imp := sv.cell(0, 1); text != "Included" || imp != widget.SuccessImportance {
			t.Errorf("decision cell %q", text)
		}
	})
	waitUntil(t, "the PRISMA diagram", func() bool { return s.screening.prismaImg.Image != nil })

	// Extraction: a supported value beside its chunk, an unsupported one
	// flagged.
	onUI(t, func(testing.TB) {
		ev := s.extract
		test.Tap(ev.addFieldBtn)
		test.Tap(ev.addFieldBtn)
		ev.fieldEntries[0][0].SetText("patients enrolled")
		ev.fieldEntries[0][1].SetText("how many patients were enrolled in total")
		ev.fieldEntries[1][0].SetText("median age")
		srv.HandleChat(extractionReply)
		test.Tap(ev.extractBtn)
	})
	waitUntil(t, "the extracted values beside their chunks", func() bool {
		e := s.extract.valueEntries["patients enrolled"]
		return s.running == nil && e != nil && e.Text == enrolled && strings.Contains(canvasText(s.extract.valuesBox), chunkText)
	})
	onUI(t, func(t testing.TB) {
		ev := s.extract
		if s.notice.Visible() {
			t.Fatalf("notice %q", s.notice.Text)
		}
		if ev.studyID() != inc {
			t.Fatalf("extract step shows %q, want %q", ev.studyID(), inc)
		}
		if !strings.Contains(canvasText(ev.valuesBox), fmt.Sprintf("[%d]", chunk)) || ev.status.Text != "2 included studies, 2 with extracted values." {
			t.Errorf("chunk %d not shown, or status %q", chunk, ev.status.Text)
		}
		if f := ev.valueFlags["median age"]; f.Importance != widget.DangerImportance || !strings.Contains(f.Text, "Unsupported") {
			t.Errorf("median age flag %q (%v), want unsupported in red", f.Text, f.Importance)
		}
		if f := ev.valueFlags["patients enrolled"]; f.Importance == widget.DangerImportance {
			t.Errorf("supported value flagged: %q", f.Text)
		}
		ev.valueEntries["median age"].SetText("NP")
		if f := ev.valueFlags["median age"]; f.Importance == widget.DangerImportance || !strings.Contains(f.Text, "Edited by you") {
			t.Errorf("flag of the edited value %q", f.Text)
		}
		if v, _ := s.project().FieldValueOf(inc, "median age"); !v.Edited || v.Unsupported || v.Value != "NP" {
			t.Errorf("edited value %+v", v)
		}

		// Results: both groups' events and totals, standardized, then
		// corrected by hand.
		rv := s.results
		s.steps.SelectIndex(4)
		rv.outcome.SetText("local tumor progression")
		rv.cohort.SetText("microwave ablation (treatment) vs radiofrequency ablation (control)")
		rv.shapeSel.SetSelectedIndex(0) // two groups
		if s.project().Result.Measure != evidence.TwoGroups {
			t.Fatalf("result spec %+v", s.project().Result)
		}
		test.Tap(rv.resultsBtn)
	})
	waitUntil(t, "the extracted results", func() bool {
		rows, _ := s.results.groupsTable.Length()
		return s.running == nil && rows == 4
	})
	onUI(t, func(t testing.TB) {
		rv := s.results
		if rows, _ := rv.standardTable.Length(); s.notice.Visible() || rows != 2 || rv.problems.Visible() {
			t.Fatalf("standardized %d, problems %q, notice %q", rows, rv.problems.Text, s.notice.Text)
		}
		if rv.groupCell(0, 2) != "treatment" || rv.groupCell(0, 4) == "" || strings.Contains(rv.groupCell(0, 9), "⚠") {
			t.Errorf("first group row: role %q, events %q, check %q", rv.groupCell(0, 2), rv.groupCell(0, 4), rv.groupCell(0, 9))
		}
		if got := rv.standardCols[2].title; got != "Events (treatment)" {
			t.Errorf("standardized column %q", got)
		}

		// The meta-analysis of the two studies.
		mv := s.meta
		s.steps.SelectIndex(5)
		if mv.measureSel.Selected == "" || mv.methodSel.Selected == "" {
			t.Fatalf("meta settings: measure %q, method %q", mv.measureSel.Selected, mv.methodSel.Selected)
		}
		mv.measureSel.SetSelectedIndex(slices.Index(mv.measures, meta.RR))
		if s.project().Meta.Measure != "RR" {
			t.Fatalf("meta settings %+v", s.project().Meta)
		}
		test.Tap(mv.runBtn)
	})
	waitUntil(t, "the forest plot", func() bool { return s.meta.forest.Image != nil && strings.Contains(s.meta.status.Text, "k = 2") })
	onUI(t, func(t testing.TB) {
		if !strings.Contains(s.meta.summary.Text, "Risk Ratio") {
			t.Fatalf("meta-analysis summary %q", s.meta.summary.Text)
		}
	})

	// Export.
	out := filepath.Join(t.TempDir(), "review.xlsx")
	onUI(t, func(testing.TB) { s.ExportWorkbook(out) })
	waitIdle(t, s)
	f, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	sheets := f.GetSheetList()
	fields, _ := f.GetRows(evidence.FieldsSheet)
	f.Close()
	for _, want := range []string{evidence.SearchSheet, evidence.PRISMASheet, evidence.ScreeningSheet, evidence.FieldsSheet,
		evidence.ResultsSheet, evidence.StandardSheet, evidence.MetaSheet, evidence.PooledSheet, evidence.ForestSheet,
		evidence.PRISMADiagramSheet, "Provenance"} {
		if !slices.Contains(sheets, want) {
			t.Errorf("workbook sheets %v lack %s", sheets, want)
		}
	}
	if !strings.Contains(fmt.Sprint(fields), chunkText) {
		t.Errorf("the Fields sheet does not cite the chunk %q:\n%v", chunkText, fields)
	}

	onUI(t, func(t testing.TB) {
		// A number corrected by hand: flagged when not in its chunk, and a
		// count larger than its group is a problem of the standardized table.
		rv := s.results
		s.steps.SelectIndex(4)
		if err := rv.EditGroup(inc, 0, "treatment", []string{rv.groupCell(0, 3), "977", "", "", ""}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(rv.groupCell(0, 4), "977 ⚠") || rv.groupCell(0, 9) != "⚠ not in its chunk, edited" {
			t.Errorf("edited group: events %q, check %q", rv.groupCell(0, 4), rv.groupCell(0, 9))
		}
		if rows, _ := rv.standardTable.Length(); rows != 1 || !strings.Contains(rv.problems.Text, "977 events") {
			t.Errorf("standardized %d rows, problems %q", rows, rv.problems.Text)
		}

		// A model failure: a notice, and the edited criterion is kept.
		s.screening.criterionText[0].SetText("The study is randomized")
		srv.HandleChat(func(api.ChatRequest) ollamatest.ChatReply {
			return ollamatest.ChatReply{Fault: ollamatest.Fault{Status: http.StatusInternalServerError, Error: "model crashed"}}
		})
		test.Tap(s.screening.suggestCriteriaBtn)
	})
	if notice := waitIdle(t, s); !strings.Contains(notice, "failed") {
		t.Errorf("notice after a model failure %q", notice)
	}
	onUI(t, func(t testing.TB) {
		sv, p := s.screening, s.project()
		if p.Criteria[0].Text != "The study is randomized" || sv.criterionText[0].Text != "The study is randomized" || len(p.Criteria) != 2 {
			t.Errorf("criteria after a failure: %+v", p.Criteria)
		}
		if !p.ScreeningStale() || !strings.Contains(sv.status.Text, "Screen again") {
			t.Errorf("edited criteria not reported stale: %q", sv.status.Text)
		}
	})

	// Reopening on the same workspace restores everything.
	waitSaved(t, s)
	var s2 *EvidenceScreen
	var want string
	onUI(t, func(t testing.TB) {
		want = s.project().Query
		s2 = NewEvidenceScreen(t.Context(), ws.Reviews(), ws.Logger(), mw.Window, "test")
		s2.Refresh()
	})
	waitUntil(t, "the project reopened", func() bool { return s2.project() != nil && s2.pico.entries[3].Text != "" })
	onUI(t, func(t testing.TB) {
		p2 := s2.project()
		if p2.Name != "HCC ablation" || p2.PICO.Outcome != "local tumor progression" || s2.pico.entries[3].Text != "local tumor progression" {
			t.Errorf("reopened PICO %+v", p2.PICO)
		}
		if s2.search.query.Text != want || len(p2.Search.IDs) != 20 || len(p2.Screening) != 20 {
			t.Errorf("reopened query %q, search %+v", s2.search.query.Text, p2.Search)
		}
		if ct := s2.screening.criterionText; len(ct) != 2 || ct[0].Text != "The study is randomized" || !p2.Criteria[1].Disabled {
			t.Errorf("reopened criteria %+v", p2.Criteria)
		}
		if d := p2.Decisions[exc]; d.Include || d.Reason != "Wrong study design" || !p2.Decisions[inc].Include {
			t.Errorf("reopened decisions %+v", p2.Decisions)
		}
		if v, _ := p2.FieldValueOf(inc, "median age"); !v.Edited || v.Value != "NP" {
			t.Errorf("reopened edited value %+v", v)
		}
		if !strings.Contains(s2.screening.prismaCounts.Text, "included 2") {
			t.Errorf("reopened PRISMA %q", s2.screening.prismaCounts.Text)
		}
	})
}

// TestEvidenceScreenWithoutModel: the model buttons say a chat model is
// needed; the user types terms, builds the query and searches.
func TestEvidenceScreenWithoutModel(t *testing.T) {
	ws, srv := newLiteratureWorkspace(t, false)
	s := newTestEvidenceScreen(t, ws.Reviews(), ws.Logger())
	waitUntil(t, "the sources listed", func() bool { return slices.Contains(s.sources, "lit") })
	onUI(t, func(testing.TB) {
		s.NewProject("no model", "lit", evidence.PICO{Population: "men with localized prostate cancer"})
		test.Tap(s.pico.suggestBtn)
	})
	if notice := waitIdle(t, s); !strings.Contains(notice, "no chat model") || len(srv.ChatRequests()) != 0 {
		t.Fatalf("notice %q", notice)
	}
	onUI(t, func(t testing.TB) {
		v := s.search
		v.terms[0].SetText("prostate cancer\nprostatic neoplasms")
		v.terms[1].SetText("brachytherapy")
		test.Tap(v.buildBtn)
		if want := `("prostate cancer" OR "prostatic neoplasms") AND brachytherapy`; v.query.Text != want || s.project().Query != want {
			t.Fatalf("query %q, want %q", v.query.Text, want)
		}
		test.Tap(v.searchBtn)
	})
	waitDone(t, s, "search")
	onUI(t, func(t testing.TB) {
		if p := s.project(); p.Search == nil || len(p.Search.IDs) == 0 {
			t.Fatalf("search %+v", p.Search)
		}
		test.Tap(s.screening.screenBtn) // no criteria, no model
	})
	if notice := waitIdle(t, s); notice == "" || len(s.project().Screening) != 0 {
		t.Errorf("screening without a model: notice %q", notice)
	}
	waitSaved(t, s)
}

// newTestEvidenceScreen shows an Evidence screen over svc in a window of
// its own and starts listing its projects.
func newTestEvidenceScreen(t *testing.T, svc app.ReviewService, logger *slog.Logger) *EvidenceScreen {
	t.Helper()
	a := newTestApp(t)
	var s *EvidenceScreen
	onUI(t, func(t testing.TB) {
		s = NewEvidenceScreen(t.Context(), svc, logger, a.NewWindow("evidence"), "test")
		s.Refresh()
	})
	return s
}

// openTestEvidenceScreen is newTestEvidenceScreen once the screen shows
// the review it opened (the service's last).
func openTestEvidenceScreen(t *testing.T, svc app.ReviewService, logger *slog.Logger) *EvidenceScreen {
	t.Helper()
	s := newTestEvidenceScreen(t, svc, logger)
	waitUntil(t, "the project opened", func() bool { return s.project() != nil })
	return s
}

// canvasText returns the text of the labels and entries under o.
func canvasText(o fyne.CanvasObject) string {
	var b strings.Builder
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch x := o.(type) {
		case *widget.Label:
			b.WriteString(x.Text + "\n")
		case *widget.Entry:
			b.WriteString(x.Text + "\n")
		case *widget.Card:
			walk(x.Content)
		case *fyne.Container:
			for _, c := range x.Objects {
				walk(c)
			}
		}
	}
	walk(o)
	return b.String()
}

func TestEvidenceScreenImportLiterature(t *testing.T) {
	ws := newEmptyWorkspace(t)
	s := newTestEvidenceScreen(t, ws.Reviews(), ws.Logger())
	waitUntil(t, "the notice that there is no project yet", func() bool { return s.notice.Visible() })
	if len(ws.Reviews().Sources(context.Background())) != 0 {
		t.Fatal("a new workspace lists literature")
	}

	// A malformed file is refused and registers nothing.
	bad := filepath.Join(t.TempDir(), "bad.xml")
	if err := os.WriteFile(bad, []byte("<PubmedArticleSet><PubmedArticle><MedlineCitation>"), 0o644); err != nil {
		t.Fatal(err)
	}
	onUI(t, func(testing.TB) { s.ImportLiterature(bad) })
	waitIdle(t, s)
	if got := ws.Reviews().Sources(context.Background()); len(got) != 0 {
		t.Fatalf("a failed import registered %v", got)
	}

	onUI(t, func(testing.TB) {
		s.ImportLiterature(filepath.Join("..", "app", "evidence", "testdata", "pubmed_sample.xml"))
	})
	waitUntil(t, "the sources offered for a new review", func() bool { return slices.Contains(s.sources, app.LiteratureSourceName) })
	if got := ws.Reviews().Sources(context.Background()); !slices.Equal(got, []string{app.LiteratureSourceName}) {
		t.Fatalf("literature sources after the import: %v", got)
	}
	onUI(t, func(t testing.TB) {
		s.NewProject("imported", app.LiteratureSourceName, evidence.PICO{Population: "adults", Intervention: "ablation"})
		if s.project() == nil {
			t.Fatal("no project")
		}
	})
	waitSaved(t, s)
}

func TestEvidenceScreenSavesOnClose(t *testing.T) {
	ws, _ := newLiteratureWorkspace(t, false)
	mw := reviewWithPendingEdit(t, ws)
	// The window is closed before the review saves the edit.
	onUI(t, func(t testing.TB) {
		if st := mw.Evidence.saveState.Text; st != "unsaved changes…" {
			t.Fatalf("the edit is no longer pending at close: %q", st)
		}
		mw.Window.Close()
	})
	p, err := ws.LoadReviewProject("On close")
	if err != nil || p.PICO.Outcome != "local tumor progression" {
		t.Fatalf("saved PICO %+v, %v", p.PICO, err)
	}
}

package ui

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

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

// waitSaved waits until the screen's saves have landed and checks that
// the last one succeeded.
func waitSaved(t *testing.T, s *EvidenceScreen) {
	t.Helper()
	onUI(t, func(testing.TB) { s.flushSave() })
	waitUntil(t, "the project to be saved", func() bool { return !s.saving() })
	onUI(t, func(t testing.TB) {
		if !strings.HasPrefix(s.saveState.Text, "saved ") {
			t.Fatalf("save state %q", s.saveState.Text)
		}
	})
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
	sess, err := ws.OpenReview(context.Background(), p)
	if err != nil {
		t.Fatal(err)
	}
	defer sess.Close()
	st, err := sess.Corpus.StudyText(context.Background(), id)
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
	waitFor(t, s, 1) // no project yet
	onUI(t, func(t testing.TB) {
		if s.project != nil || !s.notice.Visible() || !slices.Contains(s.sources, "lit") {
			t.Fatalf("project %v, notice %q, sources %v", s.project, s.notice.Text, s.sources)
		}

		// A new project, its question completed on the PICO step.
		s.NewProject("HCC ablation", "lit", evidence.PICO{Population: "patients with hepatocellular carcinoma", Intervention: "microwave ablation"})
		s.pico[2].SetText("radiofrequency ablation")
		s.pico[3].SetText("local tumor progression")
	})
	waitSaved(t, s)
	onUI(t, func(t testing.TB) {
		if got := s.project.PICO; got.Comparison != "radiofrequency ablation" || got.Population != "patients with hepatocellular carcinoma" {
			t.Fatalf("PICO %+v", got)
		}
		if names, _ := ws.ReviewProjects(); !slices.Equal(names, []string{"HCC ablation"}) || !slices.Equal(s.projectSel.Options, names) {
			t.Fatalf("projects saved %v, listed %v", names, s.projectSel.Options)
		}

		// A typed query: a malformed one is pointed at, not run.
		s.query.SetText(`"hepatocellular carcinoma" AND (microwave OR radiofrequency`)
		if !s.queryErr.Visible() || !strings.Contains(s.queryErr.Text, "^") || !strings.Contains(s.queryErr.Text, "position") {
			t.Fatalf("query error %q (visible %v)", s.queryErr.Text, s.queryErr.Visible())
		}
		s.query.SetText(`"hepatocellular carcinoma" AND (microwave OR radiofrequency)`)
		if s.queryErr.Visible() {
			t.Fatalf("a valid query shows an error: %q", s.queryErr.Text)
		}
		s.limitSel.SetSelected("20")
		test.Tap(s.searchBtn)
	})
	waitFor(t, s, 2)
	onUI(t, func(t testing.TB) {
		p := s.project
		if p.Search == nil || p.Search.Total < 20 || len(p.Search.IDs) != 20 {
			t.Fatalf("search %+v; notice %q", p.Search, s.notice.Text)
		}
		if rows, _ := s.candidates.Length(); rows != 20 || !strings.Contains(s.candidateCell(0, 3), "hepatocellular carcinoma") {
			t.Fatalf("candidates table: %d rows, first %q", rows, s.candidateCell(0, 3))
		}
		if !strings.Contains(s.searchStatus.Text, fmt.Sprintf("%d records match", p.Search.Total)) {
			t.Errorf("search status %q", s.searchStatus.Text)
		}

		// Criteria written by hand, then screening with scripted verdicts.
		test.Tap(s.addCriterionBtn)
		test.Tap(s.addCriterionBtn)
		s.criterionText[0].SetText("The study is a randomized controlled trial")
		s.criterionText[1].SetText("The study reports paediatric patients")
		if len(s.project.Criteria) != 2 || s.project.Criteria[1].Text != "The study reports paediatric patients" {
			t.Fatalf("criteria %+v", s.project.Criteria)
		}
		srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
			r, _ := screeningReply(req)
			return r
		})
		test.Tap(s.screenBtn)
	})
	waitFor(t, s, 3)
	var inc, exc string
	var ranked []string
	var project *evidence.Project
	onUI(t, func(t testing.TB) {
		p := s.project
		if len(p.Screening) != 20 || s.notice.Visible() {
			t.Fatalf("%d screened; notice %q", len(p.Screening), s.notice.Text)
		}
		if text, imp := s.screenCell(0, 4); text != "✓" || imp != widget.SuccessImportance {
			t.Errorf("best study's C1 cell %q %v, want a green ✓", text, imp)
		}
		if text, imp := s.screenCell(0, 5); text != "✗" || imp != widget.DangerImportance {
			t.Errorf("C2 cell %q %v, want a red ✗", text, imp)
		}
		if _, cols := s.screenTable.Length(); cols != 6 {
			t.Errorf("screening table has %d columns, want 4 + 2 criteria", cols)
		}
		last := s.screenRows[len(s.screenRows)-1]
		if st := s.screenedStudy(last); st.Score > s.screenedStudy(s.screenRows[0]).Score {
			t.Errorf("screening not ranked best first: %v", st)
		}

		// Switching C2 off rescores without the model.
		calls := len(srv.ChatRequests())
		s.project.Criteria[1].Disabled = true
		s.criteriaChanged()
		if st := s.screenedStudy(s.screenRows[0]); st.Score != 1 {
			t.Errorf("score with C2 off = %v, want 1", st.Score)
		}
		if len(srv.ChatRequests()) != calls {
			t.Error("rescoring called the model")
		}
		ranked = slices.Clone(s.screenRows)
		inc, exc = ranked[0], ranked[1]
		var err error
		if project, err = cloneProject(s.project); err != nil {
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
	onUI(t, func(testing.TB) { s.ShowStudy(inc) })
	waitFor(t, s, 4) // its text read
	onUI(t, func(t testing.TB) {
		detail := richText(s.studyDetail)
		if !strings.Contains(detail, "✓ YES — C1 The study is a randomized controlled trial") || !strings.Contains(detail, "We enrolled") {
			t.Errorf("study detail:\n%s", detail)
		}
		test.Tap(s.includeBtn)
		s.Decide(inc2, true, "")
		s.Decide(exc, false, "Wrong study design")
		c := s.project.PRISMA()
		if c.Included != 2 || c.Excluded != 1 || c.Reasons["Wrong study design"] != 1 {
			t.Fatalf("PRISMA %+v", c)
		}
		if !strings.Contains(s.prismaCounts.Text, "included 2") || !strings.Contains(s.prismaCounts.Text, "Wrong study design: 1") {
			t.Errorf("PRISMA counts %q", s.prismaCounts.Text)
		}
		if text, imp := s.screenCell(0, 1); text != "Included" || imp != widget.SuccessImportance {
			t.Errorf("decision cell %q", text)
		}
	})
	waitUntil(t, "the PRISMA diagram", func() bool { return s.prismaImg.Image != nil })

	// Extraction: a supported value beside its chunk, an unsupported one
	// flagged.
	onUI(t, func(testing.TB) {
		test.Tap(s.addFieldBtn)
		test.Tap(s.addFieldBtn)
		s.fieldEntries[0][0].SetText("patients enrolled")
		s.fieldEntries[0][1].SetText("how many patients were enrolled in total")
		s.fieldEntries[1][0].SetText("median age")
		srv.HandleChat(extractionReply)
		test.Tap(s.extractBtn)
	})
	waitFor(t, s, 5)
	onUI(t, func(t testing.TB) {
		if s.notice.Visible() {
			t.Fatalf("notice %q", s.notice.Text)
		}
		if s.extractStudyID() != inc {
			t.Fatalf("extract step shows %q, want %q", s.extractStudyID(), inc)
		}
		if e := s.valueEntries["patients enrolled"]; e == nil || e.Text != enrolled {
			t.Fatalf("value entries %v", s.valueEntries)
		}
		values := canvasText(s.valuesBox)
		if !strings.Contains(values, fmt.Sprintf("[%d]", chunk)) || !strings.Contains(values, chunkText) {
			t.Errorf("the cited chunk is not shown beside the value:\n%s", values)
		}
		if f := s.valueFlags["median age"]; f.Importance != widget.DangerImportance || !strings.Contains(f.Text, "Unsupported") {
			t.Errorf("median age flag %q (%v), want unsupported in red", f.Text, f.Importance)
		}
		if f := s.valueFlags["patients enrolled"]; f.Importance == widget.DangerImportance {
			t.Errorf("supported value flagged: %q", f.Text)
		}
		s.valueEntries["median age"].SetText("NP")
		if v, _ := s.fieldValue(inc, "median age"); !v.Edited || v.Unsupported || v.Value != "NP" {
			t.Errorf("edited value %+v", v)
		}

		// Results: both groups' events and totals, standardized, then
		// corrected by hand.
		s.steps.SelectIndex(4)
		s.outcome.SetText("local tumor progression")
		s.cohort.SetText("microwave ablation (treatment) vs radiofrequency ablation (control)")
		s.shapeSel.SetSelectedIndex(0) // two groups
		if s.project.Result.Measure != evidence.TwoGroups {
			t.Fatalf("result spec %+v", s.project.Result)
		}
		test.Tap(s.resultsBtn)
	})
	waitFor(t, s, 6)
	onUI(t, func(t testing.TB) {
		if s.notice.Visible() || len(s.groupRows) != 4 || len(s.standardRows) != 2 || s.problems.Visible() {
			t.Fatalf("groups %d, standardized %d, problems %q, notice %q", len(s.groupRows), len(s.standardRows), s.problems.Text, s.notice.Text)
		}
		if s.groupCell(0, 2) != "treatment" || s.groupCell(0, 4) == "" || strings.Contains(s.groupCell(0, 9), "⚠") {
			t.Errorf("first group row: role %q, events %q, check %q", s.groupCell(0, 2), s.groupCell(0, 4), s.groupCell(0, 9))
		}

		// The meta-analysis of the two studies.
		s.steps.SelectIndex(5)
		if s.measureSel.Selected == "" || s.methodSel.Selected == "" {
			t.Fatalf("meta settings: measure %q, method %q", s.measureSel.Selected, s.methodSel.Selected)
		}
		s.measureSel.SetSelectedIndex(slices.Index(s.measures, meta.RR))
		if s.project.Meta.Measure != "RR" {
			t.Fatalf("meta settings %+v", s.project.Meta)
		}
		test.Tap(s.runMetaBtn)
	})
	waitFor(t, s, 7)
	onUI(t, func(t testing.TB) {
		if s.forest.Image == nil || !strings.Contains(s.metaStatus.Text, "k = 2") || !strings.Contains(s.metaSummary.Text, "Risk Ratio") {
			t.Fatalf("meta-analysis: status %q, summary %q", s.metaStatus.Text, s.metaSummary.Text)
		}
	})

	// Export.
	out := filepath.Join(t.TempDir(), "review.xlsx")
	onUI(t, func(testing.TB) { s.ExportWorkbook(out) })
	waitFor(t, s, 8)
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
		s.steps.SelectIndex(4)
		if err := s.EditGroup(inc, 0, "treatment", []string{s.groupCell(0, 3), "977", "", "", ""}); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(s.groupCell(0, 4), "977 ⚠") || s.groupCell(0, 9) != "⚠ not in its chunk, edited" {
			t.Errorf("edited group: events %q, check %q", s.groupCell(0, 4), s.groupCell(0, 9))
		}
		if len(s.standardRows) != 1 || len(s.resultProblems) != 1 || !strings.Contains(s.problems.Text, "977 events") {
			t.Errorf("standardized %d rows, problems %q", len(s.standardRows), s.problems.Text)
		}

		// A model failure: a notice, and the edited criterion is kept.
		s.criterionText[0].SetText("The study is randomized")
		srv.HandleChat(func(api.ChatRequest) ollamatest.ChatReply {
			return ollamatest.ChatReply{Fault: ollamatest.Fault{Status: http.StatusInternalServerError, Error: "model crashed"}}
		})
		test.Tap(s.suggestCriteriaBtn)
	})
	waitFor(t, s, 9)
	onUI(t, func(t testing.TB) {
		if !s.notice.Visible() || !strings.Contains(s.notice.Text, "failed") {
			t.Errorf("notice %q (visible %v)", s.notice.Text, s.notice.Visible())
		}
		if s.project.Criteria[0].Text != "The study is randomized" || s.criterionText[0].Text != "The study is randomized" || len(s.project.Criteria) != 2 {
			t.Errorf("criteria after a failure: %+v", s.project.Criteria)
		}
		if !s.project.ScreeningStale() || !strings.Contains(s.screenStatus.Text, "Screen again") {
			t.Errorf("edited criteria not reported stale: %q", s.screenStatus.Text)
		}
	})

	// Reopening on the same workspace restores everything.
	waitSaved(t, s)
	var s2 *EvidenceScreen
	onUI(t, func(t testing.TB) {
		s2 = NewEvidenceScreen(t.Context(), ws, mw.Window, "test")
		s2.Refresh()
	})
	waitFor(t, s2, 2) // listed, opened
	onUI(t, func(t testing.TB) {
		if s2.project == nil {
			t.Fatalf("no project reopened; notice %q", s2.notice.Text)
		}
		p2 := s2.project
		if p2.Name != "HCC ablation" || p2.PICO.Outcome != "local tumor progression" || s2.pico[3].Text != "local tumor progression" {
			t.Errorf("reopened PICO %+v", p2.PICO)
		}
		if s2.query.Text != s.project.Query || len(p2.Search.IDs) != 20 || len(p2.Screening) != 20 {
			t.Errorf("reopened query %q, search %+v", s2.query.Text, p2.Search)
		}
		if len(s2.criterionText) != 2 || s2.criterionText[0].Text != "The study is randomized" || !p2.Criteria[1].Disabled {
			t.Errorf("reopened criteria %+v", p2.Criteria)
		}
		if d := p2.Decisions[exc]; d.Include || d.Reason != "Wrong study design" || !p2.Decisions[inc].Include {
			t.Errorf("reopened decisions %+v", p2.Decisions)
		}
		if v, _ := s2.fieldValue(inc, "median age"); !v.Edited || v.Value != "NP" {
			t.Errorf("reopened edited value %+v", v)
		}
		if !strings.Contains(s2.prismaCounts.Text, "included 2") {
			t.Errorf("reopened PRISMA %q", s2.prismaCounts.Text)
		}
	})
}

// TestEvidenceScreenWithoutModel: the model buttons say a chat model is
// needed; the user types terms, builds the query and searches.
func TestEvidenceScreenWithoutModel(t *testing.T) {
	ws, srv := newLiteratureWorkspace(t, false)
	s := newTestEvidenceScreen(t, ws)
	waitFor(t, s, 1)
	onUI(t, func(testing.TB) {
		s.NewProject("no model", "lit", evidence.PICO{Population: "men with localized prostate cancer"})
		test.Tap(s.suggestTermsBtn)
	})
	waitFor(t, s, 2)
	onUI(t, func(t testing.TB) {
		if !strings.Contains(s.notice.Text, "no chat model") || len(srv.ChatRequests()) != 0 {
			t.Fatalf("notice %q", s.notice.Text)
		}
		s.terms[0].SetText("prostate cancer\nprostatic neoplasms")
		s.terms[1].SetText("brachytherapy")
		test.Tap(s.buildBtn)
		if want := `("prostate cancer" OR "prostatic neoplasms") AND brachytherapy`; s.query.Text != want || s.project.Query != want {
			t.Fatalf("query %q, want %q", s.query.Text, want)
		}
		test.Tap(s.searchBtn)
	})
	waitFor(t, s, 3)
	onUI(t, func(t testing.TB) {
		if s.project.Search == nil || len(s.project.Search.IDs) == 0 || s.notice.Visible() {
			t.Fatalf("search %+v, notice %q", s.project.Search, s.notice.Text)
		}
		test.Tap(s.screenBtn) // no criteria, no model
	})
	waitFor(t, s, 4)
	onUI(t, func(t testing.TB) {
		if !s.notice.Visible() || len(s.project.Screening) != 0 {
			t.Errorf("screening without a model: notice %q", s.notice.Text)
		}
	})
	waitSaved(t, s)
}

// newTestEvidenceScreen shows an Evidence screen on ws in a window of its
// own and starts listing its projects.
func newTestEvidenceScreen(t *testing.T, ws *app.Workspace) *EvidenceScreen {
	t.Helper()
	a := newTestApp(t)
	var s *EvidenceScreen
	onUI(t, func(t testing.TB) {
		s = NewEvidenceScreen(t.Context(), ws, a.NewWindow("evidence"), "test")
		s.Refresh()
	})
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

// TestEvidenceScreenCancel: cancelling a slow screening leaves a notice and
// the project usable.
func TestEvidenceScreenCancel(t *testing.T) {
	ws, srv := newLiteratureWorkspace(t, true)
	s := newTestEvidenceScreen(t, ws)
	waitFor(t, s, 1)
	onUI(t, func(testing.TB) {
		s.NewProject("cancel", "lit", evidence.PICO{Population: "patients with acute myeloid leukemia", Intervention: "CAR-T cell therapy"})
		s.query.SetText("leukemia")
		test.Tap(s.searchBtn)
	})
	waitFor(t, s, 2)
	srv.HandleChat(func(req api.ChatRequest) ollamatest.ChatReply {
		return ollamatest.ChatReply{Content: `{"verdicts":["YES"]}`, Fault: ollamatest.Fault{Delay: 2 * time.Second}}
	})
	onUI(t, func(testing.TB) {
		test.Tap(s.addCriterionBtn)
		s.criterionText[0].SetText("The study treats adults")
		test.Tap(s.screenBtn)
	})
	var running *task
	waitUntil(t, "the screening to start", func() bool { running = s.running; return running != nil })
	onUI(t, func(testing.TB) { running.cancel() })
	waitFor(t, s, 3)
	onUI(t, func(t testing.TB) {
		if !strings.Contains(s.notice.Text, "cancelled") || s.running != nil {
			t.Fatalf("notice %q", s.notice.Text)
		}
		if len(s.project.Screening) != 0 || s.project.Criteria[0].Text != "The study treats adults" {
			t.Errorf("after Cancel: %d screened, criteria %+v", len(s.project.Screening), s.project.Criteria)
		}
	})
	waitSaved(t, s)
}

func TestEvidenceScreenImportLiterature(t *testing.T) {
	ws := newEmptyWorkspace(t)
	s := newTestEvidenceScreen(t, ws)
	waitFor(t, s, 1)
	if len(ws.LiteratureSources(context.Background())) != 0 {
		t.Fatal("a new workspace lists literature")
	}

	// A malformed file is refused and registers nothing.
	bad := filepath.Join(t.TempDir(), "bad.xml")
	if err := os.WriteFile(bad, []byte("<PubmedArticleSet><PubmedArticle><MedlineCitation>"), 0o644); err != nil {
		t.Fatal(err)
	}
	onUI(t, func(testing.TB) { s.ImportLiterature(bad) })
	waitFor(t, s, 2)
	if got := ws.LiteratureSources(context.Background()); len(got) != 0 {
		t.Fatalf("a failed import registered %v", got)
	}

	onUI(t, func(testing.TB) {
		s.ImportLiterature(filepath.Join("..", "app", "evidence", "testdata", "pubmed_sample.xml"))
	})
	waitFor(t, s, 3)
	if got := ws.LiteratureSources(context.Background()); !slices.Equal(got, []string{app.LiteratureSourceName}) {
		t.Fatalf("literature sources after the import: %v", got)
	}
	waitUntil(t, "the sources offered for a new review", func() bool { return slices.Contains(s.sources, app.LiteratureSourceName) })
	onUI(t, func(testing.TB) {
		s.NewProject("imported", app.LiteratureSourceName, evidence.PICO{Population: "adults", Intervention: "ablation"})
	})
	waitSaved(t, s)
}

func TestEvidenceScreenSavesOnClose(t *testing.T) {
	ws, _ := newLiteratureWorkspace(t, false)
	mw := newTestMainWindow(t, ws)
	s := mw.Evidence
	waitFor(t, s, 1)
	onUI(t, func(testing.TB) {
		s.NewProject("On close", "lit", evidence.PICO{Population: "patients with hepatocellular carcinoma", Intervention: "microwave ablation"})
	})
	waitSaved(t, s)
	// An edit, then the window is closed before the screen saves it.
	onUI(t, func(t testing.TB) {
		s.pico[3].SetText("local tumor progression")
		if !s.saving() {
			t.Fatal("the edit is not pending")
		}
		mw.Window.Close()
	})
	p, err := ws.LoadReviewProject("On close")
	if err != nil || p.PICO.Outcome != "local tumor progression" {
		t.Fatalf("saved PICO %+v, %v", p.PICO, err)
	}
}

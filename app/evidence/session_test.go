package evidence

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ollama/ollama/api"

	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// demoPICO is a question the demo literature answers.
var demoPICO = PICO{Population: "patients with hepatocellular carcinoma", Intervention: "microwave ablation",
	Comparison: "radiofrequency ablation", Outcome: "local tumor progression"}

// demoModel is a scripted chat model for the review steps over the demo
// literature, answering each step by its reply schema: search terms
// (termsReply), two criteria, verdicts by title (microwave ablation: YES
// YES; else NO UNCERTAIN), the number enrolled read from the passage that
// states it, and the counts of the results passage. A study whose prompt
// contains fail (when set) gets a server error; so does every request
// when down is set. It counts the requests per step and can wait before
// answering screenings.
type demoModel struct {
	mu    sync.Mutex
	calls map[string]int
	// screened are the titles of the studies in screening requests, in
	// the order the requests arrived.
	screened []string
	fail     string
	down     bool
	delay    time.Duration
}

var (
	enrolledRe = regexp.MustCompile(`\[(\d+)\] [^\n]*We enrolled (\d+) `)
	countsRe   = regexp.MustCompile(`\[(\d+)\] [^\n]*was (\d+) of (\d+) \([\d.]+%\) with [^\n]* and (\d+) of (\d+) \(`)
)

// step names the step of a request by its reply schema.
func step(req api.ChatRequest) string {
	f := string(req.Format)
	switch {
	case strings.Contains(f, `"primary"`):
		return "terms"
	case strings.Contains(f, "title_criteria"):
		return "criteria"
	case strings.Contains(f, "verdicts"):
		return "screen"
	case strings.Contains(f, `"fields"`):
		return "fields"
	case strings.Contains(f, `"groups"`):
		return "results"
	}
	return "unknown"
}

func (m *demoModel) handle(req api.ChatRequest) ollamatest.ChatReply {
	st := step(req)
	user := req.Messages[len(req.Messages)-1].Content
	m.mu.Lock()
	if m.calls == nil {
		m.calls = map[string]int{}
	}
	m.calls[st]++
	if st == "screen" {
		if _, rest, ok := strings.Cut(user, "Title: "); ok {
			title, _, _ := strings.Cut(rest, "\n")
			m.screened = append(m.screened, title)
		}
	}
	fail, down, delay := m.fail, m.down, m.delay
	m.mu.Unlock()
	if down || (fail != "" && strings.Contains(user, fail)) {
		return ollamatest.ChatReply{Fault: ollamatest.Fault{Status: 500, Error: "model runner crashed"}}
	}
	switch st {
	case "terms":
		return ollamatest.ChatReply{Content: termsReply}
	case "criteria":
		return ollamatest.ChatReply{Content: `{"analysis":"MWA vs RFA in HCC","title_criteria":["Hepatocellular carcinoma"],"content_criteria":["Microwave ablation is compared with radiofrequency ablation"]}`}
	case "screen":
		time.Sleep(delay)
		if strings.Contains(user, "Title: Microwave ablation") {
			return ollamatest.ChatReply{Content: `{"verdicts":["YES","YES"]}`}
		}
		return ollamatest.ChatReply{Content: `{"verdicts":["NO","UNCERTAIN"]}`}
	case "fields":
		var fields []string
		if mm := enrolledRe.FindStringSubmatch(user); mm != nil {
			fields = append(fields, fmt.Sprintf(`{"name":"enrolled","value":"%s patients","sources":[%s]}`, mm[2], mm[1]))
		} else {
			fields = append(fields, `{"name":"enrolled","value":"NP","sources":[]}`)
		}
		if strings.Contains(user, ". design: ") {
			fields = append(fields, `{"name":"design","value":"NP","sources":[]}`)
		}
		return ollamatest.ChatReply{Content: `{"fields":[` + strings.Join(fields, ",") + `]}`}
	case "results":
		mm := countsRe.FindStringSubmatch(user)
		if mm == nil {
			return ollamatest.ChatReply{Content: `{"groups":[]}`}
		}
		src := mm[1]
		return ollamatest.ChatReply{Content: fmt.Sprintf(`{"groups":[
			{"name":"MWA","role":"treatment","n":{"value":%s,"sources":[%s]},"events":{"value":%s,"sources":[%s]},"percent":null},
			{"name":"RFA","role":"control","n":{"value":%s,"sources":[%s]},"events":{"value":%s,"sources":[%s]},"percent":null}]}`,
			mm[3], src, mm[2], src, mm[5], src, mm[4], src)}
	}
	return ollamatest.ChatReply{Fault: ollamatest.Fault{Status: 400, Error: "unexpected request"}}
}

func (m *demoModel) count(step string) int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.calls[step]
}

func (m *demoModel) set(fn func(m *demoModel)) {
	m.mu.Lock()
	defer m.mu.Unlock()
	fn(m)
}

// demoSession returns a session on a new project over the demo literature
// with the scripted model.
func demoSession(t *testing.T) (*Session, *demoModel) {
	t.Helper()
	db, _ := openDB(t)
	if err := DemoData(context.Background(), db, 7); err != nil {
		t.Fatal(err)
	}
	srv, c := scriptedClient(t)
	m := &demoModel{}
	srv.HandleChat(m.handle)
	return &Session{Project: NewProject("demo review", "lit.sqlite", demoPICO), Corpus: NewCorpus(db), Chat: c, Model: scriptedModel, Concurrency: 2}, m
}

// snapshot is the project as saved, to compare before and after a step.
func snapshot(t *testing.T, p *Project) string {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// recordOf reads a record of the session's corpus.
func recordOf(t *testing.T, s *Session, id string) Record {
	t.Helper()
	recs, err := s.Corpus.Records(context.Background(), []string{id})
	if err != nil || len(recs) != 1 {
		t.Fatalf("record %s: %v", id, err)
	}
	return recs[0]
}

func TestSessionReviewSteps(t *testing.T) {
	ctx := context.Background()
	s, m := demoSession(t)
	p := s.Project

	// Search terms: from the model, with five reference abstracts found by
	// the initial search of the PICO's main words.
	if err := s.SuggestTerms(ctx); err != nil {
		t.Fatal(err)
	}
	var steps TermSteps
	if err := json.Unmarshal([]byte(termsReply), &steps); err != nil {
		t.Fatal(err)
	}
	wantQ, _ := steps.Final().Query()
	if p.Query != wantQ || !slices.Equal(p.Terms.Conditions, steps.Final().Conditions) {
		t.Errorf("terms %+v, query %s", p.Terms, p.Query)
	}
	if m.count("terms") != 1 {
		t.Errorf("%d term requests", m.count("terms"))
	}

	// Search: every match (the demo corpus is below SearchPool, with no
	// duplicates) ranked by relevance to the PICO, the best 12 kept.
	if _, err := s.Search(ctx, 12); err != nil {
		t.Fatal(err)
	}
	want, err := s.Corpus.Search(ctx, p.Query, SearchPool)
	if err != nil {
		t.Fatal(err)
	}
	docs := make([]Doc, len(want.Hits))
	for i := range want.Hits {
		docs[i] = DocOf(&want.Hits[i].Record)
	}
	var wantIDs []string
	picoScore := map[string]float64{}
	for _, sc := range RankByPICO(demoPICO, docs, RankOptions{}) {
		if len(wantIDs) < 12 {
			wantIDs = append(wantIDs, sc.ID)
		}
		picoScore[sc.ID] = sc.Score
	}
	if p.Search == nil || p.Search.Total != want.Total || want.Total <= 12 || p.Search.FTS5 != want.FTS5 ||
		!slices.Equal(p.Search.IDs, wantIDs) {
		t.Fatalf("search %+v\nwant total %d, IDs %v", p.Search, want.Total, wantIDs)
	}
	// Ordered by PICO relevance (equal scores may come in any order: the
	// ranker sums in map order, so ties differ in the last bits).
	for i := 1; i < len(p.Search.IDs); i++ {
		if a, b := picoScore[p.Search.IDs[i-1]], picoScore[p.Search.IDs[i]]; a < b-1e-9 {
			t.Errorf("candidate %d (%v) ranked before a better one (%v)", i, a, b)
		}
	}
	if picoScore[p.Search.IDs[0]] <= picoScore[p.Search.IDs[11]]+1e-9 {
		t.Errorf("the PICO scores do not separate the candidates: %v", picoScore)
	}
	for _, id := range p.Search.IDs {
		if info := p.Studies[id]; info.Title == "" || info.Year == 0 || info.FirstAuthor != "Demo" {
			t.Errorf("study info of %s: %+v", id, info)
		}
	}

	// Criteria, then screening: the microwave studies first.
	if err := s.SuggestCriteria(ctx); err != nil {
		t.Fatal(err)
	}
	if len(p.Criteria) != 2 || p.Criteria[0].Kind != TitleCriterion {
		t.Fatalf("criteria %+v", p.Criteria)
	}
	failID := p.Search.IDs[2]
	m.set(func(m *demoModel) { m.fail = "(synthetic demo record " + strings.TrimPrefix(failID, "demo:") + ")" })
	var progress []int
	err = s.Screen(ctx, func(done, total int) {
		if total != 12 {
			t.Errorf("progress total %d", total)
		}
		progress = append(progress, done)
	})
	var se *StudyErrors
	if !errors.As(err, &se) || len(se.IDs) != 1 || se.IDs[0] != failID || se.Total != 12 || !strings.Contains(err.Error(), "model runner crashed") {
		t.Fatalf("screen: %v", err)
	}
	if len(p.Screening) != 12 || len(progress) != 12 || m.count("screen") != 12 {
		t.Fatalf("%d screened, progress %v, %d calls", len(p.Screening), progress, m.count("screen"))
	}
	last := p.Screening[11]
	if last.ID != failID || last.Error == "" || last.Verdicts != nil {
		t.Errorf("failed study not last with its error: %+v", last)
	}
	for i, st := range p.Screening[:11] {
		wantScore := -0.5
		if strings.HasPrefix(st.Title, "Microwave ablation") {
			wantScore = 1
		}
		if st.Error != "" || st.Score != wantScore || (i > 0 && p.Screening[i-1].Score < st.Score) {
			t.Errorf("screening %d: %+v", i, st)
		}
	}
	if !slices.Equal(p.ScreenedCriteria, criterionTexts(p.Criteria)) {
		t.Errorf("screened criteria %v", p.ScreenedCriteria)
	}
	// Again: only the failed study is asked for; then nothing.
	m.set(func(m *demoModel) { m.fail = "" })
	if err := s.Screen(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if n := m.count("screen"); n != 13 {
		t.Errorf("%d screen calls after the retry, want 13", n)
	}
	if err := s.Screen(ctx, nil); err != nil || m.count("screen") != 13 {
		t.Errorf("nothing to screen: %v, %d calls", err, m.count("screen"))
	}
	// A weight change rescores without the model; a text change screens all again.
	p.Criteria[0].Weight = 0
	if err := s.Screen(ctx, nil); err != nil || m.count("screen") != 13 {
		t.Errorf("reweighted: %v, %d calls", err, m.count("screen"))
	}
	for _, st := range p.Screening {
		if want := map[bool]float64{true: 1, false: 0}[strings.HasPrefix(st.Title, "Microwave ablation")]; st.Score != want {
			t.Errorf("rescored %s: %v, want %v", st.ID, st.Score, want)
		}
	}
	p.Criteria[0] = Criterion{Text: "Adults with hepatocellular carcinoma", Weight: 1}
	if err := s.Screen(ctx, nil); err != nil || m.count("screen") != 25 {
		t.Errorf("edited criterion: %v, %d calls", err, m.count("screen"))
	}

	// Decisions: include the two best studies with an abstract that states
	// the counts, exclude one.
	var included []string
	for _, st := range p.Screening {
		r := recordOf(t, s, st.ID)
		if len(included) < 2 && strings.HasPrefix(st.Title, "Microwave ablation") && len(r.Sections) > 0 {
			included = append(included, st.ID)
			if err := p.Decide(st.ID, true, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(included) != 2 {
		t.Fatalf("included %v", included)
	}
	if err := p.Decide(p.Screening[11].ID, false, "wrong intervention"); err != nil {
		t.Fatal(err)
	}
	if c := p.PRISMA(); c.Identified != int(want.Total) || c.Screened != 12 || c.Included != 2 || c.Excluded != 1 || c.Undecided != 9 {
		t.Errorf("PRISMA %+v", c)
	}

	// Fields: read from the passage that states them, with the source.
	p.Fields = []FieldSpec{{Name: "enrolled", Description: "number of patients enrolled"}}
	if err := s.ExtractFields(ctx, nil); err != nil {
		t.Fatal(err)
	}
	for _, id := range included {
		vals := p.Extractions[id]
		r := recordOf(t, s, id)
		if len(vals) != 1 || !strings.Contains(r.Sections[1].Text, "We enrolled "+strings.Fields(vals[0].Value)[0]+" ") || len(vals[0].Sources) != 1 || vals[0].Unsupported {
			t.Errorf("fields of %s: %+v", id, vals)
		}
	}
	if m.count("fields") != 2 {
		t.Errorf("%d field calls", m.count("fields"))
	}
	// The user edits a value and adds a field: both studies are extracted
	// again, the edited value is kept.
	p.Extractions[included[0]][0] = FieldValue{Name: "enrolled", Value: "999 (corrected)", Edited: true}
	p.Fields = append(p.Fields, FieldSpec{Name: "design", Description: "study design"})
	if err := s.ExtractFields(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if got := p.Extractions[included[0]]; len(got) != 2 || got[0].Value != "999 (corrected)" || !got[0].Edited || got[1].Name != "design" {
		t.Errorf("after the edit: %+v", got)
	}
	if err := s.ExtractFields(ctx, nil); err != nil || m.count("fields") != 4 {
		t.Errorf("nothing to extract: %v, %d calls", err, m.count("fields"))
	}

	// Results, standardized and analysed.
	p.Result = ResultSpec{Outcome: "local tumor progression", Cohort: "microwave ablation (treatment) vs radiofrequency ablation (control)", Measure: TwoGroups}
	if err := s.ExtractResults(ctx, 0, nil); err != nil {
		t.Fatal(err)
	}
	rows, problems := p.StandardTable()
	if len(rows) != 2 || len(problems) != 0 {
		t.Fatalf("rows %+v, problems %v", rows, problems)
	}
	for i, row := range rows {
		r := recordOf(t, s, included[i])
		res := r.Sections[2].Text
		wantText := fmt.Sprintf("was %d of %d (", int(row.Events1), int(row.Total1))
		if row.StudyID != included[i] || !strings.Contains(res, wantText) || !strings.Contains(res, fmt.Sprintf(" and %d of %d (", int(row.Events2), int(row.Total2))) ||
			!strings.HasPrefix(row.Label, "Demo "+strconv.Itoa(r.Year)) {
			t.Errorf("row %+v for %q", row, res)
		}
	}
	if _, res, err := p.Analyze(); err != nil || res.K != 2 {
		t.Errorf("analysis: %+v, %v", res, err)
	}
	// A result the user corrected is kept by a new run for the same spec.
	r := p.Results[included[0]]
	r.Groups[0].N.Value++
	p.CorrectResult(included[0], r)
	calls := m.count("results")
	if err := s.ExtractResults(ctx, 0, nil); err != nil || m.count("results") != calls || !p.Results[included[0]].Edited {
		t.Errorf("corrected result, same spec: %v, %d calls", err, m.count("results")-calls)
	}
	// Another cohort definition: every result is stale, the corrected one
	// too, until extracted again (which replaces the correction).
	p.Result.Cohort = "MWA (treatment) vs RFA (control)"
	if rows, problems := p.StandardTable(); len(rows) != 0 || len(problems) != 2 || !strings.Contains(problems[0], "corrected for an earlier outcome") {
		t.Errorf("after a spec change: %d rows, problems %q", len(rows), problems)
	}
	calls = m.count("results")
	if err := s.ExtractResults(ctx, 0, nil); err != nil || m.count("results") != calls+2 || p.Results[included[0]].Edited {
		t.Errorf("new spec: %v, %d calls, edited %v", err, m.count("results")-calls, p.Results[included[0]].Edited)
	}
	if rows, problems := p.StandardTable(); len(rows) != 2 || len(problems) != 0 {
		t.Errorf("re-extracted: %d rows, problems %q", len(rows), problems)
	}

	// A second outcome: its own extraction (the model is asked again for
	// each study), table and meta-analysis; the first outcome is untouched.
	before := snapshot(t, &Project{Outcome: p.Outcome})
	o2, err := p.AddOutcome(ResultSpec{Outcome: "local tumor progression at 2 years", Cohort: "MWA (treatment) vs RFA (control)", Measure: TwoGroups})
	if err != nil || o2 != 1 {
		t.Fatalf("AddOutcome: %d, %v", o2, err)
	}
	calls = m.count("results")
	if err := s.ExtractResults(ctx, o2, nil); err != nil || m.count("results") != calls+2 || len(p.OutcomeAt(o2).Results) != 2 {
		t.Fatalf("second outcome: %v, %d calls, %d results", err, m.count("results")-calls, len(p.OutcomeAt(o2).Results))
	}
	if rows, problems := p.StandardTableFor(o2); len(rows) != 2 || len(problems) != 0 {
		t.Errorf("second outcome's table: %d rows, problems %q", len(rows), problems)
	}
	if _, res, err := p.AnalyzeOutcome(o2); err != nil || res.K != 2 {
		t.Errorf("second outcome's analysis: %+v, %v", res, err)
	}
	if snapshot(t, &Project{Outcome: p.Outcome}) != before {
		t.Error("extracting the second outcome changed the first")
	}
	if err := s.ExtractResults(ctx, 0, nil); err != nil || m.count("results") != calls+2 {
		t.Errorf("first outcome again: %v, %d calls", err, m.count("results")-calls)
	}
	if err := s.ExtractResults(ctx, 2, nil); err == nil || !strings.Contains(err.Error(), "no outcome 3") {
		t.Errorf("unknown outcome: %v", err)
	}
}

func TestSessionModelFailureLeavesProjectUnchanged(t *testing.T) {
	ctx := context.Background()
	s, m := demoSession(t)
	p := s.Project
	// The user's own work: terms, query, criteria, a field value.
	p.Terms = SearchTerms{Conditions: []string{"hepatocellular carcinoma"}, Treatments: []string{"microwave ablation", "MWA"}}
	p.Query = `"hepatocellular carcinoma" AND ("microwave ablation" OR MWA)`
	if _, err := s.Search(ctx, 5); err != nil {
		t.Fatal(err)
	}
	p.Criteria = []Criterion{{Text: "Hepatocellular carcinoma, edited by the user", Weight: 2}}
	id := p.Search.IDs[0]
	if err := p.Decide(id, true, ""); err != nil {
		t.Fatal(err)
	}
	p.Fields = []FieldSpec{{Name: "enrolled", Description: "number enrolled"}}
	p.Extractions[id] = []FieldValue{{Name: "enrolled", Value: "41 (my reading)", Edited: true}}
	p.Result = ResultSpec{Outcome: "local tumor progression", Measure: TwoGroups}
	before := snapshot(t, p)

	m.set(func(m *demoModel) { m.down = true })
	for name, step := range map[string]func() error{
		"terms":    func() error { return s.SuggestTerms(ctx) },
		"criteria": func() error { return s.SuggestCriteria(ctx) },
		"screen":   func() error { return s.Screen(ctx, nil) },
		"fields":   func() error { return s.ExtractFields(ctx, nil) },
		"results":  func() error { return s.ExtractResults(ctx, 0, nil) },
	} {
		err := step()
		if err == nil || !strings.Contains(err.Error(), "model runner crashed") {
			t.Errorf("%s: err = %v", name, err)
		}
		if after := snapshot(t, p); after != before {
			t.Errorf("%s changed the project:\n%s\n%s", name, before, after)
		}
	}
	if m.count("screen") != 5 || m.count("fields") != 1 {
		t.Errorf("calls %v", m.calls)
	}

	// Without a model: a clear error, nothing changed.
	m.set(func(m *demoModel) { m.down = false })
	srvless := &Session{Project: p, Corpus: s.Corpus}
	for name, step := range map[string]func() error{
		"terms":  func() error { return srvless.SuggestTerms(ctx) },
		"screen": func() error { return srvless.Screen(ctx, nil) },
		"fields": func() error { return srvless.ExtractFields(ctx, nil) },
	} {
		if err := step(); !errors.Is(err, ErrNoChatModel) || !strings.Contains(err.Error(), "choose one in Settings") {
			t.Errorf("%s without a model: %v", name, err)
		}
	}
	if snapshot(t, p) != before {
		t.Error("a step without a model changed the project")
	}
	// Search needs no model.
	if _, err := srvless.Search(ctx, 3); err != nil || len(p.Search.IDs) != 3 {
		t.Errorf("search without a model: %v", err)
	}
	// A query that does not parse leaves the search as it was.
	run := *p.Search
	p.Query = `"hepatocellular carcinoma AND (`
	if _, err := s.Search(ctx, 5); err == nil || !slices.Equal(p.Search.IDs, run.IDs) {
		t.Errorf("bad query: %v, search %+v", err, p.Search)
	}
	p.Query = " "
	if _, err := s.Search(ctx, 5); err == nil || !strings.Contains(err.Error(), "no search query") {
		t.Errorf("empty query: %v", err)
	}
}

func TestSessionExtractionStudyFailure(t *testing.T) {
	ctx := context.Background()
	s, m := demoSession(t)
	p := s.Project
	p.Query = `"microwave ablation"[ti] AND "hepatocellular carcinoma"`
	if _, err := s.Search(ctx, 6); err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, id := range p.Search.IDs {
		if len(recordOf(t, s, id).Sections) > 0 && len(ids) < 3 {
			ids = append(ids, id)
			if err := p.Decide(id, true, ""); err != nil {
				t.Fatal(err)
			}
		}
	}
	failN := strings.TrimPrefix(ids[1], "demo:")
	m.set(func(m *demoModel) { m.fail = "(synthetic demo record " + failN + ")" })
	p.Result = ResultSpec{Outcome: "local tumor progression", Cohort: "MWA vs RFA", Measure: TwoGroups}
	err := s.ExtractResults(ctx, 0, nil)
	var se *StudyErrors
	if !errors.As(err, &se) || !slices.Equal(se.IDs, []string{ids[1]}) || !strings.Contains(err.Error(), "1 of 3 studies") ||
		!strings.Contains(err.Error(), p.Label(ids[1])+": ") {
		t.Fatalf("err = %v", err)
	}
	if _, ok := p.Results[ids[1]]; ok || len(p.Results) != 2 {
		t.Errorf("results %v", p.Results)
	}
	// The next run retries only the failed study.
	m.set(func(m *demoModel) { m.fail = "" })
	calls := m.count("results")
	if err := s.ExtractResults(ctx, 0, nil); err != nil || m.count("results") != calls+1 || len(p.Results) != 3 {
		t.Errorf("retry: %v, %d calls, %d results", err, m.count("results")-calls, len(p.Results))
	}
	// Nothing included: a clear error.
	p.Decisions = map[string]Decision{}
	if err := s.ExtractFields(ctx, nil); err == nil || !strings.Contains(err.Error(), "no fields") {
		t.Errorf("no fields: %v", err)
	}
	p.Fields = []FieldSpec{{Name: "enrolled"}}
	if err := s.ExtractFields(ctx, nil); err == nil || !strings.Contains(err.Error(), "no study is included") {
		t.Errorf("nothing included: %v", err)
	}
}

func TestSessionScreenCancel(t *testing.T) {
	s, m := demoSession(t)
	p := s.Project
	p.Query = `ablation`
	if _, err := s.Search(context.Background(), 20); err != nil {
		t.Fatal(err)
	}
	p.Criteria = testCriteria[:2]
	m.set(func(m *demoModel) { m.delay = 20 * time.Millisecond })
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var busy error
	err := s.Screen(ctx, func(done, _ int) {
		if done == 3 {
			busy = s.SuggestCriteria(context.Background()) // one step at a time
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v", err)
	}
	if !errors.Is(busy, ErrStepRunning) {
		t.Errorf("a second step while screening: %v", busy)
	}
	kept := len(p.Screening)
	if kept < 3 || kept > 5 {
		t.Errorf("%d studies kept after cancelling at 3", kept)
	}
	for _, st := range p.Screening {
		if st.Error != "" || len(st.Verdicts) != 2 {
			t.Errorf("kept %+v", st)
		}
	}
	// Resumed: only the others are screened. A request cancelled in flight
	// may reach the server late, so the studies are compared, not the
	// number of requests.
	keptTitles := map[string]bool{}
	for _, st := range p.Screening {
		keptTitles[st.Title] = true
	}
	var from int
	m.set(func(m *demoModel) { m.delay, from = 0, len(m.screened) })
	if err := s.Screen(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	again := map[string]bool{}
	m.set(func(m *demoModel) {
		for _, title := range m.screened[from:] {
			again[title] = true
		}
	})
	for title := range again {
		if keptTitles[title] {
			t.Errorf("resumed: %q was screened again", title)
		}
	}
	if len(p.Screening) != 20 || len(again) != 20-kept {
		t.Errorf("resumed: %d screened, %d studies asked for %d left", len(p.Screening), len(again), 20-kept)
	}
}

func TestInitialQueries(t *testing.T) {
	got := InitialQueries(demoPICO)
	want := []string{"(hepatocellular OR carcinoma) AND (microwave OR ablation)", "(hepatocellular OR carcinoma OR microwave OR ablation)"}
	if !slices.Equal(got, want) {
		t.Errorf("InitialQueries = %q, want %q", got, want)
	}
	if got := InitialQueries(PICO{Intervention: "CD33-directed CAR-T"}); !slices.Equal(got, []string{"(cd33 OR directed OR car)"}) {
		t.Errorf("intervention only: %q", got)
	}
	if got := InitialQueries(PICO{Population: "the patients"}); len(got) != 0 {
		t.Errorf("no main words: %q", got)
	}

	// The strict query finds nothing: the relaxed one gives references.
	s, _ := demoSession(t)
	refs, q, err := s.references(context.Background(), PICO{Population: "zebrafish", Intervention: "microwave ablation"})
	if err != nil || len(refs) != MaxReferences || q != "(zebrafish OR microwave OR ablation)" {
		t.Errorf("relaxed: %d refs, %q, %v", len(refs), q, err)
	}
	for _, r := range refs {
		if !strings.Contains(strings.ToLower(r), "microwave") {
			t.Errorf("reference without the intervention: %.80s", r)
		}
	}
	// The prompt of SuggestTerms shows them.
	srv, c := scriptedClient(t)
	srv.QueueChat(ollamatest.ChatReply{Content: termsReply})
	s.Chat = c
	if err := s.SuggestTerms(context.Background()); err != nil {
		t.Fatal(err)
	}
	reqs := srv.ChatRequests()
	user := reqs[0].Messages[len(reqs[0].Messages)-1].Content
	if strings.Count(user, "(synthetic demo record") != MaxReferences || !strings.Contains(user, "[1] Microwave ablation versus radiofrequency ablation in hepatocellular carcinoma") {
		t.Errorf("references in the prompt:\n%s", user)
	}
}

func TestSessionExtractsAgainFromANewFullText(t *testing.T) {
	ctx := context.Background()
	s, m := demoSession(t)
	p := s.Project
	p.Query = `"microwave ablation"[ti] AND "hepatocellular carcinoma"`
	if _, err := s.Search(ctx, 20); err != nil {
		t.Fatal(err)
	}
	full, err := s.Corpus.FullTextIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var id string
	for _, c := range p.Search.IDs {
		if !slices.Contains(full, c) && len(recordOf(t, s, c).Sections) > 0 {
			id = c
			break
		}
	}
	if id == "" {
		t.Fatal("no candidate without a full text")
	}
	if err := p.Decide(id, true, ""); err != nil {
		t.Fatal(err)
	}
	p.Fields = []FieldSpec{{Name: "enrolled", Description: "number of patients enrolled"}}
	p.Result = ResultSpec{Outcome: "local tumor progression", Cohort: "MWA vs RFA", Measure: TwoGroups}
	if err := s.ExtractFields(ctx, nil); err != nil {
		t.Fatal(err)
	}
	if err := s.ExtractResults(ctx, 0, nil); err != nil {
		t.Fatal(err)
	}
	fields, results := m.count("fields"), m.count("results")
	// The user imports the study's full text: its chunks are numbered
	// anew, so the values (and their citations) are read again from it.
	file := filepath.Join(t.TempDir(), "demo-"+strings.TrimPrefix(id, "demo:")+".txt")
	text := "Methods\n\nWe enrolled 77 patients in 2015.\n\nResults\n\nLocal tumor progression was 3 of 40 (7.5%) with microwave ablation and 5 of 37 (13.5%) with radiofrequency ablation.\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err := Import(ctx, s.Corpus.db, file, ImportOptions{}); err != nil || len(res.FullTexts) != 1 || res.FullTexts[0].ID != id {
		t.Fatalf("import: %+v, %v", res, err)
	}
	if err := s.ExtractFields(ctx, nil); err != nil || m.count("fields") != fields+1 {
		t.Errorf("fields after the full text: %v, %d calls", err, m.count("fields")-fields)
	}
	if v := p.Extractions[id]; len(v) != 1 || v[0].Value != "77 patients" || v[0].Unsupported {
		t.Errorf("values %+v", v)
	}
	if err := s.ExtractResults(ctx, 0, nil); err != nil || m.count("results") != results+1 {
		t.Errorf("results after the full text: %v, %d calls", err, m.count("results")-results)
	}
	if rows, problems := p.StandardTable(); len(rows) != 1 || rows[0].Events1 != 3 || rows[0].Total2 != 37 || len(problems) != 0 {
		t.Errorf("rows %+v, problems %v", rows, problems)
	}
	// Nothing new: no model call.
	if err := s.ExtractFields(ctx, nil); err != nil || m.count("fields") != fields+1 {
		t.Errorf("again: %v, %d calls", err, m.count("fields")-fields)
	}
}

package ui

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/app/impression"
	"github.com/clinsight/clinsight/app/omop"
	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/postgres"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/progress"
	"github.com/clinsight/clinsight/localllm"
)

// The tests of this file drive the screens through fakes of the app
// services: no workspace, no database, no model server.

var fakeSource = app.Source{Name: "site", Path: "/data/site.sqlite", Kind: app.SourceSQLite, Description: "a fake source"}

// fakeData is an app.DataService over two fixed tables.
type fakeData struct {
	mu      sync.Mutex
	queries []string
	added   []string      // AddPostgres names
	connect chan struct{} // TestConnection waits for it when set
}

func (f *fakeData) Sources() []app.Source              { return []app.Source{fakeSource} }
func (f *fakeData) Resolve(string) (app.Source, error) { return fakeSource, nil }
func (f *fakeData) Remove(string) error                { return nil }
func (f *fakeData) AddSQLite(context.Context, string, string) (app.Source, error) {
	return app.Source{}, errors.New("not in this fake")
}
func (f *fakeData) ImportCSV(context.Context, string, datasets.CSVOptions) (datasets.ImportResult, error) {
	return datasets.ImportResult{}, errors.New("not in this fake")
}
func (f *fakeData) ImportMIMIC(context.Context, string, datasets.MIMICOptions) (datasets.MIMICResult, error) {
	return datasets.MIMICResult{}, errors.New("not in this fake")
}
func (f *fakeData) Catalog(_ context.Context, src app.Source, _ bool) (*datasets.Catalog, error) {
	if src != fakeSource {
		return nil, errors.New("unknown source")
	}
	return &datasets.Catalog{Tables: []datasets.Table{{Name: "notes", RowCount: 0}, {Name: "patients", RowCount: 2}}}, nil
}
func (f *fakeData) Browse(_ context.Context, _ app.Source, table string, _ int) (*datasets.Result, error) {
	if table == "notes" {
		return &datasets.Result{Columns: []datasets.Column{{Name: "text"}}}, nil
	}
	return &datasets.Result{Columns: []datasets.Column{{Name: "id"}}, Rows: [][]any{{int64(1)}, {int64(2)}}}, nil
}
func (f *fakeData) Query(_ context.Context, _ app.Source, sql string, _ datasets.RunnerOptions) (*datasets.Result, error) {
	f.mu.Lock()
	f.queries = append(f.queries, sql)
	f.mu.Unlock()
	if strings.HasPrefix(sql, "DELETE") {
		return nil, errors.New("query refused: it would change the data")
	}
	return &datasets.Result{Columns: []datasets.Column{{Name: "n"}}, Rows: [][]any{{int64(7)}}}, nil
}
func (f *fakeData) AddPostgres(name string, pg postgres.Source) (app.Source, error) {
	if err := pg.Validate(); err != nil {
		return app.Source{}, err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.added = append(f.added, name)
	return app.Source{Name: name, Kind: app.SourcePostgres, Postgres: &pg}, nil
}

// TestConnection answers after the test closes f.connect (when set), as a
// role that can write on a server "fake".
func (f *fakeData) TestConnection(ctx context.Context, pg postgres.Source) (postgres.ConnectionReport, error) {
	if f.connect != nil {
		select {
		case <-f.connect:
		case <-ctx.Done():
			return postgres.ConnectionReport{}, ctx.Err()
		}
	}
	if err := pg.Validate(); err != nil {
		return postgres.ConnectionReport{}, err
	}
	return postgres.ConnectionReport{ServerVersion: "15.99 (fake)", User: "writer", Database: "ehr", Schemas: pg.Schemas, Tables: 3,
		Writes: []string{"INSERT on 3 tables"}, Warning: "This role can change data.", GrantSQL: "GRANT SELECT ON ALL TABLES IN SCHEMA clin TO clinsight_reader;"}, nil
}
func (f *fakeData) Describe(src app.Source) string { return src.Path }
func (f *fakeData) Export(context.Context, string, *datasets.Result, export.Provenance, app.ExportOptions) (export.Summary, error) {
	return export.Summary{}, nil
}
func (f *fakeData) Policy(app.Source) disclosure.Policy       { return disclosure.Policy{}.Normalized() }
func (f *fakeData) SetPolicy(string, disclosure.Policy) error { return nil }

func TestDataScreenWithAFakeService(t *testing.T) {
	a := newTestApp(t)
	data := &fakeData{}
	var s *DataScreen
	onUI(t, func(t testing.TB) {
		s = NewDataScreen(t.Context(), data, a.NewWindow("data"), "test")
		s.Refresh()
	})
	waitUntil(t, "the first table", func() bool { return s.browseStatus.Text == "notes: 0 rows" })
	onUI(t, func(t testing.TB) {
		if !strings.Contains(s.sourceInfo.Text, "/data/site.sqlite") || s.tableList.Length() != 2 {
			t.Errorf("source info %q, %d tables", s.sourceInfo.Text, s.tableList.Length())
		}
		s.tableList.Select(1)
	})
	waitUntil(t, "the second table", func() bool { return s.browseStatus.Text == "patients: 2 rows" })
	onUI(t, func(testing.TB) { s.RunSQL("SELECT count(*) FROM patients") })
	waitUntil(t, "the result", func() bool { return strings.HasPrefix(s.resultStatus.Text, "1 rows · ") })
	onUI(t, func(t testing.TB) {
		if s.exportBtn.Disabled() || len(s.result.res.Rows) != 1 {
			t.Errorf("export disabled %v, rows %v", s.exportBtn.Disabled(), s.result.res.Rows)
		}
		s.RunSQL("DELETE FROM patients")
	})
	waitUntil(t, "the refusal", func() bool { return s.resultStatus.Text == "Error: query refused: it would change the data" })
	onUI(t, func(t testing.TB) {
		if !s.exportBtn.Disabled() {
			t.Error("export enabled after a refused query")
		}
	})
}

// fakeCohort is an app.CohortService whose session answers every question
// with a count of 42.
type fakeCohort struct{ opened chan app.Source }

func (f *fakeCohort) Sources() []app.Source { return []app.Source{fakeSource} }
func (f *fakeCohort) Examples(context.Context, app.Source, int) (app.CohortExamples, error) {
	return app.CohortExamples{Questions: []string{"How many patients are there?"}, Tables: 3}, nil
}
func (f *fakeCohort) Open(_ context.Context, src app.Source, _ app.CohortOptions) (app.CohortSession, error) {
	f.opened <- src
	return fakeCohortSession{}, nil
}

func (f *fakeCohort) Export(context.Context, string, *cohort.Answer, app.ExportOptions) (export.Summary, error) {
	return export.Summary{}, nil
}

type fakeCohortSession struct{}

func (fakeCohortSession) Ask(_ context.Context, req cohort.Request, on func(cohort.Event)) (*cohort.Answer, error) {
	res := &datasets.Result{Columns: []datasets.Column{{Name: "n"}}, Rows: [][]any{{int64(42)}}}
	on(cohort.Event{Kind: cohort.EventStage, Stage: "retrieve"})
	on(cohort.Event{Kind: cohort.EventDelta, Text: "There are 42 patients."})
	return &cohort.Answer{Question: req.Question, Status: cohort.StatusAnswered, SQL: "SELECT 42", Result: res,
		Explanation: "There are 42 patients.", Attempts: []cohort.Attempt{{Number: 1, SQL: "SELECT 42", Rows: 1}}}, nil
}
func (fakeCohortSession) Run(context.Context, *cohort.Answer, string) (*cohort.Answer, error) {
	return &cohort.Answer{Status: cohort.StatusError, Message: "refused"}, errors.New("refused")
}
func (fakeCohortSession) Attrition(context.Context, *cohort.Answer, []int, progress.Func) (*cohort.Attrition, error) {
	return nil, cohort.ErrNoChain
}
func (fakeCohortSession) Examples(int) []string { return nil }
func (fakeCohortSession) Close() error          { return nil }
func (fakeCohortSession) OMOP() bool            { return false }
func (fakeCohortSession) SearchConcepts(context.Context, string, string, int) ([]omop.Hit, error) {
	return nil, cohort.ErrNotOMOP
}
func (fakeCohortSession) AddConcept(context.Context, *omop.ConceptSet, int64) error {
	return cohort.ErrNotOMOP
}
func (fakeCohortSession) ExcludeConcepts(context.Context, []omop.ConceptSet, []int64) ([]omop.ConceptSet, error) {
	return nil, cohort.ErrNotOMOP
}

func TestCohortScreenWithAFakeService(t *testing.T) {
	a := newTestApp(t)
	svc := &fakeCohort{opened: make(chan app.Source, 1)}
	var s *CohortScreen
	onUI(t, func(t testing.TB) {
		s = NewCohortScreen(t.Context(), svc, a.NewWindow("cohort"), "test")
		s.Refresh()
	})
	waitUntil(t, "the examples", func() bool { return s.status.Text == "site: 3 tables. Ask a question, or pick an example." })
	onUI(t, func(t testing.TB) {
		if len(s.examples.Options) != 1 {
			t.Fatalf("examples %v", s.examples.Options)
		}
		s.examples.SetSelected(s.examples.Options[0])
		s.Ask(s.question.Text)
	})
	waitUntil(t, "the answer", func() bool { return strings.HasPrefix(s.status.Text, "answered · 1 attempt(s)") })
	if src := <-svc.opened; src != fakeSource {
		t.Errorf("opened %+v, want the listed source", src)
	}
	onUI(t, func(t testing.TB) {
		if s.answerText() != "There are 42 patients." || s.sqlEntry.Text != "SELECT 42" || s.exportBtn.Disabled() {
			t.Errorf("answer %q, sql %q", s.answerText(), s.sqlEntry.Text)
		}
		s.RunSQL("DROP TABLE patients")
	})
	waitUntil(t, "the refusal", func() bool { return s.status.Text == "Error: refused" })
}

// fakeTrials is an app.TrialsService with one demo patient and one trial.
type fakeTrials struct{}

func (fakeTrials) Sources(context.Context) []app.Source { return []app.Source{fakeSource} }
func (fakeTrials) Patients(context.Context, app.Source) ([]trials.SyntheticPatient, error) {
	return []trials.SyntheticPatient{{ID: "p1", Description: "A 60-year-old man with diabetes.", Age: 60, Sex: "male", Condition: "diabetes"}}, nil
}
func (fakeTrials) Match(_ context.Context, _ app.Source, req trials.Request, opts app.TrialsOptions) (*trials.Result, error) {
	if !opts.NoModel {
		return nil, errors.New("the model is not in this fake")
	}
	return &trials.Result{
		Query:  &trials.Query{Patient: req.Patient, Source: "deterministic extractor", Concepts: []trials.Concept{{Text: "diabetes", Weight: 1}}},
		Trials: []trials.RankedTrial{{Trial: &trials.Trial{ID: "NCT01", Title: "Metformin"}, Rank: 1}}, Candidates: 1,
		Notices: []string{"No chat model: a fake"}, Embedder: "lexical",
	}, nil
}

func TestTrialsScreenWithAFakeService(t *testing.T) {
	a := newTestApp(t)
	var s *TrialsScreen
	onUI(t, func(t testing.TB) {
		s = NewTrialsScreen(t.Context(), fakeTrials{}, a.NewWindow("trials"), "test")
		s.Refresh()
	})
	waitUntil(t, "the demo patient", func() bool { return len(s.patientSel.Options) == 1 })
	onUI(t, func(testing.TB) {
		s.patientSel.SetSelected(s.patientSel.Options[0])
		s.useModel.SetChecked(false)
		s.Match()
	})
	waitUntil(t, "the ranking", func() bool { return strings.HasPrefix(s.status.Text, "1 trials ranked") })
	onUI(t, func(t testing.TB) {
		if rows, _ := s.table.Length(); rows != 1 || s.cell(0, 1) != "NCT01" {
			t.Errorf("table: %d rows, first %q", rows, s.cell(0, 1))
		}
		if s.notices.Text != "No chat model: a fake" || !strings.Contains(s.query.Text, "diabetes 1") {
			t.Errorf("notices %q, query %q", s.notices.Text, s.query.Text)
		}
	})
}

// fakeImpressions is an app.ImpressionsService over three reports whose
// generator returns a fixed impression.
type fakeImpressions struct{}

func (fakeImpressions) Sources(context.Context) []app.Source { return []app.Source{fakeSource} }
func (fakeImpressions) Corpus(context.Context, app.Source) (*impression.Corpus, error) {
	return impression.NewCorpus(impression.SyntheticReports(3, 1)), nil
}
func (fakeImpressions) Generator(*impression.Corpus, impression.Options) (app.ImpressionGenerator, error) {
	return fakeGenerator{}, nil
}
func (fakeImpressions) ChatModel() string { return "m" }

type fakeGenerator struct{}

func (fakeGenerator) Generate(_ context.Context, req impression.Request, on func(impression.Event)) (impression.Result, error) {
	on(impression.Event{Iteration: 1, Delta: "No acute"})
	return impression.Result{Findings: req.Findings, Impression: "No acute process.", Generated: true, Model: "m",
		Iterations: []impression.Iteration{{Number: 1, Role: "best", Response: "No acute process."}}}, nil
}

func TestImpressionsScreenWithAFakeService(t *testing.T) {
	a := newTestApp(t)
	var s *ImpressionsScreen
	onUI(t, func(t testing.TB) {
		s = NewImpressionsScreen(t.Context(), fakeImpressions{}, a.NewWindow("impressions"), "test")
		s.Refresh()
	})
	waitUntil(t, "the corpus", func() bool { return strings.HasPrefix(s.corpusInfo.Text, "site: 3 reports") })
	onUI(t, func(testing.TB) {
		s.findings.SetText("The lungs are clear.")
		s.Generate()
	})
	waitUntil(t, "the impression", func() bool { return strings.HasPrefix(s.status.Text, "Done in ") })
	onUI(t, func(t testing.TB) {
		if s.answer.Text != "No acute process." || !strings.HasPrefix(s.sourceLabel.Text, "Generated by m") {
			t.Errorf("answer %q, source %q", s.answer.Text, s.sourceLabel.Text)
		}
		if rows, _ := s.iterations.Length(); rows != 1 || s.acceptBtn.Disabled() {
			t.Errorf("iterations %d, accept disabled %v", rows, s.acceptBtn.Disabled())
		}
	})
}

// fakeSettings is an app.SettingsService whose server has one model and
// installs the ones pulled.
type fakeSettings struct {
	mu     sync.Mutex
	cfg    app.Config
	models []localllm.Model
}

func (f *fakeSettings) Config() app.Config {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.cfg
}
func (f *fakeSettings) UpdateConfig(change func(*app.Config)) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.cfg
	change(&c)
	if err := c.Validate(); err != nil {
		return err
	}
	f.cfg = c
	return nil
}
func (f *fakeSettings) ModelHost() (app.ModelHost, error) {
	return app.ModelHost{URL: f.Config().OllamaHost, Source: app.HostFromSettings}, nil
}
func (f *fakeSettings) Check(context.Context) app.Status {
	f.mu.Lock()
	defer f.mu.Unlock()
	return app.Status{Health: localllm.Health{Reachable: true, Version: "0.0-fake"}, Models: append([]localllm.Model(nil), f.models...)}
}
func (f *fakeSettings) Pull(_ context.Context, name string, onProgress progress.Func) error {
	onProgress.Send(progress.Report{Stage: "pulling", Done: 1, Total: 1})
	f.mu.Lock()
	f.models = append(f.models, localllm.Model{Name: name})
	f.mu.Unlock()
	return nil
}
func (f *fakeSettings) ImportModel(context.Context, string, string, progress.Func) error {
	return errors.New("not in this fake")
}

func TestSettingsScreenWithAFakeService(t *testing.T) {
	a := newTestApp(t)
	svc := &fakeSettings{cfg: app.DefaultConfig(), models: []localllm.Model{{Name: "tiny-chat"}}}
	var s *SettingsScreen
	onUI(t, func(t testing.TB) {
		s = NewSettingsScreen(t.Context(), svc, a.NewWindow("settings"))
		s.Check()
	})
	waitUntil(t, "the check", func() bool { return s.statusLabel.Text == "Reachable · Ollama 0.0-fake · 1 models installed" })
	onUI(t, func(t testing.TB) {
		s.chatModel.SetSelected("tiny-chat")
		if got := svc.Config().Models.Chat; got != "tiny-chat" {
			t.Errorf("chat model saved as %q", got)
		}
		s.Pull("llama3.1:8b")
	})
	waitUntil(t, "the pull and the re-check", func() bool { return strings.HasSuffix(s.statusLabel.Text, "2 models installed") })
}

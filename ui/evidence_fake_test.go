package ui

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/app/meta"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/progress"
)

// fakeReviews is a review service holding its projects in memory; its
// reviews' steps do what the test scripts.
type fakeReviews struct {
	mu      sync.Mutex
	reviews map[string]*fakeReview
	order   []string
	sources []string
}

func newFakeReviews(sources ...string) *fakeReviews {
	return &fakeReviews{reviews: map[string]*fakeReview{}, sources: sources}
}

func (f *fakeReviews) Projects() ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.order), nil
}

func (f *fakeReviews) Sources(context.Context) []string { return slices.Clone(f.sources) }

func (f *fakeReviews) Import(context.Context, string, progress.Func) (string, error) {
	return "", errors.New("the fake imports nothing")
}

func (f *fakeReviews) Create(name, source string, q evidence.PICO) (app.Reviewer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if _, ok := f.reviews[name]; ok {
		return nil, fmt.Errorf("a review project named %q exists", name)
	}
	r := &fakeReview{p: evidence.NewProject(name, source, q)}
	f.reviews[name] = r
	f.order = append(f.order, name)
	return r, nil
}

func (f *fakeReviews) Open(name string) (app.Reviewer, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	r, ok := f.reviews[name]
	if !ok {
		return nil, fmt.Errorf("no review project named %q", name)
	}
	return r, nil
}

// fakeReview is a review in memory: edits change its project, a step runs
// the function the test set (nil: nothing happens), and saving fails with
// saveErr.
type fakeReview struct {
	mu      sync.Mutex
	p       *evidence.Project
	onSave  func(app.SaveStatus)
	step    func(ctx context.Context, p *evidence.Project) error
	saveErr error
	saves   int
	texts   map[string]evidence.StudyText

	screener string // who is screening (evidence_reviewers_fake_test.go)

	// rankGate, when set (before the screen opens), holds each Rank until
	// it receives a value: a training that takes as long as the test wants.
	rankGate chan struct{}
	learner  *evidence.ScreenLearner
	abstract map[string]string // the candidates' abstracts the learner reads

	extractedFor []int // the outcomes ExtractResults was asked for, in order
}

func (r *fakeReview) Project() *evidence.Project {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.p
}

func (r *fakeReview) Update(edit func(p *evidence.Project)) {
	r.mu.Lock()
	edit(r.p)
	fn := r.onSave
	r.mu.Unlock()
	if fn != nil {
		fn(app.SaveStatus{Pending: true})
	}
}

func (r *fakeReview) Decide(id string, include bool, reason string) error {
	return r.DecideStage(evidence.StageTitleAbstract, id, include, reason)
}

func (r *fakeReview) Undecide(id string) { _ = r.UndecideStage(evidence.StageTitleAbstract, id) }

func (r *fakeReview) EditValue(id, field, text string) evidence.FieldValue {
	var v evidence.FieldValue
	r.Update(func(p *evidence.Project) { v = p.EditValue(id, field, text, nil) })
	return v
}

func (r *fakeReview) EditGroup(id string, group int, role string, values []string) error {
	var err error
	r.Update(func(p *evidence.Project) { err = p.EditGroup(id, group, role, values, nil) })
	return err
}

// run runs the scripted step on a copy of the project, kept unless the
// step fails (as app.Review keeps a step's work).
func (r *fakeReview) run(ctx context.Context) error {
	r.mu.Lock()
	step := r.step
	cp, err := r.p.Clone()
	r.mu.Unlock()
	if err != nil || step == nil {
		return err
	}
	err = step(ctx, cp)
	var studyErrs *evidence.StudyErrors
	if err == nil || errors.As(err, &studyErrs) || errors.Is(err, context.Canceled) {
		r.mu.Lock()
		r.p = cp
		r.mu.Unlock()
	}
	return err
}

// Rank ranks with the real learner over the studies' titles and the
// abstracts the test set.
func (r *fakeReview) Rank(ctx context.Context) (*evidence.Ranking, error) {
	r.mu.Lock()
	ids := r.p.Candidates()
	decisions := r.p.DecisionsOf(r.screener, evidence.StageTitleAbstract)
	question := r.p.QuestionText()
	first := r.p.SampleToScreen()
	docs := make([]evidence.ActiveDoc, len(ids))
	for i, id := range ids {
		docs[i] = evidence.ActiveDoc{Title: r.p.Studies[id].Title, Abstract: r.abstract[id]}
	}
	gate, l := r.rankGate, r.learner
	r.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	if l == nil || !l.Covers(ids) {
		var err error
		if l, err = evidence.NewScreenLearner(ctx, ids, docs, question); err != nil {
			return nil, err
		}
		r.mu.Lock()
		r.learner = l
		r.mu.Unlock()
	}
	return l.Rank(ctx, decisions, nil, first)
}

func (r *fakeReview) SetStoppingRule(n int) error {
	var err error
	r.Update(func(p *evidence.Project) { err = p.SetConsecutiveRule(n) })
	return err
}

// DrawRecallSample draws with a fixed seed.
func (r *fakeReview) DrawRecallSample(n int) error {
	var err error
	r.Update(func(p *evidence.Project) { err = p.DrawRecallSample(n, rand.New(rand.NewPCG(1, 2))) })
	return err
}

func (r *fakeReview) SuggestTerms(ctx context.Context) error { return r.run(ctx) }
func (r *fakeReview) Search(ctx context.Context, _ int) (evidence.Candidates, error) {
	return evidence.Candidates{}, r.run(ctx)
}
func (r *fakeReview) SuggestCriteria(ctx context.Context) error                 { return r.run(ctx) }
func (r *fakeReview) Screen(ctx context.Context, _ func(done, total int)) error { return r.run(ctx) }
func (r *fakeReview) ExtractFields(ctx context.Context, _ func(done, total int)) error {
	return r.run(ctx)
}
func (r *fakeReview) ExtractResults(ctx context.Context, outcome int, _ func(done, total int)) error {
	r.mu.Lock()
	r.extractedFor = append(r.extractedFor, outcome)
	r.mu.Unlock()
	return r.run(ctx)
}
func (r *fakeReview) StudyText(_ context.Context, id string) (evidence.StudyText, error) {
	t := evidence.StudyText{ID: id, Chunks: []evidence.Chunk{{N: 1, Section: "Abstract", Text: "The text of " + id + "."}}}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.texts == nil {
		r.texts = map[string]evidence.StudyText{}
	}
	r.texts[id] = t
	return t, nil
}

func (r *fakeReview) CachedText(id string) (evidence.StudyText, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.texts[id]
	return t, ok
}

// Analyze analyses the outcome by the project's rules
// (evidence.Project.AnalyzeOutcome, which only reads the project).
func (r *fakeReview) Analyze(outcome int) (meta.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, res, err := r.p.AnalyzeOutcome(outcome)
	return res, err
}
func (r *fakeReview) ExportWorkbook(context.Context, string, export.Provenance) error {
	return errors.New("the fake exports nothing")
}

func (r *fakeReview) OnSave(fn func(app.SaveStatus)) {
	r.mu.Lock()
	r.onSave = fn
	r.mu.Unlock()
}

func (r *fakeReview) Save() error {
	r.mu.Lock()
	r.saves++
	err, fn := r.saveErr, r.onSave
	r.mu.Unlock()
	if fn != nil {
		fn(app.SaveStatus{Err: err, Saved: time.Now(), Pending: err != nil})
	}
	return err
}

func (r *fakeReview) Close() error { return r.Save() }

// fakeSearched is a fake review whose project has a search of three
// candidates.
func fakeSearched(t *testing.T, svc *fakeReviews, name string) *fakeReview {
	t.Helper()
	ri, err := svc.Create(name, "lit", evidence.PICO{Population: "adults", Intervention: "ablation"})
	if err != nil {
		t.Fatal(err)
	}
	r := ri.(*fakeReview)
	r.p.Query = "ablation"
	r.p.Search = &evidence.SearchRun{Query: "ablation", Total: 3, IDs: []string{"a", "b", "c"}, At: time.Now()}
	for _, id := range r.p.Search.IDs {
		r.p.Studies[id] = evidence.StudyInfo{Title: "Study " + id, Year: 2020}
	}
	r.p.Criteria = []evidence.Criterion{{Text: "The study treats adults", Weight: 1}}
	return r
}

// TestEvidenceScreenCancel: cancelling a slow screening keeps what it
// screened, says so, and leaves the project usable.
func TestEvidenceScreenCancel(t *testing.T) {
	svc := newFakeReviews("lit")
	r := fakeSearched(t, svc, "cancel")
	started := make(chan struct{})
	r.step = func(ctx context.Context, p *evidence.Project) error {
		p.Screening = []evidence.ScreenedStudy{{ID: "a", Title: "Study a", Verdicts: []evidence.Verdict{evidence.Yes}, Score: 1}}
		close(started)
		<-ctx.Done()
		return fmt.Errorf("screening stopped (1 studies screened were kept): %w", ctx.Err())
	}
	s := openTestEvidenceScreen(t, svc, nil)
	onUI(t, func(testing.TB) { test.Tap(s.screening.screenBtn) })
	select {
	case <-started:
	case <-time.After(waitTimeout):
		onUI(t, func(t testing.TB) {
			t.Fatalf("the screening did not start: running %v, button disabled %v, notice %q", s.running != nil, s.screening.screenBtn.Disabled(), s.notice.Text)
		})
	}
	onUI(t, func(testing.TB) { s.running.cancel() })
	if notice := waitIdle(t, s); !strings.Contains(notice, "cancelled") {
		t.Fatalf("notice %q", notice)
	}
	onUI(t, func(t testing.TB) {
		if text, _ := s.screening.cell(0, 2); text != "1.00" || !strings.Contains(s.screening.status.Text, "1 of 3 candidates screened") {
			t.Errorf("after Cancel: score %q, status %q", text, s.screening.status.Text)
		}
		// The project stays usable: the user decides on a study.
		s.screening.Decide("b", false, "Wrong population")
		if !strings.Contains(s.screening.prismaCounts.Text, "excluded 1") {
			t.Errorf("PRISMA %q", s.screening.prismaCounts.Text)
		}
	})
}

// TestEvidenceScreenStepFailure: a failed step changes nothing and says
// so; the user's edits stay.
func TestEvidenceScreenStepFailure(t *testing.T) {
	svc := newFakeReviews("lit")
	r := fakeSearched(t, svc, "failure")
	r.step = func(ctx context.Context, p *evidence.Project) error {
		p.Criteria = nil // a failing step's changes are not kept
		return errors.New("the chat model crashed")
	}
	s := newTestEvidenceScreen(t, svc, nil)
	waitUntil(t, "the project opened", func() bool { return len(s.screening.criterionText) == 1 })
	onUI(t, func(testing.TB) {
		s.screening.criterionText[0].SetText("The study treats older adults")
		test.Tap(s.screening.suggestCriteriaBtn)
	})
	notice := waitIdle(t, s)
	if !strings.Contains(notice, "Suggesting eligibility criteria failed: the chat model crashed") || !strings.Contains(notice, "your edits are kept") {
		t.Errorf("notice %q", notice)
	}
	onUI(t, func(t testing.TB) {
		if c := s.project().Criteria; len(c) != 1 || c[0].Text != "The study treats older adults" || s.screening.criterionText[0].Text != c[0].Text {
			t.Errorf("criteria after the failure %+v", c)
		}
	})

	// Some studies failing: the others are kept and the notice names the
	// failures.
	r.mu.Lock()
	r.step = func(ctx context.Context, p *evidence.Project) error {
		p.Screening = []evidence.ScreenedStudy{{ID: "a", Verdicts: []evidence.Verdict{evidence.Yes}, Score: 1}, {ID: "b", Error: "no reply"}}
		return &evidence.StudyErrors{Step: evidence.StepScreen, Total: 2, IDs: []string{"b"}, Errs: map[string]error{"b": errors.New("no reply")}, Labels: map[string]string{"b": "Study b"}}
	}
	r.mu.Unlock()
	onUI(t, func(testing.TB) { test.Tap(s.screening.screenBtn) })
	if notice := waitIdle(t, s); !strings.Contains(notice, "1 of 2 studies could not be processed") || !strings.Contains(notice, "Study b: no reply") {
		t.Errorf("notice %q", notice)
	}
	onUI(t, func(t testing.TB) {
		if !strings.Contains(s.screening.status.Text, "1 could not be screened") {
			t.Errorf("status %q", s.screening.status.Text)
		}
	})
}

// TestEvidenceScreenShowsSaveFailures: the save state says when the review
// could not be saved, and when it was.
func TestEvidenceScreenShowsSaveFailures(t *testing.T) {
	svc := newFakeReviews("lit")
	r := fakeSearched(t, svc, "saving")
	s := openTestEvidenceScreen(t, svc, nil)
	onUI(t, func(t testing.TB) {
		s.pico.entries[3].SetText("mortality")
		if s.saveState.Text != "unsaved changes…" {
			t.Errorf("save state %q", s.saveState.Text)
		}
	})
	r.mu.Lock()
	r.saveErr = errors.New("the disk is full")
	r.mu.Unlock()
	_ = r.Save()
	waitUntil(t, "the failure shown", func() bool { return s.saveState.Text == "not saved: the disk is full" })
	r.mu.Lock()
	r.saveErr = nil
	r.mu.Unlock()
	_ = r.Save()
	waitUntil(t, "the save shown", func() bool { return strings.HasPrefix(s.saveState.Text, "saved ") })
	if got := r.Project().PICO.Outcome; got != "mortality" {
		t.Errorf("outcome %q", got)
	}
}

func (r *fakeReview) SaveStatus() app.SaveStatus {
	r.mu.Lock()
	defer r.mu.Unlock()
	return app.SaveStatus{Err: r.saveErr, Pending: r.saveErr != nil}
}

func (r *fakeReview) SaveCopy(string) error { return errors.New("the fake copies nothing") }

func (r *fakeReview) SaveRecoveryCopy() (string, error) {
	return "", errors.New("the fake copies nothing")
}

package app

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/app/meta"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/progress"
)

// ReviewService is what a front end (the desktop app, the command line)
// does with the workspace's review projects: *Reviews implements it, and
// tests substitute fakes.
type ReviewService interface {
	// Projects lists the saved review projects, the most recent first.
	Projects() ([]string, error)
	// Sources lists the data sources that hold literature.
	Sources(ctx context.Context) []string
	// Import imports a literature file or a full text into the
	// workspace's literature source and says what it added.
	Import(ctx context.Context, path string, progress progress.Func) (string, error)
	// Create starts a review project, saved as it changes.
	Create(name, source string, q evidence.PICO) (Reviewer, error)
	// Open opens a saved review project, saved as it changes.
	Open(name string) (Reviewer, error)
}

// Reviewer is the one way to work on a review project, for every front
// end: the steps (search, screen, extract), the user's decisions and
// corrections, and saving. *Review implements it.
//
// Project returns the current project, to read. It is changed only
// through the Reviewer: an edit changes it in place on the caller's
// goroutine, and a step that ends replaces it (Project then returns the
// new one; the old one is left as it was). Edits made while a step runs
// are replaced by the step's result: front ends let the user edit
// between steps.
type Reviewer interface {
	Project() *evidence.Project
	// Update applies edits of plain data (the PICO, terms, query,
	// criteria, fields, result and meta-analysis settings: see
	// evidence.Project's Set methods for those with rules).
	Update(edit func(p *evidence.Project))
	Decide(id string, include bool, reason string) error
	Undecide(id string)
	// EditValue and EditGroup record the user's corrections, checked
	// against the study's text when it has been read (StudyText).
	EditValue(id, field, text string) evidence.FieldValue
	EditGroup(id string, group int, role string, values []string) error

	// Rank re-ranks the undecided candidates by the decisions so far (and
	// the question) with the active learner; it may take a moment the first
	// time (the candidates' texts are read) and runs one at a time. Front
	// ends call it off the UI goroutine after each decision.
	Rank(ctx context.Context) (*evidence.Ranking, error)
	// SetStoppingRule sets the consecutive-irrelevant rule's number (0:
	// off); DrawRecallSample draws the recall test's random sample of n
	// undecided records, which Rank then puts first
	// (evidence.Project.StoppingStatus says where the rules stand).
	SetStoppingRule(n int) error
	DrawRecallSample(n int) error

	SuggestTerms(ctx context.Context) error
	Search(ctx context.Context, limit int) (evidence.Candidates, error)
	SuggestCriteria(ctx context.Context) error
	Screen(ctx context.Context, progress func(done, total int)) error
	ExtractFields(ctx context.Context, progress func(done, total int)) error
	// ExtractResults extracts outcome i's result (0: the first outcome).
	ExtractResults(ctx context.Context, outcome int, progress func(done, total int)) error
	// StudyText reads a study's text (numbered chunks) from the corpus;
	// CachedText returns it when it has been read.
	StudyText(ctx context.Context, id string) (evidence.StudyText, error)
	CachedText(id string) (evidence.StudyText, bool)
	// Analyze runs the meta-analysis of outcome i.
	Analyze(outcome int) (meta.Result, error)
	ExportWorkbook(ctx context.Context, path string, prov export.Provenance) error

	// OnSave sets the function told where saving stands (called on any
	// goroutine); SaveStatus says where it stands now; Save saves a
	// pending change now and waits; Close saves and releases the review:
	// when that save fails, the project stays in memory, to save again
	// (Save) or copy elsewhere (SaveCopy to a file the user chooses,
	// SaveRecoveryCopy outside the workspace: review_save.go).
	OnSave(fn func(SaveStatus))
	SaveStatus() SaveStatus
	Save() error
	Close() error
	SaveCopy(path string) error
	SaveRecoveryCopy() (string, error)

	// ReviewTeam: named reviewers, conflicts, the full-text stage
	// (review_team.go).
	ReviewTeam
	// ReviewOutcomes: several outcomes, arm choices (review_outcomes.go).
	ReviewOutcomes
}

var (
	_ ReviewService = (*Reviews)(nil)
	_ Reviewer      = (*Review)(nil)
)

// Reviews is the workspace's review service (ws.Reviews()).
type Reviews struct{ ws *Workspace }

// Reviews returns the workspace's review service.
func (ws *Workspace) Reviews() *Reviews { return &Reviews{ws: ws} }

// Projects lists the saved review projects, the most recently saved first.
func (rs *Reviews) Projects() ([]string, error) { return rs.ws.ReviewProjects() }

// Sources lists the data sources that hold a literature corpus.
func (rs *Reviews) Sources(ctx context.Context) []string { return rs.ws.literatureSources(ctx) }

// Import imports a literature file (PubMed XML, MEDLINE, RIS, CSV) or a
// full text (JATS XML, text, PDF) into the workspace's "literature"
// source, registered when new, and says what it added.
func (rs *Reviews) Import(ctx context.Context, path string, progress progress.Func) (string, error) {
	var summary string
	n, err := rs.ws.importLiteratureToWorkspace(ctx, []string{path}, evidence.ImportOptions{Progress: progress}, func(res evidence.ImportResult) {
		summary = fmt.Sprintf("%s: %d records (%d new, %d updated)", res.Format, res.Records, res.Added, res.Updated)
		if len(res.FullTexts) > 0 {
			chunks := 0
			for _, ft := range res.FullTexts {
				chunks += ft.Chunks
			}
			summary = fmt.Sprintf("%s: %d full texts in %d passages", res.Format, len(res.FullTexts), chunks)
		}
	})
	if err != nil {
		return "", err
	}
	return summary + fmt.Sprintf(". The source %q now holds %d records.", LiteratureSourceName, n), nil
}

// Create starts a review project named name on a literature source for
// the question q, saves it, and returns it open, saved as it changes.
func (rs *Reviews) Create(name, source string, q evidence.PICO) (Reviewer, error) {
	name = strings.TrimSpace(name)
	if err := evidence.ValidateProjectName(name); err != nil {
		return nil, err
	}
	if strings.TrimSpace(source) == "" {
		return nil, errors.New("choose the literature source of the review (import literature first, or create the demo data, which holds demo literature)")
	}
	names, err := rs.Projects()
	if err != nil {
		return nil, err
	}
	if slices.Contains(names, name) {
		return nil, fmt.Errorf("a review project named %q exists: open it, or choose another name", name)
	}
	r := rs.open(evidence.NewProject(name, source, q), ReviewOptions{}, true)
	r.mu.Lock()
	r.seq++
	r.mu.Unlock()
	if err := r.Save(); err != nil {
		return nil, err
	}
	return r, nil
}

// Open opens the saved review project named name, saved as it changes.
func (rs *Reviews) Open(name string) (Reviewer, error) {
	p, err := rs.ws.LoadReviewProject(name)
	if err != nil {
		return nil, err
	}
	return rs.open(p, ReviewOptions{}, true), nil
}

// ReviewOptions tune a Review.
type ReviewOptions struct {
	// Concurrency bounds the model calls in flight in the steps that work
	// study by study; ≤ 0 means ReviewConcurrency.
	Concurrency int
}

// Scratch returns a review of p that is never saved: the command line's
// steps run on one.
func (rs *Reviews) Scratch(p *evidence.Project, opts ReviewOptions) *Review {
	return rs.open(p, opts, false)
}

func (rs *Reviews) open(p *evidence.Project, opts ReviewOptions, persist bool) *Review {
	if opts.Concurrency <= 0 {
		opts.Concurrency = ReviewConcurrency
	}
	r := &Review{ws: rs.ws, p: p, opts: opts, persist: persist, delay: reviewSaveDelay, texts: map[string]evidence.StudyText{}}
	if persist {
		r.last = p.Snapshot() // so that even the first save copies only the decisions
		r.status.Saved = p.Updated
	}
	return r
}

// reviewSaveDelay is how long a review waits after an edit before it
// saves, so that typing does not write the file at every key.
const reviewSaveDelay = 600 * time.Millisecond

// maxCachedTexts bounds the study texts a review keeps in memory.
const maxCachedTexts = 1000

// SaveStatus says where the saving of a review stands.
type SaveStatus struct {
	// Pending reports a change not saved yet.
	Pending bool
	// Saved is when the project was last saved; Err why the last save
	// failed (nil when it did not).
	Saved time.Time
	Err   error
}

// Review is an open review project: the steps run through it (each on a
// copy of the project, by evidence.Session, against the source's corpus
// and the workspace's chat model), the user's edits go through it, and it
// saves the project a moment after each change, one save at a time, the
// newest last. Its methods may be called from any goroutine; see Reviewer
// for who may change the project.
type Review struct {
	ws      *Workspace
	opts    ReviewOptions
	persist bool
	delay   time.Duration

	mu       sync.Mutex
	p        *evidence.Project
	stepping bool
	texts    map[string]evidence.StudyText
	seq      int // changes made
	written  int // the newest change saved
	timer    *time.Timer
	closed   bool
	onSave   func(SaveStatus)
	status   SaveStatus

	saveMu   sync.Mutex // held while a save writes
	saveFile fileStamp  // the file the last save wrote (under saveMu)
	// last is a copy of the project (evidence.Project.Snapshot) taken when
	// it was opened, when a step ended or by the last save, nil in a
	// review that is never saved; heavyEdited says that the project
	// changed since otherwise than by screening decisions, so that its
	// candidates may differ from last's (see Save). Both under mu; nothing
	// changes last.
	last        *evidence.Project
	heavyEdited bool

	learnMu       sync.Mutex         // held while the learner is built or trains
	rankCancel    context.CancelFunc // cancels the Rank in progress (under mu)
	learner       *evidence.ScreenLearner
	learnQuestion string
	learnDocs     map[string]evidence.ActiveDoc // the candidates' texts read so far

	screener string // who is screening now (ReviewTeam), "" for nobody
}

// Project returns the current project, to read (see Reviewer).
func (r *Review) Project() *evidence.Project {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.p
}

// Update applies edits of plain data to the project and saves it shortly;
// edit must not call the Review.
func (r *Review) Update(edit func(p *evidence.Project)) {
	_ = r.edit(func(p *evidence.Project) error { edit(p); return nil })
}

// edit applies a change that may be refused; a change made is saved
// shortly.
func (r *Review) edit(change func(p *evidence.Project) error) error {
	return r.editing(change, false)
}

// decide applies a screening decision, a change that may be refused and
// that changes nothing but the decisions (evidence.Project.DecideAs,
// UndecideAs): the save that follows copies the project without its
// candidates, in a moment whatever their number.
func (r *Review) decide(change func(p *evidence.Project) error) error {
	return r.editing(change, true)
}

func (r *Review) editing(change func(p *evidence.Project) error, decisionsOnly bool) error {
	r.mu.Lock()
	err := change(r.p)
	now := false
	switch {
	case err == nil && decisionsOnly:
		now = r.decisionChangedLocked()
	case err == nil:
		now = r.changedLocked()
	case !decisionsOnly:
		r.heavyEdited = true // refused, but it may have changed something
	}
	r.mu.Unlock()
	if err == nil {
		r.afterChange(now)
	}
	return err
}

// Decide records the user's decision on a candidate at title and
// abstract, as the screener when the review has named reviewers
// (Project.DecideAs).
func (r *Review) Decide(id string, include bool, reason string) error {
	return r.DecideStage(evidence.StageTitleAbstract, id, include, reason)
}

// Undecide removes the user's (the screener's) decision on a study.
func (r *Review) Undecide(id string) {
	_ = r.UndecideStage(evidence.StageTitleAbstract, id)
}

// EditValue records the user's value of a field (Project.EditValue),
// checked against the study's text when it has been read.
func (r *Review) EditValue(id, field, text string) evidence.FieldValue {
	var v evidence.FieldValue
	r.Update(func(p *evidence.Project) { v = p.EditValue(id, field, text, r.cachedLocked(id)) })
	return v
}

// EditGroup corrects the numbers of a study's result group or reported
// effect (Project.EditGroup), checked against the study's text when it
// has been read.
func (r *Review) EditGroup(id string, group int, role string, values []string) error {
	return r.edit(func(p *evidence.Project) error { return p.EditGroup(id, group, role, values, r.cachedLocked(id)) })
}

// cachedLocked returns the study's text when it has been read, else nil.
func (r *Review) cachedLocked(id string) *evidence.StudyText {
	if t, ok := r.texts[id]; ok {
		return &t
	}
	return nil
}

// CachedText returns a study's text when it has been read.
func (r *Review) CachedText(id string) (evidence.StudyText, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.texts[id]
	return t, ok
}

// StudyText reads a study's text from the corpus (once: it is kept).
func (r *Review) StudyText(ctx context.Context, id string) (evidence.StudyText, error) {
	if t, ok := r.CachedText(id); ok {
		return t, nil
	}
	texts, err := r.readTexts(ctx, []string{id})
	if err != nil {
		return evidence.StudyText{}, err
	}
	return texts[id], nil
}

// readTexts reads studies' texts from the corpus and keeps them; a text
// that cannot be read is left out, and the first such error returned.
func (r *Review) readTexts(ctx context.Context, ids []string) (map[string]evidence.StudyText, error) {
	r.mu.Lock()
	p := r.p
	r.mu.Unlock()
	sess, err := r.ws.openSession(ctx, p)
	if err != nil {
		return nil, err
	}
	defer r.closeSession(sess)
	texts := make(map[string]evidence.StudyText, len(ids))
	var firstErr error
	for _, id := range ids {
		t, err := sess.Corpus.StudyText(ctx, id)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		texts[id] = t
	}
	r.mu.Lock()
	if len(r.texts)+len(texts) > maxCachedTexts {
		r.texts = map[string]evidence.StudyText{}
	}
	for id, t := range texts {
		r.texts[id] = t
	}
	r.mu.Unlock()
	return texts, firstErr
}

func (r *Review) closeSession(sess *evidence.Session) {
	if err := sess.Close(); err != nil {
		r.ws.logger.Warn("review: closing the literature", "err", err)
	}
}

// step runs a step on a copy of the project. When it succeeds, fails for
// some studies only (*evidence.StudyErrors) or is cancelled (the session
// keeps what it finished), the copy becomes the project and is saved; any
// other failure changes nothing.
func (r *Review) step(ctx context.Context, run func(ctx context.Context, sess *evidence.Session) error) error {
	r.mu.Lock()
	if r.stepping {
		r.mu.Unlock()
		return evidence.ErrStepRunning
	}
	cp := r.p.Snapshot()
	r.stepping = true
	r.texts = map[string]evidence.StudyText{} // a full text imported since replaces an abstract
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.stepping = false
		r.mu.Unlock()
	}()
	sess, err := r.ws.openSession(ctx, cp)
	if err != nil {
		return err
	}
	sess.Concurrency = r.opts.Concurrency
	defer r.closeSession(sess)
	err = run(ctx, sess)
	var studyErrs *evidence.StudyErrors
	if err != nil && !errors.As(err, &studyErrs) && !errors.Is(err, context.Canceled) && !errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var base *evidence.Project
	if r.persist {
		base = cp.Snapshot() // cp is the step's own yet: copied without holding the lock
	}
	r.mu.Lock()
	r.p = cp
	// Edits made while the step ran are replaced: the candidates are cp's.
	r.last, r.heavyEdited = base, false
	now := r.decisionChangedLocked()
	r.mu.Unlock()
	r.afterChange(now)
	return err
}

// maxLearnDocs bounds the candidates' texts a review keeps for the learner.
const maxLearnDocs = 200_000

// Rank re-ranks the undecided candidates by the decisions so far and the
// question (evidence.ScreenLearner): the learner is built from the
// candidates' texts the first time, after a new search and after the
// question changes, then only retrains. Decisions made while it runs are
// not blocked; they count at the next Rank.
func (r *Review) Rank(ctx context.Context) (*evidence.Ranking, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	r.mu.Lock()
	if r.closed {
		r.mu.Unlock()
		return nil, errors.New("the review is closed")
	}
	p := r.p
	ids := p.Candidates()
	decisions := p.DecisionsOf(r.screener, evidence.StageTitleAbstract) // a reviewer's own: screening stays blind
	question := p.QuestionText()
	verdicts, verdictsKey := p.LearnerVerdicts() // the model's verdicts as features
	var prior []string
	if len(p.Screening) > 0 {
		prior = ids // in the model's screening order
	}
	first := p.SampleToScreen()
	r.mu.Unlock()

	r.learnMu.Lock()
	defer r.learnMu.Unlock()
	r.mu.Lock()
	r.rankCancel = cancel
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.rankCancel = nil
		r.mu.Unlock()
	}()
	if key := question + "\x00" + verdictsKey; r.learner == nil || r.learnQuestion != key || !r.learner.Covers(ids) {
		if err := r.buildLearner(ctx, p, ids, question, verdicts); err != nil {
			return nil, err
		}
		r.learnQuestion = key
	}
	return r.learner.Rank(ctx, decisions, prior, first)
}

// buildLearner reads the candidates' texts not read yet and builds the
// learner; called with learnMu held.
func (r *Review) buildLearner(ctx context.Context, p *evidence.Project, ids []string, question string, verdicts map[string][]evidence.Verdict) error {
	if len(ids) > maxLearnDocs {
		return fmt.Errorf("the search found %d candidates, more than the %d the screening can learn from: narrow the search", len(ids), maxLearnDocs)
	}
	if r.learnDocs == nil || len(r.learnDocs)+len(ids) > maxLearnDocs {
		r.learnDocs = map[string]evidence.ActiveDoc{}
	}
	var todo []string
	for _, id := range ids {
		if _, ok := r.learnDocs[id]; !ok {
			todo = append(todo, id)
		}
	}
	if len(todo) > 0 {
		sess, err := r.ws.openSession(ctx, p)
		if err != nil {
			return err
		}
		recs, err := sess.Corpus.Records(ctx, todo)
		r.closeSession(sess)
		if err != nil {
			return fmt.Errorf("reading the candidates' texts to rank them: %w", err)
		}
		for i := range recs {
			r.learnDocs[recs[i].ID] = evidence.ActiveDocOf(&recs[i])
		}
	}
	docs := make([]evidence.ActiveDoc, len(ids))
	for i, id := range ids {
		d, ok := r.learnDocs[id]
		if !ok {
			d = evidence.ActiveDoc{Title: p.Studies[id].Title} // gone from the corpus: its title
		}
		d.Verdicts = verdicts[id]
		docs[i] = d
	}
	l, err := evidence.NewScreenLearner(ctx, ids, docs, question)
	if err != nil {
		return fmt.Errorf("ranking the candidates: %w", err)
	}
	r.learner = l
	return nil
}

// SetStoppingRule sets the consecutive-irrelevant rule (Project.SetConsecutiveRule).
func (r *Review) SetStoppingRule(n int) error {
	return r.edit(func(p *evidence.Project) error { return p.SetConsecutiveRule(n) })
}

// DrawRecallSample draws the recall test's random sample of n undecided
// records (Project.DrawRecallSample), seeded from the clock.
func (r *Review) DrawRecallSample(n int) error {
	seed := uint64(time.Now().UnixNano())
	return r.edit(func(p *evidence.Project) error {
		return p.DrawRecallSample(n, rand.New(rand.NewPCG(seed, seed>>17|1)))
	})
}

// SuggestTerms has the chat model write the search terms and the query
// from the PICO (evidence.Session.SuggestTerms).
func (r *Review) SuggestTerms(ctx context.Context) error {
	return r.step(ctx, func(ctx context.Context, s *evidence.Session) error { return s.SuggestTerms(ctx) })
}

// Search runs the query by the review's search rule
// (evidence.Corpus.SearchCandidates) and keeps the best limit candidates
// (≤ 0: evidence.DefaultSearchLimit).
func (r *Review) Search(ctx context.Context, limit int) (evidence.Candidates, error) {
	var res evidence.Candidates
	err := r.step(ctx, func(ctx context.Context, s *evidence.Session) error {
		var err error
		res, err = s.Search(ctx, limit)
		return err
	})
	return res, err
}

// SelectStudies makes the given studies the candidates and includes them
// all (evidence.Session.SelectStudies): a review of a list of studies the
// user chose.
func (r *Review) SelectStudies(ctx context.Context, ids []string) error {
	return r.step(ctx, func(ctx context.Context, s *evidence.Session) error { return s.SelectStudies(ctx, ids) })
}

// SuggestCriteria has the chat model write eligibility criteria from the
// PICO.
func (r *Review) SuggestCriteria(ctx context.Context) error {
	return r.step(ctx, func(ctx context.Context, s *evidence.Session) error { return s.SuggestCriteria(ctx) })
}

// Screen screens the candidates against the criteria with the chat model.
func (r *Review) Screen(ctx context.Context, progress func(done, total int)) error {
	return r.step(ctx, func(ctx context.Context, s *evidence.Session) error { return s.Screen(ctx, progress) })
}

// ExtractFields extracts the fields from the included studies, then reads
// their texts (to show each value beside the chunks it cites).
func (r *Review) ExtractFields(ctx context.Context, progress func(done, total int)) error {
	return r.extract(ctx, progress, (*evidence.Session).ExtractFields)
}

// ExtractResults extracts outcome i's result of every included study,
// then reads their texts.
func (r *Review) ExtractResults(ctx context.Context, outcome int, progress func(done, total int)) error {
	return r.extract(ctx, progress, func(s *evidence.Session, ctx context.Context, progress func(done, total int)) error {
		return s.ExtractResults(ctx, outcome, progress)
	})
}

func (r *Review) extract(ctx context.Context, progress func(done, total int), run func(*evidence.Session, context.Context, func(done, total int)) error) error {
	err := r.step(ctx, func(ctx context.Context, s *evidence.Session) error { return run(s, ctx, progress) })
	r.mu.Lock()
	included := r.p.Included()
	r.mu.Unlock()
	if _, terr := r.readTexts(ctx, included); terr != nil && ctx.Err() == nil {
		// The extraction stands; the texts are read again when shown.
		r.ws.logger.Warn("review: reading the study texts", "err", terr)
	}
	return err
}

// Analyze runs the meta-analysis of outcome i's standardized table with
// its settings (evidence.Project.AnalyzeOutcome).
func (r *Review) Analyze(outcome int) (meta.Result, error) {
	r.mu.Lock()
	cp := r.p.Snapshot()
	r.mu.Unlock()
	_, res, err := cp.AnalyzeOutcome(outcome)
	return res, err
}

// ExportWorkbook saves the project, then writes the whole review to an
// Excel workbook (evidence.Session.ExportWorkbook).
func (r *Review) ExportWorkbook(ctx context.Context, path string, prov export.Provenance) error {
	if err := r.Save(); err != nil {
		r.ws.logger.Warn("review: saving before the export", "err", err)
	}
	r.mu.Lock()
	cp := r.p.Snapshot()
	r.mu.Unlock()
	sess, err := r.ws.openSession(ctx, cp)
	if err != nil {
		return err
	}
	defer r.closeSession(sess)
	opts := r.ws.ExportOptions(ctx, "", map[string]any{"what": "review", "review": cp.Name, "included": len(cp.Included())}, export.Options{})
	_, err = sess.ExportWorkbook(ctx, path, prov, opts)
	return err
}

// OnSave sets the function told where saving stands after each change
// and each save (on any goroutine); nil tells nobody.
func (r *Review) OnSave(fn func(SaveStatus)) {
	r.mu.Lock()
	r.onSave = fn
	r.mu.Unlock()
}

// changedLocked records a change: unless the review is not saved, it is
// saved after a moment, or at once (true) when the review is closed.
func (r *Review) changedLocked() (saveNow bool) {
	r.heavyEdited = true
	return r.decisionChangedLocked()
}

// decisionChangedLocked is changedLocked for a change of the screening
// decisions only (see decide).
func (r *Review) decisionChangedLocked() (saveNow bool) {
	if !r.persist {
		return false
	}
	r.seq++
	r.status.Pending = true
	if r.timer != nil {
		r.timer.Stop()
	}
	if r.closed {
		r.timer = nil
		return true
	}
	r.timer = time.AfterFunc(r.delay, func() { _ = r.Save() })
	return false
}

// afterChange tells where saving stands, and saves at once when asked.
func (r *Review) afterChange(saveNow bool) {
	if saveNow {
		_ = r.Save()
		return
	}
	r.notify()
}

func (r *Review) notify() {
	r.mu.Lock()
	fn, st := r.onSave, r.status
	r.mu.Unlock()
	if fn != nil {
		fn(st)
	}
}

// Save saves the project now if it changed since the last save, and
// waits; saves run one at a time, so the newest change is written last,
// and saves asked for while one writes make one save of the newest
// state. A review that is never saved (Scratch) does nothing.
//
// The review's lock is held only while the project is copied
// (evidence.Project.Snapshot): while the reviewer screens, only what the
// decisions changed is copied (SnapshotReusing), so a decision waits at
// most a few milliseconds for a save even with evidence.MaxCandidates
// candidates (BenchmarkReviewDecideWhileSaving); the checks, the encoding
// and the write (atomic: a failed or interrupted save leaves the previous
// file as it was) happen outside it. A failed save is told (SaveStatus.Err,
// a *ReviewSaveError when the system refused the write) and tried again
// after reviewRetryDelay, at the next change and by Close.
func (r *Review) Save() error {
	if !r.persist {
		return nil
	}
	r.saveMu.Lock()
	defer r.saveMu.Unlock()
	r.mu.Lock()
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	seq := r.seq
	if seq == r.written {
		r.mu.Unlock()
		return nil
	}
	var cp *evidence.Project
	if r.last != nil && !r.heavyEdited {
		cp = r.p.SnapshotReusing(r.last)
	} else {
		cp = r.p.Snapshot()
	}
	r.last, r.heavyEdited = cp, false
	r.mu.Unlock()
	stamp, cause := r.ws.saveReviewProject(cp, r.saveFile)
	r.saveFile = stamp
	err := reviewSaveError(cp.Name, cause)
	r.mu.Lock()
	r.status.Err = err
	if err == nil {
		r.written = seq
		r.status.Saved = cp.Updated
		r.status.Pending = r.seq != seq
	} else {
		r.ws.logger.Error("review: saving the project", "project", cp.Name, "err", cause)
		if !r.closed && r.timer == nil {
			r.timer = time.AfterFunc(reviewRetryDelay, func() { _ = r.Save() })
		}
	}
	r.mu.Unlock()
	r.notify()
	return err
}

// Close ends a Rank in progress, saves a pending change and waits; a step
// that ends later saves its result at once. When the save fails, nothing
// tries again by itself: the error (a *ReviewSaveError with Closing set
// when the system refused the write) is the caller's to tell, and the
// project stays in memory, every change made, for Save to try again or
// SaveCopy and SaveRecoveryCopy to write elsewhere.
func (r *Review) Close() error {
	r.mu.Lock()
	r.closed = true
	cancel := r.rankCancel
	r.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	// Wait for a Rank in progress to end (it reads the literature).
	r.learnMu.Lock()
	r.learner = nil // nothing ranks a closed review: free its features
	r.learnMu.Unlock()
	err := r.Save()
	if se, ok := errors.AsType[*ReviewSaveError](err); ok {
		r.mu.Lock()
		saved := r.status.Saved
		r.mu.Unlock()
		closing := *se
		closing.Closing, closing.Saved = true, saved
		return &closing
	}
	return err
}

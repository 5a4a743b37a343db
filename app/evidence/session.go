package evidence

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/clinsight/clinsight/internal/textsearch"
	"github.com/clinsight/clinsight/localllm"
)

// ErrNoChatModel is returned by the steps that need the chat model when
// none is configured.
var ErrNoChatModel = errors.New("no chat model is configured: choose one in Settings")

// ErrStepRunning is returned when a step is started while another step of
// the same session is still running.
var ErrStepRunning = errors.New("another step of this review is still running: wait for it to finish or cancel it")

// referencePool is how many of the initial search's best bm25 matches are
// ranked by relevance to the PICO to pick the reference abstracts.
const referencePool = 200

// Session runs the steps of a review project against its corpus and the
// chat model. Every step reads the project when it starts and changes it
// only when it ends: a model failure leaves the project, and every edit
// the user made, as it was and returns an error to show as a notice; a
// study that fails in a step that works study by study keeps its error
// (see StudyErrors) and the others are kept. One step runs at a time; the
// project must not be changed by anyone else while a step runs.
type Session struct {
	// Project is the review project the steps read and update.
	Project *Project
	// Corpus is the literature corpus of the project's source.
	Corpus *Corpus
	// Chat is the model client, nil when there is none.
	Chat localllm.Chatter
	// Model is the chat model's name, "" when none is configured.
	Model string
	// Options are the model options.
	Options localllm.Options
	// Concurrency bounds the model calls in flight in Screen and the
	// extraction steps; ≤ 0 means 1.
	Concurrency int
	// Logger receives the steps' logs; nil discards them.
	Logger *slog.Logger
	// Studies, when not empty, are the included studies the extraction
	// steps work on (session_studies.go); empty: every included study.
	Studies []string
	// Closer, if not nil, is closed by Close (the corpus's database when
	// the workspace opened the session).
	Closer io.Closer

	mu sync.Mutex
}

// Close releases what the session holds (see Closer).
func (s *Session) Close() error {
	if s.Closer == nil {
		return nil
	}
	c := s.Closer
	s.Closer = nil
	if err := c.Close(); err != nil {
		return fmt.Errorf("evidence: closing the review's database: %w", err)
	}
	return nil
}

// begin starts a step: only one runs at a time.
func (s *Session) begin(needModel bool) (func(), error) {
	if s.Project == nil || s.Corpus == nil {
		return nil, errors.New("evidence: the review session has no project or no corpus")
	}
	if needModel && (s.Chat == nil || strings.TrimSpace(s.Model) == "") {
		return nil, ErrNoChatModel
	}
	if !s.mu.TryLock() {
		return nil, ErrStepRunning
	}
	return s.mu.Unlock, nil
}

func (s *Session) logger() *slog.Logger {
	if s.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return s.Logger
}

// maxListedErrors bounds the studies StudyErrors.Error lists.
const maxListedErrors = 10

// StudyErrors lists the studies a step could not process; the step kept
// what it did for the others.
type StudyErrors struct {
	// Step is the step (StepScreen, StepExtract, StepResults).
	Step string
	// Total is the number of studies the step worked on.
	Total int
	// IDs are the failed studies' IDs, in the step's order; Errs their
	// errors and Labels their labels (Project.Label), by ID.
	IDs    []string
	Errs   map[string]error
	Labels map[string]string
}

// Error says how many studies failed and why, study by study (the first
// ten).
func (e *StudyErrors) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d studies could not be processed in step %s (the others were kept; run the step again to retry):", len(e.IDs), e.Total, e.Step)
	for i, id := range e.IDs {
		if i == maxListedErrors {
			fmt.Fprintf(&b, "\n… and %d more", len(e.IDs)-i)
			break
		}
		fmt.Fprintf(&b, "\n%s: %v", e.Labels[id], e.Errs[id])
	}
	return b.String()
}

// Unwrap returns the studies' errors.
func (e *StudyErrors) Unwrap() []error {
	out := make([]error, 0, len(e.IDs))
	for _, id := range e.IDs {
		out = append(out, e.Errs[id])
	}
	return out
}

// studyErrors returns a *StudyErrors for the failures among ids, nil when
// there are none.
func (s *Session) studyErrors(step string, ids []string, errs []error) error {
	e := &StudyErrors{Step: step, Total: len(ids), Errs: map[string]error{}, Labels: map[string]string{}}
	for i, id := range ids {
		if errs[i] != nil {
			e.IDs = append(e.IDs, id)
			e.Errs[id] = errs[i]
			e.Labels[id] = s.Project.Label(id)
		}
	}
	if len(e.IDs) == 0 {
		return nil
	}
	return e
}

// SuggestTerms generates the search terms from the PICO with the model
// (GenerateTerms), showing it up to MaxReferences abstracts that an
// initial search of the PICO's main words finds (InitialQueries), and sets
// Terms and Query from them. On any failure the project is unchanged.
func (s *Session) SuggestTerms(ctx context.Context) error {
	end, err := s.begin(true)
	if err != nil {
		return err
	}
	defer end()
	p := s.Project
	if err := p.PICO.Validate(); err != nil {
		return fmt.Errorf("evidence: search terms: %w", err)
	}
	start := time.Now()
	refs, refQuery, err := s.references(ctx, p.PICO)
	if err != nil {
		return err
	}
	steps, err := GenerateTerms(ctx, s.Chat, s.Model, p.PICO, TermOptions{References: refs, Options: s.Options})
	if err != nil {
		return err
	}
	terms := steps.Final()
	terms.JoinComparators, terms.JoinOutcomes = p.Terms.JoinComparators, p.Terms.JoinOutcomes // the user's choices stay
	q, err := terms.Query()
	if err != nil {
		return fmt.Errorf("evidence: model %s gave no usable search terms (%w); write them yourself or try again", s.Model, err)
	}
	p.Terms, p.Query = terms, q
	s.logger().Info("evidence: search terms generated", "project", p.Name, "model", s.Model,
		"references", len(refs), "reference_query", refQuery, "query", q, "took", time.Since(start))
	return nil
}

// references runs the initial searches and returns the texts (title and
// abstract) of the best matches by relevance to the PICO, with the query
// that found them ("" when none did).
func (s *Session) references(ctx context.Context, p PICO) ([]string, string, error) {
	for _, q := range InitialQueries(p) {
		res, err := s.Corpus.Search(ctx, q, referencePool)
		if err != nil {
			return nil, "", fmt.Errorf("evidence: initial search for reference abstracts: %w", err)
		}
		if len(res.Hits) == 0 {
			continue
		}
		docs := make([]Doc, len(res.Hits))
		for i := range res.Hits {
			docs[i] = DocOf(&res.Hits[i].Record)
		}
		var refs []string
		for _, sc := range RankByPICO(p, docs, RankOptions{}) {
			if len(refs) == MaxReferences {
				break
			}
			r := &res.Hits[sc.Index].Record
			refs = append(refs, strings.TrimSpace(r.Title+"\n\n"+r.Abstract()))
		}
		return refs, q, nil
	}
	return nil, "", nil
}

// InitialQueries returns the boolean queries of the initial search that
// finds reference abstracts for term generation, strictest first: the
// population's main words OR-ed, AND the intervention's main words OR-ed;
// then all of them OR-ed. Main words are the words of three or more
// characters that are not function words or generic trial words. A PICO
// without such words gives none.
func InitialQueries(p PICO) []string {
	pw, iw := mainWords(p.Population), mainWords(p.Intervention)
	group := func(ws []string) string {
		if len(ws) == 1 {
			return ws[0]
		}
		return "(" + strings.Join(ws, " OR ") + ")"
	}
	var out []string
	if len(pw) > 0 && len(iw) > 0 {
		out = append(out, group(pw)+" AND "+group(iw))
	}
	if all := mergeTerms(pw, iw); len(all) > 0 {
		out = append(out, group(all))
	}
	var valid []string
	for _, q := range out {
		if _, err := ParseQuery(q); err == nil {
			valid = append(valid, q)
		}
	}
	return valid
}

// mainWords returns the distinct lower-cased words of text of at least
// three characters that are not stop words, in order.
func mainWords(text string) []string {
	var out []string
	seen := map[string]bool{}
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if len([]rune(w)) < 3 || isRankStop(w) || isRankStop(textsearch.PluralStem(w)) || seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// Search runs the project's Query over the corpus by the review's search
// rule (Corpus.SearchCandidates: duplicates removed, the matches ranked by
// relevance to the PICO; limit ≤ 0 keeps every match, up to
// MaxCandidates, else the best limit are kept) and returns the candidates. It
// records the run in Search and the candidates' titles, years and first
// authors in Studies. Screenings and decisions of studies the new search
// no longer finds are kept (they count again if a later search finds them)
// but leave the PRISMA counts. On an error the project is unchanged.
func (s *Session) Search(ctx context.Context, limit int) (Candidates, error) {
	end, err := s.begin(false)
	if err != nil {
		return Candidates{}, err
	}
	defer end()
	p := s.Project
	q := strings.TrimSpace(p.Query)
	if q == "" {
		return Candidates{}, errors.New("evidence: there is no search query: generate the search terms or write a query")
	}
	start := time.Now()
	res, err := s.Corpus.SearchCandidates(ctx, q, p.PICO, limit)
	if err != nil {
		return Candidates{}, err
	}
	if p.Studies == nil {
		p.Studies = map[string]StudyInfo{}
	}
	for i := range res.Hits {
		p.Studies[res.Hits[i].ID] = InfoOf(&res.Hits[i].Record)
	}
	p.Search = &SearchRun{Query: q, FTS5: res.FTS5, Total: res.Total, IDs: res.IDs(), DuplicateOf: res.DuplicateOf, At: time.Now().UTC()}
	p.sortScreening()
	s.logger().Info("evidence: search run", "project", p.Name, "query", q, "total", res.Total, "candidates", len(res.Hits), "took", time.Since(start))
	return res, nil
}

// SuggestCriteria generates eligibility criteria from the PICO with the
// model (GenerateCriteria) and sets Criteria to them; on any failure the
// project, and the criteria the user wrote or edited, are unchanged.
func (s *Session) SuggestCriteria(ctx context.Context) error {
	end, err := s.begin(true)
	if err != nil {
		return err
	}
	defer end()
	start := time.Now()
	set, err := GenerateCriteria(ctx, s.Chat, s.Model, s.Project.PICO, s.Options)
	if err != nil {
		return err
	}
	s.Project.Criteria = set.Criteria()
	s.logger().Info("evidence: criteria generated", "project", s.Project.Name, "model", s.Model, "criteria", len(s.Project.Criteria), "took", time.Since(start))
	return nil
}

// Screen screens the candidates of the current search against the
// criteria with the model (Screener.ScreenAll, at most Concurrency calls
// at a time) and ranks the screening by score. It screens only what is
// missing: candidates not screened yet or whose screening failed; when the
// criterion texts changed since the last screening (ScreeningStale) every
// candidate is screened again, and when only weights or switches changed
// no model call is made (Rescore). progress, if not nil, is called after
// each study.
//
// A study that fails keeps its error in the screening (a *StudyErrors is
// returned) and is retried by the next run. When ctx is cancelled the
// studies screened so far are kept and ctx's error is returned. When no
// study could be screened (the model is down, say), nothing changes.
func (s *Session) Screen(ctx context.Context, progress func(done, total int)) error {
	end, err := s.begin(true)
	if err != nil {
		return err
	}
	defer end()
	p := s.Project
	if p.Search == nil {
		return errors.New("evidence: run the search before screening")
	}
	if err := ValidateCriteria(p.Criteria); err != nil {
		return err
	}
	texts := criterionTexts(p.Criteria)
	stale := !slices.Equal(texts, p.ScreenedCriteria) && len(p.Screening) > 0
	done := map[string]bool{}
	if !stale {
		for _, st := range p.Screening {
			if st.Error == "" {
				done[st.ID] = true
			}
		}
	}
	var todo []string
	for _, id := range p.Search.IDs {
		if !done[id] {
			todo = append(todo, id)
		}
	}
	if len(todo) == 0 {
		p.ScreenedCriteria = texts
		p.Rescore()
		return nil
	}
	start := time.Now()
	records, err := s.Corpus.Records(ctx, todo)
	if err != nil {
		return err
	}
	found := make(map[string]bool, len(records))
	for _, r := range records {
		found[r.ID] = true
	}
	scr := &Screener{Chat: s.Chat, Model: s.Model, PICO: p.PICO, Criteria: slices.Clone(p.Criteria), Options: s.Options}
	results, runErr := scr.ScreenAll(ctx, records, ScreenOptions{Concurrency: s.Concurrency, Progress: progress})

	var fresh []ScreenedStudy
	ok := 0
	for _, r := range results {
		if r.Err != nil && runErr != nil {
			continue // cancelled (or failed while cancelling): retried by the next run
		}
		st := ScreenedStudy{ID: r.Record.ID, Title: cleanSpace(r.Record.Title), Year: r.Record.Year, Verdicts: r.Verdicts, Score: r.Score}
		if r.Err != nil {
			st.Error = r.Err.Error()
		} else {
			ok++
		}
		fresh = append(fresh, st)
	}
	for _, id := range todo {
		if !found[id] {
			fresh = append(fresh, ScreenedStudy{ID: id, Title: p.Studies[id].Title, Year: p.Studies[id].Year,
				Error: fmt.Sprintf("study %s is no longer in the corpus", id)})
		}
	}
	if runErr == nil && ok == 0 && len(results) > 0 {
		return fmt.Errorf("evidence: none of the %d studies could be screened, nothing was changed: %w", len(results), results[0].Err)
	}
	if runErr != nil && ok == 0 {
		return fmt.Errorf("evidence: screening cancelled before any study was screened: %w", runErr)
	}
	if stale {
		p.Screening = nil
	}
	byID := make(map[string]int, len(p.Screening))
	for i, st := range p.Screening {
		byID[st.ID] = i
	}
	for _, st := range fresh {
		if i, seen := byID[st.ID]; seen {
			p.Screening[i] = st
		} else {
			byID[st.ID] = len(p.Screening)
			p.Screening = append(p.Screening, st)
		}
	}
	for i := range records {
		if p.Studies == nil {
			p.Studies = map[string]StudyInfo{}
		}
		p.Studies[records[i].ID] = InfoOf(&records[i])
	}
	p.ScreenedCriteria = texts
	p.Rescore()
	s.logger().Info("evidence: screening", "project", p.Name, "model", s.Model, "studies", len(todo), "screened", ok,
		"rescreen", stale, "cancelled", runErr != nil, "took", time.Since(start))
	if runErr != nil {
		return fmt.Errorf("evidence: screening stopped (%d studies screened were kept): %w", ok, runErr)
	}
	var ids []string
	var errs []error
	for _, st := range fresh {
		ids = append(ids, st.ID)
		if st.Error != "" {
			errs = append(errs, errors.New(st.Error))
		} else {
			errs = append(errs, nil)
		}
	}
	return s.studyErrors(StepScreen, ids, errs)
}

// fingerprint identifies the specs an extraction ran with.
func fingerprint(v any) string {
	b, err := json.Marshal(v)
	if err != nil { // specs are plain data: cannot happen
		panic(err)
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}

// studyFingerprint is what ExtractedWith and ResultsWith record for a
// study: the specs' fingerprint, and for a study read from an imported
// full text that of its file after "@", so that importing a full text
// (whose chunks are numbered anew) extracts the study again.
func studyFingerprint(specs, fullTextSource string) string {
	if fullTextSource == "" {
		return specs
	}
	return specs + "@" + fingerprint(fullTextSource)
}

// specsFingerprint returns the specs' part of a study's fingerprint.
func specsFingerprint(study string) string {
	specs, _, _ := strings.Cut(study, "@")
	return specs
}

// ExtractFields extracts the project's Fields from every included study
// (Corpus.StudyText, Extractor.ExtractFields) that was not extracted yet
// with the current fields from its current text (a full text imported
// since gives new chunks: the study is extracted again), at most
// Concurrency studies at a time, and
// merges the values into Extractions keeping those the user edited
// (MergeFields). A study that fails keeps its earlier values and is named
// in the returned *StudyErrors; when ctx is cancelled the studies done are
// kept and ctx's error is returned.
func (s *Session) ExtractFields(ctx context.Context, progress func(done, total int)) error {
	end, err := s.begin(true)
	if err != nil {
		return err
	}
	defer end()
	p := s.Project
	if err := ValidateFields(p.Fields); err != nil {
		return err
	}
	included, err := s.extractionStudies()
	if err != nil {
		return err
	}
	fields := slices.Clone(p.Fields)
	full, err := s.Corpus.fullTextSources(ctx, included)
	if err != nil {
		return err
	}
	fp := map[string]string{}
	var todo []string
	for _, id := range included {
		fp[id] = studyFingerprint(fingerprint(fields), full[id])
		if p.ExtractedWith[id] != fp[id] {
			todo = append(todo, id)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	ex := &Extractor{Chat: s.Chat, Model: s.Model, Options: s.Options}
	return extractEach(ctx, s, StepExtract, todo, progress, func(ctx context.Context, t StudyText) ([]FieldValue, error) {
		return ex.ExtractFields(ctx, t, fields)
	}, func(id string, vals []FieldValue) {
		if p.Extractions == nil {
			p.Extractions = map[string][]FieldValue{}
		}
		if p.ExtractedWith == nil {
			p.ExtractedWith = map[string]string{}
		}
		p.Extractions[id] = MergeFields(p.Extractions[id], vals)
		p.ExtractedWith[id] = fp[id]
	})
}

// ExtractResults extracts outcome i's Result (Project.OutcomeAt; 0 is the
// first outcome) from every included study
// (Corpus.StudyText, Extractor.ExtractResult) not extracted yet with the
// current result spec from its current text, at most Concurrency at a
// time. A result the user corrected for the current spec is kept and not
// extracted again; one corrected for an earlier spec (another outcome,
// cohort or shape) is extracted again and replaced. Failures and cancelling are
// handled as in ExtractFields.
func (s *Session) ExtractResults(ctx context.Context, outcome int, progress func(done, total int)) error {
	end, err := s.begin(true)
	if err != nil {
		return err
	}
	defer end()
	p := s.Project
	o, err := p.outcome(outcome)
	if err != nil {
		return fmt.Errorf("evidence: extracting results: %w", err)
	}
	spec := o.Result
	if err := spec.Validate(); err != nil {
		return err
	}
	included, err := s.extractionStudies()
	if err != nil {
		return err
	}
	full, err := s.Corpus.fullTextSources(ctx, included)
	if err != nil {
		return err
	}
	fp := map[string]string{}
	var todo []string
	specFP := fingerprint(spec)
	for _, id := range included {
		if r, ok := o.Results[id]; ok && r.Edited && specsFingerprint(o.ResultsWith[id]) == specFP {
			continue // corrected by the user for this spec
		}
		if r, ok := o.Results[id]; ok && r.Edited && o.ResultsWith[id] == "" {
			continue // corrected, spec unknown: kept
		}
		fp[id] = studyFingerprint(specFP, full[id])
		if o.ResultsWith[id] != fp[id] {
			todo = append(todo, id)
		}
	}
	if len(todo) == 0 {
		return nil
	}
	ex := &Extractor{Chat: s.Chat, Model: s.Model, Options: s.Options}
	return extractEach(ctx, s, StepResults, todo, progress, func(ctx context.Context, t StudyText) (ResultExtraction, error) {
		return ex.ExtractResult(ctx, t, spec)
	}, func(id string, r ResultExtraction) {
		if o.Results == nil {
			o.Results = map[string]ResultExtraction{}
		}
		if o.ResultsWith == nil {
			o.ResultsWith = map[string]string{}
		}
		r.StudyID = id
		if specsFingerprint(o.ResultsWith[id]) == specFP {
			r = MergeResult(o.Results[id], r)
		} // else a correction made for another spec is replaced
		o.Results[id] = r
		o.ResultsWith[id] = fp[id]
	})
}

// extractEach runs extract on the text of every study in todo, at most
// Concurrency at a time, then applies each success to the project (on the
// calling goroutine, in the order of todo) and returns the step's error
// (see finish).
func extractEach[T any](ctx context.Context, s *Session, step string, todo []string, progress func(done, total int),
	extract func(context.Context, StudyText) (T, error), apply func(id string, v T)) error {
	start := time.Now()
	vals := make([]T, len(todo))
	errs := s.forEach(ctx, todo, progress, func(ctx context.Context, i int) error {
		t, err := s.Corpus.StudyText(ctx, todo[i])
		if err != nil {
			return err
		}
		vals[i], err = extract(ctx, t)
		return err
	})
	ok := 0
	for i, id := range todo {
		if errs[i] == nil {
			apply(id, vals[i])
			ok++
		}
	}
	s.logger().Info("evidence: step run", "step", step, "project", s.Project.Name, "model", s.Model, "studies", len(todo), "extracted", ok, "took", time.Since(start))
	return s.finish(ctx, step, todo, errs, ok)
}

// finish returns a step's error: ctx's when it was cancelled, else the
// failed studies'.
func (s *Session) finish(ctx context.Context, step string, ids []string, errs []error, ok int) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("evidence: step %s stopped (%d studies done were kept): %w", step, ok, err)
	}
	return s.studyErrors(step, ids, errs)
}

// forEach calls fn for the indexes of ids, at most Concurrency at a time
// (see ForEach).
func (s *Session) forEach(ctx context.Context, ids []string, progress func(done, total int), fn func(ctx context.Context, i int) error) []error {
	return ForEach(ctx, len(ids), s.Concurrency, progress, fn)
}

// SelectStudies makes the studies with the given record IDs the
// candidates, in order, as a search that found exactly them would, and
// includes them all: the user's own list of studies to extract from (the
// command line's extract takes one). An ID not in the corpus stays a
// candidate, and the steps report it. On an error the project is
// unchanged.
func (s *Session) SelectStudies(ctx context.Context, ids []string) error {
	end, err := s.begin(false)
	if err != nil {
		return err
	}
	defer end()
	records, err := s.Corpus.Records(ctx, ids)
	if err != nil {
		return err
	}
	p := s.Project
	if p.Studies == nil {
		p.Studies = map[string]StudyInfo{}
	}
	for i := range records {
		p.Studies[records[i].ID] = InfoOf(&records[i])
	}
	p.Search = &SearchRun{Total: int64(len(records)), IDs: slices.Clone(ids), At: time.Now().UTC()}
	if p.Decisions == nil {
		p.Decisions = map[string]Decision{}
	}
	for _, id := range ids {
		p.Decisions[id] = Decision{Include: true, At: p.Search.At}
	}
	p.sortScreening()
	return nil
}

package evidence

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/clinsight/clinsight/app/meta"
)

// ProjectVersion is the newest version of the saved project format. Version
// 2 adds named reviewers and the full-text stage, version 3 several
// outcomes and arm choices (outcomes.go); a project that uses none of them
// is saved as version 1, which older versions of Clinsight read.
const ProjectVersion = 3

// Steps of a review project, in order.
const (
	StepPICO    = "PICO"
	StepSearch  = "Search"
	StepScreen  = "Screen"
	StepExtract = "Extract"
	StepResults = "Results"
	StepMeta    = "Meta-analysis"
)

// Steps are the steps in order.
var Steps = []string{StepPICO, StepSearch, StepScreen, StepExtract, StepResults, StepMeta}

// NextStep returns the first step that waits for the user, where a
// resumed project opens: PICO until the question is valid, Search until a
// search has run, Screen until a study is included, Extract while an
// included study lacks the fields asked for, Results while one lacks a
// result, and Meta-analysis after that.
func (p *Project) NextStep() string {
	switch {
	case p.PICO.Validate() != nil:
		return StepPICO
	case p.Search == nil:
		return StepSearch
	}
	included := p.Included()
	if len(included) == 0 {
		return StepScreen
	}
	for _, id := range included {
		if len(p.Fields) > 0 && len(p.Extractions[id]) == 0 {
			return StepExtract
		}
	}
	for i := range p.NumOutcomes() {
		o := p.OutcomeAt(i)
		if i > 0 && o.Result.Validate() != nil {
			continue
		}
		for _, id := range included {
			if _, ok := o.Results[id]; !ok {
				return StepResults
			}
		}
	}
	return StepMeta
}

// Project is a review project: every step's inputs, the model's outputs and
// the user's edits and decisions, saved as JSON in the workspace so that a
// review can be resumed. Nothing in it is final until the user accepts it.
type Project struct {
	// Version is ProjectVersion.
	Version int `json:"version"`
	// Name names the project (and its file).
	Name string `json:"name"`
	// Source is the data source (name or path) holding the corpus.
	Source string `json:"source"`
	// Created and Updated are when the project was created and last saved.
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`

	// PICO is the review question.
	PICO PICO `json:"pico"`

	// Terms are the search terms (generated, then edited by the user).
	Terms SearchTerms `json:"terms"`
	// Query is the boolean query (from Terms or written by the user).
	Query string `json:"query"`
	// Search is the last search run, nil before one.
	Search *SearchRun `json:"search,omitempty"`
	// Studies describe the candidates of the searches run (title, year,
	// first author, label) by record ID, so that every step can name a
	// study without reading the corpus.
	Studies map[string]StudyInfo `json:"studies,omitempty"`

	// Criteria are the eligibility criteria (generated, then edited).
	Criteria []Criterion `json:"criteria"`
	// Screening holds the screening of the candidates, best first. It may
	// hold studies an earlier search found and the current one does not
	// (kept in case that search is run again; see IsCandidate); PRISMA and
	// Included leave them out.
	Screening []ScreenedStudy `json:"screening"`
	// ScreenedCriteria are the criterion texts the verdicts of Screening
	// answer, in order; when the texts of Criteria differ, the screening is
	// stale (ScreeningStale) and Session.Screen screens again.
	ScreenedCriteria []string `json:"screened_criteria,omitempty"`
	// Decisions are the user's decisions by record ID.
	Decisions map[string]Decision `json:"decisions"`

	// Fields are the fields to extract from included studies.
	Fields []FieldSpec `json:"fields"`
	// Extractions are the extracted fields by record ID.
	Extractions map[string][]FieldValue `json:"extractions"`
	// ExtractedWith records, by record ID, a fingerprint of the Fields a
	// study's extraction was run with (and of its full text's file, when
	// it was read from one); a study whose fingerprint differs from the
	// current Fields (or that has a new full text) is extracted again
	// (keeping edited values).
	ExtractedWith map[string]string `json:"extracted_with,omitempty"`

	// Outcome is the review's first outcome: the result to extract (Result),
	// the results extracted (Results, ResultsWith), the arm choices and the
	// meta-analysis settings (Meta), saved at the top level as before
	// several outcomes existed. OtherOutcomes are the others (outcomes.go).
	Outcome
	OtherOutcomes []Outcome `json:"other_outcomes,omitempty"`

	// Stopping is the stopping rule of the screening and the recall
	// test's sample (stopping_project.go).
	Stopping Stopping `json:"stopping"`

	// Reviewers are the named reviewers who screen independently, each
	// with their own decisions (reviewers.go); empty when one unnamed
	// reviewer screens, whose decisions are Decisions and FullText. With
	// reviewers, Decisions and FullText hold the decisions they agree on
	// or that resolve their conflicts.
	Reviewers []ReviewerLog `json:"reviewers,omitempty"`
	// Resolutions are the reviewers' conflicts resolved, by stage and
	// record ID.
	Resolutions map[Stage]map[string]Resolution `json:"resolutions,omitempty"`
	// FullTextStage switches on the full-text stage (fulltext_stage.go):
	// the studies included are then those included at full text.
	FullTextStage bool `json:"full_text_stage,omitempty"`
	// FullText are the full-text decisions by record ID.
	FullText map[string]Decision `json:"full_text,omitempty"`
	// NotRetrieved are the reports sought whose full text could not be
	// obtained, with why, by record ID.
	NotRetrieved map[string]string `json:"not_retrieved,omitempty"`
}

// SearchRun is a boolean search as run: the query, its FTS5 form, the
// number of records found and the IDs of the candidates kept for screening.
type SearchRun struct {
	Query string `json:"query"`
	FTS5  string `json:"fts5"`
	// Total is the number of records identified, duplicates included.
	Total int64    `json:"total"`
	IDs   []string `json:"ids"`
	// DuplicateOf maps the identified records removed as duplicates
	// (Corpus.Duplicates) to the record kept; none is a candidate.
	DuplicateOf map[string]string `json:"duplicate_of,omitempty"`
	At          time.Time         `json:"at"`
}

// StudyInfo names a candidate study: what a table or a forest plot shows.
type StudyInfo struct {
	// PMID is the PubMed identifier, "" when unknown.
	PMID string `json:"pmid,omitempty"`
	// Title is the article title.
	Title string `json:"title"`
	// Year is the publication year, 0 when unknown.
	Year int `json:"year,omitempty"`
	// FirstAuthor is the first author's last name (or a collective name).
	FirstAuthor string `json:"first_author,omitempty"`
}

// ScreenedStudy is one candidate's screening by the model.
type ScreenedStudy struct {
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	Year     int       `json:"year,omitempty"`
	Verdicts []Verdict `json:"verdicts,omitempty"`
	// Score is Score(Verdicts, Criteria).
	Score float64 `json:"score"`
	// Error is why the study could not be screened, "" when it was.
	Error string `json:"error,omitempty"`
}

// Decision is the user's decision on a study.
type Decision struct {
	// Include is true for an included study, false for an excluded one.
	Include bool `json:"include"`
	// Reason is why (required for an exclusion; shown in PRISMA).
	Reason string `json:"reason,omitempty"`
	// At is when the decision was made.
	At time.Time `json:"at"`
}

// MetaSettings are the meta-analysis choices of a project.
type MetaSettings struct {
	// Measure is the effect measure's metafor name (OR, RR, RD, PR, PLO,
	// PFT, MD, SMD, GEN.RATIO); empty picks one that suits Result.Measure.
	Measure string `json:"measure,omitempty"`
	// Method is the pooling method (meta.MethodsFor the measure: REML, DL,
	// PM, ML, SJ, HE, HS, EB, EE, MH, PETO); empty means REML.
	Method string `json:"method,omitempty"`
	// KnappHartung selects Knapp–Hartung inference.
	KnappHartung bool `json:"knapp_hartung,omitempty"`
}

// NewProject returns a new review project named name over the corpus in
// source (a data source name or a database path) for the question p.
// Validate checks it.
func NewProject(name, source string, p PICO) *Project {
	now := time.Now().UTC()
	return &Project{
		Version:     1, // upgradeFormat raises it when a newer feature is used
		Name:        strings.TrimSpace(name),
		Source:      strings.TrimSpace(source),
		Created:     now,
		Updated:     now,
		PICO:        p,
		Studies:     map[string]StudyInfo{},
		Decisions:   map[string]Decision{},
		Extractions: map[string][]FieldValue{},
		Outcome:     Outcome{Results: map[string]ResultExtraction{}},
	}
}

// maxProjectName bounds the length of a project name (it names a file).
const maxProjectName = 100

// ValidateProjectName checks that name can name a project and its file:
// letters, digits, spaces, '-', '_' and '.', not starting with '.' or a
// space, at most 100 characters.
func ValidateProjectName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("the review project needs a name")
	case utf8.RuneCountInString(name) > maxProjectName:
		return fmt.Errorf("the project name is longer than %d characters", maxProjectName)
	case name != strings.TrimSpace(name) || strings.HasPrefix(name, "."):
		return fmt.Errorf("the project name %q may not start or end with a space or start with a dot", name)
	}
	for _, r := range name {
		if !unicode.IsLetter(r) && !unicode.IsDigit(r) && !strings.ContainsRune(" -_.", r) {
			return fmt.Errorf("the project name %q has the character %q: use letters, digits, spaces, '-', '_' and '.'", name, r)
		}
	}
	return nil
}

// Validate checks a project before it is saved or after it is read: a
// known version, a valid name, a valid PICO, valid criteria (when there
// are any) and a reason for every exclusion. The fields and the result to
// extract may be drafts: the steps that use them check them.
func (p *Project) Validate() error {
	if p.Version < 1 || p.Version > ProjectVersion {
		return fmt.Errorf("the review project has format version %d; this version of Clinsight reads versions 1 to %d (update Clinsight)", p.Version, ProjectVersion)
	}
	if err := ValidateProjectName(p.Name); err != nil {
		return err
	}
	if err := p.PICO.Validate(); err != nil {
		return err
	}
	if len(p.Criteria) > 0 {
		if err := ValidateCriteria(p.Criteria); err != nil {
			return err
		}
	}
	for _, id := range slices.Sorted(maps.Keys(p.Decisions)) {
		if d := p.Decisions[id]; !d.Include && strings.TrimSpace(d.Reason) == "" {
			return fmt.Errorf("the exclusion of %s has no reason: give one", p.Label(id))
		}
	}
	if err := p.validateFullText(); err != nil {
		return err
	}
	if err := p.validateOutcomes(); err != nil {
		return err
	}
	return p.validateReviewers()
}

// IsCandidate reports whether the study is a candidate of the current
// search (Search.IDs).
func (p *Project) IsCandidate(id string) bool {
	return p.Search != nil && slices.Contains(p.Search.IDs, id)
}

// Decide records the user's decision on a candidate of the current
// search: include it, or exclude it for a reason (required, shown in the
// PRISMA counts). A review with named reviewers is decided by each of them
// (DecideAs).
func (p *Project) Decide(id string, include bool, reason string) error {
	if len(p.Reviewers) > 0 {
		_, err := p.screener("")
		return err
	}
	if !p.IsCandidate(id) {
		return fmt.Errorf("study %s is not among the studies the current search found", id)
	}
	reason = cleanSpace(reason)
	if !include && reason == "" {
		return fmt.Errorf("give the reason to exclude %s", p.Label(id))
	}
	if p.Decisions == nil {
		p.Decisions = map[string]Decision{}
	}
	p.Decisions[id] = Decision{Include: include, Reason: reason, At: time.Now().UTC()}
	return nil
}

// Undecide removes the user's decision on a study; a review with named
// reviewers is undecided by each of them (UndecideAs).
func (p *Project) Undecide(id string) {
	if len(p.Reviewers) == 0 {
		delete(p.Decisions, id)
	}
}

// Included returns the IDs of the studies included in the review, in the
// order of the screening (best first), then of the search: the candidates
// of the current search included at title and abstract, and with the
// full-text stage on, also at full text.
func (p *Project) Included() []string {
	if !p.FullTextStage {
		return p.screenedIn()
	}
	var out []string
	for _, id := range p.FullTextCandidates() {
		if d, ok := p.FullText[id]; ok && d.Include {
			out = append(out, id)
		}
	}
	return out
}

// Candidates returns the current search's candidates as the screening
// shows them: the screened ones in the screening's order (best first),
// then the others in the search's order.
func (p *Project) Candidates() []string { return p.candidatesInOrder() }

func (p *Project) candidatesInOrder() []string {
	if p.Search == nil {
		return nil
	}
	cand := make(map[string]bool, len(p.Search.IDs))
	for _, id := range p.Search.IDs {
		cand[id] = true
	}
	out := make([]string, 0, len(p.Search.IDs))
	seen := map[string]bool{}
	for _, s := range p.Screening {
		if cand[s.ID] && !seen[s.ID] {
			seen[s.ID] = true
			out = append(out, s.ID)
		}
	}
	for _, id := range p.Search.IDs {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out
}

// Label names a study for tables and the forest plot: "Smith 2019" (the
// first author's last name and the year), else its title's first words,
// else its ID.
func (p *Project) Label(id string) string {
	info, ok := p.Studies[id]
	if !ok {
		return id
	}
	name := info.FirstAuthor
	if name == "" {
		name = clipRunes(cleanSpace(info.Title), 30)
	}
	if name == "" {
		return id
	}
	if info.Year > 0 {
		return fmt.Sprintf("%s %d", name, info.Year)
	}
	return name
}

// InfoOf returns the StudyInfo of a record.
func InfoOf(r *Record) StudyInfo {
	info := StudyInfo{PMID: r.PMID, Title: cleanSpace(r.Title), Year: r.Year}
	if len(r.Authors) > 0 {
		info.FirstAuthor = lastName(r.Authors[0])
	}
	return info
}

// nameParticles start a last name of several words ("van der Berg").
var nameParticles = map[string]bool{"van": true, "von": true, "der": true, "den": true, "de": true, "del": true,
	"della": true, "di": true, "da": true, "dos": true, "du": true, "la": true, "le": true, "ter": true, "ten": true, "al": true, "el": true}

// lastName returns the last name of an author written "Last First" (a
// collective name gives its first word): leading particles ("van der")
// are kept with the name they precede.
func lastName(author string) string {
	words := strings.Fields(author)
	var out []string
	for _, w := range words {
		out = append(out, w)
		if !nameParticles[strings.ToLower(w)] {
			break
		}
	}
	return strings.Join(out, " ")
}

// ScreeningStale reports whether the criterion texts differ from those the
// screening answered, so that Session.Screen must screen again.
func (p *Project) ScreeningStale() bool {
	if len(p.Screening) == 0 {
		return false
	}
	return !slices.Equal(criterionTexts(p.Criteria), p.ScreenedCriteria)
}

// criterionTexts returns the criteria's texts, white space collapsed.
func criterionTexts(cs []Criterion) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = cleanSpace(c.Text)
	}
	return out
}

// Rescore recomputes the screening scores for the current criteria's
// weights and switches (no model call) and sorts the screening, best
// first: candidates of the current search before the others, studies that
// could not be screened last. A stale screening (ScreeningStale) keeps its
// scores.
func (p *Project) Rescore() {
	if !p.ScreeningStale() {
		for i := range p.Screening {
			if p.Screening[i].Error == "" {
				p.Screening[i].Score = Score(p.Screening[i].Verdicts, p.Criteria)
			}
		}
	}
	p.sortScreening()
}

// sortScreening orders the screening as Rescore says; ties keep the
// order of the search (then the previous order).
func (p *Project) sortScreening() {
	pos := map[string]int{}
	if p.Search != nil {
		for i, id := range p.Search.IDs {
			pos[id] = i
		}
	}
	rank := func(s ScreenedStudy) (cand, failed bool, at int) {
		i, ok := pos[s.ID]
		if !ok {
			i = len(pos)
		}
		return ok, s.Error != "", i
	}
	slices.SortStableFunc(p.Screening, func(a, b ScreenedStudy) int {
		ca, fa, ia := rank(a)
		cb, fb, ib := rank(b)
		switch {
		case ca != cb:
			if ca {
				return -1
			}
			return 1
		case fa != fb:
			if fb {
				return -1
			}
			return 1
		case a.Score != b.Score:
			if a.Score > b.Score {
				return -1
			}
			return 1
		}
		return ia - ib
	})
}

// PRISMACounts are the numbers of a PRISMA flow diagram for the current
// search: Identified = Duplicates + NotScreened + Screened, and Screened =
// Excluded + Undecided + Included.
type PRISMACounts struct {
	// Identified is the number of records the search found.
	Identified int `json:"identified"`
	// Duplicates is the number of duplicates removed (the corpus keeps one
	// record per PMID or DOI, so 0).
	Duplicates int `json:"duplicates"`
	// Screened is the number of candidates screened by the model or
	// decided by the user.
	Screened int `json:"screened"`
	// Excluded is the number of screened records the user excluded;
	// Reasons counts them per reason.
	Excluded int            `json:"excluded"`
	Reasons  map[string]int `json:"reasons"`
	// NotScreened is the number of records found but not screened (beyond
	// the search's limit, or not screened yet).
	NotScreened int `json:"not_screened"`
	// Undecided is the number of screened records without a decision.
	Undecided int `json:"undecided"`
	// Included is the number of studies the user included.
	Included int `json:"included"`
	// StoppingRule records the stopping rule in use and its estimate
	// (StoppingStatus.Summary), "" when none.
	StoppingRule string `json:"stopping_rule,omitempty"`
	// StoppingBrief is the same in a line or two, for the flow diagram
	// (StoppingStatus.Brief).
	StoppingBrief string `json:"stopping_brief,omitempty"`

	// Conflicts is the number of screened records the reviewers decided
	// differently and that wait for a resolution (among Undecided).
	Conflicts int `json:"conflicts,omitempty"`
	// FullTextStage reports the full-text stage in use (fulltext_stage.go):
	// then Sought = NotRetrieved + Assessed + AwaitingFullText, Assessed =
	// ReportsExcluded + Included, and the records included at title and
	// abstract are Sought (Screened = Excluded + Undecided + Sought).
	FullTextStage bool `json:"full_text_stage,omitempty"`
	// Sought is the number of reports sought for retrieval.
	Sought int `json:"reports_sought,omitempty"`
	// NotRetrieved is the number of reports whose full text could not be
	// obtained.
	NotRetrieved int `json:"reports_not_retrieved,omitempty"`
	// Assessed is the number of reports assessed for eligibility.
	Assessed int `json:"reports_assessed,omitempty"`
	// ReportsExcluded is the number of reports excluded at full text;
	// ReportReasons counts them per reason.
	ReportsExcluded int            `json:"reports_excluded,omitempty"`
	ReportReasons   map[string]int `json:"report_reasons,omitempty"`
	// AwaitingFullText is the number of reports retrieved and not yet
	// decided at full text; FullTextConflicts those among them the
	// reviewers decided differently.
	AwaitingFullText  int `json:"reports_awaiting,omitempty"`
	FullTextConflicts int `json:"full_text_conflicts,omitempty"`
}

// PRISMA returns the PRISMA counts of the current search: decisions and
// screenings of studies the current search does not find are left out.
func (p *Project) PRISMA() PRISMACounts {
	c := PRISMACounts{Reasons: map[string]int{}}
	if p.Search == nil {
		return c
	}
	c.Identified = int(p.Search.Total)
	c.Duplicates = len(p.Search.DuplicateOf)
	screened := map[string]bool{}
	for _, s := range p.Screening {
		if s.Error == "" {
			screened[s.ID] = true
		}
	}
	for _, r := range p.Reviewers { // decided by one reviewer: screened, awaiting the other
		for id := range r.Decisions {
			screened[id] = true
		}
	}
	for _, id := range p.candidatesInOrder() {
		d, decided := p.Decisions[id]
		if !decided && !screened[id] {
			continue
		}
		c.Screened++
		switch {
		case !decided:
			c.Undecided++
		case d.Include:
			c.Included++
		default:
			c.Excluded++
			c.Reasons[d.Reason]++
		}
	}
	c.NotScreened = max(c.Identified-c.Duplicates-c.Screened, 0)
	if p.Stopping.inUse() {
		st := p.StoppingStatus()
		c.StoppingRule, c.StoppingBrief = st.Summary(), st.Brief()
	}
	c.Conflicts = p.OpenConflicts(StageTitleAbstract)
	if p.FullTextStage {
		p.addFullTextCounts(&c)
	}
	return c
}

// StandardTable standardizes the extracted results of the first outcome
// for the included studies (see Standardize) for the meta-analysis, in
// the order of Included. A study without a result, whose result was
// extracted for another Result spec (ResultsWith; a correction by the user
// counts for the spec it was made under, see CorrectResult), whose result
// has more groups than the shape compares and no arm choice (ArmsNeeded),
// or whose result cannot be standardized, is left out and named in
// problems. Labels that would repeat get a, b, ... ("Smith 2019a").
// StandardTableFor does the same for any outcome.
func (p *Project) StandardTable() (rows []StandardRow, problems []string) {
	return p.StandardTableFor(0)
}

// StandardRow standardizes the first outcome's result of one study (see
// StandardTable, whose label it gets when included). On an error the row
// holds what could be computed.
func (p *Project) StandardRow(id string) (StandardRow, error) { return p.StandardRowFor(0, id) }

// problemText is a standardization error as a table's problems list says
// it: a *RowError's problems, else the error.
func problemText(err error) string {
	var re *RowError
	if errors.As(err, &re) {
		return strings.Join(re.Problems, "; ")
	}
	return err.Error()
}

// UniqueLabels returns the labels of the studies (Label), with a, b, ...
// added to labels that would repeat: as the standardized table and the
// forest plot name them.
func (p *Project) UniqueLabels(ids []string) map[string]string { return p.uniqueLabels(ids) }

func (p *Project) uniqueLabels(ids []string) map[string]string {
	count := map[string]int{}
	for _, id := range ids {
		count[p.Label(id)]++
	}
	next := map[string]int{}
	out := make(map[string]string, len(ids))
	for _, id := range ids {
		l := p.Label(id)
		if count[l] > 1 {
			n := next[l]
			next[l]++
			l += suffixLetters(n)
		}
		out[id] = l
	}
	return out
}

// suffixLetters returns a, b, ..., z, aa, ab, ... for 0, 1, ...
func suffixLetters(n int) string {
	s := ""
	for n++; n > 0; n /= 26 {
		n--
		s = string(rune('a'+n%26)) + s
	}
	return s
}

// MetaOptions returns the meta-analysis options of the first outcome's
// Meta settings: the measure (or the default for Result.Measure), the
// method (REML by default) and Knapp–Hartung inference.
func (p *Project) MetaOptions() (meta.Options, error) { return p.MetaOptionsFor(0) }

// Analyze runs the meta-analysis of the first outcome (AnalyzeOutcome).
func (p *Project) Analyze() (studies []meta.Study, res meta.Result, err error) {
	return p.AnalyzeOutcome(0)
}

// ParseProject reads a saved review project: a format version this
// Clinsight does not know (a newer one) is refused, then the project is
// decoded and checked (Validate); missing maps are made empty.
func ParseProject(data []byte) (*Project, error) {
	var head struct {
		Version *int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("it is not a review project (invalid JSON: %w)", err)
	}
	if head.Version == nil {
		return nil, errors.New("it is not a review project (no format version)")
	}
	if *head.Version > ProjectVersion {
		return nil, fmt.Errorf("%w: it has format version %d and this version of Clinsight reads up to %d; update Clinsight to open it", ErrNewerProject, *head.Version, ProjectVersion)
	}
	p := &Project{}
	if err := json.Unmarshal(data, p); err != nil {
		return nil, fmt.Errorf("it is not a valid review project: %w", err)
	}
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("it is not a valid review project: %w", err)
	}
	if p.Studies == nil {
		p.Studies = map[string]StudyInfo{}
	}
	if p.Decisions == nil {
		p.Decisions = map[string]Decision{}
	}
	if p.Extractions == nil {
		p.Extractions = map[string][]FieldValue{}
	}
	for i := range p.NumOutcomes() {
		if o := p.OutcomeAt(i); o.Results == nil {
			o.Results = map[string]ResultExtraction{}
		}
	}
	return p, nil
}

// ErrNewerProject is returned by ParseProject for a project saved by a
// newer version of Clinsight.
var ErrNewerProject = errors.New("the review project was saved by a newer version of Clinsight")

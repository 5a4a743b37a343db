package evidence

import (
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// This file holds dual screening (issue 17 item 4): a review may have named
// reviewers who screen independently, each with their own decisions, blind
// to the others' until all have decided a record. The decision the review
// goes on with (Project.Decisions, Project.FullText) is then the one they
// agree on, or the one a resolution of their conflict records; a record
// they disagree on waits for a resolution. A review without named
// reviewers is screened by one unnamed reviewer whose decisions are the
// review's, as before.

// Stage is a screening stage.
type Stage string

// The screening stages: title and abstract, then the full texts of the
// records included at title and abstract (fulltext_stage.go).
const (
	StageTitleAbstract Stage = "title-abstract"
	StageFullText      Stage = "full-text"
)

// Stages are the screening stages in order.
var Stages = []Stage{StageTitleAbstract, StageFullText}

// Label names a stage for people.
func (s Stage) Label() string {
	switch s {
	case StageTitleAbstract:
		return "Title and abstract"
	case StageFullText:
		return "Full text"
	}
	return string(s)
}

// ParseStage reads a stage's name (title-abstract or full-text).
func ParseStage(s string) (Stage, error) {
	switch st := Stage(strings.ToLower(strings.TrimSpace(s))); st {
	case StageTitleAbstract, StageFullText:
		return st, nil
	}
	return "", fmt.Errorf("unknown screening stage %q: use %s or %s", s, StageTitleAbstract, StageFullText)
}

// MaxReviewers is the number of named reviewers a review may have: two
// screen independently (Cohen's kappa compares two); a third person
// resolves their conflicts (Resolution.By).
const MaxReviewers = 2

// maxReviewerName bounds a reviewer's name (it names a workbook sheet:
// "Reviewer " and the name fit Excel's 31 characters).
const maxReviewerName = 20

// ReviewerLog is a named reviewer and their own decisions, by record ID.
type ReviewerLog struct {
	// Name names the reviewer (ValidateReviewerName).
	Name string `json:"name"`
	// Decisions are the title-and-abstract decisions.
	Decisions map[string]Decision `json:"decisions,omitempty"`
	// FullText are the full-text decisions.
	FullText map[string]Decision `json:"full_text,omitempty"`
}

// get returns the reviewer's decisions at a stage, to read (nil when
// none): reading never changes the project.
func (r *ReviewerLog) get(stage Stage) map[string]Decision {
	if stage == StageFullText {
		return r.FullText
	}
	return r.Decisions
}

// decisions returns the reviewer's decisions at a stage, to change: made
// when missing.
func (r *ReviewerLog) decisions(stage Stage) map[string]Decision {
	if stage == StageFullText {
		if r.FullText == nil {
			r.FullText = map[string]Decision{}
		}
		return r.FullText
	}
	if r.Decisions == nil {
		r.Decisions = map[string]Decision{}
	}
	return r.Decisions
}

// Resolution is how the reviewers' conflict on a record was resolved: the
// decision the review goes on with, and why.
type Resolution struct {
	// Decision is the decision agreed (an exclusion has its reason).
	Decision
	// Note says how the conflict was resolved (required: discussed, a
	// third reviewer decided, the full text settled it, ...).
	Note string `json:"note"`
	// By names who resolved it, "" when not said.
	By string `json:"by,omitempty"`
}

// ValidateReviewerName checks a reviewer's name: letters, digits, spaces,
// '-', '_' and '.', starting with a letter or digit, at most 20
// characters.
func ValidateReviewerName(name string) error {
	switch {
	case strings.TrimSpace(name) == "":
		return errors.New("the reviewer needs a name")
	case utf8.RuneCountInString(name) > maxReviewerName:
		return fmt.Errorf("the reviewer's name %q is longer than %d characters", name, maxReviewerName)
	case name != strings.TrimSpace(name):
		return fmt.Errorf("the reviewer's name %q may not start or end with a space", name)
	}
	for i, r := range name {
		ok := unicode.IsLetter(r) || unicode.IsDigit(r)
		if !ok && (i == 0 || !strings.ContainsRune(" -_.", r)) {
			return fmt.Errorf("the reviewer's name %q has the character %q: use letters, digits, spaces, '-', '_' and '.'", name, r)
		}
	}
	return nil
}

// ReviewerNames returns the names of the review's reviewers, in order.
func (p *Project) ReviewerNames() []string {
	out := make([]string, len(p.Reviewers))
	for i, r := range p.Reviewers {
		out[i] = r.Name
	}
	return out
}

// HasReviewers reports whether the review is screened by named reviewers.
func (p *Project) HasReviewers() bool { return len(p.Reviewers) > 0 }

// reviewer returns the named reviewer's log, nil when there is none.
func (p *Project) reviewer(name string) *ReviewerLog {
	for i := range p.Reviewers {
		if strings.EqualFold(p.Reviewers[i].Name, name) {
			return &p.Reviewers[i]
		}
	}
	return nil
}

// AddReviewer names a reviewer of the review (at most MaxReviewers). The
// first one named takes over the decisions made so far, which were theirs;
// a second one then screens the same records on their own.
func (p *Project) AddReviewer(name string) error {
	name = cleanSpace(name)
	if err := ValidateReviewerName(name); err != nil {
		return err
	}
	if p.reviewer(name) != nil {
		return fmt.Errorf("%s is a reviewer of this review already", name)
	}
	if len(p.Reviewers) >= MaxReviewers {
		return fmt.Errorf("this review has %d reviewers already (%s): a third person resolves their conflicts instead", MaxReviewers, strings.Join(p.ReviewerNames(), " and "))
	}
	r := ReviewerLog{Name: name}
	if len(p.Reviewers) == 0 {
		r.Decisions, r.FullText = maps.Clone(p.Decisions), maps.Clone(p.FullText)
	}
	p.Reviewers = append(p.Reviewers, r)
	p.upgradeFormat()
	p.settleAll()
	return nil
}

// RemoveReviewer removes a reviewer who has made no decision (a reviewer's
// decisions are never dropped silently).
func (p *Project) RemoveReviewer(name string) error {
	r := p.reviewer(name)
	if r == nil {
		return fmt.Errorf("%s is not a reviewer of this review", name)
	}
	if n := len(r.Decisions) + len(r.FullText); n > 0 {
		return fmt.Errorf("%s has made %d decisions: a reviewer with decisions stays on the review", r.Name, n)
	}
	p.Reviewers = slices.DeleteFunc(p.Reviewers, func(x ReviewerLog) bool { return strings.EqualFold(x.Name, name) })
	p.settleAll()
	return nil
}

// stageDecisions returns the review's decisions at a stage (the agreed
// ones when there are reviewers), made when missing.
func (p *Project) stageDecisions(stage Stage) map[string]Decision {
	if stage == StageFullText {
		if p.FullText == nil {
			p.FullText = map[string]Decision{}
		}
		return p.FullText
	}
	if p.Decisions == nil {
		p.Decisions = map[string]Decision{}
	}
	return p.Decisions
}

// agreedAt returns the review's decisions at a stage, to read.
func (p *Project) agreedAt(stage Stage) map[string]Decision {
	if stage == StageFullText {
		return p.FullText
	}
	return p.Decisions
}

// stageCandidates returns the records screened at a stage, in order: the
// search's candidates at title and abstract, the reports sought at full
// text.
func (p *Project) stageCandidates(stage Stage) []string {
	if stage == StageFullText {
		return p.Sought()
	}
	return p.candidatesInOrder()
}

// canDecide checks that a record can be decided at a stage.
func (p *Project) canDecide(stage Stage, id string) error {
	switch stage {
	case StageTitleAbstract:
		if !p.IsCandidate(id) {
			return fmt.Errorf("study %s is not among the studies the current search found", id)
		}
	case StageFullText:
		if !slices.Contains(p.Sought(), id) {
			return fmt.Errorf("%s was not included at title and abstract: only those are screened on their full text", p.Label(id))
		}
		if note, ok := p.NotRetrieved[id]; ok {
			return fmt.Errorf("the full text of %s is marked not retrieved (%s): clear that mark to assess it", p.Label(id), note)
		}
	default:
		return fmt.Errorf("unknown screening stage %q", stage)
	}
	return nil
}

// DecideAs records a decision at a stage: as the named reviewer when the
// review has reviewers (reviewer names one of them), else as the review's
// one reviewer (reviewer ""). An exclusion needs a reason.
func (p *Project) DecideAs(reviewer string, stage Stage, id string, include bool, reason string) error {
	if err := p.canDecide(stage, id); err != nil {
		return err
	}
	reason = cleanSpace(reason)
	if !include && reason == "" {
		return fmt.Errorf("give the reason to exclude %s", p.Label(id))
	}
	d := Decision{Include: include, Reason: reason, At: time.Now().UTC()}
	if include {
		d.Reason = ""
	}
	if len(p.Reviewers) == 0 {
		if reviewer != "" {
			return fmt.Errorf("this review has no reviewer named %s: name the reviewers first", reviewer)
		}
		p.stageDecisions(stage)[id] = d
		return nil
	}
	r, err := p.screener(reviewer)
	if err != nil {
		return err
	}
	r.decisions(stage)[id] = d
	p.settle(stage, id)
	return nil
}

// UndecideAs removes a decision at a stage (see DecideAs for reviewer).
func (p *Project) UndecideAs(reviewer string, stage Stage, id string) error {
	if len(p.Reviewers) == 0 {
		if reviewer != "" {
			return fmt.Errorf("this review has no reviewer named %s", reviewer)
		}
		delete(p.stageDecisions(stage), id)
		return nil
	}
	r, err := p.screener(reviewer)
	if err != nil {
		return err
	}
	delete(r.decisions(stage), id)
	p.settle(stage, id)
	return nil
}

// screener returns the reviewer who decides, or says who may.
func (p *Project) screener(name string) (*ReviewerLog, error) {
	if name == "" {
		return nil, fmt.Errorf("this review is screened by %s: say who is screening", strings.Join(p.ReviewerNames(), " and "))
	}
	r := p.reviewer(name)
	if r == nil {
		return nil, fmt.Errorf("%s is not a reviewer of this review (its reviewers: %s)", name, strings.Join(p.ReviewerNames(), ", "))
	}
	return r, nil
}

// sameDecision reports whether two reviewers' decisions agree: the same
// include or exclude at title and abstract; at full text also the same
// reason to exclude (PRISMA counts the reports excluded per reason).
func sameDecision(stage Stage, a, b Decision) bool {
	if a.Include != b.Include {
		return false
	}
	return stage != StageFullText || a.Include || strings.EqualFold(cleanSpace(a.Reason), cleanSpace(b.Reason))
}

// settle sets the review's decision on a record at a stage from its
// reviewers': a resolution's decision, else the decision all reviewers
// made alike, else none (not all decided, or a conflict).
func (p *Project) settle(stage Stage, id string) {
	if len(p.Reviewers) == 0 {
		return
	}
	agreed := p.stageDecisions(stage)
	if res, ok := p.Resolutions[stage][id]; ok {
		agreed[id] = res.Decision
		return
	}
	var d Decision
	for i := range p.Reviewers {
		rd, ok := p.Reviewers[i].get(stage)[id]
		switch {
		case !ok || i > 0 && !sameDecision(stage, d, rd):
			delete(agreed, id)
			return
		case i == 0:
			d = rd
		case rd.At.After(d.At):
			d.At = rd.At // decided when the last reviewer decided
		}
	}
	agreed[id] = d
}

// settleAll settles every record any reviewer or resolution decided.
func (p *Project) settleAll() {
	if len(p.Reviewers) == 0 {
		return
	}
	for _, stage := range Stages {
		ids := map[string]bool{}
		for id := range p.agreedAt(stage) {
			ids[id] = true
		}
		for i := range p.Reviewers {
			for id := range p.Reviewers[i].get(stage) {
				ids[id] = true
			}
		}
		for id := range p.Resolutions[stage] {
			ids[id] = true
		}
		for id := range ids {
			p.settle(stage, id)
		}
	}
}

// ReviewerDecision returns a reviewer's own decision on a record at a
// stage.
func (p *Project) ReviewerDecision(reviewer string, stage Stage, id string) (Decision, bool) {
	r := p.reviewer(reviewer)
	if r == nil {
		return Decision{}, false
	}
	d, ok := r.get(stage)[id]
	return d, ok
}

// OthersDecided reports whether every reviewer has decided a record at a
// stage: only then may a reviewer see the others' decisions (screening is
// blind until then).
func (p *Project) OthersDecided(stage Stage, id string) bool {
	for i := range p.Reviewers {
		if _, ok := p.Reviewers[i].get(stage)[id]; !ok {
			return false
		}
	}
	return len(p.Reviewers) > 0
}

// DecisionsOf returns the decisions the screening of one reviewer goes by
// (a copy): the named reviewer's own when the review has reviewers (the
// active learner learns from them alone, so screening stays blind), else
// the review's.
func (p *Project) DecisionsOf(reviewer string, stage Stage) map[string]Decision {
	if r := p.reviewer(reviewer); r != nil {
		return maps.Clone(r.get(stage))
	}
	return maps.Clone(p.agreedAt(stage))
}

// Conflict is a record the reviewers decided differently at a stage.
type Conflict struct {
	Stage Stage
	ID    string
	// Decisions are the reviewers' decisions, in the order of Reviewers.
	Decisions []Decision
	// Resolution is how it was resolved, nil while it is open.
	Resolution *Resolution
}

// Conflicts lists the records of a stage that every reviewer decided and
// that they decided differently (see sameDecision), in the stage's order,
// with their resolution when resolved.
func (p *Project) Conflicts(stage Stage) []Conflict {
	if len(p.Reviewers) < 2 {
		return nil
	}
	var out []Conflict
	for _, id := range p.stageCandidates(stage) {
		c := Conflict{Stage: stage, ID: id}
		differ := false
		for i := range p.Reviewers {
			d, ok := p.Reviewers[i].get(stage)[id]
			if !ok {
				c.Decisions = nil
				break
			}
			if i > 0 && !sameDecision(stage, c.Decisions[0], d) {
				differ = true
			}
			c.Decisions = append(c.Decisions, d)
		}
		if c.Decisions == nil || !differ {
			continue
		}
		if res, ok := p.Resolutions[stage][id]; ok {
			c.Resolution = &res
		}
		out = append(out, c)
	}
	return out
}

// OpenConflicts counts the conflicts of a stage not resolved yet.
func (p *Project) OpenConflicts(stage Stage) int {
	n := 0
	for _, c := range p.Conflicts(stage) {
		if c.Resolution == nil {
			n++
		}
	}
	return n
}

// Resolve resolves the reviewers' conflict on a record at a stage: the
// review goes on with the decision given (an exclusion needs its reason),
// and note says how it was resolved; by names who resolved it (may be "").
// A resolution may be changed by resolving again.
func (p *Project) Resolve(stage Stage, id string, include bool, reason, note, by string) error {
	if err := p.canDecide(stage, id); err != nil {
		return err
	}
	open := false
	for _, c := range p.Conflicts(stage) {
		if c.ID == id {
			open = true
			break
		}
	}
	if !open {
		return fmt.Errorf("the reviewers have not decided %s differently at %s: there is no conflict to resolve", p.Label(id), strings.ToLower(stage.Label()))
	}
	reason, note, by = cleanSpace(reason), cleanSpace(note), cleanSpace(by)
	switch {
	case !include && reason == "":
		return fmt.Errorf("give the reason to exclude %s", p.Label(id))
	case note == "":
		return fmt.Errorf("say how the conflict on %s was resolved", p.Label(id))
	case utf8.RuneCountInString(note) > maxReasonRunes || utf8.RuneCountInString(reason) > maxReasonRunes:
		return fmt.Errorf("the reason and the note are limited to %d characters", maxReasonRunes)
	}
	if include {
		reason = ""
	}
	if p.Resolutions == nil {
		p.Resolutions = map[Stage]map[string]Resolution{}
	}
	if p.Resolutions[stage] == nil {
		p.Resolutions[stage] = map[string]Resolution{}
	}
	p.Resolutions[stage][id] = Resolution{Decision: Decision{Include: include, Reason: reason, At: time.Now().UTC()}, Note: note, By: by}
	p.settle(stage, id)
	return nil
}

// Unresolve removes the resolution of a conflict: the record waits for one
// again.
func (p *Project) Unresolve(stage Stage, id string) {
	delete(p.Resolutions[stage], id)
	p.settle(stage, id)
}

// maxReasonRunes bounds a reason or a resolution's note.
const maxReasonRunes = 1000

// StageAgreement is the reviewers' agreement at a stage.
type StageAgreement struct {
	Stage Stage
	// Reviewers are the two reviewers compared.
	Reviewers [2]string
	// BothInclude, BothExclude, OnlyFirst and OnlySecond are the 2×2
	// table of the records both decided (OnlyFirst: the first reviewer
	// included, the second excluded).
	BothInclude, BothExclude, OnlyFirst, OnlySecond int
	// Agreement is the raw agreement and Cohen's kappa over those records
	// (Records 0 when there are none).
	Agreement
}

// Agreement compares the first two reviewers' include/exclude decisions
// on the records of a stage that both decided (CohenKappa). It fails when
// the review has fewer than two reviewers.
func (p *Project) Agreement(stage Stage) (StageAgreement, error) {
	if len(p.Reviewers) < 2 {
		return StageAgreement{}, errors.New("agreement needs two reviewers: name them first")
	}
	a, b := &p.Reviewers[0], &p.Reviewers[1]
	out := StageAgreement{Stage: stage, Reviewers: [2]string{a.Name, b.Name}}
	var xs, ys []bool
	for _, id := range p.stageCandidates(stage) {
		da, okA := a.get(stage)[id]
		db, okB := b.get(stage)[id]
		if !okA || !okB {
			continue
		}
		xs, ys = append(xs, da.Include), append(ys, db.Include)
		switch {
		case da.Include && db.Include:
			out.BothInclude++
		case !da.Include && !db.Include:
			out.BothExclude++
		case da.Include:
			out.OnlyFirst++
		default:
			out.OnlySecond++
		}
	}
	if len(xs) == 0 {
		return out, nil
	}
	ag, err := CohenKappa(xs, ys)
	if err != nil {
		return out, err
	}
	out.Agreement = ag
	return out, nil
}

// validateReviewers checks the reviewers and resolutions of a project
// read or about to be saved.
func (p *Project) validateReviewers() error {
	if len(p.Reviewers) > MaxReviewers {
		return fmt.Errorf("the review has %d reviewers; at most %d screen a review", len(p.Reviewers), MaxReviewers)
	}
	for i, r := range p.Reviewers {
		if err := ValidateReviewerName(r.Name); err != nil {
			return err
		}
		for j := range i {
			if strings.EqualFold(p.Reviewers[j].Name, r.Name) {
				return fmt.Errorf("the reviewer %s is listed twice", r.Name)
			}
		}
		for _, m := range []map[string]Decision{r.Decisions, r.FullText} {
			for _, id := range slices.Sorted(maps.Keys(m)) {
				if d := m[id]; !d.Include && strings.TrimSpace(d.Reason) == "" {
					return fmt.Errorf("%s's exclusion of %s has no reason", r.Name, p.Label(id))
				}
			}
		}
	}
	for _, stage := range slices.Sorted(maps.Keys(p.Resolutions)) {
		if _, err := ParseStage(string(stage)); err != nil {
			return err
		}
		for _, id := range slices.Sorted(maps.Keys(p.Resolutions[stage])) {
			res := p.Resolutions[stage][id]
			if strings.TrimSpace(res.Note) == "" {
				return fmt.Errorf("the resolution of the conflict on %s does not say how it was resolved", p.Label(id))
			}
			if !res.Include && strings.TrimSpace(res.Reason) == "" {
				return fmt.Errorf("the resolution excluding %s has no reason", p.Label(id))
			}
		}
	}
	return nil
}

// upgradeFormat marks a project that uses what format version 1 lacks
// (reviewers, the full-text stage) as version 2, so that an older
// Clinsight refuses it rather than drop them.
func (p *Project) upgradeFormat() {
	if p.Version < 2 {
		p.Version = 2
	}
}

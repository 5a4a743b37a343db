package app

import "github.com/clinsight/clinsight/app/evidence"

// ReviewOutcomes is what a front end does with a review's outcomes (see
// evidence.Outcome): add and remove outcomes, correct an outcome's result,
// and choose the arms that form a multi-arm study's comparison. Outcome 0
// is the first; an outcome's spec and meta-analysis settings are edited
// through Update and Project.OutcomeAt.
type ReviewOutcomes interface {
	AddOutcome(spec evidence.ResultSpec) (int, error)
	RemoveOutcome(i int) error
	SetArms(outcome int, id string, c evidence.ArmChoice) error
	ClearArms(outcome int, id string)
	// EditOutcomeGroup corrects a study's result for an outcome, as
	// EditGroup does for the first.
	EditOutcomeGroup(outcome int, id string, group int, role string, values []string) error
}

var _ ReviewOutcomes = (*Review)(nil)

// AddOutcome adds an outcome to the review (evidence.Project.AddOutcome)
// and returns its index.
func (r *Review) AddOutcome(spec evidence.ResultSpec) (int, error) {
	var i int
	err := r.edit(func(p *evidence.Project) (err error) {
		i, err = p.AddOutcome(spec)
		return err
	})
	return i, err
}

// RemoveOutcome removes outcome i with its results and arm choices.
func (r *Review) RemoveOutcome(i int) error {
	return r.edit(func(p *evidence.Project) error { return p.RemoveOutcome(i) })
}

// SetArms records the user's choice of the groups that form a study's
// comparison for an outcome (evidence.Project.SetArms).
func (r *Review) SetArms(outcome int, id string, c evidence.ArmChoice) error {
	return r.edit(func(p *evidence.Project) error { return p.SetArms(outcome, id, c) })
}

// ClearArms removes a study's arm choice for an outcome.
func (r *Review) ClearArms(outcome int, id string) {
	_ = r.edit(func(p *evidence.Project) error { p.ClearArms(outcome, id); return nil })
}

// EditOutcomeGroup corrects a study's result for an outcome, checked
// against the study's text when it has been read.
func (r *Review) EditOutcomeGroup(outcome int, id string, group int, role string, values []string) error {
	return r.edit(func(p *evidence.Project) error {
		return p.EditGroupFor(outcome, id, group, role, values, r.cachedLocked(id))
	})
}

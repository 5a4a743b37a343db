package ui

import (
	"github.com/clinsight/clinsight/app/evidence"
)

// The fake review's outcomes and arm choices: the project's own rules
// (app/evidence), as app.Review applies them.

func (r *fakeReview) AddOutcome(spec evidence.ResultSpec) (int, error) {
	var i int
	var err error
	r.Update(func(p *evidence.Project) { i, err = p.AddOutcome(spec) })
	return i, err
}

func (r *fakeReview) RemoveOutcome(i int) error {
	var err error
	r.Update(func(p *evidence.Project) { err = p.RemoveOutcome(i) })
	return err
}

func (r *fakeReview) SetArms(i int, id string, c evidence.ArmChoice) error {
	var err error
	r.Update(func(p *evidence.Project) { err = p.SetArms(i, id, c) })
	return err
}

func (r *fakeReview) ClearArms(i int, id string) {
	r.Update(func(p *evidence.Project) { p.ClearArms(i, id) })
}

func (r *fakeReview) EditOutcomeGroup(i int, id string, group int, role string, values []string) error {
	var err error
	r.Update(func(p *evidence.Project) { err = p.EditGroupFor(i, id, group, role, values, nil) })
	return err
}

package ui

import (
	"bytes"
	"errors"
	"os"
	"slices"

	"github.com/clinsight/clinsight/app/evidence"
)

// The fake review's ReviewTeam: the rules are the project's, as in
// app.Review; the files are written and read as app.Review does.

func (r *fakeReview) AddReviewer(name string) error {
	var err error
	r.Update(func(p *evidence.Project) { err = p.AddReviewer(name) })
	return err
}

func (r *fakeReview) RemoveReviewer(name string) error {
	var err error
	r.Update(func(p *evidence.Project) {
		if err = p.RemoveReviewer(name); err == nil && r.screener == name {
			r.screener = ""
		}
	})
	return err
}

func (r *fakeReview) SetScreener(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name != "" && !slices.Contains(r.p.ReviewerNames(), name) {
		return errors.New(name + " is not a reviewer of this review")
	}
	r.screener = name
	return nil
}

func (r *fakeReview) Screener() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.screener
}

func (r *fakeReview) DecideStage(stage evidence.Stage, id string, include bool, reason string) error {
	var err error
	r.Update(func(p *evidence.Project) { err = p.DecideAs(r.screener, stage, id, include, reason) })
	return err
}

func (r *fakeReview) UndecideStage(stage evidence.Stage, id string) error {
	var err error
	r.Update(func(p *evidence.Project) { err = p.UndecideAs(r.screener, stage, id) })
	return err
}

func (r *fakeReview) SetNotRetrieved(id, note string) error {
	var err error
	r.Update(func(p *evidence.Project) { err = p.SetNotRetrieved(id, note) })
	return err
}

func (r *fakeReview) Resolve(stage evidence.Stage, id string, include bool, reason, note, by string) error {
	var err error
	r.Update(func(p *evidence.Project) { err = p.Resolve(stage, id, include, reason, note, by) })
	return err
}

func (r *fakeReview) ExportDecisions(path, reviewer string) error {
	r.mu.Lock()
	f, err := r.p.ExportDecisions(reviewer)
	r.mu.Unlock()
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if err := evidence.WriteDecisionsFile(&buf, f); err != nil {
		return err
	}
	return os.WriteFile(path, buf.Bytes(), 0o644)
}

func (r *fakeReview) ImportDecisions(path string) (evidence.MergeReport, error) {
	fh, err := os.Open(path)
	if err != nil {
		return evidence.MergeReport{}, err
	}
	defer fh.Close()
	f, err := evidence.ReadDecisionsFile(fh)
	if err != nil {
		return evidence.MergeReport{}, err
	}
	var rep evidence.MergeReport
	r.Update(func(p *evidence.Project) { rep, err = p.MergeDecisions(f) })
	return rep, err
}

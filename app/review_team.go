package app

import (
	"bytes"
	"fmt"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/internal/atomicfile"
	"github.com/clinsight/clinsight/internal/inputfile"
)

// ReviewTeam is the dual screening and the full-text stage of a review
// (issue 17 items 4 and 5), part of every Reviewer: the rules are
// evidence.Project's (reviewers.go, fulltext_stage.go); the review says
// who is screening now, so that each decision is that reviewer's.
type ReviewTeam interface {
	// AddReviewer names a reviewer (at most two; the first takes over the
	// decisions made so far); RemoveReviewer removes one without
	// decisions.
	AddReviewer(name string) error
	RemoveReviewer(name string) error
	// SetScreener says who is screening now (one of the reviewers; "" for
	// nobody); Screener returns it. It is not saved: each time a review
	// is opened, the Screen step asks.
	SetScreener(name string) error
	Screener() string
	// DecideStage and UndecideStage record or remove a decision at a
	// stage, as the screener (Decide and Undecide are the title and
	// abstract stage's).
	DecideStage(stage evidence.Stage, id string, include bool, reason string) error
	UndecideStage(stage evidence.Stage, id string) error
	// SetNotRetrieved marks a report sought whose full text could not be
	// obtained (note "" clears the mark).
	SetNotRetrieved(id, note string) error
	// Resolve resolves the reviewers' conflict on a record; by names who
	// resolved it ("" when not said).
	Resolve(stage evidence.Stage, id string, include bool, reason, note, by string) error
	// ExportDecisions writes a reviewer's own decisions to a file for the
	// other reviewer; ImportDecisions merges such a file.
	ExportDecisions(path, reviewer string) error
	ImportDecisions(path string) (evidence.MergeReport, error)
}

var _ ReviewTeam = (*Review)(nil)

// AddReviewer names a reviewer of the review (evidence.Project.AddReviewer).
func (r *Review) AddReviewer(name string) error {
	return r.edit(func(p *evidence.Project) error { return p.AddReviewer(name) })
}

// RemoveReviewer removes a reviewer without decisions; when they were
// screening, nobody is.
func (r *Review) RemoveReviewer(name string) error {
	return r.edit(func(p *evidence.Project) error {
		if err := p.RemoveReviewer(name); err != nil {
			return err
		}
		if !r.onTeamLocked(p, r.screener) {
			r.screener = ""
		}
		return nil
	})
}

// onTeamLocked reports whether name is one of the project's reviewers.
func (r *Review) onTeamLocked(p *evidence.Project, name string) bool {
	for _, n := range p.ReviewerNames() {
		if n == name {
			return true
		}
	}
	return false
}

// SetScreener says who is screening now: one of the reviewers, or ""
// for nobody.
func (r *Review) SetScreener(name string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if name != "" && !r.onTeamLocked(r.p, name) {
		return fmt.Errorf("%s is not a reviewer of this review", name)
	}
	r.screener = name
	return nil
}

// Screener returns who is screening now ("" for nobody).
func (r *Review) Screener() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.screener
}

// DecideStage records a decision at a stage as the screener
// (evidence.Project.DecideAs).
func (r *Review) DecideStage(stage evidence.Stage, id string, include bool, reason string) error {
	return r.decide(func(p *evidence.Project) error { return p.DecideAs(r.screener, stage, id, include, reason) })
}

// UndecideStage removes the screener's decision at a stage.
func (r *Review) UndecideStage(stage evidence.Stage, id string) error {
	return r.decide(func(p *evidence.Project) error { return p.UndecideAs(r.screener, stage, id) })
}

// SetNotRetrieved marks a report not retrieved (evidence.Project.SetNotRetrieved).
func (r *Review) SetNotRetrieved(id, note string) error {
	return r.edit(func(p *evidence.Project) error { return p.SetNotRetrieved(id, note) })
}

// Resolve resolves a conflict between the reviewers (evidence.Project.Resolve).
func (r *Review) Resolve(stage evidence.Stage, id string, include bool, reason, note, by string) error {
	return r.edit(func(p *evidence.Project) error { return p.Resolve(stage, id, include, reason, note, by) })
}

// ExportDecisions writes the reviewer's own decisions to the file at path
// (written whole or not at all), for the other reviewer to import.
func (r *Review) ExportDecisions(path, reviewer string) error {
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
	if err := atomicfile.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		return fmt.Errorf("writing %s's decisions: %w", f.Reviewer, err)
	}
	r.ws.logger.Info("review: decisions exported", "review", f.Review, "reviewer", f.Reviewer, "decisions", len(f.Decisions), "path", path)
	return nil
}

// ImportDecisions merges a reviewer's decisions file into the review
// (evidence.Project.MergeDecisions) and saves it shortly.
func (r *Review) ImportDecisions(path string) (evidence.MergeReport, error) {
	// A named pipe would wait for a writer for ever; a file beyond the
	// bound is refused unread (ReadDecisionsFile bounds what it reads).
	fh, fi, err := inputfile.Open(path)
	if err != nil {
		return evidence.MergeReport{}, fmt.Errorf("reading the decisions file: %w", err)
	}
	if fi.Size() > evidence.MaxDecisionsFileBytes {
		fh.Close()
		return evidence.MergeReport{}, fmt.Errorf("%s: the decisions file is larger than %d MB: it is not a file of screening decisions", path, evidence.MaxDecisionsFileBytes>>20)
	}
	f, err := evidence.ReadDecisionsFile(fh)
	fh.Close()
	if err != nil {
		return evidence.MergeReport{}, fmt.Errorf("%s: %w", path, err)
	}
	var rep evidence.MergeReport
	err = r.edit(func(p *evidence.Project) error {
		var err error
		rep, err = p.MergeDecisions(f)
		return err
	})
	if err != nil {
		return rep, err
	}
	r.ws.logger.Info("review: decisions imported", "review", f.Review, "reviewer", rep.Reviewer, "added", rep.Added, "updated", rep.Updated, "path", path)
	return rep, nil
}

package evidence

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
	"unicode/utf8"
)

// This file exchanges a reviewer's decisions as a small JSON file, so that
// two reviewers can screen on their own computers: each exports their
// decisions, the other imports them, and the decisions are merged by
// record ID with the conflicts between reviewers detected (issue 17
// item 4).

// DecisionsFormat names the decisions file format (its "format" key).
const DecisionsFormat = "clinsight-screening-decisions"

// DecisionsFileVersion is the version of the decisions file format.
const DecisionsFileVersion = 1

// Bounds of a decisions file: its size, its decisions, a record ID.
const (
	MaxDecisionsFileBytes = 32 << 20
	maxFileDecisions      = 2 * maxCandidateIDs
	maxRecordIDBytes      = 300
	maxCandidateIDs       = 200_000
)

// DecisionsFile is one reviewer's decisions on a review, as exchanged.
type DecisionsFile struct {
	// Format is DecisionsFormat; Version DecisionsFileVersion.
	Format  string `json:"format"`
	Version int    `json:"version"`
	// Review names the review project the decisions were made in.
	Review string `json:"review"`
	// Reviewer names the reviewer who made them.
	Reviewer string `json:"reviewer"`
	// Query is the boolean query of the review's search, to check that
	// both reviewers screen the same candidates.
	Query string `json:"query,omitempty"`
	// Exported is when the file was written.
	Exported time.Time `json:"exported"`
	// Decisions are the reviewer's decisions, title and abstract first,
	// each stage in the review's order.
	Decisions []ExchangedDecision `json:"decisions"`
}

// ExchangedDecision is one decision in a decisions file.
type ExchangedDecision struct {
	ID      string    `json:"id"`
	Stage   Stage     `json:"stage"`
	Include bool      `json:"include"`
	Reason  string    `json:"reason,omitempty"`
	At      time.Time `json:"at"`
}

// ExportDecisions returns the named reviewer's decisions on the review's
// current candidates (only theirs: the other reviewer's stay blind).
func (p *Project) ExportDecisions(reviewer string) (DecisionsFile, error) {
	r := p.reviewer(reviewer)
	if r == nil {
		if len(p.Reviewers) == 0 {
			return DecisionsFile{}, errors.New("this review has no named reviewers: name the reviewers first (the decisions made so far become the first one's)")
		}
		return DecisionsFile{}, fmt.Errorf("%s is not a reviewer of this review (its reviewers: %s)", reviewer, strings.Join(p.ReviewerNames(), ", "))
	}
	f := DecisionsFile{Format: DecisionsFormat, Version: DecisionsFileVersion, Review: p.Name, Reviewer: r.Name,
		Exported: time.Now().UTC(), Decisions: []ExchangedDecision{}}
	if p.Search != nil {
		f.Query = p.Search.Query
	}
	for _, stage := range Stages {
		m := r.get(stage)
		for _, id := range p.candidatesInOrder() {
			if d, ok := m[id]; ok {
				f.Decisions = append(f.Decisions, ExchangedDecision{ID: id, Stage: stage, Include: d.Include, Reason: d.Reason, At: d.At})
			}
		}
	}
	return f, nil
}

// WriteDecisionsFile writes a decisions file as indented JSON.
func WriteDecisionsFile(w io.Writer, f DecisionsFile) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(f); err != nil {
		return fmt.Errorf("writing the decisions: %w", err)
	}
	return nil
}

// ReadDecisionsFile reads and checks a decisions file (at most
// MaxDecisionsFileBytes): its format and version, the reviewer's name,
// and each decision (a known stage, a record ID, a reason for each
// exclusion, one decision per record and stage).
func ReadDecisionsFile(r io.Reader) (DecisionsFile, error) {
	raw, err := io.ReadAll(io.LimitReader(r, MaxDecisionsFileBytes+1))
	if err != nil {
		return DecisionsFile{}, fmt.Errorf("reading the decisions file: %w", err)
	}
	if len(raw) > MaxDecisionsFileBytes {
		return DecisionsFile{}, fmt.Errorf("the decisions file is larger than %d MB: it is not a file of screening decisions", MaxDecisionsFileBytes>>20)
	}
	var f DecisionsFile
	dec := json.NewDecoder(bytes.NewReader(raw))
	if err := dec.Decode(&f); err != nil {
		return DecisionsFile{}, fmt.Errorf("it is not a file of screening decisions (invalid JSON: %w)", err)
	}
	if err := f.Validate(); err != nil {
		return DecisionsFile{}, err
	}
	return f, nil
}

// Validate checks a decisions file read from outside.
func (f *DecisionsFile) Validate() error {
	switch {
	case f.Format != DecisionsFormat:
		return fmt.Errorf("it is not a file of screening decisions exported by Clinsight (format %q)", f.Format)
	case f.Version < 1 || f.Version > DecisionsFileVersion:
		return fmt.Errorf("the decisions file has format version %d; this version of Clinsight reads version %d (update Clinsight)", f.Version, DecisionsFileVersion)
	case len(f.Decisions) > maxFileDecisions:
		return fmt.Errorf("the decisions file holds %d decisions, more than the %d a review can have", len(f.Decisions), maxFileDecisions)
	}
	if err := ValidateReviewerName(f.Reviewer); err != nil {
		return fmt.Errorf("the decisions file: %w", err)
	}
	seen := make(map[Stage]map[string]bool, len(Stages))
	for i, d := range f.Decisions {
		n := i + 1
		if _, err := ParseStage(string(d.Stage)); err != nil {
			return fmt.Errorf("decision %d: %w", n, err)
		}
		switch {
		case strings.TrimSpace(d.ID) == "" || len(d.ID) > maxRecordIDBytes || !utf8.ValidString(d.ID):
			return fmt.Errorf("decision %d has no valid record ID", n)
		case !d.Include && strings.TrimSpace(d.Reason) == "":
			return fmt.Errorf("decision %d excludes %s without a reason", n, d.ID)
		case utf8.RuneCountInString(d.Reason) > maxReasonRunes || !utf8.ValidString(d.Reason):
			return fmt.Errorf("decision %d: the reason is longer than %d characters", n, maxReasonRunes)
		case seen[d.Stage][d.ID]:
			return fmt.Errorf("decision %d: %s is decided twice at %s", n, d.ID, strings.ToLower(d.Stage.Label()))
		}
		if seen[d.Stage] == nil {
			seen[d.Stage] = map[string]bool{}
		}
		seen[d.Stage][d.ID] = true
	}
	return nil
}

// MergeReport says what merging a decisions file did.
type MergeReport struct {
	// Reviewer is whose decisions were merged; NewReviewer reports that
	// they were added to the review's reviewers.
	Reviewer    string
	NewReviewer bool
	// Added, Updated and Unchanged count the decisions new to the review,
	// newer than the reviewer's decision there (which they replaced), and
	// the same as it; KeptNewer those older than the review's (kept).
	Added, Updated, Unchanged, KeptNewer int
	// Skipped counts the decisions on records that are not candidates of
	// the review's current search; SkippedIDs lists the first ten. (A
	// full-text decision on a record not yet included at title and
	// abstract is kept, and counts once the record is.)
	Skipped    int
	SkippedIDs []string
	// Conflicts lists the open conflicts between reviewers after the
	// merge, per stage.
	Conflicts map[Stage]int
	// QueryDiffers reports that the file was exported from a search with
	// another query.
	QueryDiffers bool
}

// Summary describes the merge in a sentence or two.
func (m MergeReport) Summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Merged %s's decisions: %d new, %d updated, %d unchanged", m.Reviewer, m.Added, m.Updated, m.Unchanged)
	if m.KeptNewer > 0 {
		fmt.Fprintf(&b, ", %d older than the review's (kept the review's)", m.KeptNewer)
	}
	if m.Skipped > 0 {
		fmt.Fprintf(&b, ", %d on records not among this review's candidates (ignored: %s)", m.Skipped, strings.Join(m.SkippedIDs, ", "))
	}
	b.WriteString(".")
	if m.NewReviewer {
		fmt.Fprintf(&b, " %s was added to the reviewers.", m.Reviewer)
	}
	if m.QueryDiffers {
		b.WriteString(" The file comes from a search with another query: check that both reviewers screen the same search.")
	}
	var cs []string
	for _, st := range Stages {
		if n := m.Conflicts[st]; n > 0 {
			cs = append(cs, fmt.Sprintf("%d at %s", n, strings.ToLower(st.Label())))
		}
	}
	if len(cs) > 0 {
		fmt.Fprintf(&b, " Conflicts to resolve: %s.", strings.Join(cs, ", "))
	} else {
		b.WriteString(" No conflicts to resolve.")
	}
	return b.String()
}

// MergeDecisions merges a reviewer's decisions file into the review, by
// record ID and stage: a decision replaces the reviewer's own when it is
// newer, and the decisions the reviewers agree on (or conflict on) follow.
// The file's reviewer must be one of the review's, or is added when the
// review has room for another (a review without named reviewers but with
// decisions must name its reviewers first, so that those decisions have
// an owner). Decisions on records the review does not screen are skipped
// and counted.
func (p *Project) MergeDecisions(f DecisionsFile) (MergeReport, error) {
	if err := f.Validate(); err != nil {
		return MergeReport{}, err
	}
	rep := MergeReport{Reviewer: f.Reviewer, Conflicts: map[Stage]int{}}
	r := p.reviewer(f.Reviewer)
	if r == nil {
		switch {
		case len(p.Reviewers) == 0 && (len(p.Decisions) > 0 || len(p.FullText) > 0):
			return rep, fmt.Errorf("this review has decisions but no named reviewers: name yourself as its first reviewer, then import %s's decisions", f.Reviewer)
		case len(p.Reviewers) >= MaxReviewers:
			return rep, fmt.Errorf("the file holds %s's decisions, but this review's reviewers are %s", f.Reviewer, strings.Join(p.ReviewerNames(), " and "))
		}
		if err := p.AddReviewer(f.Reviewer); err != nil {
			return rep, err
		}
		r, rep.NewReviewer = p.reviewer(f.Reviewer), true
	}
	rep.Reviewer = r.Name
	rep.QueryDiffers = p.Search != nil && f.Query != "" && cleanSpace(f.Query) != cleanSpace(p.Search.Query)
	// Title and abstract first: they decide which reports are sought.
	ds := slices.Clone(f.Decisions)
	slices.SortStableFunc(ds, func(a, b ExchangedDecision) int {
		return slices.Index(Stages, a.Stage) - slices.Index(Stages, b.Stage)
	})
	for _, stage := range Stages {
		var touched []string
		for _, d := range ds {
			if d.Stage != stage {
				continue
			}
			if !p.IsCandidate(d.ID) {
				rep.Skipped++
				if len(rep.SkippedIDs) < 10 {
					rep.SkippedIDs = append(rep.SkippedIDs, d.ID)
				}
				continue
			}
			nd := Decision{Include: d.Include, Reason: cleanSpace(d.Reason), At: d.At.UTC()}
			if nd.Include {
				nd.Reason = ""
			}
			m := r.decisions(stage)
			old, ok := m[d.ID]
			switch {
			case !ok:
				rep.Added++
			case old.Include == nd.Include && old.Reason == nd.Reason:
				rep.Unchanged++
				continue
			case old.At.After(nd.At):
				rep.KeptNewer++
				continue
			default:
				rep.Updated++
			}
			m[d.ID] = nd
			touched = append(touched, d.ID)
		}
		for _, id := range touched {
			p.settle(stage, id)
		}
	}
	for _, st := range Stages {
		rep.Conflicts[st] = p.OpenConflicts(st)
	}
	return rep, nil
}

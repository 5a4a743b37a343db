package evidence

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"unicode/utf8"
)

// This file holds the full-text stage of the screening (issue 17 item 5):
// the records included at title and abstract are the reports sought; the
// full text of each is retrieved (imported into the corpus, or read
// elsewhere) or marked not retrieved, and the reports retrieved are
// assessed for eligibility against it, each exclusion with its reason.
// The studies included in the review are then those included at full
// text. PRISMA 2020 counts both stages (PRISMA).

// FullTextExclusionReasons are the usual reasons to exclude a report at
// full text (the user may give another): the PRISMA 2020 diagram lists the
// reports excluded per reason.
var FullTextExclusionReasons = []string{
	"Wrong population", "Wrong intervention", "Wrong comparator", "Wrong outcome",
	"Wrong study design", "Wrong setting", "Not a primary study (review, editorial, letter)",
	"Conference abstract only", "Duplicate report of an included study", "No usable outcome data",
	"Not in a language the review covers",
}

// SetFullTextStage switches the full-text stage on or off. On, the
// studies included in the review are those included at full text; off,
// those included at title and abstract (the decisions of the full-text
// stage are kept either way).
func (p *Project) SetFullTextStage(on bool) {
	p.FullTextStage = on
	if on {
		p.upgradeFormat()
	}
}

// screenedIn returns the records included at title and abstract, in the
// order of the screening (best first), then of the search.
func (p *Project) screenedIn() []string {
	var out []string
	for _, id := range p.candidatesInOrder() {
		if d, ok := p.Decisions[id]; ok && d.Include {
			out = append(out, id)
		}
	}
	return out
}

// Sought returns the reports sought for retrieval: the records included at
// title and abstract, in order.
func (p *Project) Sought() []string { return p.screenedIn() }

// FullTextCandidates returns the reports to assess at full text: those
// sought and not marked not retrieved, in order.
func (p *Project) FullTextCandidates() []string {
	var out []string
	for _, id := range p.screenedIn() {
		if _, gone := p.NotRetrieved[id]; !gone {
			out = append(out, id)
		}
	}
	return out
}

// SetNotRetrieved marks a report sought whose full text could not be
// obtained (note says why: no access, not found, ...), or clears the mark
// (note ""). A report with full-text decisions cannot be marked.
func (p *Project) SetNotRetrieved(id, note string) error {
	note = cleanSpace(note)
	if note == "" {
		delete(p.NotRetrieved, id)
		return nil
	}
	if !slices.Contains(p.Sought(), id) {
		return fmt.Errorf("%s was not included at title and abstract: its full text is not sought", p.Label(id))
	}
	if utf8.RuneCountInString(note) > maxReasonRunes {
		return fmt.Errorf("the note is limited to %d characters", maxReasonRunes)
	}
	if _, ok := p.FullText[id]; ok {
		return fmt.Errorf("%s has a full-text decision: undo it before marking its full text not retrieved", p.Label(id))
	}
	for _, r := range p.Reviewers {
		if _, ok := r.FullText[id]; ok {
			return fmt.Errorf("%s decided %s on its full text: undo that before marking it not retrieved", r.Name, p.Label(id))
		}
	}
	if p.NotRetrieved == nil {
		p.NotRetrieved = map[string]string{}
	}
	p.NotRetrieved[id] = note
	p.upgradeFormat()
	return nil
}

// FullTextReasonsFor returns the reasons to offer when excluding a report
// at full text: FullTextExclusionReasons, then the other full-text reasons
// given in this review (the reviewers' too).
func (p *Project) FullTextReasonsFor() []string {
	reasons := slices.Clone(FullTextExclusionReasons)
	add := func(m map[string]Decision) {
		for _, id := range slices.Sorted(maps.Keys(m)) {
			if d := m[id]; !d.Include && d.Reason != "" && !slices.ContainsFunc(reasons, func(r string) bool { return strings.EqualFold(r, d.Reason) }) {
				reasons = append(reasons, d.Reason)
			}
		}
	}
	add(p.FullText)
	for _, r := range p.Reviewers {
		add(r.FullText)
	}
	return reasons
}

// validateFullText checks the full-text decisions of a project read or
// about to be saved.
func (p *Project) validateFullText() error {
	for _, id := range slices.Sorted(maps.Keys(p.FullText)) {
		if d := p.FullText[id]; !d.Include && strings.TrimSpace(d.Reason) == "" {
			return fmt.Errorf("the full-text exclusion of %s has no reason: give one", p.Label(id))
		}
	}
	return nil
}

// addFullTextCounts completes PRISMA counts with the full-text stage: the
// reports sought (the records included at title and abstract), not
// retrieved, assessed (excluded per reason, or included) and awaiting
// assessment; the studies included are those included at full text.
func (p *Project) addFullTextCounts(c *PRISMACounts) {
	c.FullTextStage = true
	c.ReportReasons = map[string]int{}
	sought := p.screenedIn()
	c.Sought = len(sought)
	c.Included = 0
	for _, id := range sought {
		if _, gone := p.NotRetrieved[id]; gone {
			c.NotRetrieved++
			continue
		}
		d, ok := p.FullText[id]
		switch {
		case !ok:
			c.AwaitingFullText++
		case d.Include:
			c.Assessed++
			c.Included++
		default:
			c.Assessed++
			c.ReportsExcluded++
			c.ReportReasons[d.Reason]++
		}
	}
	c.FullTextConflicts = p.OpenConflicts(StageFullText)
}

package evidence

import (
	"fmt"
	"strings"

	"github.com/clinsight/clinsight/export"
)

// Sheets of the review workbook for a review with named reviewers.
const (
	// AgreementSheet holds the reviewers' agreement per stage: the 2×2
	// table, the raw agreement and Cohen's kappa.
	AgreementSheet = "Agreement"
	// ConflictsSheet holds the records the reviewers decided differently,
	// each reviewer's decision, and the resolution.
	ConflictsSheet = "Conflicts"
	// ReviewerSheetPrefix starts the name of each reviewer's sheet of
	// decisions ("Reviewer Ana").
	ReviewerSheetPrefix = "Reviewer "
)

// decisionCells are a decision's cells: Included/Excluded, reason, time.
func decisionCells(d Decision, ok bool) []any {
	if !ok {
		return []any{nil, nil, nil}
	}
	dec := "Excluded"
	if d.Include {
		dec = "Included"
	}
	return []any{dec, cellOrNil(d.Reason), d.At}
}

// teamTables are the workbook's sheets of a review with reviewers: the
// agreement, the conflicts and their resolution, and each reviewer's
// decisions; none for a review screened by one unnamed reviewer.
func (w *workbookWriter) teamTables() []export.Table {
	p := w.p
	if len(p.Reviewers) == 0 {
		return nil
	}
	var out []export.Table
	if len(p.Reviewers) >= 2 {
		out = append(out, w.agreementTable(), w.conflictsTable())
	}
	for _, r := range p.Reviewers {
		out = append(out, w.reviewerTable(r))
	}
	return out
}

func (w *workbookWriter) agreementTable() export.Table {
	p := w.p
	a, b := p.Reviewers[0].Name, p.Reviewers[1].Name
	cols := []string{"Stage", "Records both decided", "Both included", "Both excluded",
		"Included by " + a + " only", "Included by " + b + " only", "Raw agreement", "Cohen's kappa", "Conflicts", "Conflicts open"}
	var rs [][]any
	for _, st := range Stages {
		if st == StageFullText && !p.FullTextStage {
			continue
		}
		ag, err := p.Agreement(st)
		if err != nil {
			continue
		}
		row := []any{st.Label(), ag.Records, ag.BothInclude, ag.BothExclude, ag.OnlyFirst, ag.OnlySecond, nil, nil,
			len(p.Conflicts(st)), p.OpenConflicts(st)}
		if ag.Records > 0 {
			row[6], row[7] = ag.Raw, ag.Kappa
		}
		rs = append(rs, row)
	}
	return export.Table{Name: AgreementSheet, Columns: cols, Rows: rowSeq(rs)}
}

func (w *workbookWriter) conflictsTable() export.Table {
	p := w.p
	cols := []string{"Stage", "Study", "Study ID", "Title"}
	for _, r := range p.Reviewers {
		cols = append(cols, r.Name+": decision", r.Name+": reason", r.Name+": decided at")
	}
	cols = append(cols, "Status", "Resolved as", "Reason", "How it was resolved", "Resolved by", "Resolved at")
	var rs [][]any
	for _, st := range Stages {
		for _, c := range p.Conflicts(st) {
			row := []any{st.Label(), p.Label(c.ID), c.ID, cellOrNil(w.title(c.ID))}
			for _, d := range c.Decisions {
				row = append(row, decisionCells(d, true)...)
			}
			if res := c.Resolution; res != nil {
				dec := decisionCells(res.Decision, true)
				row = append(row, "resolved", dec[0], dec[1], res.Note, cellOrNil(res.By), res.At)
			} else {
				row = append(row, "open", nil, nil, nil, nil, nil)
			}
			rs = append(rs, row)
		}
	}
	return export.Table{Name: ConflictsSheet, Columns: cols, Rows: rowSeq(rs)}
}

// reviewerTable lists a reviewer's own decisions on the current
// candidates: title and abstract, then full text, each in the review's
// order.
func (w *workbookWriter) reviewerTable(r ReviewerLog) export.Table {
	p := w.p
	cols := []string{"Stage", "Study", "Study ID", "PMID", "Title", "Decision", "Reason", "Decided at", "Review's decision"}
	var rs [][]any
	for _, st := range Stages {
		m := r.get(st)
		agreed := p.agreedAt(st)
		for _, id := range p.candidatesInOrder() {
			d, ok := m[id]
			if !ok {
				continue
			}
			row := []any{st.Label(), p.Label(id), id, cellOrNil(p.Studies[id].PMID), cellOrNil(w.title(id))}
			row = append(row, decisionCells(d, true)...)
			switch a, ok := agreed[id]; {
			case ok && a.Include:
				row = append(row, "Included")
			case ok:
				row = append(row, "Excluded: "+a.Reason)
			case p.OthersDecided(st, id):
				row = append(row, "conflict")
			default:
				row = append(row, "awaiting the other reviewer")
			}
			rs = append(rs, row)
		}
	}
	name := strings.TrimSpace(ReviewerSheetPrefix + r.Name)
	return export.Table{Name: name, Columns: cols, Rows: rowSeq(rs)}
}

// teamProvenance records the reviewers and their agreement.
func (w *workbookWriter) teamProvenance(prov *export.Provenance) {
	p := w.p
	if len(p.Reviewers) == 0 {
		return
	}
	prov.Add("Reviewers (screening independently)", strings.Join(p.ReviewerNames(), "; "))
	for _, st := range Stages {
		if ag, err := p.Agreement(st); err == nil && ag.Records > 0 {
			prov.Add(fmt.Sprintf("Agreement at %s", strings.ToLower(st.Label())),
				fmt.Sprintf("%d records both decided; raw agreement %.3f; Cohen's kappa %.3f", ag.Records, ag.Raw, ag.Kappa))
		}
	}
}

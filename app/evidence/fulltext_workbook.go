package evidence

import "github.com/clinsight/clinsight/export"

// FullTextSheet holds the full-text stage: each report sought, whether its
// full text was imported or not retrieved, and the decision on it.
const FullTextSheet = "Full-text screening"

func (w *workbookWriter) fullTextTable() export.Table {
	p := w.p
	cols := []string{"#", "Study", "Study ID", "PMID", "Title", "Full text imported from", "Retrieval", "Decision", "Reason", "Decided at"}
	var rs [][]any
	for i, id := range p.Sought() {
		row := []any{i + 1, p.Label(id), id, cellOrNil(p.Studies[id].PMID), cellOrNil(w.title(id)), cellOrNil(w.x.FullTexts[id])}
		if note, gone := p.NotRetrieved[id]; gone {
			row = append(row, "not retrieved: "+note, nil, nil, nil)
		} else {
			d, ok := p.FullText[id]
			row = append(row, "retrieved")
			switch {
			case ok:
				row = append(row, decisionCells(d, true)...)
			case p.OthersDecided(StageFullText, id):
				row = append(row, "conflict between reviewers", nil, nil)
			default:
				row = append(row, "awaiting assessment", nil, nil)
			}
		}
		rs = append(rs, row)
	}
	return export.Table{Name: FullTextSheet, Columns: cols, Rows: rowSeq(rs)}
}

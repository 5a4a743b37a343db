package evidence

import (
	"context"
	"fmt"

	"github.com/clinsight/clinsight/app/meta"
	"github.com/clinsight/clinsight/export"
)

// StudyTexts reads the texts (numbered chunks) of the studies from the
// corpus, by record ID.
func (s *Session) StudyTexts(ctx context.Context, ids []string) (map[string]StudyText, error) {
	out := make(map[string]StudyText, len(ids))
	for _, id := range ids {
		t, err := s.Corpus.StudyText(ctx, id)
		if err != nil {
			return nil, err
		}
		out[id] = t
	}
	return out, nil
}

// ExportWorkbook writes the whole review to the workbook at path (see
// WriteProjectWorkbook): it reads the included studies' texts, so that
// every cited chunk is shown, and the screened studies' records from the
// corpus, and runs the meta-analysis when results are standardized (a
// meta-analysis that cannot run is noted on the Provenance sheet instead).
// The project is only read. progress, if not nil, gets the rows written.
func (s *Session) ExportWorkbook(ctx context.Context, path string, prov export.Provenance, progress func(rows int64)) (export.Summary, error) {
	p := s.Project
	texts, err := s.StudyTexts(ctx, p.Included())
	if err != nil {
		return export.Summary{}, fmt.Errorf("evidence: exporting review %s: %w", p.Name, err)
	}
	ids := make([]string, 0, len(p.Screening))
	for _, st := range p.Screening {
		ids = append(ids, st.ID)
	}
	records, err := s.Corpus.Records(ctx, ids)
	if err != nil {
		return export.Summary{}, fmt.Errorf("evidence: exporting review %s: %w", p.Name, err)
	}
	x := &ProjectExport{Project: p, Texts: texts, Records: make(map[string]Record, len(records)), Model: s.Model}
	for _, r := range records {
		x.Records[r.ID] = r
	}
	if rows, _ := p.StandardTable(); len(rows) > 0 {
		studies, res, err := p.Analyze()
		if err != nil {
			prov.Add("Meta-analysis", "not run: "+meta.ErrorMessage(err))
		} else {
			x.Meta, x.MetaStudies = &res, studies
		}
	}
	return WriteProjectWorkbook(ctx, path, x, prov, progress)
}

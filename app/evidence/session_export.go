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
func (s *Session) ExportWorkbook(ctx context.Context, path string, prov export.Provenance, opts export.Options) (export.Summary, error) {
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
	if p.FullTextStage {
		if x.FullTexts, err = s.Corpus.fullTextSources(ctx, p.Sought()); err != nil {
			return export.Summary{}, fmt.Errorf("evidence: exporting review %s: %w", p.Name, err)
		}
	}
	if rows, _ := p.StandardTable(); len(rows) > 0 {
		studies, rep, err := p.AnalyzeReport(ctx, ReviewMetaPlan())
		if err != nil {
			prov.Add("Meta-analysis", "not run: "+meta.ErrorMessage(err))
		} else {
			x.Meta, x.MetaStudies = &rep.Result, studies
			x.MetaReport, x.MetaPlan = &rep, ReviewMetaPlan()
		}
	}
	for i := 1; i < p.NumOutcomes(); i++ {
		if x.OtherMeta == nil {
			x.OtherMeta = map[int]*OutcomeAnalysis{}
		}
		if rows, _ := p.StandardTableFor(i); len(rows) == 0 {
			x.OtherMeta[i] = &OutcomeAnalysis{Error: "no included study has a standardized result"}
			continue
		}
		studies, rep, err := p.AnalyzeReportFor(ctx, i, ReviewMetaPlan())
		if err != nil {
			x.OtherMeta[i] = &OutcomeAnalysis{Error: meta.ErrorMessage(err)}
			continue
		}
		x.OtherMeta[i] = &OutcomeAnalysis{Meta: &rep.Result, Studies: studies, Report: &rep, Plan: ReviewMetaPlan()}
	}
	if err := ctx.Err(); err != nil {
		return export.Summary{}, fmt.Errorf("evidence: exporting review %s: %w", p.Name, err)
	}
	return WriteProjectWorkbook(ctx, path, x, prov, opts)
}

// ReviewMetaPlan is the plan of the further analyses the review workbook
// reports beside the pooled model: Egger's and Begg's tests, trim and fill
// (estimator L0, metafor's default), leave-one-out, cumulative (in the
// standardized table's order) and influence analyses. A review's
// standardized table has no study-level covariates, so there are no
// subgroups or meta-regression.
func ReviewMetaPlan() meta.Plan {
	return meta.Plan{Egger: true, Begg: true, TrimFill: "L0", LeaveOneOut: true, Influence: true, Cumulative: true}
}

// AnalyzeReport runs the meta-analysis of the first outcome's
// standardized table as Analyze does, with the further analyses of plan
// (meta.Run): an analysis that cannot run with these studies (too few for
// a test, say) is listed in the report's Problems rather than failing the
// whole.
func (p *Project) AnalyzeReport(ctx context.Context, plan meta.Plan) ([]meta.Study, meta.Report, error) {
	return p.AnalyzeReportFor(ctx, 0, plan)
}

// AnalyzeReportFor runs outcome i's meta-analysis with the further
// analyses of plan, as AnalyzeReport does for the first outcome.
func (p *Project) AnalyzeReportFor(ctx context.Context, i int, plan meta.Plan) ([]meta.Study, meta.Report, error) {
	studies, _, err := p.AnalyzeOutcome(i)
	if err != nil {
		return studies, meta.Report{}, err
	}
	opts, err := p.MetaOptionsFor(i)
	if err != nil {
		return studies, meta.Report{}, fmt.Errorf("evidence: meta-analysis: %w", err)
	}
	rep, err := meta.Run(ctx, studies, opts, plan)
	if err != nil {
		return studies, meta.Report{}, fmt.Errorf("evidence: meta-analysis: %w", err)
	}
	return studies, rep, nil
}

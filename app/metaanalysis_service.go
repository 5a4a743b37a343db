package app

import (
	"context"
	"fmt"
	"strings"

	"github.com/clinsight/clinsight/app/meta"
	"github.com/clinsight/clinsight/export"
)

// MetaService is what a front end does with a meta-analysis: read a study
// table, run the pooled model with the planned analyses (subgroups,
// meta-regression, small-study effects, sensitivity), and write the report
// workbook. *Meta implements it; the desktop app's Meta-analysis screen and
// "clinsight meta" both go through it, so they give the same numbers.
type MetaService interface {
	// Load reads the studies of a CSV, TSV or .xlsx file. The plan's
	// covariate columns are added to spec.Covariates.
	Load(ctx context.Context, path string, spec meta.InputSpec, plan meta.Plan) ([]meta.Study, error)
	// Parse reads the studies of CSV text (pasted into the app).
	Parse(ctx context.Context, text string, spec meta.InputSpec, plan meta.Plan) ([]meta.Study, error)
	// Run pools the studies and runs the plan; analyses that cannot be run
	// are explained in the report's Problems.
	Run(ctx context.Context, studies []meta.Study, opts meta.Options, plan meta.Plan) (meta.Report, error)
	// Export writes the report workbook (atomically).
	Export(ctx context.Context, path string, studies []meta.Study, rep meta.Report, plan meta.Plan, prov export.Provenance) (export.Summary, error)
}

var _ MetaService = (*Meta)(nil)

// Meta is the meta-analysis service (ws.Meta()). It holds no state of its
// own; the workspace records its exports in the audit trail.
type Meta struct{ ws *Workspace }

// Meta returns the workspace's meta-analysis service.
func (ws *Workspace) Meta() *Meta { return &Meta{ws: ws} }

// withPlanColumns adds the plan's covariate columns to spec.
func withPlanColumns(spec meta.InputSpec, plan meta.Plan) meta.InputSpec {
	cols := append([]string(nil), spec.Covariates...)
	for _, c := range plan.Columns() {
		dup := false
		for _, have := range cols {
			dup = dup || strings.EqualFold(strings.TrimSpace(have), c)
		}
		if !dup {
			cols = append(cols, c)
		}
	}
	spec.Covariates = cols
	return spec
}

// Load implements MetaService.
func (*Meta) Load(ctx context.Context, path string, spec meta.InputSpec, plan meta.Plan) ([]meta.Study, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return meta.LoadFile(path, withPlanColumns(spec, plan))
}

// Parse implements MetaService.
func (*Meta) Parse(ctx context.Context, text string, spec meta.InputSpec, plan meta.Plan) ([]meta.Study, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return meta.LoadCSV(strings.NewReader(text), withPlanColumns(spec, plan))
}

// Run implements MetaService.
func (*Meta) Run(ctx context.Context, studies []meta.Study, opts meta.Options, plan meta.Plan) (meta.Report, error) {
	return meta.Run(ctx, studies, opts, plan)
}

// Export implements MetaService. The export is recorded in the audit
// trail before the workbook is put in place.
func (m *Meta) Export(ctx context.Context, path string, studies []meta.Study, rep meta.Report, plan meta.Plan, prov export.Provenance) (export.Summary, error) {
	opts := m.ws.ExportOptions(ctx, "", map[string]any{"what": "meta-analysis", "studies": len(studies), "data": prov.DataSource}, export.Options{})
	sum, err := meta.ExportReport(ctx, path, studies, rep, plan, prov, opts)
	if err != nil {
		return export.Summary{}, fmt.Errorf("writing the meta-analysis workbook: %w", err)
	}
	return sum, nil
}

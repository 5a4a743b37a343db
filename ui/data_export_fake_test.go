package ui

import (
	"context"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/export"
)

// ExportQuery of the fakes: the Data screen exports a statement through
// the service, which reads its rows again (app.Data.ExportQuery).

func (f *fakeData) ExportQuery(ctx context.Context, path string, src app.Source, query string, _ datasets.RunnerOptions, prov export.Provenance, opts app.ExportOptions) (app.QueryExport, error) {
	sum, err := f.Export(ctx, path, nil, prov, opts)
	return app.QueryExport{Summary: sum}, err
}

func (f *refusingData) ExportQuery(ctx context.Context, path string, src app.Source, query string, _ datasets.RunnerOptions, prov export.Provenance, opts app.ExportOptions) (app.QueryExport, error) {
	sum, err := f.Export(ctx, path, nil, prov, opts)
	return app.QueryExport{Summary: sum}, err
}

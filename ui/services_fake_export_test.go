package ui

import (
	"context"

	"github.com/clinsight/clinsight/app/impression"
	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/export"
)

// Export writes the workbook as the real service does, without a workspace
// (so without an audit record: app tests check the records).
func (fakeTrials) Export(ctx context.Context, path string, res *trials.Result, prov export.Provenance) (export.Summary, error) {
	return trials.ExportWorkbook(ctx, path, res, prov, export.Options{})
}

// Export writes the workbook as the real service does, without a workspace.
func (fakeImpressions) Export(ctx context.Context, path string, rows []impression.ExportRow, opts impression.Options, prov export.Provenance, progress func(int64)) (export.Summary, error) {
	return impression.ExportWorkbook(ctx, path, rows, opts, prov, export.Options{Progress: progress})
}

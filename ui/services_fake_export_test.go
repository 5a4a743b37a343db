package ui

import (
	"context"

	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/export"
)

// Export writes the workbook as the real service does, without a workspace
// (so without an audit record: app tests check the records).
func (fakeTrials) Export(ctx context.Context, path string, res *trials.Result, prov export.Provenance) (export.Summary, error) {
	return trials.ExportWorkbook(ctx, path, res, prov, export.Options{})
}

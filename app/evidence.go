package app

import (
	"context"
	"database/sql"

	"github.com/clinsight/clinsight/app/evidence"
)

// ImportLiterature imports literature files (PubMed XML, MEDLINE, RIS, CSV)
// into the literature corpus of a database (a source name or a path,
// created when missing), one file after another, each file atomic. each, if
// not nil, is called after every file. It returns the number of records in
// the corpus afterwards; on an error, the files imported before it are kept.
func (ws *Workspace) ImportLiterature(ctx context.Context, db string, files []string, opts evidence.ImportOptions, each func(evidence.ImportResult)) (int64, error) {
	if opts.Logger == nil {
		opts.Logger = ws.logger
	}
	return withWritableDB(ctx, ws, db, func(conn *sql.DB) (int64, error) {
		for _, file := range files {
			res, err := evidence.Import(ctx, conn, file, opts)
			if err != nil {
				return 0, err
			}
			if each != nil {
				each(res)
			}
		}
		return evidence.NewCorpus(conn).Count(ctx)
	})
}

package app

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/clinsight/clinsight/app/impression"
	"github.com/clinsight/clinsight/datasets"
)

// ImportReports imports radiology reports (Open-i CSV or XML, plain-text
// reports, a directory or archive of them) into the report corpus of a
// database (a source name or a path, created when missing), labelling each
// report. The import is atomic.
func (ws *Workspace) ImportReports(ctx context.Context, db, path string, opts impression.ImportOptions) (impression.ImportResult, error) {
	if opts.Logger == nil {
		opts.Logger = ws.logger
	}
	return withWritableDB(ctx, ws, db, func(conn *sql.DB) (impression.ImportResult, error) {
		return impression.Import(ctx, conn, path, opts)
	})
}

// ReportCorpus loads and indexes the report corpus of a database (a source
// name or a path), read-only.
func (ws *Workspace) ReportCorpus(ctx context.Context, db string) (*impression.Corpus, error) {
	dbPath, err := ws.ResolveDB(db)
	if err != nil {
		return nil, err
	}
	conn, err := datasets.OpenReadOnly(ctx, dbPath)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	c, err := impression.LoadCorpus(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", db, err)
	}
	return c, nil
}

// HasReportCorpus reports whether a database (a source name or a path)
// holds a report corpus; false when it cannot be opened.
func (ws *Workspace) HasReportCorpus(ctx context.Context, db string) bool {
	return ws.dbHolds(ctx, db, impression.HasCorpus)
}

// Impressions builds the impression pipeline over a corpus with the
// workspace's model client; opts.Model defaults to the configured chat
// model. With opts.NoLLM no model is contacted.
func (ws *Workspace) Impressions(corpus *impression.Corpus, opts impression.Options) (*impression.Pipeline, error) {
	if opts.Model == "" && !opts.NoLLM {
		opts.Model = ws.Config().Models.Chat
	}
	if opts.NoLLM {
		return impression.NewPipeline(corpus, nil, opts, ws.logger)
	}
	client, err := ws.ModelClient()
	if err != nil {
		return nil, err
	}
	return impression.NewPipeline(corpus, client, opts, ws.logger)
}

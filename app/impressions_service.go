package app

import (
	"context"
	"database/sql"
	"fmt"

	"github.com/clinsight/clinsight/app/impression"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/export"
)

// ImpressionsService is what a front end does with impression generation:
// list the sources holding a report corpus, load one, and build the
// pipeline that writes impressions from it. *Impressions implements it; UI
// tests substitute fakes.
type ImpressionsService interface {
	// Sources lists the data sources that hold a report corpus.
	Sources(ctx context.Context) []Source
	// Corpus loads and indexes the report corpus of a source.
	Corpus(ctx context.Context, src Source) (*impression.Corpus, error)
	// Generator builds the pipeline over a corpus; opts.Model defaults to
	// the configured chat model, and opts.NoLLM contacts no model.
	Generator(corpus *impression.Corpus, opts impression.Options) (ImpressionGenerator, error)
	// ChatModel is the configured chat model, for the provenance.
	ChatModel() string
	// Export writes impressions with their iterations and similar reports
	// to a workbook, recorded in the audit trail; progress (may be nil)
	// gets the rows written.
	Export(ctx context.Context, path string, rows []impression.ExportRow, opts impression.Options, prov export.Provenance, progress func(rows int64)) (export.Summary, error)
}

// ImpressionGenerator writes the impression of one report's findings:
// *impression.Pipeline implements it.
type ImpressionGenerator interface {
	Generate(ctx context.Context, req impression.Request, onEvent func(impression.Event)) (impression.Result, error)
}

var (
	_ ImpressionsService  = (*Impressions)(nil)
	_ ImpressionGenerator = (*impression.Pipeline)(nil)
)

// Impressions is the workspace's impression-generation service
// (ws.Impressions()).
type Impressions struct{ ws *Workspace }

// Impressions returns the workspace's impression-generation service.
func (ws *Workspace) Impressions() *Impressions { return &Impressions{ws: ws} }

// Export writes impressions to a workbook (impression.ExportWorkbook); the
// export is recorded in the audit trail before the workbook is put in
// place.
func (im *Impressions) Export(ctx context.Context, path string, rows []impression.ExportRow, opts impression.Options, prov export.Provenance, progress func(rows int64)) (export.Summary, error) {
	xopts := im.ws.ExportOptions(ctx, prov.DataSource, map[string]any{"what": "impressions", "impressions": len(rows)}, export.Options{Progress: progress})
	return impression.ExportWorkbook(ctx, path, rows, opts, prov, xopts)
}

// Import imports radiology reports (Open-i CSV or XML, plain-text reports,
// a directory or archive of them) into the report corpus of a source's
// database (created when missing), labelling each report. The import is
// atomic.
func (im *Impressions) Import(ctx context.Context, into Source, path string, opts impression.ImportOptions) (impression.ImportResult, error) {
	if opts.Logger == nil {
		opts.Logger = im.ws.logger
	}
	return withWritableSource(ctx, im.ws, into, func(conn *sql.DB) (impression.ImportResult, error) {
		return impression.Import(ctx, conn, path, opts)
	})
}

// Corpus loads and indexes the report corpus of a source, read-only.
func (im *Impressions) Corpus(ctx context.Context, src Source) (*impression.Corpus, error) {
	path, err := im.ws.file(src)
	if err != nil {
		return nil, err
	}
	conn, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	c, err := impression.LoadCorpus(ctx, conn)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src.Label(), err)
	}
	return c, nil
}

// Has reports whether a source holds a report corpus; false when it cannot
// be opened.
func (im *Impressions) Has(ctx context.Context, src Source) bool {
	return im.ws.holds(ctx, src, impression.HasCorpus)
}

// Sources lists the registered sources that hold a report corpus.
func (im *Impressions) Sources(ctx context.Context) []Source {
	return im.ws.sourcesWith(ctx, impression.HasCorpus)
}

// ChatModel is the configured chat model.
func (im *Impressions) ChatModel() string { return im.ws.Config().Models.Chat }

// Generator builds the impression pipeline over a corpus (see Pipeline).
func (im *Impressions) Generator(corpus *impression.Corpus, opts impression.Options) (ImpressionGenerator, error) {
	p, err := im.Pipeline(corpus, opts)
	if err != nil {
		return nil, err
	}
	return p, nil
}

// Pipeline builds the impression pipeline over a corpus with the
// workspace's model client; opts.Model defaults to the configured chat
// model. With opts.NoLLM no model is contacted.
func (im *Impressions) Pipeline(corpus *impression.Corpus, opts impression.Options) (*impression.Pipeline, error) {
	ws := im.ws
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

package app

import (
	"context"
	"errors"
	"fmt"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/app/omop"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/progress"
)

// CohortService is what a front end does with cohort discovery: the
// example questions of a source, and a conversation (a prepared pipeline)
// over it. *Cohort implements it; UI tests substitute fakes.
type CohortService interface {
	// Sources lists the data sources questions can be asked about.
	Sources() []Source
	// Examples returns up to n example questions from a source's table
	// documentation, and how many tables it has.
	Examples(ctx context.Context, src Source, n int) (CohortExamples, error)
	// Open prepares the pipeline of a source (schema, retrieval index,
	// read-only runner, models). Close it when done.
	Open(ctx context.Context, src Source, opts CohortOptions) (CohortSession, error)
	// Export writes an answer to an Excel workbook under the source's
	// disclosure policy (opts.Source; see ExportOptions).
	Export(ctx context.Context, path string, ans *cohort.Answer, opts ExportOptions) (export.Summary, error)
}

// CohortSession is a prepared cohort-discovery pipeline over one source:
// *cohort.Pipeline implements it.
type CohortSession interface {
	// Ask answers a question, calling on with its progress.
	Ask(ctx context.Context, req cohort.Request, on func(cohort.Event)) (*cohort.Answer, error)
	// Run re-runs an (edited) statement read-only after prev.
	Run(ctx context.Context, prev *cohort.Answer, query string) (*cohort.Answer, error)
	// Attrition counts the patients after each criterion of an answer
	// written as a chain of criteria, with the steps of off switched off
	// (numbers from 1), read-only and without asking the model
	// (cohort.Pipeline.Attrition; recorded in the audit trail).
	Attrition(ctx context.Context, ans *cohort.Answer, off []int, onProgress progress.Func) (*cohort.Attrition, error)
	// Examples returns up to n example questions.
	Examples(n int) []string
	Close() error

	// OMOP reports whether the source is an OMOP CDM database: its answers
	// carry concept sets (Answer.ConceptSets) the user may edit, then ask
	// again with Request.ConceptSets.
	OMOP() bool
	// SearchConcepts looks a term up in the source's vocabulary: the best
	// standard concepts (at most limit) with the persons each finds,
	// under the source's disclosure policy; domain may be "".
	SearchConcepts(ctx context.Context, text, domain string, limit int) ([]omop.Hit, error)
	// AddConcept adds a concept (with its descendants) to a set and
	// recomputes its ids and counts.
	AddConcept(ctx context.Context, set *omop.ConceptSet, id int64) error
	// ExcludeConcepts returns copies of the sets with each concept removed
	// (an item dropped, a descendant excluded).
	ExcludeConcepts(ctx context.Context, sets []omop.ConceptSet, ids []int64) ([]omop.ConceptSet, error)
}

var (
	_ CohortService = (*Cohort)(nil)
	_ CohortSession = (*cohort.Pipeline)(nil)
)

// CohortExamples are a source's example questions.
type CohortExamples struct {
	// Questions are the examples, taken in turn from each table's
	// documentation.
	Questions []string
	// Tables is how many tables the source has.
	Tables int
}

// CohortOptions adjusts the cohort-discovery pipeline of Cohort.Open.
// Zero values keep the workspace settings and the pipeline defaults.
type CohortOptions struct {
	// Model replaces the configured SQL and chat models (both stages use it).
	Model string
	// TopK is how many tables retrieval returns.
	TopK int
	// MaxAttempts bounds the statements tried per question.
	MaxAttempts int
	// Progress reports the preparation stages (catalog, retrieval index).
	Progress progress.Func
}

// Cohort is the workspace's cohort-discovery service (ws.Cohort()).
type Cohort struct{ ws *Workspace }

// Cohort returns the workspace's cohort-discovery service.
func (ws *Workspace) Cohort() *Cohort { return &Cohort{ws: ws} }

// Sources lists the registered data sources, resolved.
func (c *Cohort) Sources() []Source { return c.ws.Sources() }

// Examples returns up to n example questions of a source: the first
// example of each table's documentation, then the second, and so on (at
// most six rounds).
func (c *Cohort) Examples(ctx context.Context, src Source, n int) (CohortExamples, error) {
	cat, err := c.ws.Data().Catalog(ctx, src, false)
	if err != nil {
		return CohortExamples{}, err
	}
	ex := CohortExamples{Tables: len(cat.Tables)}
	for round := 0; len(ex.Questions) < n && round < 6; round++ {
		for _, t := range cat.Tables {
			if round < len(t.Doc.Examples) && len(ex.Questions) < n {
				ex.Questions = append(ex.Questions, t.Doc.Examples[round])
			}
		}
	}
	return ex, nil
}

// Index reads the catalog of a source and builds its retrieval index in
// the workspace vector store, embedding with the configured embedding
// model or the lexical fallback (ChooseEmbedder). It needs no chat model.
func (c *Cohort) Index(ctx context.Context, src Source, onProgress progress.Func) (*cohort.Index, error) {
	return c.index(ctx, src, onProgress, datasets.CatalogOptions{})
}

// index is Index with the catalog read with catOpts (see IndexWithoutProfile).
func (c *Cohort) index(ctx context.Context, src Source, onProgress progress.Func, catOpts datasets.CatalogOptions) (*cohort.Index, error) {
	if src.Kind == SourcePostgres {
		return c.indexPostgres(ctx, src, onProgress) // the catalog and values from the server
	}
	ws := c.ws
	path, err := ws.file(src)
	if err != nil {
		return nil, err
	}
	report := func(stage string, done int64) {
		onProgress.Send(progress.Report{Stage: stage, Done: done, Total: 2, Unit: "steps"})
	}
	conn, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	report("Reading the schema of "+path, 0)
	cat, err := datasets.ReadCatalog(ctx, conn, catOpts)
	if err != nil {
		return nil, fmt.Errorf("read catalog of %s: %w", path, err)
	}
	store, err := ws.VectorStore()
	if err != nil {
		return nil, err
	}
	choice := ws.ChooseEmbedder(ctx, nil)
	report("Indexing the table documentation ("+choice.Label+")", 1)
	ix, err := cohort.BuildIndex(ctx, cat, cohort.IndexOptions{
		Store: store, Embedder: choice.Embedder, EmbedderLabel: choice.Label, DBPath: path, DB: conn,
	})
	if err != nil {
		return nil, err
	}
	report("Ready", 2)
	ws.logger.Info("cohort index built", "db", path, "tables", len(cat.Tables), "embedder", choice.Label,
		"elapsed_ms", ix.BuildTime().Milliseconds())
	return ix, nil
}

// Open prepares the cohort-discovery pipeline of a source (see Pipeline).
func (c *Cohort) Open(ctx context.Context, src Source, opts CohortOptions) (CohortSession, error) {
	p, err := c.Pipeline(ctx, src, opts)
	if err != nil {
		return nil, err
	}
	return &auditedSession{Pipeline: p, ws: c.ws, src: src}, nil
}

// Pipeline builds the cohort-discovery pipeline of a source: its retrieval
// index, a read-only runner with the workspace's limits, and the
// workspace's model client and models. Close the pipeline when done.
func (c *Cohort) Pipeline(ctx context.Context, src Source, opts CohortOptions) (*cohort.Pipeline, error) {
	ws := c.ws
	runner, err := c.cohortDatabase(ctx, src) // SQLite's runner, or the source's PostgreSQL engine
	if err != nil {
		return nil, err
	}
	ix, err := c.Index(ctx, src, opts.Progress)
	if err != nil {
		runner.Close()
		return nil, err
	}
	cfg := ws.Config()
	client, err := ws.ModelClient()
	if err != nil {
		runner.Close()
		return nil, err
	}
	sqlModel, chatModel := cfg.Models.SQL, cfg.Models.Chat
	if opts.Model != "" {
		sqlModel, chatModel = opts.Model, opts.Model
	}
	name := runner.name
	concepts, closeConcepts, err := runner.concepts(ctx, ix.Catalog()) // OMOP sources only
	if err != nil {
		runner.Close()
		return nil, err
	}
	p, err := cohort.New(ctx, cohort.Config{
		Chat: client, Runner: runner, Dialect: runner.dialect, Index: ix, SQLModel: sqlModel, ChatModel: chatModel,
		TopK: opts.TopK, MaxAttempts: opts.MaxAttempts, DataSource: name, Logger: ws.logger,
		Concepts: concepts, OnClose: func() error { return errors.Join(runner.Close(), closeConcepts()) },
		Disclose: func(ctx context.Context, query string, res *datasets.Result) (cohort.Disclosed, error) {
			return ws.discloseCohort(ctx, src, query, res)
		},
		MinPersons: ws.minPersons(src),
		Profile:    src.Kind, // the patient column of the attrition counts
	})
	if err != nil {
		runner.Close()
		closeConcepts()
		return nil, err
	}
	return p, nil
}

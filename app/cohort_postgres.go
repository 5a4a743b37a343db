package app

import (
	"context"
	"fmt"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/app/omop"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/progress"
)

// cohortDB is the database a cohort pipeline reads, whatever its engine:
// the runner every statement of the model goes through, the engine's own
// reader for the index (datasets.Scanner), its dialect and its name.
type cohortDB struct {
	cohort.SQLRunner
	// scanner reads the values and keys for the retrieval index; nil for
	// SQLite, whose index opens a read-only connection of its own.
	scanner datasets.Scanner
	dialect datasets.Dialect
	// path is the SQLite file, "" for a server.
	path string
	// name names the database in answers and provenance.
	name string
	// close releases the runner (a PostgreSQL engine stays open for the
	// source: the Data service keeps one per source).
	close func() error
}

// Close releases the runner.
func (db cohortDB) Close() error { return db.close() }

// concepts returns the concept resolver of an OMOP CDM source (nil for
// other sources) and what closes it. On PostgreSQL the vocabulary is read
// through db.scanner, the source's engine (closed with the runner).
func (db cohortDB) concepts(ctx context.Context, cat *datasets.Catalog) (cohort.ConceptResolver, func() error, error) {
	if db.path != "" {
		return conceptResolver(ctx, db.path, cat)
	}
	if db.scanner == nil || !datasets.IsOMOP(cat) {
		return nil, func() error { return nil }, nil
	}
	r, err := omop.NewResolverOn(ctx, db.scanner)
	if err != nil {
		return nil, nil, err
	}
	return r, func() error { return nil }, nil
}

// cohortDatabase opens the database of a source for the cohort pipeline:
// SQLite's read-only runner over its file, or the PostgreSQL engine the
// workspace keeps open for the source (no second connection pool).
func (c *Cohort) cohortDatabase(ctx context.Context, src Source) (cohortDB, error) {
	ws := c.ws
	if src.Kind == SourcePostgres {
		eng, release, err := ws.postgresEngine(ctx, src, datasets.RunnerOptions{})
		if err != nil {
			return cohortDB{}, err
		}
		return cohortDB{SQLRunner: c.withholding(src, eng), scanner: eng, dialect: eng.Dialect(), name: src.Label() + " (" + eng.Describe() + ")",
			close: func() error { release(); return nil }}, nil
	}
	path, err := ws.file(src)
	if err != nil {
		return cohortDB{}, err
	}
	runner, err := datasets.NewRunner(ctx, path, ws.RunnerOptions())
	if err != nil {
		return cohortDB{}, err
	}
	name := path
	if src.Name != "" {
		name = src.Name + " (" + path + ")"
	} else if s, ok := ws.sourceByPath(path); ok {
		name = s.Name + " (" + path + ")"
	}
	return cohortDB{SQLRunner: c.withholding(src, runner), dialect: datasets.DialectSQLite, path: path, name: name, close: runner.Close}, nil
}

// indexPostgres reads the catalog of a PostgreSQL source from its engine
// (the curated profile of a known schema matched by name) and builds the
// retrieval index, its values and key analysis read through the engine in
// PostgreSQL's dialect.
func (c *Cohort) indexPostgres(ctx context.Context, src Source, onProgress progress.Func) (*cohort.Index, error) {
	ws := c.ws
	report := func(stage string, done int64) {
		onProgress.Send(progress.Report{Stage: stage, Done: done, Total: 2, Unit: "steps"})
	}
	eng, release, err := ws.postgresEngine(ctx, src, datasets.RunnerOptions{})
	if err != nil {
		return nil, err
	}
	defer release()
	report("Reading the schema of "+src.Label(), 0)
	cat, err := eng.Catalog(ctx, datasets.CatalogOptions{})
	if err != nil {
		return nil, fmt.Errorf("read catalog of %s: %w", src.Label(), err)
	}
	store, err := ws.VectorStore()
	if err != nil {
		return nil, err
	}
	choice := ws.ChooseEmbedder(ctx, nil)
	report("Indexing the table documentation ("+choice.Label+")", 1)
	// The collection is named after the source and its server address
	// (never a password), as a file's path names it for SQLite.
	key := "postgres:" + src.Name + ":" + src.Postgres.Describe()
	ix, err := cohort.BuildIndex(ctx, cat, cohort.IndexOptions{
		Store: store, Embedder: choice.Embedder, EmbedderLabel: choice.Label, DBPath: key, Scanner: eng,
	})
	if err != nil {
		return nil, err
	}
	report("Ready", 2)
	ws.logger.Info("cohort index built", "source", src.Name, "tables", len(cat.Tables), "embedder", choice.Label,
		"elapsed_ms", ix.BuildTime().Milliseconds())
	return ix, nil
}

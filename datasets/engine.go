package datasets

import (
	"context"
	"fmt"
)

// Dialect names the SQL dialect of an engine, for prompts and front ends.
type Dialect string

// The dialects of the engines.
const (
	DialectSQLite   Dialect = "sqlite"
	DialectPostgres Dialect = "postgres"
)

// Engine is a data source's database as the pipelines, the Data screen,
// `sql` and exports use it: read-only, within the limits of
// RunnerOptions, whatever the database behind it. The SQLite runner
// (SQLiteEngine) and the PostgreSQL engine (package datasets/postgres)
// implement it, with the same result and error types: *Result,
// *RefusedError, *QueryError, *TimeoutError.
type Engine interface {
	// Check validates a statement without running it: the read-only rules
	// and the database's own parsing (syntax, unknown tables and columns).
	Check(ctx context.Context, query string) error
	// Query checks and runs one reading statement.
	Query(ctx context.Context, query string) (*Result, error)
	// Catalog reads the structure and documentation of the tables.
	Catalog(ctx context.Context, opts CatalogOptions) (*Catalog, error)
	// Options returns the limits the engine runs statements under.
	Options() RunnerOptions
	// Dialect says which SQL the engine speaks.
	Dialect() Dialect
	// Describe names the database for people and provenance records,
	// never with a password.
	Describe() string
	// Close releases the engine; later calls fail.
	Close() error
}

// WithDefaults returns the options with every zero field set to its
// default, as the runners use them.
func (o RunnerOptions) WithDefaults() RunnerOptions { return o.withDefaults() }

// SQLiteEngine is the SQLite Runner as an Engine.
type SQLiteEngine struct {
	*Runner
}

var _ Engine = (*SQLiteEngine)(nil)

// NewSQLiteEngine opens the SQLite database at path as an Engine (see
// NewRunner).
func NewSQLiteEngine(ctx context.Context, path string, opts RunnerOptions) (*SQLiteEngine, error) {
	r, err := NewRunner(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	return &SQLiteEngine{Runner: r}, nil
}

// Catalog reads the database's catalog over a read-only connection of its
// own (see ReadCatalog).
func (e *SQLiteEngine) Catalog(ctx context.Context, opts CatalogOptions) (*Catalog, error) {
	db, err := OpenReadOnly(ctx, e.Path())
	if err != nil {
		return nil, err
	}
	defer db.Close()
	cat, err := ReadCatalog(ctx, db, opts)
	if err != nil {
		return nil, fmt.Errorf("read catalog of %s: %w", e.Path(), err)
	}
	return cat, nil
}

// Dialect returns DialectSQLite.
func (e *SQLiteEngine) Dialect() Dialect { return DialectSQLite }

// Describe names the database file.
func (e *SQLiteEngine) Describe() string { return "SQLite database " + e.Path() }

// DocumentCatalog documents every table of a catalog another engine built
// (structure, keys, row counts and samples filled in): from the curated
// documentation of the known schema it matches, matched by table name, or
// generated from its structure; and sets Profile and Profiles. ReadCatalog
// does this itself for SQLite.
func DocumentCatalog(cat *Catalog, opts CatalogOptions) error {
	var docs []schemaDoc
	if !opts.GeneratedDocsOnly {
		var err error
		if docs, err = loadSchemaDocs(); err != nil {
			return err
		}
	}
	applyDocs(cat, docs)
	return nil
}

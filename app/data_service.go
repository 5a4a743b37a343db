package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"strings"
	"time"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/postgres"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
)

// Workspace databases that imports from the desktop app write to.
const (
	// ImportedSourceName is the source holding CSV files imported in the app.
	ImportedSourceName = "imported"
	importedFile       = "imported.sqlite"
	// MIMICSourceName is the source holding a MIMIC-IV directory import.
	MIMICSourceName = "mimic-iv"
	mimicFile       = "mimic-iv.sqlite"
)

// DataService is what a front end (the desktop app, the command line) does
// with the workspace's data sources: list, add and remove them, import
// data, read their structure, browse and query them read-only, and export
// a result. *Data implements it; UI tests substitute fakes. Sources are
// resolved by the front end (Resolve) and handed over as a Source.
type DataService interface {
	// Sources lists the registered data sources, resolved.
	Sources() []Source
	// Resolve turns a source name or a database file's path into a Source.
	Resolve(nameOrPath string) (Source, error)
	// AddSQLite registers an existing SQLite file in place, read-only,
	// under name (its base name when empty).
	AddSQLite(ctx context.Context, file, name string) (Source, error)
	// Remove unregisters a data source; its file is kept.
	Remove(name string) error
	// AddPostgres registers a database on a PostgreSQL server, read in
	// place and read-only; the source holds no password.
	AddPostgres(name string, pg postgres.Source) (Source, error)
	// TestConnection connects to a PostgreSQL server as a source would and
	// reports the server version, user, database, what the role could
	// write, a warning if it could, and the statements for a read-only role.
	TestConnection(ctx context.Context, pg postgres.Source) (postgres.ConnectionReport, error)
	// Describe names a source's database for people and provenance
	// records, never with a password.
	Describe(src Source) string
	// ImportCSV and ImportMIMIC import into the workspace's own database
	// for that kind of data ("imported", "mimic-iv"), registered when new.
	ImportCSV(ctx context.Context, file string, opts datasets.CSVOptions) (datasets.ImportResult, error)
	ImportMIMIC(ctx context.Context, dir string, opts datasets.MIMICOptions) (datasets.MIMICResult, error)
	// Catalog reads a source's tables and columns (with sample values when
	// samples is set).
	Catalog(ctx context.Context, src Source, samples bool) (*datasets.Catalog, error)
	// Browse returns the first rows of a table (at most limit; the row cap
	// when limit ≤ 0).
	Browse(ctx context.Context, src Source, table string, limit int) (*datasets.Result, error)
	// Query runs one reading SQL statement with the workspace's limits,
	// or the non-zero fields of limits. An aggregate-only source's result
	// comes back small-cell suppressed, its patient-level results refused.
	Query(ctx context.Context, src Source, sql string, limits datasets.RunnerOptions) (*datasets.Result, error)
	// Export writes a result and its provenance to an Excel workbook,
	// under the source's disclosure policy (see ExportOptions): an
	// aggregate suppressed unless exact values are asked for, a
	// patient-level result only when confirmed (a *disclosure.PatientLevelError
	// names its identifier columns otherwise), its identifiers pseudonymised.
	Export(ctx context.Context, path string, res *datasets.Result, prov export.Provenance, opts ExportOptions) (export.Summary, error)
	// ExportQuery runs a statement again and exports its result as Export
	// does, reading the rows from the database as they are written when
	// the result is patient-level (see Data.ExportQuery).
	ExportQuery(ctx context.Context, path string, src Source, query string, limits datasets.RunnerOptions, prov export.Provenance, opts ExportOptions) (QueryExport, error)
	// Policy returns a source's disclosure policy; SetPolicy changes it.
	Policy(src Source) disclosure.Policy
	SetPolicy(name string, p disclosure.Policy) error
}

var _ DataService = (*Data)(nil)

// Data is the workspace's data-source service (ws.Data()).
type Data struct{ ws *Workspace }

// Data returns the workspace's data-source service.
func (ws *Workspace) Data() *Data { return &Data{ws: ws} }

// Sources lists the registered data sources, resolved.
func (d *Data) Sources() []Source { return d.ws.Sources() }

// Resolve turns a source name or a database file's path into a Source
// (see Workspace.Resolve).
func (d *Data) Resolve(nameOrPath string) (Source, error) { return d.ws.Resolve(nameOrPath) }

// AddSQLite registers an existing SQLite file as a data source, in place
// and read-only (see Workspace.RegisterSQLite).
func (d *Data) AddSQLite(ctx context.Context, file, name string) (Source, error) {
	return d.ws.RegisterSQLite(ctx, file, name)
}

// Remove unregisters a data source. The database file is not deleted.
func (d *Data) Remove(name string) error { return d.ws.RemoveSource(name) }

// AddPostgres registers a PostgreSQL database as a read-only data source
// (see Workspace.AddPostgres).
func (d *Data) AddPostgres(name string, pg postgres.Source) (Source, error) {
	return d.ws.AddPostgres(name, pg)
}

// TestConnection connects to a PostgreSQL source not yet registered and
// reports on the connection (see Workspace.TestSource).
func (d *Data) TestConnection(ctx context.Context, pg postgres.Source) (postgres.ConnectionReport, error) {
	if err := pg.Validate(); err != nil {
		return postgres.ConnectionReport{}, err
	}
	rep, err := postgres.CheckSource(ctx, pg, postgres.Options{Limits: d.ws.Config().RunnerOptions(), Logger: d.ws.logger})
	if err != nil {
		return rep, fmt.Errorf("test the connection to %s: %w", pg.Describe(), err)
	}
	return rep, nil
}

// Query runs one reading SQL statement on a source through the read-only
// runner, with the workspace's limits unless limits overrides them (zero
// fields keep the workspace's values), under the source's disclosure
// policy (see QueryDisclosed).
func (d *Data) Query(ctx context.Context, src Source, sql string, limits datasets.RunnerOptions) (*datasets.Result, error) {
	out, err := d.QueryDisclosed(ctx, src, sql, limits)
	return out.Result, err
}

// query runs one reading SQL statement with no disclosure control,
// through the source's engine (SQLite or PostgreSQL alike).
func (d *Data) query(ctx context.Context, src Source, sql string, limits datasets.RunnerOptions) (*datasets.Result, error) {
	eng, release, err := d.engine(ctx, src, limits)
	if err != nil {
		return nil, err
	}
	defer release()
	res, err := eng.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	d.ws.logger.Info("query", "source", src.Label(), "rows", len(res.Rows), "truncated", res.Truncated, "elapsed_ms", res.Elapsed.Milliseconds())
	return res, nil
}

// Catalog reads the structure and documentation of a source, read-only.
// Without samples it only lists tables, columns and row counts, which is
// fast on any size.
func (d *Data) Catalog(ctx context.Context, src Source, samples bool) (*datasets.Catalog, error) {
	opts := datasets.CatalogOptions{}
	if !samples {
		opts.MaxDistinct = -1
	}
	eng, release, err := d.engine(ctx, src, datasets.RunnerOptions{})
	if err != nil {
		return nil, err
	}
	defer release()
	cat, err := eng.Catalog(ctx, opts)
	if err != nil && src.Kind == SourcePostgres {
		return nil, fmt.Errorf("read catalog of %s: %w", src.Label(), err)
	}
	return cat, err // the SQLite engine names its file
}

// Browse returns the first rows of a table (at most limit; the workspace
// row cap when limit ≤ 0), through the read-only runner.
func (d *Data) Browse(ctx context.Context, src Source, table string, limit int) (*datasets.Result, error) {
	if table == "" {
		return nil, errors.New("no table selected")
	}
	if d.Policy(src).AggregateOnly() {
		return nil, &disclosure.AggregateOnlyError{Source: src.Name, Why: "its tables cannot be browsed"}
	}
	opts := datasets.RunnerOptions{}
	if limit > 0 {
		opts.MaxRows = limit
	}
	name := datasets.QuoteIdent(table)
	if schema, rel, ok := strings.Cut(table, "."); ok && src.Kind == SourcePostgres {
		name = datasets.QuoteIdent(schema) + "." + datasets.QuoteIdent(rel) // "schema.name" of a catalog
	}
	return d.Query(ctx, src, "SELECT * FROM "+name, opts)
}

// Describe names a source's database for people and provenance records:
// its file for SQLite; for PostgreSQL the server, version, database, user
// and schemas read (never a password), or the source's stored address when
// the server cannot be reached (within 3 seconds).
func (d *Data) Describe(src Source) string {
	if src.Kind != SourcePostgres || src.Postgres == nil {
		return src.Path
	}
	// The source's engine (opened here when no call has yet: provenance
	// is often written before the query runs) names the server's version.
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	if eng, release, err := d.ws.postgresEngine(ctx, src, datasets.RunnerOptions{}); err == nil {
		defer release()
		return eng.Describe()
	}
	desc := "PostgreSQL " + src.Postgres.Describe()
	if len(src.Postgres.Schemas) > 0 {
		desc += ", schemas " + strings.Join(src.Postgres.Schemas, ", ")
	}
	return desc
}

// ImportCSVInto imports a CSV or CSV.gz file into a source's database
// (created when missing) as one table.
func (d *Data) ImportCSVInto(ctx context.Context, into Source, file string, opts datasets.CSVOptions) (datasets.ImportResult, error) {
	if opts.Logger == nil {
		opts.Logger = d.ws.logger
	}
	return withWritableSource(ctx, d.ws, into, func(conn *sql.DB) (datasets.ImportResult, error) {
		return datasets.ImportCSV(ctx, conn, file, opts)
	})
}

// ImportMIMICInto imports a MIMIC-IV directory (hosp/ and icu/) into a
// source's database (created when missing).
func (d *Data) ImportMIMICInto(ctx context.Context, into Source, dir string, opts datasets.MIMICOptions) (datasets.MIMICResult, error) {
	if opts.Logger == nil {
		opts.Logger = d.ws.logger
	}
	return withWritableSource(ctx, d.ws, into, func(conn *sql.DB) (datasets.MIMICResult, error) {
		return datasets.ImportMIMIC(ctx, conn, dir, opts)
	})
}

// ImportCSV imports a CSV file into the workspace's "imported" database
// and registers it as a source. The table is named after the file unless
// opts.Table is set.
func (d *Data) ImportCSV(ctx context.Context, file string, opts datasets.CSVOptions) (datasets.ImportResult, error) {
	path := filepath.Join(d.ws.DataDir(), importedFile)
	res, err := d.ImportCSVInto(ctx, Source{Path: path}, file, opts)
	if err != nil {
		return res, err
	}
	if _, ok := d.ws.Source(ImportedSourceName); !ok {
		if _, err := d.ws.RegisterImported(ImportedSourceName, path, SourceCSV, "CSV files imported in Clinsight"); err != nil {
			return res, err
		}
	}
	return res, nil
}

// ImportMIMIC imports a MIMIC-IV directory into the workspace's "mimic-iv"
// database and registers it as a source.
func (d *Data) ImportMIMIC(ctx context.Context, dir string, opts datasets.MIMICOptions) (datasets.MIMICResult, error) {
	path := filepath.Join(d.ws.DataDir(), mimicFile)
	res, err := d.ImportMIMICInto(ctx, Source{Path: path}, dir, opts)
	if len(res.Tables) > 0 {
		if _, ok := d.ws.Source(MIMICSourceName); !ok {
			desc := "MIMIC-IV imported from " + filepath.Base(filepath.Clean(dir))
			if _, rerr := d.ws.RegisterImported(MIMICSourceName, path, SourceMIMICIV, desc); rerr != nil && err == nil {
				err = rerr
			}
		}
	}
	return res, err
}

// Export writes a query result and its provenance to an .xlsx workbook
// (temp file + rename: an error or cancel leaves no file) under the
// source's disclosure policy (see ExportOptions and planExport). The
// export is recorded in the audit trail before the workbook is renamed
// into place: if the record cannot be written, no file is left.
func (d *Data) Export(ctx context.Context, path string, res *datasets.Result, prov export.Provenance, opts ExportOptions) (export.Summary, error) {
	if res == nil {
		return export.Summary{}, errors.New("there is no result to export")
	}
	if opts.Query == "" {
		opts.Query = prov.Query
	}
	plan, err := d.planExport(ctx, res, opts)
	if err != nil {
		return export.Summary{}, err
	}
	table := export.Table{Name: "Results", Columns: plan.result.ColumnNames(), Rows: resultRows(plan.result)}
	if n := res.Notice(); n != "" {
		prov.Add("Truncated", "yes: "+n)
	}
	prov.Extra = append(prov.Extra, plan.prov...)
	return export.WriteWorkbook(ctx, path, []export.Table{table}, prov, export.Options{Progress: opts.Progress,
		BeforeCommit: d.exportRecorder(ctx, opts.Source, path, plan.details)})
}

// resultRows iterates a result's rows for the exporter.
func resultRows(res *datasets.Result) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		for _, row := range res.Rows {
			if !yield(row, nil) {
				return
			}
		}
	}
}

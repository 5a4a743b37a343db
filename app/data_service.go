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
	"github.com/clinsight/clinsight/export"
)

// DemoSourceName is the name of the demo data source.
const DemoSourceName = "demo"

// demoFile is the demo database's file name in the data directory.
const demoFile = "demo.sqlite"

// Query runs one reading SQL statement on a database (a source name or a
// path) through the read-only runner, with the workspace's limits unless
// limits overrides them (zero fields keep the workspace's values).
func (ws *Workspace) Query(ctx context.Context, db, sql string, limits datasets.RunnerOptions) (*datasets.Result, error) {
	path, err := ws.ResolveDB(db)
	if err != nil {
		return nil, err
	}
	opts := ws.Config().RunnerOptions()
	if limits.Timeout > 0 {
		opts.Timeout = limits.Timeout
	}
	if limits.MaxRows > 0 {
		opts.MaxRows = limits.MaxRows
	}
	r, err := datasets.NewRunner(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	res, err := r.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	ws.logger.Info("query", "db", path, "rows", len(res.Rows), "truncated", res.Truncated, "elapsed_ms", res.Elapsed.Milliseconds())
	return res, nil
}

// Catalog reads the structure and documentation of a database (a source
// name or a path), read-only. Without samples it only lists tables,
// columns and row counts, which is fast on any size.
func (ws *Workspace) Catalog(ctx context.Context, db string, samples bool) (*datasets.Catalog, error) {
	path, err := ws.ResolveDB(db)
	if err != nil {
		return nil, err
	}
	conn, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	opts := datasets.CatalogOptions{}
	if !samples {
		opts.MaxDistinct = -1
	}
	cat, err := datasets.ReadCatalog(ctx, conn, opts)
	if err != nil {
		return nil, fmt.Errorf("read catalog of %s: %w", path, err)
	}
	return cat, nil
}

// ImportCSV imports a CSV or CSV.gz file into a database (a source name or
// a path, created when missing) as one table.
func (ws *Workspace) ImportCSV(ctx context.Context, db, file string, opts datasets.CSVOptions) (datasets.ImportResult, error) {
	if opts.Logger == nil {
		opts.Logger = ws.logger
	}
	return withWritableDB(ctx, ws, db, func(conn *sql.DB) (datasets.ImportResult, error) {
		return datasets.ImportCSV(ctx, conn, file, opts)
	})
}

// dbHolds opens a database (a source name or a path) read-only and
// reports what holds says of it; false when it cannot be opened or holds
// fails.
func (ws *Workspace) dbHolds(ctx context.Context, db string, holds func(context.Context, *sql.DB) (bool, error)) bool {
	path, err := ws.ResolveDB(db)
	if err != nil {
		return false
	}
	conn, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		return false
	}
	defer conn.Close()
	ok, err := holds(ctx, conn)
	return err == nil && ok
}

// sourcesHolding lists the registered sources for which holds is true.
func (ws *Workspace) sourcesHolding(ctx context.Context, holds func(context.Context, *sql.DB) (bool, error)) []string {
	var out []string
	for _, s := range ws.Config().Sources {
		if ws.dbHolds(ctx, s.Name, holds) {
			out = append(out, s.Name)
		}
	}
	return out
}

// ImportMIMIC imports a MIMIC-IV directory (hosp/ and icu/) into a database
// (a source name or a path, created when missing).
func (ws *Workspace) ImportMIMIC(ctx context.Context, db, dir string, opts datasets.MIMICOptions) (datasets.MIMICResult, error) {
	if opts.Logger == nil {
		opts.Logger = ws.logger
	}
	return withWritableDB(ctx, ws, db, func(conn *sql.DB) (datasets.MIMICResult, error) {
		return datasets.ImportMIMIC(ctx, conn, dir, opts)
	})
}

// RegisterSQLite registers an existing SQLite file as a data source, in
// place and read-only: Clinsight never writes to it. The name defaults to
// the file's base name.
func (ws *Workspace) RegisterSQLite(ctx context.Context, file, name string) (Source, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return Source{}, fmt.Errorf("register %s: %w", file, err)
	}
	info, err := datasets.InspectSQLite(ctx, abs)
	if err != nil {
		return Source{}, err
	}
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
	}
	src := Source{
		Name:        name,
		Path:        abs,
		Kind:        SourceSQLite,
		Description: fmt.Sprintf("existing SQLite file, %d tables, read-only", len(info.Tables)),
		Added:       time.Now().UTC(),
	}
	if err := ws.AddSource(src); err != nil {
		return Source{}, err
	}
	return src, nil
}

// RegisterImported registers a database the importers wrote as a source.
func (ws *Workspace) RegisterImported(name, path, kind, description string) (Source, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Source{}, err
	}
	if rel, err := filepath.Rel(ws.DataDir(), abs); err == nil && !strings.HasPrefix(rel, "..") {
		abs = rel // owned by the workspace: keep it relocatable
	}
	src := Source{Name: name, Path: abs, Kind: kind, Description: description, Added: time.Now().UTC()}
	if err := ws.AddSource(src); err != nil {
		return Source{}, err
	}
	return src, nil
}

// DemoPath returns where the demo database lives in this workspace.
func (ws *Workspace) DemoPath() string { return filepath.Join(ws.DataDir(), demoFile) }

// HasDemo reports whether the demo database exists, is registered and was
// made by this build's demo layout.
//
// A demo made by an older build, without the tables of pipelines added since
// (its recorded layout differs from demoLayout), does not count: InitDemo
// recreates it.
func (ws *Workspace) HasDemo() bool {
	if _, registered := ws.Source(DemoSourceName); !registered {
		return false
	}
	ctx := context.Background()
	db, err := datasets.OpenReadOnly(ctx, ws.DemoPath())
	if err != nil {
		return false
	}
	defer db.Close()
	var layout string
	err = db.QueryRowContext(ctx, "SELECT value FROM clinsight_metadata WHERE key = ?", demoLayoutKey).Scan(&layout)
	return err == nil && layout == demoLayout
}

// demoLayout versions what InitDemo puts into the demo database; raise it
// when a pipeline adds demo tables, so existing demos are recreated.
const (
	demoLayout    = "3"
	demoLayoutKey = "clinsight_demo_layout"
)

// ErrDemoExists is returned by InitDemo when the demo is already there.
var ErrDemoExists = errors.New("the demo data already exists (use --force to recreate it)")

// ExportResult writes a query result and its provenance to an .xlsx
// workbook (temp file + rename: an error or cancel leaves no file).
func ExportResult(ctx context.Context, path string, res *datasets.Result, prov export.Provenance, progress func(rows int64)) (export.Summary, error) {
	table := export.Table{Name: "Results", Columns: res.ColumnNames(), Rows: resultRows(res)}
	if n := res.Notice(); n != "" {
		prov.Add("Truncated", "yes: "+n)
	}
	return export.WriteWorkbook(ctx, path, []export.Table{table}, prov, export.Options{Progress: progress})
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

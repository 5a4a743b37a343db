package datasets

import (
	"bufio"
	"context"
	"database/sql"
	_ "embed" // the MIMIC-IV v2.2 schema
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/clinsight/clinsight/internal/progress"
)

// mimicIV22Schema holds the MIMIC-IV v2.2 table and column types; see the
// file's header for its source and format.
//
//go:embed import_mimic_iv_2_2.sql
var mimicIV22Schema string

// mimicModules returns the MIMIC-IV module folders ImportMIMIC reads, in order.
func mimicModules() []string { return []string{"hosp", "icu"} }

// mimicIndexColumns returns the columns indexed in every MIMIC-IV table that
// has them.
func mimicIndexColumns() []string { return []string{"subject_id", "hadm_id", "stay_id", "itemid"} }

// ErrNotMIMIC is returned (wrapped) when a directory does not have the
// MIMIC-IV layout ImportMIMIC expects.
var ErrNotMIMIC = errors.New("not a MIMIC-IV directory")

// MIMICOptions tunes ImportMIMIC.
type MIMICOptions struct {
	// Replace replaces tables that already exist (each inside its own
	// transaction); without it an existing table stops the import.
	Replace bool
	// Progress receives the bytes read over all the files, with Total their
	// summed size and Stage the table being imported.
	Progress progress.Func
	// Logger receives a line per table imported; nil logs nothing.
	Logger *slog.Logger
}

// MIMICTable reports one imported MIMIC-IV table.
type MIMICTable struct {
	// Module is the MIMIC-IV module folder the file came from: "hosp" or "icu".
	Module string
	// ImportResult is the table's import report (rows, columns, duration...).
	ImportResult
}

// MIMICResult reports a MIMIC-IV import.
type MIMICResult struct {
	// Dir is the MIMIC-IV directory imported.
	Dir string
	// Tables are the tables imported, in import order (hosp then icu, by name).
	Tables []MIMICTable
	// Missing lists the MIMIC-IV v2.2 tables of the modules found whose file
	// was absent, as "module/table" (the public demo lacks icu/chartevents).
	Missing []string
	// Rows is the number of rows imported over all tables.
	Rows int64
	// Bytes is the number of file bytes read over all tables.
	Bytes int64
	// Duration is the wall time of the whole import.
	Duration time.Duration
}

// mimicFile is one table file found in a MIMIC-IV directory.
type mimicFile struct {
	module, table, path string
	size                int64
}

// ImportMIMIC imports a MIMIC-IV directory (the hosp/ and icu/ folders of
// the PhysioNet release, with .csv.gz or .csv files) into db, one table per
// file, named as MIMIC-IV names them (patients, labevents, d_icd_diagnoses,
// ...). Tables of the MIMIC-IV v2.2 schema get its column types (INTEGER,
// REAL, TEXT, TIMESTAMP, DATE; see import_mimic_iv_2_2.sql); other tables and
// columns get inferred types. Columns subject_id, hadm_id, stay_id and itemid
// are indexed. Each table is imported atomically by ImportCSV; the import
// stops at the first failure (or cancellation), keeping the tables already
// imported, and returns them in the result together with the error.
func ImportMIMIC(ctx context.Context, db *sql.DB, dir string, opts MIMICOptions) (MIMICResult, error) {
	start := time.Now()
	res := MIMICResult{Dir: dir}
	files, modules, err := findMIMICFiles(dir)
	if err != nil {
		return res, err
	}
	schema, err := parseMIMICSchema(mimicIV22Schema)
	if err != nil {
		return res, fmt.Errorf("embedded MIMIC-IV schema: %w", err)
	}
	have := map[string]bool{}
	var total int64
	for _, f := range files {
		have[f.module+"/"+f.table] = true
		total += f.size
	}
	for _, t := range schema {
		if slices.Contains(modules, t.module) && !have[t.module+"/"+t.name] {
			res.Missing = append(res.Missing, t.module+"/"+t.name)
		}
	}
	slices.Sort(res.Missing)

	var done int64
	for _, f := range files {
		copts := CSVOptions{
			Table:      f.table,
			Replace:    opts.Replace,
			Logger:     opts.Logger,
			indexHints: mimicIndexColumns(),
		}
		if t, ok := schema[f.table]; ok && t.module == f.module {
			copts.typeHints = make(map[string]string, len(t.cols))
			for _, c := range t.cols {
				copts.typeHints[c.name] = c.sqliteType
			}
		}
		copts.Progress = fileOfMany(opts.Progress, done, total)
		r, err := ImportCSV(ctx, db, f.path, copts)
		if err != nil {
			res.Duration = time.Since(start)
			return res, fmt.Errorf("MIMIC-IV %s/%s: %w", f.module, f.table, err)
		}
		done += f.size
		res.Tables = append(res.Tables, MIMICTable{Module: f.module, ImportResult: r})
		res.Rows += r.Rows
		res.Bytes += r.Bytes
	}
	res.Duration = time.Since(start)
	if opts.Logger != nil {
		opts.Logger.Info("imported MIMIC-IV", "dir", dir, "tables", len(res.Tables),
			"rows", res.Rows, "missing", res.Missing, "duration", res.Duration)
	}
	return res, nil
}

// findMIMICFiles lists the table files of a MIMIC-IV directory and the
// module folders present, or explains which layout was expected.
func findMIMICFiles(dir string) ([]mimicFile, []string, error) {
	expected := fmt.Sprintf("expected a folder holding hosp/ and/or icu/ with MIMIC-IV .csv.gz or .csv files (for example %s)",
		filepath.Join(dir, "hosp", "patients.csv.gz"))
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, fmt.Errorf("MIMIC-IV directory %s not found: %w", dir, err)
	case err != nil:
		return nil, nil, fmt.Errorf("MIMIC-IV directory %s: %w", dir, err)
	case !fi.IsDir():
		return nil, nil, fmt.Errorf("%s is a file: %w; %s", dir, ErrNotMIMIC, expected)
	}
	var files []mimicFile
	var modules []string
	seen := map[string]string{}
	for _, m := range mimicModules() {
		mdir := filepath.Join(dir, m)
		if fi, err := os.Stat(mdir); err != nil || !fi.IsDir() {
			continue
		}
		modules = append(modules, m)
		entries, err := os.ReadDir(mdir)
		if err != nil {
			return nil, nil, fmt.Errorf("read %s: %w", mdir, err)
		}
		byTable := map[string]mimicFile{}
		for _, e := range entries {
			name := strings.ToLower(e.Name())
			if e.IsDir() || !(strings.HasSuffix(name, ".csv") || strings.HasSuffix(name, ".csv.gz")) {
				continue
			}
			info, err := e.Info()
			if err != nil {
				return nil, nil, fmt.Errorf("read %s: %w", mdir, err)
			}
			f := mimicFile{module: m, table: TableNameFromFile(e.Name()), path: filepath.Join(mdir, e.Name()), size: info.Size()}
			// Prefer the official .csv.gz when a decompressed copy sits beside it.
			if old, ok := byTable[f.table]; ok && strings.HasSuffix(strings.ToLower(old.path), ".gz") {
				continue
			}
			byTable[f.table] = f
		}
		if len(byTable) == 0 {
			return nil, nil, fmt.Errorf("%s has no .csv.gz or .csv files: %w; %s", mdir, ErrNotMIMIC, expected)
		}
		tables := make([]string, 0, len(byTable))
		for t := range byTable {
			tables = append(tables, t)
		}
		slices.Sort(tables)
		for _, t := range tables {
			if other, ok := seen[t]; ok {
				return nil, nil, fmt.Errorf("table %s found in both %s/ and %s/: %w", t, other, m, ErrNotMIMIC)
			}
			seen[t] = m
			files = append(files, byTable[t])
		}
	}
	if len(modules) == 0 {
		hint := ""
		if _, err := os.Stat(filepath.Join(dir, "patients.csv.gz")); err == nil {
			hint = " (this looks like the hosp folder itself: choose its parent)"
		}
		return nil, nil, fmt.Errorf("%s has no hosp/ or icu/ folder%s: %w; %s", dir, hint, ErrNotMIMIC, expected)
	}
	return files, modules, nil
}

// mimicSchemaTable is a table of the embedded MIMIC-IV schema.
type mimicSchemaTable struct {
	module, name string
	cols         []mimicSchemaColumn
}

// mimicSchemaColumn is a column with its PostgreSQL and SQLite types.
type mimicSchemaColumn struct {
	name, pgType, sqliteType string
}

// parseMIMICSchema reads the embedded schema file (format described in it)
// into tables keyed by name.
func parseMIMICSchema(src string) (map[string]mimicSchemaTable, error) {
	tables := map[string]mimicSchemaTable{}
	var cur *mimicSchemaTable
	sc := bufio.NewScanner(strings.NewReader(src))
	lineNo := 0
	for sc.Scan() {
		lineNo++
		line := strings.TrimSpace(sc.Text())
		switch {
		case line == "" || strings.HasPrefix(line, "--"):
		case strings.HasPrefix(line, "CREATE TABLE "):
			if cur != nil {
				return nil, fmt.Errorf("line %d: CREATE TABLE inside table %s", lineNo, cur.name)
			}
			qual, ok := strings.CutSuffix(strings.TrimPrefix(line, "CREATE TABLE "), " (")
			module, name, dotted := strings.Cut(qual, ".")
			if !ok || !dotted || module == "" || name == "" {
				return nil, fmt.Errorf("line %d: want \"CREATE TABLE module.name (\", got %q", lineNo, line)
			}
			if _, dup := tables[name]; dup {
				return nil, fmt.Errorf("line %d: table %s declared twice", lineNo, name)
			}
			cur = &mimicSchemaTable{module: module, name: name}
		case line == ");":
			if cur == nil || len(cur.cols) == 0 {
				return nil, fmt.Errorf("line %d: unexpected %q", lineNo, line)
			}
			tables[cur.name] = *cur
			cur = nil
		default:
			if cur == nil {
				return nil, fmt.Errorf("line %d: column outside a table: %q", lineNo, line)
			}
			name, pg, ok := strings.Cut(strings.TrimSuffix(line, ","), " ")
			if !ok {
				return nil, fmt.Errorf("line %d: want \"column TYPE\", got %q", lineNo, line)
			}
			st, err := sqliteTypeFromPostgres(pg)
			if err != nil {
				return nil, fmt.Errorf("line %d: column %s: %w", lineNo, name, err)
			}
			cur.cols = append(cur.cols, mimicSchemaColumn{name: name, pgType: pg, sqliteType: st})
		}
	}
	if cur != nil {
		return nil, fmt.Errorf("table %s not closed", cur.name)
	}
	return tables, sc.Err()
}

// sqliteTypeFromPostgres maps a PostgreSQL column type of the MIMIC-IV build
// script to the declared type used in SQLite.
func sqliteTypeFromPostgres(pg string) (string, error) {
	base, _, _ := strings.Cut(strings.ToUpper(strings.TrimSpace(pg)), "(")
	switch strings.TrimSpace(base) {
	case "INTEGER", "INT", "SMALLINT", "BIGINT":
		return TypeInteger, nil
	case "NUMERIC", "DECIMAL", "DOUBLE PRECISION", "REAL", "FLOAT":
		return TypeReal, nil
	case "VARCHAR", "CHAR", "CHARACTER", "CHARACTER VARYING", "TEXT":
		return TypeText, nil
	case "TIMESTAMP":
		return "TIMESTAMP", nil
	case "DATE":
		return "DATE", nil
	}
	return "", fmt.Errorf("unknown PostgreSQL type %q", pg)
}

package datasets

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/clinsight/clinsight/internal/progress"
)

//go:generate go run ./internal/omopspec/omopgen -spec ../../shared/data/omop-cdm-5.4/spec -out .

// OMOPProfile is the name of the OMOP CDM 5.4 schema profile
// (docs/omop-cdm-5.4.yaml), Catalog.Profile of an OMOP database.
const OMOPProfile = "omop-cdm-5.4"

// maxOMOPRecordBytes bounds one CSV record of an OMOP file: the longest
// CDM texts (note_text, cohort_definition_syntax) are clinical notes and
// definitions far below it.
const maxOMOPRecordBytes = 16 << 20

// ErrNotOMOP is returned (wrapped) when a folder holds no file named after
// an OMOP CDM table.
var ErrNotOMOP = errors.New("not an OMOP CDM folder")

// omopTableSpec is one table of the OMOP CDM (omop_cdm54_gen.go).
type omopTableSpec struct {
	name     string
	required bool
	columns  []omopColumnSpec
}

// omopColumnSpec is one column of an OMOP CDM table.
type omopColumnSpec struct {
	name, typ           string
	notNull, primaryKey bool
}

// omopTable returns the CDM table of that name (lower case).
func omopTable(name string) (*omopTableSpec, bool) {
	for i := range omopCDM54Tables {
		if omopCDM54Tables[i].name == name {
			return &omopCDM54Tables[i], true
		}
	}
	return nil, false
}

// omopIndexColumns returns the columns the importer indexes in a CDM table:
// person_id, every *_concept_id, the concept keys of the vocabulary tables,
// and the event dates (*_date, except end dates and vocabulary validity).
func omopIndexColumns(t *omopTableSpec) []string {
	var out []string
	for _, c := range t.columns {
		n := c.name
		switch {
		case n == "person_id", strings.HasSuffix(n, "_concept_id"):
		case t.name == "concept" && (n == "concept_id" || n == "concept_code"),
			t.name == "concept_relationship" && (n == "concept_id_1" || n == "concept_id_2"),
			t.name == "concept_synonym" && n == "concept_id":
		case strings.HasSuffix(n, "_date") && !strings.HasSuffix(n, "_end_date") && !strings.HasPrefix(n, "valid_"):
		default:
			continue
		}
		out = append(out, n)
	}
	return out
}

// OMOPOptions tunes ImportOMOP.
type OMOPOptions struct {
	// Replace replaces tables that already exist (each inside its own
	// transaction); without it an existing table stops the import.
	Replace bool
	// Progress receives the bytes read over all the files, with Total their
	// summed size and Stage the table being imported.
	Progress progress.Func
	// Logger receives a line per table imported; nil logs nothing.
	Logger *slog.Logger
}

// OMOPResult reports an OMOP CDM import.
type OMOPResult struct {
	// Dir is the folder imported.
	Dir string
	// Tables are the tables imported, in the order of the official DDL.
	Tables []ImportResult
	// Missing lists the CDM tables the folder has no file for; they are
	// created empty (unless the database has them already), so queries
	// naming them run.
	Missing []string
	// Skipped lists the files of the folder that are not CDM tables.
	Skipped []string
	// Concepts is the number of concept names and synonyms in the concept
	// search index (see OMOPConceptIndex); 0 without a concept table.
	Concepts int64
	// Rows is the number of rows imported over all tables.
	Rows int64
	// Bytes is the number of file bytes read over all tables.
	Bytes int64
	// Duration is the wall time of the whole import.
	Duration time.Duration
}

// omopFile is one CDM table file found in a folder.
type omopFile struct {
	table *omopTableSpec
	path  string
	size  int64
	comma rune
}

// ImportOMOP imports an OMOP CDM 5.4 instance from a folder of per-table
// CSV files (the OHDSI export layout: PERSON.csv, CONDITION_OCCURRENCE.csv,
// CONCEPT.csv ...; names case-insensitive; .csv, .csv.gz or tab-separated
// vocabulary files as Athena delivers them) into db. Tables and columns get
// the types of the official CDM 5.4 DDL (datetimes kept as ISO text, see
// datasets/internal/omopspec); person_id, *_concept_id and event dates are
// indexed. Each table is imported atomically by ImportCSV (one transaction
// per table; records are bounded to 16 MB); the import stops at the first
// failure or at the cancellation of ctx, keeping the tables already
// imported, which the result lists beside the error. CDM tables without a
// file are created empty; finally the concept search index is built (see
// BuildOMOPConceptIndex).
func ImportOMOP(ctx context.Context, db *sql.DB, dir string, opts OMOPOptions) (OMOPResult, error) {
	start := time.Now()
	res := OMOPResult{Dir: dir}
	files, skipped, err := findOMOPFiles(dir)
	res.Skipped = skipped
	if err != nil {
		return res, err
	}
	var total int64
	have := map[string]bool{}
	for _, f := range files {
		total += f.size
		have[f.table.name] = true
	}
	var done int64
	for _, f := range files {
		copts := CSVOptions{
			Table:          f.table.name,
			Replace:        opts.Replace,
			Logger:         opts.Logger,
			Comma:          f.comma,
			LazyQuotes:     f.comma == '\t', // Athena's tab-separated files do not quote
			typeHints:      make(map[string]string, len(f.table.columns)),
			indexHints:     omopIndexColumns(f.table),
			maxRecordBytes: maxOMOPRecordBytes,
		}
		for _, c := range f.table.columns {
			copts.typeHints[c.name] = c.typ
		}
		copts.Progress = fileOfMany(opts.Progress, done, total)
		r, err := ImportCSV(ctx, db, f.path, copts)
		if err != nil {
			res.Duration = time.Since(start)
			return res, fmt.Errorf("OMOP table %s: %w", f.table.name, err)
		}
		done += f.size
		res.Tables = append(res.Tables, r)
		res.Rows += r.Rows
		res.Bytes += r.Bytes
	}
	for _, t := range omopCDM54Tables {
		if have[t.name] {
			continue
		}
		res.Missing = append(res.Missing, t.name)
		if err := createOMOPTable(ctx, db, &t); err != nil {
			res.Duration = time.Since(start)
			return res, err
		}
	}
	opts.Progress.Send(progress.Report{Stage: "concept search index", Done: total, Total: total, Unit: "bytes"})
	n, err := BuildOMOPConceptIndex(ctx, db)
	res.Concepts = n
	res.Duration = time.Since(start)
	if err != nil {
		return res, err
	}
	if opts.Logger != nil {
		opts.Logger.Info("imported OMOP CDM", "dir", dir, "tables", len(res.Tables), "rows", res.Rows,
			"missing", res.Missing, "skipped", res.Skipped, "concepts", res.Concepts, "duration", res.Duration)
	}
	return res, nil
}

// createOMOPTable creates an empty CDM table with its official columns,
// unless a table of that name exists.
func createOMOPTable(ctx context.Context, db *sql.DB, t *omopTableSpec) error {
	typ, err := schemaObjectType(ctx, db, t.name)
	if err != nil || typ != "" {
		return err
	}
	var b strings.Builder
	b.WriteString("CREATE TABLE IF NOT EXISTS " + QuoteIdent(t.name) + " (")
	for i, c := range t.columns {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(QuoteIdent(c.name) + " " + c.typ)
	}
	b.WriteString(")")
	if _, err := db.ExecContext(ctx, b.String()); err != nil {
		return fmt.Errorf("create empty OMOP table %s: %w", t.name, err)
	}
	return nil
}

// findOMOPFiles lists the files of dir named after CDM tables, in the
// order of the official DDL, and the other files.
func findOMOPFiles(dir string) ([]omopFile, []string, error) {
	expected := fmt.Sprintf("expected a folder of per-table OMOP CDM files such as %s and %s",
		filepath.Join(dir, "PERSON.csv"), filepath.Join(dir, "CONDITION_OCCURRENCE.csv"))
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil, fmt.Errorf("OMOP folder %s not found: %w", dir, err)
	case err != nil:
		return nil, nil, fmt.Errorf("OMOP folder %s: %w", dir, err)
	case !fi.IsDir():
		return nil, nil, fmt.Errorf("%s is a file: %w; %s", dir, ErrNotOMOP, expected)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return nil, nil, fmt.Errorf("read %s: %w", dir, err)
	}
	byTable := map[string]omopFile{}
	var skipped []string
	for _, e := range entries {
		if e.IsDir() {
			continue
		}
		lower := strings.ToLower(e.Name())
		if !(strings.HasSuffix(lower, ".csv") || strings.HasSuffix(lower, ".csv.gz") ||
			strings.HasSuffix(lower, ".tsv") || strings.HasSuffix(lower, ".tsv.gz")) {
			skipped = append(skipped, e.Name())
			continue
		}
		t, ok := omopTable(TableNameFromFile(e.Name()))
		if !ok {
			skipped = append(skipped, e.Name())
			continue
		}
		if prev, dup := byTable[t.name]; dup {
			return nil, skipped, fmt.Errorf("two files for OMOP table %s: %s and %s; keep one", t.name, filepath.Base(prev.path), e.Name())
		}
		info, err := e.Info()
		if err != nil {
			return nil, skipped, fmt.Errorf("read %s: %w", dir, err)
		}
		path := filepath.Join(dir, e.Name())
		comma, err := sniffDelimiter(path)
		if err != nil {
			return nil, skipped, &ImportError{Path: path, Line: 1, Err: err}
		}
		byTable[t.name] = omopFile{table: t, path: path, size: info.Size(), comma: comma}
	}
	if len(byTable) == 0 {
		return nil, skipped, fmt.Errorf("%s has no file named after an OMOP CDM table: %w; %s", dir, ErrNotOMOP, expected)
	}
	var files []omopFile
	for i := range omopCDM54Tables {
		if f, ok := byTable[omopCDM54Tables[i].name]; ok {
			files = append(files, f)
		}
	}
	slices.Sort(skipped)
	return files, skipped, nil
}

// sniffDelimiter returns '\t' when the header line of a (plain) file holds
// tabs and no commas, as Athena's vocabulary files do, else ','. Compressed
// files are taken as comma-separated.
func sniffDelimiter(path string) (rune, error) {
	if strings.HasSuffix(strings.ToLower(path), ".gz") {
		return ',', nil
	}
	f, err := os.Open(path)
	if err != nil {
		return 0, fmt.Errorf("cannot open file: %w", err)
	}
	defer f.Close()
	line, err := bufio.NewReaderSize(io.LimitReader(f, 64<<10), 64<<10).ReadString('\n')
	if err != nil && err != io.EOF {
		return 0, fmt.Errorf("cannot read the header: %w", err)
	}
	if strings.Contains(line, "\t") && !strings.Contains(line, ",") {
		return '\t', nil
	}
	return ',', nil
}

// execer runs statements: a *sql.DB, *sql.Conn or *sql.Tx.
type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// CreateOMOPSchema creates every OMOP CDM 5.4 table (with the types
// ImportOMOP declares) and the indexes it builds, for generators that
// write a CDM themselves (the demo). Tables that exist are left as they
// are.
func CreateOMOPSchema(ctx context.Context, db execer) error {
	for i := range omopCDM54Tables {
		t := &omopCDM54Tables[i]
		var b strings.Builder
		b.WriteString("CREATE TABLE IF NOT EXISTS " + QuoteIdent(t.name) + " (")
		for j, c := range t.columns {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(QuoteIdent(c.name) + " " + c.typ)
		}
		b.WriteString(")")
		if _, err := db.ExecContext(ctx, b.String()); err != nil {
			return fmt.Errorf("create OMOP table %s: %w", t.name, err)
		}
	}
	return nil
}

// CreateOMOPIndexes creates the indexes ImportOMOP builds (person_id,
// *_concept_id, event dates, vocabulary keys) on every CDM table.
func CreateOMOPIndexes(ctx context.Context, db execer) error {
	for i := range omopCDM54Tables {
		t := &omopCDM54Tables[i]
		for _, c := range omopIndexColumns(t) {
			q := "CREATE INDEX IF NOT EXISTS " + QuoteIdent(importIndexName(t.name, c)) + " ON " + QuoteIdent(t.name) + " (" + QuoteIdent(c) + ")"
			if _, err := db.ExecContext(ctx, q); err != nil {
				return fmt.Errorf("index OMOP table %s: %w", t.name, err)
			}
		}
	}
	return nil
}

package datasets

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/clinsight/clinsight/internal/csvbound"
	"github.com/clinsight/clinsight/internal/progress"
	"github.com/clinsight/clinsight/internal/textenc"
)

// Column types the CSV importer infers. Explicit types given through
// CSVOptions.ColumnTypes may use any SQLite type name.
const (
	TypeInteger = "INTEGER"
	TypeReal    = "REAL"
	TypeText    = "TEXT"
)

// DefaultSampleRows is how many data rows the CSV importer reads ahead to
// infer column types when CSVOptions.SampleRows is 0.
const DefaultSampleRows = 10_000

// importBatchRows is how often (in rows) an import checks its context for
// cancellation and reports progress.
const importBatchRows = 1000

// Bounds on reading a CSV file, so that a damaged or hostile file (a lost
// closing quote, a binary file, a gzip file unpacking to one endless line)
// fails with a line number instead of taking the machine's memory.
const (
	// maxCSVRecordBytes bounds one record (the bytes of one row, once
	// unpacked). Clinical rows are far below it: MIMIC-IV's longest
	// (discharge notes) are tens of kilobytes.
	maxCSVRecordBytes = 16 << 20
	// maxSampleBytes bounds the rows held to infer the column types: the
	// sample ends at DefaultSampleRows rows or at this many bytes of
	// values, whichever comes first.
	maxSampleBytes = 64 << 20
	// maxCSVFields bounds the fields of one record as it is read, far above
	// the MaxColumns a table can have.
	maxCSVFields = 16 * MaxColumns
	// maxBatchBytes bounds the values of one batch of rows between the
	// reader and the inserter (loadBuffers batches circulate): a batch is
	// handed over at maxRowsPerInsert rows or at this many bytes.
	maxBatchBytes = 8 << 20
)

// ErrTableExists is returned (wrapped) when an import targets a table name
// that already exists and the caller did not ask to replace it.
var ErrTableExists = errors.New("table already exists")

// CSVOptions tunes ImportCSV. The zero value imports a comma-separated file
// with a header row into a new table named after the file.
type CSVOptions struct {
	// Table is the name of the table to create. Empty means the file's base
	// name without ".csv" or ".csv.gz", lowercased, with every run of
	// characters other than ASCII letters and digits turned into "_" (and a
	// "t_" prefix when the result starts with a digit or "sqlite_").
	Table string
	// Replace drops an existing table of the same name, inside the import's
	// transaction, so a failed import keeps the old table. Without Replace an
	// existing table makes the import fail with ErrTableExists.
	Replace bool
	// SampleRows is how many data rows are read ahead to infer column types
	// (DefaultSampleRows when 0). The sample is buffered, then inserted.
	SampleRows int
	// ColumnTypes gives the declared SQL type of some columns, by header name
	// (compared case-insensitively, after header cleaning), for example
	// {"charttime": "TIMESTAMP", "valuenum": "REAL"}. Other columns are
	// inferred. A name that is not a column of the file is an error.
	ColumnTypes map[string]string
	// Indexes lists columns to index after the load, inside the same
	// transaction. A name that is not a column of the file is an error.
	Indexes []string
	// Strict makes a value that does not fit its column's numeric type (for
	// example "n/a" in an INTEGER column, seen after the type sample) fail
	// the import. Without Strict the value is stored as text, as SQLite's
	// dynamic typing allows, and counted in ImportColumn.Mismatches.
	Strict bool
	// Comma is the field delimiter (',' when 0).
	Comma rune
	// LazyQuotes accepts a quote appearing in an unquoted field and a
	// non-doubled quote in a quoted field (see encoding/csv).
	LazyQuotes bool
	// Progress receives the bytes read from the file (compressed bytes for a
	// gzip file) with Total the file size and Stage the table name.
	Progress progress.Func
	// Logger receives a summary line per import; nil logs nothing.
	Logger *slog.Logger

	// typeHints are declared types used when the column exists and ignored
	// otherwise (the MIMIC importer's schema).
	typeHints map[string]string
	// indexHints are columns indexed when they exist and ignored otherwise.
	indexHints []string
	// maxRecordBytes, when positive, bounds each CSV record (see
	// csvbound); maxCSVRecordBytes when 0.
	maxRecordBytes int
	// maxSampleBytes, when positive, replaces the package's bound on the
	// sample's bytes (tests lower it).
	maxSampleBytes int
}

// ImportColumn describes one column of an imported table.
type ImportColumn struct {
	// Name is the column name after header cleaning.
	Name string
	// Type is the declared SQL type of the column.
	Type string
	// Inferred is true when Type was inferred from the sample rather than given.
	Inferred bool
	// Nulls counts the empty values, stored as NULL.
	Nulls int64
	// Mismatches counts the values that did not fit a numeric Type and were
	// stored as text (always 0 with CSVOptions.Strict).
	Mismatches int64
}

// ImportResult reports a finished import.
type ImportResult struct {
	// Path is the file that was imported.
	Path string
	// Table is the table created.
	Table string
	// Columns are the table's columns in file order.
	Columns []ImportColumn
	// Indexes are the names of the indexes created.
	Indexes []string
	// Rows is the number of data rows inserted.
	Rows int64
	// Bytes is the size of the file read (compressed size for a gzip file).
	Bytes int64
	// Duration is the wall time of the import.
	Duration time.Duration
}

// ImportError is the error of a failed import: which file, which line of it
// (the first line of the CSV record concerned, 0 when the failure is not tied
// to a record) and why. Err is the cause; errors.Is and errors.As see
// through it (for example to context.Canceled or ErrTableExists).
type ImportError struct {
	// Path is the file being imported.
	Path string
	// Line is the 1-based line where the failing record starts, or 0.
	Line int
	// Err is the cause.
	Err error
}

// Error formats the error as "import FILE line N: cause".
func (e *ImportError) Error() string {
	name := filepath.Base(e.Path)
	if e.Line > 0 {
		return fmt.Sprintf("import %s line %d: %v", name, e.Line, e.Err)
	}
	return fmt.Sprintf("import %s: %v", name, e.Err)
}

// Unwrap returns the cause.
func (e *ImportError) Unwrap() error { return e.Err }

// fieldCountError is a record with the wrong number of fields.
type fieldCountError struct{ want, got int }

// Error says how many fields were expected and found.
func (e *fieldCountError) Error() string {
	return fmt.Sprintf("expected %d fields, found %d", e.want, e.got)
}

// Unwrap lets errors.Is match csv.ErrFieldCount.
func (e *fieldCountError) Unwrap() error { return csv.ErrFieldCount }

// ImportCSV streams a CSV file (plain or gzip-compressed, recognised by its
// magic bytes) into a new table of db, in one transaction: on any failure or
// cancellation of ctx the transaction is rolled back and no table is left
// behind (a table being replaced is kept). The first record is the header;
// column types are inferred from the first rows (see CSVOptions) unless
// given. Empty values are stored as NULL. Errors are *ImportError values
// naming the file and, when it applies, the line.
func ImportCSV(ctx context.Context, db *sql.DB, path string, opts CSVOptions) (ImportResult, error) {
	start := time.Now()
	imp := &csvImport{path: path, opts: opts}
	res, err := imp.run(ctx, db)
	if err != nil {
		var ie *ImportError
		if !errors.As(err, &ie) {
			ie = &ImportError{Path: path, Err: err}
		}
		// A statement interrupted by the cancellation reports SQLite's
		// "interrupted": make the cancellation itself visible to errors.Is.
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(ie.Err, ctxErr) {
			ie.Err = fmt.Errorf("%w (%v)", ctxErr, ie.Err)
		}
		return ImportResult{}, ie
	}
	res.Duration = time.Since(start)
	if opts.Logger != nil {
		opts.Logger.Info("imported CSV", "file", filepath.Base(path), "table", res.Table,
			"rows", res.Rows, "bytes", res.Bytes, "duration", res.Duration)
	}
	return res, nil
}

// colKind says how a column's text values are converted before binding.
type colKind uint8

const (
	kindText    colKind = iota // bound as text
	kindInteger                // canonical integers bound as int64
	kindReal                   // decimal numbers bound as float64
	kindNumeric                // integers or decimals as numbers, the rest as text
)

// csvImport is the state of one ImportCSV call.
type csvImport struct {
	path string
	opts CSVOptions

	file    *os.File
	counter byteCounter
	size    int64
	r       *csv.Reader
	lastEnd int // last line of the most recent record read
}

// byteCounter counts the bytes read through it.
type byteCounter struct {
	r io.Reader
	n int64
}

// Read reads from the underlying reader, counting the bytes.
func (c *byteCounter) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// fail returns an *ImportError for the file at line.
func (imp *csvImport) fail(line int, err error) error {
	return &ImportError{Path: imp.path, Line: line, Err: err}
}

// open opens the file, detects gzip and builds the CSV reader.
func (imp *csvImport) open() error {
	fi, err := os.Stat(imp.path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("file not found: %w", err)
	case err != nil:
		return fmt.Errorf("cannot read file: %w", err)
	case fi.IsDir():
		return fmt.Errorf("%s is a directory, expected a .csv or .csv.gz file", imp.path)
	case fi.Size() == 0:
		return errors.New("empty file: a header row is required")
	}
	f, err := os.Open(imp.path)
	if err != nil {
		return fmt.Errorf("cannot open file: %w", err)
	}
	imp.file = f
	imp.size = fi.Size()
	imp.counter = byteCounter{r: f}
	br := bufio.NewReaderSize(&imp.counter, 256<<10)
	magic, _ := br.Peek(2)
	isGzip := len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b
	text := br
	switch {
	case isGzip:
		zr, err := gzip.NewReader(br)
		if err != nil {
			return imp.fail(1, fmt.Errorf("corrupt gzip data: %w", err))
		}
		text = bufio.NewReaderSize(zr, 64<<10)
	case strings.HasSuffix(strings.ToLower(imp.path), ".gz"):
		return imp.fail(1, errors.New("corrupt gzip data: the file is named .gz but does not start with the gzip magic bytes"))
	}
	src := textenc.UTF8(text) // UTF-16 (as Excel saves "Unicode text") decoded
	maxRecord := imp.opts.maxRecordBytes
	if maxRecord <= 0 {
		maxRecord = maxCSVRecordBytes
	}
	// A record of far more fields than a table can have columns fails at
	// once, before encoding/csv holds millions of them (up to
	// maxCSVFields, the header check gives the exact count).
	src = csvbound.NewReader(src, imp.opts.Comma, maxRecord, maxCSVFields)
	r := csv.NewReader(src)
	r.ReuseRecord = true
	r.FieldsPerRecord = 0 // set by the header
	if imp.opts.Comma != 0 {
		r.Comma = imp.opts.Comma
	}
	r.LazyQuotes = imp.opts.LazyQuotes
	imp.r = r
	return nil
}

// read returns the next record, io.EOF at the end, or an *ImportError.
func (imp *csvImport) read() ([]string, int, error) {
	rec, err := imp.r.Read()
	if err == nil {
		line, _ := imp.r.FieldPos(0)
		imp.lastEnd, _ = imp.r.FieldPos(len(rec) - 1)
		return rec, line, nil
	}
	if err == io.EOF {
		return nil, 0, io.EOF
	}
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		if errors.Is(pe.Err, csv.ErrFieldCount) {
			return nil, pe.StartLine, imp.fail(pe.StartLine, &fieldCountError{want: imp.r.FieldsPerRecord, got: len(rec)})
		}
		cause := fmt.Errorf("malformed CSV at line %d, column %d: %w", pe.Line, pe.Column, pe.Err)
		return nil, pe.StartLine, imp.fail(pe.StartLine, cause)
	}
	line := imp.lastEnd + 1
	var tl *RecordTooLongError
	if errors.As(err, &tl) {
		return nil, tl.Line, imp.fail(tl.Line, err)
	}
	var tf *csvbound.TooManyFieldsError
	if errors.As(err, &tf) {
		return nil, tf.Line, imp.fail(tf.Line, fmt.Errorf("%w; a SQLite table holds at most %d: split the file or remove columns", err, MaxColumns))
	}
	if isGzipCorruption(err) {
		return nil, line, imp.fail(line, fmt.Errorf("corrupt gzip stream after line %d: %w", imp.lastEnd, err))
	}
	return nil, line, imp.fail(line, fmt.Errorf("read error after line %d: %w", imp.lastEnd, err))
}

// isGzipCorruption reports whether err comes from a damaged gzip stream.
func isGzipCorruption(err error) bool {
	var ce flate.CorruptInputError
	return errors.As(err, &ce) || errors.Is(err, gzip.ErrChecksum) ||
		errors.Is(err, gzip.ErrHeader) || errors.Is(err, io.ErrUnexpectedEOF)
}

// bufferedRow is a sampled record kept until the table exists.
type bufferedRow struct {
	line   int
	fields []string
}

// run does the import; ImportCSV adds the error context and the duration.
func (imp *csvImport) run(ctx context.Context, db *sql.DB) (ImportResult, error) {
	opts := imp.opts
	table := opts.Table
	if table == "" {
		table = TableNameFromFile(imp.path)
	}
	if err := ctx.Err(); err != nil {
		return ImportResult{}, err
	}
	// Fail fast, before reading the file; checked again in the transaction.
	if err := checkTableFree(ctx, db, table, opts.Replace); err != nil {
		return ImportResult{}, err
	}
	err := imp.open()
	if imp.file != nil {
		defer imp.file.Close()
	}
	if err != nil {
		return ImportResult{}, err
	}
	report := func() {
		opts.Progress.Send(progress.Report{Stage: table, Done: imp.counter.n, Total: imp.size, Unit: "bytes"})
	}
	report()

	header, headerLine, err := imp.read()
	if err == io.EOF {
		return ImportResult{}, imp.fail(0, errors.New("empty file: a header row is required"))
	}
	if err != nil {
		return ImportResult{}, err
	}
	if err := checkHeader(header); err != nil {
		return ImportResult{}, imp.fail(headerLine, err)
	}
	names := CleanHeader(header)
	ncol := len(names)
	imp.r.FieldsPerRecord = ncol

	cols, err := imp.columnPlan(names)
	if err != nil {
		return ImportResult{}, imp.fail(0, err)
	}
	indexCols, err := imp.indexPlan(names)
	if err != nil {
		return ImportResult{}, imp.fail(0, err)
	}

	// Read the sample when a column's type must be inferred.
	var sample []bufferedRow
	needInfer := false
	for _, c := range cols {
		needInfer = needInfer || c.Inferred
	}
	eof := false
	if needInfer {
		limit := opts.SampleRows
		if limit <= 0 {
			limit = DefaultSampleRows
		}
		maxBytes := opts.maxSampleBytes
		if maxBytes <= 0 {
			maxBytes = maxSampleBytes
		}
		stats := make([]typeStats, ncol)
		sampleBytes := 0
		for len(sample) < limit && sampleBytes < maxBytes {
			rec, line, err := imp.read()
			if err == io.EOF {
				eof = true
				break
			}
			if err != nil {
				return ImportResult{}, err
			}
			if len(sample)%importBatchRows == 0 {
				if err := ctx.Err(); err != nil {
					return ImportResult{}, imp.fail(line, err)
				}
			}
			// One allocation per row; the strings are not reused by csv.
			sample = append(sample, bufferedRow{line: line, fields: append([]string(nil), rec...)})
			for i, v := range rec {
				stats[i].add(v)
				sampleBytes += len(v)
			}
		}
		for i := range cols {
			if cols[i].Inferred {
				cols[i].Type = stats[i].typ()
			}
		}
	}
	kinds := make([]colKind, ncol)
	for i, c := range cols {
		kinds[i] = kindOf(c.Type)
	}

	// One connection for the whole import: the transaction, and the driver
	// statement the rows are inserted with.
	conn, err := db.Conn(ctx)
	if err != nil {
		return ImportResult{}, fmt.Errorf("connect: %w", err)
	}
	defer conn.Close()
	// IMMEDIATE takes the write lock now, so the name check below holds
	// until the commit.
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return ImportResult{}, fmt.Errorf("begin transaction: %w", err)
	}
	committed := false
	defer func() {
		if !committed {
			rollback(conn)
		}
	}()
	if err := prepareTable(ctx, conn, table, opts.Replace); err != nil {
		return ImportResult{}, err
	}
	var ddl strings.Builder
	ddl.WriteString("CREATE TABLE ")
	ddl.WriteString(QuoteIdent(table))
	ddl.WriteString(" (")
	for i, c := range cols {
		if i > 0 {
			ddl.WriteString(", ")
		}
		ddl.WriteString(QuoteIdent(c.Name))
		ddl.WriteByte(' ')
		ddl.WriteString(c.Type)
	}
	ddl.WriteString(")")
	if _, err := conn.ExecContext(ctx, ddl.String()); err != nil {
		return ImportResult{}, fmt.Errorf("create table %s: %w", QuoteIdent(table), err)
	}

	conv := rowConverter{kinds: kinds, cols: cols, strict: opts.Strict,
		nulls: make([]int64, ncol), mismatches: make([]int64, ncol)}
	var rows int64
	err = conn.Raw(func(dc any) error {
		ins, err := newRowInserter(ctx, dc, table, ncol)
		if err != nil {
			return err
		}
		defer ins.close()
		rows, err = imp.load(ctx, ins, &conv, sample, eof, func(done int64) {
			opts.Progress.Send(progress.Report{Stage: table, Done: done, Total: imp.size, Unit: "bytes"})
		})
		return err
	})
	if err != nil {
		return ImportResult{}, err
	}

	var indexes []string
	for _, c := range indexCols {
		name := importIndexName(table, c)
		q := "CREATE INDEX " + QuoteIdent(name) + " ON " + QuoteIdent(table) + " (" + QuoteIdent(c) + ")"
		if _, err := conn.ExecContext(ctx, q); err != nil {
			return ImportResult{}, fmt.Errorf("create index %s: %w", QuoteIdent(name), err)
		}
		indexes = append(indexes, name)
	}
	if err := ctx.Err(); err != nil {
		return ImportResult{}, imp.fail(imp.lastEnd, err)
	}
	if _, err := conn.ExecContext(ctx, "COMMIT"); err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil {
			err = ctxErr
		}
		return ImportResult{}, fmt.Errorf("commit: %w", err)
	}
	committed = true
	report()
	for i := range cols {
		cols[i].Nulls = conv.nulls[i]
		cols[i].Mismatches = conv.mismatches[i]
	}
	return ImportResult{
		Path:    imp.path,
		Table:   table,
		Columns: cols,
		Indexes: indexes,
		Rows:    rows,
		Bytes:   imp.counter.n,
	}, nil
}

// MaxColumns is the most columns a SQLite table can have (SQLITE_MAX_COLUMN
// in the library Clinsight uses), so the most a CSV file can have to import.
const MaxColumns = 2000

// checkHeader refuses a header SQLite cannot take as column names, saying
// why in the words of the file rather than of the SQL built from it.
func checkHeader(header []string) error {
	for i, h := range header {
		if strings.IndexByte(h, 0) >= 0 {
			return fmt.Errorf("column %d of the header contains a NUL byte (0x00): the file may be binary, or text in an encoding other than UTF-8 or UTF-16; save it as UTF-8 CSV", i+1)
		}
	}
	if len(header) > MaxColumns {
		return fmt.Errorf("the header has %d columns, more than the %d a SQLite table can hold; split the file or remove columns", len(header), MaxColumns)
	}
	return nil
}

// columnPlan pairs the cleaned header with explicit or hinted types.
func (imp *csvImport) columnPlan(names []string) ([]ImportColumn, error) {
	byName := make(map[string]int, len(names))
	for i, n := range names {
		byName[strings.ToLower(n)] = i
	}
	cols := make([]ImportColumn, len(names))
	for i, n := range names {
		cols[i] = ImportColumn{Name: n, Inferred: true}
	}
	for name, typ := range imp.opts.typeHints {
		if i, ok := byName[strings.ToLower(name)]; ok {
			cols[i].Type, cols[i].Inferred = typ, false
		}
	}
	for name, typ := range imp.opts.ColumnTypes {
		i, ok := byName[strings.ToLower(name)]
		if !ok {
			return nil, fmt.Errorf("column type given for %q, which is not a column of the file (columns: %s)", name, strings.Join(names, ", "))
		}
		if err := validTypeName(typ); err != nil {
			return nil, fmt.Errorf("column %q: %w", name, err)
		}
		cols[i].Type, cols[i].Inferred = typ, false
	}
	return cols, nil
}

// indexPlan resolves the columns to index against the cleaned header.
func (imp *csvImport) indexPlan(names []string) ([]string, error) {
	byName := make(map[string]string, len(names))
	for _, n := range names {
		byName[strings.ToLower(n)] = n
	}
	var out []string
	seen := map[string]bool{}
	for _, c := range imp.opts.Indexes {
		n, ok := byName[strings.ToLower(c)]
		if !ok {
			return nil, fmt.Errorf("index requested on %q, which is not a column of the file (columns: %s)", c, strings.Join(names, ", "))
		}
		if !seen[strings.ToLower(n)] {
			seen[strings.ToLower(n)] = true
			out = append(out, n)
		}
	}
	for _, c := range imp.opts.indexHints {
		if n, ok := byName[strings.ToLower(c)]; ok && !seen[strings.ToLower(n)] {
			seen[strings.ToLower(n)] = true
			out = append(out, n)
		}
	}
	return out, nil
}

// validTypeName accepts type names such as INTEGER, TIMESTAMP, VARCHAR(20)
// or DOUBLE PRECISION, which are safe to write into CREATE TABLE.
func validTypeName(t string) error {
	base, args, hasArgs := strings.Cut(t, "(")
	ok := base != "" && impIsLetter(base[0])
	for i := 0; ok && i < len(base); i++ {
		c := base[i]
		ok = impIsLetter(c) || impIsDigit(c) || c == '_' || c == ' '
	}
	if ok && hasArgs {
		inner, rest, closed := strings.Cut(args, ")")
		ok = closed && rest == "" && inner != ""
		for i := 0; ok && i < len(inner); i++ {
			c := inner[i]
			ok = impIsDigit(c) || c == ',' || c == ' '
		}
	}
	if !ok {
		return fmt.Errorf("invalid column type %q", t)
	}
	return nil
}

// impIsLetter reports whether c is an ASCII letter.
func impIsLetter(c byte) bool { return c|0x20 >= 'a' && c|0x20 <= 'z' }

// impIsDigit reports whether c is an ASCII digit.
func impIsDigit(c byte) bool { return c >= '0' && c <= '9' }

// kindOf applies SQLite's column affinity rules to a declared type, except
// that date and time types are bound as text so their text form is kept.
func kindOf(typ string) colKind {
	t := strings.ToUpper(typ)
	switch {
	case strings.Contains(t, "INT"):
		return kindInteger
	case strings.Contains(t, "CHAR"), strings.Contains(t, "CLOB"), strings.Contains(t, "TEXT"):
		return kindText
	case strings.Contains(t, "BLOB"), t == "":
		return kindText
	case strings.Contains(t, "REAL"), strings.Contains(t, "FLOA"), strings.Contains(t, "DOUB"):
		return kindReal
	case strings.Contains(t, "DATE"), strings.Contains(t, "TIME"):
		return kindText
	default:
		return kindNumeric
	}
}

// checkTableFree fails when table exists and replace is false.
func checkTableFree(ctx context.Context, db *sql.DB, table string, replace bool) error {
	typ, err := schemaObjectType(ctx, db, table)
	if err != nil {
		return err
	}
	return tableConflict(table, typ, replace)
}

// rollback ends the transaction open on conn. Should that fail, the
// connection is discarded rather than returned to the pool mid-transaction.
func rollback(conn *sql.Conn) {
	if _, err := conn.ExecContext(context.Background(), "ROLLBACK"); err != nil &&
		!strings.Contains(err.Error(), "no transaction is active") {
		_ = conn.Raw(func(any) error { return driver.ErrBadConn })
	}
}

// prepareTable checks, inside the transaction open on conn, that table may
// be created, dropping an existing table when replace is set.
func prepareTable(ctx context.Context, conn *sql.Conn, table string, replace bool) error {
	typ, err := schemaObjectType(ctx, conn, table)
	if err != nil {
		return err
	}
	if err := tableConflict(table, typ, replace); err != nil {
		return err
	}
	if typ == "table" {
		if _, err := conn.ExecContext(ctx, "DROP TABLE "+QuoteIdent(table)); err != nil {
			return fmt.Errorf("drop table %s to replace it: %w", QuoteIdent(table), err)
		}
	}
	return nil
}

type rowQuerier interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// schemaObjectType returns the type ("table", "view", "index", ...) of the schema
// object named name in the main database, "" when there is none.
func schemaObjectType(ctx context.Context, q rowQuerier, name string) (string, error) {
	var typ string
	err := q.QueryRowContext(ctx,
		"SELECT type FROM main.sqlite_schema WHERE name = ? COLLATE NOCASE AND type IN ('table','view','index') LIMIT 1",
		name).Scan(&typ)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("look up table %s: %w", QuoteIdent(name), err)
	}
	return typ, nil
}

func tableConflict(table, typ string, replace bool) error {
	switch {
	case typ == "":
		return nil
	case typ != "table":
		return fmt.Errorf("cannot import into %s: the name is used by an existing %s", QuoteIdent(table), typ)
	case !replace:
		return fmt.Errorf("%w: %s (choose another table name, or replace it)", ErrTableExists, QuoteIdent(table))
	}
	return nil
}

// TableNameFromFile derives a table name from a file path: the base name
// without ".csv", ".csv.gz", ".tsv" or ".gz", lowercased, every run of
// characters other than ASCII letters and digits replaced by one "_",
// leading and trailing "_" trimmed, and "t_" prefixed when the name would
// start with a digit or with SQLite's reserved "sqlite_" ("data" if nothing
// is left).
func TableNameFromFile(path string) string {
	base := filepath.Base(path)
	lower := strings.ToLower(base)
	for _, ext := range []string{".csv.gz", ".tsv.gz", ".gz", ".csv", ".tsv", ".txt"} {
		if strings.HasSuffix(lower, ext) && len(lower) > len(ext) {
			lower = lower[:len(lower)-len(ext)]
			break
		}
	}
	return sanitizeTableName(lower, "data")
}

// sanitizeTableName lowercases s and keeps ASCII letters and digits, joining the
// rest into single underscores.
func sanitizeTableName(s, fallback string) string {
	var b strings.Builder
	pendingSep := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		if impIsLetter(c) || impIsDigit(c) {
			if pendingSep && b.Len() > 0 {
				b.WriteByte('_')
			}
			pendingSep = false
			if c >= 'A' && c <= 'Z' {
				c += 'a' - 'A'
			}
			b.WriteByte(c)
			continue
		}
		pendingSep = true
	}
	name := b.String()
	if name == "" {
		name = fallback
	}
	if impIsDigit(name[0]) || strings.HasPrefix(name, "sqlite_") {
		name = "t_" + name
	}
	return name
}

// importIndexName is the name of the index on column col of table.
func importIndexName(table, col string) string {
	return "idx_" + table + "_" + sanitizeTableName(col, "col")
}

// CleanHeader turns a CSV header into usable, unique column names: each name
// is trimmed (and a UTF-8 byte order mark removed), an empty name becomes
// "col_N" (N its 1-based position), and a name already used (compared
// case-insensitively, as SQLite does) gets a suffix "_2", "_3", ...
func CleanHeader(header []string) []string {
	names := make([]string, len(header))
	used := make(map[string]bool, len(header))
	for i, h := range header {
		if i == 0 {
			h = strings.TrimPrefix(h, "\ufeff")
		}
		h = strings.TrimSpace(h)
		if h == "" {
			h = "col_" + strconv.Itoa(i+1)
		}
		name := h
		for n := 2; used[strings.ToLower(name)]; n++ {
			name = h + "_" + strconv.Itoa(n)
		}
		used[strings.ToLower(name)] = true
		names[i] = name
	}
	return names
}

// typeStats accumulates what a sampled column's values look like.
type typeStats struct {
	ints, reals, texts int
}

func (s *typeStats) add(v string) {
	switch classifyValue(v) {
	case classInt:
		s.ints++
	case classReal:
		s.reals++
	case classText:
		s.texts++
	}
}

// typ is the inferred type: TEXT if any value is text (or all are empty),
// REAL if any is a decimal, else INTEGER.
func (s *typeStats) typ() string {
	switch {
	case s.texts > 0:
		return TypeText
	case s.reals > 0:
		return TypeReal
	case s.ints > 0:
		return TypeInteger
	}
	return TypeText
}

type valueClass uint8

const (
	classEmpty valueClass = iota
	classInt
	classReal
	classText
)

// classify says whether v is empty, an integer or a decimal number written
// in a form that survives conversion to a number, or text. Leading zeros
// ("007"), a plus sign, surrounding spaces, integers beyond 64 bits, "NaN"
// or "Inf" and dates are text.
func classifyValue(v string) valueClass {
	if v == "" {
		return classEmpty
	}
	if _, ok := parseCanonicalInt(v); ok {
		return classInt
	}
	if _, ok := parseDecimal(v); ok {
		return classReal
	}
	return classText
}

// parseCanonicalInt parses s when it is a base-10 int64 written exactly as
// strconv.FormatInt would write it back.
func parseCanonicalInt(s string) (int64, bool) {
	i := 0
	if len(s) > 0 && s[0] == '-' {
		i = 1
	}
	n := len(s) - i
	if n == 0 || n > 19 || (s[i] == '0' && (n > 1 || i == 1)) {
		return 0, false
	}
	if n < 19 {
		var v int64
		for j := i; j < len(s); j++ {
			c := s[j]
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int64(c-'0')
		}
		if i == 1 {
			v = -v
		}
		return v, true
	}
	v, err := strconv.ParseInt(s, 10, 64)
	return v, err == nil
}

// parseDecimal parses s when it matches -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
// with a fraction or an exponent (integers are parseCanonicalInt's) and is
// finite. Trailing zeros of a fraction are not kept by the number.
func parseDecimal(s string) (float64, bool) {
	i := 0
	if i < len(s) && s[i] == '-' {
		i++
	}
	start := i
	for i < len(s) && impIsDigit(s[i]) {
		i++
	}
	if i == start || (s[start] == '0' && i-start > 1) {
		return 0, false
	}
	frac := false
	if i < len(s) && s[i] == '.' {
		i++
		d := i
		for i < len(s) && impIsDigit(s[i]) {
			i++
		}
		if i == d {
			return 0, false
		}
		frac = true
	}
	exp := false
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		i++
		if i < len(s) && (s[i] == '+' || s[i] == '-') {
			i++
		}
		d := i
		for i < len(s) && impIsDigit(s[i]) {
			i++
		}
		if i == d {
			return 0, false
		}
		exp = true
	}
	if i != len(s) || (!frac && !exp) {
		return 0, false
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil {
		return 0, false
	}
	return f, true
}

// rowConverter turns a record's text fields into bind arguments.
type rowConverter struct {
	kinds      []colKind
	cols       []ImportColumn
	strict     bool
	nulls      []int64
	mismatches []int64
}

// fill writes rec's values into row, counting NULLs and type mismatches.
func (c *rowConverter) fill(row []driver.NamedValue, rec []string) error {
	for i, v := range rec {
		if v == "" {
			row[i].Value = nil
			c.nulls[i]++
			continue
		}
		switch c.kinds[i] {
		case kindText:
			row[i].Value = v
		case kindInteger:
			if n, ok := parseCanonicalInt(v); ok {
				row[i].Value = n
				continue
			}
			if err := c.mismatch(i, v); err != nil {
				return err
			}
			row[i].Value = v
		case kindReal:
			if n, ok := parseCanonicalInt(v); ok {
				row[i].Value = float64(n)
				continue
			}
			if f, ok := parseDecimal(v); ok {
				row[i].Value = f
				continue
			}
			if err := c.mismatch(i, v); err != nil {
				return err
			}
			row[i].Value = v
		case kindNumeric:
			if n, ok := parseCanonicalInt(v); ok {
				row[i].Value = n
			} else if f, ok := parseDecimal(v); ok {
				row[i].Value = f
			} else {
				row[i].Value = v
			}
		}
	}
	return nil
}

func (c *rowConverter) mismatch(i int, v string) error {
	if c.strict {
		if len(v) > 40 {
			v = v[:40] + "..."
		}
		return fmt.Errorf("column %q: value %q is not of type %s", c.cols[i].Name, v, c.cols[i].Type)
	}
	c.mismatches[i]++
	return nil
}

// maxRowsPerInsert caps the rows of one multi-row INSERT statement.
const maxRowsPerInsert = 64

// loadBuffers is how many row batches circulate between the goroutine that
// reads and converts records and the one that inserts them.
const loadBuffers = 4

// argBatch is a batch of converted rows handed from the reading goroutine to
// the inserting one.
type argBatch struct {
	args  []driver.NamedValue // n rows of ncol bind arguments
	lines []int               // first line of each row's record
	n     int                 // rows in the batch
	size  int                 // bytes of the values in the batch
	bytes int64               // file bytes read when the batch was handed over
	err   error               // set on the last batch when reading or converting failed
}

// load inserts the sampled rows and then the rest of the file. One goroutine
// reads and converts records while the calling one executes the INSERTs, so
// parsing overlaps with SQLite's work; batches are recycled, and the
// context is checked and progress reported every importBatchRows rows.
func (imp *csvImport) load(ctx context.Context, ins *rowInserter, conv *rowConverter,
	sample []bufferedRow, eof bool, report func(done int64)) (int64, error) {
	free := make(chan *argBatch, loadBuffers)
	full := make(chan *argBatch, loadBuffers)
	for range loadBuffers {
		b := &argBatch{args: make([]driver.NamedValue, ins.per*ins.ncol), lines: make([]int, ins.per)}
		for i := range b.args {
			b.args[i].Ordinal = i + 1
		}
		free <- b
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		defer close(full)
		imp.produce(conv, sample, eof, ins.per, free, full, stop)
	}()
	defer func() {
		close(stop)
		<-done
	}()

	var rows, unchecked int64
	for b := range full {
		if b.err != nil {
			return rows, b.err // the transaction is rolled back: skip b's rows
		}
		if err := ins.exec(ctx, b); err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				err = ctxErr
			}
			return rows, imp.fail(b.lines[0], err)
		}
		rows += int64(b.n)
		unchecked += int64(b.n)
		if unchecked >= importBatchRows {
			unchecked = 0
			if err := ctx.Err(); err != nil {
				return rows, imp.fail(b.lines[b.n-1], err)
			}
			report(b.bytes)
		}
		free <- b
	}
	return rows, nil
}

// produce converts the sampled rows, then reads and converts the rest of
// the file, into batches of per rows taken from free and sent to full. It
// returns at the end of the file, after sending a batch carrying an error,
// or when stop is closed.
func (imp *csvImport) produce(conv *rowConverter, sample []bufferedRow, eof bool, per int,
	free <-chan *argBatch, full chan<- *argBatch, stop <-chan struct{}) {
	ncol := len(conv.kinds)
	var b *argBatch
	next := func() bool {
		select {
		case b = <-free:
			b.n, b.size, b.err = 0, 0, nil
			return true
		case <-stop:
			return false
		}
	}
	send := func() bool {
		b.bytes = imp.counter.n
		select {
		case full <- b:
			return true
		case <-stop:
			return false
		}
	}
	put := func(rec []string, line int) bool {
		if err := conv.fill(b.args[b.n*ncol:(b.n+1)*ncol], rec); err != nil {
			b.err = imp.fail(line, err)
			send()
			return false
		}
		b.lines[b.n] = line
		b.n++
		for _, v := range rec {
			b.size += len(v)
		}
		if b.n == per || b.size >= maxBatchBytes {
			return send() && next()
		}
		return true
	}
	if !next() {
		return
	}
	for _, r := range sample {
		if !put(r.fields, r.line) {
			return
		}
	}
	for !eof {
		rec, line, err := imp.read()
		if err == io.EOF {
			break
		}
		if err != nil {
			b.err = err
			send()
			return
		}
		if !put(rec, line) {
			return
		}
	}
	if b.n > 0 {
		send()
	}
}

// rowInserter executes a prepared multi-row INSERT statement through the
// driver: one execution per maxRowsPerInsert rows amortises the per-call
// cost of the driver, and the bind arguments go straight from the reused
// batches to the driver, without database/sql's per-call conversion.
type rowInserter struct {
	conn  driver.ConnPrepareContext
	table string
	ncol  int
	per   int         // rows per execution of multi
	multi driver.Stmt // the statement for per rows
}

// newRowInserter prepares the insert statement on driverConn, the driver
// connection given by sql.Conn.Raw.
func newRowInserter(ctx context.Context, driverConn any, table string, ncol int) (*rowInserter, error) {
	pc, ok := driverConn.(driver.ConnPrepareContext)
	if !ok {
		return nil, fmt.Errorf("database driver %T cannot prepare statements with a context", driverConn)
	}
	// SQLite allows 32766 parameters per statement.
	per := min(maxRowsPerInsert, max(1, 32766/ncol))
	in := &rowInserter{conn: pc, table: table, ncol: ncol, per: per}
	stmt, err := in.prepare(ctx, per)
	if err != nil {
		return nil, err
	}
	in.multi = stmt
	return in, nil
}

// prepare prepares the INSERT statement for rows rows.
func (in *rowInserter) prepare(ctx context.Context, rows int) (driver.Stmt, error) {
	stmt, err := in.conn.PrepareContext(ctx, in.insertSQL(rows))
	if err != nil {
		return nil, fmt.Errorf("prepare insert: %w", err)
	}
	if _, ok := stmt.(driver.StmtExecContext); !ok {
		stmt.Close()
		return nil, fmt.Errorf("database driver statement %T cannot execute with a context", stmt)
	}
	return stmt, nil
}

// close releases the prepared statement.
func (in *rowInserter) close() {
	if in.multi != nil {
		in.multi.Close()
		in.multi = nil
	}
}

// insertSQL is INSERT INTO table VALUES (?,...),... for rows rows.
func (in *rowInserter) insertSQL(rows int) string {
	var b strings.Builder
	b.WriteString("INSERT INTO ")
	b.WriteString(QuoteIdent(in.table))
	b.WriteString(" VALUES ")
	for r := range rows {
		if r > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('(')
		for c := range in.ncol {
			if c > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('?')
		}
		b.WriteByte(')')
	}
	return b.String()
}

// exec inserts the rows of b. The context is checked by the caller between
// batches rather than passed to the driver, which would start a goroutine
// per call to watch a cancellable one.
func (in *rowInserter) exec(ctx context.Context, b *argBatch) error {
	stmt := in.multi
	if b.n != in.per {
		s, err := in.prepare(ctx, b.n)
		if err != nil {
			return err
		}
		defer s.Close()
		stmt = s
	}
	if _, err := stmt.(driver.StmtExecContext).ExecContext(context.Background(), b.args[:b.n*in.ncol]); err != nil {
		if b.n > 1 {
			return fmt.Errorf("insert of the rows at lines %d-%d: %w", b.lines[0], b.lines[b.n-1], err)
		}
		return fmt.Errorf("insert: %w", err)
	}
	return nil
}

package evidence

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"strings"
	"time"

	"github.com/clinsight/clinsight/internal/inputfile"
	"github.com/clinsight/clinsight/internal/progress"
)

// Table names of the literature corpus in a SQLite database.
const (
	// RecordsTable holds one row per record.
	RecordsTable = "evidence_records"
	// FTSTable is the FTS5 index over title, abstract and MeSH headings
	// (external content: RecordsTable, kept in step by Import; FTS5 triggers
	// would flush the index at every row and make imports ten times slower).
	FTSTable = "evidence_fts"
	// FullTextsTable holds one row per record with an imported full text:
	// where it came from and when.
	FullTextsTable = "evidence_fulltexts"
	// ChunksTable holds the numbered chunks of the full texts (StudyText).
	ChunksTable = "evidence_chunks"
)

// schema creates the corpus tables when they do not exist. The FTS5
// tokenizer folds case and diacritics ("Müller" matches "muller").
var schema = []string{
	`CREATE TABLE IF NOT EXISTS evidence_records (
		rowid INTEGER PRIMARY KEY,
		id TEXT NOT NULL UNIQUE,
		pmid TEXT,
		title TEXT NOT NULL,
		abstract TEXT NOT NULL DEFAULT '',
		sections TEXT, -- JSON [{"label","category"}] of a structured abstract
		mesh TEXT NOT NULL DEFAULT '',
		publication_types TEXT NOT NULL DEFAULT '',
		journal TEXT,
		year INTEGER,
		authors TEXT,
		doi TEXT,
		keywords TEXT,
		source TEXT,
		source_line INTEGER
	)`,
	`CREATE INDEX IF NOT EXISTS evidence_records_pmid ON evidence_records(pmid)`,
	`CREATE VIRTUAL TABLE IF NOT EXISTS evidence_fts USING fts5(
		title, abstract, mesh,
		content='evidence_records', content_rowid='rowid',
		tokenize='unicode61 remove_diacritics 2')`,
	`CREATE TABLE IF NOT EXISTS evidence_fulltexts (
		record_id TEXT PRIMARY KEY, -- evidence_records.id
		source TEXT NOT NULL, -- the file's name
		format TEXT NOT NULL, -- jats, text, pdf or demo
		imported TEXT NOT NULL -- RFC 3339, UTC
	) WITHOUT ROWID`,
	`CREATE TABLE IF NOT EXISTS evidence_chunks (
		record_id TEXT NOT NULL, -- evidence_fulltexts.record_id
		n INTEGER NOT NULL, -- from 1 in reading order
		section TEXT NOT NULL DEFAULT '',
		text TEXT NOT NULL,
		PRIMARY KEY (record_id, n)
	) WITHOUT ROWID`,
}

// ImportOptions tunes Import.
type ImportOptions struct {
	// Format is the file's format; empty detects it (DetectFormat).
	Format Format
	// Record is the ID (or PMID) of the record a full text belongs to,
	// for a file holding one full text: needed when the file's name is not
	// the record's PMID or ID (12345678.txt, demo-12.txt for demo:12) and
	// for a JATS article without a PMID or DOI. Empty for files of
	// records.
	Record string
	// Progress receives the bytes read, at most every 1,000 records.
	Progress progress.Func
	// Logger records the finished import; nil logs nothing.
	Logger *slog.Logger
}

// ImportResult reports a finished import.
type ImportResult struct {
	// Path is the file imported.
	Path string
	// Format is the format it was read as.
	Format Format
	// Records is the number of records read.
	Records int64
	// Added is the number of records new to the corpus.
	Added int64
	// Updated is the number of records that replaced one with the same ID
	// (a later import of the same PMID wins).
	Updated int64
	// Bytes is the size of the file.
	Bytes int64
	// Duration is the wall time of the import.
	Duration time.Duration
	// FullTexts are the full texts the file held (JATS, plain text, PDF),
	// in file order; empty for a file of records.
	FullTexts []FullTextImport
}

// ImportError is a failed import: the file, and (through a wrapped
// *ParseError) the record and line. errors.Is sees context.Canceled.
type ImportError struct {
	// Path is the file being imported.
	Path string
	// Err is the cause.
	Err error
}

// Error formats the error as "import FILE record 3 (PMID 123) line 45:
// cause", or "import FILE: cause" when no record is concerned.
func (e *ImportError) Error() string {
	var pe *ParseError
	if errors.As(e.Err, &pe) && (pe.Record > 0 || pe.Line > 0) {
		return fmt.Sprintf("import %s %v", filepath.Base(e.Path), e.Err)
	}
	return fmt.Sprintf("import %s: %v", filepath.Base(e.Path), e.Err)
}

// Unwrap returns the cause.
func (e *ImportError) Unwrap() error { return e.Err }

// countingReader counts the bytes read.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// progressEvery is how many records pass between progress reports.
const progressEvery = 1000

// Import streams the literature file at path into the corpus tables of db
// (created when missing), in one transaction: on any error or cancellation
// nothing of the file is kept. Records whose ID (PMID, else DOI) is already
// in the corpus are replaced. Errors are *ImportError values that name the
// record and line.
//
// A full text (format JATS, PlainText or PDF) is split into numbered chunks
// (ChunkText, DefaultChunkChars) stored for its record, replacing the
// chunks of an earlier import; ImportResult.FullTexts lists them. A JATS
// article is matched to its record by PMID, else DOI, and a record missing
// from the corpus is created from the article's front matter. A plain text
// or PDF belongs to the record its file is named after (the PMID, or the
// record ID with "-" for ":": 12345678.txt, demo-12.pdf) or to
// ImportOptions.Record; a record missing from the corpus is an error.
func Import(ctx context.Context, db *sql.DB, path string, opts ImportOptions) (ImportResult, error) {
	start := time.Now()
	res, err := importFile(ctx, db, path, opts)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%v)", ctxErr, err)
		}
		var ie *ImportError
		if !errors.As(err, &ie) {
			err = &ImportError{Path: path, Err: err}
		}
		return ImportResult{}, err
	}
	res.Duration = time.Since(start)
	if opts.Logger != nil {
		opts.Logger.Info("imported literature", "file", filepath.Base(path), "format", res.Format,
			"records", res.Records, "added", res.Added, "updated", res.Updated, "full_texts", len(res.FullTexts), "duration", res.Duration)
	}
	return res, nil
}

func importFile(ctx context.Context, db *sql.DB, path string, opts ImportOptions) (ImportResult, error) {
	if err := ctx.Err(); err != nil {
		return ImportResult{}, err
	}
	f, fi, err := inputfile.Open(path) // a named pipe would block for ever
	if err != nil {
		return ImportResult{}, err
	}
	defer f.Close()
	size := fi.Size()
	cr := &countingReader{r: f}
	br := bufio.NewReaderSize(cr, 256<<10)
	format := opts.Format
	if format == "" {
		head, _ := br.Peek(4096)
		if format, err = DetectFormat(path, head); err != nil {
			return ImportResult{}, err
		}
	}
	stage := filepath.Base(path)
	report := func() {
		if opts.Progress != nil {
			opts.Progress(progress.Report{Stage: stage, Done: cr.n, Total: size, Unit: "bytes"})
		}
	}
	if format.IsFullText() {
		return importFullText(ctx, db, f, br, ImportResult{Path: path, Format: format, Bytes: size}, opts, report)
	}
	if opts.Record != "" {
		return ImportResult{}, fmt.Errorf("a record is given for the file, but it is a file of %s records, not a full text", format)
	}
	rr, err := NewReader(br, format)
	if err != nil {
		return ImportResult{}, err
	}
	report()

	w, err := beginWrite(ctx, db)
	if err != nil {
		return ImportResult{}, err
	}
	defer w.close(ctx)

	res := ImportResult{Path: path, Format: format, Bytes: size}
	for {
		rec, err := rr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			return ImportResult{}, &ImportError{Path: path, Err: err}
		}
		res.Records++
		// Each record is bounded (maxRecordBytes), so checking at each one
		// bounds the wait after a cancellation.
		if err := ctx.Err(); err != nil {
			return ImportResult{}, &ImportError{Path: path, Err: recordErr(int(res.Records), &rec, rec.Line, err)}
		}
		if res.Records%progressEvery == 0 {
			report()
		}
		rec.key(stage)
		if err := w.put(ctx, &rec, stage, &res); err != nil {
			return ImportResult{}, &ImportError{Path: path, Err: recordErr(int(res.Records), &rec, rec.Line, err)}
		}
	}
	if err := ctx.Err(); err != nil {
		return ImportResult{}, err
	}
	if err := w.commit(ctx); err != nil {
		return ImportResult{}, err
	}
	report()
	return res, nil
}

// corpusWriter writes records in one transaction on one connection.
type corpusWriter struct {
	conn      *sql.Conn
	st        map[string]*sql.Stmt
	committed bool
}

// beginWrite starts the write transaction (taking SQLite's write lock now),
// creates the corpus tables when missing and prepares the statements.
func beginWrite(ctx context.Context, db *sql.DB) (*corpusWriter, error) {
	conn, err := db.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("connecting to the database: %w", err)
	}
	w := &corpusWriter{conn: conn, st: map[string]*sql.Stmt{}}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		conn.Close()
		return nil, fmt.Errorf("beginning the transaction: %w", err)
	}
	fail := func(err error) (*corpusWriter, error) {
		w.close(ctx)
		return nil, err
	}
	for _, s := range schema {
		if _, err := conn.ExecContext(ctx, s); err != nil {
			return fail(fmt.Errorf("creating the corpus tables: %w", err))
		}
	}
	// A large page cache keeps the index merges of a big import in memory.
	if _, err := conn.ExecContext(ctx, "PRAGMA cache_size = -262144"); err != nil {
		return fail(fmt.Errorf("setting the cache size: %w", err))
	}
	const cols = `pmid, title, abstract, sections, mesh, publication_types, journal, year, authors, doi, keywords, source, source_line`
	for name, q := range map[string]string{
		"find":      `SELECT rowid, title, abstract, mesh FROM evidence_records WHERE id = ?`,
		"insert":    `INSERT INTO evidence_records (id, ` + cols + `) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		"update":    `UPDATE evidence_records SET (` + cols + `) = (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) WHERE id = ?`,
		"ftsInsert": `INSERT INTO evidence_fts (rowid, title, abstract, mesh) VALUES (?, ?, ?, ?)`,
		"ftsDelete": `INSERT INTO evidence_fts (evidence_fts, rowid, title, abstract, mesh) VALUES ('delete', ?, ?, ?, ?)`,
		"byPMID":    `SELECT id FROM evidence_records WHERE pmid = ? ORDER BY rowid LIMIT 1`,
		"byDOI":     `SELECT id FROM evidence_records WHERE doi = ? COLLATE NOCASE ORDER BY rowid LIMIT 1`,
		"textPut": `INSERT INTO evidence_fulltexts (record_id, source, format, imported) VALUES (?, ?, ?, ?)
			ON CONFLICT (record_id) DO UPDATE SET source = excluded.source, format = excluded.format, imported = excluded.imported`,
		"chunksDelete": `DELETE FROM evidence_chunks WHERE record_id = ?`,
		"chunkPut":     `INSERT INTO evidence_chunks (record_id, n, section, text) VALUES (?, ?, ?, ?)`,
	} {
		st, err := conn.PrepareContext(ctx, q)
		if err != nil {
			return fail(fmt.Errorf("preparing: %w", err))
		}
		w.st[name] = st
	}
	return w, nil
}

// commit ends the transaction, keeping what was written.
func (w *corpusWriter) commit(ctx context.Context) error {
	if _, err := w.conn.ExecContext(ctx, "COMMIT"); err != nil {
		return fmt.Errorf("committing: %w", err)
	}
	w.committed = true
	return nil
}

// close rolls back unless committed and releases the connection.
func (w *corpusWriter) close(ctx context.Context) {
	for _, st := range w.st {
		st.Close()
	}
	if !w.committed {
		_, _ = w.conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK")
	}
	w.conn.Close()
}

// put inserts a record, or replaces the one with the same ID, and keeps
// the FTS5 index in step.
func (w *corpusWriter) put(ctx context.Context, rec *Record, source string, res *ImportResult) error {
	st := w.st
	args := rowArgs(rec, source)
	var rowid int64
	var oldTitle, oldAbstract, oldMesh string
	switch err := st["find"].QueryRowContext(ctx, rec.ID).Scan(&rowid, &oldTitle, &oldAbstract, &oldMesh); {
	case errors.Is(err, sql.ErrNoRows):
		r, err := st["insert"].ExecContext(ctx, args...)
		if err != nil {
			return fmt.Errorf("storing: %w", err)
		}
		if rowid, err = r.LastInsertId(); err != nil {
			return fmt.Errorf("storing: %w", err)
		}
		res.Added++
	case err != nil:
		return fmt.Errorf("looking up %s: %w", rec.ID, err)
	default:
		if _, err := st["ftsDelete"].ExecContext(ctx, rowid, oldTitle, oldAbstract, oldMesh); err != nil {
			return fmt.Errorf("updating the index: %w", err)
		}
		if _, err := st["update"].ExecContext(ctx, append(args[1:], rec.ID)...); err != nil {
			return fmt.Errorf("storing: %w", err)
		}
		res.Updated++
	}
	// args: id, pmid, title, abstract, sections, mesh, ...
	if _, err := st["ftsInsert"].ExecContext(ctx, rowid, args[2], args[3], args[5]); err != nil {
		return fmt.Errorf("indexing: %w", err)
	}
	return nil
}

// rowArgs are the column values of a record for the insert statement.
func rowArgs(r *Record, source string) []any {
	var sec any
	if len(r.Sections) > 1 || len(r.Sections) == 1 && (r.Sections[0].Label != "" || r.Sections[0].Category != "") {
		// The texts are in the abstract column (Record.Abstract joins them);
		// only the headings are kept here.
		heads := make([]Section, len(r.Sections))
		for i, s := range r.Sections {
			heads[i] = Section{Label: s.Label, Category: s.Category}
		}
		b, _ := json.Marshal(heads) // cannot fail: strings only
		sec = string(b)
	}
	var year any
	if r.Year != 0 {
		year = r.Year
	}
	title := r.Title
	if title == "" {
		title = "[no title]"
	}
	return []any{r.ID, nullIfEmpty(r.PMID), title, r.Abstract(), sec, strings.Join(r.MeSH, "; "),
		strings.Join(r.PublicationTypes, "; "), nullIfEmpty(r.Journal), year, nullIfEmpty(strings.Join(r.Authors, "; ")),
		nullIfEmpty(r.DOI), nullIfEmpty(strings.Join(r.Keywords, "; ")), source, r.Line}
}

func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

package impression

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/inputfile"
	"github.com/clinsight/clinsight/internal/progress"
)

// ReportsTable is the corpus table in a database.
const ReportsTable = "radiology_reports"

// createReportsTable is the corpus schema: one row per report, its
// sections, its eligibility as an example and its 14 observation labels
// (1 positive, 0 negative, −1 uncertain, 2 blank), one column each.
func createReportsTable() string {
	var b strings.Builder
	b.WriteString(`CREATE TABLE IF NOT EXISTS ` + ReportsTable + ` (
  id INTEGER PRIMARY KEY,
  source TEXT NOT NULL,
  uid TEXT NOT NULL,
  findings TEXT NOT NULL,
  impression TEXT NOT NULL,
  eligible INTEGER NOT NULL,
  ineligible_reason TEXT,
  labeler TEXT NOT NULL,
`)
	for _, c := range observationColumns {
		fmt.Fprintf(&b, "  %s INTEGER NOT NULL CHECK (%s IN (-1, 0, 1, 2)),\n", c, c)
	}
	b.WriteString("  UNIQUE (source, uid)\n)")
	return b.String()
}

// ImportOptions tune Import.
type ImportOptions struct {
	// Replace deletes the reports already in the corpus, inside the
	// import's transaction (so a failed import keeps them). Without it the
	// new reports are added; a report whose source and uid are already
	// there makes the import fail.
	Replace bool
	// Source overrides the source name recorded for every report (default:
	// the file's name, or the archive member's path).
	Source string
	// Progress receives bytes read over the total size of the input.
	Progress progress.Func
	// Logger receives a summary line; nil logs nothing.
	Logger *slog.Logger
}

// ImportResult reports a finished import.
type ImportResult struct {
	// Path is the input (a file, a directory or an archive).
	Path string
	// Files is the number of files read.
	Files int
	// Reports is the number of reports added.
	Reports int64
	// Eligible is how many of them may serve as examples.
	Eligible int64
	// Positive counts the reports labelled positive per observation.
	Positive [NumObservations]int64
	// Total is the number of reports in the corpus after the import.
	Total int64
	// Duration is the wall time.
	Duration time.Duration
	// CutFields counts the fields longer than a report holds (over
	// 64 KB) that were cut, their stored text ending with " […]"; Cuts
	// notes the first 100 of them.
	CutFields int
	Cuts      []Cut
}

// progressEvery is how many reports pass between progress reports (the
// context is checked before each report and each read).
const progressEvery = 256

// Import reads reports from path into the corpus table of db (created when
// missing), labelling each and flagging the ones not eligible as examples.
// path is a CSV file (Open-i: uid,findings,impression, or a report column
// with whole texts), an Open-i XML file, a plain-text report (split by
// section headers), a directory of such files (read in name order), or a
// .tar/.tgz/.tar.gz archive of them. The whole import is one transaction:
// on an error or a cancellation nothing is added (and with Replace the old
// corpus stays). Errors are *datasets.ImportError values naming the file
// and, when it applies, the line.
func Import(ctx context.Context, db *sql.DB, path string, opts ImportOptions) (ImportResult, error) {
	start := time.Now()
	res := ImportResult{Path: path}
	files, total, err := listInputs(path)
	if err != nil {
		return res, &datasets.ImportError{Path: path, Err: err}
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return res, &datasets.ImportError{Path: path, Err: err}
	}
	defer tx.Rollback()
	if err := setupCorpus(ctx, tx, opts.Replace); err != nil {
		return res, &datasets.ImportError{Path: path, Err: err}
	}
	ins, err := tx.PrepareContext(ctx, insertSQL())
	if err != nil {
		return res, &datasets.ImportError{Path: path, Err: err}
	}
	defer ins.Close()

	var done int64
	report := func(stage string) {
		if opts.Progress != nil {
			opts.Progress(progress.Report{Stage: stage, Done: min(done, total), Total: total, Unit: "bytes"})
		}
	}
	for _, f := range files {
		res.Files++
		err := readInput(f, func(name string, r io.Reader) error {
			src := opts.Source
			if src == "" {
				src = name
			}
			cr := &countingReader{ctx: ctx, r: r, n: &done}
			return readReports(ctx, cr, name, formatOf(name), func(rr rawReport) error {
				rep := Report{Source: src, UID: rr.uid, Findings: rr.findings, Impression: rr.impression}
				rep.prepare()
				if err := insertReport(ctx, ins, rep); err != nil {
					if strings.Contains(err.Error(), "UNIQUE constraint failed") {
						return fmt.Errorf("report %q of %s is already in the corpus (import with Replace to reload it)", rep.UID, src)
					}
					return err
				}
				res.Reports++
				res.CutFields += len(rr.cuts)
				for _, c := range rr.cuts {
					if len(res.Cuts) < maxCutNotes {
						res.Cuts = append(res.Cuts, c)
					}
				}
				if rep.Eligible {
					res.Eligible++
				}
				for o, l := range rep.Labels {
					if l == Positive {
						res.Positive[o]++
					}
				}
				if res.Reports%progressEvery == 0 {
					report("import " + filepath.Base(name))
				}
				return nil
			})
		})
		if err != nil {
			return ImportResult{Path: path}, importError(ctx, f.path, err)
		}
		report("import " + filepath.Base(f.path))
	}
	if res.Reports == 0 {
		return ImportResult{Path: path}, &datasets.ImportError{Path: path, Err: errors.New("no reports found")}
	}
	if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM "+ReportsTable).Scan(&res.Total); err != nil {
		return ImportResult{Path: path}, importError(ctx, path, err)
	}
	if err := tx.Commit(); err != nil {
		return ImportResult{Path: path}, importError(ctx, path, err)
	}
	done = total
	report("imported")
	res.Duration = time.Since(start)
	if opts.Logger != nil {
		opts.Logger.Info("imported reports", "path", path, "files", res.Files, "reports", res.Reports,
			"eligible", res.Eligible, "corpus", res.Total, "duration", res.Duration)
	}
	return res, nil
}

// importError wraps err as a *datasets.ImportError for file, with the line
// when err carries one, and the cancellation visible to errors.Is.
func importError(ctx context.Context, file string, err error) error {
	ie := &datasets.ImportError{Path: file, Err: err}
	var le *csvLineError
	if errors.As(err, &le) {
		ie.Line, ie.Err = le.line, le.err
	}
	if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(ie.Err, ctxErr) {
		ie.Err = fmt.Errorf("%w (%v)", ctxErr, ie.Err)
	}
	return ie
}

// setupCorpus creates the corpus table and its indexes, emptying it for a
// replace.
func setupCorpus(ctx context.Context, tx *sql.Tx, replace bool) error {
	stmts := []string{createReportsTable(),
		"CREATE INDEX IF NOT EXISTS " + ReportsTable + "_eligible ON " + ReportsTable + " (eligible)"}
	if replace {
		stmts = append(stmts, "DELETE FROM "+ReportsTable)
	}
	for _, s := range stmts {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("prepare the %s table: %w", ReportsTable, err)
		}
	}
	return nil
}

// insertSQL inserts one report with its labels.
func insertSQL() string {
	cols := append([]string{"source", "uid", "findings", "impression", "eligible", "ineligible_reason", "labeler"}, observationColumns[:]...)
	return "INSERT INTO " + ReportsTable + " (" + strings.Join(cols, ", ") + ") VALUES (" +
		strings.TrimSuffix(strings.Repeat("?, ", len(cols)), ", ") + ")"
}

// execer is a prepared statement or a transaction.
type execer interface {
	ExecContext(ctx context.Context, args ...any) (sql.Result, error)
}

func insertReport(ctx context.Context, st execer, r Report) error {
	args := []any{r.Source, r.UID, r.Findings, r.Impression, boolInt(r.Eligible), nullString(r.IneligibleReason), LabelerVersion}
	for _, l := range r.Labels {
		args = append(args, int64(l))
	}
	_, err := st.ExecContext(ctx, args...)
	return err
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func nullString(s string) any {
	if s == "" {
		return nil
	}
	return s
}

// input is one file of an import.
type input struct {
	path string
	size int64
}

// listInputs lists the files an import reads (a directory's report files
// in name order) and their total size.
func listInputs(path string) ([]input, int64, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, 0, err
	}
	if !st.IsDir() {
		if err := inputfile.Regular(path, st); err != nil { // a named pipe would block for ever
			return nil, 0, err
		}
		if formatOf(path) == "" && !isArchive(path) {
			return nil, 0, fmt.Errorf("unsupported file type %q: import .csv, .xml, .txt files, a directory of them, or a .tgz/.tar.gz/.tar archive", filepath.Ext(path))
		}
		return []input{{path, st.Size()}}, st.Size(), nil
	}
	var files []input
	var total int64
	err = filepath.WalkDir(path, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() || strings.HasPrefix(d.Name(), ".") || (formatOf(p) == "" && !isArchive(p)) {
			return nil
		}
		info, err := os.Stat(p) // through a symbolic link
		if err != nil {
			return err
		}
		if !info.Mode().IsRegular() {
			return nil // a named pipe, a device, a link to a folder
		}
		files = append(files, input{p, info.Size()})
		total += info.Size()
		return nil
	})
	if err != nil {
		return nil, 0, err
	}
	if len(files) == 0 {
		return nil, 0, errors.New("the directory holds no .csv, .xml or .txt report files")
	}
	sort.Slice(files, func(i, j int) bool { return files[i].path < files[j].path })
	return files, total, nil
}

func isArchive(p string) bool {
	l := strings.ToLower(p)
	return strings.HasSuffix(l, ".tgz") || strings.HasSuffix(l, ".tar.gz") || strings.HasSuffix(l, ".tar")
}

// readInput opens one input and calls fn for it, or for each report file
// inside it when it is an archive.
func readInput(in input, fn func(name string, r io.Reader) error) error {
	f, err := os.Open(in.path)
	if err != nil {
		return err
	}
	defer f.Close()
	if isArchive(in.path) {
		return tarEntries(f, !strings.HasSuffix(strings.ToLower(in.path), ".tar"), fn)
	}
	return fn(filepath.Base(in.path), f)
}

// countingReader adds the bytes read to *n, and stops reading once ctx
// is done (a huge field being cut is read without a report to check it
// at).
type countingReader struct {
	ctx context.Context
	r   io.Reader
	n   *int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	k, err := c.r.Read(p)
	*c.n += int64(k)
	return k, err
}

// HasCorpus reports whether db holds a report corpus table.
func HasCorpus(ctx context.Context, db *sql.DB) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ?", ReportsTable).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("look for the report corpus: %w", err)
	}
	return n > 0, nil
}

// ErrNoCorpus is returned when a database has no report corpus.
// Front ends add how to import reports (the CLI its command).
var ErrNoCorpus = errors.New("this database has no report corpus: import radiology reports into it first")

// LoadReports reads every report of the corpus in db, in id order. Labels
// written by an older labeler are recomputed (in memory).
func LoadReports(ctx context.Context, db *sql.DB) ([]Report, error) {
	ok, err := HasCorpus(ctx, db)
	if err != nil {
		return nil, err
	}
	if !ok {
		return nil, ErrNoCorpus
	}
	q := "SELECT id, source, uid, findings, impression, eligible, coalesce(ineligible_reason, ''), labeler, " +
		strings.Join(observationColumns[:], ", ") + " FROM " + ReportsTable + " ORDER BY id"
	rows, err := db.QueryContext(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("read the report corpus: %w", err)
	}
	defer rows.Close()
	var out []Report
	var labels [NumObservations]int64
	dest := make([]any, 0, 8+NumObservations)
	for rows.Next() {
		var r Report
		var eligible int64
		var labeler string
		dest = append(dest[:0], &r.ID, &r.Source, &r.UID, &r.Findings, &r.Impression, &eligible, &r.IneligibleReason, &labeler)
		for i := range labels {
			dest = append(dest, &labels[i])
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("read the report corpus: %w", err)
		}
		r.Eligible = eligible != 0
		for i, v := range labels {
			r.Labels[i] = Label(v)
		}
		if labeler != LabelerVersion || !r.Labels.valid() {
			r.Labels = LabelText(r.Findings + "\n" + r.Impression)
		}
		out = append(out, r)
		if len(out)%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read the report corpus: %w", err)
	}
	return out, nil
}

// ReadReports reads reports from path (the inputs Import accepts) into
// memory, labelled and with their eligibility set, without a database.
// IDs are assigned in reading order from 1.
func ReadReports(ctx context.Context, path string) ([]Report, error) {
	files, _, err := listInputs(path)
	if err != nil {
		return nil, &datasets.ImportError{Path: path, Err: err}
	}
	var out []Report
	for _, f := range files {
		err := readInput(f, func(name string, r io.Reader) error {
			var n int64
			r = &countingReader{ctx: ctx, r: r, n: &n}
			return readReports(ctx, r, name, formatOf(name), func(rr rawReport) error {
				rep := Report{ID: int64(len(out) + 1), Source: name, UID: rr.uid, Findings: rr.findings, Impression: rr.impression}
				rep.prepare()
				out = append(out, rep)
				return nil
			})
		})
		if err != nil {
			return nil, importError(ctx, f.path, err)
		}
	}
	return out, nil
}

package demo

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/progress"
)

const (
	// DefaultSeed is the seed of DefaultOptions.
	DefaultSeed uint64 = 20150101
	// DefaultPatients is the number of hospital patients of DefaultOptions.
	DefaultPatients = 3000
	// MaxPatients bounds Options.Patients.
	MaxPatients = 100_000
	// Version identifies the generator's output: the same Seed, Patients
	// and Version give identical table contents. It changes whenever the
	// output for a given seed changes.
	Version = "1"
	// Generator names the generator in clinsight_metadata.
	Generator = "clinsight/datasets/demo"
	// CollectionStart is the first day of the hospital data (inclusive).
	CollectionStart = "2015-01-01"
	// CollectionEnd is the last day of the hospital data (inclusive): no
	// admission, discharge, death, lab result or prescription is later.
	CollectionEnd = "2024-12-31"
)

// ErrExists is returned when the output file exists and Options.Overwrite is
// not set.
var ErrExists = errors.New("output file already exists")

// Options configures Generate.
type Options struct {
	// Seed selects the pseudo-random streams; any value, including 0, is a
	// valid seed.
	Seed uint64
	// Patients is the number of synthetic hospital patients, from 1 to
	// MaxPatients. The imaging collections scale with it.
	Patients int
	// Overwrite allows replacing an existing file at the output path.
	Overwrite bool
	// Progress, when set, receives reports from the generating goroutine:
	// stages "reference", "clinical" (Unit "patients"), "imaging"
	// (Unit "patients") and "indexes".
	Progress progress.Func
}

// DefaultOptions returns the options of the standard demo workspace:
// DefaultSeed and DefaultPatients.
func DefaultOptions() Options {
	return Options{Seed: DefaultSeed, Patients: DefaultPatients}
}

// Validate reports whether the options can be used.
func (o Options) Validate() error {
	if o.Patients < 1 || o.Patients > MaxPatients {
		return fmt.Errorf("demo options: Patients must be between 1 and %d, got %d", MaxPatients, o.Patients)
	}
	return nil
}

// TableCount is the number of rows written to one table.
type TableCount struct {
	// Name is the table name.
	Name string
	// Rows is the number of rows written.
	Rows int64
}

// Summary describes a generated database.
type Summary struct {
	// Path is the database file written.
	Path string
	// Seed and Patients are the options used.
	Seed     uint64
	Patients int
	// Tables lists every table with its row count, in creation order.
	Tables []TableCount
	// Elapsed is the time Generate took, file handling included.
	Elapsed time.Duration
}

// Rows returns the row count of the named table, or -1 when it is not listed.
func (s Summary) Rows(table string) int64 {
	for _, t := range s.Tables {
		if t.Name == table {
			return t.Rows
		}
	}
	return -1
}

// String renders the summary as one line per table.
func (s Summary) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (seed %d, %d patients, %s)\n", s.Path, s.Seed, s.Patients, s.Elapsed.Round(time.Millisecond))
	for _, t := range s.Tables {
		fmt.Fprintf(&b, "  %-20s %9d rows\n", t.Name, t.Rows)
	}
	return b.String()
}

// Generate writes the demo database to path. The file is built under a
// temporary name in the same directory and renamed into place at the end, so
// an error or a cancelled ctx leaves neither a partial file at path nor a
// temporary file behind. An existing file at path is refused with ErrExists
// unless opts.Overwrite is set. Generate checks ctx between batches of rows.
func Generate(ctx context.Context, path string, opts Options) (Summary, error) {
	began := time.Now()
	if path == "" {
		return Summary{}, errors.New("generate demo database: empty path")
	}
	if err := opts.Validate(); err != nil {
		return Summary{}, fmt.Errorf("generate demo database %s: %w", path, err)
	}
	if !opts.Overwrite {
		if err := refuseExisting(path); err != nil {
			return Summary{}, fmt.Errorf("generate demo database: %w", err)
		}
	}
	dir := filepath.Dir(path)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Summary{}, fmt.Errorf("generate demo database: create directory %s: %w", dir, err)
	}
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".tmp-*")
	if err != nil {
		return Summary{}, fmt.Errorf("generate demo database: create temporary file: %w", err)
	}
	tmp := f.Name()
	if err := f.Close(); err != nil {
		removeDatabaseFiles(tmp)
		return Summary{}, fmt.Errorf("generate demo database: %w", err)
	}
	published := false
	defer func() {
		if !published {
			removeDatabaseFiles(tmp)
		}
	}()

	tables, err := build(ctx, tmp, opts)
	if err != nil {
		return Summary{}, fmt.Errorf("generate demo database %s: %w", path, err)
	}
	if err := ctx.Err(); err != nil {
		return Summary{}, fmt.Errorf("generate demo database %s: %w", path, err)
	}
	// CreateTemp made the file private; the workspace file is not secret
	// (synthetic data) and gets the usual permissions.
	if err := os.Chmod(tmp, 0o644); err != nil {
		return Summary{}, fmt.Errorf("generate demo database %s: %w", path, err)
	}
	if err := syncFile(tmp); err != nil {
		return Summary{}, fmt.Errorf("generate demo database %s: %w", path, err)
	}
	if err := publish(tmp, path, opts.Overwrite); err != nil {
		return Summary{}, fmt.Errorf("generate demo database: %w", err)
	}
	published = true
	return Summary{
		Path:     path,
		Seed:     opts.Seed,
		Patients: opts.Patients,
		Tables:   tables,
		Elapsed:  time.Since(began),
	}, nil
}

// refuseExisting returns ErrExists when something exists at path.
func refuseExisting(path string) error {
	_, err := os.Lstat(path)
	switch {
	case err == nil:
		return fmt.Errorf("%s: %w", path, ErrExists)
	case errors.Is(err, fs.ErrNotExist):
		return nil
	default:
		return fmt.Errorf("check %s: %w", path, err)
	}
}

// publish moves the finished temporary file to path. Without overwrite it
// uses a hard link, which fails rather than replace a file created in the
// meantime; where links are unsupported it checks again and renames.
func publish(tmp, path string, overwrite bool) error {
	if overwrite {
		if err := os.Rename(tmp, path); err != nil {
			return fmt.Errorf("move into place: %w", err)
		}
		return nil
	}
	err := os.Link(tmp, path)
	switch {
	case err == nil:
		if err := os.Remove(tmp); err != nil {
			return fmt.Errorf("remove temporary file: %w", err)
		}
		return nil
	case errors.Is(err, fs.ErrExist):
		return fmt.Errorf("%s: %w", path, ErrExists)
	}
	if err := refuseExisting(path); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("move into place: %w", err)
	}
	return nil
}

// syncFile flushes a closed file to stable storage before it is renamed.
func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return fmt.Errorf("sync: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	return nil
}

// removeDatabaseFiles deletes a database file and the journal files SQLite
// may have left beside it; missing files are not an error.
func removeDatabaseFiles(path string) {
	for _, suffix := range []string{"", "-journal", "-wal", "-shm"} {
		_ = os.Remove(path + suffix)
	}
}

// build writes every table into the (empty) file at path and closes it.
func build(ctx context.Context, path string, opts Options) (tables []TableCount, err error) {
	db, err := datasets.OpenReadWrite(ctx, path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close: %w", cerr)
		}
	}()
	// The file is private until renamed and is deleted on any failure, so
	// durability during the build buys nothing: keep the journal in memory
	// and skip fsyncs. DELETE mode afterwards leaves a plain file with no
	// WAL side files for readers.
	for _, p := range []string{
		"PRAGMA journal_mode=MEMORY",
		"PRAGMA synchronous=OFF",
		"PRAGMA temp_store=MEMORY",
	} {
		if _, err := db.ExecContext(ctx, p); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}

	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	w, err := newWriter(ctx, tx)
	if err != nil {
		return nil, err
	}
	defer w.close()
	if err := generateAll(ctx, w, opts); err != nil {
		return nil, preferCtx(ctx, err)
	}
	if err := w.flush(); err != nil {
		return nil, preferCtx(ctx, err)
	}
	report(opts.Progress, "indexes", 0, int64(len(indexSQL)), "indexes")
	for i, q := range indexSQL {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return nil, preferCtx(ctx, fmt.Errorf("create index: %w", err))
		}
		report(opts.Progress, "indexes", int64(i+1), int64(len(indexSQL)), "indexes")
	}
	w.close()
	if err := tx.Commit(); err != nil {
		return nil, preferCtx(ctx, fmt.Errorf("commit: %w", err))
	}
	if _, err := db.ExecContext(ctx, "PRAGMA journal_mode=DELETE"); err != nil {
		return nil, fmt.Errorf("journal mode: %w", err)
	}
	return w.counts(), nil
}

// generateAll writes the reference tables, the hospital patients and the
// imaging collections.
func generateAll(ctx context.Context, w *writer, opts Options) error {
	report(opts.Progress, "reference", 0, 3, "tables")
	if err := writeMetadata(w, opts); err != nil {
		return err
	}
	if err := writeDictionaries(w); err != nil {
		return err
	}
	report(opts.Progress, "reference", 3, 3, "tables")
	if err := newClinical(w, opts).run(ctx); err != nil {
		return err
	}
	img := newImaging(w, opts)
	if err := img.run(ctx); err != nil {
		return err
	}
	w.dicom.rows = img.instances
	return nil
}

// writeMetadata fills clinsight_metadata.
func writeMetadata(w *writer, opts Options) error {
	rows := [][2]string{
		{"collection_start", CollectionStart},
		{"collection_end", CollectionEnd},
		{"generator", Generator},
		{"version", Version},
		{"seed", strconv.FormatUint(opts.Seed, 10)},
		{"patients", strconv.Itoa(opts.Patients)},
		{"synthetic", "true"},
		{"description", "Synthetic demo data: no real patient. Hospital tables follow MIMIC-IV v2.2 hosp names and types with unshifted dates between collection_start and collection_end; dicom_all follows the Imaging Data Commons dicom_all table with one row per DICOM instance."},
		{"date_shift", "none: hospital dates are real calendar dates within the collection period"},
		{"icd10_start", icdTransition},
		{"imaging_granularity", "instance"},
		{"imaging_dates", "dicom_all.StudyDate follows each imaging collection's own acquisition period, outside the hospital collection period"},
	}
	for _, r := range rows {
		if err := w.metadata.insert(r[0], r[1]); err != nil {
			return err
		}
	}
	return nil
}

// writeDictionaries fills d_icd_diagnoses and d_labitems.
func writeDictionaries(w *writer) error {
	for _, list := range [][]diagCode{icd10Codes, icd9Codes} {
		for _, c := range list {
			if err := w.icd.insert(c.code, c.version, c.title); err != nil {
				return err
			}
		}
	}
	for _, it := range labItems {
		if err := w.labItems.insert(it.itemid, it.label, it.fluid, it.category); err != nil {
			return err
		}
	}
	return nil
}

// report sends a progress report when f is set.
func report(f progress.Func, stage string, done, total int64, unit string) {
	if f != nil {
		f(progress.Report{Stage: stage, Done: done, Total: total, Unit: unit})
	}
}

// preferCtx returns the context's error when it is done, since a cancelled
// transaction otherwise surfaces as an unhelpful "transaction has already
// been committed or rolled back".
func preferCtx(ctx context.Context, err error) error {
	if cerr := ctx.Err(); cerr != nil {
		return cerr
	}
	return err
}

// writer holds the prepared INSERTs of every table.
type writer struct {
	metadata, icd, labItems, patients, admissions, diagnoses, labEvents, prescriptions *inserter
	// dicom inserts a whole series per call (see dicomSeriesSQL).
	dicom *inserter
	all   []*inserter
}

// batchRows is the number of rows per multi-row INSERT: large enough to
// amortise the per-statement cost, small enough to stay far below SQLite's
// limit on bound parameters.
const batchRows = 64

// newWriter creates the schema in tx and prepares the inserts.
func newWriter(ctx context.Context, tx *sql.Tx) (w *writer, err error) {
	for _, q := range schemaSQL {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("create schema: %w", err)
		}
	}
	w = &writer{}
	defer func() {
		if err != nil {
			w.close()
		}
	}()
	prepare := func(name, q string) (*sql.Stmt, error) {
		stmt, err := tx.PrepareContext(ctx, q)
		if err != nil {
			return nil, fmt.Errorf("prepare insert into %s: %w", name, err)
		}
		return stmt, nil
	}
	for _, t := range tableColumns {
		in := &inserter{table: t.name, cols: t.cols}
		w.all = append(w.all, in)
		if t.name == tableDicomAll {
			// One row of arguments describes a series; SQLite expands it
			// into one row per instance.
			in.cols = dicomSeriesArgs
			if in.one, err = prepare(t.name, dicomSeriesSQL); err != nil {
				return nil, err
			}
			w.dicom = in
			continue
		}
		row := "(" + strings.TrimSuffix(strings.Repeat("?,", t.cols), ",") + ")"
		head := "INSERT INTO " + datasets.QuoteIdent(t.name) + " VALUES "
		if in.one, err = prepare(t.name, head+row); err != nil {
			return nil, err
		}
		if in.many, err = prepare(t.name, head+strings.TrimSuffix(strings.Repeat(row+",", batchRows), ",")); err != nil {
			return nil, err
		}
		in.pending = make([]any, 0, t.cols*batchRows)
		switch t.name {
		case tableMetadata:
			w.metadata = in
		case tableICDDiagnoses:
			w.icd = in
		case tableLabItems:
			w.labItems = in
		case tablePatients:
			w.patients = in
		case tableAdmissions:
			w.admissions = in
		case tableDiagnoses:
			w.diagnoses = in
		case tableLabEvents:
			w.labEvents = in
		case tablePrescriptions:
			w.prescriptions = in
		}
	}
	return w, nil
}

// flush writes every pending row.
func (w *writer) flush() error {
	for _, in := range w.all {
		if err := in.flush(); err != nil {
			return err
		}
	}
	return nil
}

// close releases the prepared statements; it may be called more than once.
func (w *writer) close() {
	for _, in := range w.all {
		for _, st := range []**sql.Stmt{&in.one, &in.many} {
			if *st != nil {
				_ = (*st).Close()
				*st = nil
			}
		}
	}
}

// counts returns the rows written per table.
func (w *writer) counts() []TableCount {
	out := make([]TableCount, 0, len(w.all))
	for _, in := range w.all {
		out = append(out, TableCount{Name: in.table, Rows: in.rows})
	}
	return out
}

// inserter writes the rows of one table in batches and counts them.
type inserter struct {
	table string
	cols  int
	// one inserts a single row, many inserts batchRows rows; many is nil
	// for dicom_all, whose statement expands a series itself.
	one, many *sql.Stmt
	pending   []any
	rows      int64
}

// insert queues one row and writes a batch when one is full. Statements run
// without a per-statement context, which would cost a goroutine per call in
// the driver; callers check the context between batches and the
// transaction itself is bound to it.
func (in *inserter) insert(args ...any) error {
	if len(args) != in.cols {
		return fmt.Errorf("insert into %s: %d values for %d columns", in.table, len(args), in.cols)
	}
	if in.many == nil {
		if _, err := in.one.Exec(args...); err != nil {
			return fmt.Errorf("insert into %s: %w", in.table, err)
		}
		in.rows++
		return nil
	}
	in.pending = append(in.pending, args...)
	in.rows++
	if len(in.pending) == cap(in.pending) {
		if _, err := in.many.Exec(in.pending...); err != nil {
			return fmt.Errorf("insert into %s: %w", in.table, err)
		}
		in.pending = in.pending[:0]
	}
	return nil
}

// flush writes the rows still queued.
func (in *inserter) flush() error {
	for len(in.pending) > 0 {
		if _, err := in.one.Exec(in.pending[:in.cols]...); err != nil {
			return fmt.Errorf("insert into %s: %w", in.table, err)
		}
		in.pending = in.pending[in.cols:]
	}
	in.pending = in.pending[:0]
	return nil
}

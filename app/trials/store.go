package trials

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"sync/atomic"
	"time"

	"github.com/clinsight/clinsight/internal/progress"
	"golang.org/x/sync/errgroup"
)

// The tables trials live in: trials (one row per trial; doc is the FTS
// rowid), trial_criteria (one row per criterion) and trials_fts, an FTS5
// index (contentless: the text lives in trials) with the columns
// conditions, interventions, keywords (with the MeSH terms), title,
// summary (with the description) and inclusion criteria, weighted by
// [Options.ColumnWeights].

// schemaSQL creates the trial tables when missing.
var schemaSQL = []string{
	// Short columns first: the ranking reads them for thousands of
	// candidates, and SQLite then never touches the long texts at the end
	// of the record (or their overflow pages).
	`CREATE TABLE IF NOT EXISTS trials (
		doc INTEGER PRIMARY KEY,
		id TEXT NOT NULL UNIQUE,
		title TEXT NOT NULL DEFAULT '',
		conditions TEXT NOT NULL DEFAULT '[]',
		interventions TEXT NOT NULL DEFAULT '[]',
		sex TEXT NOT NULL DEFAULT 'all',
		min_age REAL,
		max_age REAL,
		demographics_inferred INTEGER NOT NULL DEFAULT 0,
		status TEXT NOT NULL DEFAULT '',
		phase TEXT NOT NULL DEFAULT '',
		source TEXT NOT NULL DEFAULT '',
		keywords TEXT NOT NULL DEFAULT '[]',
		mesh_terms TEXT NOT NULL DEFAULT '[]',
		summary TEXT NOT NULL DEFAULT '',
		description TEXT NOT NULL DEFAULT ''
	)`,
	`CREATE TABLE IF NOT EXISTS trial_criteria (
		trial_id TEXT NOT NULL,
		kind TEXT NOT NULL CHECK (kind IN ('inclusion', 'exclusion')),
		idx INTEGER NOT NULL,
		text TEXT NOT NULL,
		PRIMARY KEY (trial_id, kind, idx)
	) WITHOUT ROWID`,
	`CREATE VIRTUAL TABLE IF NOT EXISTS trials_fts USING fts5(
		conditions, interventions, keywords, title, summary, criteria,
		content='', contentless_delete=1,
		tokenize='porter unicode61 remove_diacritics 2'
	)`,
}

// EnsureSchema creates the trial tables in db when they are missing.
func EnsureSchema(ctx context.Context, db *sql.DB) error {
	for _, s := range schemaSQL {
		if _, err := db.ExecContext(ctx, s); err != nil {
			return fmt.Errorf("create trial tables: %w", err)
		}
	}
	return nil
}

// HasTrials reports whether db holds the trial tables (read-only check).
func HasTrials(ctx context.Context, db *sql.DB) (bool, error) {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name IN ('trials', 'trials_fts')`).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("inspect trial tables: %w", err)
	}
	return n == 2, nil
}

// ImportOptions configure [Import].
type ImportOptions struct {
	// Replace deletes every trial already in the database first; otherwise
	// trials are added, and a trial whose id is already there is replaced.
	Replace bool
	// Progress, if set, receives the bytes read out of the total input size
	// (Unit "bytes"), then the index optimisation stage.
	Progress progress.Func
	// Logger receives a summary line; nil discards.
	Logger *slog.Logger
}

// ImportResult summarises an import.
type ImportResult struct {
	// Trials is the number of trial records imported; Replaced counts
	// those that replaced a trial of the same id.
	Trials, Replaced int
	// Criteria is the number of eligibility criteria stored.
	Criteria int
	// Files is the number of record files read (zip members count).
	Files int
	// Total is the number of trials in the database afterwards.
	Total int
	// IndexBytes is the size of the FTS5 index.
	IndexBytes int64
	// Elapsed is the whole import; IndexTime the final index optimisation
	// (the index is otherwise built while the records are inserted).
	Elapsed, IndexTime time.Duration
	// CutFields is the number of fields cut to their bound (a text longer
	// than any a registry allows, a list of thousands of items); Cuts
	// describes the first of them (at most 100).
	CutFields int
	Cuts      []Cut
}

// Import reads the trials of paths (ClinicalTrials.gov classic XML or API
// v2 JSON files, TrialGPT or BIRCO JSONL files, directories and zip
// archives of them) into db, streaming, in one transaction: a failure or
// cancellation leaves the database as it was. Errors name the file, line
// and trial id ([*RecordError]).
func Import(ctx context.Context, db *sql.DB, paths []string, opts ImportOptions) (ImportResult, error) {
	start := time.Now()
	var res ImportResult
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return res, fmt.Errorf("import trials: %w", err)
	}
	defer tx.Rollback()
	for _, s := range schemaSQL {
		if _, err := tx.ExecContext(ctx, s); err != nil {
			return res, fmt.Errorf("create trial tables: %w", err)
		}
	}
	if opts.Replace {
		for _, s := range []string{
			`DELETE FROM trials`, `DELETE FROM trial_criteria`,
			`INSERT INTO trials_fts(trials_fts) VALUES ('delete-all')`,
		} {
			if _, err := tx.ExecContext(ctx, s); err != nil {
				return res, fmt.Errorf("import trials: clear existing trials: %w", err)
			}
		}
	}
	w, err := newTrialWriter(ctx, tx)
	if err != nil {
		return res, err
	}
	defer w.close()
	if err := setFTSConfig(ctx, tx, ftsBulkLoad); err != nil {
		return res, err
	}

	var read atomic.Int64
	var total int64
	lastReport := time.Time{}
	report := func(force bool) {
		if opts.Progress == nil || (!force && time.Since(lastReport) < 100*time.Millisecond) {
			return
		}
		lastReport = time.Now()
		opts.Progress(progress.Report{Stage: fmt.Sprintf("Importing trials (%d so far)", res.Trials), Done: read.Load(), Total: total, Unit: "bytes"})
	}
	inputs, err := listInputs(paths)
	if err != nil {
		return res, err
	}
	for _, in := range inputs {
		total += in.size
	}
	// The records are parsed on every core; this goroutine is the one
	// writer, storing them batch by batch in reading order.
	files := 0
	err = readParallel(ctx, runtime.GOMAXPROCS(0), func(ctx context.Context, sink recordSink) error {
		for _, in := range inputs {
			n, err := readFileTo(ctx, in.path, &read, nil, sink)
			files += n
			if err != nil {
				return err
			}
		}
		return nil
	}, func(batch []parsed) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		// The records before the first one that failed are stored, then
		// its error stops the import.
		var perr error
		for i, p := range batch {
			if p.err != nil {
				batch, perr = batch[:i], p.err
				break
			}
		}
		replaced, err := w.putBatch(ctx, batch)
		if err != nil {
			if cerr := ctx.Err(); cerr != nil {
				// A cancellation closes the transaction's statements
				// under the insert: report the cancellation.
				return fmt.Errorf("%w (%v)", cerr, err)
			}
			return err
		}
		res.Replaced += replaced
		for _, p := range batch {
			res.CutFields += len(p.cuts)
			for _, c := range p.cuts {
				if len(res.Cuts) < maxCutNotes {
					res.Cuts = append(res.Cuts, c)
				}
			}
			res.Trials++
			res.Criteria += len(p.t.Inclusion) + len(p.t.Exclusion)
		}
		report(false)
		return perr
	})
	res.Files = files
	if err != nil {
		return ImportResult{}, wrapCancel(err)
	}
	report(true)
	if opts.Progress != nil {
		opts.Progress(progress.Report{Stage: "Optimising the search index", Done: total, Total: total, Unit: "bytes"})
	}
	idxStart := time.Now()
	if _, err := tx.ExecContext(ctx, `INSERT INTO trials_fts(trials_fts) VALUES ('optimize')`); err != nil {
		return ImportResult{}, wrapCancel(fmt.Errorf("import trials: optimise the index: %w", err))
	}
	res.IndexTime = time.Since(idxStart)
	if err := setFTSConfig(ctx, tx, ftsDefaults); err != nil {
		return ImportResult{}, wrapCancel(err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM trials`).Scan(&res.Total); err != nil {
		return ImportResult{}, fmt.Errorf("import trials: %w", err)
	}
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(sum(length(block)), 0) FROM trials_fts_data`).Scan(&res.IndexBytes); err != nil {
		return ImportResult{}, fmt.Errorf("import trials: index size: %w", err)
	}
	w.close()
	if err := tx.Commit(); err != nil {
		return ImportResult{}, wrapCancel(fmt.Errorf("import trials: commit: %w", err))
	}
	res.Elapsed = time.Since(start)
	if opts.Logger != nil {
		opts.Logger.Info("trials imported", "trials", res.Trials, "replaced", res.Replaced, "files", res.Files,
			"total", res.Total, "index_bytes", res.IndexBytes, "elapsed_ms", res.Elapsed.Milliseconds(), "index_ms", res.IndexTime.Milliseconds(),
			"cut_fields", res.CutFields)
		for _, c := range res.Cuts {
			opts.Logger.Warn("trial field cut at import", "file", c.File, "line", c.Line, "id", c.ID, "field", c.Field, "bytes", c.Bytes, "kept", c.Kept)
		}
	}
	return res, nil
}

// wrapCancel makes a cancellation recognisable whatever wrapped it.
func wrapCancel(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("import trials cancelled; nothing was imported: %w", err)
	}
	return err
}

// FTS5 settings of the trial index. A bulk load keeps up to 64 MB of
// pending terms in memory (FTS5's default: 1 MB) and does not merge index
// segments as it goes (automerge 0; crisismerge 64 only bounds how many
// pile up at one level): the final 'optimize' merges them all once, instead
// of rewriting the growing index again and again. Tuned on BenchmarkScale's
// synthetic trials; the defaults are restored before the import commits,
// so that later small imports merge as usual.
var (
	ftsBulkLoad = []ftsSetting{{"hashsize", 64 << 20}, {"automerge", 0}, {"crisismerge", 64}}
	ftsDefaults = []ftsSetting{{"hashsize", 1 << 20}, {"automerge", 4}, {"crisismerge", 16}}
)

// ftsSetting is an FTS5 configuration option and its value.
type ftsSetting struct {
	name  string
	value int
}

// setFTSConfig sets options of the trial index.
func setFTSConfig(ctx context.Context, tx *sql.Tx, settings []ftsSetting) error {
	for _, s := range settings {
		if _, err := tx.ExecContext(ctx, `INSERT INTO trials_fts(trials_fts, rank) VALUES (?, ?)`, s.name, s.value); err != nil {
			return fmt.Errorf("import trials: set the search index's %s: %w", s.name, err)
		}
	}
	return nil
}

// trialWriter stores trials batch by batch through prepared statements:
// one query finds which trials of a batch are already stored, and rows go
// in with multi-row inserts. Trials get their doc numbers here, above
// every doc stored, so that the search index rows can go in without
// reading them back.
type trialWriter struct {
	nextDoc              int64
	find                 *sql.Stmt // findIDs ids, padded by repeating the last
	del, delCrit, delFTS *sql.Stmt
	trials, crit, fts    *multiInsert
	args                 []any
}

// findIDs is the number of ids the existence query takes.
const findIDs = batchRecords

func newTrialWriter(ctx context.Context, tx *sql.Tx) (*trialWriter, error) {
	w := &trialWriter{}
	if err := tx.QueryRowContext(ctx, `SELECT coalesce(max(doc), 0) + 1 FROM trials`).Scan(&w.nextDoc); err != nil {
		return nil, fmt.Errorf("import trials: %w", err)
	}
	for _, p := range []struct {
		st  **sql.Stmt
		sql string
	}{
		{&w.find, `SELECT id, doc FROM trials WHERE id IN (` + strings.TrimSuffix(strings.Repeat("?,", findIDs), ",") + `)`},
		{&w.del, `DELETE FROM trials WHERE doc = ?`},
		{&w.delCrit, `DELETE FROM trial_criteria WHERE trial_id = ?`},
		{&w.delFTS, `DELETE FROM trials_fts WHERE rowid = ?`},
	} {
		st, err := tx.PrepareContext(ctx, p.sql)
		if err != nil {
			w.close()
			return nil, fmt.Errorf("import trials: prepare: %w", err)
		}
		*p.st = st
	}
	var err error
	// OR FAIL: a multi-row insert that may abort halfway keeps a
	// statement journal to undo its own rows; a failure here rolls the
	// whole import back anyway. The search index takes one row per
	// statement: FTS5 writes its pending terms to disk at the start of
	// every statement that needs a statement journal, which a multi-row
	// insert into a virtual table always does.
	if w.trials, err = newMultiInsert(ctx, tx, `INSERT OR FAIL INTO trials (doc, id, title, conditions, interventions, keywords, mesh_terms,
		summary, description, sex, min_age, max_age, demographics_inferred, status, phase, source) VALUES `, 16, 32, 8, 1); err == nil {
		if w.crit, err = newMultiInsert(ctx, tx, `INSERT OR FAIL INTO trial_criteria (trial_id, kind, idx, text) VALUES `, 4, 128, 16, 1); err == nil {
			w.fts, err = newMultiInsert(ctx, tx, `INSERT INTO trials_fts (rowid, conditions, interventions, keywords, title, summary, criteria) VALUES `, 7, 1)
		}
	}
	if err != nil {
		w.close()
		return nil, fmt.Errorf("import trials: prepare: %w", err)
	}
	return w, nil
}

func (w *trialWriter) close() {
	for _, st := range []*sql.Stmt{w.find, w.del, w.delCrit, w.delFTS} {
		if st != nil {
			st.Close()
		}
	}
	for _, m := range []*multiInsert{w.trials, w.crit, w.fts} {
		m.close()
	}
	*w = trialWriter{}
}

// putBatch stores the trials of a batch, in order: a trial replaces a
// stored one of the same id, or an earlier one of the batch. It returns
// how many trials replaced another. An error names the batch's first
// file and its trials.
func (w *trialWriter) putBatch(ctx context.Context, batch []parsed) (replaced int, err error) {
	if len(batch) == 0 {
		return 0, nil
	}
	fail := func(err error) error {
		return &RecordError{File: batch[0].t.Source, Err: fmt.Errorf("storing trials %s to %s: %w", batch[0].t.ID, batch[len(batch)-1].t.ID, err)}
	}
	// The last record of each id is stored; earlier ones are replaced by
	// it.
	last := make(map[string]int, len(batch))
	ids := make([]string, 0, len(batch))
	for i := range batch {
		id := batch[i].t.ID
		if _, dup := last[id]; !dup {
			ids = append(ids, id)
		}
		last[id] = i
	}
	replaced = len(batch) - len(ids)
	stored, err := w.findStored(ctx, ids)
	if err != nil {
		return 0, fail(err)
	}
	for id, doc := range stored {
		replaced++
		if _, err := w.delFTS.ExecContext(ctx, doc); err != nil {
			return 0, fail(err)
		}
		if _, err := w.del.ExecContext(ctx, doc); err != nil {
			return 0, fail(err)
		}
		if _, err := w.delCrit.ExecContext(ctx, id); err != nil {
			return 0, fail(err)
		}
	}
	docs := make([]int64, len(batch))
	args := w.args[:0]
	for i := range batch {
		if last[batch[i].t.ID] != i {
			continue
		}
		p := &batch[i]
		if p.row == nil {
			p.row = newStoredRow(&p.t)
		}
		t, l := &p.t, &p.row.lists
		docs[i] = w.nextDoc
		w.nextDoc++
		args = append(args, docs[i], t.ID, t.Title, l[0], l[1], l[2], l[3], t.Summary, t.Description, string(t.Sex),
			nullIfZero(t.MinAge), nullIfZero(t.MaxAge), t.DemographicsInferred, t.Status, t.Phase, t.Source)
	}
	if err := w.trials.exec(ctx, args); err != nil {
		return 0, fail(err)
	}
	args = args[:0]
	for i := range batch {
		if docs[i] == 0 {
			continue
		}
		t := &batch[i].t
		for j, c := range t.Inclusion {
			args = append(args, t.ID, string(Inclusion), j+1, c)
		}
		for j, c := range t.Exclusion {
			args = append(args, t.ID, string(Exclusion), j+1, c)
		}
	}
	if err := w.crit.exec(ctx, args); err != nil {
		return 0, fail(err)
	}
	args = args[:0]
	for i := range batch {
		if docs[i] == 0 {
			continue
		}
		f := &batch[i].row.fts
		args = append(args, docs[i], f[0], f[1], f[2], f[3], f[4], f[5])
	}
	if err := w.fts.exec(ctx, args); err != nil {
		return 0, fail(err)
	}
	clear(args) // no references kept to the batch's texts
	w.args = args[:0]
	return replaced, nil
}

// put stores one trial, replacing one of the same id.
func (w *trialWriter) put(ctx context.Context, t *Trial) (replaced bool, err error) {
	n, err := w.putBatch(ctx, []parsed{{t: *t}})
	return n > 0, err
}

// findStored returns the docs of the trials among ids already stored.
func (w *trialWriter) findStored(ctx context.Context, ids []string) (map[string]int64, error) {
	out := map[string]int64{}
	args := make([]any, findIDs)
	for start := 0; start < len(ids); start += findIDs {
		chunk := ids[start:min(start+findIDs, len(ids))]
		for i := range args {
			args[i] = chunk[min(i, len(chunk)-1)]
		}
		rows, err := w.find.QueryContext(ctx, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var id string
			var doc int64
			if err := rows.Scan(&id, &doc); err != nil {
				rows.Close()
				return nil, err
			}
			out[id] = doc
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// multiInsert inserts rows of cols values with prepared multi-row INSERT
// statements of a few sizes (the largest first, down to one row).
type multiInsert struct {
	cols  int
	sizes []int
	stmts []*sql.Stmt
}

func newMultiInsert(ctx context.Context, tx *sql.Tx, head string, cols int, sizes ...int) (*multiInsert, error) {
	m := &multiInsert{cols: cols, sizes: sizes}
	row := "(" + strings.TrimSuffix(strings.Repeat("?,", cols), ",") + ")"
	for _, n := range sizes {
		st, err := tx.PrepareContext(ctx, head+strings.TrimSuffix(strings.Repeat(row+",", n), ","))
		if err != nil {
			m.close()
			return nil, err
		}
		m.stmts = append(m.stmts, st)
	}
	return m, nil
}

// exec inserts the rows whose values are args, row after row.
func (m *multiInsert) exec(ctx context.Context, args []any) error {
	for k, n := range m.sizes {
		for per := n * m.cols; len(args) >= per; args = args[per:] {
			if _, err := m.stmts[k].ExecContext(ctx, args[:per]...); err != nil {
				return err
			}
		}
	}
	return nil
}

func (m *multiInsert) close() {
	if m == nil {
		return
	}
	for _, st := range m.stmts {
		st.Close()
	}
}

// ftsFields returns a trial's text per FTS column: conditions,
// interventions, keywords and MeSH terms, title, summary and description,
// inclusion criteria (exclusions are not indexed: a patient who has what a
// trial excludes must not match it).
func ftsFields(t *Trial) [6]string {
	return [6]string{
		strings.Join(t.Conditions, " ; "),
		strings.Join(t.Interventions, " ; "),
		strings.Join(append(append([]string(nil), t.Keywords...), t.MeSH...), " ; "),
		t.Title,
		strings.TrimSpace(t.Summary + "\n" + t.Description),
		strings.Join(t.Inclusion, "\n"),
	}
}

// storedRow holds a trial's values that take work to compute: its lists
// as JSON and its search index fields. The parsing workers compute them,
// so that the one writer only binds them.
type storedRow struct {
	lists [4]string // conditions, interventions, keywords, MeSH terms
	fts   [6]string
}

func newStoredRow(t *Trial) *storedRow {
	return &storedRow{
		lists: [4]string{jsonList(t.Conditions), jsonList(t.Interventions), jsonList(t.Keywords), jsonList(t.MeSH)},
		fts:   ftsFields(t),
	}
}

// jsonList renders items as a JSON array, as json.Marshal does; lists of
// plain ASCII strings (nearly all) are written directly.
func jsonList(items []string) string {
	if len(items) == 0 {
		return "[]"
	}
	n := 2
	for _, it := range items {
		if !plainJSON(it) {
			b, _ := json.Marshal(items)
			return string(b)
		}
		n += len(it) + 3
	}
	var b strings.Builder
	b.Grow(n)
	b.WriteByte('[')
	for i, it := range items {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		b.WriteString(it)
		b.WriteByte('"')
	}
	b.WriteByte(']')
	return b.String()
}

// plainJSON reports whether json.Marshal writes s as it is between quotes:
// printable ASCII without the characters it escapes.
func plainJSON(s string) bool {
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c < 0x20 || c >= 0x7f, c == '"', c == '\\', c == '<', c == '>', c == '&':
			return false
		}
	}
	return true
}

func nullIfZero(f float64) any {
	if f == 0 {
		return nil
	}
	return f
}

// trialColumns is the SELECT list scanTrial reads.
const trialColumns = `doc, id, title, conditions, interventions, keywords, mesh_terms, summary, description,
	sex, coalesce(min_age, 0), coalesce(max_age, 0), demographics_inferred, status, phase, source`

// scanTrial reads a row of trialColumns.
func scanTrial(sc interface{ Scan(...any) error }) (int64, Trial, error) {
	var t Trial
	var doc int64
	var cond, iv, kw, mesh, sex string
	err := sc.Scan(&doc, &t.ID, &t.Title, &cond, &iv, &kw, &mesh, &t.Summary, &t.Description,
		&sex, &t.MinAge, &t.MaxAge, &t.DemographicsInferred, &t.Status, &t.Phase, &t.Source)
	if err != nil {
		return 0, t, err
	}
	t.Sex = Sex(sex)
	for _, p := range []struct {
		raw string
		dst *[]string
	}{{cond, &t.Conditions}, {iv, &t.Interventions}, {kw, &t.Keywords}, {mesh, &t.MeSH}} {
		if err := json.Unmarshal([]byte(p.raw), p.dst); err != nil {
			return 0, t, fmt.Errorf("trial %s: corrupt list %q: %w", t.ID, p.raw, err)
		}
	}
	return doc, t, nil
}

// loadTrials reads the trials with the given docs (without criteria).
func loadTrials(ctx context.Context, db *sql.DB, docs []int64) (map[int64]*Trial, error) {
	return loadTrialColumns(ctx, db, docs, trialColumns, scanTrial)
}

// lightColumns are what the ranking needs of its candidates: no keywords,
// MeSH terms or long texts, except the opening of the summary of trials
// that have no condition, intervention or title (their STS items come
// from it).
const lightColumns = `doc, id, title, conditions, interventions, sex, coalesce(min_age, 0), coalesce(max_age, 0), status,
	CASE WHEN title = '' AND conditions = '[]' AND interventions = '[]' THEN substr(summary || char(10) || description, 1, 3000) ELSE '' END`

// scanLight reads a row of lightColumns.
func scanLight(sc interface{ Scan(...any) error }) (int64, Trial, error) {
	var t Trial
	var doc int64
	var cond, iv, sex string
	if err := sc.Scan(&doc, &t.ID, &t.Title, &cond, &iv, &sex, &t.MinAge, &t.MaxAge, &t.Status, &t.Summary); err != nil {
		return 0, t, err
	}
	t.Sex = Sex(sex)
	var err error
	if t.Conditions, err = parseStringList(cond); err == nil {
		t.Interventions, err = parseStringList(iv)
	}
	if err != nil {
		return 0, t, fmt.Errorf("trial %s: %w", t.ID, err)
	}
	return doc, t, nil
}

// parseStringList decodes a JSON array of strings, quickly for the
// common case of strings without escapes.
func parseStringList(raw string) ([]string, error) {
	if raw == "[]" || raw == "" {
		return nil, nil
	}
	if !strings.Contains(raw, `\`) && strings.HasPrefix(raw, `["`) && strings.HasSuffix(raw, `"]`) {
		return strings.Split(raw[2:len(raw)-2], `","`), nil
	}
	var out []string
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("corrupt list %q: %w", raw, err)
	}
	return out, nil
}

// loadTrialsLight reads the candidates' lightColumns.
func loadTrialsLight(ctx context.Context, db *sql.DB, docs []int64) (map[int64]*Trial, error) {
	return loadTrialColumns(ctx, db, docs, lightColumns, scanLight)
}

func loadTrialColumns(ctx context.Context, db *sql.DB, docs []int64, columns string,
	scan func(interface{ Scan(...any) error }) (int64, Trial, error)) (map[int64]*Trial, error) {
	// Chunks of 500 trials, read in parallel on the pool's connections
	// (the ranking reads 2,000 candidates).
	const chunk = 500
	parts := make([][]*Trial, (len(docs)+chunk-1)/chunk)
	partDocs := make([][]int64, len(parts))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers())
	for i := range parts {
		ids := docs[i*chunk : min((i+1)*chunk, len(docs))]
		g.Go(func() error {
			rows, err := db.QueryContext(gctx, `SELECT `+columns+` FROM trials WHERE doc IN (`+intList(ids)+`)`)
			if err != nil {
				return fmt.Errorf("load trials: %w", err)
			}
			defer rows.Close()
			for rows.Next() {
				doc, t, err := scan(rows)
				if err != nil {
					return fmt.Errorf("load trials: %w", err)
				}
				parts[i] = append(parts[i], &t)
				partDocs[i] = append(partDocs[i], doc)
			}
			if err := rows.Err(); err != nil {
				return fmt.Errorf("load trials: %w", err)
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, err
	}
	out := make(map[int64]*Trial, len(docs))
	for i := range parts {
		for j, t := range parts[i] {
			out[partDocs[i][j]] = t
		}
	}
	return out, nil
}

// loadCriteria fills in the criteria of trials.
func loadCriteria(ctx context.Context, db *sql.DB, ts []*Trial) error {
	byID := make(map[string]*Trial, len(ts))
	var ids []string
	for _, t := range ts {
		t.Inclusion, t.Exclusion = nil, nil
		byID[t.ID] = t
		ids = append(ids, t.ID)
	}
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		rows, err := db.QueryContext(ctx, `SELECT trial_id, kind, text FROM trial_criteria WHERE trial_id IN (`+
			strings.TrimSuffix(strings.Repeat("?,", len(chunk)), ",")+`) ORDER BY trial_id, kind, idx`, args...)
		if err != nil {
			return fmt.Errorf("load criteria: %w", err)
		}
		for rows.Next() {
			var id, kind, text string
			if err := rows.Scan(&id, &kind, &text); err != nil {
				rows.Close()
				return fmt.Errorf("load criteria: %w", err)
			}
			t := byID[id]
			if CriterionKind(kind) == Exclusion {
				t.Exclusion = append(t.Exclusion, text)
			} else {
				t.Inclusion = append(t.Inclusion, text)
			}
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return fmt.Errorf("load criteria: %w", err)
		}
	}
	return nil
}

// Count returns the number of trials in db.
func Count(ctx context.Context, db *sql.DB) (int, error) {
	var n int
	if err := db.QueryRowContext(ctx, `SELECT count(*) FROM trials`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count trials: %w", err)
	}
	return n, nil
}

// docsOf maps trial ids to their docs; unknown ids are skipped.
func docsOf(ctx context.Context, db *sql.DB, ids []string) (map[string]int64, error) {
	out := make(map[string]int64, len(ids))
	for start := 0; start < len(ids); start += 500 {
		chunk := ids[start:min(start+500, len(ids))]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		rows, err := db.QueryContext(ctx, `SELECT id, doc FROM trials WHERE id IN (`+
			strings.TrimSuffix(strings.Repeat("?,", len(chunk)), ",")+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("find trials: %w", err)
		}
		for rows.Next() {
			var id string
			var doc int64
			if err := rows.Scan(&id, &doc); err != nil {
				rows.Close()
				return nil, fmt.Errorf("find trials: %w", err)
			}
			out[id] = doc
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("find trials: %w", err)
		}
	}
	return out, nil
}

// intList renders integers for an SQL IN list (integers only: safe).
func intList(xs []int64) string {
	var b strings.Builder
	for i, x := range xs {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprint(&b, x)
	}
	return b.String()
}

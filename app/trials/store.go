package trials

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/clinsight/clinsight/internal/progress"
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
	for _, in := range inputs {
		n, err := readFile(ctx, in.path, &read, nil, func(t Trial, cuts []Cut) error {
			if err := ctx.Err(); err != nil {
				return err
			}
			replaced, err := w.put(ctx, &t)
			if err != nil {
				if cerr := ctx.Err(); cerr != nil {
					// A cancellation closes the transaction's statements
					// under the insert: report the cancellation.
					return fmt.Errorf("%w (%v)", cerr, err)
				}
				return &RecordError{File: t.Source, ID: t.ID, Err: err}
			}
			res.CutFields += len(cuts)
			for _, c := range cuts {
				if len(res.Cuts) < maxCutNotes {
					res.Cuts = append(res.Cuts, c)
				}
			}
			res.Trials++
			res.Criteria += len(t.Inclusion) + len(t.Exclusion)
			if replaced {
				res.Replaced++
			}
			report(false)
			return nil
		})
		res.Files += n
		if err != nil {
			return ImportResult{}, wrapCancel(err)
		}
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

// trialWriter inserts trials through prepared statements.
type trialWriter struct {
	find, del, delCrit, delFTS, ins, insCrit, insFTS *sql.Stmt
}

func newTrialWriter(ctx context.Context, tx *sql.Tx) (*trialWriter, error) {
	w := &trialWriter{}
	for _, p := range []struct {
		st  **sql.Stmt
		sql string
	}{
		{&w.find, `SELECT doc FROM trials WHERE id = ?`},
		{&w.del, `DELETE FROM trials WHERE doc = ?`},
		{&w.delCrit, `DELETE FROM trial_criteria WHERE trial_id = ?`},
		{&w.delFTS, `DELETE FROM trials_fts WHERE rowid = ?`},
		{&w.ins, `INSERT INTO trials (id, title, conditions, interventions, keywords, mesh_terms, summary, description,
			sex, min_age, max_age, demographics_inferred, status, phase, source)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`},
		{&w.insCrit, `INSERT INTO trial_criteria (trial_id, kind, idx, text) VALUES (?, ?, ?, ?)`},
		{&w.insFTS, `INSERT INTO trials_fts (rowid, conditions, interventions, keywords, title, summary, criteria) VALUES (?, ?, ?, ?, ?, ?, ?)`},
	} {
		st, err := tx.PrepareContext(ctx, p.sql)
		if err != nil {
			w.close()
			return nil, fmt.Errorf("import trials: prepare: %w", err)
		}
		*p.st = st
	}
	return w, nil
}

func (w *trialWriter) close() {
	for _, st := range []*sql.Stmt{w.find, w.del, w.delCrit, w.delFTS, w.ins, w.insCrit, w.insFTS} {
		if st != nil {
			st.Close()
		}
	}
	*w = trialWriter{}
}

// put stores one trial, replacing one of the same id.
func (w *trialWriter) put(ctx context.Context, t *Trial) (replaced bool, err error) {
	var old int64
	switch err := w.find.QueryRowContext(ctx, t.ID).Scan(&old); {
	case err == nil:
		replaced = true
		for _, st := range []*sql.Stmt{w.delFTS, w.del} {
			if _, err := st.ExecContext(ctx, old); err != nil {
				return false, err
			}
		}
		if _, err := w.delCrit.ExecContext(ctx, t.ID); err != nil {
			return false, err
		}
	case !errors.Is(err, sql.ErrNoRows):
		return false, err
	}
	r, err := w.ins.ExecContext(ctx, t.ID, t.Title, jsonList(t.Conditions), jsonList(t.Interventions),
		jsonList(t.Keywords), jsonList(t.MeSH), t.Summary, t.Description, string(t.Sex),
		nullIfZero(t.MinAge), nullIfZero(t.MaxAge), t.DemographicsInferred, t.Status, t.Phase, t.Source)
	if err != nil {
		return false, err
	}
	doc, err := r.LastInsertId()
	if err != nil {
		return false, err
	}
	for _, c := range t.Criteria() {
		if _, err := w.insCrit.ExecContext(ctx, t.ID, string(c.Kind), c.Index, c.Text); err != nil {
			return false, err
		}
	}
	f := ftsFields(t)
	if _, err := w.insFTS.ExecContext(ctx, doc, f[0], f[1], f[2], f[3], f[4], f[5]); err != nil {
		return false, err
	}
	return replaced, nil
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

func jsonList(items []string) string {
	if len(items) == 0 {
		return "[]"
	}
	b, _ := json.Marshal(items)
	return string(b)
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
	out := make(map[int64]*Trial, len(docs))
	for start := 0; start < len(docs); start += 500 {
		chunk := docs[start:min(start+500, len(docs))]
		rows, err := db.QueryContext(ctx, `SELECT `+columns+` FROM trials WHERE doc IN (`+intList(chunk)+`)`)
		if err != nil {
			return nil, fmt.Errorf("load trials: %w", err)
		}
		for rows.Next() {
			doc, t, err := scan(rows)
			if err != nil {
				rows.Close()
				return nil, fmt.Errorf("load trials: %w", err)
			}
			out[doc] = &t
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("load trials: %w", err)
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

// Get reads one trial with its criteria.
func Get(ctx context.Context, db *sql.DB, id string) (*Trial, error) {
	_, t, err := scanTrial(db.QueryRowContext(ctx, `SELECT `+trialColumns+` FROM trials WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("no trial %s in this database", id)
	}
	if err != nil {
		return nil, fmt.Errorf("read trial %s: %w", id, err)
	}
	if err := loadCriteria(ctx, db, []*Trial{&t}); err != nil {
		return nil, err
	}
	return &t, nil
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

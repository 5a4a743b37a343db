package trials

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/textsearch"
)

// ftsQuery turns a concept into an FTS5 query: one word is a quoted term;
// several words must occur near each other in one column (within a window
// of two extra words per word, so "pain in the chest" meets "chest pain").
// ok is false when the concept has no word.
func ftsQuery(text string) (string, bool) {
	toks := textsearch.Tokens(text)
	if len(toks) == 0 {
		return "", false
	}
	quoted := make([]string, len(toks))
	for i, t := range toks {
		quoted[i] = `"` + t.Lower + `"`
	}
	if len(quoted) == 1 {
		return quoted[0], true
	}
	return fmt.Sprintf("NEAR(%s, %d)", strings.Join(quoted, " "), 2*len(quoted)), true
}

// bm25Expr is the FTS5 ranking expression with the column weights.
func bm25Expr(weights [6]float64) string {
	parts := make([]string, len(weights))
	for i, w := range weights {
		parts[i] = strconv.FormatFloat(w, 'f', -1, 64)
	}
	return "bm25(trials_fts, " + strings.Join(parts, ", ") + ")"
}

// docScore is one trial's BM25 score for one concept.
type docScore struct {
	doc   int64
	score float64
}

// ftsScorer runs the concept queries of the BM25 stage. The queries over
// the whole index are prepared once per pipeline and reused by every
// concept of every match (a pool's query names the pool's trials and is
// built per call); the row buffers are reused across concepts.
type ftsScorer struct {
	db   *sql.DB
	expr string // the bm25() expression with the column weights
	bufs sync.Pool

	mu       sync.Mutex
	all, top *sql.Stmt // every match; the best ? matches
}

func newFTSScorer(db *sql.DB, weights [6]float64) *ftsScorer {
	return &ftsScorer{db: db, expr: bm25Expr(weights)}
}

// statements returns the prepared whole-index queries, preparing them on
// first use (a failed preparation is tried again on the next call).
func (f *ftsScorer) statements(ctx context.Context) (all, top *sql.Stmt, err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.all == nil {
		all, err := f.db.PrepareContext(ctx, `SELECT rowid, `+f.expr+` FROM trials_fts WHERE trials_fts MATCH ?`)
		if err != nil {
			return nil, nil, fmt.Errorf("prepare the trial search: %w", err)
		}
		top, err := f.db.PrepareContext(ctx, `SELECT rowid, `+f.expr+` AS s FROM trials_fts WHERE trials_fts MATCH ? ORDER BY s LIMIT ?`)
		if err != nil {
			all.Close()
			return nil, nil, fmt.Errorf("prepare the trial search: %w", err)
		}
		f.all, f.top = all, top
	}
	return f.all, f.top, nil
}

// buffer returns an empty row buffer; release gives it back.
func (f *ftsScorer) buffer() *[]docScore {
	if b, ok := f.bufs.Get().(*[]docScore); ok {
		*b = (*b)[:0]
		return b
	}
	b := make([]docScore, 0, 1024)
	return &b
}

func (f *ftsScorer) release(b *[]docScore) {
	if cap(*b) <= 64<<10 { // keep buffers of ordinary concepts only
		f.bufs.Put(b)
	}
}

// scores runs one concept against the index and appends each matching
// trial's BM25 score (positive: higher is better) to buf. With pool, only
// those trials are scored; otherwise the best limit trials are returned,
// and a concept known (df ≥ 0) to match at most limit trials is read
// without the ordering, as every match is kept anyway.
func (f *ftsScorer) scores(ctx context.Context, text string, df int, pool []int64, limit int, buf *[]docScore) error {
	q, ok := ftsQuery(text)
	if !ok {
		return nil
	}
	var rows *sql.Rows
	var err error
	switch {
	case pool != nil:
		if len(pool) == 0 {
			return nil
		}
		rows, err = f.db.QueryContext(ctx, `SELECT rowid, `+f.expr+` FROM trials_fts WHERE trials_fts MATCH ? AND rowid IN (`+intList(pool)+`)`, q)
	default:
		all, top, perr := f.statements(ctx)
		if perr != nil {
			return perr
		}
		if df >= 0 && df <= limit {
			rows, err = all.QueryContext(ctx, q)
		} else {
			rows, err = top.QueryContext(ctx, q, limit)
		}
	}
	if err != nil {
		return fmt.Errorf("search %q: %w", text, err)
	}
	defer rows.Close()
	for rows.Next() {
		var d docScore
		if err := rows.Scan(&d.doc, &d.score); err != nil {
			return fmt.Errorf("search %q: %w", text, err)
		}
		d.score = -d.score // FTS5's bm25() is negative, lower is better
		*buf = append(*buf, d)
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("search %q: %w", text, err)
	}
	return nil
}

// docFreqs caches the document frequencies of concepts in one database.
// The cache holds at most maxDocFreqs concepts (it is emptied when full).
type docFreqs struct {
	db *sql.DB
	mu sync.Mutex
	n  int
	df map[string]int
}

// maxDocFreqs bounds the concepts docFreqs remembers.
const maxDocFreqs = 20000

func newDocFreqs(db *sql.DB) *docFreqs { return &docFreqs{db: db, n: -1, df: map[string]int{}} }

// get returns the number of trials matching text, and the number of trials.
// Concepts looked up at once (Match runs them in parallel) query the index
// at once: the lock guards the cache only, not the queries.
func (d *docFreqs) get(ctx context.Context, text string) (int, int, error) {
	q, ok := ftsQuery(text)
	if !ok {
		return 0, 0, nil
	}
	d.mu.Lock()
	n := d.n
	v, cached := d.df[q]
	d.mu.Unlock()
	if n < 0 {
		if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM trials`).Scan(&n); err != nil {
			return 0, 0, fmt.Errorf("count trials: %w", err)
		}
		d.mu.Lock()
		d.n = n
		d.mu.Unlock()
	}
	if cached {
		return v, n, nil
	}
	if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM trials_fts WHERE trials_fts MATCH ?`, q).Scan(&v); err != nil {
		return 0, 0, fmt.Errorf("document frequency of %q: %w", text, err)
	}
	d.mu.Lock()
	if len(d.df) >= maxDocFreqs {
		clear(d.df)
	}
	d.df[q] = v
	d.mu.Unlock()
	return v, n, nil
}

// Memory the matcher's read-only connections use for the trial database:
// the file mapped up to matchMmapBytes (a registry of 375,580 trials is
// about 550 MB) and a page cache of matchCacheKiB per connection. With the
// default (2 MB of cache, every page read by a system call), reading the
// lengths bm25() needs and the candidates' rows took a quarter to a third
// more processor time on BenchmarkScale.
const (
	matchMmapBytes = 1 << 30
	matchCacheKiB  = 8 << 10
)

// OpenForMatching opens the trial database at path read-only for
// matching: as [datasets.OpenReadOnly], with the file memory-mapped.
func OpenForMatching(ctx context.Context, path string) (*sql.DB, error) {
	return datasets.OpenReadOnlyMapped(ctx, path, matchMmapBytes, matchCacheKiB)
}

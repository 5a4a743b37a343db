package trials

import (
	"context"
	"database/sql"
	"fmt"
	"strconv"
	"strings"
	"sync"

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

// conceptScores runs one concept against the index and returns each
// matching trial's BM25 score (positive: higher is better). With pool, only
// those docs are scored; otherwise the best limit trials are returned.
func conceptScores(ctx context.Context, db *sql.DB, c Concept, weights [6]float64, pool []int64, limit int) (map[int64]float64, error) {
	q, ok := ftsQuery(c.Text)
	if !ok {
		return nil, nil
	}
	expr := bm25Expr(weights)
	var sqlText string
	if pool != nil {
		if len(pool) == 0 {
			return nil, nil
		}
		sqlText = `SELECT rowid, ` + expr + ` FROM trials_fts WHERE trials_fts MATCH ? AND rowid IN (` + intList(pool) + `)`
	} else {
		sqlText = `SELECT rowid, ` + expr + ` AS s FROM trials_fts WHERE trials_fts MATCH ? ORDER BY s LIMIT ` + strconv.Itoa(limit)
	}
	rows, err := db.QueryContext(ctx, sqlText, q)
	if err != nil {
		return nil, fmt.Errorf("search %q: %w", c.Text, err)
	}
	defer rows.Close()
	out := map[int64]float64{}
	for rows.Next() {
		var doc int64
		var s float64
		if err := rows.Scan(&doc, &s); err != nil {
			return nil, fmt.Errorf("search %q: %w", c.Text, err)
		}
		out[doc] = -s // FTS5's bm25() is negative, lower is better
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search %q: %w", c.Text, err)
	}
	return out, nil
}

// docFreqs caches the document frequencies of concepts in one database.
type docFreqs struct {
	db *sql.DB
	mu sync.Mutex
	n  int
	df map[string]int
}

func newDocFreqs(db *sql.DB) *docFreqs { return &docFreqs{db: db, n: -1, df: map[string]int{}} }

// get returns the number of trials matching text, and the number of trials.
func (d *docFreqs) get(ctx context.Context, text string) (int, int, error) {
	q, ok := ftsQuery(text)
	if !ok {
		return 0, 0, nil
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.n < 0 {
		if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM trials`).Scan(&d.n); err != nil {
			return 0, 0, fmt.Errorf("count trials: %w", err)
		}
	}
	if v, ok := d.df[q]; ok {
		return v, d.n, nil
	}
	var v int
	if err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM trials_fts WHERE trials_fts MATCH ?`, q).Scan(&v); err != nil {
		return 0, 0, fmt.Errorf("document frequency of %q: %w", text, err)
	}
	d.df[q] = v
	return v, d.n, nil
}

package evidence

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
)

// Corpus is a literature corpus stored in a SQLite database by Import.
type Corpus struct {
	db *sql.DB
	// maxCandidates replaces MaxCandidates when positive (tests).
	maxCandidates int
}

// NewCorpus returns the corpus stored in db (which may be read-only).
func NewCorpus(db *sql.DB) *Corpus { return &Corpus{db: db} }

// ErrNoCorpus is returned when the database holds no literature corpus.
var ErrNoCorpus = errors.New("this database holds no literature corpus: import literature into it first")

// Count returns the number of records in the corpus.
func (c *Corpus) Count(ctx context.Context) (int64, error) {
	if err := c.check(ctx); err != nil {
		return 0, err
	}
	var n int64
	if err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM evidence_records`).Scan(&n); err != nil {
		return 0, fmt.Errorf("evidence: counting records: %w", err)
	}
	return n, nil
}

func (c *Corpus) check(ctx context.Context) error {
	var n int
	err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name IN ('evidence_records', 'evidence_fts')`).Scan(&n)
	if err != nil {
		return fmt.Errorf("evidence: reading the schema: %w", err)
	}
	if n < 2 {
		return ErrNoCorpus
	}
	return nil
}

// Hit is a record found by a search, with its rank.
type Hit struct {
	Record
	// Score is FTS5's bm25() with title, abstract and MeSH weighted 3:1:2;
	// lower is better (SQLite's convention).
	Score float64
}

// SearchResult is the outcome of a boolean search.
type SearchResult struct {
	// Query is the query as parsed, fully parenthesised (PubMed syntax).
	Query string
	// FTS5 is the MATCH expression it was translated to.
	FTS5 string
	// Total is the number of matching records.
	Total int64
	// Hits are the best-ranked matches, at most the limit asked for.
	Hits []Hit
}

// searchCachePragma sets the page cache of a search's connection to 64 MiB
// (SQLite's default is 2 MiB): enough for the index pages a query over a
// million records reads, so that the next query finds them in memory.
const searchCachePragma = "PRAGMA cache_size = -65536"

// Search runs a PubMed-style boolean query (see ParseQuery) and returns the
// number of matches and the best limit of them by bm25 (limit ≤ 0 means all).
// A malformed query is a *QueryError.
func (c *Corpus) Search(ctx context.Context, query string, limit int) (SearchResult, error) {
	if limit <= 0 {
		limit = -1
	}
	var hits []Hit
	res, err := c.scanSearch(ctx, query, limit, func(_ int64, h *Hit) error {
		hits = append(hits, *h) // scanRecord gives each record new slices
		return nil
	})
	if err != nil {
		return SearchResult{}, err
	}
	res.Hits = hits
	return res, nil
}

// recordsBatch is how many records Records reads per statement (SQLite
// allows 32,766 parameters).
const recordsBatch = 500

// Records returns the records with the given IDs, in their order (unknown
// IDs are skipped), read a batch at a time.
func (c *Corpus) Records(ctx context.Context, ids []string) ([]Record, error) {
	if err := c.check(ctx); err != nil {
		return nil, err
	}
	out := make([]Record, 0, len(ids))
	for from := 0; from < len(ids); from += recordsBatch {
		batch := ids[from:min(from+recordsBatch, len(ids))]
		args := make([]any, len(batch))
		for i, id := range batch {
			args[i] = id
		}
		rows, err := c.db.QueryContext(ctx, `SELECT id, pmid, title, abstract, sections, mesh, publication_types,
			journal, year, authors, doi, keywords, source_line, 0 FROM evidence_records WHERE id IN (?`+
			strings.Repeat(",?", len(batch)-1)+`)`, args...)
		if err != nil {
			return nil, fmt.Errorf("evidence: reading records: %w", err)
		}
		found := make(map[string]Record, len(batch))
		for rows.Next() {
			var r Record
			var score float64
			if err := scanRecord(rows, &r, &score); err != nil {
				rows.Close()
				return nil, err
			}
			found[r.ID] = r
		}
		err = rows.Err()
		rows.Close()
		if err != nil {
			return nil, fmt.Errorf("evidence: reading records: %w", err)
		}
		for _, id := range batch {
			if r, ok := found[id]; ok {
				out = append(out, r)
			}
		}
	}
	return out, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanRecord(s scanner, r *Record, score *float64, extra ...any) error {
	var pmid, sections, journal, authors, doi, keywords sql.NullString
	var abstract, mesh, pubtypes string
	var year, line sql.NullInt64
	dest := append([]any{&r.ID, &pmid, &r.Title, &abstract, &sections, &mesh, &pubtypes, &journal, &year, &authors, &doi, &keywords, &line, score}, extra...)
	if err := s.Scan(dest...); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return err
		}
		return fmt.Errorf("evidence: reading a record: %w", err)
	}
	r.PMID, r.Journal, r.DOI = pmid.String, journal.String, doi.String
	r.Year, r.Line = int(year.Int64), int(line.Int64)
	if err := r.setSections(abstract, sections.String); err != nil {
		return err
	}
	r.MeSH = splitList(mesh, ";")
	r.PublicationTypes = splitList(pubtypes, ";")
	r.Authors = splitList(authors.String, ";")
	r.Keywords = splitList(keywords.String, ";")
	if r.Title == "[no title]" {
		r.Title = ""
	}
	return nil
}

// setSections rebuilds the abstract's sections from the stored text (the
// sections joined by blank lines, each "LABEL: text") and headings (JSON,
// empty for an unstructured abstract).
func (r *Record) setSections(abstract, headings string) error {
	r.Sections = nil
	if abstract == "" {
		return nil
	}
	if headings == "" {
		r.Sections = []Section{{Text: abstract}}
		return nil
	}
	var heads []Section
	if err := json.Unmarshal([]byte(headings), &heads); err != nil {
		return fmt.Errorf("evidence: record %s: reading its abstract headings: %w", r.ID, err)
	}
	parts := strings.Split(abstract, "\n\n")
	if len(parts) != len(heads) {
		r.Sections = []Section{{Text: abstract}}
		return nil
	}
	for i, h := range heads {
		text := parts[i]
		if h.Label != "" {
			text = strings.TrimPrefix(text, h.Label+": ")
		}
		r.Sections = append(r.Sections, Section{Label: h.Label, Category: h.Category, Text: text})
	}
	return nil
}

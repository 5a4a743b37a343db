package evidence

import (
	"bufio"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// ErrNoRecord is wrapped by the errors about a record ID that is not in
// the corpus.
var ErrNoRecord = errors.New("no such record in the corpus")

// FullTextImport is one full text stored by Import.
type FullTextImport struct {
	// ID is the record the text belongs to.
	ID string
	// Chunks is the number of chunks it was split into.
	Chunks int
	// Created says the record was not in the corpus and was created from
	// the article's front matter (JATS).
	Created bool
}

// StudyText returns the study's text in numbered chunks, the text a model
// reads and cites: its full text when one was imported (see Import), else
// chunk 1 = its title ("Title") and then its abstract's sections
// ("Abstract: RESULTS", or "Abstract" when unstructured), long sections
// split on sentence boundaries into chunks of at most DefaultChunkChars
// characters. A record that is not in the corpus is an error naming it
// that wraps ErrNoRecord.
func (c *Corpus) StudyText(ctx context.Context, id string) (StudyText, error) {
	if err := c.check(ctx); err != nil {
		return StudyText{}, err
	}
	recs, err := c.Records(ctx, []string{id})
	if err != nil {
		return StudyText{}, err
	}
	if len(recs) == 0 {
		return StudyText{}, fmt.Errorf("evidence: study %s: %w", id, ErrNoRecord)
	}
	r := &recs[0]
	t := StudyText{ID: r.ID, Title: r.Title}
	has, err := c.hasFullTexts(ctx)
	if err != nil {
		return StudyText{}, err
	}
	if has {
		var source string
		switch err := c.db.QueryRowContext(ctx, `SELECT source FROM evidence_fulltexts WHERE record_id = ?`, id).Scan(&source); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return StudyText{}, fmt.Errorf("evidence: reading the full text of %s: %w", id, err)
		default:
			chunks, err := c.chunks(ctx, id)
			if err != nil {
				return StudyText{}, err
			}
			if len(chunks) > 0 {
				t.FullText, t.Source, t.Chunks = true, source, chunks
				return t, nil
			}
		}
	}
	secs := append([]Section{{Label: "Title", Text: r.Title}}, abstractSections(r.Sections)...)
	t.Chunks = ChunkText(secs, DefaultChunkChars)
	return t, nil
}

// chunks reads the stored chunks of a full text.
func (c *Corpus) chunks(ctx context.Context, id string) ([]Chunk, error) {
	rows, err := c.db.QueryContext(ctx, `SELECT n, section, text FROM evidence_chunks WHERE record_id = ? ORDER BY n`, id)
	if err != nil {
		return nil, fmt.Errorf("evidence: reading the full text of %s: %w", id, err)
	}
	defer rows.Close()
	var out []Chunk
	for rows.Next() {
		var ch Chunk
		if err := rows.Scan(&ch.N, &ch.Section, &ch.Text); err != nil {
			return nil, fmt.Errorf("evidence: reading the full text of %s: %w", id, err)
		}
		if ch.N != len(out)+1 {
			return nil, fmt.Errorf("evidence: the full text of %s is damaged (chunk %d follows chunk %d): import it again", id, ch.N, len(out))
		}
		out = append(out, ch)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("evidence: reading the full text of %s: %w", id, err)
	}
	return out, nil
}

// FullTextIDs returns the IDs of the records with an imported full text,
// sorted.
func (c *Corpus) FullTextIDs(ctx context.Context) ([]string, error) {
	if err := c.check(ctx); err != nil {
		return nil, err
	}
	has, err := c.hasFullTexts(ctx)
	if err != nil || !has {
		return nil, err
	}
	rows, err := c.db.QueryContext(ctx, `SELECT record_id FROM evidence_fulltexts ORDER BY record_id`)
	if err != nil {
		return nil, fmt.Errorf("evidence: listing the full texts: %w", err)
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, fmt.Errorf("evidence: listing the full texts: %w", err)
		}
		out = append(out, id)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("evidence: listing the full texts: %w", err)
	}
	return out, nil
}

// fullTextSources returns the files the full texts of the studies ids
// were imported from, by ID; a study without a full text is left out.
func (c *Corpus) fullTextSources(ctx context.Context, ids []string) (map[string]string, error) {
	out := map[string]string{}
	has, err := c.hasFullTexts(ctx)
	if err != nil || !has {
		return out, err
	}
	for _, id := range ids {
		var source string
		switch err := c.db.QueryRowContext(ctx, `SELECT source FROM evidence_fulltexts WHERE record_id = ?`, id).Scan(&source); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return nil, fmt.Errorf("evidence: reading the full text of %s: %w", id, err)
		default:
			out[id] = source
		}
	}
	return out, nil
}

// hasFullTexts reports whether the database has the full-text tables (a
// corpus imported by an earlier version has not).
func (c *Corpus) hasFullTexts(ctx context.Context) (bool, error) {
	var n int
	err := c.db.QueryRowContext(ctx, `SELECT count(*) FROM sqlite_schema WHERE name IN ('evidence_fulltexts', 'evidence_chunks')`).Scan(&n)
	if err != nil {
		return false, fmt.Errorf("evidence: reading the schema: %w", err)
	}
	return n == 2, nil
}

// maxJATSBytes bounds a JATS file: its articles are read into memory
// before any is stored (a set of a few hundred articles is well under it).
const maxJATSBytes = 256 << 20

// importFullText imports the full text(s) of one file (see Import) in one
// transaction. The file is read and parsed first, in memory and bounded
// (maxJATSBytes, maxTextBytes, the PDF bounds), without the database: the
// write lock is taken only to store what was read, so a slow or damaged
// file never keeps other imports out.
func importFullText(ctx context.Context, db *sql.DB, f *os.File, br *bufio.Reader, res ImportResult, opts ImportOptions, report func()) (ImportResult, error) {
	path, stage := res.Path, filepath.Base(res.Path)
	report()
	var articles []Article // JATS
	var jatsSet bool       // the articles came in a <pmc-articleset>
	var chunks []Chunk     // plain text, PDF
	switch res.Format {
	case JATS:
		if res.Bytes > maxJATSBytes {
			return ImportResult{}, fmt.Errorf("the file is larger than %d MB: split the set of articles into smaller files", maxJATSBytes>>20)
		}
		jr := NewJATSReader(br)
		for {
			a, err := jr.Next()
			if err == io.EOF {
				break
			}
			if err != nil {
				return ImportResult{}, &ImportError{Path: path, Err: err}
			}
			articles = append(articles, a)
			jatsSet = jr.set
			if err := ctx.Err(); err != nil {
				return ImportResult{}, &ImportError{Path: path, Err: articleErr(jatsSet, len(articles), &a, err)}
			}
			if opts.Record != "" && len(articles) > 1 {
				return ImportResult{}, &ImportError{Path: path, Err: articleErr(jatsSet, len(articles), &a,
					fmt.Errorf("the file holds more than one article, but the record given for it (%s) names one", opts.Record))}
			}
		}
		if len(articles) == 0 {
			return ImportResult{}, &ImportError{Path: path, Err: errors.New("the file holds no <article>")}
		}
	case PlainText, PDF:
		var secs []Section
		var err error
		if res.Format == PDF {
			text, err := PDFText(ctx, f, res.Bytes)
			if err != nil {
				return ImportResult{}, err
			}
			if secs, err = ParseText(strings.NewReader(text)); err != nil {
				var pe *ParseError
				if errors.As(err, &pe) {
					err = pe.Err // lines of extracted text mean nothing to the user
				}
				return ImportResult{}, err
			}
		} else if secs, err = ParseText(br); err != nil {
			return ImportResult{}, &ImportError{Path: path, Err: err}
		}
		if chunks = ChunkText(secs, DefaultChunkChars); len(chunks) == 0 {
			return ImportResult{}, errors.New("the file holds no text")
		}
	default:
		return ImportResult{}, fmt.Errorf("%s is not a full-text format", res.Format)
	}
	if err := ctx.Err(); err != nil {
		return ImportResult{}, err
	}

	w, err := beginWrite(ctx, db)
	if err != nil {
		return ImportResult{}, err
	}
	defer w.close(ctx)
	now := time.Now().UTC().Format(time.RFC3339)
	if res.Format == JATS {
		for i := range articles {
			a := &articles[i]
			res.Records++
			if err := ctx.Err(); err != nil {
				return ImportResult{}, &ImportError{Path: path, Err: articleErr(jatsSet, i+1, a, err)}
			}
			ft, err := w.putArticle(ctx, a, stage, opts.Record, now, &res)
			if err != nil {
				return ImportResult{}, &ImportError{Path: path, Err: articleErr(jatsSet, i+1, a, err)}
			}
			res.FullTexts = append(res.FullTexts, ft)
			report()
		}
	} else {
		name := opts.Record
		if name == "" {
			name = strings.TrimSuffix(stage, filepath.Ext(stage))
		}
		id, err := w.findRecord(ctx, textRecordIDs(name))
		if err != nil {
			return ImportResult{}, err
		}
		if id == "" {
			return ImportResult{}, noRecordErr(name, opts.Record != "")
		}
		if err := w.putText(ctx, id, stage, res.Format, now, chunks); err != nil {
			return ImportResult{}, err
		}
		res.Records = 1
		res.FullTexts = append(res.FullTexts, FullTextImport{ID: id, Chunks: len(chunks)})
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

// articleErr ties err to the n-th article of a JATS file (numbered only in
// a <pmc-articleset>).
func articleErr(set bool, n int, a *Article, err error) error {
	if !set {
		n = 0
	}
	return recordErr(n, &a.Record, a.Record.Line, err)
}

// noRecordErr says that the record a full text is for is not in the
// corpus.
func noRecordErr(name string, given bool) error {
	ids := textRecordIDs(name)
	if given {
		return fmt.Errorf("record %s is not in the corpus (%w): import the article's citation first (PubMed XML, MEDLINE, RIS or CSV), then its full text",
			strings.Join(ids, " or "), ErrNoRecord)
	}
	return fmt.Errorf("no record %s in the corpus for this full text (%w): import the article's citation first (PubMed XML, MEDLINE, RIS or CSV), "+
		"or name the file after its record (the PMID, 12345678.txt, or the record ID with \"-\" for \":\", demo-12.txt)",
		strings.Join(ids, " or "), ErrNoRecord)
}

// textRecordIDs are the record IDs a full text's file name (without
// extension) or --record value may stand for, most likely first: the
// name itself, "pmid:NAME" for a PMID, and the name with a "-" read as
// ":" (file names cannot hold ":"; demo-12 → demo:12).
func textRecordIDs(name string) []string {
	name = strings.TrimSpace(name)
	var ids []string
	add := func(id string) {
		for _, x := range ids {
			if x == id {
				return
			}
		}
		ids = append(ids, id)
	}
	if isPMID(name) {
		add("pmid:" + name)
	}
	add(name)
	if i := strings.IndexByte(name, '-'); i > 0 && !strings.Contains(name, ":") {
		add(name[:i] + ":" + name[i+1:])
		if j := strings.LastIndexByte(name, '-'); j != i {
			add(name[:j] + ":" + name[j+1:])
		}
	}
	return ids
}

// findRecord returns the first of ids that is in the corpus, "" when none
// is.
func (w *corpusWriter) findRecord(ctx context.Context, ids []string) (string, error) {
	for _, id := range ids {
		var rowid int64
		var t, a, m string
		switch err := w.st["find"].QueryRowContext(ctx, id).Scan(&rowid, &t, &a, &m); {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return "", fmt.Errorf("looking up %s: %w", id, err)
		default:
			return id, nil
		}
	}
	return "", nil
}

// lookup returns the ID of the first record that the statement st finds
// for key, "" when none.
func (w *corpusWriter) lookup(ctx context.Context, st, key string) (string, error) {
	var id string
	switch err := w.st[st].QueryRowContext(ctx, key).Scan(&id); {
	case errors.Is(err, sql.ErrNoRows):
		return "", nil
	case err != nil:
		return "", fmt.Errorf("looking up %s: %w", key, err)
	}
	return id, nil
}

// putArticle stores a JATS article's text for its record: the one named
// by record if given, else the one with its PMID, else with its DOI, else
// a new record from its front matter.
func (w *corpusWriter) putArticle(ctx context.Context, a *Article, source, record, now string, res *ImportResult) (FullTextImport, error) {
	rec := &a.Record
	if rec.PMID != "" && !isPMID(rec.PMID) {
		return FullTextImport{}, fmt.Errorf("PMID %q is not a number", rec.PMID)
	}
	var id string
	var err error
	switch {
	case record != "":
		if id, err = w.findRecord(ctx, textRecordIDs(record)); err == nil && id == "" {
			err = noRecordErr(record, true)
		}
	case rec.PMID != "":
		if id, err = w.findRecord(ctx, []string{"pmid:" + rec.PMID}); err == nil && id == "" {
			id, err = w.lookup(ctx, "byPMID", rec.PMID)
		}
	}
	if err == nil && id == "" && record == "" && rec.DOI != "" {
		if id, err = w.findRecord(ctx, []string{"doi:" + strings.ToLower(rec.DOI)}); err == nil && id == "" {
			id, err = w.lookup(ctx, "byDOI", rec.DOI)
		}
	}
	if err != nil {
		return FullTextImport{}, err
	}
	ft := FullTextImport{ID: id}
	if id == "" {
		if strings.TrimSpace(rec.Title) == "" {
			return FullTextImport{}, errors.New("the article is not in the corpus and has no <article-title> to create its record from")
		}
		if err := rec.Validate(); err != nil {
			return FullTextImport{}, err
		}
		r := *rec
		r.key(source)
		if err := w.put(ctx, &r, source, res); err != nil {
			return FullTextImport{}, err
		}
		ft.ID, ft.Created = r.ID, true
	}
	chunks := ChunkText(a.Sections(), DefaultChunkChars)
	if len(chunks) == 0 {
		return FullTextImport{}, errors.New("the article has no text")
	}
	ft.Chunks = len(chunks)
	return ft, w.putText(ctx, ft.ID, source, JATS, now, chunks)
}

// putText stores the chunks of a record's full text, replacing earlier
// ones.
func (w *corpusWriter) putText(ctx context.Context, id, source string, format Format, imported string, chunks []Chunk) error {
	if _, err := w.st["chunksDelete"].ExecContext(ctx, id); err != nil {
		return fmt.Errorf("replacing the full text of %s: %w", id, err)
	}
	if _, err := w.st["textPut"].ExecContext(ctx, id, source, string(format), imported); err != nil {
		return fmt.Errorf("storing the full text of %s: %w", id, err)
	}
	for _, ch := range chunks {
		if _, err := w.st["chunkPut"].ExecContext(ctx, id, ch.N, ch.Section, ch.Text); err != nil {
			return fmt.Errorf("storing the full text of %s: %w", id, err)
		}
	}
	return nil
}

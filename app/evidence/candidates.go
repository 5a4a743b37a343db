package evidence

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"
	"sort"

	"github.com/clinsight/clinsight/internal/textsearch"
)

// DefaultSearchLimit is the number of candidates a search keeps when the
// user gives no limit: 0, every match (issue 17: every candidate can be
// screened; the active learner orders them).
const DefaultSearchLimit = 0

// SearchLimits are the candidate counts a front end offers, 0 (every
// match, the default) first; the user may give another, up to
// MaxCandidates.
var SearchLimits = []int{0, 20, 50, 100, 200, 500, 1000, 5000}

// MaxCandidates bounds the candidates of one review: a query matching more
// records (duplicates removed) is refused with a *TooManyMatchesError
// unless the user keeps only the best of them. At 100,000 candidates a
// saved review is about 20 MB (its titles; BenchmarkCandidateProject) and
// the learner's features some 300 MB, the most a laptop should give one
// review.
const MaxCandidates = 100_000

// SearchPool is how many of a search's best bm25 matches, duplicates
// removed, are ranked by relevance to the PICO when the user keeps only
// the best limit of them (limit > 0): the candidates are the best of that
// pool (a larger limit is its own pool). A search of every match ranks
// every match.
const SearchPool = 5000

// TooManyMatchesError is returned by a search for every match when the
// query matches more than MaxCandidates records.
type TooManyMatchesError struct {
	// Matches is the number of matching records, duplicates removed.
	Matches int64
	// Max is the bound (MaxCandidates).
	Max int
}

func (e *TooManyMatchesError) Error() string {
	return fmt.Sprintf("the query matches %d records, more than the %d one review can screen: narrow the query "+
		"(require another term with AND, or search titles only), or keep only the best matches by relevance to the question",
		e.Matches, e.Max)
}

// Candidate is a study a search keeps for screening.
type Candidate struct {
	// Hit holds the record's identifying fields only (ID, PMID, title,
	// year, journal, DOI and first author), not its abstract, MeSH or
	// keywords: a search of every match holds up to MaxCandidates of them.
	// Read the full records with Corpus.Records.
	Hit
	// PICOScore is the BM25 relevance of its title and abstract to the
	// PICO (RankByPICO, higher is better); 0 for every candidate when the
	// PICO has no words to rank by.
	PICOScore float64
}

// Candidates are the outcome of a search by the review's search rule
// (SearchCandidates).
type Candidates struct {
	// Query is the query as parsed, FTS5 its MATCH expression.
	Query, FTS5 string
	// Total is the number of matching records, duplicates included.
	Total int64
	// DuplicateOf maps the matches removed as duplicates to the record
	// kept (Corpus.Duplicates).
	DuplicateOf map[string]string
	// Hits are the candidates, best first.
	Hits []Candidate
}

// IDs returns the candidates' record IDs, best first.
func (c Candidates) IDs() []string {
	ids := make([]string, len(c.Hits))
	for i := range c.Hits {
		ids[i] = c.Hits[i].ID
	}
	return ids
}

// SearchCandidates runs a boolean query by the one search rule of a
// review, the same for the desktop app and the command line:
//
//  1. duplicates are removed (Corpus.Duplicates: the same article under
//     two keys is one study, never two candidates);
//  2. with limit ≤ 0 (DefaultSearchLimit) every other match is a
//     candidate, up to MaxCandidates (more is a *TooManyMatchesError);
//     with limit > 0, the best max(limit, SearchPool) matches by bm25 are
//     the pool;
//  3. they are ranked by the relevance of their title and abstract to the
//     PICO (RankByPICO's scores, computed as the records stream from the
//     index so that only each one's identifying fields are held; ties,
//     and every study when the PICO has no words, keep the bm25 order);
//  4. the best limit of them (every one with limit ≤ 0) are the
//     candidates.
//
// Ranking the pool by the PICO before cutting, rather than cutting by bm25
// and then re-ordering, lets the question choose which studies are
// screened: bm25 only says how well a study matches the query's words,
// which a broad query (for recall) makes a weak signal.
func (c *Corpus) SearchCandidates(ctx context.Context, query string, pico PICO, limit int) (Candidates, error) {
	maxCand := MaxCandidates
	if c.maxCandidates > 0 {
		maxCand = c.maxCandidates
	}
	all := limit <= 0
	pool := maxCand
	if !all {
		limit = min(limit, maxCand)
		pool = max(limit, SearchPool)
	}
	dups, err := c.Duplicates(ctx, query)
	if err != nil {
		return Candidates{}, err
	}
	sc := newPICOScorer(pico, RankOptions{})
	var hits []Hit
	// Enough matches that removing the duplicates still leaves a full pool
	// (and, for every match, one more to tell an overflow).
	res, err := c.scanSearch(ctx, query, pool+len(dups)+1, func(total int64, h *Hit) error {
		if all && total-int64(len(dups)) > int64(maxCand) {
			return &TooManyMatchesError{Matches: total - int64(len(dups)), Max: maxCand}
		}
		if _, dup := dups[h.ID]; dup || len(hits) == pool {
			return nil
		}
		sc.add(DocOf(&h.Record).Text)
		hits = append(hits, slimHit(h))
		return nil
	})
	if err != nil {
		return Candidates{}, err
	}
	out := Candidates{Query: res.Query, FTS5: res.FTS5, Total: res.Total, Hits: make([]Candidate, 0, len(hits))}
	if len(dups) > 0 {
		out.DuplicateOf = dups
	}
	for _, s := range sc.rank() {
		if !all && len(out.Hits) == limit {
			break
		}
		out.Hits = append(out.Hits, Candidate{Hit: hits[s.Index], PICOScore: s.Score})
	}
	return out, nil
}

// slimHit returns a hit with the record's identifying fields only (see
// Candidate).
func slimHit(h *Hit) Hit {
	r := &h.Record
	out := Hit{Score: h.Score, Record: Record{ID: r.ID, PMID: r.PMID, Title: r.Title, Year: r.Year, Journal: r.Journal, DOI: r.DOI, Line: r.Line}}
	if len(r.Authors) > 0 {
		out.Authors = []string{r.Authors[0]}
	}
	return out
}

// scanSearch runs a boolean query like Search and calls fn with the number
// of matches and each of the best limit matches by bm25, in order, as
// they are read; the hit is reused after fn returns. An error from fn
// stops the scan and is returned.
func (c *Corpus) scanSearch(ctx context.Context, query string, limit int, fn func(total int64, h *Hit) error) (SearchResult, error) {
	n, err := ParseQuery(query)
	if err != nil {
		return SearchResult{}, err
	}
	if err := c.check(ctx); err != nil {
		return SearchResult{}, err
	}
	res := SearchResult{Query: n.String(), FTS5: n.FTS5()}
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return SearchResult{}, fmt.Errorf("evidence: searching: %w", err)
	}
	defer conn.Close()
	// bm25 dominates the time of a search (FTS5 counts the documents of
	// every phrase of the query for its IDF, then reads each match's
	// phrase positions and column sizes), so the index pages it reads are
	// kept in a larger page cache on this connection (12% faster at
	// 1,000,000 records; the results are the same).
	if _, err := conn.ExecContext(ctx, searchCachePragma); err != nil {
		return SearchResult{}, fmt.Errorf("evidence: searching: %w", err)
	}
	// Rank and count inside FTS5 in one pass over the matches (a separate
	// count would read the index twice), then read only the records kept.
	rows, err := conn.QueryContext(ctx, `WITH m AS MATERIALIZED (
			SELECT rowid, bm25(evidence_fts, 3.0, 1.0, 2.0) AS score FROM evidence_fts WHERE evidence_fts MATCH ?)
		SELECT r.id, r.pmid, r.title, r.abstract, r.sections, r.mesh, r.publication_types,
		r.journal, r.year, r.authors, r.doi, r.keywords, r.source_line, t.score, (SELECT count(*) FROM m)
		FROM (SELECT rowid, score FROM m ORDER BY score, rowid LIMIT ?) AS t
		JOIN evidence_records r ON r.rowid = t.rowid
		ORDER BY t.score, t.rowid`, res.FTS5, limit)
	if err != nil {
		return SearchResult{}, fmt.Errorf("evidence: searching %q: %w", res.FTS5, err)
	}
	defer rows.Close()
	var h Hit
	for i := 0; rows.Next(); i++ {
		if i%1024 == 0 && ctx.Err() != nil {
			return SearchResult{}, fmt.Errorf("evidence: searching: %w", ctx.Err())
		}
		if err := scanRecord(rows, &h.Record, &h.Score, &res.Total); err != nil {
			return SearchResult{}, err
		}
		if err := fn(res.Total, &h); err != nil {
			return SearchResult{}, err
		}
	}
	if err := rows.Err(); err != nil {
		return SearchResult{}, fmt.Errorf("evidence: reading search results: %w", err)
	}
	return res, nil
}

// picoScorer computes RankByPICO's scores of documents added one at a
// time, holding for each only its length and the counts of the PICO's
// query terms (not its text): the same BM25 as textsearch.BM25, summed in
// the same order, so the scores are equal to the last bit
// (TestPICOScorerEqualsRankByPICO).
type picoScorer struct {
	terms []textsearch.Term // the PICO's weighted terms, sorted
	index map[string]int32  // term → position in terms
	k1, b float64
	lens  []int32
	// per document, its query terms' positions and counts, in order of
	// position: docs[i] is post[start[i]:start[i+1]]
	start []int32
	post  []termCount
	df    []int
}

type termCount struct {
	term int32
	tf   float32
}

func newPICOScorer(p PICO, opts RankOptions) *picoScorer {
	opts = opts.withDefaults()
	q := (&Ranker{opts: opts}).Query(p)
	s := &picoScorer{index: map[string]int32{}, k1: opts.K1, b: opts.B, start: []int32{0}}
	if s.k1 == 0 {
		s.k1 = 1.2 // textsearch.BM25Params' defaults
	}
	if s.b == 0 {
		s.b = 0.75
	}
	for _, t := range slices.Sorted(maps.Keys(q)) {
		s.index[t] = int32(len(s.terms))
		s.terms = append(s.terms, textsearch.Term{Text: t, Weight: q[t]})
	}
	s.df = make([]int, len(s.terms))
	return s
}

// add counts one document's terms.
func (s *picoScorer) add(text string) {
	toks := rankTokens(text)
	s.lens = append(s.lens, int32(len(toks)))
	from := len(s.post)
	for _, t := range toks {
		k, ok := s.index[t]
		if !ok {
			continue
		}
		found := false
		for j := from; j < len(s.post); j++ {
			if s.post[j].term == k {
				s.post[j].tf++
				found = true
				break
			}
		}
		if !found {
			s.post = append(s.post, termCount{term: k, tf: 1})
			s.df[k]++
		}
	}
	mine := s.post[from:]
	slices.SortFunc(mine, func(x, y termCount) int { return int(x.term - y.term) })
	s.start = append(s.start, int32(len(s.post)))
}

// rank returns the documents best first (ties keep the order they were
// added in), as Ranker.Rank does.
func (s *picoScorer) rank() []Scored {
	n := len(s.lens)
	var total float64
	for _, l := range s.lens {
		total += float64(l)
	}
	avgdl := 0.0
	if n > 0 {
		avgdl = total / float64(n)
	}
	idf := make([]float64, len(s.terms))
	for k := range s.terms {
		df := float64(s.df[k])
		idf[k] = math.Log(1 + (float64(n)-df+0.5)/(df+0.5))
	}
	out := make([]Scored, n)
	for i := range n {
		norm := s.k1 * (1 - s.b + s.b*float64(s.lens[i])/math.Max(avgdl, 1e-9))
		var score float64
		for _, p := range s.post[s.start[i]:s.start[i+1]] {
			tf := float64(p.tf)
			score += s.terms[p.term].Weight * idf[p.term] * tf * (s.k1 + 1) / (tf + norm)
		}
		out[i] = Scored{Index: i, Score: score}
	}
	sort.SliceStable(out, func(a, c int) bool { return out[a].Score > out[c].Score })
	return out
}

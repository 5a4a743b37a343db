package evidence

import (
	"context"
	"slices"
)

// DefaultSearchLimit is the number of candidates a search keeps for
// screening when the user gives no limit.
const DefaultSearchLimit = 200

// SearchLimits are the candidate counts a front end offers (the user may
// give another, up to SearchPool).
var SearchLimits = []int{20, 50, 100, 200, 500, 1000}

// SearchPool is how many of a search's best bm25 matches, duplicates
// removed, are ranked by relevance to the PICO: the candidates are the best
// of them. It bounds the records read and ranked by one search.
const SearchPool = 5000

// Candidate is a study a search keeps for screening.
type Candidate struct {
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
//  2. the best SearchPool of the other matches by bm25 are ranked by the
//     relevance of their title and abstract to the PICO (RankByPICO; ties,
//     and every study when the PICO has no words, keep the bm25 order);
//  3. the best limit of them are the candidates (limit ≤ 0 means
//     DefaultSearchLimit; at most SearchPool).
//
// Ranking the pool by the PICO before cutting, rather than cutting by bm25
// and then re-ordering, lets the question choose which studies are
// screened: bm25 only says how well a study matches the query's words,
// which a broad query (for recall) makes a weak signal.
func (c *Corpus) SearchCandidates(ctx context.Context, query string, pico PICO, limit int) (Candidates, error) {
	if limit <= 0 {
		limit = DefaultSearchLimit
	}
	limit = min(limit, SearchPool)
	dups, err := c.Duplicates(ctx, query)
	if err != nil {
		return Candidates{}, err
	}
	// Enough matches that removing the duplicates still leaves a full pool.
	res, err := c.Search(ctx, query, SearchPool+len(dups))
	if err != nil {
		return Candidates{}, err
	}
	res.Hits = slices.DeleteFunc(res.Hits, func(h Hit) bool { _, dup := dups[h.ID]; return dup })
	if len(res.Hits) > SearchPool {
		res.Hits = res.Hits[:SearchPool]
	}
	docs := make([]Doc, len(res.Hits))
	for i := range res.Hits {
		docs[i] = DocOf(&res.Hits[i].Record)
	}
	out := Candidates{Query: res.Query, FTS5: res.FTS5, Total: res.Total, Hits: []Candidate{}}
	if len(dups) > 0 {
		out.DuplicateOf = dups
	}
	for _, sc := range RankByPICO(pico, docs, RankOptions{}) {
		if len(out.Hits) == limit {
			break
		}
		out.Hits = append(out.Hits, Candidate{Hit: res.Hits[sc.Index], PICOScore: sc.Score})
	}
	return out, nil
}

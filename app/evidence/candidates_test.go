package evidence

import (
	"context"
	"errors"
	"slices"
	"testing"
)

// TestSearchCandidatesEveryMatch checks the search of every match against
// the rule computed the plain way (every match read whole, duplicates
// removed, RankByPICO over their texts): the same candidates in the same
// order with equal scores; a limited search gives the first of them; a
// query over the bound is refused with the number of matches, unless the
// user keeps only the best.
func TestSearchCandidatesEveryMatch(t *testing.T) {
	db, c := searchCorpus(t)
	ctx := context.Background()
	pico := PICO{Population: "hepatocellular carcinoma", Intervention: "microwave ablation", Comparison: "radiofrequency ablation", Outcome: "local tumor progression"}
	for _, q := range []string{`cancer OR carcinoma`, `"hepatocellular carcinoma"[ti] AND ("local tumor progression" OR ablation)`} {
		full, err := c.Search(ctx, q, 0)
		if err != nil {
			t.Fatal(err)
		}
		dups, err := c.Duplicates(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		var docs []Doc
		for i := range full.Hits {
			if _, dup := dups[full.Hits[i].ID]; !dup {
				docs = append(docs, DocOf(&full.Hits[i].Record))
			}
		}
		var wantIDs []string
		var wantScores []float64
		for _, sc := range RankByPICO(pico, docs, RankOptions{}) {
			wantIDs = append(wantIDs, sc.ID)
			wantScores = append(wantScores, sc.Score)
		}
		got, err := c.SearchCandidates(ctx, q, pico, DefaultSearchLimit)
		if err != nil {
			t.Fatal(err)
		}
		var gotScores []float64
		for _, h := range got.Hits {
			gotScores = append(gotScores, h.PICOScore)
			if h.Abstract() != "" || len(h.MeSH) > 0 {
				t.Errorf("%s: candidate %s holds its abstract or MeSH", q, h.ID)
			}
		}
		if got.Total != full.Total || len(got.Hits) < 20 || !slices.Equal(got.IDs(), wantIDs) || !slices.Equal(gotScores, wantScores) {
			t.Fatalf("%s: %d of %d candidates, want %d\n%v\n%v", q, len(got.Hits), got.Total, len(wantIDs), got.IDs(), wantIDs)
		}
		if wantScores[0] <= wantScores[len(wantScores)-1] {
			t.Errorf("%s: the PICO does not order the candidates: %v", q, wantScores)
		}
		top, err := c.SearchCandidates(ctx, q, pico, 7)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(top.IDs(), wantIDs[:7]) {
			t.Errorf("%s: best 7 %v, want %v", q, top.IDs(), wantIDs[:7])
		}

		bounded := &Corpus{db: db, maxCandidates: len(wantIDs) - 1}
		_, err = bounded.SearchCandidates(ctx, q, pico, 0)
		var tooMany *TooManyMatchesError
		if !errors.As(err, &tooMany) || tooMany.Matches != int64(len(wantIDs)) || tooMany.Max != len(wantIDs)-1 {
			t.Fatalf("%s: over the bound: %v", q, err)
		}
		best, err := bounded.SearchCandidates(ctx, q, pico, 5)
		if err != nil || !slices.Equal(best.IDs(), wantIDs[:5]) {
			t.Errorf("%s: the best 5 over the bound: %v, %v", q, best.IDs(), err)
		}
	}
}

// TestSearchCandidatesCancel checks that a cancelled search stops.
func TestSearchCandidatesCancel(t *testing.T) {
	db, _ := openDB(t)
	if err := DemoData(context.Background(), db, 3); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := NewCorpus(db).SearchCandidates(ctx, "cancer", PICO{Population: "cancer"}, 0); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled search: %v", err)
	}
}

package trials

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/clinsight/clinsight/vectorstore"
)

// budgetPipeline imports 3,000 synthetic trials and returns a model-free
// pipeline over them with the given row budget.
func budgetPipeline(t *testing.T, budget int) *Pipeline {
	t.Helper()
	ctx := context.Background()
	db := openDB(t)
	src := filepath.Join(t.TempDir(), "trials.jsonl")
	f, err := os.Create(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteSyntheticJSONL(ctx, f, 3000, 5); err != nil {
		t.Fatal(err)
	}
	f.Close()
	if _, err := Import(ctx, db, []string{src}, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	emb := vectorstore.NewLexicalEmbedder(0)
	p, err := New(Config{DB: db, Embedder: emb, Items: newMemItems(emb), Options: Options{RowBudget: budget}})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestBM25PlanRarestFirstWithinBudget: over the whole index the concepts
// run from the rarest on, and one is left out when the trials it matches
// (all of them, not only the rows it returns) would take the scored rows
// past the budget; the first always runs.
func TestBM25PlanRarestFirstWithinBudget(t *testing.T) {
	ctx := context.Background()
	p := budgetPipeline(t, 300)
	pt := SyntheticPatientN(7, 3)
	q, err := ExtractConcepts(pt.Description, func(text string) (int, int, error) { return p.df.get(ctx, text) }, p.opts.Extract)
	if err != nil {
		t.Fatal(err)
	}
	all := searches(q)
	kept, skipped, err := p.plan(ctx, q, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(kept) == 0 || len(skipped) == 0 || len(kept)+len(skipped) != len(all) {
		t.Fatalf("%d searches kept and %d left out of %d: the budget of 300 rows should keep some and leave out others", len(kept), len(skipped), len(all))
	}
	used := 0
	for i, s := range kept {
		df, _, err := p.df.get(ctx, s.text)
		if err != nil {
			t.Fatal(err)
		}
		if s.df != df {
			t.Errorf("%q: df %d, the index counts %d", s.text, s.df, df)
		}
		if i > 0 && kept[i-1].df > s.df {
			t.Errorf("%q (df %d) runs after %q (df %d): not rarest first", s.text, s.df, kept[i-1].text, kept[i-1].df)
		}
		used += s.df
	}
	if used > 300 && len(kept) > 1 {
		t.Errorf("the kept searches score %d rows, past the budget of 300", used)
	}
	for _, text := range skipped {
		df, _, _ := p.df.get(ctx, text)
		if used+df <= 300 {
			t.Errorf("%q (df %d) was left out though it fits the budget (%d rows used)", text, df, used)
		}
	}
	// A pool runs every search, its df unknown.
	pooled, skippedPool, err := p.plan(ctx, q, []int64{1, 2, 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(pooled) != len(all) || len(skippedPool) != 0 || pooled[0].df != -1 {
		t.Errorf("with a pool: %d searches of %d run, %d left out, df %d", len(pooled), len(all), len(skippedPool), pooled[0].df)
	}
}

// TestFTSScorerPathsAgree: the prepared whole-index query without
// ordering (a concept matching at most the limit), the ordered query with
// a limit, and the pool query give each trial the same BM25 score, and the
// ordered one returns the best trials.
func TestFTSScorerPathsAgree(t *testing.T) {
	ctx := context.Background()
	p := budgetPipeline(t, -1)
	text := "disease"
	df, _, err := p.df.get(ctx, text)
	if err != nil || df < 50 {
		t.Fatalf("df of %q: %d, %v; want a common word", text, df, err)
	}
	run := func(df int, pool []int64, limit int) []docScore {
		buf := p.fts.buffer()
		if err := p.fts.scores(ctx, text, df, pool, limit, buf); err != nil {
			t.Fatal(err)
		}
		out := slices.Clone(*buf)
		p.fts.release(buf)
		return out
	}
	every := run(df, nil, df) // unordered: every match
	if len(every) != df {
		t.Fatalf("unordered query: %d rows, want df %d", len(every), df)
	}
	byDoc := map[int64]float64{}
	for _, d := range every {
		byDoc[d.doc] = d.score
	}
	top := run(-1, nil, 20) // df unknown: ordered with the limit
	if len(top) != 20 {
		t.Fatalf("ordered query: %d rows, want 20", len(top))
	}
	scores := make([]float64, 0, len(every))
	for _, d := range every {
		scores = append(scores, d.score)
	}
	slices.Sort(scores)
	twentieth := scores[len(scores)-20]
	pool := make([]int64, 0, len(top))
	for _, d := range top {
		if math.Abs(byDoc[d.doc]-d.score) > 1e-9 {
			t.Errorf("trial %d: %g ordered, %g unordered", d.doc, d.score, byDoc[d.doc])
		}
		if d.score < twentieth-1e-9 {
			t.Errorf("trial %d (score %g) is not among the best 20 (the 20th best is %g)", d.doc, d.score, twentieth)
		}
		pool = append(pool, d.doc)
	}
	for _, d := range run(-1, pool, 0) {
		if math.Abs(byDoc[d.doc]-d.score) > 1e-9 {
			t.Errorf("trial %d: %g over the pool, %g over the index", d.doc, d.score, byDoc[d.doc])
		}
	}
}

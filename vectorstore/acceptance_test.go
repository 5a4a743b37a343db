package vectorstore

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestAcceptance100k: 100,000 documents with precomputed 384-d vectors are
// persisted and reloaded with the same count and the same top-10 (IDs,
// order, similarities) for 100 queries.
func TestAcceptance100k(t *testing.T) {
	if testing.Short() {
		t.Skip("100k documents: skipped with -short")
	}
	const (
		n, dim, queries, k = 100_000, 384, 100, 10
	)
	ctx := context.Background()
	dir := t.TempDir()
	emb := randomEmbedder{name: "model-acceptance/384", dim: dim}
	docs := randomDocs(42, n, dim)

	s := openStore(t, dir, Options{})
	c := collection(t, s, "big", emb)
	start := time.Now()
	if err := c.Add(ctx, docs); err != nil {
		t.Fatal(err)
	}
	t.Logf("add + persist %d documents: %v", n, time.Since(start))
	docs = nil // let the inputs go

	qs := randomVectors(4242, queries, dim)
	want := make([][]Result, queries)
	start = time.Now()
	for i, q := range qs {
		res, err := c.QueryVector(ctx, q, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != k {
			t.Fatalf("query %d: %d results", i, len(res))
		}
		want[i] = res
	}
	t.Logf("%d queries before reload: %v per query", queries, time.Since(start)/queries)

	start = time.Now()
	s2 := openStore(t, dir, Options{})
	c2 := collection(t, s2, "big", emb)
	t.Logf("load %d documents: %v", n, time.Since(start))
	if c2.Count() != n {
		t.Fatalf("reloaded %d documents, want %d", c2.Count(), n)
	}
	if c2.Rebuilt() {
		t.Fatal("reload rebuilt the collection")
	}
	start = time.Now()
	for i, q := range qs {
		res, err := c2.QueryVector(ctx, q, k, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(res, want[i], resultEqual) {
			t.Fatalf("query %d after reload:\n got %v\nwant %v", i, ids(res), ids(want[i]))
		}
	}
	t.Logf("%d queries after reload: %v per query", queries, time.Since(start)/queries)

	// A filtered query over the reloaded collection.
	res, err := c2.QueryVector(ctx, qs[0], k, map[string]string{"group": "3"})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.Metadata["group"] != "3" {
			t.Fatalf("filtered result %s has group %q", r.ID, r.Metadata["group"])
		}
	}
	if len(res) != k {
		t.Fatalf("filtered query: %d results", len(res))
	}
}

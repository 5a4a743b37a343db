package vectorstore

import (
	"context"
	"testing"
	"time"
)

// benchCollection builds a collection of n random 384-d documents.
func benchCollection(b *testing.B, dir string, n int) (*Store, *Collection) {
	b.Helper()
	s := openStore(b, dir, Options{})
	c := collection(b, s, "bench", randomEmbedder{name: "bench/384", dim: 384})
	if err := c.Add(context.Background(), randomDocs(1, n, 384)); err != nil {
		b.Fatal(err)
	}
	return s, c
}

func benchmarkQuery(b *testing.B, n int) {
	_, c := benchCollection(b, b.TempDir(), n)
	qs := randomVectors(2, 64, 384)
	ctx := context.Background()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		if _, err := c.QueryVector(ctx, qs[i%len(qs)], 10, nil); err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/query")
}

// BenchmarkQuery10k: top-10 over 10,000 documents of 384 dimensions.
func BenchmarkQuery10k(b *testing.B) { benchmarkQuery(b, 10_000) }

// BenchmarkQuery100k: top-10 over 100,000 documents of 384 dimensions.
func BenchmarkQuery100k(b *testing.B) { benchmarkQuery(b, 100_000) }

// BenchmarkPersistLoad100k: adding 100,000 precomputed 384-d vectors in one
// call (copy, normalise, write the file, index), rewriting the file alone
// (what each later change costs), and loading it with Open.
func BenchmarkPersistLoad100k(b *testing.B) {
	docs := randomDocs(1, 100_000, 384)
	emb := randomEmbedder{name: "bench/384", dim: 384}
	ctx := context.Background()
	var add, persist, load time.Duration
	for b.Loop() {
		dir := b.TempDir()
		s := openStore(b, dir, Options{})
		c := collection(b, s, "bench", emb)
		start := time.Now()
		if err := c.Add(ctx, docs); err != nil {
			b.Fatal(err)
		}
		add += time.Since(start)
		start = time.Now()
		if err := c.persist(c.embName, c.dim, c.recs); err != nil {
			b.Fatal(err)
		}
		persist += time.Since(start)
		start = time.Now()
		s2 := openStore(b, dir, Options{})
		load += time.Since(start)
		if c2 := collection(b, s2, "bench", emb); c2.Count() != len(docs) {
			b.Fatalf("loaded %d documents", c2.Count())
		}
	}
	b.ReportMetric(float64(add.Milliseconds())/float64(b.N), "ms/add")
	b.ReportMetric(float64(persist.Milliseconds())/float64(b.N), "ms/persist")
	b.ReportMetric(float64(load.Milliseconds())/float64(b.N), "ms/load")
}

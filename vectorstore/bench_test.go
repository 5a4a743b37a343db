package vectorstore

import (
	"context"
	"os"
	"runtime"
	"sync"
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

// benchCollections caches the collections of the query benchmarks by size,
// so that BenchmarkQuery100k and BenchmarkChromemQuery100k of one run query
// the same vectors (and build them once).
var benchCollections = struct {
	sync.Mutex
	m map[int]*Collection
}{m: map[int]*Collection{}}

func sharedBenchCollection(b *testing.B, n int) *Collection {
	b.Helper()
	benchCollections.Lock()
	defer benchCollections.Unlock()
	if c, ok := benchCollections.m[n]; ok {
		return c
	}
	// The directory outlives this benchmark (b.TempDir would not).
	dir, err := os.MkdirTemp("", "vectorstore-bench-")
	if err != nil {
		b.Fatal(err)
	}
	_, c := benchCollection(b, dir, n)
	// The vectors are in memory now; the file is not needed.
	if err := os.RemoveAll(dir); err != nil {
		b.Fatal(err)
	}
	benchCollections.m[n] = c
	// The inputs are garbage now: collect them before the timed queries,
	// rather than during them.
	runtime.GC()
	return c
}

// benchmarkQuery measures a top-10 query, by the exact scan (chromem false)
// or by chromem-go's own QueryEmbedding over the same documents.
func benchmarkQuery(b *testing.B, n int, chromem bool) {
	c := sharedBenchCollection(b, n)
	qs := randomVectors(2, 64, 384)
	for i, q := range qs {
		qs[i], _ = normalized(q)
	}
	ctx := context.Background()
	b.ResetTimer()
	i := 0
	for b.Loop() {
		var err error
		if chromem {
			_, err = c.chroma.QueryEmbedding(ctx, qs[i%len(qs)], 10, nil, nil)
		} else {
			_, err = c.QueryVector(ctx, qs[i%len(qs)], 10, nil)
		}
		if err != nil {
			b.Fatal(err)
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/query")
}

// BenchmarkQuery10k: top-10 over 10,000 documents of 384 dimensions.
func BenchmarkQuery10k(b *testing.B) { benchmarkQuery(b, 10_000, false) }

// BenchmarkQuery100k: top-10 over 100,000 documents of 384 dimensions.
func BenchmarkQuery100k(b *testing.B) { benchmarkQuery(b, 100_000, false) }

// BenchmarkChromemQuery100k: chromem-go's own QueryEmbedding on the vectors
// of BenchmarkQuery100k, the reference its time is compared with in the
// same run.
func BenchmarkChromemQuery100k(b *testing.B) { benchmarkQuery(b, 100_000, true) }

// benchmarkFloor is the reference for a query over the same
// matrix: a plain Go loop summing every value of it on as many goroutines
// as the scan uses, with no dot product, heap or filter. It reads the same
// memory; its scalar additions can make it slower than the SIMD dot
// products of the scan, so it bounds what reading the matrix costs from
// above, not from below.
func benchmarkFloor(b *testing.B, n int) {
	c := sharedBenchCollection(b, n)
	mat := c.mat
	workers := runtime.GOMAXPROCS(0)
	sums := make([]float32, workers)
	b.ResetTimer()
	for b.Loop() {
		var wg sync.WaitGroup
		chunk := (len(mat) + workers - 1) / workers
		for w := range workers {
			part := mat[min(w*chunk, len(mat)):min((w+1)*chunk, len(mat))]
			wg.Go(func() {
				var s0, s1, s2, s3 float32
				for i := 0; i+4 <= len(part); i += 4 {
					s0 += part[i]
					s1 += part[i+1]
					s2 += part[i+2]
					s3 += part[i+3]
				}
				sums[w] = s0 + s1 + s2 + s3
			})
		}
		wg.Wait()
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/query")
}

// BenchmarkFloor100k: the reference of BenchmarkQuery100k.
func BenchmarkFloor100k(b *testing.B) { benchmarkFloor(b, 100_000) }

// BenchmarkFloor1M: the reference of BenchmarkQuery1M (run only with
// $CLINSIGHT_BENCH_1M, like it).
func BenchmarkFloor1M(b *testing.B) {
	if os.Getenv(bench1MEnv) == "" {
		b.Skipf("1,000,000 × 384 needs about 3 GB of memory: set %s=1 to run it", bench1MEnv)
	}
	benchmarkFloor(b, 1_000_000)
}

// bench1MEnv names the environment variable that enables
// BenchmarkQuery1M: its collection takes about 1.5 GB of vectors (plus the
// random inputs while it is built).
const bench1MEnv = "CLINSIGHT_BENCH_1M"

// BenchmarkQuery1M: top-10 over 1,000,000 documents of 384 dimensions, run
// only when $CLINSIGHT_BENCH_1M is set (e.g. to 1).
func BenchmarkQuery1M(b *testing.B) {
	if os.Getenv(bench1MEnv) == "" {
		b.Skipf("1,000,000 × 384 needs about 3 GB of memory: set %s=1 to run it", bench1MEnv)
	}
	benchmarkQuery(b, 1_000_000, false)
}

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

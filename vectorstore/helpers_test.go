package vectorstore

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
)

// countingEmbedder wraps an embedder, records the size of every batch it
// receives, and can cancel a context after a number of calls.
type countingEmbedder struct {
	Embedder
	name string // overrides the wrapped name when set

	mu      sync.Mutex
	batches []int

	cancelAfter int // > 0: call cancel once this many calls were made
	cancel      context.CancelFunc
}

func (e *countingEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	e.mu.Lock()
	e.batches = append(e.batches, len(texts))
	calls := len(e.batches)
	e.mu.Unlock()
	if e.cancelAfter > 0 && calls >= e.cancelAfter && e.cancel != nil {
		e.cancel()
	}
	return e.Embedder.Embed(ctx, texts)
}

func (e *countingEmbedder) EmbedderName() string {
	if e.name != "" {
		return e.name
	}
	return e.Embedder.EmbedderName()
}

func (e *countingEmbedder) calls() []int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]int(nil), e.batches...)
}

// randomEmbedder gives every text a deterministic random vector (seeded by
// the text), under a fixed name: the stand-in for a model in tests that use
// precomputed vectors.
type randomEmbedder struct {
	name string
	dim  int
}

func (e randomEmbedder) EmbedderName() string { return e.name }

func (e randomEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = randomVectors(newFNV().str(t), 1, e.dim)[0]
	}
	return out, nil
}

// randomVectors returns n deterministic random vectors of dim dimensions.
func randomVectors(seed uint64, n, dim int) [][]float32 {
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	slab := make([]float32, n*dim)
	for i := range slab {
		slab[i] = float32(rng.NormFloat64())
	}
	out := make([][]float32, n)
	for i := range out {
		out[i] = slab[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return out
}

// randomDocs returns n documents with precomputed random vectors and a
// "group" metadata value (i mod 10).
func randomDocs(seed uint64, n, dim int) []Document {
	vecs := randomVectors(seed, n, dim)
	docs := make([]Document, n)
	for i := range docs {
		docs[i] = Document{
			ID:        fmt.Sprintf("doc-%06d", i),
			Text:      fmt.Sprintf("document number %d", i),
			Metadata:  map[string]string{"group": fmt.Sprint(i % 10)},
			Embedding: vecs[i],
		}
	}
	return docs
}

func openStore(tb testing.TB, dir string, opts Options) *Store {
	tb.Helper()
	s, err := Open(dir, opts)
	if err != nil {
		tb.Fatalf("Open(%s): %v", dir, err)
	}
	return s
}

func collection(tb testing.TB, s *Store, name string, emb Embedder) *Collection {
	tb.Helper()
	c, err := s.Collection(context.Background(), name, emb)
	if err != nil {
		tb.Fatalf("Collection(%q): %v", name, err)
	}
	return c
}

func ids(rs []Result) []string {
	out := make([]string, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

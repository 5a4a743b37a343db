package vectorstore

import (
	"context"
	"errors"
	"fmt"
	"math"
)

// Embedder turns texts into vectors, in batches. Name identifies the model (or
// the fallback) so a collection records which embedder built it.
//
// Embed returns one vector per text, in order, all of the same length. Two
// embedders with the same EmbedderName must produce the same vectors: the
// name is what decides whether a stored collection has to be rebuilt.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
	EmbedderName() string
}

// errChromemEmbed is returned by refuseEmbedding; seeing it means a bug here.
var errChromemEmbed = errors.New("vectorstore: internal error: chromem asked to embed a text itself; vectors must be precomputed")

// refuseEmbedding is the embedding function of every chromem collection. It
// stops chromem from falling back to its default (OpenAI, over the network):
// documents and queries always reach chromem with their vectors.
func refuseEmbedding(context.Context, string) ([]float32, error) {
	return nil, errChromemEmbed
}

// normalizeInto writes v scaled to unit L2 length into dst (len(dst) == len(v)).
// It fails on an empty, zero, infinite or NaN vector.
func normalizeInto(dst, v []float32) error {
	norm, err := vectorNorm(v)
	if err != nil {
		return err
	}
	inv := 1 / norm
	for i, x := range v {
		dst[i] = float32(float64(x) * inv)
	}
	return nil
}

// vectorNorm returns the L2 norm of v; it fails on an empty, zero, infinite
// or NaN vector.
func vectorNorm(v []float32) (float64, error) {
	if len(v) == 0 {
		return 0, errors.New("empty vector")
	}
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	norm := math.Sqrt(sum)
	if norm == 0 || math.IsNaN(norm) || math.IsInf(norm, 0) {
		return 0, fmt.Errorf("vector norm is %v (zero, NaN or infinite values)", norm)
	}
	return norm, nil
}

// normalized returns a normalised copy of v.
func normalized(v []float32) ([]float32, error) {
	out := make([]float32, len(v))
	if err := normalizeInto(out, v); err != nil {
		return nil, err
	}
	return out, nil
}

// embedBatches embeds texts through emb, batch texts per call, and returns
// normalised copies of the vectors, all of length dim (dim 0: set by the first
// vector). progress, if not nil, is called after each batch with the number of
// texts done. It stops at the first error or when ctx is cancelled.
func embedBatches(ctx context.Context, emb Embedder, texts []string, batch, dim int, progress func(done int)) ([][]float32, int, error) {
	if batch < 1 {
		batch = 1
	}
	out := make([][]float32, len(texts))
	var slab []float32 // one allocation per batch keeps vectors close in memory
	for start := 0; start < len(texts); start += batch {
		if err := ctx.Err(); err != nil {
			return nil, 0, fmt.Errorf("embedding stopped after %d of %d texts: %w", start, len(texts), err)
		}
		end := min(start+batch, len(texts))
		vecs, err := emb.Embed(ctx, texts[start:end])
		if err != nil {
			return nil, 0, fmt.Errorf("embedding texts %d-%d of %d with %q: %w", start+1, end, len(texts), emb.EmbedderName(), err)
		}
		if len(vecs) != end-start {
			return nil, 0, fmt.Errorf("embedder %q returned %d vectors for %d texts", emb.EmbedderName(), len(vecs), end-start)
		}
		if dim == 0 && len(vecs) > 0 {
			dim = len(vecs[0])
		}
		slab = make([]float32, dim*len(vecs))
		for i, v := range vecs {
			if len(v) != dim {
				return nil, 0, fmt.Errorf("embedder %q: text %d: %w: got %d, want %d", emb.EmbedderName(), start+i+1, ErrDimension, len(v), dim)
			}
			dst := slab[i*dim : (i+1)*dim : (i+1)*dim]
			if err := normalizeInto(dst, v); err != nil {
				return nil, 0, fmt.Errorf("embedder %q: text %d: %w", emb.EmbedderName(), start+i+1, err)
			}
			out[start+i] = dst
		}
		if progress != nil {
			progress(end)
		}
	}
	return out, dim, nil
}

package ollamatest

import (
	"hash/fnv"
	"math"

	"github.com/clinsight/clinsight/internal/textsearch"
)

// Embedding returns a deterministic, L2-normalised vector of length dim for
// text: a hashed bag of its words (textsearch.Words), each
// word adding ±1 to one coordinate. Texts that share words are close in
// cosine similarity, so retrieval tests behave sensibly. A text without
// words gets the uniform vector.
func Embedding(text string, dim int) []float32 {
	if dim <= 0 {
		dim = DefaultDimension
	}
	v := make([]float64, dim)
	for _, w := range textsearch.Words(text) {
		h := fnv.New64a()
		h.Write([]byte(w))
		x := h.Sum64()
		sign := 1.0
		if x>>63 == 1 {
			sign = -1
		}
		v[x%uint64(dim)] += sign
	}
	var norm float64
	for _, x := range v {
		norm += x * x
	}
	out := make([]float32, dim)
	if norm == 0 {
		for i := range out {
			out[i] = float32(1 / math.Sqrt(float64(dim)))
		}
		return out
	}
	norm = math.Sqrt(norm)
	for i, x := range v {
		out[i] = float32(x / norm)
	}
	return out
}

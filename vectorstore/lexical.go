package vectorstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/clinsight/clinsight/internal/textsearch"
)

// DefaultLexicalDim is the dimension of a [LexicalEmbedder] created with a
// dimension below 1.
const DefaultLexicalDim = 384

// Names of the lexical embedders; a version bump means other vectors (v2:
// the English stop words of textsearch, where v1 had a shorter list).
const (
	lexicalPrefix  = "lexical-"
	lexicalName    = "lexical-hash-v2"
	lexicalIDFName = "lexical-hash-idf-v2"
)

// Weights of the two kinds of features: whole words count most, character
// trigrams let related word forms ("diabetes", "diabetic") meet.
const (
	wordWeight    = 1.0
	trigramWeight = 0.3
)

// LexicalEmbedder is the fallback [Embedder] used when no embedding model is
// available: a hashed bag of words, deterministic and local, with no notion of
// synonyms ("heart attack" and "myocardial infarction" do not meet).
//
// A text is split into its words ([textsearch.Words]: lower-cased runs of
// letters and digits); English stop words ([textsearch.IsStopWord]) are
// dropped. Each remaining word is a feature, and
// so is each character trigram of a word containing a letter, with the word
// wrapped in '<' and '>' ("<di", "dia", ..., "es>"). A feature's weight is
// its class weight (words 1, trigrams 0.3) times 1+ln(tf) (sublinear term
// frequency) times, after [LexicalEmbedder.Fit], its smoothed inverse
// document frequency ln((1+N)/(1+df))+1 ([textsearch.SmoothIDF]). Features are hashed (64-bit FNV-1a)
// into Dim buckets with a hash-derived sign, so that collisions cancel out
// on average; the vector is L2-normalised. A text without any feature maps to
// one fixed unit vector.
//
// A LexicalEmbedder never changes: Fit returns a new one, with another name,
// so a collection never mixes vectors of a fitted and an unfitted embedder.
// It is safe for concurrent use.
type LexicalEmbedder struct {
	dim  int
	name string
	// idf holds the fitted inverse document frequency of every feature seen
	// by Fit; nil without Fit. Unseen features get idfUnseen.
	idf       map[uint64]float32
	idfUnseen float32
}

// NewLexicalEmbedder returns an unfitted lexical embedder of dim dimensions
// (below 1: [DefaultLexicalDim]; at most 65536). Its name is
// "lexical-hash-v1/<dim>".
func NewLexicalEmbedder(dim int) *LexicalEmbedder {
	if dim < 1 {
		dim = DefaultLexicalDim
	}
	dim = min(dim, maxDim)
	return &LexicalEmbedder{dim: dim, name: fmt.Sprintf("%s/%d", lexicalName, dim)}
}

// IsLexical reports whether an embedder name (as recorded by a collection) is
// one of the lexical fallback's, so that the UI and provenance can say that
// results come from word matching rather than from an embedding model.
func IsLexical(embedderName string) bool { return strings.HasPrefix(embedderName, lexicalPrefix) }

// EmbedderName implements [Embedder]: "lexical-hash-v1/<dim>", or
// "lexical-hash-idf-v1/<dim>/<fingerprint>" once fitted, the fingerprint
// being a hash of the fitted document frequencies.
func (e *LexicalEmbedder) EmbedderName() string { return e.name }

// Dim returns the vector dimension.
func (e *LexicalEmbedder) Dim() int { return e.dim }

// Fit returns a copy of e weighted by the inverse document frequencies of
// the features of texts (one text, one document). The receiver is unchanged.
// Fitting on the same texts gives the same name and vectors.
func (e *LexicalEmbedder) Fit(texts []string) *LexicalEmbedder {
	df := make(map[uint64]uint32)
	seen := make(map[uint64]struct{})
	for _, t := range texts {
		clear(seen)
		forEachFeature(t, func(h uint64, _ float64) { seen[h] = struct{}{} })
		for h := range seen {
			df[h]++
		}
	}
	out := &LexicalEmbedder{
		dim:       e.dim,
		idf:       make(map[uint64]float32, len(df)),
		idfUnseen: float32(textsearch.SmoothIDF(len(texts), 0)),
	}
	keys := make([]uint64, 0, len(df))
	for h, c := range df {
		out.idf[h] = float32(textsearch.SmoothIDF(len(texts), int(c)))
		keys = append(keys, h)
	}
	// Fingerprint: the corpus size and the sorted (feature, df) pairs.
	slices.Sort(keys)
	fp := newFNV()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], uint64(len(texts)))
	fp = fp.bytes(b[:])
	for _, h := range keys {
		binary.LittleEndian.PutUint64(b[:], h)
		fp = fp.bytes(b[:])
		binary.LittleEndian.PutUint64(b[:], uint64(df[h]))
		fp = fp.bytes(b[:])
	}
	out.name = fmt.Sprintf("%s/%d/%08x", lexicalIDFName, e.dim, uint32(fp))
	return out
}

// Embed implements [Embedder].
func (e *LexicalEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, fmt.Errorf("lexical embedding: %w", err)
			}
		}
		out[i] = e.vector(t)
	}
	return out, nil
}

// vector embeds one text.
func (e *LexicalEmbedder) vector(text string) []float32 {
	weights := make(map[uint64]float64)
	counts := make(map[uint64]float64)
	forEachFeature(text, func(h uint64, w float64) {
		weights[h] = w
		counts[h]++
	})
	v := make([]float32, e.dim)
	if len(counts) == 0 {
		v[emptyBucket(e.dim)] = 1
		return v
	}
	acc := make([]float64, e.dim)
	for h, tf := range counts {
		w := weights[h] * (1 + math.Log(tf))
		if e.idf != nil {
			idf, ok := e.idf[h]
			if !ok {
				idf = e.idfUnseen
			}
			w *= float64(idf)
		}
		if h>>63 == 1 {
			w = -w
		}
		acc[h%uint64(e.dim)] += w
	}
	var sum float64
	for _, x := range acc {
		sum += x * x
	}
	if sum == 0 { // every feature cancelled out: fall back to the fixed vector
		v[emptyBucket(e.dim)] = 1
		return v
	}
	norm := math.Sqrt(sum)
	for i, x := range acc {
		v[i] = float32(x / norm)
	}
	return v
}

// forEachFeature calls f with the hash and class weight of every feature
// occurrence of text: its words (stop words removed) and their trigrams.
func forEachFeature(text string, f func(h uint64, weight float64)) {
	for _, tok := range textsearch.Words(text) {
		if textsearch.IsStopWord(tok) {
			continue
		}
		f(newFNV().byte('w').str(tok), wordWeight)
		if !textsearch.HasLetter(tok) {
			continue // numbers match as whole words only
		}
		var r [3]rune
		n := 0
		push := func(c rune) {
			r[0], r[1], r[2] = r[1], r[2], c
			if n++; n >= 3 {
				f(uint64(newFNV().byte('g').rune(r[0]).rune(r[1]).rune(r[2])), trigramWeight)
			}
		}
		push('<')
		for _, c := range tok {
			push(c)
		}
		push('>')
	}
}

// fnv is a 64-bit FNV-1a hash being computed, without allocations.
type fnv uint64

func newFNV() fnv { return 14695981039346656037 }

func (h fnv) byte(c byte) fnv { return (h ^ fnv(c)) * 1099511628211 }

func (h fnv) bytes(p []byte) fnv {
	for _, c := range p {
		h = h.byte(c)
	}
	return h
}

func (h fnv) str(s string) uint64 {
	for i := 0; i < len(s); i++ {
		h = h.byte(s[i])
	}
	return uint64(h)
}

func (h fnv) rune(r rune) fnv {
	var b [utf8.UTFMax]byte
	return h.bytes(b[:utf8.EncodeRune(b[:], r)])
}

// emptyBucket is the position of the one non-zero value of the vector of a
// text without features.
func emptyBucket(dim int) int { return int(newFNV().str("\x00empty") % uint64(dim)) }

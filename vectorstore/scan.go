package vectorstore

import (
	"context"
	"runtime"
	"slices"
	"strings"
	"sync/atomic"

	"golang.org/x/sync/errgroup"
	"gonum.org/v1/gonum/blas"
	"gonum.org/v1/gonum/blas/blas32"
)

// Exact search. A query is scored against every vector of the collection:
// the vectors are one contiguous row-major float32 matrix (see matrix.go),
// cut into blocks of rows; each worker takes the next block, multiplies it
// by the query with BLAS (blas32.Gemv, gonum's SIMD dot products) into a
// small score buffer and keeps its best k rows in a fixed-size heap; the
// heaps are merged at the end. A metadata filter becomes a bitmap of the
// block's rows before the block is scored, and only runs of matching rows
// are multiplied. The scan reads the matrix once, so its time is bounded by
// memory bandwidth; no approximate index is kept.

// blockBytes is the size of the slice of the matrix a worker scores at a
// time: small enough to spread 100,000 rows over many blocks (workers that
// are slowed down by other processes take fewer), large enough that taking
// a block costs nothing next to scoring it.
const blockBytes = 256 << 10

// parallelMin is the number of matrix values under which a query is scored
// on the calling goroutine: starting workers would cost more than the scan.
const parallelMin = 1 << 18

// hit is a scored row of the matrix.
type hit struct {
	row   int
	score float32
}

// ranker orders hits: higher score first, then lower document ID, so that
// results do not depend on how rows were split between workers.
type ranker struct{ recs []*record }

// better reports whether a ranks before b.
func (r ranker) better(a, b hit) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return r.recs[a.row].id < r.recs[b.row].id
}

// topK is a fixed-size min-heap of the k best hits seen: its root is the
// worst of them, the one the next better hit replaces.
type topK struct {
	r ranker
	k int
	h []hit
}

func newTopK(r ranker, k int) *topK { return &topK{r: r, k: k, h: make([]hit, 0, k)} }

// offer considers a hit.
func (t *topK) offer(x hit) {
	if len(t.h) < t.k {
		t.h = append(t.h, x)
		// Sift up.
		for i := len(t.h) - 1; i > 0; {
			p := (i - 1) / 2
			if !t.r.better(t.h[p], t.h[i]) {
				break
			}
			t.h[p], t.h[i] = t.h[i], t.h[p]
			i = p
		}
		return
	}
	if !t.r.better(x, t.h[0]) {
		return
	}
	t.h[0] = x
	// Sift down: the worse child moves up.
	for i, n := 0, len(t.h); ; {
		w, l := i, 2*i+1
		if l < n && t.r.better(t.h[w], t.h[l]) {
			w = l
		}
		if r := l + 1; r < n && t.r.better(t.h[w], t.h[r]) {
			w = r
		}
		if w == i {
			return
		}
		t.h[i], t.h[w] = t.h[w], t.h[i]
		i = w
	}
}

// offerScores offers rows lo, lo+1, ... with the given scores. The common
// case, a score under the worst kept one, costs one comparison.
func (t *topK) offerScores(lo int, scores []float32) {
	for i, s := range scores {
		if len(t.h) == t.k && s < t.h[0].score {
			continue
		}
		t.offer(hit{row: lo + i, score: s})
	}
}

// matches reports whether metadata has every key/value of where; a missing
// key matches the value "" (chromem-go's rule, kept by this package).
func matches(meta, where map[string]string) bool {
	for k, v := range where {
		if meta[k] != v {
			return false
		}
	}
	return true
}

// search returns the k best rows of mat (rows of dim values, row i being
// recs[i]) for the normalised query q, among the rows whose metadata matches
// where (nil: all), best first. It stops when ctx is cancelled.
func search(ctx context.Context, mat []float32, dim int, recs []*record, q []float32, k int, where map[string]string) ([]hit, error) {
	n := len(recs)
	if n == 0 || k <= 0 {
		return nil, nil
	}
	k = min(k, n)
	rk := ranker{recs: recs}
	blockRows := max(1, blockBytes/(4*dim))
	blocks := (n + blockRows - 1) / blockRows
	workers := 1
	if n*dim >= parallelMin {
		workers = min(runtime.GOMAXPROCS(0), blocks)
	}
	heaps := make([]*topK, workers)
	var next atomic.Int64
	work := func(w int) error {
		top := newTopK(rk, k)
		heaps[w] = top
		scores := make([]float32, blockRows)
		var keep []bool
		if len(where) > 0 {
			keep = make([]bool, blockRows)
		}
		for {
			b := int(next.Add(1) - 1)
			if b >= blocks {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			lo := b * blockRows
			hi := min(lo+blockRows, n)
			if keep == nil {
				gemv(mat, dim, lo, hi, q, scores)
				top.offerScores(lo, scores[:hi-lo])
				continue
			}
			// The filter first, as a bitmap of the block's rows; then only
			// runs of matching rows are scored.
			for i := lo; i < hi; i++ {
				keep[i-lo] = matches(recs[i].meta, where)
			}
			for i := lo; i < hi; {
				if !keep[i-lo] {
					i++
					continue
				}
				j := i + 1
				for j < hi && keep[j-lo] {
					j++
				}
				gemv(mat, dim, i, j, q, scores)
				top.offerScores(i, scores[:j-i])
				i = j
			}
		}
	}
	if workers == 1 {
		if err := work(0); err != nil {
			return nil, err
		}
	} else {
		g := new(errgroup.Group)
		g.SetLimit(workers)
		for w := range workers {
			g.Go(func() error { return work(w) })
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
	}
	var all []hit
	for _, h := range heaps {
		all = append(all, h.h...)
	}
	slices.SortFunc(all, func(a, b hit) int {
		switch {
		case rk.better(a, b):
			return -1
		case rk.better(b, a):
			return 1
		}
		return strings.Compare(recs[a.row].id, recs[b.row].id)
	})
	return all[:min(k, len(all))], nil
}

// gemv writes the dot products of q with rows lo..hi-1 of mat into scores.
func gemv(mat []float32, dim, lo, hi int, q, scores []float32) {
	rows := hi - lo
	a := blas32.General{Rows: rows, Cols: dim, Stride: dim, Data: mat[lo*dim : hi*dim]}
	blas32.Gemv(blas.NoTrans, 1, a, blas32.Vector{N: dim, Inc: 1, Data: q}, 0, blas32.Vector{N: rows, Inc: 1, Data: scores[:rows]})
}

package vectorstore

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// scoreTol is how far a similarity may differ from chromem-go's: both sum
// float32 products, in another order.
const scoreTol = 1e-6

// chromemResults asks the collection's chromem-go index, the document store
// of record, the same question: the reference the exact scan must match.
func chromemResults(t *testing.T, c *Collection, q []float32, n int, where map[string]string) []Result {
	t.Helper()
	c.mu.RLock()
	defer c.mu.RUnlock()
	qn, err := normalized(q)
	if err != nil {
		t.Fatal(err)
	}
	found, err := c.chroma.QueryEmbedding(context.Background(), qn, min(n, len(c.recs)), where, nil)
	if err != nil {
		t.Fatalf("chromem QueryEmbedding: %v", err)
	}
	out := make([]Result, len(found))
	for i, f := range found {
		out[i] = Result{ID: f.ID, Similarity: f.Similarity}
	}
	return out
}

// sameResults checks that got and want (chromem's) hold the same documents
// with the same similarities, rank by rank, to scoreTol. Documents whose
// similarity is within scoreTol of the last one may differ (a tie at the
// cut-off is broken by ID here, arbitrarily by chromem), and so may the
// order of documents tied within scoreTol. It returns how many documents
// were compared by ID.
func sameResults(t *testing.T, label string, got, want []Result) int {
	t.Helper()
	if len(got) != len(want) {
		t.Errorf("%s: %d results, chromem-go %d", label, len(got), len(want))
		return 0
	}
	if len(got) == 0 {
		return 0
	}
	for i := range got {
		if d := math.Abs(float64(got[i].Similarity) - float64(want[i].Similarity)); d > scoreTol {
			t.Errorf("%s: rank %d: %s %.9f, chromem-go %s %.9f", label, i+1, got[i].ID, got[i].Similarity, want[i].ID, want[i].Similarity)
			return 0
		}
		if i > 0 && got[i].Similarity > got[i-1].Similarity {
			t.Errorf("%s: rank %d: similarity %v above the previous %v", label, i+1, got[i].Similarity, got[i-1].Similarity)
		}
	}
	cut := float64(want[len(want)-1].Similarity) + scoreTol
	strict := func(rs []Result) map[string]float32 {
		m := map[string]float32{}
		for _, r := range rs {
			if float64(r.Similarity) > cut {
				m[r.ID] = r.Similarity
			}
		}
		return m
	}
	g, w := strict(got), strict(want)
	for id, s := range w {
		gs, ok := g[id]
		if !ok {
			t.Errorf("%s: chromem-go finds %s (%.9f), the scan does not", label, id, s)
			continue
		}
		if d := math.Abs(float64(gs) - float64(s)); d > scoreTol {
			t.Errorf("%s: %s: similarity %.9f, chromem-go %.9f", label, id, gs, s)
		}
	}
	for id := range g {
		if _, ok := w[id]; !ok {
			t.Errorf("%s: the scan finds %s, chromem-go does not", label, id)
		}
	}
	return len(w)
}

// checkScores checks every result's similarity against a float64 dot
// product of the query with the document's stored vector.
func checkScores(t *testing.T, label string, c *Collection, q []float32, res []Result) {
	t.Helper()
	qn, _ := normalized(q)
	for _, r := range res {
		d, ok := c.Get(r.ID)
		if !ok {
			t.Errorf("%s: result %s is not in the collection", label, r.ID)
			continue
		}
		var dot float64
		for i, x := range d.Embedding {
			dot += float64(x) * float64(qn[i])
		}
		if math.Abs(dot-float64(r.Similarity)) > scoreTol {
			t.Errorf("%s: %s: similarity %.9f, dot product %.9f", label, r.ID, r.Similarity, dot)
		}
	}
}

// TestScanMatchesChromemRandom: on 20,000 random 384-d documents (enough to
// be scored by several workers), the exact scan returns chromem-go's
// QueryEmbedding results: the same IDs and similarities to 1e-6, without
// and with metadata filters, for several result counts.
func TestScanMatchesChromemRandom(t *testing.T) {
	const n, dim = 20_000, 384
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{})
	c := collection(t, s, "random", randomEmbedder{name: "random/384", dim: dim})
	docs := randomDocs(7, n, dim)
	for i := range docs {
		if i%1000 == 0 {
			docs[i].Metadata["rare"] = "yes"
		}
	}
	if err := c.Add(ctx, docs); err != nil {
		t.Fatal(err)
	}
	compared := 0
	for qi, q := range randomVectors(8, 12, dim) {
		for _, tc := range []struct {
			n     int
			where map[string]string
		}{
			{1, nil}, {10, nil}, {100, nil},
			{10, map[string]string{"group": "3"}},
			{50, map[string]string{"rare": "yes"}},            // 20 match: fewer results than asked
			{10, map[string]string{"group": "3", "rare": ""}}, // a missing key matches ""
			{10, map[string]string{"group": "none"}},          // nothing matches
		} {
			label := fmt.Sprintf("query %d, n %d, where %v", qi, tc.n, tc.where)
			got, err := c.QueryVector(ctx, q, tc.n, tc.where)
			if err != nil {
				t.Fatalf("%s: %v", label, err)
			}
			compared += sameResults(t, label, got, chromemResults(t, c, q, tc.n, tc.where))
			checkScores(t, label, c, q, got)
			for _, r := range got {
				d, _ := c.Get(r.ID)
				if !matches(d.Metadata, tc.where) || !matches(r.Metadata, tc.where) {
					t.Errorf("%s: %s does not match the filter", label, r.ID)
				}
			}
		}
	}
	if compared < 12*100 {
		t.Errorf("only %d results compared by ID", compared)
	}
}

// TestScanMatchesChromemRealTexts: the same agreement on embeddings of real
// texts (the titles and abstracts of Cohen et al.'s screening collections,
// embedded by the lexical embedder fitted on them: skewed, clustered vectors
// with near-duplicates), queried with the titles.
func TestScanMatchesChromemRealTexts(t *testing.T) {
	dir := realdata.Path(t, "screening-cohen-2006")
	var docs []Document
	var titles []string
	for _, name := range []string{"ADHD.csv", "Triptans.csv", "NSAIDS.csv", "Estrogens.csv"} {
		f, err := os.Open(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		r := csv.NewReader(f)
		head, err := r.Read()
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		col := map[string]int{}
		for i, h := range head {
			col[h] = i
		}
		for line := 2; ; line++ {
			rec, err := r.Read()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("%s line %d: %v", name, line, err)
			}
			text := rec[col["title"]] + "\n" + rec[col["abstract"]]
			docs = append(docs, Document{
				ID:       fmt.Sprintf("%s-%s", name, rec[col["record_id"]]),
				Text:     text,
				Metadata: map[string]string{"review": name, "included": rec[col["label_included"]]},
			})
			if line%25 == 0 {
				titles = append(titles, rec[col["title"]])
			}
		}
		f.Close()
	}
	if len(docs) < 2000 || len(titles) < 50 {
		t.Fatalf("read %d documents, %d titles: the data changed", len(docs), len(titles))
	}
	texts := make([]string, len(docs))
	for i, d := range docs {
		texts[i] = d.Text
	}
	emb := NewLexicalEmbedder(384).Fit(texts)
	ctx := context.Background()
	c := collection(t, openStore(t, t.TempDir(), Options{}), "screening", emb)
	if err := c.Add(ctx, docs); err != nil {
		t.Fatal(err)
	}
	qs, err := emb.Embed(ctx, titles)
	if err != nil {
		t.Fatal(err)
	}
	compared := 0
	for i, q := range qs {
		for _, where := range []map[string]string{nil, {"review": "Triptans.csv"}, {"included": "1"}} {
			label := fmt.Sprintf("title %q, where %v", titles[i], where)
			got, err := c.QueryVector(ctx, q, 10, where)
			if err != nil {
				t.Fatal(err)
			}
			compared += sameResults(t, label, got, chromemResults(t, c, q, 10, where))
			checkScores(t, label, c, q, got)
		}
	}
	t.Logf("%d documents, %d queries × 3 filters, %d results compared by ID", len(docs), len(qs), compared)
	if compared < len(qs)*10 {
		t.Errorf("only %d results compared by ID", compared)
	}
}

// checkMatrix checks the invariants of matrix.go: the matrix has one row
// per record, each record's vector is its row (the same memory), chromem-go
// holds the same documents with the same vectors, and a query agrees with
// chromem-go's.
func checkMatrix(t *testing.T, label string, c *Collection) {
	t.Helper()
	c.mu.RLock()
	recs, mat, dim, chroma := c.recs, c.mat, c.dim, c.chroma
	if len(mat) != len(recs)*dim {
		t.Errorf("%s: matrix of %d values for %d records of %d", label, len(mat), len(recs), dim)
	}
	for i, r := range recs {
		if len(r.vec) != dim || (dim > 0 && &r.vec[0] != &mat[i*dim]) {
			t.Errorf("%s: record %d (%s) is not row %d of the matrix", label, i, r.id, i)
			break
		}
		if c.index[r.id] != i {
			t.Errorf("%s: index[%s] = %d, want %d", label, r.id, c.index[r.id], i)
		}
	}
	if chroma.Count() != len(recs) {
		t.Errorf("%s: chromem-go holds %d documents, the collection %d", label, chroma.Count(), len(recs))
	}
	for _, r := range recs {
		d, err := chroma.GetByID(context.Background(), r.id)
		if err != nil {
			t.Errorf("%s: chromem-go lacks %s: %v", label, r.id, err)
			break
		}
		if d.Content != r.text || len(d.Embedding) != dim || (dim > 0 && d.Embedding[0] != r.vec[0]) {
			t.Errorf("%s: chromem-go's %s differs from the record", label, r.id)
			break
		}
	}
	c.mu.RUnlock()
	if len(recs) == 0 {
		return
	}
	for _, q := range randomVectors(uint64(len(recs)), 3, dim) {
		got, err := c.QueryVector(context.Background(), q, 5, nil)
		if err != nil {
			t.Fatalf("%s: %v", label, err)
		}
		sameResults(t, label, got, chromemResults(t, c, q, 5, nil))
		checkScores(t, label, c, q, got)
	}
}

// TestMatrixFollowsChanges: the matrix stays consistent with the documents
// through every change: a first add, adds that fit in the room left, an add
// that outgrows it, a replacement, a delete, a rebuild with another embedder
// and a reload from the file.
func TestMatrixFollowsChanges(t *testing.T) {
	const dim = 16
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	c := collection(t, s, "m", randomEmbedder{name: "random/16", dim: dim})
	checkMatrix(t, "empty", c)
	docs := randomDocs(1, 200, dim)
	if err := c.Add(ctx, docs[:100]); err != nil {
		t.Fatal(err)
	}
	checkMatrix(t, "first add", c)
	first := &c.mat[0]
	if err := c.Add(ctx, docs[100:110]); err != nil {
		t.Fatal(err)
	}
	checkMatrix(t, "add within the room", c)
	if &c.mat[0] != first {
		t.Error("an add that fits in the room copied the matrix")
	}
	// Documents without vectors are embedded, in the room left too.
	if err := c.Add(ctx, []Document{{ID: "text-1", Text: "embedded by the collection"}}); err != nil {
		t.Fatal(err)
	}
	checkMatrix(t, "add of an embedded text", c)
	if err := c.Add(ctx, docs[110:]); err != nil {
		t.Fatal(err)
	}
	checkMatrix(t, "add past the room", c)
	if c.Count() != 201 {
		t.Fatalf("Count = %d", c.Count())
	}
	repl := randomDocs(99, 1, dim)[0]
	repl.ID = docs[5].ID
	if err := c.Add(ctx, []Document{repl}); err != nil {
		t.Fatal(err)
	}
	checkMatrix(t, "replace", c)
	if got, _ := c.QueryVector(ctx, repl.Embedding, 1, nil); len(got) != 1 || got[0].ID != repl.ID || got[0].Similarity < 0.9999 {
		t.Errorf("the replaced vector is not found first: %v", got)
	}
	if err := c.Delete(ctx, docs[0].ID, docs[150].ID, "text-1"); err != nil {
		t.Fatal(err)
	}
	checkMatrix(t, "delete", c)
	if got, _ := c.QueryVector(ctx, docs[150].Embedding, 1, nil); len(got) == 1 && got[0].ID == docs[150].ID {
		t.Error("a deleted document is still found")
	}
	// A failed add leaves the matrix as it was.
	before := c.Count()
	bad := []Document{randomDocs(5, 1, dim)[0], {ID: "zero", Text: "zero vector", Embedding: make([]float32, dim)}}
	if err := c.Add(ctx, bad); err == nil {
		t.Error("an add with a zero vector succeeded")
	}
	checkMatrix(t, "failed add", c)
	if c.Count() != before {
		t.Errorf("Count after a failed add = %d, want %d", c.Count(), before)
	}
	c2, err := s.Collection(ctx, "m", randomEmbedder{name: "random-other/8", dim: 8})
	if err != nil {
		t.Fatal(err)
	}
	checkMatrix(t, "rebuild", c2)
	if c2.Dim() != 8 {
		t.Errorf("Dim after rebuild = %d", c2.Dim())
	}
	c3 := collection(t, openStore(t, dir, Options{}), "m", randomEmbedder{name: "random-other/8", dim: 8})
	checkMatrix(t, "reload", c3)
	if c3.Count() != before {
		t.Errorf("reloaded Count = %d, want %d", c3.Count(), before)
	}
	// Adding to a reloaded collection (its matrix is the file's block, with
	// no room) lays out a new one.
	if err := c3.Add(ctx, []Document{{ID: "after-reload", Text: "a new text"}}); err != nil {
		t.Fatal(err)
	}
	checkMatrix(t, "add after reload", c3)
}

// TestQueriesDuringAdds: queries scan the matrix while adds write the rows
// past its end and lay out new matrices (run with -race). Documents are
// only added, so each query sees a superset of the documents the previous
// one saw: the best similarity found for a fixed query never decreases, and
// every similarity is the query's dot product with the document's vector.
func TestQueriesDuringAdds(t *testing.T) {
	const dim = 32
	ctx := context.Background()
	c := collection(t, openStore(t, t.TempDir(), Options{}), "grow", randomEmbedder{name: "random/32", dim: dim})
	docs := randomDocs(3, 3000, dim)
	if err := c.Add(ctx, docs[:100]); err != nil {
		t.Fatal(err)
	}
	q := randomVectors(4, 1, dim)[0]
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, 8)
	for range 3 {
		wg.Go(func() {
			best := float32(-2)
			for {
				select {
				case <-done:
					return
				default:
				}
				res, err := c.QueryVector(ctx, q, 3, nil)
				if err != nil || len(res) != 3 {
					errs <- fmt.Errorf("query: %v, %d results", err, len(res))
					return
				}
				if res[0].Similarity < best {
					errs <- fmt.Errorf("best similarity went down from %v to %v", best, res[0].Similarity)
					return
				}
				best = res[0].Similarity
			}
		})
	}
	for at := 100; at < len(docs); at += 100 {
		if err := c.Add(ctx, docs[at:at+100]); err != nil {
			t.Fatal(err)
		}
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	checkMatrix(t, "after concurrent adds", c)
	res, err := c.QueryVector(ctx, q, 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, "final", res, chromemResults(t, c, q, 10, nil))
}

// TestScanCancelled: a cancelled context stops the scan with its error.
func TestScanCancelled(t *testing.T) {
	const dim = 384
	docs := randomDocs(1, 2000, dim)
	rows := make([]source, len(docs))
	for i := range docs {
		rows[i] = source{doc: &docs[i], vec: docs[i].Embedding, raw: true}
	}
	recs, mat, err := layout(rows, dim)
	if err != nil {
		t.Fatal(err)
	}
	q, _ := normalized(randomVectors(2, 1, dim)[0])
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := search(ctx, mat, dim, recs, q, 10, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("search with a cancelled context: %v, want context.Canceled", err)
	}
	hits, err := search(context.Background(), mat, dim, recs, q, 10, nil)
	if err != nil || len(hits) != 10 {
		t.Errorf("search: %d hits, %v", len(hits), err)
	}
}

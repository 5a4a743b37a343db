package vectorstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clinsight/clinsight/internal/atomicfile"
)

// corpus is a small clinical corpus for the lexical embedder.
var corpus = []Document{
	{ID: "t1", Text: "Metformin for type 2 diabetes mellitus in adults with obesity", Metadata: map[string]string{"kind": "trial", "phase": "3"}},
	{ID: "t2", Text: "Insulin glargine versus metformin in diabetic patients", Metadata: map[string]string{"kind": "trial", "phase": "2"}},
	{ID: "t3", Text: "Surgical fixation of femur fractures after a fall in the elderly", Metadata: map[string]string{"kind": "trial", "phase": "3"}},
	{ID: "r1", Text: "Chest radiograph: no pneumothorax, small left pleural effusion", Metadata: map[string]string{"kind": "report"}},
	{ID: "r2", Text: "CT head: no acute intracranial hemorrhage", Metadata: map[string]string{"kind": "report"}},
	{ID: "s1", Text: "Table admissions: hospital admissions with admission time and discharge time", Metadata: map[string]string{"kind": "schema"}},
}

func TestAddQueryFilterClamp(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{})
	c := collection(t, s, "docs", NewLexicalEmbedder(256))

	// Empty collection: no results, no error.
	if res, err := c.Query(ctx, "diabetes", 5, nil); err != nil || len(res) != 0 {
		t.Fatalf("query on empty collection = %v, %v; want no results", res, err)
	}
	if err := c.Add(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	if got := c.Count(); got != len(corpus) {
		t.Fatalf("Count = %d, want %d", got, len(corpus))
	}

	tests := []struct {
		name    string
		query   string
		n       int
		where   map[string]string
		wantTop string
		wantN   int
	}{
		{"diabetes", "metformin diabetes treatment", 2, nil, "t1", 2},
		{"fracture", "hip fracture elderly", 1, nil, "t3", 1},
		{"radiology", "pleural effusion on chest x-ray", 3, nil, "r1", 3},
		{"schema", "admission and discharge times", 1, nil, "s1", 1},
		{"filter kind", "metformin diabetes", 10, map[string]string{"kind": "report"}, "", 2},
		{"filter two keys", "fall", 10, map[string]string{"kind": "trial", "phase": "3"}, "t3", 2},
		{"filter none", "diabetes", 10, map[string]string{"kind": "nothing"}, "", 0},
		{"clamped", "diabetes", 1000, nil, "t1", len(corpus)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, err := c.Query(ctx, tt.query, tt.n, tt.where)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != tt.wantN {
				t.Fatalf("got %d results %v, want %d", len(res), ids(res), tt.wantN)
			}
			if tt.wantTop != "" && res[0].ID != tt.wantTop {
				t.Errorf("top = %s (%v), want %s", res[0].ID, ids(res), tt.wantTop)
			}
			for i, r := range res {
				for k, v := range tt.where {
					if r.Metadata[k] != v {
						t.Errorf("result %s has %s=%q, filter wants %q", r.ID, k, r.Metadata[k], v)
					}
				}
				if r.Text == "" || r.Similarity < -1.0001 || r.Similarity > 1.0001 {
					t.Errorf("result %+v: bad text or similarity", r)
				}
				if i > 0 && r.Similarity > res[i-1].Similarity {
					t.Errorf("results not in decreasing similarity: %v", res)
				}
			}
		})
	}

	// Results are copies: changing them does not change the collection.
	res, _ := c.Query(ctx, "diabetes", 1, nil)
	res[0].Metadata["kind"] = "changed"
	if d, _ := c.Get(res[0].ID); d.Metadata["kind"] != "trial" {
		t.Errorf("metadata changed through a result: %v", d.Metadata)
	}

	// Query by vector: a document's own vector finds it first, with similarity 1.
	d, ok := c.Get("r2")
	if !ok {
		t.Fatal("Get(r2) not found")
	}
	res, err := c.QueryVector(ctx, d.Embedding, 3, nil)
	if err != nil {
		t.Fatal(err)
	}
	if res[0].ID != "r2" || math.Abs(float64(res[0].Similarity)-1) > 1e-5 {
		t.Errorf("QueryVector(own vector) = %v (sim %v), want r2 first with similarity 1", ids(res), res[0].Similarity)
	}
	if _, err := c.QueryVector(ctx, make([]float32, 3), 3, nil); !errors.Is(err, ErrDimension) {
		t.Errorf("QueryVector with 3 dimensions: err = %v, want ErrDimension", err)
	}
	for _, n := range []int{0, -1} {
		if _, err := c.Query(ctx, "x", n, nil); err == nil {
			t.Errorf("Query n=%d: no error", n)
		}
	}
	if _, err := c.Query(ctx, "  ", 1, nil); err == nil {
		t.Error("Query with blank text: no error")
	}
}

func TestAddReplaceAndDelete(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	c := collection(t, s, "docs", NewLexicalEmbedder(128))
	if err := c.Add(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(ctx, []Document{{ID: "t1", Text: "Aspirin after myocardial infarction", Metadata: map[string]string{"kind": "trial"}}}); err != nil {
		t.Fatal(err)
	}
	if c.Count() != len(corpus) {
		t.Errorf("Count after replace = %d, want %d", c.Count(), len(corpus))
	}
	res, err := c.Query(ctx, "aspirin infarction", 1, nil)
	if err != nil || res[0].ID != "t1" || !strings.HasPrefix(res[0].Text, "Aspirin") {
		t.Fatalf("after replace: %v, %v", res, err)
	}
	if err := c.Delete(ctx, "t1", "r1", "unknown"); err != nil {
		t.Fatal(err)
	}
	if c.Count() != len(corpus)-2 {
		t.Errorf("Count after delete = %d, want %d", c.Count(), len(corpus)-2)
	}
	res, err = c.Query(ctx, "aspirin infarction pleural effusion", 10, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res {
		if r.ID == "t1" || r.ID == "r1" {
			t.Errorf("deleted document %s still found", r.ID)
		}
	}
	// The file agrees.
	c2 := collection(t, openStore(t, dir, Options{}), "docs", NewLexicalEmbedder(128))
	if c2.Count() != len(corpus)-2 {
		t.Errorf("reloaded Count = %d, want %d", c2.Count(), len(corpus)-2)
	}
	if _, ok := c2.Get("t1"); ok {
		t.Error("deleted t1 reloaded")
	}
}

func TestBatching(t *testing.T) {
	for _, tt := range []struct{ n, batch int }{{1, 10}, {10, 10}, {103, 10}, {64, 32}, {5, 1}, {7, 0}} {
		t.Run(fmt.Sprintf("n=%d,batch=%d", tt.n, tt.batch), func(t *testing.T) {
			var progress []Progress
			s := openStore(t, t.TempDir(), Options{BatchSize: tt.batch, Progress: func(p Progress) { progress = append(progress, p) }})
			emb := &countingEmbedder{Embedder: NewLexicalEmbedder(64)}
			c := collection(t, s, "b", emb)
			docs := make([]Document, tt.n)
			for i := range docs {
				docs[i] = Document{ID: fmt.Sprint(i), Text: fmt.Sprintf("text %d", i)}
			}
			if err := c.Add(context.Background(), docs); err != nil {
				t.Fatal(err)
			}
			batch := tt.batch
			if batch == 0 {
				batch = DefaultBatchSize
			}
			want := (tt.n + batch - 1) / batch
			calls := emb.calls()
			if len(calls) != want {
				t.Fatalf("%d Embed calls %v, want ceil(%d/%d) = %d", len(calls), calls, tt.n, batch, want)
			}
			total := 0
			for _, b := range calls {
				if b > batch {
					t.Errorf("batch of %d texts, limit %d", b, batch)
				}
				total += b
			}
			if total != tt.n {
				t.Errorf("embedded %d texts, want %d", total, tt.n)
			}
			if len(progress) != want || progress[len(progress)-1].Done != tt.n || progress[0].Total != tt.n || progress[0].Phase != PhaseEmbed {
				t.Errorf("progress = %+v", progress)
			}
			// Precomputed vectors are not embedded again.
			before := len(emb.calls())
			d, _ := c.Get("0")
			if err := c.Add(context.Background(), []Document{{ID: "pre", Text: "precomputed", Embedding: d.Embedding}}); err != nil {
				t.Fatal(err)
			}
			if len(emb.calls()) != before {
				t.Error("a document with a precomputed vector was embedded")
			}
		})
	}
}

func TestCancelMidBuildLeavesCollectionUnchanged(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir, Options{BatchSize: 4})
	emb := &countingEmbedder{Embedder: NewLexicalEmbedder(64)}
	c := collection(t, s, "c", emb)
	if err := c.Add(context.Background(), corpus); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "c"+fileExt)
	before, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	emb.cancelAfter, emb.cancel = len(emb.calls())+2, cancel // cancel during the 2nd batch
	docs := make([]Document, 40)
	for i := range docs {
		docs[i] = Document{ID: fmt.Sprint("new", i), Text: fmt.Sprint("new text ", i)}
	}
	err = c.Add(ctx, docs)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Add with cancel: err = %v, want context.Canceled", err)
	}
	if got := len(emb.calls()); got > 2+2 {
		t.Errorf("embedding went on after cancel: %d calls", got)
	}
	after, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(before, after) {
		t.Error("cancelled build changed the collection file")
	}
	if c.Count() != len(corpus) {
		t.Errorf("Count = %d after cancelled build, want %d", c.Count(), len(corpus))
	}
	if _, ok := c.Get("new0"); ok {
		t.Error("document of the cancelled build is visible")
	}
	assertNoTempFiles(t, dir)
}

// failingTransport fails the test on any HTTP request.
type failingTransport struct{ requests atomic.Int32 }

func (f *failingTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	f.requests.Add(1)
	return nil, fmt.Errorf("network access to %s in a test", r.URL)
}

func TestNoDefaultEmbeddingNoNetwork(t *testing.T) {
	// chromem's default embedding (OpenAI) would read this key and call out.
	t.Setenv("OPENAI_API_KEY", "")
	ft := &failingTransport{}
	saved := http.DefaultTransport
	http.DefaultTransport = ft
	t.Cleanup(func() { http.DefaultTransport = saved })

	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	c := collection(t, s, "private", NewLexicalEmbedder(128))
	d := randomDocs(1, 1, 128)[0]
	if err := c.Add(ctx, append(slices.Clone(corpus), d)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Query(ctx, "diabetes", 3, map[string]string{"kind": "trial"}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.QueryVector(ctx, d.Embedding, 3, nil); err != nil {
		t.Fatal(err)
	}
	// After a reload too (chromem's GetCollection would install its default).
	c2 := collection(t, openStore(t, dir, Options{}), "private", NewLexicalEmbedder(128))
	if _, err := c2.Query(ctx, "fracture", 3, nil); err != nil {
		t.Fatal(err)
	}
	if n := ft.requests.Load(); n != 0 {
		t.Fatalf("%d HTTP requests made", n)
	}
	// The chromem collections carry our refusing function, not the default:
	// asking chromem to embed fails without a request.
	for _, col := range []*Collection{c, c2} {
		col.mu.RLock()
		_, err := col.chroma.Query(ctx, "embed this yourself", 1, nil, nil)
		col.mu.RUnlock()
		if !errors.Is(err, errChromemEmbed) {
			t.Errorf("chromem embedding by itself: err = %v, want errChromemEmbed", err)
		}
	}
	if n := ft.requests.Load(); n != 0 {
		t.Fatalf("%d HTTP requests made", n)
	}
}

func TestPersistenceRoundTrip(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	emb := randomEmbedder{name: "model-x/32", dim: 32}
	s := openStore(t, dir, Options{})
	docs := randomDocs(7, 50, 32)
	docs[3].Text = "ünïcödé text — with 中文 and emoji 🩺"
	docs[4].Metadata = map[string]string{"": "empty key", "k\x00": "nul", "long": strings.Repeat("x", 5000)}
	docs[5].Metadata = nil
	c := collection(t, s, "round", emb)
	if err := c.Add(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(ctx, []Document{{ID: "embedded", Text: "embedded by the collection"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Collection(ctx, "empty", emb); err != nil {
		t.Fatal(err)
	}
	queries := randomVectors(99, 5, 32)
	var want [][]Result
	for _, q := range queries {
		res, err := c.QueryVector(ctx, q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		want = append(want, res)
	}

	s2 := openStore(t, dir, Options{})
	infos := s2.Collections()
	if len(infos) != 2 || infos[0].Name != "empty" || infos[1].Name != "round" || infos[1].Count != 51 || infos[1].Dim != 32 || infos[1].Embedder != "model-x/32" || infos[0].Err != nil {
		t.Fatalf("Collections() = %+v", infos)
	}
	c2 := collection(t, s2, "round", emb)
	if c2.Rebuilt() {
		t.Error("same embedder: collection rebuilt")
	}
	for _, d := range append(docs, Document{ID: "embedded"}) {
		got, ok := c2.Get(d.ID)
		if !ok {
			t.Fatalf("document %s lost", d.ID)
		}
		orig, _ := c.Get(d.ID)
		if got.Text != orig.Text || !mapsEqual(got.Metadata, orig.Metadata) || !slices.Equal(got.Embedding, orig.Embedding) {
			t.Errorf("document %s differs after reload:\n got %+v\nwant %+v", d.ID, got, orig)
		}
	}
	for i, q := range queries {
		res, err := c2.QueryVector(ctx, q, 10, nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.EqualFunc(res, want[i], resultEqual) {
			t.Errorf("query %d after reload:\n got %v\nwant %v", i, res, want[i])
		}
	}
	if e := collection(t, s2, "empty", emb); e.Count() != 0 || e.Dim() != 0 {
		t.Errorf("empty collection reloaded with %d documents, dim %d", e.Count(), e.Dim())
	}
}

func mapsEqual(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func resultEqual(a, b Result) bool {
	return a.ID == b.ID && a.Text == b.Text && a.Similarity == b.Similarity && mapsEqual(a.Metadata, b.Metadata)
}

func TestCorruptFile(t *testing.T) {
	ctx := context.Background()
	emb := NewLexicalEmbedder(64)
	// A valid file to damage.
	src := t.TempDir()
	c := collection(t, openStore(t, src, Options{}), "bad", emb)
	if err := c.Add(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	valid, err := os.ReadFile(filepath.Join(src, "bad"+fileExt))
	if err != nil {
		t.Fatal(err)
	}
	flip := func(off int) []byte {
		b := slices.Clone(valid)
		b[off] ^= 0x40
		return b
	}
	newer := slices.Clone(valid)
	newer[8] = 2
	tests := []struct {
		name    string
		content []byte
		want    error
	}{
		{"empty file", nil, ErrCorrupt},
		{"not ours", []byte("hello, this is not a vector collection file"), ErrCorrupt},
		{"truncated in vectors", valid[:200], ErrCorrupt},
		{"truncated checksum", valid[:len(valid)-2], ErrCorrupt},
		{"flipped bit in vectors", flip(len(valid) / 3), ErrCorrupt},
		{"flipped bit in texts", flip(len(valid) - 20), ErrCorrupt},
		{"flipped bit in header length", flip(13), ErrCorrupt},
		{"trailing garbage", append(slices.Clone(valid), 0), ErrCorrupt},
		{"newer version", newer, ErrUnsupportedVersion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			good := collection(t, openStore(t, dir, Options{}), "good", emb)
			if err := good.Add(ctx, corpus[:3]); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "bad"+fileExt)
			if err := os.WriteFile(path, tt.content, 0o600); err != nil {
				t.Fatal(err)
			}

			s, err := Open(dir, Options{})
			if err != nil {
				t.Fatalf("Open failed because of one bad file: %v", err)
			}
			_, err = s.Collection(ctx, "bad", emb)
			var fe *FileError
			if !errors.As(err, &fe) || fe.Path != path || !errors.Is(err, tt.want) || !strings.Contains(err.Error(), path) {
				t.Fatalf("Collection(bad): err = %v, want a *FileError naming %s wrapping %v", err, path, tt.want)
			}
			t.Logf("error: %v", err)
			// The other collection works.
			g := collection(t, s, "good", emb)
			if res, err := g.Query(ctx, "diabetes", 2, nil); err != nil || len(res) != 2 {
				t.Fatalf("good collection: %v, %v", res, err)
			}
			infos := s.Collections()
			if len(infos) != 2 || infos[0].Name != "bad" || !errors.Is(infos[0].Err, tt.want) {
				t.Errorf("Collections() = %+v", infos)
			}
			// The bad file stays until deleted; then the collection can be rebuilt.
			if err := s.DeleteCollection("bad"); err != nil {
				t.Fatal(err)
			}
			b := collection(t, s, "bad", emb)
			if b.Count() != 0 {
				t.Errorf("recreated collection has %d documents", b.Count())
			}
		})
	}

	t.Run("file of another collection", func(t *testing.T) {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "other"+fileExt), valid, 0o600); err != nil {
			t.Fatal(err)
		}
		s := openStore(t, dir, Options{})
		if _, err := s.Collection(ctx, "other", emb); !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), `"bad"`) {
			t.Errorf("err = %v, want ErrCorrupt naming the collection inside", err)
		}
	})
}

func TestEmbedderMismatchRebuilds(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a := NewLexicalEmbedder(64)
	b := &countingEmbedder{Embedder: NewLexicalEmbedder(128)}
	c := collection(t, openStore(t, dir, Options{}), "kb", a)
	if err := c.Add(ctx, corpus); err != nil {
		t.Fatal(err)
	}

	var events []RebuildEvent
	var progress []Progress
	s := openStore(t, dir, Options{
		BatchSize: 4,
		OnRebuild: func(e RebuildEvent) { events = append(events, e) },
		Progress:  func(p Progress) { progress = append(progress, p) },
	})
	c2 := collection(t, s, "kb", b)
	if !c2.Rebuilt() || c2.EmbedderName() != b.EmbedderName() || c2.Dim() != 128 || c2.Count() != len(corpus) {
		t.Fatalf("after reopening with another embedder: rebuilt=%v embedder=%q dim=%d count=%d",
			c2.Rebuilt(), c2.EmbedderName(), c2.Dim(), c2.Count())
	}
	if len(events) != 1 || events[0].From != a.EmbedderName() || events[0].To != b.EmbedderName() || events[0].Documents != len(corpus) || events[0].Collection != "kb" {
		t.Errorf("rebuild events = %+v", events)
	}
	if len(progress) == 0 || progress[0].Phase != PhaseRebuild || progress[len(progress)-1].Done != len(corpus) {
		t.Errorf("rebuild progress = %+v", progress)
	}
	if got := len(b.calls()); got != (len(corpus)+3)/4 {
		t.Errorf("rebuild made %d Embed calls, want %d", got, (len(corpus)+3)/4)
	}
	// Every vector is the new embedder's.
	for _, d := range corpus {
		got, _ := c2.Get(d.ID)
		want, _ := b.Embed(ctx, []string{d.Text})
		wantN, _ := normalized(want[0])
		if !slices.Equal(got.Embedding, wantN) {
			t.Errorf("%s: vector is not the new embedder's", d.ID)
		}
	}
	if res, err := c2.Query(ctx, "metformin diabetes", 1, nil); err != nil || res[0].ID != "t1" {
		t.Errorf("query after rebuild: %v, %v", res, err)
	}
	// The rebuilt collection was persisted: reopening with b does not rebuild again.
	c3 := collection(t, openStore(t, dir, Options{}), "kb", b)
	if c3.Rebuilt() || c3.Dim() != 128 {
		t.Errorf("reopened with the same embedder: rebuilt=%v dim=%d", c3.Rebuilt(), c3.Dim())
	}

	// A live handle follows a rebuild made through another Collection call.
	h := collection(t, s, "kb", b)
	fitted := NewLexicalEmbedder(128).Fit([]string{"a", "b"})
	if _, err := s.Collection(ctx, "kb", fitted); err != nil {
		t.Fatal(err)
	}
	if h.EmbedderName() != fitted.EmbedderName() {
		t.Errorf("old handle embedder = %q, want %q", h.EmbedderName(), fitted.EmbedderName())
	}
	if res, err := h.Query(ctx, "femur fracture", 1, nil); err != nil || res[0].ID != "t3" {
		t.Errorf("old handle query after rebuild: %v, %v", res, err)
	}
}

func TestRebuildCancelledKeepsCollection(t *testing.T) {
	dir := t.TempDir()
	a := NewLexicalEmbedder(64)
	c := collection(t, openStore(t, dir, Options{}), "kb", a)
	docs := make([]Document, 50)
	for i := range docs {
		docs[i] = Document{ID: fmt.Sprint(i), Text: fmt.Sprint("text number ", i)}
	}
	if err := c.Add(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kb"+fileExt)
	before, _ := os.ReadFile(path)

	s := openStore(t, dir, Options{BatchSize: 8})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	b := &countingEmbedder{Embedder: NewLexicalEmbedder(96), cancelAfter: 2, cancel: cancel}
	if _, err := s.Collection(ctx, "kb", b); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled rebuild: err = %v, want context.Canceled", err)
	}
	after, _ := os.ReadFile(path)
	if !bytes.Equal(before, after) {
		t.Error("cancelled rebuild changed the file")
	}
	c2 := collection(t, s, "kb", a)
	if c2.Rebuilt() || c2.Dim() != 64 || c2.Count() != 50 {
		t.Errorf("after cancelled rebuild: rebuilt=%v dim=%d count=%d", c2.Rebuilt(), c2.Dim(), c2.Count())
	}
	assertNoTempFiles(t, dir)
}

// failAfter passes n bytes, then fails.
type failAfter struct {
	w io.Writer
	n int
}

func (f *failAfter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		k, _ := f.w.Write(p[:f.n])
		f.n = 0
		return k, errors.New("disk full (injected)")
	}
	f.n -= len(p)
	return f.w.Write(p)
}

func TestAtomicWriteFailureKeepsOldFile(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := openStore(t, dir, Options{})
	c := collection(t, s, "kb", NewLexicalEmbedder(64))
	if err := c.Add(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "kb"+fileExt)
	before, _ := os.ReadFile(path)

	for _, n := range []int{0, 100, len(before) - 10} {
		s.wrapWriter = func(w io.Writer) io.Writer { return &failAfter{w: w, n: n} }
		err := c.Add(ctx, []Document{{ID: "x", Text: "a new document"}})
		var fe *FileError
		if !errors.As(err, &fe) || fe.Op != "write" || fe.Path != path {
			t.Fatalf("write failing after %d bytes: err = %v, want a write *FileError for %s", n, err, path)
		}
		after, _ := os.ReadFile(path)
		if !bytes.Equal(before, after) {
			t.Fatalf("failed write after %d bytes changed the file", n)
		}
		if c.Count() != len(corpus) {
			t.Fatalf("failed write changed the collection: %d documents", c.Count())
		}
		if n < 1000 { // (the file without t1 is shorter than len(before)-10)
			if err := c.Delete(ctx, "t1"); err == nil {
				t.Fatal("delete with a failing write: no error")
			}
		}
		if _, ok := c.Get("t1"); !ok {
			t.Fatal("failed delete removed the document")
		}
		assertNoTempFiles(t, dir)
	}
	s.wrapWriter = nil
	c2 := collection(t, openStore(t, dir, Options{}), "kb", NewLexicalEmbedder(64))
	if c2.Count() != len(corpus) {
		t.Errorf("reloaded %d documents, want %d", c2.Count(), len(corpus))
	}
}

func assertNoTempFiles(t *testing.T, dir string) {
	t.Helper()
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if isTempFile(e.Name()) {
			t.Errorf("temporary file left: %s", e.Name())
		}
	}
}

// Open removes an earlier version's abandoned temporary file, but never one
// that may still be being written: a fresh one (another process sharing the
// workspace may be saving that collection right now) or one of the current
// writer, which internal/atomicfile cleans under its lock rule.
func TestOpenRemovesOnlyAbandonedTempFiles(t *testing.T) {
	dir := t.TempDir()
	old := filepath.Join(dir, legacyTempPrefix("kb"+fileExt)+"123")
	fresh := filepath.Join(dir, legacyTempPrefix("kb"+fileExt)+"456")
	for _, p := range []string{old, fresh} {
		if err := os.WriteFile(p, []byte("half a file"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	past := time.Now().Add(-2 * legacyTempAge)
	if err := os.Chtimes(old, past, past); err != nil {
		t.Fatal(err)
	}
	// A write in progress in this process: its temporary file exists until
	// Commit.
	inProgress, err := atomicfile.Create(filepath.Join(dir, "other"+fileExt), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	defer inProgress.Discard()

	s := openStore(t, dir, Options{})
	if _, err := os.Stat(old); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("abandoned temporary file not removed: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Errorf("a fresh temporary file (maybe being written) was removed: %v", err)
	}
	if _, err := os.Stat(inProgress.Name()); err != nil {
		t.Errorf("the temporary file of a write in progress was removed: %v", err)
	}
	if len(s.Collections()) != 0 {
		t.Errorf("Collections() = %+v", s.Collections())
	}
	if _, err := inProgress.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
}

func TestInvalidInput(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{})
	emb := NewLexicalEmbedder(16)
	for _, name := range []string{"", "Upper", "-dash", "a b", "a/b", "..", "dot.name", strings.Repeat("a", 65), "é"} {
		if _, err := s.Collection(ctx, name, emb); !errors.Is(err, ErrInvalidName) {
			t.Errorf("Collection(%q): err = %v, want ErrInvalidName", name, err)
		}
	}
	if _, err := s.Collection(ctx, "ok", nil); err == nil {
		t.Error("nil embedder accepted")
	}
	if _, err := s.Collection(ctx, "ok", randomEmbedder{}); err == nil {
		t.Error("embedder without a name accepted")
	}
	c := collection(t, s, "ok_1-2", emb)
	bad := map[string][]Document{
		"no ID":         {{Text: "x"}},
		"no text":       {{ID: "a"}},
		"duplicate":     {{ID: "a", Text: "x"}, {ID: "a", Text: "y"}},
		"zero vector":   {{ID: "a", Text: "x", Embedding: make([]float32, 16)}},
		"NaN":           {{ID: "a", Text: "x", Embedding: []float32{float32(math.NaN()), 1}}},
		"mixed lengths": {{ID: "a", Text: "x", Embedding: []float32{1, 2}}, {ID: "b", Text: "y", Embedding: []float32{1, 2, 3}}},
		"wrong length":  {{ID: "a", Text: "x", Embedding: []float32{1, 2}}, {ID: "b", Text: "y"}},
	}
	for name, docs := range bad {
		if err := c.Add(ctx, docs); err == nil {
			t.Errorf("%s: accepted", name)
		}
		if c.Count() != 0 {
			t.Fatalf("%s: collection changed", name)
		}
	}
	if err := c.Add(ctx, nil); err != nil {
		t.Errorf("Add(nil) = %v", err)
	}
	// Deleted collections refuse work.
	if err := s.DeleteCollection("ok_1-2"); err != nil {
		t.Fatal(err)
	}
	if err := c.Add(ctx, corpus); !errors.Is(err, ErrDeleted) {
		t.Errorf("Add after delete: %v", err)
	}
	if _, err := c.Query(ctx, "x", 1, nil); !errors.Is(err, ErrDeleted) {
		t.Errorf("Query after delete: %v", err)
	}
	if err := s.DeleteCollection("never-existed"); err != nil {
		t.Errorf("deleting a missing collection: %v", err)
	}
}

func TestConcurrentUse(t *testing.T) {
	ctx := context.Background()
	s := openStore(t, t.TempDir(), Options{BatchSize: 3})
	lex64 := NewLexicalEmbedder(64)
	lex32 := NewLexicalEmbedder(32)
	c := collection(t, s, "kb", lex64)
	if err := c.Add(ctx, corpus); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 100)
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				res, err := c.Query(ctx, "diabetes fracture effusion", 3, nil)
				if errors.Is(err, ErrEmbedderChanged) {
					continue // two rebuilds during one query: documented
				}
				if err != nil {
					errs <- fmt.Errorf("query: %w", err)
					return
				}
				if len(res) == 0 {
					errs <- errors.New("query: no results")
					return
				}
				if g == 0 && i%5 == 0 {
					_ = s.Collections()
				}
			}
		})
	}
	wg.Go(func() {
		for i := range 10 {
			if err := c.Add(ctx, []Document{{ID: fmt.Sprint("n", i), Text: fmt.Sprint("new document about diabetes ", i)}}); err != nil {
				errs <- fmt.Errorf("add: %w", err)
				return
			}
		}
	})
	wg.Go(func() {
		for i := range 4 {
			emb := lex32
			if i%2 == 1 {
				emb = lex64
			}
			if _, err := s.Collection(ctx, "kb", emb); err != nil {
				errs <- fmt.Errorf("rebind: %w", err)
				return
			}
		}
	})
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if c.Count() != len(corpus)+10 {
		t.Errorf("Count = %d, want %d", c.Count(), len(corpus)+10)
	}
	d, _ := c.Get("n9")
	if len(d.Embedding) != c.Dim() {
		t.Errorf("mixed dimensions: %d vs %d", len(d.Embedding), c.Dim())
	}
}

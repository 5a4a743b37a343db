package vectorstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	chromem "github.com/philippgille/chromem-go"
)

// Document is a text to store, with its metadata.
type Document struct {
	// ID identifies the document in its collection; adding a document with
	// an existing ID replaces it. Required.
	ID string
	// Text is what is embedded and what a query returns. Required: it is kept
	// so the collection can be rebuilt with another embedder.
	Text string
	// Metadata is matched by the Where filter of a query (equality).
	Metadata map[string]string
	// Embedding is an optional precomputed vector of Text, made by the
	// collection's embedder; when empty, Text is embedded by the collection.
	// It is stored normalised.
	Embedding []float32
}

// Result is a document found by a query.
type Result struct {
	// ID, Text and Metadata are the document's (Metadata is a copy).
	ID       string
	Text     string
	Metadata map[string]string
	// Similarity is the cosine similarity to the query, in [-1, 1].
	Similarity float32
}

// Collection is a named set of documents embedded by one embedder. Get it
// from [Store.Collection]. It is safe for concurrent use.
type Collection struct {
	store *Store
	name  string
	path  string

	// writeMu serialises changes (add, delete, rebuild): each embeds and
	// writes the file while queries go on, then swaps the state under mu.
	writeMu sync.Mutex

	mu       sync.RWMutex
	embedder Embedder // nil until bound by Store.Collection
	embName  string
	dim      int    // 0 while empty
	gen      uint64 // incremented by each rebuild
	recs     []*record
	index    map[string]int // ID -> position in recs
	// mat holds the vectors, row i being recs[i].vec (see matrix.go); its
	// length is len(recs)*dim, its capacity may leave room to grow.
	mat     []float32
	chroma  *chromem.Collection
	rebuilt bool
	deleted bool
}

// Name returns the collection's name.
func (c *Collection) Name() string { return c.name }

// EmbedderName returns the name of the embedder that built the vectors.
func (c *Collection) EmbedderName() string {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.embName
}

// Dim returns the vector dimension, 0 while the collection is empty.
func (c *Collection) Dim() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.dim
}

// Count returns the number of documents.
func (c *Collection) Count() int {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return len(c.recs)
}

// Rebuilt reports whether the vectors were rebuilt with another embedder
// since the store was opened.
func (c *Collection) Rebuilt() bool {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.rebuilt
}

// Info describes the collection.
func (c *Collection) Info() CollectionInfo {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return CollectionInfo{
		Name: c.name, Path: c.path, Embedder: c.embName, Dim: c.dim,
		Count: len(c.recs), Rebuilt: c.rebuilt,
	}
}

// Get returns a copy of the document with the given ID, its Embedding being
// the stored (normalised) vector.
func (c *Collection) Get(id string) (Document, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	i, ok := c.index[id]
	if !ok {
		return Document{}, false
	}
	r := c.recs[i]
	return Document{ID: r.id, Text: r.text, Metadata: maps.Clone(r.meta), Embedding: slices.Clone(r.vec)}, true
}

// Embedding returns the stored (unit-length) vector of the document with
// the given ID, without copying it: the caller must not modify it. It stays
// valid and unchanged after later changes to the collection, which never
// write a row that a reader can hold (see matrix.go). For callers that
// read many vectors per request, such as trial matching's STS over 2,000
// candidates (about 7,000 vectors), where Get's copies of the vector and
// metadata would dominate.
func (c *Collection) Embedding(id string) ([]float32, bool) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	i, ok := c.index[id]
	if !ok {
		return nil, false
	}
	return c.recs[i].vec, true
}

// Add stores documents, replacing those with the same IDs. Documents without
// an Embedding are embedded by the collection's embedder, [Options.BatchSize]
// texts per call, reporting [Options.Progress]. The collection file is then
// rewritten once, so add many documents per call. Add is all or nothing: on
// an error or when ctx is cancelled, neither the collection nor its file
// change.
func (c *Collection) Add(ctx context.Context, docs []Document) error {
	if len(docs) == 0 {
		return nil
	}
	seen := make(map[string]struct{}, len(docs))
	for i, d := range docs {
		switch {
		case d.ID == "":
			return fmt.Errorf("vectorstore: add to %q: document %d has no ID", c.name, i+1)
		case d.Text == "":
			return fmt.Errorf("vectorstore: add to %q: document %q has no text", c.name, d.ID)
		}
		if _, dup := seen[d.ID]; dup {
			return fmt.Errorf("vectorstore: add to %q: document ID %q appears twice", c.name, d.ID)
		}
		seen[d.ID] = struct{}{}
	}

	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	// Under writeMu only this goroutine changes the state: it can be read
	// without mu, and the embedder cannot be swapped for one of another name.
	c.mu.RLock()
	emb, embName, dim, deleted := c.embedder, c.embName, c.dim, c.deleted
	c.mu.RUnlock()
	if deleted {
		return fmt.Errorf("vectorstore: add to %q: %w", c.name, ErrDeleted)
	}

	// Precomputed vectors first: they fix the dimension of an empty
	// collection. They are checked now, normalised where they are stored.
	var todo []int
	for i, d := range docs {
		if len(d.Embedding) == 0 {
			todo = append(todo, i)
			continue
		}
		if dim == 0 {
			dim = len(d.Embedding)
		}
		if len(d.Embedding) != dim {
			return fmt.Errorf("vectorstore: add to %q: document %q: %w: got %d, want %d", c.name, d.ID, ErrDimension, len(d.Embedding), dim)
		}
		if _, err := vectorNorm(d.Embedding); err != nil {
			return fmt.Errorf("vectorstore: add to %q: document %q: %w", c.name, d.ID, err)
		}
	}
	embedded := make([][]float32, len(docs)) // normalised by embedBatches
	if len(todo) > 0 {
		if emb == nil {
			return fmt.Errorf("vectorstore: add to %q: no embedder (get collections from Store.Collection)", c.name)
		}
		texts := make([]string, len(todo))
		for j, i := range todo {
			texts[j] = docs[i].Text
		}
		vecs, d, err := embedBatches(ctx, emb, texts, c.store.opts.BatchSize, dim, c.progress(PhaseEmbed, len(texts)))
		if err != nil {
			return fmt.Errorf("vectorstore: add to %q: %w", c.name, err)
		}
		dim = d
		for j, i := range todo {
			embedded[i] = vecs[j]
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("vectorstore: add to %q: %w", c.name, err)
	}
	src := func(i int) source {
		if embedded[i] != nil {
			return source{doc: &docs[i], vec: embedded[i]}
		}
		return source{doc: &docs[i], vec: docs[i].Embedding, raw: true}
	}

	// The new state, written before it replaces the current one.
	n0 := len(c.recs)
	index := maps.Clone(c.index)
	replaces := false
	for _, d := range docs {
		if _, ok := index[d.ID]; ok {
			replaces = true
			break
		}
	}
	var (
		recs   []*record
		mat    []float32
		added  []*record           // appended in place: chromem gets only these
		chroma *chromem.Collection // laid out anew: chromem is rebuilt
	)
	if !replaces && dim == c.dim && cap(c.mat) >= (n0+len(docs))*dim {
		// Room left: the new rows go past the end, unseen by queries.
		mat = c.mat[:(n0+len(docs))*dim]
		recs = make([]*record, n0, n0+len(docs))
		copy(recs, c.recs)
		for i := range docs {
			at := n0 + i
			row := mat[at*dim : (at+1)*dim : (at+1)*dim]
			s := src(i)
			if err := s.fill(row); err != nil {
				return fmt.Errorf("vectorstore: add to %q: %w", c.name, err)
			}
			index[docs[i].ID] = at
			recs = append(recs, s.record(row))
		}
		added = recs[n0:]
	} else {
		rows := make([]source, n0, n0+len(docs))
		for i, r := range c.recs {
			rows[i] = source{rec: r}
		}
		for i, d := range docs {
			if at, ok := index[d.ID]; ok {
				rows[at] = src(i)
			} else {
				index[d.ID] = len(rows)
				rows = append(rows, src(i))
			}
		}
		var err error
		if recs, mat, err = layout(rows, dim); err != nil {
			return fmt.Errorf("vectorstore: add to %q: %w", c.name, err)
		}
		if chroma, err = buildChroma(c.name, recs); err != nil {
			return fmt.Errorf("vectorstore: add to %q: %w", c.name, err)
		}
	}
	if err := c.persist(embName, dim, recs); err != nil {
		return err
	}

	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs, c.index, c.dim, c.mat = recs, index, dim, mat
	if chroma != nil {
		c.chroma = chroma
		return nil
	}
	for _, r := range added {
		if err := c.chroma.AddDocument(context.Background(), chromaDoc(r)); err != nil {
			// Cannot happen with validated documents; the file is right, so
			// rebuild the in-memory index from it rather than diverge.
			if ch, err2 := buildChroma(c.name, recs); err2 == nil {
				c.chroma = ch
			}
			return fmt.Errorf("vectorstore: add to %q: indexing %q: %w", c.name, r.id, err)
		}
	}
	return nil
}

// Delete removes the documents with the given IDs; unknown IDs are ignored.
// The collection file is rewritten once.
func (c *Collection) Delete(ctx context.Context, ids ...string) error {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.RLock()
	embName, dim, deleted := c.embName, c.dim, c.deleted
	c.mu.RUnlock()
	if deleted {
		return fmt.Errorf("vectorstore: delete from %q: %w", c.name, ErrDeleted)
	}
	drop := make(map[string]bool, len(ids))
	for _, id := range ids {
		if _, ok := c.index[id]; ok {
			drop[id] = true
		}
	}
	if len(drop) == 0 {
		return nil
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("vectorstore: delete from %q: %w", c.name, err)
	}
	// The remaining rows are laid out anew (the matrix has no holes).
	rows := make([]source, 0, len(c.recs)-len(drop))
	index := make(map[string]int, len(c.recs)-len(drop))
	for _, r := range c.recs {
		if !drop[r.id] {
			index[r.id] = len(rows)
			rows = append(rows, source{rec: r})
		}
	}
	recs, mat, err := layout(rows, dim)
	if err != nil {
		return fmt.Errorf("vectorstore: delete from %q: %w", c.name, err)
	}
	chroma, err := buildChroma(c.name, recs)
	if err != nil {
		return fmt.Errorf("vectorstore: delete from %q: %w", c.name, err)
	}
	if err := c.persist(embName, dim, recs); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.recs, c.index, c.mat, c.chroma = recs, index, mat, chroma
	return nil
}

// Query returns the n documents most similar to text, embedded with the
// collection's embedder, among those whose metadata has every key/value of
// where (nil: all documents; a key a document lacks matches the value "").
// n is clamped to the collection's size; an empty
// collection, or a filter that matches nothing, gives no results. Results are
// in decreasing similarity (ties by ID). The search is exact: every vector
// that passes the filter is scored (see scan.go).
func (c *Collection) Query(ctx context.Context, text string, n int, where map[string]string) ([]Result, error) {
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("vectorstore: query %q: empty query text", c.name)
	}
	if n <= 0 {
		return nil, fmt.Errorf("vectorstore: query %q: result count %d, want > 0", c.name, n)
	}
	// The text is embedded without a lock (a model call can be slow); if the
	// collection is rebuilt meanwhile, embed again with the new embedder.
	for range 2 {
		c.mu.RLock()
		emb, gen, deleted, empty := c.embedder, c.gen, c.deleted, len(c.recs) == 0
		c.mu.RUnlock()
		if deleted {
			return nil, fmt.Errorf("vectorstore: query %q: %w", c.name, ErrDeleted)
		}
		if empty {
			return nil, nil
		}
		if emb == nil {
			return nil, fmt.Errorf("vectorstore: query %q: no embedder (get collections from Store.Collection)", c.name)
		}
		vecs, err := emb.Embed(ctx, []string{text})
		if err != nil {
			return nil, fmt.Errorf("vectorstore: query %q: embedding the query with %q: %w", c.name, emb.EmbedderName(), err)
		}
		if len(vecs) != 1 {
			return nil, fmt.Errorf("vectorstore: query %q: embedder %q returned %d vectors for 1 text", c.name, emb.EmbedderName(), len(vecs))
		}
		res, err := c.query(ctx, vecs[0], n, where, &gen)
		if errors.Is(err, ErrEmbedderChanged) {
			continue
		}
		return res, err
	}
	return nil, fmt.Errorf("vectorstore: query %q: %w", c.name, ErrEmbedderChanged)
}

// QueryVector is [Collection.Query] with a query vector made by the
// collection's embedder (its length must be [Collection.Dim]).
func (c *Collection) QueryVector(ctx context.Context, vec []float32, n int, where map[string]string) ([]Result, error) {
	if n <= 0 {
		return nil, fmt.Errorf("vectorstore: query %q: result count %d, want > 0", c.name, n)
	}
	return c.query(ctx, vec, n, where, nil)
}

// query searches with vec; gen, if not nil, is the generation vec was
// embedded for.
func (c *Collection) query(ctx context.Context, vec []float32, n int, where map[string]string, gen *uint64) ([]Result, error) {
	c.mu.RLock()
	defer c.mu.RUnlock()
	switch {
	case c.deleted:
		return nil, fmt.Errorf("vectorstore: query %q: %w", c.name, ErrDeleted)
	case gen != nil && *gen != c.gen:
		return nil, ErrEmbedderChanged
	case len(c.recs) == 0:
		return nil, nil
	case len(vec) != c.dim:
		return nil, fmt.Errorf("vectorstore: query %q: %w: query has %d, the collection (embedder %q) %d", c.name, ErrDimension, len(vec), c.embName, c.dim)
	}
	q, err := normalized(vec)
	if err != nil {
		return nil, fmt.Errorf("vectorstore: query %q: %w", c.name, err)
	}
	hits, err := search(ctx, c.mat, c.dim, c.recs, q, n, where)
	if err != nil {
		return nil, fmt.Errorf("vectorstore: query %q: %w", c.name, err)
	}
	out := make([]Result, len(hits))
	for i, h := range hits {
		r := c.recs[h.row]
		out[i] = Result{ID: r.id, Text: r.text, Metadata: maps.Clone(r.meta), Similarity: h.score}
	}
	return out, nil
}

// bind makes emb the collection's embedder, rebuilding the vectors first if
// emb's name differs from the one that built them.
func (c *Collection) bind(ctx context.Context, emb Embedder, embName string) error {
	c.mu.Lock()
	if c.deleted {
		c.mu.Unlock()
		return fmt.Errorf("vectorstore: collection %q: %w", c.name, ErrDeleted)
	}
	if c.embName == embName {
		// Same name, same vectors: no need to wait for a change in progress.
		c.embedder = emb
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()

	ev, err := c.rebuildLocked(ctx, emb, embName)
	if err != nil {
		return err
	}
	// Outside the locks: the callback may use the store.
	if f := c.store.opts.OnRebuild; f != nil && ev != nil {
		f(*ev)
	}
	return nil
}

// rebuildLocked takes writeMu and rebuilds the collection with emb unless
// that was done meanwhile; it returns the event to report, if any.
func (c *Collection) rebuildLocked(ctx context.Context, emb Embedder, embName string) (*RebuildEvent, error) {
	c.writeMu.Lock()
	defer c.writeMu.Unlock()
	c.mu.RLock()
	from, deleted := c.embName, c.deleted
	c.mu.RUnlock()
	switch {
	case deleted:
		return nil, fmt.Errorf("vectorstore: collection %q: %w", c.name, ErrDeleted)
	case from == embName: // rebuilt by another caller meanwhile
		c.mu.Lock()
		c.embedder = emb
		c.mu.Unlock()
		return nil, nil
	}
	start := time.Now()
	if err := c.rebuild(ctx, emb, embName); err != nil {
		return nil, fmt.Errorf("vectorstore: rebuild %q from %q to %q: %w", c.name, from, embName, err)
	}
	return &RebuildEvent{Collection: c.name, From: from, To: embName, Documents: len(c.recs), Duration: time.Since(start)}, nil
}

// rebuild re-embeds every text with emb; writeMu must be held.
func (c *Collection) rebuild(ctx context.Context, emb Embedder, embName string) error {
	texts := make([]string, len(c.recs))
	for i, r := range c.recs {
		texts[i] = r.text
	}
	vecs, dim, err := embedBatches(ctx, emb, texts, c.store.opts.BatchSize, 0, c.progress(PhaseRebuild, len(texts)))
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	rows := make([]source, len(c.recs))
	for i, r := range c.recs {
		rows[i] = source{rec: r, vec: vecs[i]}
	}
	recs, mat, err := layout(rows, dim)
	if err != nil {
		return err
	}
	chroma, err := buildChroma(c.name, recs)
	if err != nil {
		return err
	}
	if err := c.persist(embName, dim, recs); err != nil {
		return err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.embedder, c.embName, c.dim = emb, embName, dim
	c.recs, c.mat, c.chroma = recs, mat, chroma // the index (ID -> position) is unchanged
	c.gen++
	c.rebuilt = true
	return nil
}

// persist writes recs as the collection's file.
func (c *Collection) persist(embName string, dim int, recs []*record) error {
	h := fileHeader{Name: c.name, Embedder: embName, Dim: dim, SavedAt: time.Now().UTC()}
	err := writeAtomic(c.path, c.store.wrapWriter, func(w io.Writer) error {
		return encodeCollection(w, h, recs)
	})
	if err != nil {
		return &FileError{Op: "write", Path: c.path, Err: err}
	}
	return nil
}

// progress returns the batch callback reporting Options.Progress, or nil.
func (c *Collection) progress(phase Phase, total int) func(int) {
	f := c.store.opts.Progress
	if f == nil {
		return nil
	}
	return func(done int) {
		f(Progress{Collection: c.name, Phase: phase, Done: done, Total: total})
	}
}

// chromaDoc converts a record for chromem; the vector is shared, not copied.
func chromaDoc(r *record) chromem.Document {
	return chromem.Document{ID: r.id, Metadata: r.meta, Embedding: r.vec, Content: r.text}
}

// buildChroma builds an in-memory chromem collection holding recs. It is
// never given a way to embed: see refuseEmbedding.
func buildChroma(name string, recs []*record) (*chromem.Collection, error) {
	col, err := chromem.NewDB().CreateCollection(name, nil, refuseEmbedding)
	if err != nil {
		return nil, fmt.Errorf("creating the chromem collection: %w", err)
	}
	ctx := context.Background()
	for _, r := range recs {
		if err := col.AddDocument(ctx, chromaDoc(r)); err != nil {
			return nil, fmt.Errorf("indexing document %q: %w", r.id, err)
		}
	}
	return col, nil
}

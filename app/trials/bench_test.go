package trials

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/vectorstore"
)

// memItems is an in-memory ItemIndex with every vector computed in
// advance: items of the same text share one vector (the synthetic
// vocabulary has a few hundred distinct conditions and interventions for
// over a million items).
type memItems struct {
	mu    sync.RWMutex
	emb   vectorstore.Embedder
	text  map[string]string    // item id → text
	byTxt map[string][]float32 // text → unit vector
}

func newMemItems(emb vectorstore.Embedder) *memItems {
	return &memItems{emb: emb, text: map[string]string{}, byTxt: map[string][]float32{}}
}

func (m *memItems) Get(id string) (vectorstore.Document, bool) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	t, ok := m.text[id]
	if !ok {
		return vectorstore.Document{}, false
	}
	return vectorstore.Document{ID: id, Text: t, Embedding: m.byTxt[t]}, true
}

func (m *memItems) Add(ctx context.Context, docs []vectorstore.Document) error {
	var missing []string
	m.mu.RLock()
	for _, d := range docs {
		if _, ok := m.byTxt[d.Text]; !ok && !slices.Contains(missing, d.Text) {
			missing = append(missing, d.Text)
		}
	}
	m.mu.RUnlock()
	vecs, err := m.emb.Embed(ctx, missing)
	if err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for i, t := range missing {
		m.byTxt[t] = normalize(vecs[i])
	}
	for _, d := range docs {
		m.text[d.ID] = d.Text
	}
	return nil
}

// BenchmarkScale is the scale benchmark of the issue: 375,580 synthetic
// trials (the size of the TREC 2021 collection; CLINSIGHT_BENCH_TRIALS
// overrides) written as API v2 JSON lines, imported and indexed (reported:
// import_s, index_MB, db_MB), their conditions and interventions embedded
// in advance with the lexical embedder, then 60 synthetic patients matched
// without a model over the 2,000 BM25 candidates with STS and fusion
// (reported: p50_ms, p95_ms). Run once:
//
//	CGO_ENABLED=0 go test -tags ci -run '^$' -bench BenchmarkScale -benchtime 1x -timeout 60m ./app/trials/
func BenchmarkScale(b *testing.B) {
	n := 375580
	if s := os.Getenv("CLINSIGHT_BENCH_TRIALS"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil {
			b.Fatal(err)
		}
		n = v
	}
	ctx := context.Background()
	dir := b.TempDir()
	src := filepath.Join(dir, "trials.jsonl")
	f, err := os.Create(src)
	if err != nil {
		b.Fatal(err)
	}
	if err := WriteSyntheticJSONL(ctx, f, n, 2021); err != nil {
		b.Fatal(err)
	}
	f.Close()
	fi, _ := os.Stat(src)
	b.Logf("%d synthetic trials: %.0f MB of JSON lines", n, float64(fi.Size())/1e6)
	for i := 0; i < b.N; i++ {
		dbPath := filepath.Join(dir, "trials-"+strconv.Itoa(i)+".sqlite")
		db := benchOpen(b, dbPath)
		b.ResetTimer()
		start := time.Now()
		res, err := Import(ctx, db, []string{src}, ImportOptions{})
		if err != nil {
			b.Fatal(err)
		}
		importTime := time.Since(start)
		b.StopTimer()
		dbInfo, _ := os.Stat(dbPath)
		wal, _ := os.Stat(dbPath + "-wal")
		size := dbInfo.Size()
		if wal != nil {
			size += wal.Size()
		}
		b.Logf("import + index: %d trials, %d criteria in %s (index optimised in %s); FTS index %.1f MB, database %.1f MB",
			res.Trials, res.Criteria, importTime.Round(time.Millisecond), res.IndexTime.Round(time.Millisecond),
			float64(res.IndexBytes)/1e6, float64(size)/1e6)
		b.ReportMetric(importTime.Seconds(), "import_s")
		b.ReportMetric(float64(res.IndexBytes)/1e6, "index_MB")
		b.ReportMetric(float64(size)/1e6, "db_MB")

		// Precomputed item embeddings.
		emb := vectorstore.NewLexicalEmbedder(0)
		items := newMemItems(emb)
		embStart := time.Now()
		if _, err := IndexItems(ctx, db, items, nil); err != nil {
			b.Fatal(err)
		}
		b.Logf("item vectors: %d items, %d distinct texts, %s", len(items.text), len(items.byTxt), time.Since(embStart).Round(time.Millisecond))
		// Matching reads through a read-only pool, as the workspace opens
		// it (several connections: the concepts run in parallel).
		ro, err := datasets.OpenReadOnly(ctx, dbPath)
		if err != nil {
			b.Fatal(err)
		}
		p, err := New(Config{DB: ro, Embedder: emb, Items: items})
		if err != nil {
			b.Fatal(err)
		}
		var lat []time.Duration
		cands := 0
		for j := range 70 {
			pt := SyntheticPatientN(7, j)
			t0 := time.Now()
			r, err := p.Match(ctx, Request{Patient: pt.Description, Top: 20, FilterAge: true, FilterSex: true})
			if err != nil {
				b.Fatal(err)
			}
			if j >= 10 { // the first queries warm the page cache and the document frequencies
				lat = append(lat, time.Since(t0))
				cands += r.Candidates + r.Filtered
			}
		}
		slices.Sort(lat)
		p50, p95 := lat[len(lat)/2], lat[len(lat)*95/100]
		b.Logf("BM25 + STS + fusion over %d candidates on average: p50 %s, p95 %s (%d queries)",
			cands/len(lat), p50.Round(time.Millisecond), p95.Round(time.Millisecond), len(lat))
		b.ReportMetric(float64(p50.Microseconds())/1000, "p50_ms")
		b.ReportMetric(float64(p95.Microseconds())/1000, "p95_ms")
		ro.Close()
		db.Close()
		b.StartTimer()
	}
}

func benchOpen(b *testing.B, path string) *sql.DB {
	b.Helper()
	db, err := datasets.OpenReadWrite(context.Background(), path)
	if err != nil {
		b.Fatal(err)
	}
	return db
}

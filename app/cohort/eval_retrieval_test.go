package cohort

import (
	"context"
	"path/filepath"
	"sync"
	"testing"

	"github.com/clinsight/clinsight/app/eval"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/realdata"
	"github.com/clinsight/clinsight/vectorstore"
)

// shared holds the EHRSQL index, built once per test binary (read-only
// afterwards).
var shared struct {
	once sync.Once
	ix   *Index
	err  error
}

// ehrsqlIndex returns the retrieval index of the EHRSQL 2024 demo database
// with the lexical fallback embedder, and the EHRSQL folder.
func ehrsqlIndex(t testing.TB) (*Index, string) {
	t.Helper()
	dir := realdata.Path(t, "ehrsql-2024-mimic-iv-demo")
	dbPath := realdata.Path(t, "ehrsql-2024-mimic-iv-demo", "mimic_iv_demo.sqlite")
	shared.once.Do(func() {
		ctx := context.Background()
		db, err := datasets.OpenReadOnly(ctx, dbPath)
		if err != nil {
			shared.err = err
			return
		}
		defer db.Close()
		cat, err := datasets.ReadCatalog(ctx, db, datasets.CatalogOptions{})
		if err != nil {
			shared.err = err
			return
		}
		store, err := vectorstore.Open(filepath.Join(testTempDir, "ehrsql-vectors"), vectorstore.Options{})
		if err != nil {
			shared.err = err
			return
		}
		shared.ix, shared.err = BuildIndex(ctx, cat, IndexOptions{Store: store, Embedder: vectorstore.NewLexicalEmbedder(0), DBPath: dbPath, DB: db})
	})
	if shared.err != nil {
		t.Fatal(shared.err)
	}
	return shared.ix, dir
}

// TestEHRSQLRetrievalRecall is the acceptance evaluation of retrieval: on
// the answerable questions of the EHRSQL 2024 valid split, with the lexical
// fallback embedder, the top 5 tables must hold on average at least 95% of
// the tables each gold query reads.
func TestEHRSQLRetrievalRecall(t *testing.T) {
	ix, dir := ehrsqlIndex(t)
	items, err := eval.LoadEHRSQL(dir, "valid")
	if err != nil {
		t.Fatal(err)
	}
	rep, err := EvaluateRetrieval(context.Background(), ix, items, 5)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("EHRSQL valid, %d answerable questions, %s: recall@5 %.4f, all tables retrieved %.4f, median %s (index built in %s)",
		rep.N, rep.Embedder, rep.RecallAtK, rep.AllTablesShare, rep.MedianLatency, ix.BuildTime())
	misses := 0
	for _, c := range rep.Cases {
		if c.Recall < 1 && misses < 10 {
			misses++
			t.Logf("miss %.2f %q gold %v got %v", c.Recall, c.Question, c.Gold, c.Retrieved)
		}
	}
	var runnable []eval.EHRSQLItem
	for _, it := range items {
		if !it.Unrunnable {
			runnable = append(runnable, it)
		}
	}
	sub, err := EvaluateRetrieval(context.Background(), ix, runnable, 5)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("the %d answerable questions runnable on the shipped database: recall@5 %.4f, all tables retrieved %.4f",
		sub.N, sub.RecallAtK, sub.AllTablesShare)
	if rep.N != 931 {
		t.Errorf("answerable questions = %d, want 931", rep.N)
	}
	if rep.RecallAtK < 0.95 {
		t.Errorf("recall@5 = %.4f, want >= 0.95", rep.RecallAtK)
	}
}

// TestEHRSQLFacts reads the fixed current time of the EHRSQL data set from
// its schema notes.
func TestEHRSQLFacts(t *testing.T) {
	ix, _ := ehrsqlIndex(t)
	f := ReadFacts(context.Background(), nil, ix.Catalog())
	if f.Now != "2100-12-31 23:59:00" || f.Period() != "" || f.endYear() != 2100 {
		t.Errorf("facts = %+v", f)
	}
}

// TestEHRSQLDeclinedBeforeTheModel checks the stages that decline a
// question without a model (the retrieval threshold and the guard) on the
// EHRSQL valid split: no answerable question may be declined there; the
// unanswerable ones they catch are reported.
func TestEHRSQLDeclinedBeforeTheModel(t *testing.T) {
	ix, dir := ehrsqlIndex(t)
	items, err := eval.LoadEHRSQL(dir, "valid")
	if err != nil {
		t.Fatal(err)
	}
	facts := ReadFacts(context.Background(), nil, ix.Catalog())
	caught, unanswerable := 0, 0
	for _, it := range items {
		r, err := ix.Retrieve(context.Background(), it.Question, DefaultTopK)
		if err != nil {
			t.Fatal(err)
		}
		cat, reason := guard(it.Question, facts)
		declined := r.Best < DefaultMinRelevance || cat != ""
		if it.Answerable && declined {
			t.Errorf("answerable question declined (best %.3f, guard %q %s): %q", r.Best, cat, reason, it.Question)
		}
		if !it.Answerable {
			unanswerable++
			if declined {
				caught++
			}
		}
	}
	t.Logf("declined before the model: %d of %d unanswerable questions, 0 answerable", caught, unanswerable)
}

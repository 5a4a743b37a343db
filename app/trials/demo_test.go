package trials

import (
	"context"
	"path/filepath"
	"slices"
	"testing"

	"github.com/clinsight/clinsight/vectorstore"
)

// TestDemoDataMatches: the demo trials and patients are created, and for
// most demo patients the model-free ranking puts a trial of the patient's
// condition first (measured: see the log).
func TestDemoDataMatches(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	if err := DemoData(ctx, db, 11); err != nil {
		t.Fatal(err)
	}
	if err := DemoData(ctx, db, 11); err != nil { // idempotent: replaces
		t.Fatal(err)
	}
	if n, _ := Count(ctx, db); n != DemoTrials {
		t.Fatalf("%d demo trials, want %d", n, DemoTrials)
	}
	ps, err := ListDemoPatients(ctx, db)
	if err != nil || len(ps) != DemoPatients {
		t.Fatalf("%d demo patients (%v)", len(ps), err)
	}
	if again := SyntheticPatientN(11, 3); again != ps[3] {
		t.Errorf("demo patients are not deterministic: %+v vs %+v", again, ps[3])
	}
	store, err := vectorstore.Open(filepath.Join(t.TempDir(), "v"), vectorstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	emb := vectorstore.NewLexicalEmbedder(0)
	items, _ := store.Collection(ctx, "items", emb)
	p, err := New(Config{DB: db, Embedder: emb, Items: items})
	if err != nil {
		t.Fatal(err)
	}
	hits := 0
	for _, pt := range ps {
		res, err := p.Match(ctx, Request{Patient: pt.Description, Top: 1, FilterAge: true, FilterSex: true})
		if err != nil {
			t.Fatalf("%s: %v", pt.ID, err)
		}
		if len(res.Trials) > 0 && slices.Contains(res.Trials[0].Trial.Conditions, pt.Condition) {
			hits++
		}
	}
	share := float64(hits) / float64(len(ps))
	t.Logf("top trial of the patient's condition for %d of %d demo patients (%.0f%%)", hits, len(ps), 100*share)
	if share < 0.8 {
		t.Errorf("only %.0f%% of demo patients get a trial of their condition first", 100*share)
	}
}

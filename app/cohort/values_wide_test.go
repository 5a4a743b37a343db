package cohort

import (
	"context"
	"database/sql"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/clinsight/clinsight/datasets"
)

// TestValueIndexDoesNotCopyHugeValues: values too long to index stay in
// SQLite (issue 12, same class as defect 4).
func TestValueIndexDoesNotCopyHugeValues(t *testing.T) {
	path := filepath.Join(t.TempDir(), "huge-text.sqlite")
	w, err := sql.Open(datasets.DriverName, "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Exec(`CREATE TABLE notes (kind TEXT, body TEXT);
		WITH v(x) AS (VALUES (1), (2), (3)) INSERT INTO notes SELECT 'kind ' || x, printf('%.*c', 10000000, 'a') || x FROM v`); err != nil {
		t.Fatal(err)
	}
	w.Close()
	ctx := context.Background()
	db, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	cat, err := datasets.ReadCatalog(ctx, db, datasets.CatalogOptions{MaxDistinct: -1})
	if err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	vi, err := buildValueIndex(ctx, datasets.DBScanner{DB: db}, cat)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("value index of 3 × 10 MB texts: Go heap allocated %.1f MiB, %d values", float64(alloc)/(1<<20), vi.values)
	if alloc > 8<<20 {
		t.Errorf("indexing allocated %.0f MiB, want ≤ 8 MiB", float64(alloc)/(1<<20))
	}
	if vi.values != 3 {
		t.Errorf("indexed %d values, want the 3 short kinds", vi.values)
	}
}

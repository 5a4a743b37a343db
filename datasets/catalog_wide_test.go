package datasets

import (
	"context"
	"database/sql"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// newHugeTextDB creates a table of 3 rows whose note is 10 MB of text.
func newHugeTextDB(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "huge-text.sqlite")
	db, err := sql.Open(DriverName, "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE notes (id INTEGER PRIMARY KEY, kind TEXT, body TEXT);
		WITH v(x) AS (VALUES (1), (2), (3)) INSERT INTO notes SELECT x, 'k' || x, printf('%.*c', 10000000, 'a') || x FROM v`); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestReadCatalogDoesNotCopyHugeValues: sampling reads only the start of
// each value (issue 12, same class as defect 4).
func TestReadCatalogDoesNotCopyHugeValues(t *testing.T) {
	path := newHugeTextDB(t)
	db, err := OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	cat, err := ReadCatalog(context.Background(), db, CatalogOptions{})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("catalog of 3 × 10 MB texts: Go heap allocated %.1f MiB", float64(alloc)/(1<<20))
	if alloc > 8<<20 {
		t.Errorf("reading the catalog allocated %.0f MiB, want ≤ 8 MiB", float64(alloc)/(1<<20))
	}
	tab, ok := cat.Table("notes")
	if !ok {
		t.Fatal("no table notes")
	}
	body, _ := tab.Column("body")
	for _, s := range body.Samples {
		if utf8.RuneCountInString(s) > maxSampleLen || !strings.HasSuffix(s, "…") {
			t.Errorf("sample %q…: want a cut value", s[:20])
		}
	}
}

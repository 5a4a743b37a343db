package evidence

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestImportCSVRefusesWideFiles imports a literature CSV file whose header
// has 7 million columns (14 MB, under the record bound): it took 21 s and
// 1 GB of memory through clinsight evidence import before failing on the
// first row; now it is refused at the 1001st column, at once, and the
// corpus is unchanged.
func TestImportCSVRefusesWideFiles(t *testing.T) {
	db, _ := openDB(t)
	importFixtures(t, db)
	before := corpusDigest(t, db)
	p := filepath.Join(t.TempDir(), "wide.csv")
	if err := os.WriteFile(p, []byte("pmid,title"+strings.Repeat(",x", 7_000_000)+"\n1,A title\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	_, err := Import(context.Background(), db, p, ImportOptions{})
	if err == nil || !strings.Contains(err.Error(), "line 1 has more than 1000 columns") {
		t.Errorf("7 million columns: %v", err)
	}
	if d := time.Since(start); d > 10*time.Second {
		t.Errorf("refusing took %v", d)
	}
	if corpusDigest(t, db) != before {
		t.Error("the corpus changed")
	}
}

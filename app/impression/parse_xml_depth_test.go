package impression

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/datasets"
)

// reportsDigest is a digest of the report corpus and of the database's
// files (SHA-256).
func reportsDigest(t *testing.T, db *sql.DB, path string) string {
	t.Helper()
	h := sha256.New()
	rows, err := db.Query("SELECT * FROM " + ReportsTable + " ORDER BY rowid")
	if err != nil {
		t.Fatal(err)
	}
	cols, _ := rows.Columns()
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%q\n", vals)
	}
	rows.Close()
	for _, p := range []string{path, path + "-wal"} {
		raw, err := os.ReadFile(p)
		if os.IsNotExist(err) && p != path {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(h, "%s %x\n", filepath.Base(p), sha256.Sum256(raw))
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestImportRefusesDeepXML imports an Open-i XML file whose second report
// nests 140,000 elements (980 KB, under the bound of a report's bytes):
// encoding/xml keeps an entry per open element. It is refused at the
// 257th level, naming the file and the line, and the database is
// unchanged; a report nested as real ones are is imported.
func TestImportRefusesDeepXML(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := filepath.Join(dir, "reports.sqlite")
	db, err := datasets.OpenReadWrite(ctx, dbPath)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	good := writeFile(t, dir, "good.csv", "uid,findings,impression\nCXR1,The lungs are clear.,No acute disease.\n")
	if _, err := Import(ctx, db, good, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	before := reportsDigest(t, db, dbPath)
	report := func(uid, findings string) string {
		return "<eCitation><uId id=\"" + uid + "\"/><MedlineCitation><Article><Abstract>" +
			"<AbstractText Label=\"FINDINGS\">" + findings + "</AbstractText>" +
			"<AbstractText Label=\"IMPRESSION\">Normal chest.</AbstractText></Abstract></Article></MedlineCitation></eCitation>\n"
	}
	const depth = 140_000
	deep := writeFile(t, dir, "deep.xml", "<reports>\n"+report("CXR2", "Clear lungs.")+
		report("CXR3", strings.Repeat("<b>", depth)+"x"+strings.Repeat("</b>", depth))+"</reports>\n")
	var res ImportResult
	start := time.Now()
	alloc := allocated(func() { res, err = Import(ctx, db, deep, ImportOptions{}) })
	t.Logf("%v, %.1f MB allocated, %v", time.Since(start), float64(alloc)/(1<<20), err)
	if err == nil {
		t.Errorf("imported: %+v", res)
	} else if !strings.Contains(err.Error(), "deep.xml") || !strings.Contains(err.Error(), "line 3") ||
		!strings.Contains(err.Error(), "the XML is nested more than 256 levels deep: is this a file of reports?") {
		t.Errorf("error %v", err)
	}
	if alloc > 16<<20 {
		t.Errorf("%.1f MB allocated", float64(alloc)/(1<<20))
	}
	if reportsDigest(t, db, dbPath) != before {
		t.Error("the database changed")
	}
	ok := writeFile(t, dir, "ok.xml", "<reports>\n"+report("CXR4", "Clear "+strings.Repeat("<b>", 200)+"lungs."+strings.Repeat("</b>", 200))+"</reports>\n")
	if res, err := Import(ctx, db, ok, ImportOptions{}); err != nil || res.Reports != 1 {
		t.Errorf("200 levels: %+v %v", res, err)
	}
}

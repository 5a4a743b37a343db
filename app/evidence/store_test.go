package evidence

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/progress"
)

func openDB(t testing.TB) (*sql.DB, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "lit.sqlite")
	db, err := datasets.OpenReadWrite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db, path
}

func importFixtures(t testing.TB, db *sql.DB) {
	t.Helper()
	for _, f := range []string{"pubmed_sample.xml", "sample.nbib", "sample.ris", "sample.csv"} {
		if _, err := Import(context.Background(), db, filepath.Join("testdata", f), ImportOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}

// searchCorpus returns a literature database holding the demo literature
// (seed 3) and the import fixtures, and its corpus: the search tests run
// their queries on it.
func searchCorpus(t testing.TB) (*sql.DB, *Corpus) {
	t.Helper()
	db, _ := openDB(t)
	if err := DemoData(context.Background(), db, 3); err != nil {
		t.Fatal(err)
	}
	importFixtures(t, db)
	return db, NewCorpus(db)
}

func TestImportAndSearch(t *testing.T) {
	db, path := openDB(t)
	var reports []progress.Report
	res, err := Import(context.Background(), db, "testdata/pubmed_sample.xml", ImportOptions{Progress: func(p progress.Report) { reports = append(reports, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != PubMedXML || res.Records != 3 || res.Added != 3 || res.Updated != 0 || res.Bytes == 0 {
		t.Errorf("result %+v", res)
	}
	if len(reports) < 2 || reports[len(reports)-1].Done != res.Bytes || reports[0].Unit != "bytes" {
		t.Errorf("progress %+v", reports)
	}
	// Importing the same file again replaces the records.
	res, err = Import(context.Background(), db, "testdata/pubmed_sample.xml", ImportOptions{})
	if err != nil || res.Added != 0 || res.Updated != 3 {
		t.Fatalf("re-import: %+v %v", res, err)
	}
	importFixtures(t, db)

	// Search through a read-only connection, as the CLI does.
	ro, err := datasets.OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	c := NewCorpus(ro)
	if n, err := c.Count(context.Background()); err != nil || n != 11 {
		t.Fatalf("count %d %v", n, err)
	}
	for _, tc := range []struct {
		q    string
		want []string
	}{
		{`ablation[ti] AND (hepatocellular OR "liver neoplasms"[mh])`, []string{"90000001"}},
		{`"triple negative breast"[mh]`, []string{"90000011"}},
		{`breast[ti] NOT neoadjuvant`, []string{"90000012"}},
		{`muller OR müller`, nil},                                    // authors are not indexed
		{`"sao paulo"`, []string{"90000002"}},                        // diacritics folded
		{`leukaem* OR leukem*`, []string{"90000003"}},                // truncation
		{`cryotherap*[tiab] AND prostat*[ti]`, []string{"90000013"}}, // tiab
		{`brachytherapy AND cervical`, []string{"90000021"}},
		{`her2[ti] AND (nsclc OR "non-small cell lung")`, []string{"90000031", "90000032"}},
		{`"cytokine release syndrome"[mh] AND "response rate"[ab]`, []string{"90000003"}},
	} {
		sr, err := c.Search(context.Background(), tc.q, 0)
		if err != nil {
			t.Errorf("%s: %v", tc.q, err)
			continue
		}
		var got []string
		for _, h := range sr.Hits {
			got = append(got, h.PMID)
		}
		if strings.Join(sortedCopy(got), ",") != strings.Join(tc.want, ",") || sr.Total != int64(len(tc.want)) {
			t.Errorf("%s (FTS5 %s): got %v (total %d), want %v", tc.q, sr.FTS5, got, sr.Total, tc.want)
		}
	}
	// A hit carries the whole record back.
	sr, err := c.Search(context.Background(), `radiofrequency`, 5)
	if err != nil || len(sr.Hits) != 1 {
		t.Fatalf("%+v %v", sr, err)
	}
	h := sr.Hits[0]
	if len(h.Sections) != 4 || h.Sections[3].Label != "CONCLUSIONS" || h.Year != 2021 || h.MeSH[0] != "Carcinoma, Hepatocellular/surgery" || h.Authors[0] != "Müller Jürgen" {
		t.Errorf("hit %+v", h.Record)
	}
	recs, err := c.Records(context.Background(), []string{"pmid:90000002", "pmid:404"})
	if err != nil || len(recs) != 1 || recs[0].Title == "" {
		t.Errorf("Records: %+v %v", recs, err)
	}
	// A malformed query points at its position.
	_, err = c.Search(context.Background(), `cancer AND (breast OR`, 10)
	var qe *QueryError
	if !errors.As(err, &qe) || qe.Column() != 22 {
		t.Errorf("malformed query: %v", err)
	}
}

func sortedCopy(s []string) []string {
	out := append([]string(nil), s...)
	for i := range out {
		for j := i + 1; j < len(out); j++ {
			if out[j] < out[i] {
				out[i], out[j] = out[j], out[i]
			}
		}
	}
	return out
}

func TestImportIsAtomic(t *testing.T) {
	db, _ := openDB(t)
	importFixtures(t, db)
	// A file whose third record is broken: nothing of it is kept.
	bad := filepath.Join(t.TempDir(), "bad.nbib")
	content := "PMID- 80000001\nTI  - First\n\nPMID- 80000002\nTI  - Second\n\nPMID- 80000003\nnot a tag line\n"
	if err := os.WriteFile(bad, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Import(context.Background(), db, bad, ImportOptions{})
	var ie *ImportError
	if !errors.As(err, &ie) || !strings.Contains(err.Error(), "import bad.nbib record 3 line 8:") {
		t.Fatalf("error %v", err)
	}
	c := NewCorpus(db)
	if n, _ := c.Count(context.Background()); n != 11 {
		t.Errorf("after a failed import the corpus has %d records, want 11", n)
	}
	if sr, err := c.Search(context.Background(), "first OR second", 0); err != nil || sr.Total != 0 {
		t.Errorf("records of the failed file are searchable: %+v %v", sr, err)
	}
}

func TestImportCancel(t *testing.T) {
	db, _ := openDB(t)
	path := filepath.Join(t.TempDir(), "big.nbib")
	var b strings.Builder
	for i := 0; i < 3000; i++ {
		b.WriteString("PMID- ")
		b.WriteString(itoa(70000000 + i))
		b.WriteString("\nTI  - Synthetic title number ")
		b.WriteString(itoa(i))
		b.WriteString("\n\n")
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	reports := 0
	_, err := Import(ctx, db, path, ImportOptions{Progress: func(p progress.Report) {
		if reports++; reports == 2 { // after the first 1,000 records
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "record 1000 (PMID 70000999)") {
		t.Fatalf("error %v, want context.Canceled at record 1000", err)
	}
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name = 'evidence_records'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("a cancelled first import left the tables behind (%d, %v)", n, err)
	}
}

func TestNoCorpus(t *testing.T) {
	db, _ := openDB(t)
	if _, err := NewCorpus(db).Search(context.Background(), "x", 1); !errors.Is(err, ErrNoCorpus) {
		t.Errorf("error %v", err)
	}
	if _, err := Import(context.Background(), db, "testdata/missing.xml", ImportOptions{}); err == nil || !strings.Contains(err.Error(), "import missing.xml:") {
		t.Errorf("missing file: %v", err)
	}
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

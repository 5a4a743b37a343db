package evidence

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"
)

// fileDigests returns the SHA-256 of the database file at path and of its
// write-ahead log, when there is one.
func fileDigests(t *testing.T, path string) string {
	t.Helper()
	var out []string
	for _, p := range []string{path, path + "-wal"} {
		raw, err := os.ReadFile(p)
		if os.IsNotExist(err) && p != path {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fmt.Sprintf("%s %x", filepath.Base(p), sha256.Sum256(raw)))
	}
	return strings.Join(out, "; ")
}

// nested is n elements named name nested in one another around text.
func nested(name string, n int, text string) string {
	return strings.Repeat("<"+name+">", n) + text + strings.Repeat("</"+name+">", n)
}

// TestImportRefusesDeepXML imports literature files nested 2 million
// elements deep (14 MB, under the bound of one record's bytes): inside a
// PubMed article, in an element a PubMed file skips, in the references a
// JATS article skips. encoding/xml keeps an entry per open element: the
// first took 12.7 s and 373 MB through clinsight evidence import, and was
// imported. Now each is refused at the 257th level, at once, naming the
// file, the record and the line, and the database is unchanged (its
// corpus, and the SHA-256 of its files).
func TestImportRefusesDeepXML(t *testing.T) {
	db, dbPath := openDB(t)
	importFixtures(t, db)
	before, beforeFiles := corpusDigest(t, db), fileDigests(t, dbPath)
	const depth = 2_000_000
	article := func(pmid, title string) string {
		return "<PubmedArticle><MedlineCitation><PMID>" + pmid + "</PMID><Article><ArticleTitle>" + title +
			"</ArticleTitle></Article></MedlineCitation></PubmedArticle>\n"
	}
	const set = "<?xml version=\"1.0\"?>\n<PubmedArticleSet>\n"
	jatsFront := "<article><front><article-meta><article-id pub-id-type=\"pmid\">80000031</article-id>" +
		"<title-group><article-title>Deep</article-title></title-group></article-meta></front>\n" +
		"<body><sec><p>Text.</p></sec></body>\n"
	cases := []struct {
		name, content string
		want          []string
	}{
		{"deep.xml", set + article("80000011", "A good one") + article("80000012", nested("i", depth, "x")) + "</PubmedArticleSet>\n",
			[]string{"import deep.xml record 2 line 4:", "the XML is nested more than 256 levels deep at line 4"}},
		{"skipped.xml", set + article("80000021", "A good one") + "<Junk>\n" + nested("j", depth, "") + "</Junk>\n</PubmedArticleSet>\n",
			[]string{"import skipped.xml line 5: the XML is nested more than 256 levels deep: is this a PubMed file?"}},
		{"refs.nxml", jatsFront + "<back><ref-list>\n" + nested("ref", depth, "") + "</ref-list></back></article>\n",
			[]string{"import refs.nxml", "line 4", "the XML is nested more than 256 levels deep: is this a JATS article?"}},
	}
	dir := t.TempDir()
	for _, c := range cases {
		p := filepath.Join(dir, c.name)
		if err := os.WriteFile(p, []byte(c.content), 0o644); err != nil {
			t.Fatal(err)
		}
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		start := time.Now()
		res, err := Import(context.Background(), db, p, ImportOptions{})
		took := time.Since(start)
		runtime.ReadMemStats(&m1)
		alloc := (m1.TotalAlloc - m0.TotalAlloc) >> 20
		t.Logf("%s: %v, %d MB allocated, %v", c.name, took, alloc, err)
		if err == nil {
			t.Errorf("%s imported: %+v", c.name, res)
		}
		for _, w := range c.want {
			if err != nil && !strings.Contains(err.Error(), w) {
				t.Errorf("%s: error %q, want %q", c.name, err, w)
			}
		}
		if took > 5*time.Second {
			t.Errorf("%s: refusing took %v", c.name, took)
		}
		if alloc > 64 {
			t.Errorf("%s: %d MB allocated", c.name, alloc)
		}
	}
	if corpusDigest(t, db) != before {
		t.Error("the corpus changed")
	}
	if after := fileDigests(t, dbPath); after != beforeFiles {
		t.Errorf("the database files changed: %s, were %s", after, beforeFiles)
	}
	// Real nesting is read as before.
	p := filepath.Join(dir, "ok.xml")
	if err := os.WriteFile(p, []byte(set+article("80000041", "Nested "+nested("i", 200, "fine"))+"</PubmedArticleSet>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err := Import(context.Background(), db, p, ImportOptions{}); err != nil || res.Added != 1 {
		t.Errorf("200 levels: %+v %v", res, err)
	}
}

// BenchmarkPubMedParse reads a PubMed file of 30,000 articles (the
// sample's three repeated) and reports the throughput: what the nesting
// bound costs a real file.
//
//	go test -tags ci ./app/evidence/ -run '^$' -bench PubMedParse -benchtime 5x
func BenchmarkPubMedParse(b *testing.B) {
	raw, err := os.ReadFile(filepath.Join("testdata", "pubmed_sample.xml"))
	if err != nil {
		b.Fatal(err)
	}
	s := string(raw)
	first, last := strings.Index(s, "<PubmedArticle>"), strings.LastIndex(s, "</PubmedArticle>")+len("</PubmedArticle>")
	in := s[:first] + strings.Repeat(s[first:last]+"\n", 10_000) + s[last:]
	b.SetBytes(int64(len(in)))
	b.ResetTimer()
	for range b.N {
		r := NewPubMedReader(strings.NewReader(in))
		n := 0
		for {
			_, err := r.Next()
			if err != nil {
				if !errors.Is(err, io.EOF) {
					b.Fatal(err)
				}
				break
			}
			n++
		}
		if n != 30_000 {
			b.Fatalf("%d articles", n)
		}
	}
}

package evidence

import (
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// allocated returns the bytes fn allocates.
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// TestContinuationLinesAreLinear reads records wrapped over many
// continuation lines: the reading allocates in proportion to the record,
// not to the square of its lines (each line used to copy the value so
// far).
func TestContinuationLinesAreLinear(t *testing.T) {
	const lines = 20000
	wrap := strings.Repeat("      word word word\n", lines) // ~420 KB
	for _, c := range []struct {
		f  Format
		in string
	}{
		{MEDLINE, "PMID- 1\nTI  - Title\nAB  - Start\n" + wrap + "\nPMID- 2\nTI  - Second\n"},
		{RIS, "TY  - JOUR\nTI  - Title\nAB  - Start\n" + strings.ReplaceAll(wrap, "      ", "") + "ER  - \nTY  - JOUR\nTI  - Second\nER  - \n"},
	} {
		var recs []Record
		var err error
		n := allocated(func() { recs, err = readAll(t, strings.NewReader(c.in), c.f) })
		if err != nil || len(recs) != 2 {
			t.Fatalf("%s: %d records, %v", c.f, len(recs), err)
		}
		if got := strings.Count(recs[0].Abstract(), "word"); got != 3*lines {
			t.Errorf("%s: %d words in the abstract, want %d", c.f, got, 3*lines)
		}
		if n > 40<<20 {
			t.Errorf("%s: reading a %d KB record allocated %d MB", c.f, len(c.in)>>10, n>>20)
		}
	}
}

// testBudget is the record budget of the tests (the real one, tens of
// megabytes, makes slow tests).
const testBudget = 1 << 20

// withBudget sets the record budget of a reader to limit bytes.
func withBudget(t *testing.T, rr RecordReader, limit int64) RecordReader {
	t.Helper()
	switch r := rr.(type) {
	case *MEDLINEReader:
		r.budget.limit = limit
	case *RISReader:
		r.budget.limit = limit
	case *PubMedReader:
		r.budget.limit = limit
	case *CSVReader:
		r.budget.limit = limit
	default:
		t.Fatalf("no budget for %T", rr)
	}
	return rr
}

// TestRecordSizeBound feeds each record reader a record far larger than
// its budget: it is refused with a clear error naming the record, without
// holding the whole record in memory.
func TestRecordSizeBound(t *testing.T) {
	const huge = 8 * testBudget
	words := strings.Repeat("word ", huge/5)
	for _, c := range []struct {
		f  Format
		in string
	}{
		{MEDLINE, "PMID- 1\nTI  - Small\n\nPMID- 2\nTI  - Title\n" + strings.Repeat("      "+strings.Repeat("word ", 1000)+"\n", huge/5006)},
		{RIS, "TY  - JOUR\nTI  - Small\nER  - \nTY  - JOUR\nTI  - Title\n" + strings.Repeat(strings.Repeat("word ", 1000)+"\n", huge/5001) + "ER  - \n"},
		{PubMedXML, "<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article><ArticleTitle>Small</ArticleTitle></Article></MedlineCitation></PubmedArticle>" +
			"<PubmedArticle><MedlineCitation><PMID>2</PMID><Article><ArticleTitle>T</ArticleTitle><Abstract><AbstractText>" + words +
			"</AbstractText></Abstract></Article></MedlineCitation></PubmedArticle></PubmedArticleSet>"},
		{CSV, "title,abstract\nSmall,x\nTitle,\"" + words + "\"\n"},
	} {
		var recs []Record
		var err error
		n := allocated(func() {
			rr, nerr := NewReader(strings.NewReader(c.in), c.f)
			if nerr != nil {
				err = nerr
				return
			}
			withBudget(t, rr, testBudget)
			for {
				r, rerr := rr.Next()
				if rerr != nil {
					err = rerr
					return
				}
				recs = append(recs, r)
			}
		})
		var pe *ParseError
		if !errors.As(err, &pe) || !errors.Is(err, errRecordTooLarge) || !strings.Contains(err.Error(), "larger than 16 MB") || pe.Record != 2 {
			t.Errorf("%s: error %v, want record 2 larger than 16 MB", c.f, err)
		}
		if len(recs) != 1 {
			t.Errorf("%s: %d records before the error, want 1", c.f, len(recs))
		}
		if n > 12*testBudget+8*maxLineBytes {
			t.Errorf("%s: refusing a %d MB record allocated %d MB", c.f, len(c.in)>>20, n>>20)
		}
	}
	// The real budget lets records of every fixture through.
	for _, f := range []string{"pubmed_sample.xml", "sample.nbib", "sample.ris", "sample.csv"} {
		fh, err := os.Open(filepath.Join("testdata", f))
		if err != nil {
			t.Fatal(err)
		}
		format, _ := DetectFormat(f, nil)
		if recs, err := readAll(t, fh, format); err != nil || len(recs) == 0 {
			t.Errorf("%s: %d records, %v", f, len(recs), err)
		}
		fh.Close()
	}
}

// TestJATSNestingBound reads a JATS article nested far deeper than any
// real one: a clear error instead of a recursion as deep as the file.
func TestJATSNestingBound(t *testing.T) {
	const depth = 100000
	in := "<article><front><article-meta><title-group><article-title>T</article-title></title-group></article-meta></front><body><sec><p>" +
		strings.Repeat("<italic>", depth) + "x" + strings.Repeat("</italic>", depth) + "</p></sec></body></article>"
	_, err := NewJATSReader(strings.NewReader(in)).Next()
	if err == nil || !strings.Contains(err.Error(), "nested more than 256 levels") {
		t.Errorf("error %v", err)
	}
	// An article larger than the budget is refused too.
	big := "<article><front><article-meta><title-group><article-title>T</article-title></title-group></article-meta></front><body><sec><p>" +
		strings.Repeat("word ", 2*testBudget) + "</p></sec></body></article>"
	jr := NewJATSReader(strings.NewReader(big))
	jr.budget.limit = testBudget
	if _, err := jr.Next(); !errors.Is(err, errArticleTooLarge) || !strings.Contains(err.Error(), "larger than 64 MB") {
		t.Errorf("huge article: %v", err)
	}
}

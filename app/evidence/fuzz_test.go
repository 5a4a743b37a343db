package evidence

import (
	"errors"
	"io"
	"os"
	"strings"
	"testing"
	"time"
)

// fuzzReader checks a parser on arbitrary input: no panic, every record
// valid, every error a *ParseError with a line inside the input, and the
// reader stops (after an error or io.EOF) within a bounded number of calls.
func fuzzReader(t *testing.T, in string, f Format) {
	rr, err := NewReader(strings.NewReader(in), f)
	if err != nil {
		var pe *ParseError
		if !errors.As(err, &pe) {
			t.Fatalf("NewReader: %v is not a *ParseError", err)
		}
		return
	}
	lines := strings.Count(in, "\n") + 1
	start := time.Now()
	for i := 0; i <= len(in)+1; i++ {
		if time.Since(start) > 2*time.Second {
			t.Fatalf("slow: %d calls on %d bytes", i, len(in))
		}
		rec, err := rr.Next()
		if err == io.EOF {
			return
		}
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			if pe.Line < 0 || pe.Line > lines+1 {
				t.Fatalf("error line %d outside the %d lines of input: %v", pe.Line, lines, err)
			}
			return
		}
		if err := rec.Validate(); err != nil {
			t.Fatalf("invalid record returned: %v (%+v)", err, rec)
		}
		if rec.Line < 1 || rec.Line > lines {
			t.Fatalf("record line %d outside the input", rec.Line)
		}
	}
	t.Fatalf("the reader did not stop")
}

func addFixture(f *testing.F, name string) {
	b, err := os.ReadFile("testdata/" + name)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b))
}

func FuzzPubMedXML(f *testing.F) {
	addFixture(f, "pubmed_sample.xml")
	f.Add("<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>1</PMID><Article><ArticleTitle>x</ArticleTitle></Article></MedlineCitation></PubmedArticle></PubmedArticleSet>")
	f.Add("<a>")
	f.Fuzz(func(t *testing.T, in string) { fuzzReader(t, in, PubMedXML) })
}

func FuzzMEDLINE(f *testing.F) {
	addFixture(f, "sample.nbib")
	f.Add("PMID- 1\nTI  - x\n      y\n\nPMID- 2\nAB  - BACKGROUND: a. METHODS: b.\n")
	f.Fuzz(func(t *testing.T, in string) { fuzzReader(t, in, MEDLINE) })
}

func FuzzRIS(f *testing.F) {
	addFixture(f, "sample.ris")
	f.Add("TY  - JOUR\nTI  - x\nER  -\n")
	f.Fuzz(func(t *testing.T, in string) { fuzzReader(t, in, RIS) })
}

func FuzzCSV(f *testing.F) {
	addFixture(f, "sample.csv")
	f.Add("title,abstract,year\n\"a\",\"b\",2001\n")
	f.Fuzz(func(t *testing.T, in string) { fuzzReader(t, in, CSV) })
}

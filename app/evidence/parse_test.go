package evidence

import (
	"errors"
	"io"
	"os"
	"reflect"
	"regexp"
	"strings"
	"testing"
)

// readAll reads every record of a fixture in the given format.
func readAll(t *testing.T, r io.Reader, f Format) ([]Record, error) {
	t.Helper()
	rr, err := NewReader(r, f)
	if err != nil {
		return nil, err
	}
	var out []Record
	for {
		rec, err := rr.Next()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		out = append(out, rec)
	}
}

func readFixture(t *testing.T, name string, f Format) []Record {
	t.Helper()
	fh, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	recs, err := readAll(t, fh, f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return recs
}

func TestPubMedXML(t *testing.T) {
	recs := readFixture(t, "pubmed_sample.xml", PubMedXML)
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	r := recs[0]
	if r.PMID != "90000001" || r.Year != 2021 || r.Journal != "Journal of Synthetic Oncology" || r.DOI != "10.9999/jso.2021.001" || r.Line != 4 {
		t.Errorf("record 1 fields: %+v", r)
	}
	if want := "Microwave versus radiofrequency ablation for hepatocellular carcinoma: a randomized trial of local tumor progression."; r.Title != want {
		t.Errorf("title with inline markup: %q", r.Title)
	}
	if len(r.Sections) != 4 || r.Sections[2].Label != "RESULTS" || r.Sections[2].Category != "RESULTS" || !strings.Contains(r.Sections[2].Text, "0.21–1.43") {
		t.Errorf("structured abstract: %+v", r.Sections)
	}
	if !strings.HasPrefix(r.Abstract(), "BACKGROUND: Thermal ablation") || !strings.Contains(r.Abstract(), "\n\nMETHODS: We randomly") {
		t.Errorf("Abstract(): %q", r.Abstract())
	}
	wantMesh := []string{"Carcinoma, Hepatocellular/surgery", "Liver Neoplasms", "Catheter Ablation/methods", "Catheter Ablation/adverse effects", "Humans"}
	if !reflect.DeepEqual(r.MeSH, wantMesh) {
		t.Errorf("MeSH %q", r.MeSH)
	}
	if !reflect.DeepEqual(r.Authors, []string{"Müller Jürgen", "Zhang Li", "Synthetic Ablation Study Group"}) {
		t.Errorf("authors %q", r.Authors)
	}
	if !reflect.DeepEqual(r.PublicationTypes, []string{"Randomized Controlled Trial", "Journal Article"}) || len(r.Keywords) != 2 {
		t.Errorf("types %q keywords %q", r.PublicationTypes, r.Keywords)
	}
	// Missing abstract, MedlineDate year, bracketed translated title, non-ASCII.
	r = recs[1]
	if len(r.Sections) != 0 || r.Year != 2019 || r.Title != "Efficacy of β-blockers in chemotherapy-induced cardiotoxicity in São Paulo: a cohort" || r.Authors[0] != "Gonçalves Inês" {
		t.Errorf("record 2: %+v", r)
	}
	// Unstructured abstract, journal abbreviation only, initials only.
	r = recs[2]
	if len(r.Sections) != 1 || r.Sections[0].Label != "" || r.Journal != "Synth Haematol" || r.Authors[0] != "O'Brien K" || r.Authors[1] != "Nguyễn Thị" {
		t.Errorf("record 3: %+v", r)
	}
}

func TestMEDLINE(t *testing.T) {
	recs := readFixture(t, "sample.nbib", MEDLINE)
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	r := recs[0]
	if r.Title != "Neoadjuvant chemotherapy in triple-negative breast cancer: long-term overall survival in a synthetic cohort." {
		t.Errorf("continued title: %q", r.Title)
	}
	if len(r.Sections) != 4 || r.Sections[1].Label != "METHODS" || !strings.HasPrefix(r.Sections[2].Text, "Five-year overall survival") {
		t.Errorf("sections: %+v", r.Sections)
	}
	if !reflect.DeepEqual(r.MeSH, []string{"Triple Negative Breast Neoplasms/drug therapy", "Triple Negative Breast Neoplasms/mortality", "Female", "Humans", "Neoadjuvant Therapy"}) {
		t.Errorf("MeSH %q", r.MeSH)
	}
	if r.Year != 2020 || r.Journal != "Synthetic Breast Journal" || r.DOI != "10.9999/sbj.2020.11" || r.Authors[1] != "Łukasiewicz Paweł" || r.Line != 1 || r.Keywords[0] != "TNBC" {
		t.Errorf("fields: %+v", r)
	}
	if len(recs[1].Sections) != 0 || recs[1].Line != 28 || recs[1].Year != 2018 {
		t.Errorf("record without abstract: %+v", recs[1])
	}
	if recs[2].Journal != "Synth Urol" || recs[2].Authors[0] != "Weiß K" || len(recs[2].Sections) != 1 {
		t.Errorf("record 3: %+v", recs[2])
	}
}

func TestRIS(t *testing.T) {
	recs := readFixture(t, "sample.ris", RIS)
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	if r := recs[0]; r.PMID != "90000021" || r.Year != 2021 || len(r.Sections) != 4 || r.Authors[1] != "Dubois Élodie" || r.DOI != "10.9999/sgo.2021.7" || len(r.Keywords) != 2 {
		t.Errorf("record 1: %+v", r)
	}
	if r := recs[1]; r.PMID != "90000022" || r.Year != 2020 || r.Journal != "Synthetic Nephro-Oncology" || len(r.Sections) != 0 {
		t.Errorf("record 2 (PMID from the link): %+v", r)
	}
	if r := recs[2]; r.PMID != "" || r.DOI != "10.9999/book.2019.3" || r.Line != 22 {
		t.Errorf("record 3: %+v", r)
	}
}

func TestCSV(t *testing.T) {
	recs := readFixture(t, "sample.csv", CSV)
	if len(recs) != 2 || recs[0].PMID != "90000031" || recs[0].Year != 2020 || recs[0].Journal != "Synth Lung" ||
		!reflect.DeepEqual(recs[0].Authors, []string{"Zhou C", "Müller F", "Ng L"}) || recs[1].Line != 3 {
		t.Fatalf("PubMed CSV export: %+v", recs)
	}
	in := "title,abstract,mesh,publication_types,year,authors\n" +
		"\"Trial A\",\"BACKGROUND: x. RESULTS: y.\",\"Humans; Neoplasms/therapy\",Randomized Controlled Trial,2001,\"Doe J; Roe R\"\n" +
		",,,,,\n" +
		"\"Trial B, no abstract\",,,,,\n"
	recs, err := readAll(t, strings.NewReader(in), CSV)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || len(recs[0].Sections) != 2 || recs[0].MeSH[1] != "Neoplasms/therapy" || recs[0].Authors[1] != "Roe R" || recs[1].Line != 4 {
		t.Errorf("custom CSV: %+v", recs)
	}
}

// TestParseErrorsNameRecordAndLine checks that malformed input gives an
// error naming the record and the line.
func TestParseErrorsNameRecordAndLine(t *testing.T) {
	for _, c := range []struct {
		name, in string
		f        Format
		want     string
	}{
		{"xml unclosed", "<PubmedArticleSet>\n<PubmedArticle><MedlineCitation><PMID>1</PMID>\n<Article><ArticleTitle>T</Article>\n", PubMedXML, "record 1 line 2: malformed XML"},
		{"xml no pmid", "<PubmedArticleSet>\n<PubmedArticle><MedlineCitation><PMID>1</PMID><Article><ArticleTitle>A</ArticleTitle></Article></MedlineCitation></PubmedArticle>\n<PubmedArticle><MedlineCitation><Article><ArticleTitle>B</ArticleTitle></Article></MedlineCitation></PubmedArticle>\n</PubmedArticleSet>", PubMedXML, "record 2 line 3: the article has no PMID"},
		{"xml no title", "<PubmedArticleSet><PubmedArticle><MedlineCitation><PMID>7</PMID></MedlineCitation></PubmedArticle></PubmedArticleSet>", PubMedXML, "record 1 (PMID 7) line 1: the record has neither a title nor an abstract"},
		{"xml wrong root", "<html><body/></html>", PubMedXML, "not PubMed XML"},
		{"medline bad line", "PMID- 1\nTI  - A\n\nPMID- 2\nthis is not a tag\n", MEDLINE, "record 2 line 5: \"this is not a tag\" is not a MEDLINE line"},
		{"medline no pmid", "PMID- 1\nTI  - A\n\nTI  - B\n", MEDLINE, "record 2 line 4: the record has no PMID line"},
		{"medline bad pmid", "PMID- 12a\nTI  - A\n", MEDLINE, "record 1 line 1: PMID \"12a\" is not a number"},
		{"ris no ER", "TY  - JOUR\nTI  - A\nER  - \nTY  - JOUR\nTI  - B\n", RIS, "record 2 line 5: the file ends inside a record"},
		{"ris outside", "TI  - A\n", RIS, "record 1 line 1: tag TI outside a record"},
		{"ris no title", "TY  - JOUR\nPY  - 2001\nER  - \n", RIS, "record 1 line 1: the record has neither a title nor an abstract"},
		{"csv no title col", "pmid,abstract\n1,x\n", CSV, "line 1: no title column"},
		{"csv fields", "title,year\nA,2001\nB,2002,extra\n", CSV, "record 2 line 3: expected 2 fields, found 3"},
		{"csv year", "title,year,pmid\nA,soon,5\n", CSV, "record 1 (PMID 5) line 2: year \"soon\" is not a year"},
		{"csv quote", "title\n\"A\nB\n", CSV, "malformed CSV"},
	} {
		_, err := readAll(t, strings.NewReader(c.in), c.f)
		var pe *ParseError
		if err == nil || !strings.Contains(err.Error(), c.want) || !errors.As(err, &pe) {
			t.Errorf("%s: error %v, want %q", c.name, err, c.want)
		}
	}
}

func TestDetectFormat(t *testing.T) {
	for _, c := range []struct {
		name, head string
		want       Format
	}{
		{"x.txt", "<?xml version=\"1.0\"?>\n<PubmedArticleSet>", PubMedXML},
		{"x.txt", "\ufeff\nPMID- 123\n", MEDLINE},
		{"export", "TY  - JOUR\n", RIS},
		{"x.csv", "PMID,Title\n", CSV},
		{"x.nbib", "", MEDLINE},
	} {
		if got, err := DetectFormat(c.name, []byte(c.head)); err != nil || got != c.want {
			t.Errorf("DetectFormat(%q, %q) = %q, %v", c.name, c.head, got, err)
		}
	}
	if _, err := DetectFormat("notes.docx", []byte("hello")); err == nil {
		t.Error("unknown format accepted")
	}
	for _, s := range []string{"xml", "NBIB", "ris", "csv"} {
		if _, err := ParseFormat(s); err != nil {
			t.Errorf("ParseFormat(%q): %v", s, err)
		}
	}
}

// structuredLabelRE is the reference definition of a section heading.
var structuredLabelRE = regexp.MustCompile(`(?:^|\s)([A-Z][A-Z0-9 ,&/\-]{2,39}):\s`)

func refSplit(ab string) []Section {
	locs := structuredLabelRE.FindAllStringSubmatchIndex(ab, -1)
	if len(locs) == 0 || strings.TrimSpace(ab[:locs[0][2]]) != "" {
		return []Section{{Text: ab}}
	}
	var out []Section
	for i, l := range locs {
		end := len(ab)
		if i+1 < len(locs) {
			end = locs[i+1][0]
		}
		if text := strings.TrimSpace(ab[l[1]:end]); text != "" {
			out = append(out, Section{Label: ab[l[2]:l[3]], Text: text})
		}
	}
	return out
}

func FuzzSplitStructured(f *testing.F) {
	for _, s := range []string{
		"BACKGROUND: a. METHODS: b. RESULTS: HR 0.41 (95% CI: 0.2-0.8). CONCLUSIONS: d.",
		"in TNBC METHODS: x", "Plain text: with a colon.", "AIMS/HYPOTHESIS: x", "AB: x", "ABC:  y ABC: z",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ab string) {
		ab = cleanSpace(ab) // as the readers pass it
		got, want := splitStructured(ab), refSplit(ab)
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("splitStructured(%q) = %q, regexp reference %q", ab, got, want)
		}
	})
}

package evidence

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"codeberg.org/go-pdf/fpdf"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/progress"
)

func TestSplitSentences(t *testing.T) {
	for _, c := range []struct {
		in   string
		want []string
	}{
		{"One. Two.", []string{"One.", "Two."}},
		{"The rate was 30% (p = 0.03). The HR was 0.55 (95% CI 1.2–3.4).", []string{"The rate was 30% (p = 0.03).", "The HR was 0.55 (95% CI 1.2–3.4)."}},
		{"As Smith et al. (2019) showed. Then more.", []string{"As Smith et al. (2019) showed.", "Then more."}},
		{"Drugs (e.g. Cisplatin) and others vs. Placebo. Next.", []string{"Drugs (e.g. Cisplatin) and others vs. Placebo.", "Next."}},
		{"Reported by J. Smith in Fig. 2 and No. 3. Done!", []string{"Reported by J. Smith in Fig. 2 and No. 3.", "Done!"}},
		{"Was it? Yes. in lower case no split. 45 patients were enrolled.", []string{"Was it?", "Yes. in lower case no split.", "45 patients were enrolled."}},
		{"He said “stop.” Then left.", []string{"He said “stop.”", "Then left."}},
		{"Ends without a period", []string{"Ends without a period"}},
		{"", nil},
	} {
		if got := splitSentences(c.in); !reflect.DeepEqual(got, c.want) {
			t.Errorf("splitSentences(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func TestChunkTextCutsRunawaySentences(t *testing.T) {
	// Text without punctuation, as a PDF without sentence ends gives: far
	// longer than the limit, it is cut between words.
	words := strings.Repeat("alpha beta gamma delta ", 100)
	giant := strings.Repeat("x", 130)
	chunks := ChunkText([]Section{{Label: "Body", Text: words + giant + " tail"}}, 100)
	var joined []string
	for i, c := range chunks {
		if runeLen(c.Text) > 100 {
			t.Errorf("chunk %d has %d characters, more than 100", c.N, runeLen(c.Text))
		}
		if c.N != i+1 {
			t.Errorf("chunk %d numbered %d", i+1, c.N)
		}
		joined = append(joined, c.Text)
	}
	if got := strings.Join(strings.Fields(strings.Join(joined, " ")), " "); got != strings.Join(strings.Fields(words), " ")+" "+giant[:100]+" "+giant[100:]+" tail" {
		t.Errorf("text changed by cutting: %q", got)
	}
	// A long sentence under four times the limit stays whole.
	long := strings.Repeat("word ", 60) + "end."
	if c := ChunkText([]Section{{Text: long}}, 100); len(c) != 1 {
		t.Errorf("a sentence of %d characters was cut into %d chunks", len(long), len(c))
	}
}

func TestChunkText(t *testing.T) {
	results := "Local tumor progression occurred in 4 of 60 patients (6.7%) after MWA. It occurred in 7 of 60 (11.7%) after RFA (HR 0.55, 95% CI 0.21–1.43; p = 0.22). " +
		"Smith et al. reported similar figures. Complications were rare (e.g. bleeding in 2 patients)."
	long := strings.Repeat("word ", 60) + "end."
	table := "Table 1. Outcomes at 2 years\nOutcome | MWA (n = 60) | RFA (n = 60)\nComplete ablation | 58 (96.7) | 55 (91.7)\nLocal tumor progression | 4 (6.7) | 7 (11.7)\nMajor complications | 2 (3.3) | 3 (5.0)"
	secs := []Section{
		{Label: "Title", Text: "Microwave versus radiofrequency ablation"},
		{Label: "Empty", Text: " \n "},
		{Label: "Results", Text: results + "\nSecond paragraph é é é."},
		{Label: "Long", Text: long},
		{Label: "Table 1", Category: TableCategory, Text: table},
	}
	const max = 140
	chunks := ChunkText(secs, max)
	for i, c := range chunks {
		if c.N != i+1 {
			t.Errorf("chunk %d numbered %d", i+1, c.N)
		}
		if n := runeLen(c.Text); n > max && c.Section != "Long" {
			t.Errorf("chunk %d has %d characters > %d: %q", c.N, n, max, c.Text)
		}
		if c.Section == "Empty" {
			t.Error("a section without text made a chunk")
		}
	}
	// The Results chunks give the section back, split only between sentences.
	var got []string
	for _, c := range chunks {
		if c.Section == "Results" {
			got = append(got, c.Text)
		}
	}
	if len(got) < 3 {
		t.Fatalf("Results split into %d chunks: %q", len(got), got)
	}
	if strings.Join(strings.Fields(strings.Join(got, " ")), " ") != strings.Join(strings.Fields(results+" Second paragraph é é é."), " ") {
		t.Errorf("Results chunks do not give the text back: %q", got)
	}
	for _, whole := range []string{"(HR 0.55, 95% CI 0.21–1.43; p = 0.22).", "Smith et al. reported similar figures.", "(e.g. bleeding in 2 patients)."} {
		found := false
		for _, g := range got {
			found = found || strings.Contains(g, whole)
		}
		if !found {
			t.Errorf("%q was split: %q", whole, got)
		}
	}
	// A sentence longer than the maximum is a chunk of its own, whole.
	var longChunks []Chunk
	for _, c := range chunks {
		if c.Section == "Long" {
			longChunks = append(longChunks, c)
		}
	}
	if len(longChunks) != 1 || longChunks[0].Text != strings.TrimSpace(long) {
		t.Errorf("long sentence: %+v", longChunks)
	}
	// A table is split between rows; each later chunk repeats the caption
	// and header.
	var rows []Chunk
	for _, c := range chunks {
		if c.Section == "Table 1" {
			rows = append(rows, c)
		}
	}
	if len(rows) < 2 {
		t.Fatalf("the table was not split: %+v", rows)
	}
	head := "Table 1. Outcomes at 2 years\nOutcome | MWA (n = 60) | RFA (n = 60)"
	seen := map[string]int{}
	for _, c := range rows {
		if !strings.HasPrefix(c.Text, head) {
			t.Errorf("table chunk %d lacks the caption and header: %q", c.N, c.Text)
		}
		for _, l := range strings.Split(c.Text, "\n")[2:] {
			seen[l]++
		}
	}
	for _, l := range strings.Split(table, "\n")[2:] {
		if seen[l] != 1 {
			t.Errorf("row %q is in %d chunks", l, seen[l])
		}
	}
	if chunks[0].Section != "Title" || chunks[0].Text != "Microwave versus radiofrequency ablation" {
		t.Errorf("chunk 1 %+v", chunks[0])
	}
	// The maximum counts characters, not bytes; ≤ 0 means the default.
	accents := ChunkText([]Section{{Text: strings.Repeat("é", 60) + ". " + strings.Repeat("è", 60) + "."}}, 125)
	if len(accents) != 1 {
		t.Errorf("123 characters in %d chunks of 125", len(accents))
	}
	if d := ChunkText([]Section{{Text: long + " " + long}}, 0); len(d) != 1 {
		t.Errorf("default size: %d chunks", len(d))
	}
	if ChunkText(nil, 100) != nil {
		t.Error("chunks from nothing")
	}
}

func TestParseJATS(t *testing.T) {
	f, err := os.Open("testdata/jats_article.xml")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := NewJATSReader(f)
	a, err := r.Next()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err != io.EOF {
		t.Errorf("second Next: %v", err)
	}
	rec := a.Record
	if rec.PMID != "90000001" || rec.DOI != "10.9999/jso.2021.001" || a.PMCID != "PMC9900001" || rec.Year != 2021 ||
		rec.Journal != "Journal of Synthetic Oncology" || rec.Line != 3 {
		t.Errorf("front matter %+v %s", rec, a.PMCID)
	}
	if rec.Title != "Microwave versus radiofrequency ablation for hepatocellular carcinoma: a randomized trial of local tumor progression" {
		t.Errorf("title %q", rec.Title)
	}
	if !reflect.DeepEqual(rec.Authors, []string{"Müller Jürgen", "Zhang Li", "Synthetic Ablation Study Group"}) ||
		!reflect.DeepEqual(rec.Keywords, []string{"microwave ablation", "hepatocellular carcinoma"}) {
		t.Errorf("authors %q keywords %q", rec.Authors, rec.Keywords)
	}
	if len(rec.Sections) != 4 || rec.Sections[2].Label != "Results" || !strings.Contains(rec.Sections[2].Text, "4 of 60 (6.7%)") {
		t.Errorf("abstract %+v", rec.Sections)
	}
	var labels []string
	for _, s := range a.Body {
		labels = append(labels, s.Label)
	}
	want := []string{"Introduction", "Methods / Patients", "Methods / Statistical analysis", "Results", "Table 1",
		"Results / Local tumor progression", "Figure 1", "Discussion"}
	if !reflect.DeepEqual(labels, want) {
		t.Errorf("body sections %q, want %q", labels, want)
	}
	byLabel := map[string]Section{}
	for _, s := range a.Body {
		byLabel[s.Label] = s
	}
	tab := byLabel["Table 1"]
	wantTab := "Table 1. Outcomes at 2 years. Values are n (%) unless stated otherwise.\n" +
		"Outcome | MWA (n = 60) | RFA (n = 60) | HR (95% CI)\n" +
		"Complete ablation | 58 (96.7) | 55 (91.7) | –\n" +
		"Local tumor progression | 4 (6.7) | 7 (11.7) | 0.55 (0.21–1.43)\n" +
		"Major complications^a | 2 (3.3) | 3 (5.0) | \n" +
		"^aClavien–Dindo grade ≥ III."
	if tab.Category != TableCategory || tab.Text != wantTab {
		t.Errorf("table %q\nwant %q", tab.Text, wantTab)
	}
	if fig := byLabel["Figure 1"].Text; fig != "Figure 1. Cumulative incidence of local tumor progression by treatment group." {
		t.Errorf("figure %q", fig)
	}
	if p := byLabel["Methods / Patients"].Text; !strings.Contains(p, "São Paulo and Kraków") || !strings.Contains(p, "≥ 18 years") {
		t.Errorf("non-ASCII text %q", p)
	}
	all := ""
	for _, s := range a.Sections() {
		all += s.Label + ": " + s.Text + "\n"
	}
	for _, absent := range []string{"Reference text", "We thank", "graphical abstract", "Editor", "<x", "</"} {
		if strings.Contains(all, absent) {
			t.Errorf("%q is in the text:\n%s", absent, all)
		}
	}
	secs := a.Sections()
	if secs[0].Label != "Title" || secs[1].Label != "Abstract: Background" || secs[5].Label != "Introduction" {
		t.Errorf("sections %+v", secs[:6])
	}
}

func TestParseJATSErrors(t *testing.T) {
	for _, c := range []struct{ xml, want string }{
		{"<?xml version=\"1.0\"?>\n<PubmedArticleSet></PubmedArticleSet>", "line 2: the root element is <PubmedArticleSet>, not <article>"},
		{"<?xml version=\"1.0\"?>\n", "no <article> element"},
		{"<article>\n<front><article-meta>\n<article-title>x</article-meta></front></article>", "line 3: malformed XML: element <article-title> closed by </article-meta>"},
		{"<pmc-articleset><article><front/></article>\n<article><body><p>x</body></article></pmc-articleset>", "record 2 line 2: malformed XML"},
	} {
		_, err := NewJATSReader(strings.NewReader(c.xml)).Next()
		if err == nil {
			// The first article of a set may be fine: read on.
			r := NewJATSReader(strings.NewReader(c.xml))
			for err == nil {
				_, err = r.Next()
			}
		}
		var pe *ParseError
		if !errors.As(err, &pe) || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: error %v, want %q", c.xml, err, c.want)
		}
	}
}

func TestParseText(t *testing.T) {
	f, err := os.Open("testdata/90000011.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	secs, err := ParseText(f)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, s := range secs {
		labels = append(labels, s.Label)
	}
	want := []string{"", "ABSTRACT", "Introduction", "Methods / Patients", "Methods / Statistical analysis", "RESULTS", "Table 2", "RESULTS", "Discussion"}
	if !reflect.DeepEqual(labels, want) {
		t.Fatalf("sections %q, want %q", labels, want)
	}
	if secs[0].Text != "Neoadjuvant chemotherapy in triple-negative breast cancer: long-term overall survival\nAnna Kowalska, Jean Dupont" {
		t.Errorf("first section %q", secs[0].Text)
	}
	if secs[2].Text != "Triple-negative breast cancer (TNBC) lacks targeted options. Earlier trials (e.g. GeparSixto) suggested a benefit of carboplatin." {
		t.Errorf("wrapped lines not joined: %q", secs[2].Text)
	}
	if secs[6].Category != TableCategory || secs[6].Text != "Table 2. Pathological complete response by arm\nArm | N | pCR, n (%)\nCarboplatin | 100 | 54 (54.0)\nNo carboplatin | 98 | 38 (38.8)" {
		t.Errorf("table %+v", secs[6])
	}
	for _, s := range secs {
		if strings.Contains(s.Text, "Reference that") {
			t.Error("the references were kept")
		}
	}
	// Headings without a blank line after them, "|" tables, CRLF, a BOM.
	secs, err = ParseText(strings.NewReader("\ufeffTitle line\r\n\r\nMETHODS\r\nWe did it.\r\n\r\nGroup | N\r\nA | 10\r\nB | 12\r\n"))
	if err != nil || len(secs) != 3 || secs[1].Label != "METHODS" || secs[1].Text != "We did it." || secs[2].Label != "Table 1" || secs[2].Text != "Table 1\nGroup | N\nA | 10\nB | 12" {
		t.Errorf("%+v %v", secs, err)
	}
	// "Table 2 shows" is a sentence, not a caption.
	secs, err = ParseText(strings.NewReader("Intro\n\nTable 2 shows the outcomes\nof both arms.\n"))
	if err != nil || len(secs) != 1 || secs[0].Category != "" {
		t.Errorf("%+v %v", secs, err)
	}
	if _, err := ParseText(strings.NewReader("fine\n\nLatin-1 \xe9t\xe9\n")); err == nil || err.Error() != "line 3: the text is not UTF-8 (save the file as UTF-8 text)" {
		t.Errorf("non-UTF-8: %v", err)
	}
}

func TestDetectFullTextFormats(t *testing.T) {
	for _, c := range []struct {
		name, head string
		want       Format
	}{
		{"a.xml", "<?xml version=\"1.0\"?>\n<!DOCTYPE article PUBLIC \"-//NLM//DTD JATS\" \"x.dtd\">\n<!-- c -->\n<article xmlns:mml=\"m\">", JATS},
		{"a.xml", "<pmc-articleset><article>", JATS},
		{"a.nxml", "<?xml version=\"1.0\"?><!DOCTYPE PubmedArticleSet [ <!ENTITY x \"y\"> ]><PubmedArticleSet>", PubMedXML},
		{"a.pdf", "%PDF-1.7\n", PDF},
		{"x.bin", "%PDF-1.4", PDF},
		{"12345.txt", "RESULTS\nThe rate was 5%.", PlainText},
		{"12345.txt", "PMID- 12345\nTI  - x", MEDLINE},
	} {
		if got, err := DetectFormat(c.name, []byte(c.head)); err != nil || got != c.want {
			t.Errorf("DetectFormat(%q, %q) = %q, %v; want %q", c.name, c.head, got, err, c.want)
		}
	}
	for _, s := range []string{"jats", "PMC", "text", "txt", "pdf"} {
		if f, err := ParseFormat(s); err != nil || !f.IsFullText() {
			t.Errorf("ParseFormat(%q) = %q, %v", s, f, err)
		}
	}
	if PubMedXML.IsFullText() {
		t.Error("PubMed XML is a full text")
	}
}

// chunkRows counts the stored chunks of a record.
func chunkRows(t *testing.T, c *Corpus, id string) int {
	t.Helper()
	var n int
	if err := c.db.QueryRow(`SELECT count(*) FROM evidence_chunks WHERE record_id = ?`, id).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestImportFullTexts(t *testing.T) {
	db, path := openDB(t)
	ctx := context.Background()
	importFixtures(t, db)
	c := NewCorpus(db)

	res, err := Import(ctx, db, "testdata/jats_article.xml", ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != JATS || res.Records != 1 || res.Added != 0 || len(res.FullTexts) != 1 || res.FullTexts[0].ID != "pmid:90000001" ||
		res.FullTexts[0].Created || res.FullTexts[0].Chunks < 10 {
		t.Errorf("result %+v", res)
	}
	st, err := c.StudyText(ctx, "pmid:90000001")
	if err != nil {
		t.Fatal(err)
	}
	if !st.FullText || st.Source != "jats_article.xml" || len(st.Chunks) != res.FullTexts[0].Chunks || st.Chunks[0].Section != "Title" {
		t.Errorf("study text %+v", st)
	}
	// The PubMed record itself is unchanged.
	if st.Title != "Microwave versus radiofrequency ablation for hepatocellular carcinoma: a randomized trial of local tumor progression." {
		t.Errorf("title %q", st.Title)
	}
	var tableChunk Chunk
	for i, ch := range st.Chunks {
		if ch.N != i+1 {
			t.Errorf("chunk %d numbered %d", i+1, ch.N)
		}
		if ch.Section == "Table 1" {
			tableChunk = ch
		}
	}
	if !strings.Contains(tableChunk.Text, "Local tumor progression | 4 (6.7) | 7 (11.7) | 0.55 (0.21–1.43)") {
		t.Errorf("table chunk %+v", tableChunk)
	}

	// A set of articles: one new record (no abstract), one matched by DOI.
	res, err = Import(ctx, db, "testdata/jats_set.xml", ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Records != 2 || res.Added != 1 || len(res.FullTexts) != 2 || !res.FullTexts[0].Created || res.FullTexts[0].ID != "pmid:90000041" ||
		res.FullTexts[1].ID != "pmid:90000021" || res.FullTexts[1].Created {
		t.Errorf("set result %+v", res)
	}
	if n, _ := c.Count(ctx); n != 12 {
		t.Errorf("count %d, want 12", n)
	}
	sr, err := c.Search(ctx, `oligometastatic[ti] AND stereotactic`, 0)
	if err != nil || sr.Total != 1 || sr.Hits[0].ID != "pmid:90000041" || sr.Hits[0].Year != 2022 || sr.Hits[0].Authors[0] != "Dubois Élodie" || len(sr.Hits[0].Sections) != 0 {
		t.Errorf("new record from the front matter: %+v %v", sr, err)
	}
	st, err = c.StudyText(ctx, "pmid:90000041")
	if err != nil || len(st.Chunks) != 2 || st.Chunks[1].Section != "" || !strings.Contains(st.Chunks[1].Text, "27 of 30 (90.0%)") {
		t.Errorf("body without sections: %+v %v", st, err)
	}

	// Plain text named after the PMID.
	res, err = Import(ctx, db, "testdata/90000011.txt", ImportOptions{})
	if err != nil || res.Format != PlainText || len(res.FullTexts) != 1 || res.FullTexts[0].ID != "pmid:90000011" {
		t.Fatalf("plain text: %+v %v", res, err)
	}
	st, _ = c.StudyText(ctx, "pmid:90000011")
	if !st.FullText || st.Chunks[len(st.Chunks)-1].Section != "Discussion" {
		t.Errorf("plain text chunks %+v", st.Chunks)
	}
	// Re-importing replaces the chunks.
	dir := t.TempDir()
	short := filepath.Join(dir, "90000011.txt")
	if err := os.WriteFile(short, []byte("RESULTS\nOnly one chunk now.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Import(ctx, db, short, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	st, _ = c.StudyText(ctx, "pmid:90000011")
	if len(st.Chunks) != 1 || st.Chunks[0].Text != "Only one chunk now." || st.Chunks[0].Section != "RESULTS" || chunkRows(t, c, "pmid:90000011") != 1 {
		t.Errorf("after re-import %+v", st.Chunks)
	}

	// A text for a record that is not in the corpus.
	missing := filepath.Join(dir, "99999999.txt")
	if err := os.WriteFile(missing, []byte("Some text.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Import(ctx, db, missing, ImportOptions{})
	if !errors.Is(err, ErrNoRecord) || !strings.Contains(err.Error(), "import 99999999.txt: no record pmid:99999999 or 99999999 in the corpus") {
		t.Errorf("unknown record: %v", err)
	}
	// --record names it (here a record keyed by DOI, which no file name can hold).
	notes := filepath.Join(dir, "notes.txt")
	if err := os.WriteFile(notes, []byte("Thermal ablation of thyroid microcarcinoma.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err = Import(ctx, db, notes, ImportOptions{Record: "doi:10.9999/book.2019.3"})
	if err != nil || res.FullTexts[0].ID != "doi:10.9999/book.2019.3" {
		t.Errorf("--record: %+v %v", res, err)
	}
	if _, err := Import(ctx, db, notes, ImportOptions{Record: "demo:404"}); !errors.Is(err, ErrNoRecord) || !strings.Contains(err.Error(), "record demo:404 is not in the corpus") {
		t.Errorf("--record unknown: %v", err)
	}
	if _, err := Import(ctx, db, "testdata/sample.ris", ImportOptions{Record: "pmid:90000021"}); err == nil || !strings.Contains(err.Error(), "not a full text") {
		t.Errorf("--record with a file of records: %v", err)
	}
	if _, err := Import(ctx, db, "testdata/jats_set.xml", ImportOptions{Record: "pmid:90000021"}); err == nil || !strings.Contains(err.Error(), "more than one article") {
		t.Errorf("--record with a set: %v", err)
	}

	// A malformed file: a located error, and nothing of it kept.
	_, err = Import(ctx, db, "testdata/jats_malformed.xml", ImportOptions{})
	if err == nil || err.Error() != "import jats_malformed.xml line 11: malformed XML: element <p> closed by </sec>" {
		t.Errorf("malformed: %v", err)
	}
	if st, err := c.StudyText(ctx, "pmid:90000003"); err != nil || st.FullText {
		t.Errorf("malformed file kept: %+v %v", st, err)
	}
	ids, err := c.FullTextIDs(ctx)
	if err != nil || !reflect.DeepEqual(ids, []string{"doi:10.9999/book.2019.3", "pmid:90000001", "pmid:90000011", "pmid:90000021", "pmid:90000041"}) {
		t.Errorf("full texts %q %v", ids, err)
	}

	// Read-only, as the extraction reads it.
	ro, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	if st, err := NewCorpus(ro).StudyText(ctx, "pmid:90000001"); err != nil || !st.FullText {
		t.Errorf("read-only: %v", err)
	}
}

func TestImportFullTextCancel(t *testing.T) {
	db, _ := openDB(t)
	importFixtures(t, db)
	c := NewCorpus(db)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	_, err := Import(ctx, db, "testdata/jats_set.xml", ImportOptions{Progress: func(progress.Report) {
		if calls++; calls == 2 { // after the first article
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "import jats_set.xml record 2") {
		t.Fatalf("error %v", err)
	}
	if n, _ := c.Count(context.Background()); n != 11 {
		t.Errorf("count %d after a cancelled import", n)
	}
	if ids, err := c.FullTextIDs(context.Background()); err != nil || len(ids) != 0 {
		t.Errorf("full texts after a cancelled import: %q %v", ids, err)
	}
}

func TestStudyTextFromAbstract(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	importFixtures(t, db)
	long := strings.Repeat("The response rate was 12 of 40 (30.0%) with treatment, p = 0.03. ", 40)
	nbib := filepath.Join(t.TempDir(), "long.nbib")
	if err := os.WriteFile(nbib, []byte("PMID- 80000001\nTI  - A long abstract\nAB  - RESULTS: "+long+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Import(ctx, db, nbib, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	c := NewCorpus(db)
	st, err := c.StudyText(ctx, "pmid:90000001")
	if err != nil {
		t.Fatal(err)
	}
	want := []Chunk{
		{1, "Title", "Microwave versus radiofrequency ablation for hepatocellular carcinoma: a randomized trial of local tumor progression."},
		{2, "Abstract: BACKGROUND", "Thermal ablation is a curative option for early hepatocellular carcinoma (HCC)."},
		{3, "Abstract: METHODS", "We randomly assigned 120 patients to microwave ablation (MWA) or radiofrequency ablation (RFA)."},
		{4, "Abstract: RESULTS", "Complete ablation was achieved in 58 of 60 (MWA) and 55 of 60 (RFA) patients; local tumor progression at 2 years was 6.7% vs 11.7% (HR 0.55, 95% CI 0.21–1.43)."},
		{5, "Abstract: CONCLUSIONS", "MWA and RFA achieved similar local control."},
	}
	if st.ID != "pmid:90000001" || st.FullText || st.Source != "" || !reflect.DeepEqual(st.Chunks, want) {
		t.Errorf("study text %+v", st)
	}
	if c, ok := st.Chunk(4); !ok || c.Section != "Abstract: RESULTS" {
		t.Errorf("Chunk(4) %+v", c)
	}
	// A long section is split on sentence boundaries.
	st, err = c.StudyText(ctx, "pmid:80000001")
	if err != nil || len(st.Chunks) < 4 {
		t.Fatalf("%+v %v", st, err)
	}
	for _, ch := range st.Chunks[1:] {
		if ch.Section != "Abstract: RESULTS" || runeLen(ch.Text) > DefaultChunkChars || !strings.HasSuffix(ch.Text, "p = 0.03.") {
			t.Errorf("chunk %d (%d characters): %q", ch.N, runeLen(ch.Text), ch.Text)
		}
	}
	// Without an abstract: the title only.
	st, err = c.StudyText(ctx, "pmid:90000022")
	if err != nil || len(st.Chunks) != 1 || st.Chunks[0].Section != "Title" {
		t.Errorf("no abstract: %+v %v", st, err)
	}
	// An unknown record.
	if _, err := c.StudyText(ctx, "pmid:404"); !errors.Is(err, ErrNoRecord) || !strings.Contains(err.Error(), "pmid:404") {
		t.Errorf("unknown: %v", err)
	}
	// A corpus from before full texts (no chunk tables) reads its abstracts.
	if _, err := db.Exec(`DROP TABLE evidence_chunks; DROP TABLE evidence_fulltexts`); err != nil {
		t.Fatal(err)
	}
	if st, err := c.StudyText(ctx, "pmid:90000001"); err != nil || len(st.Chunks) != 5 {
		t.Errorf("old corpus: %+v %v", st, err)
	}
	if ids, err := c.FullTextIDs(ctx); err != nil || ids != nil {
		t.Errorf("old corpus: %q %v", ids, err)
	}
	if _, err := NewCorpus(db).StudyText(ctx, "x"); err == nil {
		t.Error("no error")
	}
}

func TestDemoFullTexts(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	if err := DemoData(ctx, db, 7); err != nil {
		t.Fatal(err)
	}
	// The demo record that a plain text names as demo-12 is demo:12.
	c := NewCorpus(db)
	ids, err := c.FullTextIDs(ctx)
	if err != nil || len(ids) != DemoFullTextCount {
		t.Fatalf("%d demo full texts, %v", len(ids), err)
	}
	texts := DemoFullTexts(300, 7)
	if !reflect.DeepEqual(texts, DemoFullTexts(300, 7)) || reflect.DeepEqual(texts, DemoFullTexts(300, 8)) {
		t.Error("DemoFullTexts is not deterministic per seed")
	}
	recs := DemoRecords(300, 7)
	for _, r := range recs {
		secs, ok := texts[r.ID]
		if !ok {
			continue
		}
		st, err := c.StudyText(ctx, r.ID)
		if err != nil || !st.FullText || st.Source != "demo" {
			t.Fatalf("%s: %+v %v", r.ID, st, err)
		}
		if !reflect.DeepEqual(st.Chunks, ChunkText(secs, DefaultChunkChars)) {
			t.Errorf("%s: stored chunks differ from the generated text", r.ID)
		}
		// The abstract's result ("e of n (x%)", twice) is stated in the
		// Results and in Table 2 as "e (x%)".
		res := r.Sections[2].Text
		var results, table string
		for _, ch := range st.Chunks {
			switch ch.Section {
			case "Results / Primary outcome":
				results = ch.Text
			case "Table 2":
				table = ch.Text
			}
		}
		for _, part := range strings.Split(strings.TrimSuffix(res[strings.Index(res, " was ")+5:], "."), " and ") {
			// part: "12 of 40 (30.0%) with treatment"
			count := part[:strings.Index(part, ")")+1]
			if !strings.Contains(results, count) {
				t.Errorf("%s: %q not in the results %q", r.ID, count, results)
			}
			f := strings.Fields(count) // e of n (x%)
			if !strings.Contains(table, " | "+f[0]+" "+f[3]) {
				t.Errorf("%s: %q not in table 2 %q", r.ID, f[0]+" "+f[3], table)
			}
		}
	}
	// A plain text named demo-12.txt is for demo:12.
	file := filepath.Join(t.TempDir(), "demo-12.txt")
	if err := os.WriteFile(file, []byte("Text of demo 12.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	res, err := Import(ctx, db, file, ImportOptions{})
	if err != nil || res.FullTexts[0].ID != "demo:12" {
		t.Errorf("demo-12.txt: %+v %v", res, err)
	}
}

// writeTestPDF writes a one-page PDF with a heading, a paragraph and a
// table caption.
func writeTestPDF(t *testing.T, path string, lines ...string) {
	t.Helper()
	p := fpdf.New("P", "mm", "A4", "")
	p.AddPage()
	p.SetFont("Helvetica", "", 11)
	for _, l := range lines {
		p.MultiCell(0, 5, l, "", "", false)
		p.Ln(5)
	}
	var buf bytes.Buffer
	if err := p.Output(&buf); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestImportPDF(t *testing.T) {
	db, _ := openDB(t)
	ctx := context.Background()
	importFixtures(t, db)
	dir := t.TempDir()
	file := filepath.Join(dir, "90000013.pdf")
	writeTestPDF(t, file, "RESULTS",
		"The overall response rate was 12 of 40 (30.0%) with cryotherapy and 8 of 41 (19.5%) with observation (p = 0.03). Smith et al. reported similar results.",
		"DISCUSSION", "Cryotherapy was feasible.")
	res, err := Import(ctx, db, file, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Format != PDF || len(res.FullTexts) != 1 || res.FullTexts[0].ID != "pmid:90000013" {
		t.Errorf("result %+v", res)
	}
	st, err := NewCorpus(db).StudyText(ctx, "pmid:90000013")
	if err != nil || !st.FullText || len(st.Chunks) != 2 || st.Chunks[0].Section != "RESULTS" ||
		!strings.Contains(st.Chunks[0].Text, "12 of 40 (30.0%)") || !strings.Contains(st.Chunks[0].Text, "(19.5%) with observation") ||
		st.Chunks[1].Section != "DISCUSSION" {
		t.Errorf("PDF text %+v %v", st, err)
	}
	// A damaged PDF, and one without text.
	bad := filepath.Join(dir, "90000012.pdf")
	if err := os.WriteFile(bad, []byte("%PDF-1.4\nnot really a PDF\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Import(ctx, db, bad, ImportOptions{}); err == nil || !strings.Contains(err.Error(), "import 90000012.pdf: the PDF cannot be read") {
		t.Errorf("damaged PDF: %v", err)
	}
	empty := filepath.Join(dir, "90000031.pdf")
	writeTestPDF(t, empty)
	if _, err := Import(ctx, db, empty, ImportOptions{}); err == nil || !strings.Contains(err.Error(), "no text layer") {
		t.Errorf("PDF without text: %v", err)
	}
}

// FuzzJATS checks the JATS reader on arbitrary input: no panic, errors are
// *ParseError values with a line inside the input, and the reader stops.
func FuzzJATS(f *testing.F) {
	addFixture(f, "jats_article.xml")
	addFixture(f, "jats_set.xml")
	f.Add("<article><body><sec><title>A</title><p>x<table-wrap><table><tr><td>1</td></tr></table></table-wrap></p></sec></body></article>")
	f.Fuzz(func(t *testing.T, in string) {
		r := NewJATSReader(strings.NewReader(in))
		lines := strings.Count(in, "\n") + 1
		for i := 0; i <= len(in)+1; i++ {
			_, err := r.Next()
			if err == io.EOF {
				return
			}
			if err != nil {
				var pe *ParseError
				if !errors.As(err, &pe) || pe.Line < 0 || pe.Line > lines+1 {
					t.Fatalf("error %v (line outside the %d lines, or not a *ParseError)", err, lines)
				}
				return
			}
		}
		t.Fatal("the reader did not stop")
	})
}

// FuzzChunkText checks that plain text parses without panic and that its
// chunks are numbered, within the size unless one sentence is longer, and
// keep every word.
func FuzzChunkText(f *testing.F) {
	b, err := os.ReadFile("testdata/90000011.txt")
	if err != nil {
		f.Fatal(err)
	}
	f.Add(string(b), 200)
	f.Add("RESULTS\nA. B. C.\n\nTable 1. x\na\tb\nc\td\n", 10)
	f.Fuzz(func(t *testing.T, in string, max int) {
		secs, err := ParseText(strings.NewReader(in))
		if err != nil {
			var pe *ParseError
			if !errors.As(err, &pe) {
				t.Fatalf("error %v is not a *ParseError", err)
			}
			return
		}
		max = max%2000 + 1
		if max < 1 {
			max = -max + 1
		}
		words := 0
		for _, s := range secs {
			words += len(strings.Fields(s.Text))
		}
		got := 0
		for i, c := range ChunkText(secs, max) {
			if c.N != i+1 {
				t.Fatalf("chunk %d numbered %d", i+1, c.N)
			}
			got += len(strings.Fields(c.Text))
		}
		if got < words {
			t.Fatalf("%d words in the chunks, %d in the sections", got, words)
		}
	})
}

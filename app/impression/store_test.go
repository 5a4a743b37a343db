package impression

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/progress"
)

// openiCSV is three reports in the Open-i CSV layout: one normal, one with
// findings under 10 words, one with a cardiomegaly and an effusion.
const openiCSV = `uid,findings,impression
1,"The cardiac silhouette and mediastinum size are within normal limits. There is no pulmonary edema. There is no focal consolidation. There is no pneumothorax.",Normal chest x-XXXX.
2,Borderline cardiomegaly. Clear lungs.,No acute pulmonary findings.
3,"Mild cardiomegaly. Small left pleural effusion with adjacent atelectasis. No pneumothorax. Sternotomy wires are intact and unchanged.","Mild cardiomegaly, small left effusion."
`

// openiXML is an Open-i report file (abridged).
const openiXML = `<?xml version="1.0" encoding="utf-8"?>
<eCitation>
  <meta type="rr"/>
  <uId id="CXR10"/>
  <MedlineCitation Owner="Indiana University" Status="supplied by publisher">
    <Article PubModel="Electronic">
      <Abstract>
        <AbstractText Label="COMPARISON">None.</AbstractText>
        <AbstractText Label="INDICATION">Chest pain.</AbstractText>
        <AbstractText Label="FINDINGS">The heart is normal in size. The mediastinum is unremarkable.
          The lungs are clear. No pleural effusion or pneumothorax.</AbstractText>
        <AbstractText Label="IMPRESSION">No acute disease.</AbstractText>
      </Abstract>
    </Article>
  </MedlineCitation>
</eCitation>`

// mimicText is a plain-text report with MIMIC-CXR's section headers.
const mimicText = `                                 FINAL REPORT
 EXAMINATION:  CHEST (PA AND LAT)

 INDICATION:  ___ with cough.

 COMPARISON:  None.

 FINDINGS: 
 
 There is a small right pleural effusion with adjacent atelectasis.  The
 heart size is normal.  No pneumothorax.
 
 IMPRESSION: 
 
 Small right pleural effusion.
`

func writeFile(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func openDB(t *testing.T) *sql.DB {
	t.Helper()
	db, err := datasets.OpenReadWrite(context.Background(), filepath.Join(t.TempDir(), "reports.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

func countReports(t *testing.T, db *sql.DB) int {
	t.Helper()
	ok, err := HasCorpus(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	if !ok {
		return -1
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM " + ReportsTable).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func TestImportOpenICSV(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	path := writeFile(t, t.TempDir(), "openi.csv", openiCSV)
	var seen []progress.Report
	res, err := Import(ctx, db, path, ImportOptions{Progress: func(p progress.Report) { seen = append(seen, p) }})
	if err != nil {
		t.Fatal(err)
	}
	if res.Reports != 3 || res.Eligible != 2 || res.Total != 3 || res.Files != 1 || res.Positive[Cardiomegaly] != 1 {
		t.Errorf("result %+v", res)
	}
	if len(seen) == 0 || last(seen).Done != last(seen).Total || last(seen).Unit != "bytes" {
		t.Errorf("progress %+v", seen)
	}
	var (
		uid, reason          string
		eligible, card, eff  int
		fracture, noFinding  int
		findings, impression string
	)
	row := db.QueryRow(`SELECT uid, eligible, coalesce(ineligible_reason, ''), cardiomegaly, pleural_effusion, fracture, no_finding, findings, impression
		FROM radiology_reports WHERE uid = '3'`)
	if err := row.Scan(&uid, &eligible, &reason, &card, &eff, &fracture, &noFinding, &findings, &impression); err != nil {
		t.Fatal(err)
	}
	// Blank (not mentioned) is stored as 2.
	if eligible != 1 || card != 1 || eff != 1 || fracture != 2 || noFinding != 2 || impression != "Mild cardiomegaly, small left effusion." {
		t.Errorf("report 3: eligible %d card %d eff %d fracture %d nofinding %d %q", eligible, card, eff, fracture, noFinding, impression)
	}
	if err := db.QueryRow(`SELECT eligible, ineligible_reason FROM radiology_reports WHERE uid = '2'`).Scan(&eligible, &reason); err != nil {
		t.Fatal(err)
	}
	if eligible != 0 || reason != "findings under 10 words" {
		t.Errorf("report 2: eligible %d reason %q", eligible, reason)
	}

	// Importing the same file again fails and adds nothing; Replace reloads.
	_, err = Import(ctx, db, path, ImportOptions{})
	var ie *datasets.ImportError
	if !errors.As(err, &ie) || ie.Line != 2 || !strings.Contains(err.Error(), "already in the corpus") {
		t.Errorf("duplicate import: %v", err)
	}
	if n := countReports(t, db); n != 3 {
		t.Errorf("%d reports after a failed import", n)
	}
	if res, err := Import(ctx, db, path, ImportOptions{Replace: true}); err != nil || res.Total != 3 {
		t.Errorf("replace: %+v %v", res, err)
	}

	reports, err := LoadReports(ctx, db)
	if err != nil || len(reports) != 3 || reports[2].Labels[Cardiomegaly] != Positive || reports[1].Eligible {
		t.Fatalf("LoadReports: %v %+v", err, reports)
	}
	c, err := LoadCorpus(ctx, db)
	if err != nil || c.Len() != 3 || c.Examples() != 2 {
		t.Errorf("corpus: %v len %d examples %d", err, c.Len(), c.Examples())
	}
}

func last[T any](s []T) T { return s[len(s)-1] }

func TestImportFormats(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeFile(t, dir, "CXR10.xml", openiXML)
	writeFile(t, dir, "s50414267.txt", mimicText)
	writeFile(t, dir, "notes.md", "ignored")
	db := openDB(t)
	res, err := Import(ctx, db, dir, ImportOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Files != 2 || res.Reports != 2 {
		t.Fatalf("result %+v", res)
	}
	reports, err := LoadReports(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	xmlRep, txtRep := reports[0], reports[1]
	if xmlRep.UID != "CXR10" || xmlRep.Findings != "The heart is normal in size. The mediastinum is unremarkable. The lungs are clear. No pleural effusion or pneumothorax." ||
		xmlRep.Impression != "No acute disease." || xmlRep.Labels[NoFinding] != Positive {
		t.Errorf("XML report %+v", xmlRep)
	}
	if txtRep.UID != "s50414267" || !strings.HasPrefix(txtRep.Findings, "There is a small right pleural effusion") ||
		txtRep.Impression != "Small right pleural effusion." || txtRep.Labels[PleuralEffusion] != Positive {
		t.Errorf("text report %+v", txtRep)
	}

	// The same files in a .tgz archive.
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	for name, body := range map[string]string{"ecgen-radiology/CXR10.xml": openiXML, "ecgen-radiology/1.txt": mimicText} {
		if err := tw.WriteHeader(&tar.Header{Name: name, Mode: 0o644, Size: int64(len(body)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write([]byte(body))
	}
	tw.Close()
	zw.Close()
	tgz := writeFile(t, t.TempDir(), "NLMCXR_reports.tgz", buf.String())
	db2 := openDB(t)
	if res, err := Import(ctx, db2, tgz, ImportOptions{}); err != nil || res.Reports != 2 {
		t.Errorf("tgz: %+v %v", res, err)
	}
	// In memory, without a database.
	mem, err := ReadReports(ctx, tgz)
	if err != nil || len(mem) != 2 || mem[0].ID != 1 {
		t.Errorf("ReadReports: %v %+v", err, mem)
	}
}

func TestImportErrors(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	db := openDB(t)
	good := writeFile(t, dir, "good.csv", openiCSV)
	if _, err := Import(ctx, db, good, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name, content, want string
		line                int
	}{
		{"nocols.csv", "a,b\n1,2\n", "no findings, impression or report column", 0},
		{"quote.csv", "uid,findings,impression\n7,\"ok\",fine\n8,\"unterminated,x\n", "extraneous or missing \" in quoted-field", 3},
		{"empty.csv", "", "the file is empty", 0},
		{"bad.xml", "<eCitation><AbstractText Label=\"FINDINGS\">x</Abstract", "malformed XML", 1},
		{"nohead.txt", "just some text without headers", "no FINDINGS or IMPRESSION section header", 0},
		{"report.pdf", "%PDF", "unsupported file type", 0},
	} {
		p := writeFile(t, dir, c.name, c.content)
		_, err := Import(ctx, db, p, ImportOptions{Replace: true})
		var ie *datasets.ImportError
		if !errors.As(err, &ie) || !strings.Contains(err.Error(), c.want) || ie.Line != c.line {
			t.Errorf("%s: %v (line %d), want %q at line %d", c.name, err, lineOf(err), c.want, c.line)
		}
		// Atomic: a failed Replace keeps the earlier corpus.
		if n := countReports(t, db); n != 3 {
			t.Errorf("%s: %d reports left after the failed import", c.name, n)
		}
	}
	// Cancel: nothing is added.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	var sb strings.Builder
	sb.WriteString("uid,findings,impression\n")
	for i := range 2000 {
		sb.WriteString(strconv.Itoa(i) + ",\"No effusion. The heart is normal in size and the lungs are clear.\",No acute disease.\n")
	}
	big := writeFile(t, dir, "big.csv", sb.String())
	_, err := Import(cctx, db, big, ImportOptions{})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled import: %v", err)
	}
	if n := countReports(t, db); n != 3 {
		t.Errorf("%d reports after a cancelled import", n)
	}
	// A directory without reports.
	if _, err := Import(ctx, db, t.TempDir(), ImportOptions{}); err == nil || !strings.Contains(err.Error(), "no .csv, .xml or .txt") {
		t.Errorf("empty dir: %v", err)
	}
	// No corpus.
	empty := openDB(t)
	if _, err := LoadCorpus(ctx, empty); !errors.Is(err, ErrNoCorpus) {
		t.Errorf("LoadCorpus on an empty database: %v", err)
	}
}

func lineOf(err error) int {
	var ie *datasets.ImportError
	if errors.As(err, &ie) {
		return ie.Line
	}
	return -1
}

func TestSplitSections(t *testing.T) {
	f, imp := SplitSections(mimicText)
	if f != "There is a small right pleural effusion with adjacent atelectasis. The heart size is normal. No pneumothorax." || imp != "Small right pleural effusion." {
		t.Errorf("findings %q impression %q", f, imp)
	}
	f, imp = SplitSections("FINDINGS: Clear lungs.\nCONCLUSION: Normal.\nRECOMMENDATION(S): none")
	if f != "Clear lungs." || imp != "Normal." {
		t.Errorf("conclusion: %q %q", f, imp)
	}
	if f, imp := SplitSections("no headers at all"); f != "" || imp != "" {
		t.Errorf("no headers: %q %q", f, imp)
	}
}

func TestEligibility(t *testing.T) {
	for _, c := range []struct {
		f, i   string
		ok     bool
		reason string
	}{
		{"", "Normal.", false, "no findings"},
		{"one two three four five six seven eight nine", "a b c", false, "findings under 10 words"},
		{"one two three four five six seven eight nine ten", "", false, "no impression"},
		{"one two three four five six seven eight nine ten", "a b", false, "impression under 3 words"},
		{"one two three four five six seven eight nine ten", "a b c", true, ""},
	} {
		ok, reason := Eligibility(c.f, c.i)
		if ok != c.ok || reason != c.reason {
			t.Errorf("Eligibility(%q, %q) = %v %q", c.f, c.i, ok, reason)
		}
	}
}

func FuzzSplitSections(f *testing.F) {
	f.Add(mimicText)
	f.Add("FINDINGS:\nIMPRESSION:")
	f.Fuzz(func(t *testing.T, s string) {
		SplitSections(s)
	})
}

func FuzzReadCSVReports(f *testing.F) {
	f.Add(openiCSV)
	f.Add("report\n\"FINDINGS: x IMPRESSION: y\"\n")
	f.Fuzz(func(t *testing.T, s string) {
		_ = readCSVReports(strings.NewReader(s), "f.csv", func(rawReport) error { return nil })
	})
}

func FuzzReadXMLReports(f *testing.F) {
	f.Add(openiXML)
	f.Fuzz(func(t *testing.T, s string) {
		_ = readXMLReports(strings.NewReader(s), "f.xml", func(rawReport) error { return nil })
	})
}

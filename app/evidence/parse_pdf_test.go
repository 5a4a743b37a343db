package evidence

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ledongthuc/pdf"

	"github.com/clinsight/clinsight/datasets"
)

// buildPDF assembles a PDF whose objects 1, 2, ... are objs (object 1 the
// catalog), with a correct cross-reference table.
func buildPDF(objs ...string) []byte {
	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<</Size %d/Root 1 0 R>>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, xref)
	return b.Bytes()
}

// textStream is a content stream showing s.
func textStream(s string) string {
	body := "BT /F1 12 Tf 72 712 Td (" + s + ") Tj ET"
	return fmt.Sprintf("<</Length %d>>\nstream\n%s\nendstream", len(body), body)
}

const pdfCatalog = "<</Type/Catalog/Pages 2 0 R>>"
const pdfFont = "<</Type/Font/Subtype/Type1/BaseFont/Helvetica>>"

// hostilePDFs are page trees that loop or nest without end.
func hostilePDFs() map[string]struct {
	pdf  []byte
	want string
} {
	deep := []string{pdfCatalog}
	const levels = 200
	for i := 0; i < levels; i++ {
		deep = append(deep, fmt.Sprintf("<</Type/Pages/Kids[%d 0 R]/Count 1>>", i+3))
	}
	deep = append(deep, fmt.Sprintf("<</Type/Page/Parent %d 0 R/Contents %d 0 R/Resources<</Font<</F1 %d 0 R>>>>>>", levels+1, levels+3, levels+4),
		textStream("Deep"), pdfFont)
	return map[string]struct {
		pdf  []byte
		want string
	}{
		// The 238-byte file of the issue: a /Pages node that is its own kid.
		"self kid": {buildPDF(pdfCatalog, "<</Type/Pages/Kids[2 0 R]/Count 1>>"), "the PDF's page tree refers to itself (object 2)"},
		// Two /Pages nodes that are each other's kid.
		"two-cycle": {buildPDF(pdfCatalog, "<</Type/Pages/Kids[3 0 R]/Count 1>>", "<</Type/Pages/Kids[2 0 R]/Count 1>>"),
			"the PDF's page tree refers to itself (object 2)"},
		// A page that is its own /Parent (the reader looks up inherited
		// resources through the parents).
		"own parent": {buildPDF(pdfCatalog, "<</Type/Pages/Kids[3 0 R]/Count 1>>", "<</Type/Page/Parent 3 0 R/Contents 4 0 R>>", textStream("Hello")),
			"the PDF's page tree refers to itself (object 3)"},
		// A parent chain that loops above the page: 3 → 2 → 5 → 2.
		"parent loop": {buildPDF(pdfCatalog, "<</Type/Pages/Kids[3 0 R]/Count 1/Parent 5 0 R>>", "<</Type/Page/Parent 2 0 R/Contents 4 0 R>>",
			textStream("Hello"), "<</Type/Pages/Parent 2 0 R/Kids[]/Count 0>>"), "the PDF's page tree refers to itself (object 2)"},
		// A page listed twice.
		"shared kid": {buildPDF(pdfCatalog, "<</Type/Pages/Kids[3 0 R 3 0 R]/Count 2>>", "<</Type/Page/Parent 2 0 R/Contents 4 0 R>>", textStream("Hello")),
			"the PDF's page tree refers to object 3 twice"},
		// Nesting far deeper than any real page tree.
		"deep": {buildPDF(deep...), "the PDF's page tree is nested more than"},
	}
}

func TestPDFTextRefusesHostilePageTrees(t *testing.T) {
	self := hostilePDFs()["self kid"].pdf
	if len(self) > 260 {
		t.Errorf("the self-kid PDF has %d bytes; the issue's has 238", len(self))
	}
	for name, c := range hostilePDFs() {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := PDFText(ctx, bytes.NewReader(c.pdf), int64(len(c.pdf)))
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "damaged") {
					t.Errorf("error %v, want %q", err, c.want)
				}
				if ctx.Err() != nil {
					t.Errorf("the PDF was refused only by the deadline: %v", err)
				}
			case <-ctx.Done():
				t.Fatal("PDFText did not return before the deadline")
			}
		})
	}
	// A well-formed file of the same shape reads.
	good := buildPDF(pdfCatalog, "<</Type/Pages/Kids[3 0 R]/Count 1>>",
		"<</Type/Page/Parent 2 0 R/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>", textStream("Hello world"), pdfFont)
	text, err := PDFText(context.Background(), bytes.NewReader(good), int64(len(good)))
	if err != nil || !strings.Contains(text, "Hello world") {
		t.Errorf("good PDF: %q %v", text, err)
	}
}

// countingReaderAt counts the reads the PDF reader makes.
type countingReaderAt struct {
	r *bytes.Reader
	n atomic.Int64
}

func (c *countingReaderAt) ReadAt(p []byte, off int64) (int, error) {
	c.n.Add(1)
	return c.r.ReadAt(p, off)
}

// TestPDFReaderStopsOnCancel checks the safety net under the page-tree
// check: a loop inside the PDF reader itself (here its own page lookup on
// a self-kid tree, which PDFText never calls) ends when the context is
// cancelled, because every read of the file checks the context.
func TestPDFReaderStopsOnCancel(t *testing.T) {
	b := hostilePDFs()["self kid"].pdf
	cr := &countingReaderAt{r: bytes.NewReader(b)}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rd, err := pdf.NewReader(&ctxReaderAt{ctx: ctx, r: cr}, int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan any, 1)
	go func() {
		defer func() { done <- recover() }()
		rd.Page(1)
	}()
	// Wait until the reader is seen looping, then cancel.
	deadline := time.After(30 * time.Second)
	for cr.n.Load() < 1000 {
		select {
		case p := <-done:
			t.Fatalf("the page lookup returned (%v) without looping: the test no longer exercises the loop", p)
		case <-deadline:
			t.Fatal("the reader did not start reading")
		default:
			time.Sleep(time.Millisecond)
		}
	}
	cancel()
	select {
	case p := <-done:
		if p == nil || !strings.Contains(fmt.Sprint(p), context.Canceled.Error()) {
			t.Errorf("the loop ended with %v, want the cancellation", p)
		}
	case <-deadline:
		t.Fatal("the reader kept looping after the cancellation")
	}
}

// corpusDigest is a digest of the whole literature corpus.
func corpusDigest(t *testing.T, db *sql.DB) string {
	t.Helper()
	h := sha256.New()
	for _, q := range []string{
		`SELECT id, title, abstract FROM evidence_records ORDER BY id`,
		`SELECT record_id, source, format FROM evidence_fulltexts ORDER BY record_id`,
		`SELECT record_id, n, section, text FROM evidence_chunks ORDER BY record_id, n`,
	} {
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		cols, _ := rows.Columns()
		vals := make([]any, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		n := 0
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(h, "%q\n", vals)
			n++
		}
		rows.Close()
		fmt.Fprintf(h, "%d rows\n", n)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// TestImportHostilePDF imports the hostile PDFs as full texts of a record
// in the corpus: each is refused with a clear error without waiting for the
// database's write lock (the file is read before the lock is taken), the
// corpus is unchanged, and imports into the same database, alongside and
// after, succeed.
func TestImportHostilePDF(t *testing.T) {
	db, path := openDB(t)
	importFixtures(t, db)
	dir := t.TempDir()
	good := filepath.Join(dir, "90000013.pdf")
	writeTestPDF(t, good, "RESULTS", "The response rate was 30%.")
	if _, err := Import(context.Background(), db, good, ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	before := corpusDigest(t, db)

	// Another process holds the write lock: a damaged PDF is still refused
	// at once, for what it is, not with "database is locked".
	other, err := datasets.OpenReadWrite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	lock, err := other.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lock.ExecContext(context.Background(), "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	for name, c := range hostilePDFs() {
		file := filepath.Join(dir, "90000013-"+strings.ReplaceAll(name, " ", "-")+".pdf")
		if err := os.WriteFile(file, c.pdf, 0o644); err != nil {
			t.Fatal(err)
		}
		err := importWithin(t, file, ImportOptions{Record: "pmid:90000013"}, db)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), "locked") {
			t.Errorf("%s under a held lock: %v", name, err)
		}
	}
	if _, err := lock.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	lock.Close()

	// Without the lock: each hostile import runs beside an import of
	// records into the same database; the hostile one fails, the other
	// succeeds, and the corpus is as the good import leaves it.
	for name, c := range hostilePDFs() {
		file := filepath.Join(dir, "90000013-"+strings.ReplaceAll(name, " ", "-")+".pdf")
		var wg sync.WaitGroup
		var goodErr error
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, goodErr = Import(context.Background(), db, filepath.Join("testdata", "sample.ris"), ImportOptions{})
		}()
		err := importWithin(t, file, ImportOptions{Record: "pmid:90000013"}, db)
		wg.Wait()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v", name, err)
		}
		if goodErr != nil {
			t.Errorf("%s: the import beside it failed: %v", name, goodErr)
		}
		if got := corpusDigest(t, db); got != before {
			t.Errorf("%s: the corpus changed", name)
		}
	}
	// Afterwards the lock is free: the good PDF imports again.
	if _, err := Import(context.Background(), db, good, ImportOptions{}); err != nil {
		t.Errorf("import after the hostile files: %v", err)
	}
	if got := corpusDigest(t, db); got != before {
		t.Error("the corpus changed by importing the same files again")
	}

	// A cancelled import stops and keeps nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Import(ctx, db, good, ImportOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled import: %v", err)
	}
}

// importWithin imports file with a deadline, failing the test when the
// import does not return by then (the hostile PDFs used to hang forever).
func importWithin(t *testing.T, file string, opts ImportOptions, db *sql.DB) error {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		_, err := Import(ctx, db, file, opts)
		done <- err
	}()
	select {
	case err := <-done:
		if ctx.Err() != nil {
			t.Errorf("%s was stopped only by the deadline: %v", filepath.Base(file), err)
		}
		return err
	case <-time.After(40 * time.Second):
		t.Fatalf("importing %s did not return, even after its deadline", filepath.Base(file))
		return nil
	}
}

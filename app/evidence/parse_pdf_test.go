package evidence

import (
	"bytes"
	"compress/zlib"
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

// xrefStreamPDF assembles a PDF with a cross-reference stream (Flate,
// PNG Up predictor) and an object stream: objs are the objects 1, 2, ...;
// those whose number is in packed are stored in an object stream (an
// extra object); edit changes the cross-reference entries and the two
// streams' dictionaries before they are written.
type xrefEdit struct {
	entries   func(e [][3]uint64) // type, field 2, field 3 per object
	objStm    string              // extra entries of the object stream's dictionary
	xrefDict  string              // extra entries of the cross-reference stream's dictionary
	replaceW  string              // replaces "/W [1 4 2]"
	replaceSz string              // replaces the /Size entry
}

func xrefStreamPDF(objs []string, packed map[int]bool, ed xrefEdit) []byte {
	deflate := func(b []byte) []byte {
		var z bytes.Buffer
		zw := zlib.NewWriter(&z)
		zw.Write(b)
		zw.Close()
		return z.Bytes()
	}
	stmID := len(objs) + 1
	xrefID := len(objs) + 2
	entries := make([][3]uint64, xrefID+1)
	var b bytes.Buffer
	b.WriteString("%PDF-1.5\n")
	var header, body bytes.Buffer
	k := 0
	for i, o := range objs {
		id := i + 1
		if packed[id] {
			fmt.Fprintf(&header, "%d %d ", id, body.Len())
			body.WriteString(o + "\n")
			entries[id] = [3]uint64{2, uint64(stmID), uint64(k)}
			k++
			continue
		}
		entries[id] = [3]uint64{1, uint64(b.Len()), 0}
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", id, o)
	}
	stm := deflate(append(header.Bytes(), body.Bytes()...))
	entries[stmID] = [3]uint64{1, uint64(b.Len()), 0}
	fmt.Fprintf(&b, "%d 0 obj\n<</Type/ObjStm/N %d/First %d/Filter/FlateDecode/Length %d%s>>\nstream\n", stmID, k, header.Len(), len(stm), ed.objStm)
	b.Write(stm)
	b.WriteString("\nendstream\nendobj\n")
	xrefOff := b.Len()
	entries[xrefID] = [3]uint64{1, uint64(xrefOff), 0}
	if ed.entries != nil {
		ed.entries(entries)
	}
	// Rows of 1+4+2 bytes, each preceded by the PNG "Up" filter byte.
	var rows bytes.Buffer
	prev := make([]byte, 7)
	for _, e := range entries {
		row := []byte{byte(e[0]), byte(e[1] >> 24), byte(e[1] >> 16), byte(e[1] >> 8), byte(e[1]), byte(e[2] >> 8), byte(e[2])}
		rows.WriteByte(2)
		for i := range row {
			rows.WriteByte(row[i] - prev[i])
		}
		prev = row
	}
	data := deflate(rows.Bytes())
	w, size := "/W [1 4 2]", fmt.Sprintf("/Size %d", len(entries))
	if ed.replaceW != "" {
		w = ed.replaceW
	}
	if ed.replaceSz != "" {
		size = ed.replaceSz
	}
	fmt.Fprintf(&b, "%d 0 obj\n<</Type/XRef%s%s/Root 1 0 R/Filter/FlateDecode/DecodeParms<</Predictor 12/Columns 7>>/Length %d%s>>\nstream\n",
		xrefID, size, w, len(data), ed.xrefDict)
	b.Write(data)
	fmt.Fprintf(&b, "\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xrefOff)
	return b.Bytes()
}

// goodObjects are a one-page PDF's objects: catalog, pages, page, content,
// font.
func goodObjects(content string) []string {
	return []string{pdfCatalog, "<</Type/Pages/Kids[3 0 R]/Count 1>>",
		"<</Type/Page/Parent 2 0 R/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>", content, pdfFont}
}

// TestPDFTextRefusesAllocationBombs gives the reader files whose numbers
// would make the PDF library allocate gigabytes or recurse without end
// (each ended the whole process: "fatal error: runtime: out of memory",
// or a stack overflow) or loop: each is refused as damaged. Files of the
// same shape with sound numbers read.
func TestPDFTextRefusesAllocationBombs(t *testing.T) {
	packed := map[int]bool{1: true, 2: true}
	good := xrefStreamPDF(goodObjects(textStream("Packed text")), packed, xrefEdit{})
	if text, err := PDFText(context.Background(), bytes.NewReader(good), int64(len(good))); err != nil || !strings.Contains(text, "Packed text") {
		t.Fatalf("a PDF with object and cross-reference streams: %q %v", text, err)
	}
	classic := string(buildPDF(goodObjects(textStream("Plain text"))...))
	if text, err := PDFText(context.Background(), strings.NewReader(classic), int64(len(classic))); err != nil || !strings.Contains(text, "Plain text") {
		t.Fatalf("a plain PDF: %q %v", text, err)
	}
	xrefAt := strings.Index(classic, "xref\n")
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte("\x02BT (x) Tj ET"))
	zw.Close()
	flate := z.String()
	bombs := map[string]struct {
		pdf  string
		want string
	}{
		"object number 2e9": {strings.Replace(classic, "xref\n0 6\n", "xref\n2000000000 6\n", 1), "lists objects up to 2000000006"},
		"prev loop": {strings.Replace(classic, "trailer\n<<", fmt.Sprintf("trailer\n<</Prev %d", xrefAt), 1),
			"cross-reference sections refer to each other in a loop"},
		"stream size 2e9": {string(xrefStreamPDF(goodObjects(textStream("x")), packed, xrefEdit{replaceSz: "/Size 2000000000"})),
			"gives /Size 2000000000"},
		"stream width 2e9": {string(xrefStreamPDF(goodObjects(textStream("x")), packed, xrefEdit{replaceW: "/W [1 2000000000 2]"})),
			"has a /W of"},
		"stream index 2e9": {string(xrefStreamPDF(goodObjects(textStream("x")), packed, xrefEdit{xrefDict: "/Index [2000000000 8]"})),
			"lists objects up to 2000000008"},
		"object stream in itself": {string(xrefStreamPDF(goodObjects(textStream("x")), packed, xrefEdit{entries: func(e [][3]uint64) {
			e[6] = [3]uint64{2, 6, 0}
		}})), "is stored in object 6, which is not a plain object stream"},
		// The font (object 5) said to be in the object stream, which does
		// not hold it: the library would search 2^62 entries.
		"object stream of 2^62 objects": {string(xrefStreamPDF(goodObjects(textStream("x")), packed, xrefEdit{
			objStm: "/N 4611686018427387904", // a later key wins
			entries: func(e [][3]uint64) {
				e[5] = [3]uint64{2, 6, 7}
			}})), "claims 4611686018427387904 objects"},
		"object stream predictor 2e9 columns": {string(xrefStreamPDF(goodObjects(textStream("x")), packed, xrefEdit{
			objStm: "/DecodeParms<</Predictor 12/Columns 2000000000>>"})), "a stream of 2000000000 columns"},
		"page predictor 2e9 columns": {string(buildPDF(goodObjects(
			fmt.Sprintf("<</Length %d/Filter/FlateDecode/DecodeParms<</Predictor 12/Columns 2000000000>>>>\nstream\n%s\nendstream", len(flate), flate))...)),
			"a stream of 2000000000 columns"},
	}
	for name, c := range bombs {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				_, err := PDFText(ctx, strings.NewReader(c.pdf), int64(len(c.pdf)))
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), c.want) || !errors.Is(err, errPDFDamaged) {
					t.Errorf("error %v, want %q", err, c.want)
				}
				if ctx.Err() != nil {
					t.Errorf("refused only by the deadline: %v", err)
				}
			case <-ctx.Done():
				t.Fatal("PDFText did not return before the deadline")
			}
		})
	}
}

// FuzzPDFText runs the PDF reader on mutated PDFs: it returns (an error
// or text) within its deadline, never panics and never ends the process.
func FuzzPDFText(f *testing.F) {
	f.Add(buildPDF(goodObjects(textStream("Hello"))...))
	f.Add(xrefStreamPDF(goodObjects(textStream("Packed")), map[int]bool{1: true, 2: true}, xrefEdit{}))
	for _, c := range hostilePDFs() {
		f.Add(c.pdf)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
		defer cancel()
		done := make(chan struct{})
		go func() {
			defer close(done)
			PDFText(ctx, bytes.NewReader(in), int64(len(in)))
		}()
		select {
		case <-done:
		case <-time.After(40 * time.Second):
			t.Fatal("PDFText did not return")
		}
	})
}

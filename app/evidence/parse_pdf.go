package evidence

import (
	"context"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"

	"github.com/ledongthuc/pdf"
)

// PDF is a full text as a PDF file with a text layer (a scanned PDF has
// none: its pages are images and are not read), of one record, named like
// a plain text ("12345678.pdf", "demo-12.pdf"). The text is extracted page
// by page and then read as plain text (ParseText).
const PDF Format = "pdf"

// Bounds on reading a PDF. An article has a few dozen pages in a page tree
// two or three levels deep, a few hundred kilobytes of page content and
// well under a megabyte of text; the bounds are far above that and keep a
// damaged or hostile file from holding the import for long.
const (
	// maxPDFBytes bounds the size of the file.
	maxPDFBytes = 256 << 20
	// maxPDFPages bounds the pages read.
	maxPDFPages = 500
	// maxPDFTreeDepth bounds the nesting of the page tree (and of a page's
	// chain of parents).
	maxPDFTreeDepth = 64
	// maxPDFTreeNodes bounds the entries of the page tree's Kids arrays.
	maxPDFTreeNodes = 4 * maxPDFPages
	// maxPDFPageBytes bounds the decompressed content of one page and of
	// each of its fonts' character maps.
	maxPDFPageBytes = 16 << 20
	// maxPDFTextBytes bounds the text extracted from the whole file.
	maxPDFTextBytes = maxTextBytes
	// pdfTimeBudget bounds the time spent reading one file.
	pdfTimeBudget = 2 * time.Minute
	// maxPDFNesting bounds the nesting of arrays and dictionaries in a
	// page's content (a text operator nests an array or two; the PDF
	// library builds a nested value per level, 600 MB for 4 million).
	maxPDFNesting = 1000
)

// errPDFDamaged is wrapped by the errors about a PDF whose structure is
// broken.
var errPDFDamaged = errors.New("the file is damaged: save it again from a PDF viewer, or import the article as text")

// damagedPDF is an error about a broken PDF structure.
func damagedPDF(format string, args ...any) error {
	return fmt.Errorf("%s; %w", fmt.Sprintf(format, args...), errPDFDamaged)
}

// PDFText extracts the text of the PDF in r (size bytes), pages separated
// by blank lines, in reading order as the PDF's text layer gives it.
// A PDF without a text layer, or that cannot be read, is an error.
//
// Reading is bounded (maxPDFBytes, maxPDFPages, maxPDFPageBytes,
// maxPDFTextBytes, pdfTimeBudget) and stops when ctx is done. The page tree
// is walked here, with cycle detection, before the PDF library touches a
// page: the library follows Kids and Parent links without checking for
// loops, and a file whose tree refers to itself would keep it busy for
// ever. As a second line of defence every read of the file checks ctx, so
// any other loop in the library ends with the time budget.
func PDFText(ctx context.Context, r io.ReaderAt, size int64) (text string, err error) {
	if size > maxPDFBytes {
		return "", fmt.Errorf("the PDF is larger than %d MB: is it one article?", maxPDFBytes>>20)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, pdfTimeBudget,
		fmt.Errorf("reading the PDF took longer than %v; %w", pdfTimeBudget, errPDFDamaged))
	defer cancel()
	// The PDF reader panics on malformed files (and, through ctxReaderAt,
	// when ctx is done): report those as errors.
	defer func() {
		if p := recover(); p != nil {
			if ctx.Err() != nil {
				text, err = "", ctxCause(ctx)
				return
			}
			text, err = "", fmt.Errorf("the PDF cannot be read (%v): save it again from a PDF viewer, or import the article as text", p)
		}
	}()
	ra := &ctxReaderAt{ctx: ctx, r: r}
	if err := checkXref(ra, size); err != nil {
		if ctx.Err() != nil {
			return "", ctxCause(ctx)
		}
		return "", err
	}
	rd, err := pdf.NewReader(ra, size)
	if ctx.Err() != nil {
		return "", ctxCause(ctx)
	}
	if err != nil {
		return "", fmt.Errorf("the PDF cannot be read (%v): is it encrypted or damaged?", err)
	}
	pages, err := pdfPages(ctx, rd)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, pg := range pages {
		if err := ctx.Err(); err != nil {
			return "", ctxCause(ctx)
		}
		if err := checkPageSize(ctx, pg); err != nil {
			return "", fmt.Errorf("page %d of the PDF: %w", i+1, err)
		}
		t, err := pg.GetPlainText(nil) // font names are per page
		if ctx.Err() != nil {
			return "", ctxCause(ctx)
		}
		if err != nil {
			return "", fmt.Errorf("reading page %d of the PDF: %w", i+1, err)
		}
		if b.Len()+len(t) > maxPDFTextBytes {
			return "", fmt.Errorf("the PDF's text is longer than %d MB: is this one article?", maxPDFTextBytes>>20)
		}
		b.WriteString(t)
		b.WriteString("\n\n")
	}
	if strings.TrimSpace(b.String()) == "" {
		return "", errors.New("the PDF has no text layer (a scan?): run it through OCR first, or import the article as text")
	}
	return b.String(), nil
}

// ctxCause is why ctx is done: the time budget's own message, or the
// caller's cancellation.
func ctxCause(ctx context.Context) error {
	if c := context.Cause(ctx); c != nil {
		return c
	}
	return ctx.Err()
}

// ctxReaderAt fails every read once ctx is done. The PDF library reads the
// file each time it resolves an object, so a loop over the file's objects
// ends (the library panics on the read error, and PDFText recovers).
type ctxReaderAt struct {
	ctx context.Context
	r   io.ReaderAt
}

func (c *ctxReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.ReadAt(p, off)
}

// pdfPages walks the page tree from the catalog's /Pages, in order, and
// returns its pages. A tree that refers to one of its own nodes again
// (a /Pages node that is its own kid, two nodes that are each other's
// kids, a page that is its own /Parent), that is nested too deep, or that
// is too large is refused as damaged.
func pdfPages(ctx context.Context, rd *pdf.Reader) ([]pdf.Page, error) {
	catalog := rd.Trailer().Key("Root")
	root := catalog.Key("Pages")
	if root.Key("Type").Name() != "Pages" {
		return nil, nil // no page tree: no text (as the PDF reader reads it)
	}
	w := &pageWalk{ctx: ctx, inTree: map[objID]bool{}, parentsOK: map[objID]bool{}}
	id, ok := dictRef(catalog, "Pages")
	if err := w.node(root, id, ok, 1); err != nil {
		return nil, err
	}
	return w.pages, nil
}

// objID is the number of an indirect object of a PDF (its generation is
// left out: a cross-reference table maps a number to one object).
type objID uint32

// pageWalk is the state of pdfPages.
type pageWalk struct {
	ctx   context.Context
	pages []pdf.Page
	// inTree are the objects of the page tree met so far; path those from
	// the root to the node being read.
	inTree map[objID]bool
	path   []objID
	nodes  int
	// parentsOK are the nodes whose chain of parents is known to end.
	parentsOK map[objID]bool
}

// node reads the /Pages node v (object id when known) at depth.
func (w *pageWalk) node(v pdf.Value, id objID, known bool, depth int) error {
	if depth > maxPDFTreeDepth {
		return damagedPDF("the PDF's page tree is nested more than %d levels deep", maxPDFTreeDepth)
	}
	if known {
		w.inTree[id] = true
		w.path = append(w.path, id)
		defer func() { w.path = w.path[:len(w.path)-1] }()
	}
	kids := v.Key("Kids")
	for i := range kids.Len() {
		if err := w.ctx.Err(); err != nil {
			return ctxCause(w.ctx)
		}
		if w.nodes++; w.nodes > maxPDFTreeNodes {
			return fmt.Errorf("the PDF's page tree has more than %d entries, more than an article of %d pages can have", maxPDFTreeNodes, maxPDFPages)
		}
		kidID, kidKnown := arrayRef(kids, i)
		if kidKnown && w.inTree[kidID] {
			for _, a := range w.path {
				if a == kidID {
					return damagedPDF("the PDF's page tree refers to itself (object %d)", kidID)
				}
			}
			return damagedPDF("the PDF's page tree refers to object %d twice", kidID)
		}
		kid := kids.Index(i)
		switch kid.Key("Type").Name() {
		case "Pages":
			if err := w.node(kid, kidID, kidKnown, depth+1); err != nil {
				return err
			}
		case "Page":
			if kidKnown {
				w.inTree[kidID] = true
			}
			if err := w.parents(kid, kidID, kidKnown); err != nil {
				return err
			}
			if len(w.pages) == maxPDFPages {
				return fmt.Errorf("the PDF has more than %d pages, more than an article can have", maxPDFPages)
			}
			w.pages = append(w.pages, pdf.Page{V: kid})
		}
		// Other kinds of kid are not pages (the PDF reader skips them too).
	}
	return nil
}

// parents checks that the chain of /Parent links from page (object id when
// known) ends: the PDF reader follows it to find a page's inherited
// resources.
func (w *pageWalk) parents(page pdf.Value, id objID, known bool) error {
	seen := map[objID]bool{}
	if known {
		seen[id] = true
	}
	var chain []objID
	v := page
	for depth := 0; ; depth++ {
		pid, pKnown := dictRef(v, "Parent")
		if pKnown && w.parentsOK[pid] {
			break
		}
		p := v.Key("Parent")
		if p.IsNull() {
			break
		}
		if depth >= maxPDFTreeDepth {
			return damagedPDF("the PDF's page tree is nested more than %d levels deep", maxPDFTreeDepth)
		}
		if pKnown {
			if seen[pid] {
				return damagedPDF("the PDF's page tree refers to itself (object %d)", pid)
			}
			seen[pid] = true
			chain = append(chain, pid)
		}
		v = p
	}
	for _, c := range chain {
		w.parentsOK[c] = true
	}
	return nil
}

// checkPageSize bounds what the PDF reader decompresses for a page: its
// content streams and its fonts' character maps (ToUnicode). A stream that
// inflates beyond maxPDFPageBytes (a "zip bomb") is refused.
func checkPageSize(ctx context.Context, pg pdf.Page) error {
	streams := []pdf.Value{}
	contents := pg.V.Key("Contents")
	if contents.Kind() == pdf.Array {
		if contents.Len() > maxPDFTreeNodes {
			return damagedPDF("the page has %d content streams", contents.Len())
		}
		for i := range contents.Len() {
			streams = append(streams, contents.Index(i))
		}
	} else {
		streams = append(streams, contents)
	}
	fonts := pg.Resources().Key("Font")
	names := fonts.Keys()
	if len(names) > maxPDFTreeNodes {
		return damagedPDF("the page has %d fonts", len(names))
	}
	for _, name := range names {
		if cmap := fonts.Key(name).Key("ToUnicode"); cmap.Kind() == pdf.Stream {
			streams = append(streams, cmap)
		}
	}
	var total int64
	for _, s := range streams {
		if s.Kind() != pdf.Stream {
			continue
		}
		if err := streamColumns(s); err != nil {
			return err
		}
		n, err := inflatedSize(ctx, s, maxPDFPageBytes-total)
		if err != nil {
			return err
		}
		if total += n; total > maxPDFPageBytes {
			return fmt.Errorf("the page's content is larger than %d MB once decompressed; %w", maxPDFPageBytes>>20, errPDFDamaged)
		}
	}
	return nil
}

// streamColumns refuses a stream whose PNG predictor has more columns
// than maxPDFColumns (the PDF library allocates a row of that size).
func streamColumns(s pdf.Value) error {
	parms := s.Key("DecodeParms")
	each := []pdf.Value{parms}
	if parms.Kind() == pdf.Array {
		each = each[:0]
		for i := range min(parms.Len(), 16) {
			each = append(each, parms.Index(i))
		}
	}
	for _, p := range each {
		if c := p.Key("Columns"); c.Kind() == pdf.Integer && (c.Int64() < 0 || c.Int64() > maxPDFColumns) {
			return damagedPDF("the PDF has a stream of %d columns", c.Int64())
		}
	}
	return nil
}

// inflatedSize reads stream s decompressed, up to limit+1 bytes, and
// returns how many it read.
func inflatedSize(ctx context.Context, s pdf.Value, limit int64) (int64, error) {
	rc := s.Reader()
	defer rc.Close()
	buf := make([]byte, 32<<10)
	var n int64
	var nest pdfNesting
	for n <= limit {
		if err := ctx.Err(); err != nil {
			return n, ctxCause(ctx)
		}
		k, err := rc.Read(buf)
		n += int64(k)
		if !nest.scan(buf[:k]) {
			return n, damagedPDF("the page's content is nested more than %d levels deep", maxPDFNesting)
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return n, fmt.Errorf("the PDF cannot be read (%v): save it again from a PDF viewer, or import the article as text", err)
		}
	}
	return n, nil
}

// pdfNesting follows the nesting of arrays and dictionaries through a
// content stream read in pieces, skipping strings and comments.
type pdfNesting struct {
	depth   int
	str     int  // nesting of parentheses inside a literal string
	esc     bool // after a backslash in a literal string
	hex     bool // inside a hexadecimal string
	lt, gt  bool // after a '<' or a '>'
	comment bool
}

// scan reads p and reports whether the nesting stayed within
// maxPDFNesting.
func (c *pdfNesting) scan(p []byte) bool {
	for _, b := range p {
		switch {
		case c.comment:
			c.comment = b != '\n' && b != '\r'
			continue
		case c.str > 0:
			switch {
			case c.esc:
				c.esc = false
			case b == '\\':
				c.esc = true
			case b == '(':
				c.str++
			case b == ')':
				c.str--
			}
			continue
		case c.hex:
			c.hex = b != '>'
			continue
		case c.lt:
			c.lt = false
			if b != '<' {
				c.hex = b != '>'
				continue
			}
			c.depth++
			if c.depth > maxPDFNesting {
				return false
			}
			continue
		case c.gt:
			c.gt = false
			if b == '>' {
				c.depth = max(c.depth-1, 0)
				continue
			}
		}
		switch b {
		case '%':
			c.comment = true
		case '(':
			c.str = 1
		case '[':
			c.depth++
		case ']':
			c.depth = max(c.depth-1, 0)
		case '<':
			c.lt = true
		case '>':
			c.gt = true
		}
		if c.depth > maxPDFNesting {
			return false
		}
	}
	return c.depth <= maxPDFNesting
}

// The PDF library does not expose which object a value came from, but its
// Value keeps the raw array elements and dictionary entries, with
// indirect references as objptr{id, gen}. arrayRef and dictRef read them
// by reflection (read-only), to detect cycles by object number; when the
// library's internals are not as expected they report ok = false and the
// walk relies on its depth and size bounds alone.

// arrayRef returns the object number of element i of the array v when it
// is an indirect reference.
func arrayRef(v pdf.Value, i int) (objID, bool) {
	data, ok := valueData(v)
	if !ok || data.Kind() != reflect.Slice || i < 0 || i >= data.Len() {
		return 0, false
	}
	return refID(data.Index(i))
}

// dictRef returns the object number of the entry key of the dictionary v
// when it is an indirect reference.
func dictRef(v pdf.Value, key string) (objID, bool) {
	data, ok := valueData(v)
	if !ok || data.Kind() != reflect.Map || data.Type().Key().Kind() != reflect.String {
		return 0, false
	}
	k := reflect.New(data.Type().Key()).Elem()
	k.SetString(key)
	return refID(data.MapIndex(k))
}

// valueData returns the raw array or dictionary inside v.
func valueData(v pdf.Value) (reflect.Value, bool) {
	f := reflect.ValueOf(v).FieldByName("data")
	if !f.IsValid() || f.Kind() != reflect.Interface || f.IsNil() {
		return reflect.Value{}, false
	}
	return f.Elem(), true
}

// refID returns the object number of x when it is an indirect reference.
func refID(x reflect.Value) (objID, bool) {
	if !x.IsValid() {
		return 0, false
	}
	if x.Kind() == reflect.Interface {
		if x.IsNil() {
			return 0, false
		}
		x = x.Elem()
	}
	if x.Kind() != reflect.Struct || x.Type().Name() != "objptr" {
		return 0, false
	}
	id := x.FieldByName("id")
	if !id.IsValid() || id.Kind() != reflect.Uint32 {
		return 0, false
	}
	return objID(id.Uint()), true
}

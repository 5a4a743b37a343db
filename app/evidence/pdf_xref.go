package evidence

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"errors"
	"io"
	"strconv"
)

// Bounds on a PDF's cross-reference data. The PDF library sizes its tables
// from the numbers the file states (an object number, /Size, /W, the
// /Columns of a predictor) without checking them, so a file of a few
// hundred bytes could make it ask for gigabytes, which ends the process;
// and it follows the objects' links without detecting loops (an object
// stream stored in itself recurses until the stack overflows, which ends
// the process too). checkXref reads those numbers first.
const (
	// maxPDFObjects bounds the object numbers (an article has a few
	// thousand objects).
	maxPDFObjects = 1 << 20
	// maxPDFXrefSections bounds the chain of cross-reference sections
	// (one per incremental update of the file).
	maxPDFXrefSections = 256
	// maxPDFColumns bounds the /Columns of a PNG predictor (the width of
	// an image in pixels, or a few bytes for cross-reference streams).
	maxPDFColumns = 1 << 16
	// maxPDFXrefWidth bounds the bytes of one cross-reference stream
	// entry (the sum of /W: a few bytes).
	maxPDFXrefWidth = 32
)

// xrefEntry is an object's entry in the cross-reference data: kind 1 an
// object at an offset of the file, 2 an object inside the object stream
// container.
type xrefEntry struct {
	kind      int
	offset    int64
	container uint32
}

// checkXref reads the cross-reference sections of the PDF in r (size
// bytes) as the PDF library will (from the last startxref, following
// /Prev), and refuses a file whose numbers or links would make the library
// allocate without bound or loop: an object number, /Size or /Index
// beyond maxPDFObjects, a /W wider than maxPDFXrefWidth, /Columns beyond
// maxPDFColumns, sections that refer to each other in a loop, an object
// stored in an object stream that is not a plain object, an object stream
// claiming more objects than maxPDFObjects. What it cannot make out is left
// to the library, which reports it as an error.
func checkXref(r io.ReaderAt, size int64) error {
	const endChunk = 100 // as the PDF library reads the end of the file
	if size < endChunk {
		return nil
	}
	tail := make([]byte, endChunk)
	if _, err := r.ReadAt(tail, size-endChunk); err != nil && err != io.EOF {
		return nil
	}
	i := bytes.LastIndex(tail, []byte("startxref"))
	if i < 0 {
		return nil
	}
	lx := newPDFLexer(bytes.NewReader(tail[i+len("startxref"):]), 0)
	off, ok := lx.value(0).(int64)
	if !ok {
		return nil
	}
	entries := map[uint32]xrefEntry{}
	seen := map[int64]bool{}
	for sections := 0; ; sections++ {
		if sections == maxPDFXrefSections {
			return damagedPDF("the PDF has more than %d cross-reference sections", maxPDFXrefSections)
		}
		if off <= 0 || off >= size {
			return nil
		}
		if seen[off] {
			return damagedPDF("the PDF's cross-reference sections refer to each other in a loop (offset %d)", off)
		}
		seen[off] = true
		lx := newPDFLexer(io.NewSectionReader(r, off, size-off), off)
		var trailer map[string]any
		var err error
		if tok := lx.value(0); tok == pdfKeyword("xref") {
			trailer, err = xrefTable(lx, entries)
		} else if _, ok := tok.(int64); ok {
			trailer, err = xrefStream(r, size, lx, entries)
		}
		if lx.deep {
			return damagedPDF("the PDF's objects are nested more than %d levels deep", maxXMLDepth)
		}
		if err != nil || trailer == nil {
			return err
		}
		prev, ok := trailer["Prev"].(int64)
		if !ok {
			break
		}
		off = prev
	}
	return checkObjectStreams(r, size, entries)
}

// xrefTable reads a cross-reference table (after its "xref") into entries
// (an earlier entry wins, as in the PDF library) and returns its trailer;
// nil when the table is not as the PDF library reads it.
func xrefTable(lx *pdfLexer, entries map[uint32]xrefEntry) (map[string]any, error) {
	for {
		tok := lx.value(0)
		if tok == pdfKeyword("trailer") {
			break
		}
		start, ok1 := tok.(int64)
		n, ok2 := lx.value(0).(int64)
		if !ok1 || !ok2 {
			return nil, nil
		}
		if start < 0 || n < 0 || start+n > maxPDFObjects {
			return nil, damagedPDF("the PDF's cross-reference table lists objects up to %d, more than the %d a PDF can have here", start+n, maxPDFObjects)
		}
		for i := range n {
			off, ok1 := lx.value(0).(int64)
			_, ok2 := lx.value(0).(int64)
			kind, ok3 := lx.value(0).(pdfKeyword)
			if !ok1 || !ok2 || !ok3 {
				return nil, nil
			}
			x := uint32(start + i)
			if _, set := entries[x]; !set && kind == "n" && off != 0 {
				entries[x] = xrefEntry{kind: 1, offset: off}
			}
		}
	}
	trailer, _ := lx.value(0).(map[string]any)
	if size, ok := trailer["Size"].(int64); ok && (size < 0 || size > maxPDFObjects) {
		return nil, damagedPDF("the PDF's trailer gives /Size %d, more than the %d objects a PDF can have here", size, maxPDFObjects)
	}
	return trailer, nil
}

// xrefStream reads a cross-reference stream (its object number read) into
// entries and returns its dictionary; nil when it is not as the PDF library
// reads it.
func xrefStream(r io.ReaderAt, size int64, lx *pdfLexer, entries map[uint32]xrefEntry) (map[string]any, error) {
	if _, ok := lx.value(0).(int64); !ok {
		return nil, nil
	}
	if lx.value(0) != pdfKeyword("obj") {
		return nil, nil
	}
	dict, ok := lx.value(0).(map[string]any)
	if !ok || dict["Type"] != pdfName("XRef") {
		return nil, nil
	}
	sz, ok := dict["Size"].(int64)
	if !ok {
		return nil, nil
	}
	if sz < 0 || sz > maxPDFObjects {
		return nil, damagedPDF("the PDF's cross-reference stream gives /Size %d, more than the %d objects a PDF can have here", sz, maxPDFObjects)
	}
	wa, _ := dict["W"].([]any)
	var w []int
	total := 0
	for _, x := range wa {
		n, ok := x.(int64)
		if !ok || n < 0 || n > maxPDFXrefWidth {
			return nil, damagedPDF("the PDF's cross-reference stream has a /W of %v", wa)
		}
		w = append(w, int(n))
		total += int(n)
	}
	if len(w) < 3 || total > maxPDFXrefWidth {
		if len(w) < 3 {
			return nil, nil
		}
		return nil, damagedPDF("the PDF's cross-reference stream has a /W of %v", wa)
	}
	index := []any{int64(0), sz}
	if ia, ok := dict["Index"].([]any); ok {
		index = ia
	}
	if len(index)%2 != 0 {
		return nil, nil
	}
	for k := 0; k < len(index); k += 2 {
		start, ok1 := index[k].(int64)
		n, ok2 := index[k+1].(int64)
		if ok1 && ok2 && (start < 0 || n < 0 || start+n > maxPDFObjects) {
			return nil, damagedPDF("the PDF's cross-reference stream lists objects up to %d, more than the %d a PDF can have here", start+n, maxPDFObjects)
		}
	}
	if err := checkColumns(dict["DecodeParms"]); err != nil {
		return nil, err
	}
	if lx.value(0) != pdfKeyword("stream") {
		return nil, nil
	}
	data, err := streamData(r, size, lx, dict)
	if err != nil || data == nil {
		return nil, err
	}
	entry := make([]byte, total)
	for k := 0; k < len(index); k += 2 {
		start, ok1 := index[k].(int64)
		n, ok2 := index[k+1].(int64)
		if !ok1 || !ok2 {
			return nil, nil
		}
		for i := range n {
			if _, err := io.ReadFull(data, entry); err != nil {
				return dict, nil // the PDF library stops with an error here
			}
			kind := 1
			if w[0] > 0 {
				kind = int(beInt(entry[:w[0]]))
			}
			f2 := beInt(entry[w[0] : w[0]+w[1]])
			x := uint32(start + i)
			if _, set := entries[x]; set {
				continue
			}
			switch kind {
			case 0:
				entries[x] = xrefEntry{}
			case 1:
				entries[x] = xrefEntry{kind: 1, offset: int64(f2)}
			case 2:
				entries[x] = xrefEntry{kind: 2, container: uint32(f2)}
			}
		}
	}
	return dict, nil
}

// checkObjectStreams checks the object streams that entries refer to:
// each is a plain object (not itself inside an object stream) whose /N is
// within bounds, whose predictor is within bounds, and whose /Extends
// chain ends.
func checkObjectStreams(r io.ReaderAt, size int64, entries map[uint32]xrefEntry) error {
	checked := map[uint32]bool{}
	for x, e := range entries {
		if e.kind != 2 {
			continue
		}
		chain := map[uint32]bool{}
		for c := e.container; !checked[c]; {
			if chain[c] || len(chain) == maxPDFTreeDepth {
				return damagedPDF("the PDF's object streams extend each other in a loop (object %d)", c)
			}
			chain[c] = true
			ce := entries[c]
			if ce.kind != 1 {
				return damagedPDF("object %d of the PDF is stored in object %d, which is not a plain object stream", x, c)
			}
			dict := objectDict(r, size, ce.offset)
			if dict == nil {
				break // the PDF library reports it
			}
			switch n := dict["N"].(type) {
			case int64:
				if n < 0 || n > maxPDFObjects {
					return damagedPDF("object stream %d of the PDF claims %d objects", c, n)
				}
			case pdfRef:
				return damagedPDF("object stream %d of the PDF gives its number of objects indirectly", c)
			}
			if err := checkColumns(dict["DecodeParms"]); err != nil {
				return err
			}
			checked[c] = true
			ext, ok := dict["Extends"].(pdfRef)
			if !ok {
				break
			}
			c = ext.id
		}
	}
	return nil
}

// objectDict reads the dictionary of the object at offset, nil when there
// is none.
func objectDict(r io.ReaderAt, size, offset int64) map[string]any {
	if offset <= 0 || offset >= size {
		return nil
	}
	lx := newPDFLexer(io.NewSectionReader(r, offset, size-offset), offset)
	if _, ok := lx.value(0).(int64); !ok {
		return nil
	}
	if _, ok := lx.value(0).(int64); !ok {
		return nil
	}
	if lx.value(0) != pdfKeyword("obj") {
		return nil
	}
	d, _ := lx.value(0).(map[string]any)
	return d
}

// checkColumns refuses decoding parameters (a dictionary, or an array of
// them) whose PNG predictor /Columns the PDF library would allocate
// without bound, or that it would look up elsewhere in the file.
func checkColumns(parms any) error {
	switch p := parms.(type) {
	case []any:
		for _, x := range p {
			if err := checkColumns(x); err != nil {
				return err
			}
		}
	case pdfRef:
		return damagedPDF("the PDF gives a stream's decoding parameters indirectly (object %d)", p.id)
	case map[string]any:
		switch c := p["Columns"].(type) {
		case int64:
			if c < 0 || c > maxPDFColumns {
				return damagedPDF("the PDF has a stream of %d columns", c)
			}
		case pdfRef:
			return damagedPDF("the PDF gives a stream's columns indirectly (object %d)", c.id)
		}
	}
	return nil
}

// streamData returns the decoded data of the stream whose dictionary is
// dict and whose keyword "stream" lx just read; nil when the PDF library
// would not read it either.
func streamData(r io.ReaderAt, size int64, lx *pdfLexer, dict map[string]any) (io.Reader, error) {
	start, ok := lx.streamStart()
	if !ok {
		return nil, nil
	}
	length, _ := dict["Length"].(int64)
	if length <= 0 || start+length > size {
		return nil, nil
	}
	var data io.Reader = io.NewSectionReader(r, start, length)
	filter := dict["Filter"]
	if fs, ok := filter.([]any); ok && len(fs) == 1 {
		filter = fs[0]
	}
	switch filter {
	case nil:
		return data, nil
	case pdfName("FlateDecode"):
	default:
		return nil, damagedPDF("the PDF's cross-reference stream uses the compression %v, which Clinsight does not read", filter)
	}
	zr, err := zlib.NewReader(data)
	if err != nil {
		return nil, nil
	}
	parms, _ := dict["DecodeParms"].(map[string]any)
	pred, _ := parms["Predictor"].(int64)
	if pred == 0 || pred == 1 {
		return zr, nil
	}
	if pred != 12 {
		return nil, nil // the PDF library refuses other predictors
	}
	cols, _ := parms["Columns"].(int64)
	return &pngUp{r: zr, row: make([]byte, cols+1), prev: make([]byte, cols+1)}, nil
}

// pngUp undoes the PNG "Up" predictor (12), as the PDF library does.
type pngUp struct {
	r         io.Reader
	row, prev []byte
	pending   []byte
}

func (p *pngUp) Read(b []byte) (int, error) {
	for len(p.pending) == 0 {
		if _, err := io.ReadFull(p.r, p.row); err != nil {
			return 0, err
		}
		if p.row[0] != 2 {
			return 0, errors.New("unsupported PNG predictor")
		}
		for i := 1; i < len(p.row); i++ {
			p.row[i] += p.prev[i]
		}
		p.prev, p.row = p.row, p.prev
		p.pending = append(p.pending[:0], p.prev[1:]...)
	}
	n := copy(b, p.pending)
	p.pending = p.pending[n:]
	return n, nil
}

// beInt reads a big-endian unsigned number.
func beInt(b []byte) uint64 {
	var x uint64
	for _, c := range b {
		x = x<<8 | uint64(c)
	}
	return x
}

// The values of pdfLexer: int64, float64, pdfName, pdfKeyword, pdfString,
// pdfRef, []any and map[string]any.
type (
	pdfName    string
	pdfKeyword string
	pdfString  struct{}
	pdfRef     struct{ id uint32 }
)

// pdfLexer reads PDF objects, bounded: tokens of at most 64 KB, nesting of
// at most maxXMLDepth, and a few megabytes in all.
type pdfLexer struct {
	r      *bufio.Reader
	pos    int64 // offset of the next byte in the file
	unread []any
	budget int
	// deep is set once a value nested deeper than maxXMLDepth is met: the
	// lexer then gives no more tokens, so that every open array and
	// dictionary ends (checkXref refuses the file).
	deep bool
}

func newPDFLexer(r io.Reader, pos int64) *pdfLexer {
	return &pdfLexer{r: bufio.NewReaderSize(r, 4096), pos: pos, budget: 64 << 20}
}

func (lx *pdfLexer) byte() (byte, bool) {
	if lx.budget--; lx.budget < 0 {
		return 0, false
	}
	b, err := lx.r.ReadByte()
	if err != nil {
		return 0, false
	}
	lx.pos++
	return b, true
}

func (lx *pdfLexer) back() {
	if lx.r.UnreadByte() == nil {
		lx.pos--
		lx.budget++
	}
}

func pdfSpace(b byte) bool {
	return b == 0 || b == '\t' || b == '\n' || b == '\f' || b == '\r' || b == ' '
}

func pdfDelim(b byte) bool {
	return bytes.IndexByte([]byte("()<>[]{}/%"), b) >= 0
}

// token returns the next token: a number, name, keyword ("[", "<<", "R",
// "obj" ...), or string; nil at the end.
func (lx *pdfLexer) token() any {
	if lx.deep {
		return nil
	}
	if n := len(lx.unread); n > 0 {
		t := lx.unread[n-1]
		lx.unread = lx.unread[:n-1]
		return t
	}
	b, ok := lx.byte()
	for ok && (pdfSpace(b) || b == '%') {
		if b == '%' {
			for ok && b != '\n' && b != '\r' {
				b, ok = lx.byte()
			}
		}
		b, ok = lx.byte()
	}
	if !ok {
		return nil
	}
	switch b {
	case '[', ']', '{', '}':
		return pdfKeyword(b)
	case '<':
		if c, ok := lx.byte(); ok && c == '<' {
			return pdfKeyword("<<")
		}
		for ok && b != '>' {
			b, ok = lx.byte()
		}
		return pdfString{}
	case '>':
		if c, ok := lx.byte(); ok && c == '>' {
			return pdfKeyword(">>")
		}
		return nil
	case '(':
		depth := 1
		for depth > 0 {
			c, ok := lx.byte()
			switch {
			case !ok:
				return nil
			case c == '\\':
				lx.byte()
			case c == '(':
				depth++
			case c == ')':
				depth--
			}
		}
		return pdfString{}
	case '/':
		return pdfName(lx.word())
	}
	lx.back()
	w := lx.word()
	if n, err := strconv.ParseInt(w, 10, 64); err == nil {
		return n
	}
	if f, err := strconv.ParseFloat(w, 64); err == nil {
		return f
	}
	if w == "" {
		lx.byte() // a stray delimiter
		return pdfKeyword("?")
	}
	return pdfKeyword(w)
}

// word reads regular characters (at most 64 KB).
func (lx *pdfLexer) word() string {
	var b []byte
	for len(b) < 64<<10 {
		c, ok := lx.byte()
		if !ok {
			break
		}
		if pdfSpace(c) || pdfDelim(c) {
			lx.back()
			break
		}
		b = append(b, c)
	}
	return string(b)
}

// value reads an object: a dictionary, array, reference (N G R) or
// token; nil at the end or when nested deeper than maxXMLDepth.
func (lx *pdfLexer) value(depth int) any {
	if depth > maxXMLDepth {
		lx.deep = true
		return nil
	}
	tok := lx.token()
	switch tok {
	case pdfKeyword("<<"):
		d := map[string]any{}
		for {
			k := lx.token()
			if k == pdfKeyword(">>") || k == nil {
				return d
			}
			name, ok := k.(pdfName)
			if !ok {
				return nil
			}
			d[string(name)] = lx.value(depth + 1)
		}
	case pdfKeyword("["):
		var a []any
		for {
			t := lx.token()
			if t == pdfKeyword("]") || t == nil {
				return a
			}
			lx.unread = append(lx.unread, t)
			a = append(a, lx.value(depth+1))
		}
	}
	if id, ok := tok.(int64); ok && id >= 0 && id <= 1<<32-1 {
		t2 := lx.token()
		if gen, ok := t2.(int64); ok && gen >= 0 && gen <= 65535 {
			t3 := lx.token()
			if t3 == pdfKeyword("R") {
				return pdfRef{uint32(id)}
			}
			lx.unread = append(lx.unread, t3)
		}
		lx.unread = append(lx.unread, t2)
	}
	return tok
}

// streamStart returns the file offset of a stream's data, after the
// keyword "stream" just read and its end of line.
func (lx *pdfLexer) streamStart() (int64, bool) {
	if len(lx.unread) > 0 {
		return 0, false
	}
	switch b, _ := lx.byte(); b {
	case '\r':
		if c, ok := lx.byte(); ok && c != '\n' {
			lx.back()
		}
	case '\n':
	default:
		return 0, false
	}
	return lx.pos, true
}

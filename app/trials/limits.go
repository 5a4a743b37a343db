package trials

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/clinsight/clinsight/internal/textclip"
)

// Bounds on one trial record. The registry caps its texts (a brief summary
// at 5,000 characters, a detailed description at 32,000, the eligibility
// criteria at 20,000), so real records are far below them; the bounds keep
// one damaged or hostile record from costing minutes and gigabytes.
const (
	// maxFieldBytes bounds each text of a record (a summary, a
	// description, the criteria text); longer ones are cut, with a Cut in
	// the import result.
	maxFieldBytes = 128 << 10
	// maxTitleBytes bounds a title, and maxItemBytes each item of a list
	// (a condition, an intervention, a criterion).
	maxTitleBytes = 2 << 10
	maxItemBytes  = 8 << 10
	// maxListItems bounds the items of each list (conditions, criteria,
	// ...).
	maxListItems = 1000
	// maxRecordBytes bounds a whole record once its texts are cut: a
	// record larger than this by its structure is refused.
	maxRecordBytes = 16 << 20
	// maxCutNotes bounds the Cut notes an import result keeps.
	maxCutNotes = 100
)

// Bounds on an archive member: it may always unpack to memberMin bytes,
// and to more only up to memberRatio times its compressed size (text
// compresses about ten times; a "zip bomb" thousands of times), never
// beyond memberMax.
const (
	memberMin   = 256 << 20
	memberRatio = 100
	memberMax   = 16 << 30
)

// cutMark ends a text cut to its bound.
const cutMark = textclip.Mark

// readLimits are the bounds of reading (zero fields take the defaults
// above; tests lower them).
type readLimits struct {
	field     int
	record    int
	memberMin int64
}

func (l *readLimits) fieldBytes() int {
	if l == nil || l.field == 0 {
		return maxFieldBytes
	}
	return l.field
}

func (l *readLimits) recordBytes() int {
	if l == nil || l.record == 0 {
		return maxRecordBytes
	}
	return l.record
}

// memberBytes is what an archive member of compressed bytes may unpack to.
func (l *readLimits) memberBytes(compressed uint64) uint64 {
	lo := uint64(memberMin)
	if l != nil && l.memberMin != 0 {
		lo = uint64(l.memberMin)
	}
	return min(max(lo, memberRatio*compressed), memberMax)
}

// Cut is a field of a trial record that was cut to its bound at import.
type Cut struct {
	// File is the file (and "!member" of an archive) of the record.
	File string `json:"file"`
	// Line is the record's line (JSONL), position (JSON array) or line
	// where it starts (XML); 0 when unknown.
	Line int `json:"line,omitempty"`
	// ID is the trial's identifier.
	ID string `json:"id"`
	// Field is the field cut: its name in the file (JSON) or in Clinsight
	// ("description", "inclusion").
	Field string `json:"field"`
	// Bytes is the field's size in the file; Kept what was stored.
	Bytes int64 `json:"bytes"`
	Kept  int64 `json:"kept"`
}

// String reads `huge.zip!trials.jsonl line 1: field "text" of NCT0123 cut
// from 20.0 MB to 128 KB`.
func (c Cut) String() string {
	return textclip.Describe(c.File, c.Line, c.Field, c.ID, c.Bytes, c.Kept)
}

// errRecordTooLarge is matched (errors.Is) by the error of a record
// larger than the record bound.
var errRecordTooLarge = errors.New("the record is too large")

// recordSizeError is the error of a record larger than limit bytes.
type recordSizeError struct{ limit int }

func (e *recordSizeError) Error() string {
	return fmt.Sprintf("the record is larger than %s, far more than a trial record holds: is this a file of trial records?", textclip.Size(int64(e.limit)))
}

func (e *recordSizeError) Is(target error) bool { return target == errRecordTooLarge }

// recordTooLarge says that a record is larger than limit bytes.
func recordTooLarge(limit int) error { return &recordSizeError{limit} }

// jsonClip streams JSON text, cutting every string longer than max bytes
// (as written, escapes included) to about max bytes followed by cutMark,
// without holding more of the string than it emits: a record with a
// 200 MB text is read in the memory of its first max bytes. It cuts
// between characters and escapes, so its output is JSON whenever its input
// is. The name of the field each cut string belongs to (the last key
// before it) and its size are kept in cuts.
type jsonClip struct {
	max int
	// The state inside a string: esc counts the bytes still to come of an
	// escape (\n: 1, \u00e9: 5); n and kept are the bytes of the string
	// read and emitted; cutting is set once the string is being cut.
	inStr   bool
	esc     int
	n, kept int64
	cutting bool
	// The short strings read, to tell the key a value belongs to: short
	// is the string being read, last the one before (nil when long).
	short, last []byte
	awaitColon  bool
	field       string
	// outHint is the size the output is not expected to exceed (the
	// record bound): the buffer does not grow beyond it by doubling.
	outHint int
	// out is the output; emitted counts all output so far (out may have
	// been taken); cuts are the strings cut, with the output offset where
	// each starts.
	out     []byte
	emitted int64
	cuts    []clipCut
}

// clipCut is a string cut by jsonClip.
type clipCut struct {
	field       string
	bytes, kept int64
	at          int64 // output offset of the string's opening quote
}

// maxKeyBytes bounds the strings kept as candidate keys.
const maxKeyBytes = 64

// reset forgets the state of an unfinished string (a JSONL line ends).
func (c *jsonClip) reset() {
	c.inStr, c.esc, c.cutting, c.awaitColon, c.field = false, 0, false, false, ""
	c.short, c.last = c.short[:0], c.last[:0]
}

// write reads p and appends the clipped text to c.out.
func (c *jsonClip) write(p []byte) {
	c.reserve(len(p))
	for i := 0; i < len(p); i++ {
		b := p[i]
		if !c.inStr {
			switch {
			case b == '"':
				c.inStr, c.esc, c.n, c.kept, c.cutting = true, 0, 0, 0, false
				c.short = c.short[:0]
				c.cuts = append(c.cuts, clipCut{at: c.emitted}) // dropped unless cut
			case c.awaitColon && b == ':':
				c.field, c.awaitColon = "(a long key)", false
				if c.last != nil {
					c.field = string(c.last)
				}
			case c.awaitColon && (b == ' ' || b == '\t' || b == '\r' || b == '\n'):
			default:
				c.awaitColon = false
			}
			c.emit(b)
			continue
		}
		// Inside a string: copy the run of plain bytes at once.
		if c.esc == 0 && b != '"' && b != '\\' && !c.cutting && c.n < int64(c.max) {
			j := i
			lim := min(len(p), i+int(int64(c.max)-c.n))
			for j < lim && p[j] != '"' && p[j] != '\\' {
				j++
			}
			c.out = append(c.out, p[i:j]...)
			c.emitted += int64(j - i)
			c.n += int64(j - i)
			c.kept += int64(j - i)
			if len(c.short) < maxKeyBytes {
				c.short = append(c.short, p[i:min(j, i+maxKeyBytes-len(c.short))]...)
			}
			i = j - 1
			continue
		}
		if c.cutting && c.esc == 0 && b != '"' && b != '\\' {
			// Skip the run of plain bytes being cut.
			j := i
			for j < len(p) && p[j] != '"' && p[j] != '\\' {
				j++
			}
			c.n += int64(j - i)
			i = j - 1
			continue
		}
		switch {
		case c.esc > 0:
			if c.esc == 1 && b == 'u' {
				c.esc = 5
			}
			c.esc--
		case b == '"':
			c.inStr = false
			cut := &c.cuts[len(c.cuts)-1]
			if c.cutting {
				c.reserve(len(cutMark) + len(p) - i)
				c.out = append(c.out, cutMark...)
				c.emitted += int64(len(cutMark))
				cut.field, cut.bytes, cut.kept = c.field, c.n, c.kept
			} else {
				c.cuts = c.cuts[:len(c.cuts)-1]
			}
			if !c.cutting && len(c.short) < maxKeyBytes {
				c.last = append(c.last[:0], c.short...)
			} else {
				c.last = nil
			}
			c.awaitColon = true
			c.emit(b)
			continue
		default:
			// A character (or an escape, at b == '\\') starts here: the
			// place to cut (or, in bytes that are not UTF-8, anywhere
			// after a character's length).
			if !c.cutting && c.n >= int64(c.max) && (!isContinuation(b) || c.n >= int64(c.max+utf8.UTFMax-1)) {
				c.cutting = true
			}
			if b == '\\' {
				c.esc = 1
			}
		}
		c.n++
		if !c.cutting {
			c.kept++
			if len(c.short) < maxKeyBytes {
				c.short = append(c.short, b)
			}
			c.emit(b)
		}
	}
}

// reserve makes room for n more bytes of output, doubling the buffer
// (append grows a large buffer by a quarter at a time: five times its size
// copied in all).
func (c *jsonClip) reserve(n int) {
	if len(c.out)+n <= cap(c.out) {
		return
	}
	grown := 2 * cap(c.out)
	if c.outHint > 0 {
		grown = min(grown, c.outHint)
	}
	out := make([]byte, len(c.out), max(grown, len(c.out)+n, 4096))
	copy(out, c.out)
	c.out = out
}

func (c *jsonClip) emit(b byte) {
	c.out = append(c.out, b)
	c.emitted++
}

// isContinuation reports whether b continues a UTF-8 sequence.
func isContinuation(b byte) bool { return b&0xC0 == 0x80 }

// takeCuts removes and returns the cuts of strings that start before the
// output offset end.
func (c *jsonClip) takeCuts(end int64) []clipCut {
	n := 0
	for n < len(c.cuts) && c.cuts[n].at < end && (n < len(c.cuts)-1 || !c.inStr) {
		n++
	}
	out := append([]clipCut(nil), c.cuts[:n]...)
	c.cuts = append(c.cuts[:0], c.cuts[n:]...)
	return out
}

// clipLine reads one line of br (a JSONL record) through c, returning the
// clipped line (valid until the next call); eof is set at the end of the
// input. A line whose clipped text is larger than limit is an error (the
// rest of it is not read).
func clipLine(br *bufio.Reader, c *jsonClip, limit int) (line []byte, eof bool, err error) {
	c.out, c.cuts, c.outHint = c.out[:0], c.cuts[:0], limit
	c.reset()
	for {
		chunk, err := br.ReadSlice('\n')
		c.write(chunk)
		if len(c.out) > limit {
			return c.out, false, recordTooLarge(limit) // the start, to name the record
		}
		switch {
		case err == nil:
			return c.out, false, nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF):
			return c.out, true, nil
		default:
			return nil, false, err
		}
	}
}

// clipReader is an io.Reader of JSON text clipped by c, failing once more
// than limit bytes were read past the offset mark (the end of the last
// record).
type clipReader struct {
	r     io.Reader
	c     *jsonClip
	buf   []byte
	mark  int64
	limit int64
	off   int64 // bytes returned
}

func newClipReader(r io.Reader, max, limit int) *clipReader {
	return &clipReader{r: r, c: &jsonClip{max: max}, buf: make([]byte, 64<<10), limit: int64(limit)}
}

func (cr *clipReader) Read(p []byte) (int, error) {
	for len(cr.c.out) == 0 {
		if cr.off-cr.mark > cr.limit {
			return 0, recordTooLarge(int(cr.limit))
		}
		n, err := cr.r.Read(cr.buf)
		cr.c.write(cr.buf[:n])
		if err != nil && len(cr.c.out) == 0 {
			return 0, err
		}
		if n == 0 && err == nil {
			continue
		}
	}
	n := copy(p, cr.c.out)
	cr.c.out = cr.c.out[:copy(cr.c.out, cr.c.out[n:])]
	cr.off += int64(n)
	return n, nil
}

// capTrial cuts the texts and lists of t to their bounds, returning a Cut
// (without file and line) for each field cut.
func capTrial(t *Trial, lim *readLimits) []Cut {
	var cuts []Cut
	text := func(field string, s *string, max int) {
		before := len(*s)
		if v, ok := textclip.Clip(*s, max); ok {
			*s = v
			cuts = append(cuts, Cut{ID: t.ID, Field: field, Bytes: int64(before), Kept: int64(len(v) - len(cutMark))})
		}
	}
	list := func(field string, items *[]string) {
		var before int64
		for _, it := range *items {
			before += int64(len(it))
		}
		cut := false
		if len(*items) > maxListItems {
			*items, cut = (*items)[:maxListItems:maxListItems], true
		}
		for i := range *items {
			if v, ok := textclip.Clip((*items)[i], maxItemBytes); ok {
				(*items)[i], cut = v, true
			}
		}
		if cut {
			var kept int64
			for _, it := range *items {
				kept += int64(len(it))
			}
			cuts = append(cuts, Cut{ID: t.ID, Field: field, Bytes: before, Kept: kept})
		}
	}
	text("title", &t.Title, maxTitleBytes)
	text("status", &t.Status, maxTitleBytes)
	text("phase", &t.Phase, maxTitleBytes)
	text("summary", &t.Summary, lim.fieldBytes())
	text("description", &t.Description, lim.fieldBytes())
	list("conditions", &t.Conditions)
	list("interventions", &t.Interventions)
	list("keywords", &t.Keywords)
	list("mesh", &t.MeSH)
	list("inclusion", &t.Inclusion)
	list("exclusion", &t.Exclusion)
	return cuts
}

// sizeText is textclip.Size, for read.go.
func sizeText(n int64) string { return textclip.Size(n) }

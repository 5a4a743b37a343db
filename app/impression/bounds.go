package impression

import (
	"errors"
	"fmt"
	"io"
	"unicode/utf8"

	"github.com/clinsight/clinsight/internal/textclip"
)

// Bounds on one report of an import. A radiology report is a few
// kilobytes (a long CT report some tens); the bounds keep one damaged or
// hostile file from costing minutes and gigabytes.
const (
	// maxFieldBytes bounds each text of a report (findings, impression,
	// a CSV field); longer ones are cut, with a Cut in the import result.
	maxFieldBytes = 64 << 10
	// maxRecordBytes bounds one report as read: a CSV record once its
	// fields are cut (sixteen fields at their bound), an Open-i XML
	// report, a plain-text report file. A larger one is refused.
	maxRecordBytes = 1 << 20
	// maxRecordFields bounds the fields of a CSV record (the CSV reader
	// spends tens of bytes on each, and reports have a handful).
	maxRecordFields = 4096
	// maxCutNotes bounds the Cut notes an import result keeps.
	maxCutNotes = 100
	// maxLabelBytes bounds the text the labeler reads: a report's findings
	// and impression at their bounds.
	maxLabelBytes = 2*(maxFieldBytes+len(cutMark)) + 1
	// maxSentenceWords bounds the words of a sentence the labeler
	// classifies at once (a report's sentences hold tens): a longer run of
	// words without a full stop is classified in pieces of this many, so
	// the work stays linear in the text.
	maxSentenceWords = 256
)

// cutMark ends a text cut to its bound.
const cutMark = textclip.Mark

// Cut is a field of a report that was cut to its bound at import.
type Cut struct {
	// File is the file (or archive member) of the report.
	File string `json:"file"`
	// Line is the line where the report starts; 0 for a report that is a
	// whole file.
	Line int `json:"line,omitempty"`
	// UID identifies the report.
	UID string `json:"uid"`
	// Field is the field cut ("findings", "impression", or a CSV column).
	Field string `json:"field"`
	// Bytes is the field's size in the file; Kept what was stored.
	Bytes int64 `json:"bytes"`
	Kept  int64 `json:"kept"`
}

// String reads `huge.csv line 2: field "findings" of r1 cut from 50.0 MB
// to 64 KB`.
func (c Cut) String() string {
	return textclip.Describe(c.File, c.Line, c.Field, c.UID, c.Bytes, c.Kept)
}

// errRecordTooLarge is matched (errors.Is) by the error of a report larger
// than maxRecordBytes.
var errRecordTooLarge = errors.New("the report is too large")

// recordSizeError is the error of a report larger than limit bytes (or,
// with fields set, with more than that many fields): what (a CSV record,
// a text file, an XML report) and its line, when known.
type recordSizeError struct {
	what   string
	line   int
	limit  int64
	fields int
}

func (e *recordSizeError) Error() string {
	if e.fields > 0 {
		return fmt.Sprintf("%s has more than %d fields, far more than a radiology report holds: is this a file of reports?", e.what, e.fields)
	}
	return fmt.Sprintf("%s is larger than %s, far more than a radiology report holds: is this a file of reports?", e.what, textclip.Size(e.limit))
}

func (e *recordSizeError) Is(target error) bool { return target == errRecordTooLarge }

// capReport cuts the findings and impression of rr to maxFieldBytes,
// noting each cut in rr.cuts (a field the CSV reader already cut keeps its
// note, with the size it had in the file).
func capReport(rr *rawReport, file string) {
	for _, f := range []struct {
		name string
		s    *string
	}{{"findings", &rr.findings}, {"impression", &rr.impression}} {
		before := len(*f.s)
		v, ok := textclip.Clip(*f.s, maxFieldBytes)
		if !ok {
			continue
		}
		*f.s = v
		noted := false
		for _, c := range rr.cuts {
			noted = noted || c.Field == f.name
		}
		if !noted {
			rr.cuts = append(rr.cuts, Cut{File: file, Line: rr.line, UID: rr.uid, Field: f.name,
				Bytes: int64(before), Kept: int64(len(v) - len(cutMark))})
		}
	}
}

// readAllBounded reads r whole, refusing (without holding it) more than
// limit bytes; what names the text in the error.
func readAllBounded(r io.Reader, limit int64, what string) ([]byte, error) {
	raw, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(raw)) > limit {
		return nil, &recordSizeError{what: what, limit: limit}
	}
	return raw, nil
}

// recordBudget bounds the bytes read for one record: a read past limit
// bytes since the last reset fails with err. The XML reader resets it
// when a report begins.
type recordBudget struct {
	r     io.Reader
	limit int64
	n     int64
	err   func() error
}

func (b *recordBudget) Read(p []byte) (int, error) {
	if b.n >= b.limit {
		return 0, b.err()
	}
	if rest := b.limit - b.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}

// csvCut is a field cut by csvClip.
type csvCut struct {
	line        int // the physical line where the field's record starts
	col         int // the field's column (0-based)
	bytes, kept int64
}

// lineShift says that from clipped line after on, lines of the file are
// shifted by total: the line breaks dropped with cut fields.
type lineShift struct{ after, total int }

// csvClip streams CSV text, cutting every field longer than max bytes (as
// written: quotes doubled) to about max bytes followed by cutMark, without
// holding more of the field than it emits: a record with a 200 MB field is
// read in the memory of its first max bytes. It cuts between characters
// and between the two quotes of a doubled quote, so its output is CSV
// whenever its input is. A record whose cut text is larger than limit
// bytes fails the read with a *recordSizeError (the rest of it is not
// read). The line breaks inside cut fields are not emitted; fileLine maps
// the lines of the output back to the file's.
type csvClip struct {
	r          io.Reader
	comma      byte
	max, limit int64

	buf []byte
	out []byte
	err error // the error to return once out is drained

	// Parsing state: the position in a field, whether it is quoted, a
	// quote seen in a quoted field (a doubled quote or its end), the
	// field's bytes read and kept, whether it is being cut.
	fieldStart, quoted, quotePending, cutting bool
	n, kept                                   int64
	col                                       int
	droppedNL                                 int
	// The record: its physical start line, its bytes emitted.
	line, recLine int
	recBytes      int64
	outLine       int // lines emitted + 1

	cuts   []csvCut
	shifts []lineShift
}

func newCSVClip(r io.Reader, comma byte, max, limit int64) *csvClip {
	return &csvClip{r: r, comma: comma, max: max, limit: limit, buf: make([]byte, 32<<10),
		fieldStart: true, line: 1, recLine: 1, outLine: 1}
}

func (c *csvClip) Read(p []byte) (int, error) {
	for len(c.out) == 0 {
		if c.err != nil {
			return 0, c.err
		}
		n, err := c.r.Read(c.buf)
		c.write(c.buf[:n])
		if err != nil {
			if errors.Is(err, io.EOF) {
				c.finish()
			}
			if c.err == nil {
				c.err = err
			}
		}
	}
	n := copy(p, c.out)
	c.out = c.out[:copy(c.out, c.out[n:])]
	return n, nil
}

// write parses p, appending the clipped text to c.out; it stops at a
// record over the limit.
func (c *csvClip) write(p []byte) {
	for i := 0; i < len(p) && c.err == nil; i++ {
		b := p[i]
		if c.fieldStart {
			c.fieldStart, c.n, c.kept, c.cutting, c.droppedNL = false, 0, 0, false, 0
			if b == '"' {
				c.quoted = true
				c.emit(b)
				continue
			}
			c.quoted = false
		}
		if c.quoted {
			if c.quotePending {
				c.quotePending = false
				if b == '"' { // a doubled quote: one character of the field
					c.content('"', 2)
					continue
				}
				c.endField()
				c.emit('"')
				// What follows the closing quote is read as unquoted: a line
				// break ("\r\n" too), a comma, or bytes the CSV reader
				// refuses.
				c.quoted, c.n, c.kept = false, 0, 0
			} else {
				if b == '"' {
					c.quotePending = true
					continue
				}
				if b == '\n' {
					c.line++
					c.content(b, 1)
					continue
				}
				// A run of plain bytes of the field.
				j := i
				for j < len(p) && p[j] != '"' && p[j] != '\n' {
					j++
				}
				i = c.run(p, i, j)
				continue
			}
		}
		switch b {
		case c.comma:
			c.endField()
			c.emit(b)
			c.col++
			c.fieldStart = true
			if c.col >= maxRecordFields && c.err == nil {
				c.err = &recordSizeError{what: fmt.Sprintf("the record on line %d", c.recLine), line: c.recLine, fields: maxRecordFields}
			}
		case '\n':
			c.endField()
			c.emit(b)
			c.line++
			c.outLine++
			c.col, c.recLine, c.recBytes, c.fieldStart = 0, c.line, 0, true
		default:
			// A run of plain bytes of an unquoted field.
			j := i
			for j < len(p) && p[j] != c.comma && p[j] != '\n' {
				j++
			}
			i = c.run(p, i, j)
		}
	}
}

// run reads the plain bytes p[i:j] of a field (no quote, line break or
// separator among them): the part under the bound is kept at once, the
// bytes to the next character start one by one, the rest dropped at once.
// It returns the index of the last byte read.
func (c *csvClip) run(p []byte, i, j int) int {
	if !c.cutting && c.n < c.max {
		k := min(j, i+int(c.max-c.n))
		c.emitRun(p[i:k])
		c.n += int64(k - i)
		c.kept += int64(k - i)
		i = k
	}
	for ; i < j && !c.cutting; i++ {
		c.content(p[i], 1)
	}
	c.n += int64(j - i)
	return j - 1
}

// content reads one character byte (or a doubled quote, size 2) of a
// field, cutting the field at the first character start past max.
func (c *csvClip) content(b byte, size int) {
	if !c.cutting && c.n >= c.max && (utf8.RuneStart(b) || c.n >= c.max+utf8.UTFMax-1) {
		c.cutting = true
	}
	c.n += int64(size)
	switch {
	case !c.cutting:
		c.kept += int64(size)
		for range size {
			c.emit(b)
		}
		if b == '\n' {
			c.outLine++
		}
	case b == '\n':
		c.droppedNL++
	}
}

// endField ends a field: a cut one gets cutMark and a note.
func (c *csvClip) endField() {
	if !c.cutting {
		return
	}
	c.cutting = false
	c.emitRun([]byte(cutMark))
	c.cuts = append(c.cuts, csvCut{line: c.recLine, col: c.col, bytes: c.n, kept: c.kept})
	if c.droppedNL > 0 {
		total := c.droppedNL
		if len(c.shifts) > 0 {
			total += c.shifts[len(c.shifts)-1].total
		}
		c.shifts = append(c.shifts, lineShift{after: c.outLine, total: total})
		c.droppedNL = 0
	}
}

// finish ends the input: a field being cut (or a quoted one whose closing
// quote was the last byte) is closed.
func (c *csvClip) finish() {
	if c.quoted && c.quotePending {
		c.quotePending = false
		c.endField()
		c.emit('"')
		return
	}
	if !c.fieldStart {
		c.endField()
	}
}

func (c *csvClip) emit(b byte) {
	c.out = append(c.out, b)
	c.count(1)
}

func (c *csvClip) emitRun(p []byte) {
	c.out = append(c.out, p...)
	c.count(len(p))
}

// count adds n bytes to the record, failing past the limit.
func (c *csvClip) count(n int) {
	c.recBytes += int64(n)
	if c.recBytes > c.limit && c.err == nil {
		c.err = &recordSizeError{what: fmt.Sprintf("the record on line %d, even with its fields cut to %s,", c.recLine, textclip.Size(c.max)),
			line: c.recLine, limit: c.limit}
	}
}

// fileLine maps a line of the clipped output (as the CSV reader counts)
// to the line of the file; lines are asked in increasing order.
func (c *csvClip) fileLine(out int) int {
	shift := 0
	k := 0
	for k < len(c.shifts) && c.shifts[k].after < out {
		shift = c.shifts[k].total
		k++
	}
	if k > 1 { // earlier shifts are not needed again
		c.shifts = append(c.shifts[:0], c.shifts[k-1:]...)
	}
	return out + shift
}

// takeCuts removes and returns the cuts of fields of records starting at
// or before the file's line.
func (c *csvClip) takeCuts(line int) []csvCut {
	n := 0
	for n < len(c.cuts) && c.cuts[n].line <= line {
		n++
	}
	if n == 0 {
		return nil
	}
	out := append([]csvCut(nil), c.cuts[:n]...)
	c.cuts = append(c.cuts[:0], c.cuts[n:]...)
	return out
}

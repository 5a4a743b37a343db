// Package csvbound bounds CSV text before encoding/csv reads it: the bytes
// of one record and its number of fields. encoding/csv holds a record
// whole, at about a hundred bytes per field, so a damaged or hostile file
// (a lost closing quote, a binary file, a header of millions of columns, a
// gzip file unpacking to one endless line) would otherwise take the
// machine's memory before the reader's caller could refuse it.
package csvbound

import (
	"fmt"
	"io"
)

// RecordTooLongError reports a record larger than the bound.
type RecordTooLongError struct {
	// Line is the 1-based line where the record starts.
	Line int
	// Max is the bound, in bytes.
	Max int
}

// Error says where the record starts and what the bound is.
func (e *RecordTooLongError) Error() string {
	return fmt.Sprintf("the record starting at line %d is longer than %d MB: the file is damaged, or a field lacks its closing quote", e.Line, e.Max>>20)
}

// TooManyFieldsError reports a record of more fields than the bound.
type TooManyFieldsError struct {
	// Line is the 1-based line where the record starts.
	Line int
	// Max is the bound.
	Max int
}

// Error says where the record starts and what the bound is.
func (e *TooManyFieldsError) Error() string {
	return fmt.Sprintf("the record starting at line %d has more than %d columns", e.Line, e.Max)
}

// reader passes CSV text through while checking each record (the bytes
// between two line ends outside quotes). Quote tracking follows RFC 4180:
// a doubled quote inside a quoted field toggles twice and changes nothing.
type reader struct {
	r         io.Reader
	comma     byte
	maxBytes  int
	maxFields int
	n         int  // bytes of the current record so far
	fields    int  // fields of the current record so far
	quoted    bool // inside a quoted field
	line      int  // current line, 1-based
	start     int  // line where the current record started
	pending   error
}

// NewReader wraps r, failing a read once a record is longer than maxBytes
// (*RecordTooLongError) or has more than maxFields fields separated by
// comma (*TooManyFieldsError), after passing on the bytes before it. A
// bound of 0 or less is not checked; comma 0 is ',', and the fields are
// not counted for a comma beyond ASCII.
func NewReader(r io.Reader, comma rune, maxBytes, maxFields int) io.Reader {
	c := byte(',')
	switch {
	case comma >= 0x80:
		maxFields = 0
	case comma > 0:
		c = byte(comma)
	}
	return &reader{r: r, comma: c, maxBytes: maxBytes, maxFields: maxFields, line: 1, start: 1, fields: 1}
}

// Read reads from the underlying reader and fails once a record exceeds
// a bound.
func (b *reader) Read(p []byte) (int, error) {
	if b.pending != nil {
		return 0, b.pending
	}
	n, err := b.r.Read(p)
	for i := 0; i < n; i++ {
		switch c := p[i]; {
		case c == '"':
			b.quoted = !b.quoted
		case c == '\n':
			b.line++
			if !b.quoted {
				b.n, b.fields, b.start = 0, 1, b.line
				continue
			}
		case c == b.comma && !b.quoted:
			if b.fields++; b.maxFields > 0 && b.fields > b.maxFields {
				b.pending = &TooManyFieldsError{Line: b.start, Max: b.maxFields}
				return i, nil
			}
		}
		b.n++
		if b.maxBytes > 0 && b.n > b.maxBytes {
			b.pending = &RecordTooLongError{Line: b.start, Max: b.maxBytes}
			return i, nil
		}
	}
	return n, err
}

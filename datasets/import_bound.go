package datasets

import (
	"fmt"
	"io"

	"github.com/clinsight/clinsight/internal/progress"
)

// RecordTooLongError reports a CSV record larger than an importer's bound.
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

// recordBound passes CSV text through while checking that no record (the
// bytes between two line ends outside quotes) is longer than max bytes, so
// that a damaged file (a lost closing quote, a binary file) fails with a
// line number instead of making encoding/csv buffer the rest of the file as
// one field. Quote tracking follows RFC 4180: a doubled quote inside a
// quoted field toggles twice and changes nothing.
type recordBound struct {
	r       io.Reader
	max     int
	n       int  // bytes of the current record so far
	quoted  bool // inside a quoted field
	line    int  // current line, 1-based
	start   int  // line where the current record started
	pending error
}

// newRecordBound wraps r; max must be positive.
func newRecordBound(r io.Reader, max int) io.Reader {
	return &recordBound{r: r, max: max, line: 1, start: 1}
}

// Read reads from the underlying reader and fails once a record exceeds
// the bound (after passing on the bytes before it).
func (b *recordBound) Read(p []byte) (int, error) {
	if b.pending != nil {
		return 0, b.pending
	}
	n, err := b.r.Read(p)
	for i := 0; i < n; i++ {
		switch p[i] {
		case '"':
			b.quoted = !b.quoted
		case '\n':
			b.line++
			if !b.quoted {
				b.n, b.start = 0, b.line
				continue
			}
		}
		b.n++
		if b.n > b.max {
			b.pending = &RecordTooLongError{Line: b.start, Max: b.max}
			return i, nil
		}
	}
	return n, err
}

// fileOfMany reports one file's import progress as part of an import of
// several files of total bytes, of which done were read before this file:
// send gets the bytes read over all files. It is nil when send is nil.
func fileOfMany(send progress.Func, done, total int64) progress.Func {
	if send == nil {
		return nil
	}
	return func(p progress.Report) {
		send(progress.Report{Stage: p.Stage, Done: done + p.Done, Total: total, Unit: "bytes"})
	}
}

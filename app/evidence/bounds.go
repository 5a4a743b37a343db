package evidence

import (
	"bufio"
	"errors"
	"fmt"
	"io"
)

// Bounds on one record of a literature file. A PubMed record is a few
// kilobytes (one with thousands of authors about a megabyte), and a JATS
// article with its tables a few megabytes; the bounds keep a damaged or
// hostile file from taking the memory of the machine.
const (
	// maxRecordBytes bounds the bytes of one record (PubMed XML, MEDLINE,
	// RIS, CSV), counted from the end of the record before.
	maxRecordBytes = 16 << 20
	// maxArticleBytes bounds the bytes of one JATS article.
	maxArticleBytes = 64 << 20
	// maxXMLDepth bounds the nesting of XML elements (JATS nests a few
	// levels: body, sec, p, inline markup).
	maxXMLDepth = 256
	// readAhead is what the readers' buffers may hold of the next record
	// (a bufio.Scanner buffers up to a line of maxLineBytes).
	readAhead = maxLineBytes
)

// errRecordTooLarge is the error of a record larger than maxRecordBytes.
var errRecordTooLarge = fmt.Errorf("the record is larger than %d MB: is this a literature file?", maxRecordBytes>>20)

// errArticleTooLarge is the error of a JATS article larger than
// maxArticleBytes.
var errArticleTooLarge = fmt.Errorf("the article is larger than %d MB: is this one article?", maxArticleBytes>>20)

// recordBudget bounds the bytes read for one record: a read past limit
// bytes since the last reset fails with err. The readers reset it when a
// record begins.
type recordBudget struct {
	r     io.Reader
	limit int64
	n     int64
	err   error
}

func newRecordBudget(r io.Reader, limit int64, err error) *recordBudget {
	return &recordBudget{r: r, limit: limit + readAhead, err: err}
}

func (b *recordBudget) Read(p []byte) (int, error) {
	if b.n >= b.limit {
		return 0, b.err
	}
	if rest := b.limit - b.n; int64(len(p)) > rest {
		p = p[:rest]
	}
	n, err := b.r.Read(p)
	b.n += int64(n)
	return n, err
}

// reset starts the budget of a new record.
func (b *recordBudget) reset() { b.n = 0 }

// readErr describes an error of reading a line-based file: a record or a
// line over its bound, or the reader's own error.
func readErr(err error) error {
	switch {
	case tooLarge(err):
		return err
	case errors.Is(err, bufio.ErrTooLong):
		return fmt.Errorf("a line is longer than %d MB: is this a literature file?", maxLineBytes>>20)
	}
	return fmt.Errorf("reading: %w", err)
}

// tooLarge reports whether err is (or wraps) a record budget's error.
func tooLarge(err error) bool {
	return errors.Is(err, errRecordTooLarge) || errors.Is(err, errArticleTooLarge)
}

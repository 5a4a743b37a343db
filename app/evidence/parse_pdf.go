package evidence

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/ledongthuc/pdf"
)

// PDF is a full text as a PDF file with a text layer (a scanned PDF has
// none: its pages are images and are not read), of one record, named like
// a plain text ("12345678.pdf", "demo-12.pdf"). The text is extracted page
// by page and then read as plain text (ParseText).
const PDF Format = "pdf"

// maxPDFPages bounds the pages read from a PDF (an article has a few
// dozen).
const maxPDFPages = 500

// PDFText extracts the text of the PDF in r (size bytes), pages separated
// by blank lines, in reading order as the PDF's text layer gives it.
// A PDF without a text layer, or that cannot be read, is an error.
func PDFText(r io.ReaderAt, size int64) (text string, err error) {
	// The PDF reader panics on some malformed files: report those as errors.
	defer func() {
		if p := recover(); p != nil {
			text, err = "", fmt.Errorf("the PDF cannot be read (%v): save it again from a PDF viewer, or import the article as text", p)
		}
	}()
	rd, err := pdf.NewReader(r, size)
	if err != nil {
		return "", fmt.Errorf("the PDF cannot be read (%v): is it encrypted or damaged?", err)
	}
	n := rd.NumPage()
	if n > maxPDFPages {
		return "", fmt.Errorf("the PDF has %d pages, more than the %d an article can have", n, maxPDFPages)
	}
	var b strings.Builder
	for i := 1; i <= n; i++ {
		pg := rd.Page(i)
		if pg.V.IsNull() {
			continue
		}
		t, err := pg.GetPlainText(nil) // font names are per page
		if err != nil {
			return "", fmt.Errorf("reading page %d of the PDF: %w", i, err)
		}
		b.WriteString(t)
		b.WriteString("\n\n")
	}
	if strings.TrimSpace(b.String()) == "" {
		return "", errors.New("the PDF has no text layer (a scan?): run it through OCR first, or import the article as text")
	}
	return b.String(), nil
}

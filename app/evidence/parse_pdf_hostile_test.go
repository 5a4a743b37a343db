package evidence

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"
)

// nestedPDF is a one-page PDF showing "Hello world" with an array nested
// depth levels deep: in the trailer, in the page's dictionary, or in the
// page's content stream.
func nestedPDF(where string, depth int) []byte {
	nest := strings.Repeat("[", depth) + strings.Repeat("]", depth)
	page := "<</Type/Page/Parent 2 0 R/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>"
	content := textStream("Hello world")
	switch where {
	case "page":
		page = "<</Type/Page/Parent 2 0 R/Junk " + nest + "/Contents 4 0 R/Resources<</Font<</F1 5 0 R>>>>>>"
	case "content":
		body := nest + " BT /F1 12 Tf 72 712 Td (Hello world) Tj ET"
		content = fmt.Sprintf("<</Length %d>>\nstream\n%s\nendstream", len(body), body)
	}
	pdf := buildPDF(pdfCatalog, "<</Type/Pages/Kids[3 0 R]/Count 1>>", page, content, pdfFont)
	if where == "trailer" {
		pdf = bytes.Replace(pdf, []byte("/Root 1 0 R>>"), []byte("/Root 1 0 R/Junk "+nest+">>"), 1)
	}
	return pdf
}

// TestPDFTextRefusesDeepNesting gives the reader PDFs with an array nested
// far deeper than any real PDF. In the trailer, 300 levels made the
// cross-reference check loop for ever, appending to a slice (half a
// gigabyte in 10 seconds, deaf to the time budget and to Cancel); in a
// page's content stream, 4 million levels (8 MB) took 9 s and 600 MB.
// Each is refused as damaged, quickly and in bounded memory; the same
// files nested a few levels (and a page's content nested 300) read.
func TestPDFTextRefusesDeepNesting(t *testing.T) {
	cases := []struct {
		where string
		depth int
		want  string // in the error
	}{
		{"trailer", 300, "the PDF's objects are nested more than 256 levels deep"},
		{"trailer", 1 << 20, "the PDF's objects are nested more than 256 levels deep"},
		// The PDF library refuses a page nested beyond 1000 levels itself.
		{"page", 4 << 20, "object nesting exceeds maximum depth"},
		{"content", 1200, "the page's content is nested more than 1000 levels deep"},
		{"content", 4 << 20, "the page's content is nested more than 1000 levels deep"},
	}
	for _, c := range cases {
		t.Run(fmt.Sprintf("%s %d", c.where, c.depth), func(t *testing.T) {
			in := nestedPDF(c.where, c.depth)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			var before runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			done := make(chan error, 1)
			go func() {
				_, err := PDFText(ctx, bytes.NewReader(in), int64(len(in)))
				done <- err
			}()
			select {
			case err := <-done:
				if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "save it again") {
					t.Errorf("error %v, want %q", err, c.want)
				}
				if ctx.Err() != nil {
					t.Errorf("refused only by the deadline: %v", err)
				}
			case <-ctx.Done():
				t.Fatal("PDFText did not return before the deadline")
			}
			var after runtime.MemStats
			runtime.ReadMemStats(&after)
			// Stack and heap taken from the system while reading: a few
			// times the file at most.
			if grew := after.Sys - before.Sys; grew > uint64(8*len(in))+64<<20 {
				t.Errorf("reading a %d KB file took %d MB more from the system", len(in)>>10, grew>>20)
			}
		})
	}
	for _, where := range []string{"trailer", "page", "content", "content 300"} {
		depth := 8
		if where == "content 300" {
			where, depth = "content", 300
		}
		in := nestedPDF(where, depth)
		text, err := PDFText(context.Background(), bytes.NewReader(in), int64(len(in)))
		if err != nil || !strings.Contains(text, "Hello world") {
			t.Errorf("%s nested %d levels: %q, %v", where, depth, text, err)
		}
	}
}

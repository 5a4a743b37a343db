package evidence

import (
	"strings"
	"testing"

	"golang.org/x/text/encoding/unicode"
)

// TestCSVReaderUTF16 reads a literature export saved as UTF-16.
func TestCSVReaderUTF16(t *testing.T) {
	in, err := unicode.UTF16(unicode.BigEndian, unicode.UseBOM).NewEncoder().String("PMID,Title\n123,Ablation für Leberkrebs\n")
	if err != nil {
		t.Fatal(err)
	}
	r, err := NewCSVReader(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	rec, err := r.Next()
	if err != nil || rec.Title != "Ablation für Leberkrebs" || rec.PMID != "123" {
		t.Errorf("got %+v, %v", rec, err)
	}
}

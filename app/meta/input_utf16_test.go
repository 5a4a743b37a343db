package meta

import (
	"strings"
	"testing"

	"golang.org/x/text/encoding/unicode"
)

// TestLoadCSVUTF16 reads a CSV saved as "Unicode text" (UTF-16 with a byte
// order mark), as spreadsheet programs write it.
func TestLoadCSVUTF16(t *testing.T) {
	in, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String("study,ai,n1i,ci,n2i\nZoë 2019,4,123,11,139\n")
	if err != nil {
		t.Fatal(err)
	}
	st, err := LoadCSV(strings.NewReader(in), InputSpec{})
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 1 || st[0].Label != "Zoë 2019" || st[0].AI != 4 || st[0].N2I != 139 {
		t.Errorf("got %+v", st)
	}
}

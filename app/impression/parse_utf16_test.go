package impression

import (
	"strings"
	"testing"

	"golang.org/x/text/encoding/unicode"
)

// TestReadCSVReportsUTF16 reads reports saved as "Unicode text": UTF-16,
// tab-separated, as spreadsheet programs write it.
func TestReadCSVReportsUTF16(t *testing.T) {
	in, err := unicode.UTF16(unicode.LittleEndian, unicode.UseBOM).NewEncoder().String("uid\tfindings\timpression\nr1\tHeart size normal.\tNo acute disease.\n")
	if err != nil {
		t.Fatal(err)
	}
	var got []rawReport
	if err := readCSVReports(strings.NewReader(in), "reports.txt", func(r rawReport) error { got = append(got, r); return nil }); err != nil {
		t.Fatal(err)
	}
	if len(got) != 1 || got[0].uid != "r1" || got[0].findings != "Heart size normal." || got[0].impression != "No acute disease." {
		t.Errorf("got %+v", got)
	}
}

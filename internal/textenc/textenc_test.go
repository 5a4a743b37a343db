package textenc

import (
	"bufio"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"golang.org/x/text/encoding/unicode"
)

func utf16(t *testing.T, s string, order unicode.Endianness, bom unicode.BOMPolicy) string {
	t.Helper()
	out, err := unicode.UTF16(order, bom).NewEncoder().String(s)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func TestUTF8(t *testing.T) {
	const text = "id,name\r\n1,Zoë 漢字 😀\r\n"
	for _, tc := range []struct {
		name, in, want string
	}{
		{"UTF-8", text, text},
		{"UTF-8 with BOM (left for the caller)", "\ufeff" + text, "\ufeff" + text},
		{"UTF-16LE with BOM", utf16(t, text, unicode.LittleEndian, unicode.UseBOM), text},
		{"UTF-16BE with BOM", utf16(t, text, unicode.BigEndian, unicode.UseBOM), text},
		{"UTF-16LE without BOM", utf16(t, text, unicode.LittleEndian, unicode.IgnoreBOM), text},
		{"UTF-16BE without BOM", utf16(t, text, unicode.BigEndian, unicode.IgnoreBOM), text},
		{"binary with NULs on both sides", "\x00\x00\x01\x00\x00\x02\x00\x00\x03\x00", "\x00\x00\x01\x00\x00\x02\x00\x00\x03\x00"},
		{"one NUL in UTF-8 text", "a,b\x00c,d\n1,2,3\n", "a,b\x00c,d\n1,2,3\n"},
		{"tiny", "a", "a"},
		{"empty", "", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// One byte per read, as a slow stream delivers it.
			got, err := io.ReadAll(UTF8(iotest.OneByteReader(strings.NewReader(tc.in))))
			if err != nil || string(got) != tc.want {
				t.Errorf("got %q, %v; want %q", got, err, tc.want)
			}
			got, err = io.ReadAll(UTF8(bufio.NewReaderSize(strings.NewReader(tc.in), 16)))
			if err != nil || string(got) != tc.want {
				t.Errorf("through a small bufio.Reader: got %q, %v; want %q", got, err, tc.want)
			}
		})
	}
}

// Package textenc reads text files as UTF-8 whatever Unicode encoding they
// were saved in: spreadsheet programs save "Unicode text" CSV as UTF-16,
// which Go's CSV reader and SQLite would otherwise see as text with a NUL
// byte between every two characters.
package textenc

import (
	"bufio"
	"io"

	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"
)

// sniffBytes is how much of the text is looked at to recognise UTF-16.
const sniffBytes = 1024

// UTF8 returns r's text as UTF-8: unchanged when it is not UTF-16 (a UTF-8
// byte order mark is left for the caller, as before), and decoded when it
// is. UTF-16 is recognised by its byte order mark (FF FE or FE FF, removed)
// or, without one, by every other byte of the first kilobyte being NUL, as
// it is for the ASCII characters (commas, digits, column names) that fill
// the start of a CSV file. Invalid UTF-16 decodes to U+FFFD.
func UTF8(r io.Reader) io.Reader {
	br, ok := r.(*bufio.Reader)
	if !ok || br.Size() < sniffBytes {
		br = bufio.NewReaderSize(r, 4*sniffBytes)
	}
	order, ok := Detect(peek(br))
	if !ok {
		return br
	}
	return transform.NewReader(br, unicode.UTF16(order, unicode.UseBOM).NewDecoder())
}

func peek(br *bufio.Reader) []byte {
	head, _ := br.Peek(sniffBytes)
	return head
}

// Detect reports whether head, the start of a text, is UTF-16 and in which
// byte order.
func Detect(head []byte) (unicode.Endianness, bool) {
	switch {
	case len(head) >= 2 && head[0] == 0xff && head[1] == 0xfe:
		return unicode.LittleEndian, true
	case len(head) >= 2 && head[0] == 0xfe && head[1] == 0xff:
		return unicode.BigEndian, true
	}
	pairs := len(head) / 2
	if pairs < 2 {
		return unicode.BigEndian, false
	}
	zeroEven, zeroOdd := 0, 0
	for i := 0; i+1 < len(head); i += 2 {
		if head[i] == 0 {
			zeroEven++
		}
		if head[i+1] == 0 {
			zeroOdd++
		}
	}
	// At least half the characters ASCII, and NULs (almost) only on one side:
	// a binary file has them on both.
	switch {
	case zeroOdd*2 >= pairs && zeroEven*8 <= zeroOdd:
		return unicode.LittleEndian, true
	case zeroEven*2 >= pairs && zeroOdd*8 <= zeroEven:
		return unicode.BigEndian, true
	}
	return unicode.BigEndian, false
}

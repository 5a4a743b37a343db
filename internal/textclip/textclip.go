// Package textclip cuts the texts of outside input (a report's findings, a
// trial's description) to a bound, marking where they were cut, and
// describes the cuts for the people who imported them.
package textclip

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Mark ends a text cut to its bound.
const Mark = " […]"

// Clip cuts s to at most max bytes (at a character boundary) followed by
// Mark, and reports whether it did; a text already cut (ending with Mark
// within the bound) is left alone, so clipping twice is clipping once.
func Clip(s string, max int) (string, bool) {
	if len(s) <= max || len(s) <= max+len(Mark) && strings.HasSuffix(s, Mark) {
		return s, false
	}
	i := max
	for i > 0 && !utf8.RuneStart(s[i]) {
		i--
	}
	return s[:i] + Mark, true
}

// Size writes a byte count for people: "512 bytes", "64 KB", "50.0 MB".
func Size(n int64) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 1<<20:
		return fmt.Sprintf("%d KB", n>>10)
	}
	return fmt.Sprintf("%.1f MB", float64(n)/(1<<20))
}

// Describe says where a field was cut and by how much: `huge.csv line 2:
// field "findings" of r1 cut from 50.0 MB to 64 KB`. line 0 (unknown) and
// an empty record (the record's identifier) are left out; bytes is the
// field's size in the file, kept what was stored.
func Describe(file string, line int, field, record string, bytes, kept int64) string {
	var b strings.Builder
	b.WriteString(file)
	if line > 0 {
		fmt.Fprintf(&b, " line %d", line)
	}
	fmt.Fprintf(&b, ": field %q", field)
	if record != "" {
		fmt.Fprintf(&b, " of %s", record)
	}
	fmt.Fprintf(&b, " cut from %s to %s", Size(bytes), Size(kept))
	return b.String()
}

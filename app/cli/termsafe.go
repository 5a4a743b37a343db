package cli

import (
	"fmt"
	"io"
	"sync"
	"unicode/utf8"
)

// Text from data, files and the model is printed on a terminal, where
// control characters are commands: ESC starts sequences that retitle the
// window, clear the screen or rewrite what was printed before, and bidi
// overrides make text read differently from what it is. Everything the CLI
// prints therefore goes through a termWriter (Run wraps the Factory's Out
// and Err in one), which shows such characters as visible escapes.
//
// The escapes use JSON's own \uXXXX notation, so --json output passes
// through unchanged in meaning: encoding/json already writes C0 controls as
// \u00XX and never emits invalid UTF-8, and the DEL, C1 and bidi characters
// it leaves raw can only occur inside JSON strings, where \uXXXX decodes to
// the same character. A JSON reader gets the exact strings; a terminal gets
// nothing it would execute.

// unsafeRune reports whether r must not reach a terminal as is: C0 controls
// except newline and tab, DEL, C1 controls, and the bidi embedding, override,
// isolate and mark characters that can disguise text ("Trojan Source").
func unsafeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20, r == 0x7f, r >= 0x80 && r <= 0x9f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	case r == 0x200e, r == 0x200f, r == 0x061c:
		return true
	}
	return false
}

// appendEscaped appends s to dst with unsafe runes as \uXXXX and bytes that
// are not UTF-8 as \xNN. A trailing incomplete UTF-8 sequence is escaped
// too; termWriter holds such a tail back until the rest arrives.
func appendEscaped(dst []byte, s []byte) []byte {
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f || c == '\n' || c == '\t' {
			dst = append(dst, c)
			i++
			continue
		}
		r, size := utf8.DecodeRune(s[i:])
		switch {
		case r == utf8.RuneError && size <= 1:
			dst = fmt.Appendf(dst, `\x%02x`, c)
			size = 1
		case unsafeRune(r):
			dst = fmt.Appendf(dst, `\u%04x`, r)
		default:
			dst = append(dst, s[i:i+size]...)
		}
		i += size
	}
	return dst
}

// escapeControls returns s with the characters a terminal would act on
// shown as escapes (see appendEscaped). Tables use it on each cell before
// aligning columns, so the widths count what is shown.
func escapeControls(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 && c != '\n' && c != '\t' || c >= 0x7f {
			return string(appendEscaped(make([]byte, 0, len(s)+8), []byte(s)))
		}
	}
	return s
}

// termWriter is an io.Writer for human-readable output that escapes
// terminal control characters (see unsafeRune). A multi-byte character
// split across two writes, as in text streamed from the model, is held back
// until it is complete, so it is neither broken nor mistaken for garbage.
type termWriter struct {
	mu      sync.Mutex
	w       io.Writer
	pending []byte // the start of an incomplete UTF-8 sequence, at most 3 bytes
	buf     []byte
}

// newTermWriter wraps w; a writer that is already a termWriter is returned
// as it is.
func newTermWriter(w io.Writer) *termWriter {
	if tw, ok := w.(*termWriter); ok {
		return tw
	}
	return &termWriter{w: w}
}

// Write escapes p and writes it; it reports len(p) on success, including
// bytes held back as an incomplete character.
func (t *termWriter) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	data := p
	if len(t.pending) > 0 {
		data = append(t.pending, p...)
		t.pending = nil
	}
	// Hold back a tail that is the valid start of a longer character.
	cut := len(data)
	for i := len(data) - 1; i >= 0 && i >= len(data)-utf8.UTFMax+1; i-- {
		if utf8.RuneStart(data[i]) {
			if data[i] >= 0xc0 && !utf8.FullRune(data[i:]) {
				cut = i
			}
			break
		}
	}
	t.buf = appendEscaped(t.buf[:0], data[:cut])
	if cut < len(data) {
		t.pending = append([]byte(nil), data[cut:]...)
	}
	if len(t.buf) > 0 {
		if _, err := t.w.Write(t.buf); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// Flush writes a held-back incomplete character (escaped, since nothing
// completes it now).
func (t *termWriter) Flush() error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.flushLocked()
}

func (t *termWriter) flushLocked() error {
	if len(t.pending) == 0 {
		return nil
	}
	t.buf = appendEscaped(t.buf[:0], t.pending)
	t.pending = nil
	_, err := t.w.Write(t.buf)
	return err
}

// writeControl writes seq, a control sequence of the CLI's own (such as
// redrawing a progress line), unescaped.
func writeControl(w io.Writer, seq string) error {
	tw, ok := w.(*termWriter)
	if !ok {
		_, err := io.WriteString(w, seq)
		return err
	}
	tw.mu.Lock()
	defer tw.mu.Unlock()
	if err := tw.flushLocked(); err != nil {
		return err
	}
	_, err := io.WriteString(tw.w, seq)
	return err
}

// underlying returns the writer a termWriter wraps, or w itself.
func underlying(w io.Writer) io.Writer {
	if tw, ok := w.(*termWriter); ok {
		return tw.w
	}
	return w
}

package textclip

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClip(t *testing.T) {
	for _, c := range []struct {
		in   string
		max  int
		want string
		cut  bool
	}{
		{"short", 10, "short", false},
		{"exactly10!", 10, "exactly10!", false},
		{"abcdefghijk", 5, "abcde" + Mark, true},
		{"aaaaé", 5, "aaaa" + Mark, true}, // é is two bytes: cut before it
		{"abcde" + Mark, 5, "abcde" + Mark, false},
		{"", 0, "", false},
	} {
		got, cut := Clip(c.in, c.max)
		if got != c.want || cut != c.cut {
			t.Errorf("Clip(%q, %d) = %q, %v; want %q, %v", c.in, c.max, got, cut, c.want, c.cut)
		}
		if !utf8.ValidString(got) {
			t.Errorf("Clip(%q, %d) = %q is not UTF-8", c.in, c.max, got)
		}
		if again, cut := Clip(got, c.max); again != got || cut {
			t.Errorf("Clip twice changed %q to %q", got, again)
		}
	}
}

func FuzzClip(f *testing.F) {
	f.Add("aaaaé", 5)
	f.Add("abc", 0)
	f.Fuzz(func(t *testing.T, s string, max int) {
		if max < 0 || max > 1<<16 || !utf8.ValidString(s) {
			return
		}
		got, cut := Clip(s, max)
		if !utf8.ValidString(got) {
			t.Fatalf("Clip(%q, %d) = %q is not UTF-8", s, max, got)
		}
		if cut && (len(got) > max+len(Mark) || !strings.HasSuffix(got, Mark) || !strings.HasPrefix(s, strings.TrimSuffix(got, Mark))) {
			t.Fatalf("Clip(%q, %d) = %q", s, max, got)
		}
		if !cut && got != s {
			t.Fatalf("Clip(%q, %d) = %q without a cut", s, max, got)
		}
	})
}

func TestSizeAndDescribe(t *testing.T) {
	for n, want := range map[int64]string{512: "512 bytes", 64 << 10: "64 KB", 50 << 20: "50.0 MB", 1023: "1023 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
	if got, want := Describe("huge.csv", 2, "findings", "r1", 50<<20, 64<<10), `huge.csv line 2: field "findings" of r1 cut from 50.0 MB to 64 KB`; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
	if got, want := Describe("a.xml", 0, "text", "", 3<<20, 128<<10), `a.xml: field "text" cut from 3.0 MB to 128 KB`; got != want {
		t.Errorf("Describe = %q, want %q", got, want)
	}
}

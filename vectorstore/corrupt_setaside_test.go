package vectorstore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestCorruptFileSetAsideAndRebuilt: with Options.OnCorrupt a damaged
// collection file (a flipped byte: "checksum mismatch"; a truncated file) is
// kept under a new name, reported, and the collection is built again.
func TestCorruptFileSetAsideAndRebuilt(t *testing.T) {
	ctx := context.Background()
	emb := NewLexicalEmbedder(64)
	for _, damage := range []struct {
		name string
		fn   func([]byte) []byte
		want string
	}{
		{"flipped byte", func(b []byte) []byte { b = bytes.Clone(b); b[len(b)/2] ^= 0x40; return b }, "checksum mismatch"},
		{"truncated", func(b []byte) []byte { return b[:len(b)/3] }, "corrupt"},
	} {
		t.Run(damage.name, func(t *testing.T) {
			dir := t.TempDir()
			c := collection(t, openStore(t, dir, Options{}), "tables", emb)
			if err := c.Add(ctx, corpus); err != nil {
				t.Fatal(err)
			}
			path := filepath.Join(dir, "tables"+fileExt)
			valid, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			bad := damage.fn(valid)
			if err := os.WriteFile(path, bad, 0o600); err != nil {
				t.Fatal(err)
			}

			// Without OnCorrupt: the error names the file and says it can be rebuilt.
			s := openStore(t, dir, Options{})
			_, err = s.Collection(ctx, "tables", emb)
			var fe *FileError
			if !errors.As(err, &fe) || fe.Path != path || !errors.Is(err, ErrCorrupt) ||
				!strings.Contains(err.Error(), damage.want) || !strings.Contains(err.Error(), "delete it") {
				t.Fatalf("err = %v", err)
			}

			var events []CorruptEvent
			s = openStore(t, dir, Options{OnCorrupt: func(e CorruptEvent) { events = append(events, e) }})
			if len(events) != 1 || events[0].Collection != "tables" || events[0].Path != path || !errors.Is(events[0].Err, ErrCorrupt) {
				t.Fatalf("events = %+v", events)
			}
			kept, err := os.ReadFile(events[0].Backup)
			if err != nil || !bytes.Equal(kept, bad) || !strings.HasPrefix(filepath.Base(events[0].Backup), "tables"+fileExt+".corrupt-") {
				t.Fatalf("backup %s: %v (same bytes: %v)", events[0].Backup, err, bytes.Equal(kept, bad))
			}
			if infos := s.Collections(); len(infos) != 0 {
				t.Errorf("Collections() = %+v, want none", infos)
			}
			// Built again on first use, and the new file loads.
			c = collection(t, s, "tables", emb)
			if c.Count() != 0 {
				t.Fatalf("new collection has %d documents", c.Count())
			}
			if err := c.Add(ctx, corpus); err != nil {
				t.Fatal(err)
			}
			s = openStore(t, dir, Options{OnCorrupt: func(e CorruptEvent) { t.Errorf("rebuilt file reported corrupt: %+v", e) }})
			if c := collection(t, s, "tables", emb); c.Count() != len(corpus) {
				t.Errorf("reopened: %d documents, want %d", c.Count(), len(corpus))
			}
			// A second corruption keeps a second backup; the first stays.
			if err := os.WriteFile(path, bad, 0o600); err != nil {
				t.Fatal(err)
			}
			var second []CorruptEvent
			openStore(t, dir, Options{OnCorrupt: func(e CorruptEvent) { second = append(second, e) }})
			if len(second) != 1 || second[0].Backup == events[0].Backup {
				t.Fatalf("second events = %+v", second)
			}
			if _, err := os.Stat(events[0].Backup); err != nil {
				t.Errorf("first backup gone: %v", err)
			}
		})
	}
}

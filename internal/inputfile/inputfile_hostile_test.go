//go:build unix

package inputfile

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func TestOpenRefusesWhatIsNotAFile(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "studies.csv")
	if err := os.WriteFile(file, []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "link.csv")
	if err := os.Symlink(file, link); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{file, link} {
		f, fi, err := Open(p)
		if err != nil || fi.Size() != 8 {
			t.Errorf("%s: %v", p, err)
			continue
		}
		f.Close()
	}
	fifo := filepath.Join(dir, "pipe.csv")
	if err := syscall.Mkfifo(fifo, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	cases := map[string]string{
		fifo:                          "pipe.csv is a named pipe, not a file",
		dir:                           "is a folder, not a file",
		"/dev/zero":                   "zero is a device, not a file",
		filepath.Join(dir, "missing"): "no such file",
	}
	for p, want := range cases {
		if _, err := os.Stat(p); err != nil && !strings.Contains(want, "no such") {
			continue // no /dev/zero here
		}
		f, _, err := Open(p)
		if err == nil {
			f.Close()
		}
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Open(%s): %v, want %q", p, err, want)
		}
	}
}

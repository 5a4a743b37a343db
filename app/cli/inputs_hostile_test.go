//go:build unix

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestInputFilesRefuseNamedPipes gives --sql-file (cohort) and --ids-file
// (evidence decide) a named pipe: opening it waited for a writer for ever,
// deaf to Ctrl-C; now each is refused at once.
func TestInputFilesRefuseNamedPipes(t *testing.T) {
	pipe := filepath.Join(t.TempDir(), "input.txt")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	for name, read := range map[string]func() error{
		"--sql-file": func() error { _, err := cohortStatement("", pipe); return err },
		"--ids-file": func() error { _, err := readIDsFile(pipe); return err },
	} {
		done := make(chan error, 1)
		go func() { done <- read() }()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), "input.txt is a named pipe, not a file") {
				t.Errorf("%s of a named pipe: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			if w, err := os.OpenFile(pipe, os.O_WRONLY, 0); err == nil {
				w.Close() // ends the blocked reader
			}
			t.Fatalf("%s: still reading after 10 s", name)
		}
	}
}

//go:build unix

package meta

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestLoadFileRefusesNamedPipes loads a named pipe as a study table (CSV
// and .xlsx): opening it waited for a writer for ever; now it is refused
// at once, saying what it is.
func TestLoadFileRefusesNamedPipes(t *testing.T) {
	dir := t.TempDir()
	for _, name := range []string{"pipe.csv", "pipe.xlsx"} {
		pipe := filepath.Join(dir, name)
		if err := syscall.Mkfifo(pipe, 0o644); err != nil {
			t.Skip("no named pipes here:", err)
		}
		done := make(chan error, 1)
		go func() {
			_, err := LoadFile(pipe, InputSpec{})
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), name+" is a named pipe, not a file") {
				t.Errorf("%s: %v", name, err)
			}
		case <-time.After(10 * time.Second):
			if w, err := os.OpenFile(pipe, os.O_WRONLY, 0); err == nil {
				w.Close() // ends the blocked reader
			}
			t.Fatalf("%s: still reading after 10 s", name)
		}
	}
}

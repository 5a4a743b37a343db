//go:build unix

package cohort

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestReadDefinitionRefusesNamedPipes reads a named pipe as a cohort
// definition file (opening it waited for a writer for ever): refused at
// once, saying what it is.
func TestReadDefinitionRefusesNamedPipes(t *testing.T) {
	pipe := filepath.Join(t.TempDir(), "cohort.json")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := ReadDefinition(pipe)
		done <- err
	}()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(err.Error(), "cohort.json is a named pipe, not a file") {
			t.Errorf("ReadDefinition of a named pipe: %v", err)
		}
	case <-time.After(10 * time.Second):
		if w, err := os.OpenFile(pipe, os.O_WRONLY, 0); err == nil {
			w.Close() // ends the blocked reader
		}
		t.Fatal("still reading after 10 s")
	}
}

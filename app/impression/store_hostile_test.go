//go:build unix

package impression

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestImportRefusesNamedPipes imports a named pipe as a report file
// (opening it waited for a writer for ever, deaf to Cancel and Ctrl-C):
// refused at once; and a folder holding one beside a report file: the
// pipe is skipped, the reports imported.
func TestImportRefusesNamedPipes(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "pipe.csv")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	run := func(path string) (ImportResult, error) {
		type out struct {
			res ImportResult
			err error
		}
		done := make(chan out, 1)
		go func() {
			res, err := Import(context.Background(), openDB(t), path, ImportOptions{})
			done <- out{res, err}
		}()
		select {
		case o := <-done:
			return o.res, o.err
		case <-time.After(10 * time.Second):
			if w, err := os.OpenFile(pipe, os.O_WRONLY, 0); err == nil {
				w.Close() // ends the blocked reader
			}
			t.Fatal("the import was still reading after 10 s")
			return ImportResult{}, nil
		}
	}
	if _, err := run(pipe); err == nil || !strings.Contains(err.Error(), "pipe.csv is a named pipe, not a file") {
		t.Errorf("import of a named pipe: %v", err)
	}
	csv := "findings,impression\n\"The lungs are clear. No effusion.\",\"No acute disease.\"\n"
	if err := os.WriteFile(filepath.Join(dir, "reports.csv"), []byte(csv), 0o644); err != nil {
		t.Fatal(err)
	}
	if res, err := run(dir); err != nil || res.Total != 1 {
		t.Errorf("import of a folder with a named pipe: %+v, %v", res, err)
	}
}

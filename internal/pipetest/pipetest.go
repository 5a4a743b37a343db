// Package pipetest is test support for the refusal of named pipes given as
// input files (internal/inputfile): a call that must return at once is run
// with a deadline, and a reader left blocked on the pipe is released.
package pipetest

import (
	"os"
	"testing"
	"time"
)

// Deadline is how long CallWithin waits: far longer than a refusal takes
// (microseconds) on a busy machine, far shorter than a test's timeout.
const Deadline = 10 * time.Second

// CallWithin runs call and returns its error, failing the test when it has
// not returned after Deadline. The named pipe at pipe (when not "") is
// then opened for writing and closed, so that a reader blocked on it gets
// the end of the file and the test binary does not keep a goroutine
// blocked for ever.
func CallWithin(t testing.TB, pipe string, call func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- call() }()
	select {
	case err := <-done:
		return err
	case <-time.After(Deadline):
		if pipe != "" {
			if w, err := os.OpenFile(pipe, os.O_WRONLY, 0); err == nil {
				w.Close()
			}
		}
		t.Fatalf("still reading after %s", Deadline)
		return nil
	}
}

//go:build linux

package app

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/clinsight/clinsight/internal/atomicfile"
	"github.com/clinsight/clinsight/internal/fsizelimit"
)

// TestReviewSaveFailureKeepsThePreviousFile saves a review under a
// file-size limit smaller than the project (the write fails half-way, as
// on a full disk): the save reports an error the screen can show (the
// same in SaveStatus, in words, naming no temporary file), the decision
// stays in the open review, the file saved before is byte for byte as it
// was and still opens, and no temporary file is left.
func TestReviewSaveFailureKeepsThePreviousFile(t *testing.T) {
	dir := fsizelimit.Dir(t)
	path := filepath.Join(dir, reviewsDir, "big.json")
	var before []byte
	if !fsizelimit.InChild() {
		ws, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if err := ws.SaveReviewProject(autosaveProject("big", 500)); err != nil {
			t.Fatal(err)
		}
		ws.Close()
		if before, err = os.ReadFile(path); err != nil {
			t.Fatal(err)
		}
		if len(before) < 64<<10 {
			t.Fatalf("the project is %d bytes, smaller than the limit", len(before))
		}
	}
	const id = "pmid:30000001"
	err := fsizelimit.Run(t, dir, 64<<10, func() error {
		ws, err := Open(dir)
		if err != nil {
			return fmt.Errorf("setup: %w", err)
		}
		defer ws.Close()
		ri, err := ws.Reviews().Open("big")
		if err != nil {
			return fmt.Errorf("setup: %w", err)
		}
		r := ri.(*Review)
		var mu sync.Mutex
		var last SaveStatus
		r.OnSave(func(s SaveStatus) { mu.Lock(); last = s; mu.Unlock() })
		if err := r.Decide(id, false, "Wrong population"); err != nil {
			return fmt.Errorf("setup: %w", err)
		}
		err = r.Save()
		if err == nil {
			return nil
		}
		mu.Lock()
		defer mu.Unlock()
		var se *ReviewSaveError
		switch {
		case last.Err == nil || last.Err.Error() != err.Error() || !last.Pending:
			return fmt.Errorf("the save status is %+v, the save's error %v", last, err)
		case !errors.As(err, &se):
			return fmt.Errorf("not a ReviewSaveError: %w", err)
		case r.Project().Decisions[id].Reason != "Wrong population":
			return fmt.Errorf("the decision is gone from the open review")
		}
		return err
	})
	if fsizelimit.InChild() {
		return
	}
	if err == nil {
		t.Fatal("the save beyond the file-size limit succeeded")
	}
	msg := err.Error()
	if !strings.Contains(msg, "review big could not be saved: the file would be larger than this computer allows") ||
		strings.Contains(msg, atomicfile.Prefix) || strings.Contains(msg, dir) || strings.Contains(msg, "--") {
		t.Errorf("the message for the reviewer: %s", msg)
	}
	after, rerr := os.ReadFile(path)
	if rerr != nil || !bytes.Equal(before, after) {
		t.Fatalf("the file saved before changed (%v): %d bytes, was %d", rerr, len(after), len(before))
	}
	entries, rerr := os.ReadDir(filepath.Dir(path))
	if rerr != nil {
		t.Fatal(rerr)
	}
	for _, e := range entries {
		if e.Name() != "big.json" {
			t.Errorf("left in the reviews folder: %s", e.Name())
		}
	}
	ws, oerr := Open(dir)
	if oerr != nil {
		t.Fatal(oerr)
	}
	defer ws.Close()
	p, oerr := ws.LoadReviewProject("big")
	if oerr != nil {
		t.Fatal(oerr)
	}
	if _, ok := p.Decisions[id]; ok {
		t.Error("the saved project has the decision the failed save was writing")
	}
}

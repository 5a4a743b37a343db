//go:build unix

package app

import (
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/internal/pipetest"
)

// allocatedBy returns the bytes fn allocates.
func allocatedBy(fn func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	fn()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// TestReviewProjectFileNamedPipe puts a named pipe where a review project
// file goes (reviews/piped.json): the list of reviews, opening it, saving
// over it and creating a review of that name each waited for a writer for
// ever, deaf to Cancel. Now the list shows it unread, opening it says what
// it is and leaves it in place, saving over it is refused.
func TestReviewProjectFileNamedPipe(t *testing.T) {
	ws := openTemp(t)
	if err := ws.SaveReviewProject(evidence.NewProject("real", "lit", reviewPICO)); err != nil {
		t.Fatal(err)
	}
	pipe := filepath.Join(ws.ReviewsDir(), "piped.json")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	var names []string
	err := pipetest.CallWithin(t, pipe, func() error {
		var err error
		names, err = ws.ReviewProjects()
		return err
	})
	if err != nil || !slices.Contains(names, "piped") || !slices.Contains(names, "real") {
		t.Errorf("list %v, %v", names, err)
	}
	err = pipetest.CallWithin(t, pipe, func() error { _, err := ws.LoadReviewProject("piped"); return err })
	if err == nil || !strings.Contains(err.Error(), "piped.json is a named pipe, not a file") {
		t.Errorf("open: %v", err)
	}
	err = pipetest.CallWithin(t, pipe, func() error { return ws.SaveReviewProject(evidence.NewProject("piped", "lit", reviewPICO)) })
	if err == nil || !strings.Contains(err.Error(), "not saving over") || !strings.Contains(err.Error(), "named pipe") {
		t.Errorf("save: %v", err)
	}
	err = pipetest.CallWithin(t, pipe, func() error { _, err := ws.Reviews().Create("piped", "lit", reviewPICO); return err })
	if err == nil || !strings.Contains(err.Error(), `a review project named "piped" exists`) {
		t.Errorf("create: %v", err)
	}
	if fi, err := os.Lstat(pipe); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("the pipe was moved or replaced: %v", err)
	}
	if _, err := ws.LoadReviewProject("real"); err != nil {
		t.Errorf("the real review: %v", err)
	}
}

// TestReviewProjectFileTooLarge puts a 256 MB file (sparse: no disk)
// where a review project goes: the list read each project file whole
// (256 MB allocated) and opening it loaded it whole. Now the list reads
// its head only (the saved time stamp orders it), opening it and saving
// over it are refused unread, and the file is left as it was.
func TestReviewProjectFileTooLarge(t *testing.T) {
	ws := openTemp(t)
	if err := ws.SaveReviewProject(evidence.NewProject("real", "lit", reviewPICO)); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(ws.ReviewsDir(), "huge.json")
	head := `{"version":1,"name":"huge","source":"lit","created":"2020-01-01T00:00:00Z","updated":"2099-01-01T00:00:00Z","pico":"`
	if err := os.WriteFile(huge, []byte(head), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, maxReviewFileBytes+1); err != nil {
		t.Fatal(err)
	}
	// Older than "real" by its file time: only the saved stamp lists it first.
	old := time.Date(2000, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := os.Chtimes(huge, old, old); err != nil {
		t.Fatal(err)
	}
	var names []string
	var err error
	alloc := allocatedBy(func() { names, err = ws.ReviewProjects() })
	t.Logf("list: %.1f MB allocated", float64(alloc)/(1<<20))
	if err != nil || !slices.Equal(names, []string{"huge", "real"}) {
		t.Errorf("list %v, %v (want huge first: its saved time stamp)", names, err)
	}
	if alloc > 8<<20 {
		t.Errorf("listing allocated %.1f MB", float64(alloc)/(1<<20))
	}
	alloc = allocatedBy(func() { _, err = ws.LoadReviewProject("huge") })
	if err == nil || !strings.Contains(err.Error(), "huge.json is larger than 256 MB, the most a review project file may hold") {
		t.Errorf("open: %v", err)
	}
	if alloc > 8<<20 {
		t.Errorf("opening allocated %.1f MB", float64(alloc)/(1<<20))
	}
	if err := ws.SaveReviewProject(evidence.NewProject("huge", "lit", reviewPICO)); err == nil || !strings.Contains(err.Error(), "not saving over") {
		t.Errorf("save: %v", err)
	}
	if fi, err := os.Stat(huge); err != nil || fi.Size() != maxReviewFileBytes+1 {
		t.Errorf("the file changed: %v", err)
	}
	if backups, _ := filepath.Glob(huge + ".corrupt-*"); len(backups) != 0 {
		t.Errorf("moved aside: %v", backups)
	}
}

// TestReviewImportDecisionsRefusesHostileFiles imports decisions from a
// named pipe (it waited for a writer for ever) and from a file larger
// than the bound: each is refused at once, the review unchanged.
func TestReviewImportDecisionsRefusesHostileFiles(t *testing.T) {
	ws := openTemp(t)
	r := ws.Reviews().Scratch(evidence.NewProject("team", "lit", reviewPICO), ReviewOptions{})
	dir := t.TempDir()
	pipe := filepath.Join(dir, "ben.json")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	big := filepath.Join(dir, "big.json")
	if err := os.WriteFile(big, []byte(`{"format":"clinsight-screening-decisions","version":1,"decisions":[`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(big, 10<<30); err != nil { // sparse
		t.Fatal(err)
	}
	before, _ := json.Marshal(r.Project())
	for path, want := range map[string]string{
		pipe: "ben.json is a named pipe, not a file",
		big:  "the decisions file is larger than 32 MB",
		dir:  "is a folder, not a file",
	} {
		var alloc uint64
		err := pipetest.CallWithin(t, pipe, func() error {
			var err error
			alloc = allocatedBy(func() { _, err = r.ImportDecisions(path) })
			return err
		})
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: %v, want %q", filepath.Base(path), err, want)
		}
		if alloc > 4<<20 {
			t.Errorf("%s: %.1f MB allocated", filepath.Base(path), float64(alloc)/(1<<20))
		}
	}
	if after, _ := json.Marshal(r.Project()); string(after) != string(before) {
		t.Error("the review changed")
	}
}

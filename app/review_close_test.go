package app

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app/evidence"
)

// failReviewsFolder makes every later save of the workspace's reviews
// fail, as root too (where a read-only folder is still written to): the
// folder of review projects is moved aside and a plain file put in its
// place. It returns the moved project file of the review named name.
func failReviewsFolder(t *testing.T, ws *Workspace, name string) string {
	t.Helper()
	moved := ws.ReviewsDir() + ".moved"
	if err := os.Rename(ws.ReviewsDir(), moved); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.ReviewsDir(), []byte("not a folder\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return filepath.Join(moved, name+".json")
}

// TestReviewCloseFailureKeepsTheProjectToCopy: a review whose save fails
// when it is closed returns an error in words (a *ReviewSaveError that
// says when it was last saved and that the changes since are not in its
// file, naming no path and no flag), keeps every decision in memory and
// its last saved file as it was; SaveCopy then writes the project, the
// decision included, as a review project file elsewhere (byte for byte
// what a save writes), which opens once put in a workspace's folder of
// review projects; SaveRecoveryCopy writes one in the user's cache
// folder, private to the user, named after the review; neither tells the
// review it is saved.
func TestReviewCloseFailureKeepsTheProjectToCopy(t *testing.T) {
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache) // os.UserCacheDir on Linux and the BSDs
	ws, r := openAutosaveReview(t, 300)
	opened := r.Project().Updated
	before, err := os.ReadFile(filepath.Join(ws.ReviewsDir(), "big.json"))
	if err != nil {
		t.Fatal(err)
	}
	const id = "pmid:30000001"
	if err := r.Decide(id, false, "Wrong population"); err != nil {
		t.Fatal(err)
	}
	saved := failReviewsFolder(t, ws, "big")

	err = r.Close()
	se, ok := errors.AsType[*ReviewSaveError](err)
	if !ok {
		t.Fatalf("Close: %v, not a ReviewSaveError", err)
	}
	msg := err.Error()
	if !se.Closing || !se.Saved.Equal(opened) || !strings.Contains(msg, "review big could not be saved: the workspace's folder of review projects is not a folder") ||
		!strings.Contains(msg, "are not in its file") || !strings.Contains(msg, opened.Local().Format("2 Jan 15:04")) ||
		strings.Contains(msg, ws.Dir()) || strings.Contains(msg, "--") || strings.Contains(msg, "tried again") {
		t.Errorf("Close's error (Closing %v, Saved %v): %s", se.Closing, se.Saved, msg)
	}
	if st := r.SaveStatus(); st.Err == nil || !st.Pending || !st.Saved.Equal(opened) {
		t.Errorf("the save status after the failed close: %+v", st)
	}
	if after, err := os.ReadFile(saved); err != nil || !bytes.Equal(after, before) {
		t.Fatalf("the file saved before changed (%v)", err)
	}
	p := r.Project()
	if d, ok := p.Decisions[id]; !ok || d.Include || d.Reason != "Wrong population" {
		t.Fatalf("the decision is gone from the closed review: %+v", d)
	}

	// A copy where the user chose.
	elsewhere := filepath.Join(t.TempDir(), "big copy.json")
	if err := r.SaveCopy(elsewhere); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(elsewhere)
	if err != nil {
		t.Fatal(err)
	}
	copied, err := evidence.ParseProject(raw)
	if err != nil {
		t.Fatal(err)
	}
	if want := append(projectJSON(t, p, copied.Updated), '\n'); !bytes.Equal(raw, want) {
		t.Errorf("the copy (%d bytes) is not the project in memory as a save writes it (%d bytes)", len(raw), len(want))
	}
	if !copied.Updated.After(opened) {
		t.Errorf("the copy's saved time %v is not after the last save %v", copied.Updated, opened)
	}
	other, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if err := os.MkdirAll(other.ReviewsDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(other.ReviewsDir(), filepath.Base(elsewhere)), raw, 0o600); err != nil {
		t.Fatal(err)
	}
	reopened, err := other.LoadReviewProject("big copy")
	if err != nil {
		t.Fatal(err)
	}
	if d := reopened.Decisions[id]; d.Reason != "Wrong population" || len(reopened.Decisions) != len(p.Decisions) {
		t.Errorf("the copy, opened: %d decisions (want %d), %+v", len(reopened.Decisions), len(p.Decisions), d)
	}

	// The recovery copy.
	path, err := r.SaveRecoveryCopy()
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(cache, "clinsight", "unsaved-reviews")
	name := strings.TrimSuffix(filepath.Base(path), ".json")
	if filepath.Dir(path) != dir || !strings.HasPrefix(name, "big unsaved ") || evidence.ValidateProjectName(name) != nil {
		t.Errorf("the recovery copy is %s, want a valid project name under %s", path, dir)
	}
	raw, err = os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if recovered, err := evidence.ParseProject(raw); err != nil || recovered.Decisions[id].Reason != "Wrong population" {
		t.Errorf("the recovery copy: %v", err)
	}
	for _, c := range []struct {
		path string
		mode os.FileMode
	}{{dir, 0o700}, {path, 0o600}} {
		if fi, err := os.Stat(c.path); err != nil || fi.Mode().Perm() != c.mode {
			t.Errorf("%s: %v, mode %v, want %v", c.path, err, fi.Mode().Perm(), c.mode)
		}
	}
	if st := r.SaveStatus(); st.Err == nil || !st.Pending {
		t.Errorf("a copy made the review look saved: %+v", st)
	}
}

// TestRecoveryFileNameIsAProjectName: the recovery copy of a review with
// the longest name a project may have is still named by a valid project
// name, the review's name shortened.
func TestRecoveryFileNameIsAProjectName(t *testing.T) {
	at := time.Date(2026, 11, 27, 0, 5, 12, 0, time.Local)
	for _, name := range []string{"MWA vs RFA", strings.Repeat("é", 100), strings.Repeat("a", 71) + " " + strings.Repeat("b", 28)} {
		file := recoveryFileName(name, at)
		base, ok := strings.CutSuffix(file, " unsaved 2026-11-27 00.05.12.json")
		if !ok || !strings.HasPrefix(name, base) || base == "" {
			t.Errorf("%q: %q", name, file)
		}
		if err := evidence.ValidateProjectName(strings.TrimSuffix(file, ".json")); err != nil {
			t.Errorf("%q: %v", name, err)
		}
	}
}

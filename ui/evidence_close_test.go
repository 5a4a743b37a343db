package ui

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
)

// unsavedAtClose opens the main window on a workspace with a review
// project whose PICO has an edit not saved yet, then makes every save of
// the workspace's reviews fail (as root too: the folder of review projects
// is moved aside and a plain file put in its place), and asks to close
// the window (the close button's intercept). It returns the window, the
// workspace, the moved project file and the recovery folder (the user's
// cache folder is the test's).
func unsavedAtClose(t *testing.T) (*MainWindow, *app.Workspace, string, string) {
	t.Helper()
	mw, ws, saved, recovery := unsavedReview(t)
	onUI(t, func(testing.TB) { mw.requestClose() })
	waitUntil(t, "the question", func() bool { return mw.Evidence.closeAsk != nil })
	return mw, ws, saved, recovery
}

// reviewWithPendingEdit opens the main window on ws, creates the review
// "On close" and waits for it to be saved, then edits its outcome ("local
// tumor progression"): that edit is pending, not saved yet.
func reviewWithPendingEdit(t *testing.T, ws *app.Workspace) *MainWindow {
	t.Helper()
	mw := newTestMainWindow(t, ws)
	s := mw.Evidence
	waitUntil(t, "the sources listed", func() bool { return slices.Contains(s.sources, "lit") })
	onUI(t, func(testing.TB) {
		s.NewProject("On close", "lit", evidence.PICO{Population: "patients with hepatocellular carcinoma", Intervention: "microwave ablation"})
	})
	waitSaved(t, s)
	onUI(t, func(t testing.TB) {
		s.pico.entries[3].SetText("local tumor progression")
		if s.saveState.Text != "unsaved changes…" {
			t.Fatalf("the edit is not pending: %q", s.saveState.Text)
		}
	})
	return mw
}

// unsavedReview is unsavedAtClose without closing.
func unsavedReview(t *testing.T) (*MainWindow, *app.Workspace, string, string) {
	t.Helper()
	cache := t.TempDir()
	t.Setenv("XDG_CACHE_HOME", cache) // before the window: its cleanup runs first
	ws, _ := newLiteratureWorkspace(t, false)
	mw := reviewWithPendingEdit(t, ws)
	moved := ws.ReviewsDir() + ".moved"
	if err := os.Rename(ws.ReviewsDir(), moved); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(ws.ReviewsDir(), []byte("not a folder\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	return mw, ws, filepath.Join(moved, "On close.json"), filepath.Join(cache, "clinsight", "unsaved-reviews")
}

// windowOpen reports whether the window is open (on the UI goroutine).
func windowOpen(w fyne.Window) bool {
	return slices.Contains(fyne.CurrentApp().Driver().AllWindows(), w)
}

// savedOutcome returns the PICO outcome of the review project file at path.
func savedOutcome(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	p, err := evidence.ParseProject(raw)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return p.PICO.Outcome
}

// TestEvidenceCloseUnsavedAsks: closing the window when the open review
// cannot be saved does not close it: a question says why in words (the
// save's problem, since when the changes are unsaved, no flag), and Try
// again, still failing, asks again; Close without saving writes a recovery
// copy with the edit in the user's cache folder, says its path, and the
// window closes once that is read. The review's last saved file is left
// as it was.
func TestEvidenceCloseUnsavedAsks(t *testing.T) {
	mw, _, saved, recovery := unsavedAtClose(t)
	s := mw.Evidence
	var first *closeAsk
	onUI(t, func(t testing.TB) {
		first = s.closeAsk
		msg := first.message.Text
		if !windowOpen(mw.Window) {
			t.Fatal("the window closed with the review not saved")
		}
		if !strings.Contains(msg, `The review "On close" could not be saved: the workspace's folder of review projects is not a folder`) ||
			!strings.Contains(msg, "The changes made since ") || strings.Contains(msg, "--") || strings.Contains(msg, "tried again") {
			t.Errorf("the question: %s", msg)
		}
		if first.retry.Text != "Try again" || first.saveCopy.Text != "Save a copy elsewhere…" || first.dismiss.Text != "Close without saving" {
			t.Errorf("the choices: %q, %q, %q", first.retry.Text, first.saveCopy.Text, first.dismiss.Text)
		}
	})
	tapOnUI(t, first.retry)
	waitUntil(t, "the question again", func() bool { return s.closeAsk != nil && s.closeAsk != first })
	onUI(t, func(t testing.TB) {
		if !windowOpen(mw.Window) {
			t.Fatal("Try again, failing, closed the window")
		}
	})
	onUI(t, func(testing.TB) { mw.requestClose() }) // a second click while asking
	tapOnUI(t, s.closeAsk.dismiss)
	waitUntil(t, "where the recovery copy is", func() bool { return s.closeNote != nil })
	var note *closeNote
	onUI(t, func(t testing.TB) {
		note = s.closeNote
		if !windowOpen(mw.Window) {
			t.Fatal("the window closed before saying where the recovery copy is")
		}
	})
	entries, err := os.ReadDir(recovery)
	if err != nil || len(entries) != 1 {
		t.Fatalf("the recovery folder holds %d files (%v)", len(entries), err)
	}
	copyPath := filepath.Join(recovery, entries[0].Name())
	if !strings.Contains(note.message.Text, copyPath) {
		t.Errorf("the note does not name the recovery copy %s: %s", copyPath, note.message.Text)
	}
	if got := savedOutcome(t, copyPath); got != "local tumor progression" {
		t.Errorf("the recovery copy's outcome: %q", got)
	}
	tapOnUI(t, note.ok)
	waitUntil(t, "the window to close", func() bool { return !windowOpen(mw.Window) })
	if got := savedOutcome(t, saved); got != "" {
		t.Errorf("the last saved file changed: outcome %q", got)
	}
}

// TestEvidenceCloseUnsavedCopiesElsewhere: with the review not saved at
// close, saving a copy elsewhere writes the review with its edit there
// and closes the window, without a recovery copy.
func TestEvidenceCloseUnsavedCopiesElsewhere(t *testing.T) {
	mw, _, _, recovery := unsavedAtClose(t)
	s := mw.Evidence
	path := filepath.Join(t.TempDir(), "On close.json")
	onUI(t, func(testing.TB) {
		r := s.closeAsk.review
		s.closeAskDone()
		s.saveCopyAtClose(r, path, mw.Window.Close) // what the file dialog calls
	})
	waitUntil(t, "the window to close", func() bool { return !windowOpen(mw.Window) })
	if got := savedOutcome(t, path); got != "local tumor progression" {
		t.Errorf("the copy's outcome: %q", got)
	}
	if entries, err := os.ReadDir(recovery); err == nil || len(entries) > 0 {
		t.Errorf("a recovery copy was written beside the one the user saved: %v", entries)
	}
}

// TestEvidenceCloseUnsavedTriesAgain: once the problem is solved, Try
// again saves the review in the workspace and closes the window.
func TestEvidenceCloseUnsavedTriesAgain(t *testing.T) {
	mw, ws, saved, _ := unsavedAtClose(t)
	s := mw.Evidence
	if err := os.Remove(ws.ReviewsDir()); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Dir(saved), ws.ReviewsDir()); err != nil {
		t.Fatal(err)
	}
	tapOnUI(t, s.closeAsk.retry)
	waitUntil(t, "the window to close", func() bool { return !windowOpen(mw.Window) })
	if got := savedOutcome(t, filepath.Join(ws.ReviewsDir(), "On close.json")); got != "local tumor progression" {
		t.Errorf("the saved outcome: %q", got)
	}
}

// TestEvidenceCloseUnsavedOnQuit: when the window closes without asking
// (the application quits), a review that cannot be saved is written to a
// recovery copy, with its edit.
func TestEvidenceCloseUnsavedOnQuit(t *testing.T) {
	mw, _, _, recovery := unsavedReview(t)
	onUI(t, func(testing.TB) { mw.Window.Close() })
	entries, err := os.ReadDir(recovery)
	if err != nil || len(entries) != 1 {
		t.Fatalf("the recovery folder holds %d files (%v)", len(entries), err)
	}
	if got := savedOutcome(t, filepath.Join(recovery, entries[0].Name())); got != "local tumor progression" {
		t.Errorf("the recovery copy's outcome: %q", got)
	}
}

// TestEvidenceCloseUnsavedAfterSwitch: a review whose save fails when
// another project is opened is not let go: a notice says so, it is not
// reopened from its file while its changes are only in memory, and
// closing the window asks about it (here the recovery copy fails too, and
// the last note says the changes are lost before the window closes).
func TestEvidenceCloseUnsavedAfterSwitch(t *testing.T) {
	svc := newFakeReviews("lit")
	first := fakeSearched(t, svc, "first")
	fakeSearched(t, svc, "second")
	s := openTestEvidenceScreen(t, svc, nil)
	waitUntil(t, "the first project open", func() bool { return s.project().Name == "first" })
	first.mu.Lock()
	first.saveErr = &app.ReviewSaveError{Review: "first", Problem: "the disk is full; free some space on it"}
	first.mu.Unlock()
	onUI(t, func(testing.TB) { s.OpenProject("second") })
	waitUntil(t, "the notice", func() bool {
		return s.project().Name == "second" && strings.Contains(s.notice.Text, `The review "first" could not be saved when it was closed: the disk is full; free some space on it.`)
	})
	onUI(t, func(testing.TB) { s.OpenProject("first") })
	waitUntil(t, "the refusal", func() bool { return strings.Contains(s.notice.Text, `The review "first" is not opened again`) })
	onUI(t, func(t testing.TB) {
		if got := s.project().Name; got != "second" {
			t.Errorf("open: %q", got)
		}
	})
	closed := false // on the UI goroutine
	onUI(t, func(testing.TB) { s.closeReviews(func() { closed = true }) })
	waitUntil(t, "the question", func() bool { return s.closeAsk != nil })
	onUI(t, func(t testing.TB) {
		if s.closeAsk.review != app.Reviewer(first) || !strings.Contains(s.closeAsk.message.Text, `The review "first" could not be saved: the disk is full`) || closed {
			t.Errorf("asked about %q: %s (closed %v)", s.closeAsk.review.Project().Name, s.closeAsk.message.Text, closed)
		}
	})
	tapOnUI(t, s.closeAsk.dismiss)
	waitUntil(t, "the last note", func() bool { return s.closeNote != nil })
	onUI(t, func(t testing.TB) {
		if msg := s.closeNote.message.Text; !strings.Contains(msg, "no recovery copy could be written either") || !strings.Contains(msg, "are lost") || closed {
			t.Errorf("the note: %s (closed %v)", msg, closed)
		}
	})
	tapOnUI(t, s.closeNote.ok)
	waitUntil(t, "the close to go on", func() bool { return closed })
}

// TestEvidenceUnsavedSavedWhenTheDiskTakesSavesAgain: a review kept
// unsaved (its save failed when another project was opened) is saved as
// soon as the open review saves again, its notice goes, and closing the
// window then asks nothing.
func TestEvidenceUnsavedSavedWhenTheDiskTakesSavesAgain(t *testing.T) {
	svc := newFakeReviews("lit")
	first := fakeSearched(t, svc, "first")
	second := fakeSearched(t, svc, "second")
	s := openTestEvidenceScreen(t, svc, nil)
	waitUntil(t, "the first project open", func() bool { return s.project().Name == "first" })
	first.mu.Lock()
	first.saveErr = &app.ReviewSaveError{Review: "first", Problem: "the disk is full; free some space on it"}
	first.mu.Unlock()
	onUI(t, func(testing.TB) { s.OpenProject("second") })
	waitUntil(t, "the notice", func() bool { return strings.Contains(s.notice.Text, `The review "first" could not be saved`) })
	first.mu.Lock()
	first.saveErr = nil // space freed
	saves := first.saves
	first.mu.Unlock()
	if err := second.Save(); err != nil {
		t.Fatal(err)
	}
	waitUntil(t, "the notice gone", func() bool { return !s.notice.Visible() })
	first.mu.Lock()
	if first.saves == saves {
		t.Error("the review kept unsaved was not saved again")
	}
	first.mu.Unlock()
	closed := false // on the UI goroutine
	onUI(t, func(testing.TB) { s.closeReviews(func() { closed = true }) })
	waitUntil(t, "the close", func() bool { return closed })
	onUI(t, func(t testing.TB) {
		if s.closeAsk != nil {
			t.Error("asked about a review that was saved")
		}
	})
}

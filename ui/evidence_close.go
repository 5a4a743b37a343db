package ui

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
)

// Closing the window with a review that cannot be saved. A review's last
// save happens when it is closed: when another project is opened and when
// the window closes. When that save fails (a full disk, a read-only
// folder), the review keeps every change in memory (app.Review.Close) and
// the screen keeps the review (unsaved): nothing is let go before the user
// knows and chooses. Closing the window then asks, review by review, with
// the save's reason: Try again, Save a copy elsewhere…, or Close without
// saving, which writes a recovery copy outside the workspace first and says
// where (app.Review.SaveRecoveryCopy). The window closes only when every
// review is saved, copied, or let go by that choice.

// closeAsk is the question shown when a review cannot be saved as the
// window closes.
type closeAsk struct {
	d                        *dialog.CustomDialog
	review                   app.Reviewer
	message                  *widget.Label
	retry, saveCopy, dismiss *widget.Button
}

// closeNote is the last word before the window closes on a review not
// saved: where its recovery copy is, or that none could be written.
type closeNote struct {
	d       *dialog.CustomDialog
	message *widget.Label
	ok      *widget.Button
}

// keepUnsaved keeps a review whose save failed when it was closed, to ask
// about when the window closes, and says so (called on any goroutine).
func (s *EvidenceScreen) keepUnsaved(r app.Reviewer, err error) {
	s.logger.Error("evidence screen: saving the review project", "project", r.Project().Name, "err", err)
	s.unsavedMu.Lock()
	if !slices.Contains(s.unsaved, r) {
		s.unsaved = append(s.unsaved, r)
	}
	s.unsavedMu.Unlock()
	fyne.Do(func() {
		s.unsavedNote = fmt.Sprintf("The review %q could not be saved when it was closed: %s. Its changes are kept in memory and saved as soon as the open review saves again; when you close Clinsight, you can try again or save a copy elsewhere.",
			r.Project().Name, saveProblem(err))
		s.setNotice(s.unsavedNote)
	})
}

// retryUnsaved saves the reviews kept unsaved again, off the UI goroutine
// (called on any goroutine when the open review was saved: the problem
// may be solved), lets go of those saved, and clears the notice about
// them once none is left.
func (s *EvidenceScreen) retryUnsaved() {
	s.unsavedMu.Lock()
	if len(s.unsaved) == 0 || s.retrying {
		s.unsavedMu.Unlock()
		return
	}
	s.retrying = true
	reviews := slices.Clone(s.unsaved)
	s.unsavedMu.Unlock()
	go func() {
		for _, r := range reviews {
			if err := r.Save(); err == nil {
				s.logger.Info("evidence screen: a review kept unsaved is saved", "project", r.Project().Name)
				s.letGo(r)
			}
		}
		s.unsavedMu.Lock()
		s.retrying = false
		left := len(s.unsaved)
		s.unsavedMu.Unlock()
		if left == 0 {
			fyne.Do(func() {
				if s.unsavedNote != "" && s.notice.Text == s.unsavedNote {
					s.clearNotice()
				}
				s.unsavedNote = ""
			})
		}
	}()
}

// letGo forgets a review kept unsaved: it was saved, copied, or the user
// chose to close without saving it.
func (s *EvidenceScreen) letGo(r app.Reviewer) {
	s.unsavedMu.Lock()
	s.unsaved = slices.DeleteFunc(s.unsaved, func(u app.Reviewer) bool { return u == r })
	s.unsavedMu.Unlock()
}

// unsavedNamed returns the review kept unsaved whose project is named
// name, nil when none is.
func (s *EvidenceScreen) unsavedNamed(name string) app.Reviewer {
	s.unsavedMu.Lock()
	defer s.unsavedMu.Unlock()
	for _, r := range s.unsaved {
		if r.Project().Name == name {
			return r
		}
	}
	return nil
}

// closeReviews runs when the user closes the window (MainWindow's close
// intercept): it closes (saves) the open review and those kept unsaved,
// off the UI goroutine and after the reviews being closed, then calls done
// on the UI goroutine. When a review cannot be saved it asks the user
// first (askBeforeClose): done is called only once every review is saved,
// copied elsewhere or let go by the user's choice.
func (s *EvidenceScreen) closeReviews(done func()) {
	if s.closingWindow {
		return // saving, or asking, already
	}
	s.closingWindow = true
	var current app.Reviewer
	if !s.closeBegun { // later rounds: the open review is kept unsaved, or was let go
		s.closeBegun, current = true, s.review
	}
	go func() {
		s.closing.Wait()
		if current != nil {
			s.unsavedMu.Lock()
			if !slices.Contains(s.unsaved, current) {
				s.unsaved = append(s.unsaved, current)
			}
			s.unsavedMu.Unlock()
		}
		s.unsavedMu.Lock()
		reviews := slices.Clone(s.unsaved)
		s.unsavedMu.Unlock()
		type failure struct {
			r   app.Reviewer
			err error
		}
		var failed []failure
		for _, r := range reviews {
			if err := r.Close(); err != nil {
				s.logger.Error("evidence screen: saving the review project before closing", "project", r.Project().Name, "err", err)
				failed = append(failed, failure{r, err})
			} else {
				s.letGo(r)
			}
		}
		fyne.Do(func() {
			if len(failed) == 0 {
				s.closedForGood = true
				s.closingWindow = false
				done()
				return
			}
			s.askBeforeClose(failed[0].r, failed[0].err, done)
		})
	}()
}

// askBeforeClose asks what to do with review r, which could not be saved
// (err says why), before the window closes.
func (s *EvidenceScreen) askBeforeClose(r app.Reviewer, err error, done func()) {
	name := r.Project().Name
	since := savedSince(r.SaveStatus().Saved)
	ask := &closeAsk{review: r}
	ask.message = widget.NewLabel(fmt.Sprintf("The review %q could not be saved: %s.\n\n"+
		"The changes made %s (screening decisions and edits) are not in its file; they are kept until you choose. "+
		"Try again once the problem is solved, save a copy of the review elsewhere, or close without saving: "+
		"those changes are then kept only in a recovery copy written outside the workspace.", name, saveProblem(err), since))
	ask.message.Wrapping = fyne.TextWrapWord
	ask.retry = widget.NewButtonWithIcon("Try again", theme.ViewRefreshIcon(), func() {
		s.closeAskDone()
		s.closingWindow = false
		s.closeReviews(done)
	})
	ask.saveCopy = widget.NewButtonWithIcon("Save a copy elsewhere…", theme.DocumentSaveIcon(), func() {
		s.closeAskDone()
		d := saveFileDialog(s.window, name+".json", func(path string) { s.saveCopyAtClose(r, path, done) },
			func() { s.askBeforeClose(r, err, done) }) // dismissed: ask again
		d.Show()
	})
	ask.dismiss = widget.NewButtonWithIcon("Close without saving", theme.CancelIcon(), func() {
		s.closeAskDone()
		s.closeWithoutSaving(r, since, done)
	})
	ask.dismiss.Importance = widget.DangerImportance
	ask.d = dialog.NewCustomWithoutButtons("Review not saved", ask.message, s.window)
	ask.d.SetButtons([]fyne.CanvasObject{ask.retry, ask.saveCopy, ask.dismiss})
	ask.d.Resize(fyne.NewSize(680, 300))
	s.closeAsk = ask
	ask.d.Show()
}

// closeAskDone hides the question.
func (s *EvidenceScreen) closeAskDone() {
	if s.closeAsk != nil {
		s.closeAsk.d.Hide()
		s.closeAsk = nil
	}
}

// saveCopyAtClose writes review r to path (off the UI goroutine); once it
// is written the review is let go and the window's close goes on, else
// the question is asked again with the copy's error.
func (s *EvidenceScreen) saveCopyAtClose(r app.Reviewer, path string, done func()) {
	go func() {
		err := r.SaveCopy(path)
		if err == nil {
			s.logger.Info("evidence screen: review not saved in the workspace, copied", "project", r.Project().Name, "copy", path)
			s.letGo(r)
		}
		fyne.Do(func() {
			if err != nil {
				s.askBeforeClose(r, fmt.Errorf("the copy could not be written either: %w", err), done)
				return
			}
			s.closingWindow = false
			s.closeReviews(done) // the others kept unsaved, if any
		})
	}()
}

// closeWithoutSaving lets review r go at the user's choice: it writes a
// recovery copy (off the UI goroutine), says where (or that none could be
// written), and goes on closing once the user has read it.
func (s *EvidenceScreen) closeWithoutSaving(r app.Reviewer, since string, done func()) {
	name := r.Project().Name
	go func() {
		path, err := r.SaveRecoveryCopy()
		s.letGo(r)
		fyne.Do(func() {
			var text string
			if err == nil {
				text = fmt.Sprintf("The review %q was not saved. A recovery copy of it, with the changes made %s, was written to\n%s\n\n"+
					"To go on with it, put that file in the workspace's reviews folder and open it in Clinsight.", name, since, path)
			} else {
				text = fmt.Sprintf("The review %q was not saved, and no recovery copy could be written either (%v): the changes made %s are lost.", name, err, since)
			}
			note := &closeNote{message: widget.NewLabel(text)}
			note.message.Wrapping = fyne.TextWrapWord
			note.ok = widget.NewButton("OK", func() {
				note.d.Hide()
				s.closeNote = nil
				s.closingWindow = false
				s.closeReviews(done) // the others kept unsaved, if any
			})
			note.ok.Importance = widget.HighImportance
			note.d = dialog.NewCustomWithoutButtons("Review not saved", note.message, s.window)
			note.d.SetButtons([]fyne.CanvasObject{note.ok})
			note.d.Resize(fyne.NewSize(600, 240))
			s.closeNote = note
			note.d.Show()
		})
	}()
}

// saveBeforeClose runs as the window closes (MainWindow.closed). After
// closeReviews it has nothing left to do. When the window closes without
// asking (the application quits), it saves the open review and those kept
// unsaved and, since it can no longer ask, writes a recovery copy of each
// that cannot be saved, which the log names: nothing is lost without a
// file to find it in.
func (s *EvidenceScreen) saveBeforeClose() {
	s.closing.Wait() // the reviews closed before save their last changes too
	if s.closedForGood {
		return
	}
	s.closedForGood = true
	s.unsavedMu.Lock()
	reviews := slices.Clone(s.unsaved)
	s.unsaved = nil
	s.unsavedMu.Unlock()
	if s.review != nil && !slices.Contains(reviews, s.review) {
		reviews = append(reviews, s.review)
	}
	for _, r := range reviews {
		if err := r.Close(); err != nil {
			s.logger.Error("evidence screen: saving the review project before closing", "project", r.Project().Name, "err", err)
			_, _ = r.SaveRecoveryCopy() // logs where, or why not
		}
	}
}

// saveProblem says why a review could not be saved, in words: a
// *app.ReviewSaveError's problem, else the error.
func saveProblem(err error) string {
	if se, ok := errors.AsType[*app.ReviewSaveError](err); ok {
		return se.Problem
	}
	return err.Error()
}

// savedSince says since when a review's changes are not saved: "since
// 14:05" (today), "since 26 Nov 14:05", or "since it was opened".
func savedSince(saved time.Time) string {
	switch {
	case saved.IsZero():
		return "since it was opened"
	case saved.Local().Format("2006-01-02") == time.Now().Format("2006-01-02"):
		return "since " + saved.Local().Format("15:04")
	default:
		return "since " + saved.Local().Format("2 Jan 15:04")
	}
}

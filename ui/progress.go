package ui

import (
	"context"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"
	"github.com/clinsight/clinsight/internal/progress"
)

// task runs long work off the UI goroutine behind a modal dialog with a
// progress bar and a Cancel button. All widget updates go through fyne.Do.
type task struct {
	dialog *dialog.CustomDialog
	bar    *widget.ProgressBar
	label  *widget.Label
	cancel context.CancelFunc
}

// runTask starts work with a cancellable context. Progress reported through
// the ProgressFunc moves the bar; done is called on the UI goroutine with
// work's error (nil on success, context.Canceled after Cancel).
func runTask(parent context.Context, w fyne.Window, title string, work func(ctx context.Context, progress progress.Func) error, done func(error)) *task {
	ctx, cancel := context.WithCancel(parent)
	t := &task{bar: widget.NewProgressBar(), label: widget.NewLabel("Starting…"), cancel: cancel}
	t.label.Wrapping = fyne.TextWrapWord
	cancelBtn := widget.NewButton("Cancel", func() {
		t.label.SetText("Cancelling…")
		cancel()
	})
	body := container.NewVBox(t.label, t.bar, container.NewCenter(cancelBtn))
	t.dialog = dialog.NewCustomWithoutButtons(title, body, w)
	t.dialog.Resize(fyne.NewSize(460, 160))
	t.dialog.Show()
	go func() {
		err := work(ctx, func(p progress.Report) {
			fyne.Do(func() {
				if p.Total > 0 {
					t.bar.SetValue(float64(p.Done) / float64(p.Total))
				}
				if p.Stage != "" {
					t.label.SetText(p.Stage)
				}
			})
		})
		cancel()
		fyne.Do(func() {
			t.dialog.Hide()
			done(err)
		})
	}()
	return t
}

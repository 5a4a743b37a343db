package ui

import (
	"testing"
	"time"

	"fyne.io/fyne/v2"

	"github.com/clinsight/clinsight/app"
)

// TestMainWindowRemembersItsSize: the main window opens at 1024×640 in a
// new workspace, saves the size the user left it at in the workspace
// settings when it closes (not as a settings change in the audit trail),
// and the next window opens at that size.
func TestMainWindowRemembersItsSize(t *testing.T) {
	ws := newEmptyWorkspace(t)
	before, err := ws.Audit().Records(t.Context(), time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	mw := newTestMainWindow(t, ws)
	onUI(t, func(t testing.TB) {
		if got := mw.Window.Canvas().Size(); got != fyne.NewSize(1024, 640) {
			t.Errorf("a new workspace's window opens at %v, want 1024×640", got)
		}
		mw.Window.Resize(fyne.NewSize(1500, 900))
		mw.Window.Close()
	})
	if got := ws.Settings().Config().Window; got != (app.WindowSize{Width: 1500, Height: 900}) {
		t.Fatalf("saved window size %+v, want 1500×900", got)
	}
	after, err := ws.Audit().Records(t.Context(), time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != len(before) {
		t.Errorf("remembering the window size wrote %d audit records", len(after)-len(before))
	}
	mw = newTestMainWindow(t, ws)
	onUI(t, func(t testing.TB) {
		if got := mw.Window.Canvas().Size(); got != fyne.NewSize(1500, 900) {
			t.Errorf("the window reopens at %v, want the 1500×900 it was left at", got)
		}
		mw.Window.Close()
	})
}

func TestOpeningSize(t *testing.T) {
	for _, c := range []struct {
		saved app.WindowSize
		want  fyne.Size
	}{
		{app.WindowSize{}, fyne.NewSize(1024, 640)},
		{app.WindowSize{Width: 1300, Height: 700}, fyne.NewSize(1300, 700)},
		{app.WindowSize{Width: 300, Height: 200}, fyne.NewSize(800, 500)},
		{app.WindowSize{Width: 9000, Height: 5000}, fyne.NewSize(3840, 2160)},
		{app.WindowSize{Width: 1200, Height: -1}, fyne.NewSize(1024, 640)},
	} {
		if got := openingSize(c.saved); got != c.want {
			t.Errorf("openingSize(%+v) = %v, want %v", c.saved, got, c.want)
		}
	}
}

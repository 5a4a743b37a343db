package ui

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/vectorstore"
)

// TestWarningWhileInUseIsShown: a warning found after the window opened (a
// damaged search index file, kept aside and rebuilt) is shown in a dialog,
// in plain words.
func TestWarningWhileInUseIsShown(t *testing.T) {
	dir := t.TempDir()
	ws, err := app.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	store, err := ws.VectorStore()
	if err != nil {
		t.Fatal(err)
	}
	c, err := store.Collection(context.Background(), "tables", vectorstore.NewLexicalEmbedder(16))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Add(context.Background(), []vectorstore.Document{{ID: "a", Text: "patients"}}); err != nil {
		t.Fatal(err)
	}
	ws.Close()
	if err := os.Truncate(filepath.Join(dir, "vectors", "tables.clvs"), 20); err != nil {
		t.Fatal(err)
	}

	ws, err = app.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	mw := newTestMainWindow(t, ws)
	if _, err := ws.VectorStore(); err != nil { // what a screen does when it indexes a source
		t.Fatal(err)
	}
	waitUntil(t, "a dialog saying the index is rebuilt", func() bool {
		top := mw.Window.Canvas().Overlays().Top()
		return top != nil && strings.Contains(labelsText(top), "rebuilt")
	})
	onUI(t, func(t testing.TB) {
		if text := labelsText(mw.Window.Canvas().Overlays().Top()); !strings.Contains(text, "tables.clvs") || strings.Contains(text, "--") {
			t.Errorf("dialog text %q", text)
		}
	})
}

// labelsText joins the text of every label under o.
func labelsText(o fyne.CanvasObject) string {
	var b strings.Builder
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch w := o.(type) {
		case *widget.Label:
			b.WriteString(w.Text + "\n")
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c)
			}
		case fyne.Widget:
			for _, c := range test.WidgetRenderer(w).Objects() {
				walk(c)
			}
		}
	}
	walk(o)
	return b.String()
}

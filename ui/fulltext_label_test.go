package ui

import (
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/widget"
)

// TestFullTextLabelShowsACutTextOnHover: a table cell's text cut with an
// ellipsis shows in full in a pop-up while the pointer is over it, and a
// text that fits shows none.
func TestFullTextLabelShowsACutTextOnHover(t *testing.T) {
	a := newTestApp(t)
	const long = "Microwave ablation versus radiofrequency ablation for hepatocellular carcinoma within the Milan criteria in patients over 70"
	onUI(t, func(t testing.TB) {
		w := a.NewWindow("hover")
		defer w.Close()
		cut, fits := newFullTextLabel(), newFullTextLabel()
		cut.SetText(long)
		fits.SetText("Aspirin")
		w.SetContent(container.NewVBox(container.NewGridWrap(fyne.NewSize(160, 40), cut), container.NewGridWrap(fyne.NewSize(160, 40), fits)))
		w.Resize(fyne.NewSize(800, 400))

		fits.MouseIn(&desktop.MouseEvent{})
		if o := w.Canvas().Overlays().Top(); o != nil {
			t.Errorf("a text that fits shows a pop-up: %T", o)
		}
		fits.MouseOut()
		cut.MouseIn(&desktop.MouseEvent{})
		p, ok := w.Canvas().Overlays().Top().(*widget.PopUp)
		if !ok || !p.Visible() {
			t.Fatalf("no pop-up over a cut text (top overlay %T)", w.Canvas().Overlays().Top())
		}
		if l, ok := p.Content.(*widget.Label); !ok || l.Text != long {
			t.Errorf("the pop-up shows %#v, want the whole text", p.Content)
		}
		cut.MouseOut()
		if p.Visible() {
			t.Error("the pop-up stays after the pointer left")
		}
	})
}

package ui

import (
	"math"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// fullTextLabel is a table cell's label: a text too long for the cell is
// cut with an ellipsis, and while the pointer is over it the whole of it
// shows in a pop-up below the cell (the detail pane shows it too). Long titles that start alike ("Microwave ablation
// versus radiofrequency ablation for …") can so be told apart.
type fullTextLabel struct {
	widget.Label
	popUp *widget.PopUp
}

var _ desktop.Hoverable = (*fullTextLabel)(nil)

func newFullTextLabel() *fullTextLabel {
	l := &fullTextLabel{}
	l.ExtendBaseWidget(l)
	l.Truncation = fyne.TextTruncateEllipsis
	return l
}

// cut reports whether the text does not fit the label.
func (l *fullTextLabel) cut() bool {
	pad := theme.InnerPadding()
	w := fyne.MeasureText(l.Text, theme.TextSize(), l.TextStyle).Width
	return w > l.Size().Width-2*pad
}

// MouseIn shows the whole text when it is cut.
func (l *fullTextLabel) MouseIn(*desktop.MouseEvent) {
	if l.Text == "" || !l.cut() {
		return
	}
	d := fyne.CurrentApp().Driver()
	c := d.CanvasForObject(l)
	if c == nil {
		return
	}
	txt := widget.NewLabel(l.Text)
	txt.Wrapping = fyne.TextWrapWord
	width := min(480, c.Size().Width-4*theme.Padding())
	pad := theme.InnerPadding()
	tw := fyne.MeasureText(l.Text, theme.TextSize(), l.TextStyle)
	lines := math.Ceil(float64(tw.Width/(width-2*pad))*1.15) + 1
	l.popUp = widget.NewPopUp(txt, c)
	l.popUp.Resize(fyne.NewSize(width, float32(lines)*tw.Height+2*pad))
	pos := d.AbsolutePositionForObject(l).AddXY(0, l.Size().Height)
	pos.X = min(pos.X, c.Size().Width-width-theme.Padding())
	l.popUp.ShowAtPosition(pos)
}

// MouseMoved does nothing (the pop-up stays while the pointer is in).
func (l *fullTextLabel) MouseMoved(*desktop.MouseEvent) {}

// MouseOut hides the pop-up.
func (l *fullTextLabel) MouseOut() {
	if l.popUp != nil {
		l.popUp.Hide()
		l.popUp = nil
	}
}

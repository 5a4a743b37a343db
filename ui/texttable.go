package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"
)

// tableColumn is a column of a text table: its header and its width.
type tableColumn struct {
	title string
	width float32
}

// newTextTable builds a virtualized, read-only table of text with a bold
// header row and fixed column widths. rows reports the current number of
// rows; cell gives the text of a cell. Call Refresh after the data changes.
func newTextTable(cols []tableColumn, rows func() int, cell func(row, col int) string) *widget.Table {
	t := widget.NewTable(
		func() (int, int) { return rows(), len(cols) },
		func() fyne.CanvasObject {
			l := newFullTextLabel() // a cut text shows in full on hover (fulltext_label.go)
			return l
		},
		func(id widget.TableCellID, o fyne.CanvasObject) { o.(*fullTextLabel).SetText(cell(id.Row, id.Col)) },
	)
	t.ShowHeaderRow = true
	t.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	t.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Col >= 0 && id.Col < len(cols) {
			o.(*widget.Label).SetText(cols[id.Col].title)
		}
	}
	for i, c := range cols {
		t.SetColumnWidth(i, c.width)
	}
	return t
}

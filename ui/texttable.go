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
		func() fyne.CanvasObject { return newFullTextLabel() }, // a cut text shows in full on hover (fulltext_label.go)
		func(id widget.TableCellID, o fyne.CanvasObject) { o.(*fullTextLabel).SetText(cell(id.Row, id.Col)) },
	)
	setColumns(t, cols)
	return t
}

// newCellsTable builds a virtualized, read-only table of text whose header
// and rows are replaced as a whole (a table drawn from a Cells method):
// header and rows return the current ones; a missing cell is empty. Set
// the column widths on the result and call Refresh after the data changes.
func newCellsTable(header func() []string, rows func() [][]string) *widget.Table {
	t := widget.NewTable(
		func() (int, int) { return len(rows()), len(header()) },
		func() fyne.CanvasObject { return newFullTextLabel() },
		func(id widget.TableCellID, o fyne.CanvasObject) {
			text := ""
			if r := rows(); id.Row < len(r) && id.Col < len(r[id.Row]) {
				text = r[id.Row][id.Col]
			}
			o.(*fullTextLabel).SetText(text)
		},
	)
	setBoldHeader(t, func(col int) (string, bool) {
		h := header()
		if col < 0 || col >= len(h) {
			return "", false
		}
		return h[col], true
	})
	return t
}

// setColumns gives t a bold header row with the columns' titles, and the
// columns' widths.
func setColumns(t *widget.Table, cols []tableColumn) {
	setBoldHeader(t, func(col int) (string, bool) {
		if col < 0 || col >= len(cols) {
			return "", false
		}
		return cols[col].title, true
	})
	for i, c := range cols {
		t.SetColumnWidth(i, c.width)
	}
}

// setBoldHeader shows t's header row in bold, column col titled title(col)
// (a column without a title, ok false, keeps its label as it is).
func setBoldHeader(t *widget.Table, title func(col int) (string, bool)) {
	t.ShowHeaderRow = true
	t.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	t.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if text, ok := title(id.Col); ok {
			o.(*widget.Label).SetText(text)
		}
	}
}

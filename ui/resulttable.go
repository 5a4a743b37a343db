package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/datasets"
)

// resultTable shows a query result in a virtualized widget.Table: cells are
// recycled, so a result of 50,000 rows costs no more to show than 50.
type resultTable struct {
	table *widget.Table
	res   *datasets.Result
}

func newResultTable() *resultTable {
	rt := &resultTable{}
	rt.table = widget.NewTable(
		func() (int, int) {
			if rt.res == nil {
				return 0, 0
			}
			return len(rt.res.Rows), len(rt.res.Columns)
		},
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.TableCellID, o fyne.CanvasObject) {
			o.(*widget.Label).SetText(cellText(rt.res.Rows[id.Row][id.Col]))
		},
	)
	rt.table.ShowHeaderRow = true
	rt.table.ShowHeaderColumn = true
	rt.table.CreateHeader = func() fyne.CanvasObject {
		// The template's text sets the width of the row numbers' column:
		// six digits, so that no row number is cut.
		l := widget.NewLabel("000000")
		l.TextStyle = fyne.TextStyle{Bold: true}
		return l
	}
	rt.table.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		l := o.(*widget.Label)
		switch {
		case id.Row < 0 && id.Col >= 0 && rt.res != nil:
			l.SetText(rt.res.Columns[id.Col].Name)
		case id.Col < 0 && id.Row >= 0:
			l.SetText(fmt.Sprint(id.Row + 1))
		default:
			l.SetText("")
		}
	}
	return rt
}

// SetResult shows res (nil clears the table) and sizes columns from the
// header and the first rows.
func (rt *resultTable) SetResult(res *datasets.Result) {
	// Every SetColumnWidth refreshes the whole table: size the columns
	// while it is empty, then draw res once.
	rt.res = nil
	if res != nil {
		size := theme.TextSize()
		for c := range res.Columns {
			w := fyne.MeasureText(res.Columns[c].Name, size, fyne.TextStyle{Bold: true}).Width
			for r := 0; r < len(res.Rows) && r < 50; r++ {
				w = max(w, fyne.MeasureText(cellText(res.Rows[r][c]), size, fyne.TextStyle{}).Width)
			}
			// Sized to the header and the first rows' values, at most
			// maxColumnWidth (longer text is cut; the column can be widened).
			rt.table.SetColumnWidth(c, min(max(w, 32), maxColumnWidth)+2*theme.InnerPadding()+2)
		}
	}
	rt.res = res
	rt.table.ScrollToTop()
	rt.table.Refresh()
}

// maxColumnWidth bounds a column's width sized to its content.
const maxColumnWidth = 360

// cellText renders one value: NULL visibly, long text on one line.
func cellText(v any) string {
	if v == nil {
		return "NULL"
	}
	s := fmt.Sprint(v)
	if strings.ContainsAny(s, "\n\r\t") {
		s = strings.NewReplacer("\n", " ", "\r", " ", "\t", " ").Replace(s)
	}
	return s
}

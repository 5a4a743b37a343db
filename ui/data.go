package ui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/durfmt"
	"github.com/clinsight/clinsight/internal/progress"
)

// browseRows is how many rows the Browse tab shows of a table.
const browseRows = 1000

// DataScreen shows the workspace's data sources and their tables, lets the
// user browse a table, run read-only SQL, import data and export results.
type DataScreen struct {
	ctx     context.Context
	data    app.DataService
	window  fyne.Window
	version string

	sourceList   *widget.List
	tableList    *widget.List
	sourceInfo   *widget.Label
	browse       *resultTable
	browseStatus *widget.Label
	editor       *widget.Entry
	runBtn       *widget.Button
	cancelBtn    *widget.Button
	exportBtn    *widget.Button
	exportExact  *widget.Check // export an aggregate's exact values (row-level sources)
	result       *resultTable
	resultStatus *widget.Label
	tabs         *container.AppTabs
	content      fyne.CanvasObject

	// Owned by the UI goroutine.
	sources    []app.Source
	source     int
	tables     []datasets.Table
	lastResult *datasets.Result
	lastSQL    string
	runCancel  context.CancelFunc
	server     *serverSourceForm // the "Add server source" form last opened (data_server.go)

	mu  sync.Mutex
	gen int // catalog load generation: late results are dropped
}

// NewDataScreen builds the Data screen; call Refresh to load it.
func NewDataScreen(ctx context.Context, data app.DataService, w fyne.Window, version string) *DataScreen {
	s := &DataScreen{ctx: ctx, data: data, window: w, version: version, source: -1}

	s.sourceList = widget.NewList(
		func() int { return len(s.sources) },
		func() fyne.CanvasObject { return widget.NewLabel("data source name") },
		func(id widget.ListItemID, o fyne.CanvasObject) {
			src := s.sources[id]
			o.(*widget.Label).SetText(fmt.Sprintf("%s (%s)", src.Name, src.Kind))
		},
	)
	s.sourceList.OnSelected = s.selectSource

	s.tableList = widget.NewList(
		func() int { return len(s.tables) },
		func() fyne.CanvasObject { return widget.NewLabel("table name and rows") },
		func(id widget.ListItemID, o fyne.CanvasObject) {
			t := s.tables[id]
			rows := formatCount(t.RowCount)
			if t.RowCountEstimated {
				rows = "about " + rows
			}
			o.(*widget.Label).SetText(fmt.Sprintf("%s — %s rows", t.Name, rows))
		},
	)
	s.tableList.OnSelected = s.selectTable

	s.sourceInfo = widget.NewLabel("")
	s.sourceInfo.Wrapping = fyne.TextWrapWord

	s.browse = newResultTable()
	s.browseStatus = widget.NewLabel("Select a table to see its first rows.")

	s.editor = widget.NewMultiLineEntry()
	s.editor.SetPlaceHolder("SELECT gender, count(*) FROM patients GROUP BY gender")
	s.editor.SetMinRowsVisible(5)
	s.runBtn = widget.NewButtonWithIcon("Run", theme.MediaPlayIcon(), func() { s.RunSQL(s.editor.Text) })
	s.runBtn.Importance = widget.HighImportance
	s.cancelBtn = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), func() {
		if s.runCancel != nil {
			s.runCancel()
		}
	})
	s.cancelBtn.Disable()
	s.exportBtn = widget.NewButtonWithIcon("Export to Excel…", theme.DocumentSaveIcon(), s.chooseExport)
	s.exportBtn.Disable()
	s.exportExact = widget.NewCheck("Exact counts", nil) // else small cells are exported as <k
	s.result = newResultTable()
	s.resultStatus = widget.NewLabel("Read-only: only SELECT, WITH, VALUES, EXPLAIN and schema PRAGMAs run; anything that writes is refused.")
	s.resultStatus.Wrapping = fyne.TextWrapWord

	browseTab := container.NewBorder(s.browseStatus, nil, nil, nil, s.browse.table)
	sqlTop := container.NewBorder(nil, container.NewHBox(s.runBtn, s.cancelBtn, s.exportBtn, s.exportExact), nil, nil, s.editor)
	sqlTab := container.NewBorder(container.NewVBox(sqlTop, s.resultStatus), nil, nil, nil, s.result.table)
	s.tabs = container.NewAppTabs(
		container.NewTabItem("Browse", browseTab),
		container.NewTabItem("SQL", sqlTab),
	)

	importMenu := widget.NewButtonWithIcon("Import…", theme.FolderOpenIcon(), nil)
	importMenu.OnTapped = func() {
		menu := fyne.NewMenu("",
			fyne.NewMenuItem("CSV or CSV.gz file…", s.chooseCSV),
			fyne.NewMenuItem("MIMIC-IV folder (hosp/, icu/)…", s.chooseMIMIC),
			fyne.NewMenuItem("Existing SQLite file (read-only)…", s.chooseSQLite),
			fyne.NewMenuItem("PostgreSQL server (read-only)…", s.ShowServerForm),
		)
		pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(importMenu)
		widget.ShowPopUpMenuAtPosition(menu, s.window.Canvas(), pos.AddXY(0, importMenu.Size().Height))
	}
	left := container.NewVSplit(
		container.NewBorder(bold("Data sources"), nil, nil, nil, s.sourceList),
		container.NewBorder(bold("Tables"), nil, nil, nil, s.tableList),
	)
	left.Offset = 0.35
	leftPane := container.NewBorder(nil, container.NewHBox(importMenu, widget.NewButtonWithIcon("", theme.ViewRefreshIcon(), s.Refresh)), nil, nil, left)
	right := container.NewBorder(s.sourceInfo, nil, nil, nil, s.tabs)
	split := container.NewHSplit(leftPane, right)
	split.Offset = 0.27
	s.content = split
	return s
}

func bold(text string) *widget.Label {
	return widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
}

// hint is a secondary explanation that wraps to the width it is given.
func hint(text string) *widget.Label {
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapWord
	l.Importance = widget.LowImportance
	return l
}

// Content returns the screen's root object.
func (s *DataScreen) Content() fyne.CanvasObject { return s.content }

// Refresh reloads the sources and selects the current (or first) one.
func (s *DataScreen) Refresh() {
	current := ""
	if s.source >= 0 && s.source < len(s.sources) {
		current = s.sources[s.source].Name
	}
	s.sources = s.data.Sources()
	s.sourceList.UnselectAll()
	s.sourceList.Refresh()
	s.tables = nil
	s.tableList.Refresh()
	if len(s.sources) == 0 {
		s.source = -1
		s.sourceInfo.SetText("No data sources yet. Import a CSV file, a MIMIC-IV folder or an existing SQLite file with Import… below.")
		return
	}
	sel := 0
	for i, src := range s.sources {
		if src.Name == current {
			sel = i
		}
	}
	s.sourceList.Select(sel)
}

// selectSource loads the tables of a source off the UI goroutine.
func (s *DataScreen) selectSource(id widget.ListItemID) {
	if id < 0 || id >= len(s.sources) {
		return
	}
	s.source = id
	src := s.sources[id]
	s.sourceInfo.SetText(fmt.Sprintf("%s — %s\n%s", src.Name, src.Description, s.data.Describe(src)))
	s.tables = nil
	s.tableList.UnselectAll()
	s.tableList.Refresh()
	s.mu.Lock()
	s.gen++
	gen := s.gen
	s.mu.Unlock()
	go func() {
		cat, err := s.data.Catalog(s.ctx, src, false)
		fyne.Do(func() {
			s.mu.Lock()
			stale := gen != s.gen
			s.mu.Unlock()
			if stale {
				return
			}
			if err != nil {
				showError(s.window, fmt.Errorf("could not read data source %q: %w", src.Name, err))
				return
			}
			s.tables = cat.Tables
			s.tableList.Refresh()
			if len(s.tables) > 0 {
				s.tableList.Select(0) // show data straight away
			}
		})
	}()
}

// selectTable shows the first rows of a table in the Browse tab.
func (s *DataScreen) selectTable(id widget.ListItemID) {
	if id < 0 || id >= len(s.tables) || s.source < 0 {
		return
	}
	src, table := s.sources[s.source], s.tables[id].Name
	total := s.tables[id].RowCount
	s.tabs.SelectIndex(0)
	s.browseStatus.SetText("Reading " + table + " …")
	go func() {
		res, err := s.data.Browse(s.ctx, src, table, browseRows)
		fyne.Do(func() {
			if err != nil {
				s.browseStatus.SetText("Could not read " + table + ".")
				showError(s.window, err)
				return
			}
			s.browse.SetResult(res)
			if res.Truncated {
				s.browseStatus.SetText(fmt.Sprintf("%s: the first %s of %s rows", table, formatCount(int64(len(res.Rows))), formatCount(total)))
			} else {
				s.browseStatus.SetText(fmt.Sprintf("%s: %s rows", table, formatCount(int64(len(res.Rows)))))
			}
		})
	}()
}

// RunSQL runs query on the selected source through the read-only runner
// and shows the result, its row count, time and any truncation.
func (s *DataScreen) RunSQL(query string) {
	if s.source < 0 {
		s.resultStatus.SetText("Select a data source first.")
		return
	}
	src := s.sources[s.source]
	ctx, cancel := context.WithCancel(s.ctx)
	s.runCancel = cancel
	s.runBtn.Disable()
	s.cancelBtn.Enable()
	s.resultStatus.SetText("Running…")
	s.tabs.SelectIndex(1)
	go func() {
		res, err := s.data.Query(ctx, src, query, datasets.RunnerOptions{})
		cancel()
		fyne.Do(func() {
			s.runBtn.Enable()
			s.cancelBtn.Disable()
			s.runCancel = nil
			if err != nil {
				s.lastResult = nil
				s.exportBtn.Disable()
				s.result.SetResult(nil)
				if errors.Is(err, context.Canceled) {
					s.resultStatus.SetText("Cancelled.")
				} else {
					s.resultStatus.SetText("Error: " + err.Error())
				}
				return
			}
			s.lastResult, s.lastSQL = res, query
			s.exportBtn.Enable()
			s.result.SetResult(res)
			s.resultStatus.SetText(resultSummary(res))
		})
	}()
}

// resultSummary describes a result: rows, time and the truncation notice.
func resultSummary(res *datasets.Result) string {
	msg := fmt.Sprintf("%s rows · %s", formatCount(int64(len(res.Rows))), durfmt.Human(res.Elapsed))
	if cells := disclosure.Cells(res); len(cells) > 0 { // an aggregate-only source's small cells
		msg += fmt.Sprintf(" · %d cells shown as %v (small-cell suppression)", len(cells), res.Rows[cells[0].Row][cells[0].Col])
	}
	if n := res.Notice(); n != "" {
		msg += "\nTruncated: " + n
		if res.TruncatedBy == datasets.CapRows {
			msg += fmt.Sprintf(" Narrow the query or raise the row cap (%s) in Settings.", formatCount(int64(res.Limits.MaxRows)))
		}
	}
	return msg
}

// ExportResult writes the last SQL result to an Excel workbook at path,
// with progress and Cancel, under the source's disclosure policy: a
// patient-level result is exported after the user confirms it
// (export_confirm.go).
func (s *DataScreen) ExportResult(path string) {
	s.exportResult(path, app.ExportOptions{Exact: s.exportExact.Checked})
}

func (s *DataScreen) exportResult(path string, opts app.ExportOptions) {
	res, query := s.lastResult, s.lastSQL
	if res == nil {
		return
	}
	src := s.sources[s.source]
	prov := export.Provenance{AppVersion: s.version, DataSource: s.data.Describe(src), Query: query, Created: time.Now()}
	prov.Add("Data source name", src.Name)
	var written int64
	runTask(s.ctx, s.window, "Export to Excel", func(ctx context.Context, report progress.Func) error {
		total := int64(len(res.Rows)) // the rows shown; the export reads the query's rows again, from the database
		opts.Source, opts.Query = src, query
		opts.Progress = func(n int64) {
			report(progress.Report{Stage: "Writing " + path, Done: n, Total: max(total, n), Unit: "rows"})
		}
		qe, err := s.data.ExportQuery(ctx, path, src, query, datasets.RunnerOptions{}, prov, opts)
		written = qe.Summary.Rows
		return err
	}, func(err error) {
		if pl := patientLevelOf(err); pl != nil && !opts.PatientLevel {
			confirmPatientLevel(s.window, pl, func(shift bool) {
				s.exportResult(path, app.ExportOptions{PatientLevel: true, ShiftDates: shift, Exact: opts.Exact})
			})
			return
		}
		if err != nil {
			showError(s.window, err)
			return
		}
		s.resultStatus.SetText(resultSummary(res) + fmt.Sprintf("\nExported %s rows to %s", formatCount(written), path))
		dialog.ShowInformation("Export to Excel", fmt.Sprintf("Wrote %s rows to %s", formatCount(written), path), s.window)
	})
}

// ImportCSV imports a CSV file into the workspace with progress and Cancel.
func (s *DataScreen) ImportCSV(path string) *task {
	return runTask(s.ctx, s.window, "Import CSV", func(ctx context.Context, report progress.Func) error {
		_, err := s.data.ImportCSV(ctx, path, datasets.CSVOptions{Progress: report})
		return err
	}, s.afterImport)
}

// ImportMIMIC imports a MIMIC-IV folder into the workspace.
func (s *DataScreen) ImportMIMIC(dir string) *task {
	return runTask(s.ctx, s.window, "Import MIMIC-IV", func(ctx context.Context, report progress.Func) error {
		_, err := s.data.ImportMIMIC(ctx, dir, datasets.MIMICOptions{Progress: report})
		return err
	}, s.afterImport)
}

// AddSQLite registers an existing SQLite file, read-only.
func (s *DataScreen) AddSQLite(path string) {
	go func() {
		_, err := s.data.AddSQLite(s.ctx, path, "")
		fyne.Do(func() { s.afterImport(err) })
	}()
}

func (s *DataScreen) afterImport(err error) {
	if err != nil {
		showError(s.window, err)
	}
	s.Refresh()
}

func (s *DataScreen) chooseCSV() {
	chooseOpenFile(s.window, []string{".csv", ".gz"}, func(path string) { s.ImportCSV(path) })
}

func (s *DataScreen) chooseMIMIC() {
	dialog.ShowFolderOpen(func(u fyne.ListableURI, err error) {
		if err != nil || u == nil {
			showError(s.window, err)
			return
		}
		s.ImportMIMIC(u.Path())
	}, s.window)
}

func (s *DataScreen) chooseSQLite() {
	chooseOpenFile(s.window, []string{".sqlite", ".sqlite3", ".db"}, s.AddSQLite)
}

func (s *DataScreen) chooseExport() {
	chooseSaveFile(s.window, "clinsight-result.xlsx", s.ExportResult)
}

// formatCount prints n with thousands separators.
func formatCount(n int64) string {
	s := strconv.FormatInt(n, 10)
	neg := n < 0
	if neg {
		s = s[1:]
	}
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

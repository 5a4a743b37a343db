package ui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/internal/progress"
)

// The Cohort screen's "Table 1" and "Saved cohorts" tabs (issue 19 items 2
// and 3): the baseline characteristics of the answer's patients, and the
// saved cohort definitions, run again, exported and imported. They appear
// when the screen's service also offers app.CohortDefinitionsService.

// Strata offered for Table 1.
var table1Strata = []string{"No strata", "By sex", "Cohort vs the rest"}

// cohortExtras holds the two tabs' widgets and state (UI goroutine only).
type cohortExtras struct {
	s    *CohortScreen
	defs app.CohortDefinitionsService

	strata   *widget.Select
	t1Btn    *widget.Button
	t1Export *widget.Button
	t1Status *widget.Label
	t1Table  *widget.Table
	t1Header []string
	t1Rows   [][]string
	t1       *cohort.Table1
	t1Query  string
	t1Source app.Source
	t1Tab    *container.TabItem

	saveName    *widget.Entry
	saveBtn     *widget.Button
	rerunBtn    *widget.Button
	regenBtn    *widget.Button
	loadBtn     *widget.Button
	t1SavedBtn  *widget.Button
	fileExport  *widget.Button
	fileImport  *widget.Button
	savedList   *widget.List
	savedStatus *widget.Label
	saved       []cohort.Definition
	selected    int
}

// addCohortExtras appends the Table 1 and Saved cohorts tabs to the
// screen when its service offers them.
func (s *CohortScreen) addCohortExtras() {
	defs, ok := s.cohorts.(app.CohortDefinitionsService)
	if !ok {
		return
	}
	x := &cohortExtras{s: s, defs: defs, selected: -1}
	s.extras = x
	x.t1Tab = container.NewTabItem("Table 1", x.table1Panel())
	s.tabs.Append(x.t1Tab)
	s.tabs.Append(container.NewTabItem("Saved cohorts", x.savedPanel()))
	x.reloadSaved()
}

func (x *cohortExtras) table1Panel() fyne.CanvasObject {
	x.strata = widget.NewSelect(table1Strata, nil)
	x.strata.SetSelectedIndex(0)
	x.t1Btn = widget.NewButtonWithIcon("Describe the patients", theme.ViewRefreshIcon(), func() { x.ComputeTable1(x.strata.Selected) })
	x.t1Export = widget.NewButtonWithIcon("Export Table 1…", theme.DocumentSaveIcon(), func() {
		chooseSaveFile(x.s.window, "clinsight-table1.xlsx", x.ExportTable1)
	})
	x.t1Export.Disable()
	x.t1Status = widget.NewLabel("Table 1 describes the patients of the answer's result (it needs a column that identifies patients, such as subject_id).")
	x.t1Status.Wrapping = fyne.TextWrapWord
	x.t1Table = newCellsTable(func() []string { return x.t1Header }, func() [][]string { return x.t1Rows })
	bar := container.NewHBox(widget.NewLabel("Strata"), x.strata, x.t1Btn, x.t1Export)
	return container.NewBorder(container.NewVBox(bar, x.t1Status), nil, nil, nil, x.t1Table)
}

// stratifyOf maps a strata choice to Table1Options.Stratify.
func stratifyOf(choice string) string {
	switch choice {
	case table1Strata[1]:
		return cohort.StratifySex
	case table1Strata[2]:
		return cohort.StratifyCohort
	}
	return ""
}

// ComputeTable1 describes the patients of the last answer, with progress
// and Cancel.
func (x *cohortExtras) ComputeTable1(strata string) {
	ans := x.s.last
	if ans == nil || strings.TrimSpace(ans.SQL) == "" {
		x.t1Status.SetText("Ask a question first: Table 1 describes the patients of its result.")
		return
	}
	src, ok := x.s.sourceNamed(x.s.source)
	if !ok {
		x.t1Status.SetText("Choose a data source first.")
		return
	}
	x.computeTable1(src, ans.SQL, strata)
}

// computeTable1 describes the patients a statement selects on src.
func (x *cohortExtras) computeTable1(src app.Source, query, strata string) {
	opts := cohort.Table1Options{Stratify: stratifyOf(strata)}
	var t *cohort.Table1
	var k int
	runTask(x.s.ctx, x.s.window, "Table 1", func(ctx context.Context, report progress.Func) error {
		report(progress.Report{Stage: "Reading the patients' characteristics from " + src.Label()})
		var err error
		t, err = x.defs.Table1(ctx, src, query, opts)
		k = x.defs.Table1MinCell(src)
		return err
	}, func(err error) {
		if err != nil {
			x.t1Status.SetText("Table 1 could not be made: " + err.Error())
			return
		}
		x.showTable1(t, k, src, query)
	})
}

func (x *cohortExtras) showTable1(t *cohort.Table1, k int, src app.Source, query string) {
	x.t1, x.t1Source, x.t1Query = t, src, query
	x.t1Header, x.t1Rows = t.Cells(k)
	x.t1Table.SetColumnWidth(0, 380)
	for i := 1; i < len(x.t1Header); i++ {
		x.t1Table.SetColumnWidth(i, 170)
	}
	x.t1Table.Refresh()
	n := formatCount(t.Patients)
	if k >= 2 && t.Patients < int64(k) { // an aggregate-only source's small cohort
		n = fmt.Sprintf("<%d", k)
	}
	msg := fmt.Sprintf("%s patients (by %s).", n, t.PatientColumn)
	if k >= 2 {
		msg += fmt.Sprintf(" The source shows aggregates only: counts below %d are shown as <%d.", k, k)
	}
	if len(t.Notes) > 0 {
		msg += " " + strings.Join(t.Notes, " ")
	}
	x.t1Status.SetText(msg)
	x.t1Export.Enable()
}

// ExportTable1 writes the shown Table 1 to a workbook at path.
func (x *cohortExtras) ExportTable1(path string) {
	t, src, query := x.t1, x.t1Source, x.t1Query
	if t == nil {
		return
	}
	runTask(x.s.ctx, x.s.window, "Export Table 1", func(ctx context.Context, report progress.Func) error {
		report(progress.Report{Stage: "Writing " + path})
		_, err := x.defs.ExportTable1(ctx, path, src, query, t)
		return err
	}, func(err error) {
		if err != nil {
			showError(x.s.window, err)
			return
		}
		x.t1Status.SetText("Exported Table 1 to " + path + " (counts below the minimum cell size shown as <11).")
	})
}

func (x *cohortExtras) savedPanel() fyne.CanvasObject {
	x.saveName = widget.NewEntry()
	x.saveName.SetPlaceHolder("Name of the cohort (default: the question)")
	x.saveBtn = widget.NewButtonWithIcon("Save the current cohort", theme.DocumentSaveIcon(), func() { x.SaveDefinition(x.saveName.Text) })
	x.rerunBtn = widget.NewButtonWithIcon("Run again", theme.MediaReplayIcon(), func() { x.RerunSelected() })
	x.regenBtn = widget.NewButtonWithIcon("Ask again", theme.ViewRefreshIcon(), func() { x.RegenerateSelected() })
	x.loadBtn = widget.NewButtonWithIcon("Show its SQL", theme.DocumentIcon(), x.loadSelected)
	x.t1SavedBtn = widget.NewButtonWithIcon("Table 1", theme.GridIcon(), x.Table1OfSelected)
	x.fileExport = widget.NewButtonWithIcon("Export file…", theme.UploadIcon(), func() {
		if d, ok := x.selectedDef(); ok {
			chooseSaveFile(x.s.window, d.ID+".json", func(path string) { x.ExportDefinition(d.ID, path) })
		}
	})
	x.fileImport = widget.NewButtonWithIcon("Import file…", theme.DownloadIcon(), func() {
		chooseOpenFile(x.s.window, []string{".json"}, func(path string) { x.ImportDefinition(path, "") })
	})
	x.savedStatus = widget.NewLabel("Save a cohort to run it again later or to send it to a colleague.")
	x.savedStatus.Wrapping = fyne.TextWrapWord
	x.savedList = widget.NewList(
		func() int { return len(x.saved) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("cohort")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.ListItemID, o fyne.CanvasObject) {
			d := x.saved[id]
			text := fmt.Sprintf("%s — %s, %s (saved %s: %s)", d.Name, d.ID, d.Source.Name, d.Created.Local().Format("2006-01-02"), definitionCounts(d.Counts))
			if n := len(d.Runs); n > 0 {
				text += "; last run " + definitionCounts(d.Runs[n-1].Counts)
			}
			o.(*widget.Label).SetText(text)
		},
	)
	x.savedList.OnSelected = func(id widget.ListItemID) { x.selected = id; x.enableSaved() }
	x.savedList.OnUnselected = func(widget.ListItemID) { x.selected = -1; x.enableSaved() }
	x.enableSaved()
	top := container.NewVBox(
		container.NewBorder(nil, nil, nil, x.saveBtn, x.saveName),
		container.NewGridWrap(fyne.NewSize(150, 36), x.rerunBtn, x.regenBtn, x.t1SavedBtn, x.loadBtn, x.fileExport, x.fileImport),
		x.savedStatus,
	)
	return container.NewBorder(top, nil, nil, nil, x.savedList)
}

func definitionCounts(c cohort.DefinitionCounts) string { return c.Text() }

func (x *cohortExtras) enableSaved() {
	for _, b := range []*widget.Button{x.rerunBtn, x.regenBtn, x.t1SavedBtn, x.loadBtn, x.fileExport} {
		if _, ok := x.selectedDef(); ok {
			b.Enable()
		} else {
			b.Disable()
		}
	}
}

func (x *cohortExtras) selectedDef() (cohort.Definition, bool) {
	if x.selected < 0 || x.selected >= len(x.saved) {
		return cohort.Definition{}, false
	}
	return x.saved[x.selected], true
}

// reloadSaved lists the saved definitions off the UI goroutine.
func (x *cohortExtras) reloadSaved() {
	ctx := x.s.ctx
	go func() {
		defs, problems, err := x.defs.List(ctx)
		fyne.Do(func() {
			if err != nil {
				x.savedStatus.SetText(err.Error())
				return
			}
			x.saved, x.selected = defs, -1
			x.savedList.UnselectAll()
			x.savedList.Refresh()
			x.enableSaved()
			if len(problems) > 0 {
				x.savedStatus.SetText(fmt.Sprintf("%d saved cohort file(s) could not be read and were left as they are: %v", len(problems), problems[0]))
			}
		})
	}()
}

// SaveDefinition saves the last answer's cohort.
func (x *cohortExtras) SaveDefinition(name string) {
	ans := x.s.last
	if ans == nil || strings.TrimSpace(ans.SQL) == "" {
		x.savedStatus.SetText("Ask a question first: the cohort saved is the answer's.")
		return
	}
	src, ok := x.s.sourceNamed(x.s.source)
	if !ok {
		x.savedStatus.SetText("Choose a data source first.")
		return
	}
	var d cohort.Definition
	runTask(x.s.ctx, x.s.window, "Save the cohort", func(ctx context.Context, report progress.Func) error {
		report(progress.Report{Stage: "Counting the cohort"})
		var err error
		d, err = x.defs.Save(ctx, src, ans, name)
		return err
	}, func(err error) {
		if err != nil {
			x.savedStatus.SetText("The cohort could not be saved: " + err.Error())
			return
		}
		x.savedStatus.SetText(fmt.Sprintf("Saved %q: %s.", d.Name, definitionCounts(d.Counts)))
		x.saveName.SetText("")
		x.reloadSaved()
	})
}

// RerunSelected runs the selected definition again.
func (x *cohortExtras) RerunSelected() {
	d, ok := x.selectedDef()
	if !ok {
		return
	}
	x.RerunDefinition(d.ID)
}

// RerunDefinition runs a saved definition again and shows how its counts
// changed since it was saved.
func (x *cohortExtras) RerunDefinition(id string) {
	var rr cohort.Rerun
	runTask(x.s.ctx, x.s.window, "Run the cohort again", func(ctx context.Context, report progress.Func) error {
		report(progress.Report{Stage: "Running " + id})
		var err error
		rr, err = x.defs.Rerun(ctx, id)
		return err
	}, func(err error) {
		if err != nil {
			x.savedStatus.SetText("The cohort could not be run again: " + err.Error())
			return
		}
		x.savedStatus.SetText(fmt.Sprintf("%s, since it was saved on %s: %s.", rr.Definition.Name, rr.Definition.Created.Local().Format("2006-01-02"), rr.Changes()))
		x.reloadSaved()
	})
}

// RegenerateSelected asks the selected definition's question again: the
// model writes a new statement, which is counted and put in the SQL box;
// the saved statement is kept.
func (x *cohortExtras) RegenerateSelected() {
	d, ok := x.selectedDef()
	if !ok {
		return
	}
	var rr cohort.Rerun
	runTask(x.s.ctx, x.s.window, "Ask the question again", func(ctx context.Context, report progress.Func) error {
		report(progress.Report{Stage: "Asking again: " + d.Question})
		var err error
		rr, _, err = x.defs.Regenerate(ctx, d.ID, app.CohortOptions{})
		return err
	}, func(err error) {
		if err != nil {
			showError(x.s.window, err)
			return
		}
		if d.Source.Name != x.s.source {
			x.s.sourceSel.SetSelected(d.Source.Name)
		}
		x.s.sqlEntry.SetText(rr.SQL)
		what := "The model wrote the same statement"
		if rr.Regenerated {
			what = "The model wrote a new statement (in the SQL box; the saved one is kept)"
		}
		x.savedStatus.SetText(fmt.Sprintf("%s. %s, since it was saved on %s: %s.", what, rr.Definition.Name, rr.Definition.Created.Local().Format("2006-01-02"), rr.Changes()))
		x.reloadSaved()
	})
}

// Table1OfSelected describes the patients of the selected saved cohort
// on its data source and shows the Table 1 tab.
func (x *cohortExtras) Table1OfSelected() {
	d, ok := x.selectedDef()
	if !ok {
		return
	}
	src, ok := x.s.sourceNamed(d.Source.Name)
	if !ok {
		x.savedStatus.SetText(fmt.Sprintf("This workspace has no data source %q.", d.Source.Name))
		return
	}
	x.s.tabs.Select(x.t1Tab)
	x.computeTable1(src, d.SQL, x.strata.Selected)
}

// loadSelected puts the selected definition's SQL in the SQL box, to run
// or edit on its data source.
func (x *cohortExtras) loadSelected() {
	d, ok := x.selectedDef()
	if !ok {
		return
	}
	if d.Source.Name != x.s.source {
		x.s.sourceSel.SetSelected(d.Source.Name)
	}
	x.s.sqlEntry.SetText(d.SQL)
	x.savedStatus.SetText(fmt.Sprintf("The SQL of %q is in the SQL box: Run SQL runs it on %s.", d.Name, d.Source.Name))
}

// ExportDefinition writes a saved definition to a file.
func (x *cohortExtras) ExportDefinition(id, path string) {
	runTask(x.s.ctx, x.s.window, "Export the cohort definition", func(ctx context.Context, _ progress.Func) error {
		return x.defs.ExportFile(ctx, id, path)
	}, func(err error) {
		if err != nil {
			showError(x.s.window, err)
			return
		}
		x.savedStatus.SetText("Wrote " + path + ": a colleague can import it and run it on their copy of the data.")
	})
}

// ImportDefinition imports a definition file; when the workspace has no
// source of the definition's name, it asks which source to run it on.
func (x *cohortExtras) ImportDefinition(path, source string) {
	var d cohort.Definition
	runTask(x.s.ctx, x.s.window, "Import a cohort definition", func(ctx context.Context, _ progress.Func) error {
		var err error
		d, err = x.defs.ImportFile(ctx, path, source)
		return err
	}, func(err error) {
		var se *app.DefinitionSourceError
		switch {
		case errors.As(err, &se) && len(se.Available) > 0:
			x.askSource(path, se)
		case err != nil:
			x.savedStatus.SetText("The file was not imported: " + err.Error())
		default:
			x.savedStatus.SetText(fmt.Sprintf("Imported %q to run on %s (where it was made: %s). Select it and Run again.", d.Name, d.Source.Name, definitionCounts(d.Counts)))
			x.reloadSaved()
		}
	})
}

// askSource asks which data source an imported definition runs on.
func (x *cohortExtras) askSource(path string, se *app.DefinitionSourceError) {
	sel := widget.NewSelect(se.Available, nil)
	sel.SetSelectedIndex(0)
	body := container.NewVBox(widget.NewLabel(fmt.Sprintf("The cohort was made on %q. Run it on:", se.Wanted)), sel)
	dialog.ShowCustomConfirm("Choose the data source", "Import", "Cancel", body, func(ok bool) {
		if ok && sel.Selected != "" {
			x.ImportDefinition(path, sel.Selected)
		}
	}, x.s.window)
}

package ui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	"image/png"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/app/meta"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/progress"
)

// evidenceSaveDelay is how long the screen waits after an edit before it
// saves the project, so that typing does not write the file at every key.
const evidenceSaveDelay = 600 * time.Millisecond

// searchLimits are the numbers of best-ranked records a search may keep as
// candidates for screening.
var searchLimits = []string{"20", "50", "100", "200", "500", "1000"}

// defaultSearchLimit is the candidates kept unless the user chooses.
const defaultSearchLimit = "200"

// exclusionReasons are the reasons offered when excluding a study (the
// user may type another).
var exclusionReasons = []string{
	"Wrong population", "Wrong intervention", "Wrong comparator", "Wrong outcome",
	"Wrong study design", "Not a primary study", "Duplicate report", "No usable data",
}

// resultShapes are the result shapes offered on the Results step, with
// their labels.
var resultShapes = []struct {
	measure evidence.Measure
	label   string
}{
	{evidence.TwoGroups, "Two groups: events and totals (OR, RR, RD)"},
	{evidence.SingleArm, "Single arm: events and total (rates: PR, PLO, PFT)"},
	{evidence.MeansSDs, "Two groups: means and SDs (MD, SMD)"},
	{evidence.RatioCI, "Reported ratio with its 95% CI (HR, OR, RR)"},
}

// EvidenceScreen runs a systematic review as a project of steps: PICO →
// Search → Screen → Extract → Results → Meta-analysis. Every intermediate
// output (terms, query, criteria, verdicts, values, numbers) is shown for
// the user to check and edit; every change is saved in the workspace, so a
// review can be resumed; the model steps run with progress and Cancel and
// leave the project unchanged when they fail. Export writes the whole
// review to one workbook.
type EvidenceScreen struct {
	ctx     context.Context
	ws      *app.Workspace
	window  fyne.Window
	version string

	// Top bar.
	projectSel *widget.Select
	newBtn     *widget.Button
	importBtn  *widget.Button
	exportBtn  *widget.Button
	saveState  *widget.Label
	notice     *widget.Label
	steps      *container.AppTabs
	content    fyne.CanvasObject

	// PICO.
	pico            [4]*widget.Entry // population, intervention, comparison, outcome
	suggestTermsBtn *widget.Button

	// Search.
	terms        [3]*widget.Entry // conditions, treatments, outcomes
	buildBtn     *widget.Button
	query        *widget.Entry
	queryErr     *widget.Label
	limitSel     *widget.Select
	searchBtn    *widget.Button
	searchStatus *widget.Label
	candidates   *widget.Table

	// Screen.
	criteriaBox        *fyne.Container
	criterionText      []*widget.Entry // the criteria's text entries, in order
	addCriterionBtn    *widget.Button
	suggestCriteriaBtn *widget.Button
	screenBtn          *widget.Button
	screenStatus       *widget.Label
	screenTable        *widget.Table
	studyDetail        *widget.RichText
	includeBtn         *widget.Button
	excludeBtn         *widget.Button
	undecideBtn        *widget.Button
	prismaCounts       *widget.Label
	prismaImg          *canvas.Image

	// Extract.
	fieldsBox      *fyne.Container
	fieldEntries   [][2]*widget.Entry // each field's name and description entries
	addFieldBtn    *widget.Button
	extractBtn     *widget.Button
	extractStatus  *widget.Label
	extractStudy   *widget.Select
	valuesBox      *fyne.Container
	valueEntries   map[string]*widget.Entry // the shown study's value entries, by field name
	valueFlags     map[string]*widget.Label // and their flags
	extractStudies []string                 // the included studies offered, in order

	// Results.
	outcome        *widget.Entry
	cohort         *widget.Entry
	shapeSel       *widget.Select
	resultsBtn     *widget.Button
	editGroupBtn   *widget.Button
	resultsStatus  *widget.Label
	groupsTable    *widget.Table
	standardTable  *widget.Table
	standardCols   []tableColumn
	problems       *widget.Label
	groupRows      []groupRow
	selectedGroup  int
	standardRows   []evidence.StandardRow
	resultProblems []string

	// Meta-analysis.
	measureSel  *widget.Select
	methodSel   *widget.Select
	hk          *widget.Check
	runMetaBtn  *widget.Button
	metaStatus  *widget.Label
	forest      *canvas.Image
	metaSummary *widget.Label
	measures    []meta.Measure
	methods     []meta.Method

	// Owned by the UI goroutine.
	projects     []string
	sources      []string
	project      *evidence.Project
	texts        map[string]evidence.StudyText // study texts loaded, by record ID
	loadingTexts map[string]bool
	screenRows   []string // the record IDs of the screening table, in order
	selected     string   // the study shown on the Screen step
	running      *task    // the model step in progress, nil when idle
	updating     bool     // widgets are being filled by the screen itself
	saveTimer    *time.Timer
	saveSeq      int // saves asked for
	savedSeq     int // saves finished
	prismaGen    int

	saveMu      sync.Mutex
	lastWritten int // the newest save written, guarded by saveMu

	opCounter
}

// groupRow is a row of the Results step's groups table: a study's group,
// or its reported effect (group -1).
type groupRow struct {
	id    string
	group int
}

// NewEvidenceScreen builds the Evidence screen; call Refresh to list the
// review projects and the literature sources.
func NewEvidenceScreen(ctx context.Context, ws *app.Workspace, w fyne.Window, version string) *EvidenceScreen {
	s := &EvidenceScreen{ctx: ctx, ws: ws, window: w, version: version, selectedGroup: -1,
		texts: map[string]evidence.StudyText{}, loadingTexts: map[string]bool{}}

	s.projectSel = widget.NewSelect(nil, s.projectChosen)
	s.projectSel.PlaceHolder = "(review project)"
	s.newBtn = widget.NewButtonWithIcon("New…", theme.ContentAddIcon(), func() {
		go func() { // the sources may have changed since the screen opened
			sources := s.ws.LiteratureSources(s.ctx)
			fyne.Do(func() {
				s.sources = sources
				s.showNewDialog()
			})
		}()
	})
	s.importBtn = widget.NewButtonWithIcon("Import…", theme.FolderOpenIcon(), func() {
		chooseOpenFile(s.window, literatureExts, s.ImportLiterature)
	})
	s.exportBtn = widget.NewButtonWithIcon("Export workbook…", theme.DocumentSaveIcon(), func() {
		if s.project != nil {
			chooseSaveFile(s.window, s.project.Name+".xlsx", s.ExportWorkbook)
		}
	})
	s.saveState = widget.NewLabel("")
	s.saveState.Truncation = fyne.TextTruncateEllipsis
	s.notice = widget.NewLabel("")
	s.notice.Wrapping = fyne.TextWrapWord
	s.notice.Importance = widget.WarningImportance
	s.notice.Hide()

	s.steps = container.NewAppTabs(
		container.NewTabItem(evidence.StepPICO, s.buildPICO()),
		container.NewTabItem(evidence.StepSearch, s.buildSearch()),
		container.NewTabItem(evidence.StepScreen, s.buildScreen()),
		container.NewTabItem(evidence.StepExtract, s.buildExtract()),
		container.NewTabItem(evidence.StepResults, s.buildResults()),
		container.NewTabItem(evidence.StepMeta, s.buildMeta()),
	)
	s.steps.OnSelected = func(*container.TabItem) { s.stepShown() }

	sel := container.NewGridWrap(fyne.NewSize(220, s.projectSel.MinSize().Height), s.projectSel)
	top := container.NewVBox(
		container.NewBorder(nil, nil, container.NewHBox(bold("Review"), sel, s.newBtn, s.importBtn, s.exportBtn), nil, s.saveState),
		s.notice,
	)
	s.content = container.NewBorder(top, nil, nil, nil, s.steps)
	s.setProject(nil)
	return s
}

// Content returns the screen's root object.
func (s *EvidenceScreen) Content() fyne.CanvasObject { return s.content }

// literatureExts are the files Import offers: records (PubMed XML, MEDLINE,
// RIS, CSV) and full texts (JATS XML, plain text, PDF).
var literatureExts = []string{".xml", ".nbib", ".txt", ".ris", ".csv", ".pdf"}

// ImportLiterature imports a literature file or a full text into the
// workspace's "literature" source, with progress and Cancel, and says what
// it added.
func (s *EvidenceScreen) ImportLiterature(path string) {
	if s.running != nil {
		return
	}
	var summary string
	s.running = runTask(s.ctx, s.window, "Import literature", func(ctx context.Context, report progress.Func) error {
		n, err := s.ws.ImportLiteratureToWorkspace(ctx, []string{path}, evidence.ImportOptions{Progress: report}, func(res evidence.ImportResult) {
			summary = fmt.Sprintf("%s: %d records (%d new, %d updated)", res.Format, res.Records, res.Added, res.Updated)
			if len(res.FullTexts) > 0 {
				chunks := 0
				for _, ft := range res.FullTexts {
					chunks += ft.Chunks
				}
				summary = fmt.Sprintf("%s: %d full texts in %d passages", res.Format, len(res.FullTexts), chunks)
			}
		})
		if err == nil {
			summary += fmt.Sprintf(". The source %q now holds %d records.", app.LiteratureSourceName, n)
		}
		return err
	}, func(err error) {
		defer s.done()
		s.running = nil
		if err != nil {
			showError(s.window, err)
			return
		}
		s.texts = map[string]evidence.StudyText{} // a full text may replace an abstract
		go func() {
			sources := s.ws.LiteratureSources(s.ctx)
			fyne.Do(func() { s.sources = sources })
		}()
		dialog.ShowInformation("Import literature", "Imported "+summary+" Start a review on it with New….", s.window)
	})
}

// --- building the steps ---

func (s *EvidenceScreen) buildPICO() fyne.CanvasObject {
	labels := []string{"Population (P)", "Intervention (I)", "Comparison (C)", "Outcome (O)"}
	places := []string{
		"Who is studied, e.g. patients with hepatocellular carcinoma",
		"The treatment or exposure, e.g. microwave ablation",
		"The comparator, if any, e.g. radiofrequency ablation",
		"What is measured, e.g. local tumor progression",
	}
	form := widget.NewForm()
	for i := range s.pico {
		e := widget.NewMultiLineEntry()
		e.Wrapping = fyne.TextWrapWord
		e.SetMinRowsVisible(2)
		e.SetPlaceHolder(places[i])
		e.OnChanged = func(string) { s.picoChanged() }
		s.pico[i] = e
		form.Append(labels[i], e)
	}
	s.suggestTermsBtn = widget.NewButtonWithIcon("Suggest search terms", theme.SearchIcon(), s.SuggestTerms)
	s.suggestTermsBtn.Importance = widget.HighImportance
	return container.NewVScroll(container.NewVBox(
		hint("The review question. At least a population or an intervention is needed; the other elements sharpen the search, the criteria and the extraction."),
		form,
		container.NewHBox(s.suggestTermsBtn),
		hint("The chat model proposes search terms from the question (shown on the Search step for you to edit). Without a model, type the terms yourself on the Search step."),
	))
}

func (s *EvidenceScreen) buildSearch() fyne.CanvasObject {
	labels := []string{"Condition terms", "Treatment terms", "Outcome terms"}
	places := []string{"one term per line, e.g.\nhepatocellular carcinoma\nHCC", "one term per line, e.g.\nmicrowave ablation\nMWA", "optional; leave empty for better recall"}
	form := widget.NewForm()
	for i := range s.terms {
		e := widget.NewMultiLineEntry()
		e.SetMinRowsVisible(3)
		e.SetPlaceHolder(places[i])
		e.OnChanged = func(string) { s.termsChanged() }
		s.terms[i] = e
		form.Append(labels[i], e)
	}
	s.buildBtn = widget.NewButtonWithIcon("Build the query from the terms", theme.MoveDownIcon(), s.BuildQuery)
	s.query = widget.NewMultiLineEntry()
	s.query.Wrapping = fyne.TextWrapWord
	s.query.SetMinRowsVisible(3)
	s.query.SetPlaceHolder(`PubMed syntax: (hepatocellular carcinoma OR HCC) AND "microwave ablation"[tiab] NOT review[pt]`)
	s.query.OnChanged = func(string) { s.queryChanged() }
	s.queryErr = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	s.queryErr.Importance = widget.DangerImportance
	s.queryErr.Hide()
	s.limitSel = widget.NewSelect(searchLimits, nil)
	s.limitSel.SetSelected(defaultSearchLimit)
	s.searchBtn = widget.NewButtonWithIcon("Search", theme.SearchIcon(), s.Search)
	s.searchBtn.Importance = widget.HighImportance
	s.searchStatus = widget.NewLabel("")
	s.searchStatus.Wrapping = fyne.TextWrapWord
	s.candidates = newTextTable([]tableColumn{{"#", 50}, {"Study", 150}, {"Year", 55}, {"Title", 420}},
		func() int {
			if s.project == nil || s.project.Search == nil {
				return 0
			}
			return len(s.project.Search.IDs)
		}, s.candidateCell)

	left := container.NewVBox(
		form,
		container.NewHBox(s.buildBtn),
		bold("Query"),
		s.query,
		s.queryErr,
		container.NewHBox(widget.NewLabel("Keep the best"), s.limitSel, s.searchBtn),
		s.searchStatus,
	)
	split := container.NewHSplit(container.NewScroll(left),
		container.NewBorder(bold("Candidates (best match first)"), nil, nil, nil, s.candidates))
	split.Offset = 0.45
	return split
}

func (s *EvidenceScreen) buildScreen() fyne.CanvasObject {
	s.criteriaBox = container.NewVBox()
	s.addCriterionBtn = widget.NewButtonWithIcon("Add criterion", theme.ContentAddIcon(), s.AddCriterion)
	s.suggestCriteriaBtn = widget.NewButtonWithIcon("Suggest criteria", theme.HelpIcon(), s.SuggestCriteria)
	s.screenBtn = widget.NewButtonWithIcon("Screen", theme.MediaPlayIcon(), s.Screen)
	s.screenBtn.Importance = widget.HighImportance
	s.screenStatus = widget.NewLabel("")
	s.screenStatus.Wrapping = fyne.TextWrapWord
	s.prismaCounts = widget.NewLabel("")
	s.prismaCounts.Wrapping = fyne.TextWrapWord
	s.prismaImg = canvas.NewImageFromImage(nil)
	s.prismaImg.FillMode = canvas.ImageFillContain
	s.prismaImg.SetMinSize(fyne.NewSize(300, 330))

	s.screenTable = widget.NewTable(
		func() (int, int) { return len(s.screenRows), len(s.screenColumns()) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.TableCellID, o fyne.CanvasObject) {
			l := o.(*widget.Label)
			l.Text, l.Importance = s.screenCell(id.Row, id.Col)
			l.Refresh()
		},
	)
	s.screenTable.ShowHeaderRow = true
	s.screenTable.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	s.screenTable.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if cols := s.screenColumns(); id.Col >= 0 && id.Col < len(cols) {
			o.(*widget.Label).SetText(cols[id.Col].title)
		}
	}
	s.screenTable.OnSelected = func(id widget.TableCellID) {
		if id.Row >= 0 && id.Row < len(s.screenRows) {
			s.ShowStudy(s.screenRows[id.Row])
		}
	}
	s.studyDetail = widget.NewRichText()
	s.studyDetail.Wrapping = fyne.TextWrapWord
	s.includeBtn = widget.NewButtonWithIcon("Include", theme.ConfirmIcon(), func() { s.Decide(s.selected, true, "") })
	s.includeBtn.Importance = widget.SuccessImportance
	s.excludeBtn = widget.NewButtonWithIcon("Exclude…", theme.CancelIcon(), s.showExcludeDialog)
	s.excludeBtn.Importance = widget.DangerImportance
	s.undecideBtn = widget.NewButtonWithIcon("Undecide", theme.ContentUndoIcon(), s.Undecide)

	left := container.NewVBox(
		bold("Eligibility criteria"),
		hint("Each study gets YES (✓), NO (✗) or UNCERTAIN (?) per criterion. The score is the weighted mean of YES = 1, UNCERTAIN = 0, NO = −1 over the criteria switched on."),
		s.criteriaBox,
		container.NewHBox(s.addCriterionBtn, s.suggestCriteriaBtn),
		container.NewHBox(s.screenBtn),
		s.screenStatus,
		bold("PRISMA"),
		s.prismaCounts,
		s.prismaImg,
	)
	detail := container.NewBorder(nil, container.NewHBox(s.includeBtn, s.excludeBtn, s.undecideBtn), nil, nil,
		container.NewVScroll(s.studyDetail))
	right := container.NewVSplit(
		container.NewBorder(bold("Studies (best score first)"), nil, nil, nil, s.screenTable),
		detail)
	split := container.NewHSplit(container.NewScroll(left), right)
	split.Offset = 0.45
	return split
}

func (s *EvidenceScreen) buildExtract() fyne.CanvasObject {
	s.fieldsBox = container.NewVBox()
	s.addFieldBtn = widget.NewButtonWithIcon("Add field", theme.ContentAddIcon(), s.AddField)
	s.extractBtn = widget.NewButtonWithIcon("Extract", theme.MediaPlayIcon(), s.ExtractFields)
	s.extractBtn.Importance = widget.HighImportance
	s.extractStatus = widget.NewLabel("")
	s.extractStatus.Wrapping = fyne.TextWrapWord
	s.extractStudy = widget.NewSelect(nil, func(string) {
		if !s.updating {
			s.showValues()
		}
	})
	s.extractStudy.PlaceHolder = "(included study)"
	s.valuesBox = container.NewVBox()

	left := container.NewVBox(
		bold("Fields to extract"),
		hint("Describe each field in plain words. The model gives each value with the passages (chunks) it was read from, or NP when the study does not report it."),
		s.fieldsBox,
		container.NewHBox(s.addFieldBtn, s.extractBtn),
		s.extractStatus,
	)
	right := container.NewBorder(
		container.NewVBox(bold("Values of the included study"), s.extractStudy),
		nil, nil, nil, container.NewVScroll(s.valuesBox))
	split := container.NewHSplit(container.NewScroll(left), right)
	split.Offset = 0.38
	return split
}

func (s *EvidenceScreen) buildResults() fyne.CanvasObject {
	s.outcome = widget.NewEntry()
	s.outcome.SetPlaceHolder("e.g. local tumor progression")
	s.outcome.OnChanged = func(string) { s.resultSpecChanged() }
	s.cohort = widget.NewEntry()
	s.cohort.SetPlaceHolder("e.g. microwave ablation (treatment) vs radiofrequency ablation (control)")
	s.cohort.OnChanged = func(string) { s.resultSpecChanged() }
	labels := make([]string, len(resultShapes))
	for i, r := range resultShapes {
		labels[i] = r.label
	}
	s.shapeSel = widget.NewSelect(labels, func(string) { s.resultSpecChanged() })
	s.shapeSel.PlaceHolder = "(shape of the result)"
	s.resultsBtn = widget.NewButtonWithIcon("Extract results", theme.MediaPlayIcon(), s.ExtractResults)
	s.resultsBtn.Importance = widget.HighImportance
	s.editGroupBtn = widget.NewButtonWithIcon("Edit selected…", theme.DocumentCreateIcon(), s.showEditGroupDialog)
	s.editGroupBtn.Disable()
	s.resultsStatus = widget.NewLabel("")
	s.resultsStatus.Wrapping = fyne.TextWrapWord
	s.groupsTable = newTextTable([]tableColumn{{"Study", 140}, {"Group", 200}, {"Role", 80}, {"N", 70}, {"Events", 70}, {"%", 70}, {"Mean", 70}, {"SD", 70}, {"Chunks", 70}, {"Check", 170}},
		func() int { return len(s.groupRows) }, s.groupCell)
	s.groupsTable.OnSelected = func(id widget.TableCellID) {
		s.selectedGroup = id.Row
		s.editGroupBtn.Enable()
	}
	s.standardTable = widget.NewTable(
		func() (int, int) { return len(s.standardRows), len(s.standardCols) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.TableCellID, o fyne.CanvasObject) {
			o.(*widget.Label).SetText(s.standardCell(id.Row, id.Col))
		},
	)
	s.standardTable.ShowHeaderRow = true
	s.standardTable.CreateHeader = func() fyne.CanvasObject {
		return widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	}
	s.standardTable.UpdateHeader = func(id widget.TableCellID, o fyne.CanvasObject) {
		if id.Col >= 0 && id.Col < len(s.standardCols) {
			o.(*widget.Label).SetText(s.standardCols[id.Col].title)
		}
	}
	s.problems = widget.NewLabel("")
	s.problems.Wrapping = fyne.TextWrapWord
	s.problems.Importance = widget.WarningImportance

	form := widget.NewForm(
		widget.NewFormItem("Outcome", s.outcome),
		widget.NewFormItem("Cohort", s.cohort),
		widget.NewFormItem("Shape", s.shapeSel),
	)
	top := container.NewVBox(form, container.NewHBox(s.resultsBtn, s.editGroupBtn), s.resultsStatus)
	tables := container.NewVSplit(
		container.NewBorder(bold("Groups as extracted (⚠: the number is not in its cited chunks)"), nil, nil, nil, s.groupsTable),
		container.NewBorder(bold("Standardized table (computed, the input of the meta-analysis)"), s.problems, nil, nil, s.standardTable),
	)
	return container.NewBorder(top, nil, nil, nil, tables)
}

func (s *EvidenceScreen) buildMeta() fyne.CanvasObject {
	s.measureSel = widget.NewSelect(nil, func(string) { s.metaSettingsChanged() })
	s.measureSel.PlaceHolder = "(effect measure)"
	s.methodSel = widget.NewSelect(nil, func(string) { s.metaSettingsChanged() })
	s.methodSel.PlaceHolder = "(model)"
	s.hk = widget.NewCheck("Knapp–Hartung adjustment", func(bool) { s.metaSettingsChanged() })
	s.runMetaBtn = widget.NewButtonWithIcon("Run", theme.MediaPlayIcon(), s.RunMeta)
	s.runMetaBtn.Importance = widget.HighImportance
	s.metaStatus = widget.NewLabel("")
	s.metaStatus.Wrapping = fyne.TextWrapWord
	s.forest = canvas.NewImageFromImage(nil)
	s.forest.FillMode = canvas.ImageFillContain
	s.forest.ScaleMode = canvas.ImageScaleSmooth
	s.forest.SetMinSize(fyne.NewSize(320, 240))
	s.metaSummary = widget.NewLabel("")
	s.metaSummary.Wrapping = fyne.TextWrapWord

	top := container.NewVBox(
		container.NewGridWithColumns(2, s.measureSel, s.methodSel),
		container.NewHBox(s.hk, s.runMetaBtn),
		s.metaStatus,
	)
	split := container.NewHSplit(s.forest, container.NewVScroll(s.metaSummary))
	split.Offset = 0.62
	return container.NewBorder(top, nil, nil, nil, split)
}

// --- projects ---

// Refresh lists the review projects and the data sources (off the UI
// goroutine) and opens the first project when none is open.
func (s *EvidenceScreen) Refresh() {
	go func() {
		names, err := s.ws.ReviewProjects()
		sources := s.ws.LiteratureSources(s.ctx)
		fyne.Do(func() {
			defer s.done()
			if err != nil {
				s.setNotice("Could not list the review projects: " + err.Error())
				return
			}
			s.sources = sources
			s.setProjectOptions(names)
			if s.project == nil && len(names) > 0 {
				s.projectSel.SetSelected(names[0]) // opens it
			}
			if len(names) == 0 && s.project == nil {
				s.setNotice("No review project yet: click New… to start one on a literature source (the demo source holds demo literature), or Import… a PubMed, MEDLINE, RIS or CSV export first.")
			}
		})
	}()
}

// setProjectOptions shows the project names without opening one.
func (s *EvidenceScreen) setProjectOptions(names []string) {
	s.projects = names
	s.updating = true
	s.projectSel.SetOptions(names)
	s.updating = false
}

// projectChosen opens the project the user chose.
func (s *EvidenceScreen) projectChosen(name string) {
	if s.updating || name == "" || (s.project != nil && s.project.Name == name) {
		return
	}
	s.flushSave()
	s.OpenProject(name)
}

// OpenProject loads a saved project (off the UI goroutine) and shows it.
func (s *EvidenceScreen) OpenProject(name string) {
	go func() {
		p, err := s.ws.LoadReviewProject(name)
		fyne.Do(func() {
			defer s.done()
			if err != nil {
				s.setNotice(fmt.Sprintf("Could not open the review project %q: %v", name, err))
				return
			}
			s.clearNotice()
			s.texts = map[string]evidence.StudyText{}
			s.loadingTexts = map[string]bool{}
			s.setProject(p)
			s.steps.SelectIndex(slices.Index(evidence.Steps, p.NextStep()))
			s.saveState.Importance = widget.MediumImportance
			s.saveState.SetText("saved " + p.Updated.Local().Format("2 Jan 15:04"))
		})
	}()
}

// showNewDialog asks for the new project's name, literature source and
// question.
func (s *EvidenceScreen) showNewDialog() {
	if len(s.sources) == 0 {
		dialog.ShowInformation("New review project", "No data source holds literature yet. Import a PubMed, MEDLINE, RIS or CSV export\n"+
			"with Import…, or create the demo data (clinsight demo init), which holds demo literature.", s.window)
		return
	}
	name := widget.NewEntry()
	name.SetPlaceHolder("e.g. MWA vs RFA in HCC")
	src := widget.NewSelect(s.sources, nil)
	for _, n := range s.sources {
		if n == app.DemoSourceName {
			src.SetSelected(n)
		}
	}
	if src.Selected == "" && len(s.sources) > 0 {
		src.SetSelected(s.sources[0])
	}
	pop := widget.NewEntry()
	pop.SetPlaceHolder("who is studied")
	inter := widget.NewEntry()
	inter.SetPlaceHolder("the treatment or exposure")
	items := []*widget.FormItem{
		widget.NewFormItem("Name", name),
		widget.NewFormItem("Literature", src),
		widget.NewFormItem("Population", pop),
		widget.NewFormItem("Intervention", inter),
	}
	d := dialog.NewForm("New review project", "Create", "Cancel", items, func(ok bool) {
		if ok {
			s.NewProject(name.Text, src.Selected, evidence.PICO{Population: pop.Text, Intervention: inter.Text})
		}
	}, s.window)
	d.Resize(fyne.NewSize(520, 300))
	d.Show()
}

// NewProject creates a review project on a literature source, saves it and
// shows it.
func (s *EvidenceScreen) NewProject(name, source string, q evidence.PICO) {
	name = strings.TrimSpace(name)
	if err := evidence.ValidateProjectName(name); err != nil {
		dialog.ShowError(err, s.window)
		return
	}
	if slices.Contains(s.projects, name) {
		dialog.ShowError(fmt.Errorf("a review project named %q exists: open it from the list or choose another name", name), s.window)
		return
	}
	if source == "" {
		dialog.ShowError(errors.New("choose the data source holding the literature (import some with 'clinsight evidence import', or create the demo)"), s.window)
		return
	}
	s.flushSave()
	p := evidence.NewProject(name, source, q)
	s.texts = map[string]evidence.StudyText{}
	s.loadingTexts = map[string]bool{}
	s.clearNotice()
	s.setProject(p)
	s.setProjectOptions(append(slices.Clone(s.projects), name))
	s.updating = true
	s.projectSel.SetSelected(name)
	s.updating = false
	s.steps.SelectIndex(0)
	s.saveNow()
}

// setProject shows a project (nil: none) in every step.
func (s *EvidenceScreen) setProject(p *evidence.Project) {
	s.project = p
	s.updating = true
	defer func() { s.updating = false }()
	if p == nil {
		s.steps.Hide()
		s.exportBtn.Disable()
		s.relayout()
		return
	}
	if !s.steps.Visible() {
		s.steps.Show()
		s.relayout()
	}
	s.exportBtn.Enable()
	for i, v := range []string{p.PICO.Population, p.PICO.Intervention, p.PICO.Comparison, p.PICO.Outcome} {
		s.pico[i].SetText(v)
	}
	for i, l := range [][]string{p.Terms.Conditions, p.Terms.Treatments, p.Terms.Outcomes} {
		s.terms[i].SetText(strings.Join(l, "\n"))
	}
	s.query.SetText(p.Query)
	s.showQueryError(p.Query)
	s.showSearch()
	s.rebuildCriteria()
	if s.selected != "" && !p.IsCandidate(s.selected) {
		s.selected = ""
	}
	s.showScreening()
	s.rebuildFields()
	s.showExtractStudies()
	s.outcome.SetText(p.Result.Outcome)
	s.cohort.SetText(p.Result.Cohort)
	s.shapeSel.ClearSelected()
	for i, r := range resultShapes {
		if r.measure == p.Result.Measure {
			s.shapeSel.SetSelectedIndex(i)
		}
	}
	s.showResults()
	s.showMetaSettings()
}

// --- saving ---

// changed records an edit of the project: the screen saves it shortly.
func (s *EvidenceScreen) changed() {
	if s.updating || s.project == nil {
		return
	}
	s.saveState.Importance = widget.MediumImportance
	s.saveState.SetText("unsaved changes…")
	if s.saveTimer != nil {
		s.saveTimer.Stop()
	}
	s.saveTimer = time.AfterFunc(evidenceSaveDelay, func() { fyne.Do(s.flushSave) })
}

// flushSave saves a pending edit now.
func (s *EvidenceScreen) flushSave() {
	if s.saveTimer == nil {
		return
	}
	s.saveTimer.Stop()
	s.saveTimer = nil
	s.saveNow()
}

// saveNow saves a copy of the project in the workspace, off the UI
// goroutine, and shows when it was saved or why it could not be.
func (s *EvidenceScreen) saveNow() {
	if s.saveTimer != nil {
		s.saveTimer.Stop()
		s.saveTimer = nil
	}
	if s.project == nil {
		return
	}
	s.saveSeq++
	seq := s.saveSeq
	cp, err := cloneProject(s.project)
	if err != nil {
		s.savedSeq = seq
		s.showSaved(err)
		return
	}
	go func() {
		s.saveMu.Lock()
		skip := seq < s.lastWritten
		if !skip {
			err = s.ws.SaveReviewProject(cp)
			s.lastWritten = seq
		}
		s.saveMu.Unlock()
		fyne.Do(func() {
			s.savedSeq = max(s.savedSeq, seq)
			if skip || seq != s.saveSeq {
				return // a newer save reports
			}
			if err == nil && s.project != nil && s.project.Name == cp.Name {
				s.project.Updated = cp.Updated
			}
			s.showSaved(err)
		})
	}()
}

// saveBeforeClose saves a pending edit and waits for it, and for a save
// in flight, so that closing the window right after an edit loses nothing.
// It runs on the UI goroutine as the window closes: a failure is logged.
func (s *EvidenceScreen) saveBeforeClose() {
	var cp *evidence.Project
	if s.saveTimer != nil {
		s.saveTimer.Stop()
		s.saveTimer = nil
		if s.project != nil {
			var err error
			if cp, err = cloneProject(s.project); err != nil {
				s.ws.Logger().Error("evidence screen: saving the review project before closing", "err", err)
			}
		}
	}
	s.saveMu.Lock() // a save in flight holds it while it writes
	defer s.saveMu.Unlock()
	if cp == nil {
		return
	}
	s.saveSeq++
	s.lastWritten = s.saveSeq // older saves not yet written are skipped
	if err := s.ws.SaveReviewProject(cp); err != nil {
		s.ws.Logger().Error("evidence screen: saving the review project before closing", "project", cp.Name, "err", err)
	}
}

// showSaved shows the outcome of a save.
func (s *EvidenceScreen) showSaved(err error) {
	if err != nil {
		s.saveState.Importance = widget.DangerImportance
		s.saveState.SetText("not saved: " + err.Error())
		return
	}
	s.saveState.Importance = widget.SuccessImportance
	s.saveState.SetText("saved " + time.Now().Format("15:04"))
	if s.project != nil && !slices.Contains(s.projects, s.project.Name) {
		s.setProjectOptions(append(slices.Clone(s.projects), s.project.Name))
	}
}

// saving reports whether a save is pending or running.
func (s *EvidenceScreen) saving() bool {
	return s.saveTimer != nil || s.savedSeq < s.saveSeq
}

// cloneProject returns a deep copy of p (through its saved form), for the
// work done off the UI goroutine.
func cloneProject(p *evidence.Project) (*evidence.Project, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("copying the review project: %w", err)
	}
	var cp evidence.Project
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, fmt.Errorf("copying the review project: %w", err)
	}
	return &cp, nil
}

// --- notices ---

func (s *EvidenceScreen) setNotice(text string) {
	s.notice.SetText(text)
	if !s.notice.Visible() {
		s.notice.Show()
		s.relayout()
	}
}

func (s *EvidenceScreen) clearNotice() {
	s.notice.SetText("")
	if s.notice.Visible() {
		s.notice.Hide()
		s.relayout()
	}
}

// relayout lays the screen out again after a part was shown or hidden.
func (s *EvidenceScreen) relayout() {
	if s.content != nil {
		s.content.Refresh()
	}
}

// --- model steps ---

// runStep runs a step of the review session on a copy of the project with
// progress and Cancel. On success the copy, changed by the step, becomes
// the project, is shown and saved, and applied (if not nil) runs; on a
// failure or Cancel the project and every edit stay as they were and a
// notice says why.
func (s *EvidenceScreen) runStep(title string, work func(ctx context.Context, sess *evidence.Session, report progress.Func) error, applied func()) {
	if s.project == nil {
		s.setNotice("Create or open a review project first.")
		return
	}
	if s.running != nil {
		return
	}
	s.flushSave()
	cp, err := cloneProject(s.project)
	if err != nil {
		s.setNotice(err.Error())
		return
	}
	s.running = runTask(s.ctx, s.window, title, func(ctx context.Context, report progress.Func) error {
		report(progress.Report{Stage: "Opening the literature of " + cp.Source})
		sess, err := s.ws.OpenReview(ctx, cp)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := sess.Close(); cerr != nil {
				s.ws.Logger().Warn("evidence screen: closing the review session", "err", cerr)
			}
		}()
		return work(ctx, sess, report)
	}, func(err error) {
		defer s.done()
		s.running = nil
		// A step that fails for some studies, or is cancelled, keeps what
		// it did for the others (the session changes nothing it did not
		// finish); any other failure changed nothing.
		var studyErrs *evidence.StudyErrors
		switch {
		case err == nil:
			s.clearNotice()
		case errors.As(err, &studyErrs):
			s.setNotice(title + ": " + err.Error())
		case errors.Is(err, context.Canceled):
			s.setNotice(title + " was cancelled; the studies done before were kept, the rest is as it was.")
		default:
			s.setNotice(title + " failed: " + err.Error() + " — Nothing was changed and your edits are kept; correct the problem and try again.")
			return
		}
		if s.project == nil || s.project.Name != cp.Name {
			// Another project was opened meanwhile: keep the step's work
			// in its own project's file without showing it.
			go func() {
				if serr := s.ws.SaveReviewProject(cp); serr != nil {
					fyne.Do(func() { s.setNotice(fmt.Sprintf("%s: could not save the review %q: %v", title, cp.Name, serr)) })
				}
			}()
			return
		}
		s.setProject(cp)
		if applied != nil {
			applied()
		}
		s.saveNow()
	})
}

// stepProgress adapts a progress.Func to the session's
// done-of-total callbacks.
func stepProgress(report progress.Func, verb string) func(done, total int) {
	return func(done, total int) {
		report(progress.Report{Stage: fmt.Sprintf("%s %d of %d studies", verb, done, total), Done: int64(done), Total: int64(total), Unit: "studies"})
	}
}

// SuggestTerms asks the model for search terms from the PICO and shows
// them on the Search step.
func (s *EvidenceScreen) SuggestTerms() {
	s.runStep("Suggesting search terms", func(ctx context.Context, sess *evidence.Session, report progress.Func) error {
		report(progress.Report{Stage: "Asking the chat model for search terms"})
		return sess.SuggestTerms(ctx)
	}, func() { s.steps.SelectIndex(1) })
}

// Search runs the query over the corpus and keeps the best candidates.
func (s *EvidenceScreen) Search() {
	if s.project == nil {
		return
	}
	if strings.TrimSpace(s.project.Query) == "" {
		s.setNotice("Write a query, or build one from the terms, before searching.")
		return
	}
	if s.showQueryError(s.project.Query) {
		return
	}
	limit, err := strconv.Atoi(s.limitSel.Selected)
	if err != nil {
		limit, _ = strconv.Atoi(defaultSearchLimit)
	}
	s.runStep("Searching the literature", func(ctx context.Context, sess *evidence.Session, report progress.Func) error {
		report(progress.Report{Stage: "Searching " + sess.Project.Source})
		return sess.Search(ctx, limit)
	}, nil)
}

// SuggestCriteria asks the model for eligibility criteria from the PICO.
func (s *EvidenceScreen) SuggestCriteria() {
	s.runStep("Suggesting eligibility criteria", func(ctx context.Context, sess *evidence.Session, report progress.Func) error {
		report(progress.Report{Stage: "Asking the chat model for eligibility criteria"})
		return sess.SuggestCriteria(ctx)
	}, nil)
}

// Screen screens the candidates against the criteria.
func (s *EvidenceScreen) Screen() {
	s.runStep("Screening", func(ctx context.Context, sess *evidence.Session, report progress.Func) error {
		return sess.Screen(ctx, stepProgress(report, "Screened"))
	}, nil)
}

// ExtractFields extracts the fields from the included studies and loads
// their texts, to show every value beside its cited chunks.
func (s *EvidenceScreen) ExtractFields() {
	s.extractStep("Extracting fields", "Extracted", (*evidence.Session).ExtractFields, s.showExtractStudies)
}

// ExtractResults extracts the result of every included study.
func (s *EvidenceScreen) ExtractResults() {
	s.extractStep("Extracting results", "Extracted the results of", (*evidence.Session).ExtractResults, nil)
}

// extractStep runs an extraction step, then reads the included studies'
// texts (also after some studies failed: the others are shown with their
// cited chunks) and calls shown.
func (s *EvidenceScreen) extractStep(title, verb string, extract func(*evidence.Session, context.Context, func(done, total int)) error, shown func()) {
	var texts map[string]evidence.StudyText
	s.runStep(title, func(ctx context.Context, sess *evidence.Session, report progress.Func) error {
		err := extract(sess, ctx, stepProgress(report, verb))
		got, terr := sess.StudyTexts(ctx, sess.Project.Included())
		if terr != nil {
			// The extraction stands; the texts are read again when shown.
			s.ws.Logger().Warn("evidence screen: reading the study texts", "err", terr)
		}
		texts = got
		return err
	}, func() {
		maps.Copy(s.texts, texts)
		if shown != nil {
			shown()
		}
	})
}

// loadText reads a study's text off the UI goroutine, then calls shown.
func (s *EvidenceScreen) loadText(id string, shown func()) {
	if s.project == nil || s.loadingTexts[id] {
		return
	}
	if _, ok := s.texts[id]; ok {
		return
	}
	cp, err := cloneProject(s.project)
	if err != nil {
		s.setNotice(err.Error())
		return
	}
	s.loadingTexts[id] = true
	go func() {
		var t evidence.StudyText
		sess, err := s.ws.OpenReview(s.ctx, cp)
		if err == nil {
			t, err = sess.Corpus.StudyText(s.ctx, id)
			if cerr := sess.Close(); cerr != nil {
				s.ws.Logger().Warn("evidence screen: closing the review session", "err", cerr)
			}
		}
		fyne.Do(func() {
			defer s.done()
			delete(s.loadingTexts, id)
			if err != nil {
				s.setNotice("Could not read the text of " + id + ": " + err.Error())
				return
			}
			s.texts[id] = t
			shown()
		})
	}()
}

// --- PICO and search ---

func (s *EvidenceScreen) picoChanged() {
	if s.updating || s.project == nil {
		return
	}
	s.project.PICO = evidence.PICO{Population: s.pico[0].Text, Intervention: s.pico[1].Text, Comparison: s.pico[2].Text, Outcome: s.pico[3].Text}
	s.changed()
}

// termLines splits an entry's text into terms, one per line.
func termLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func (s *EvidenceScreen) termsChanged() {
	if s.updating || s.project == nil {
		return
	}
	s.project.Terms = evidence.SearchTerms{Conditions: termLines(s.terms[0].Text), Treatments: termLines(s.terms[1].Text), Outcomes: termLines(s.terms[2].Text)}
	s.changed()
}

// BuildQuery writes the boolean query of the terms: each role's terms
// joined by OR, the roles by AND.
func (s *EvidenceScreen) BuildQuery() {
	if s.project == nil {
		return
	}
	q, err := s.project.Terms.Query()
	if err != nil {
		s.queryErr.SetText(err.Error())
		s.queryErr.Show()
		return
	}
	s.query.SetText(q) // saves through queryChanged
}

func (s *EvidenceScreen) queryChanged() {
	if s.updating || s.project == nil {
		return
	}
	s.project.Query = s.query.Text
	s.showQueryError(s.query.Text)
	s.changed()
}

// showQueryError shows where a query is malformed, with a caret under the
// position; it reports whether it is.
func (s *EvidenceScreen) showQueryError(q string) bool {
	if strings.TrimSpace(q) == "" {
		s.queryErr.Hide()
		return false
	}
	_, err := evidence.ParseQuery(q)
	var qe *evidence.QueryError
	switch {
	case err == nil:
		s.queryErr.Hide()
		return false
	case errors.As(err, &qe):
		s.queryErr.SetText(qe.Error() + "\n" + qe.Pointer())
	default:
		s.queryErr.SetText(err.Error())
	}
	s.queryErr.Show()
	return true
}

// showSearch shows the last search's counts and candidates.
func (s *EvidenceScreen) showSearch() {
	p := s.project
	if p.Search == nil {
		s.searchStatus.SetText("No search run yet.")
	} else {
		s.searchStatus.SetText(fmt.Sprintf("%d records match (searched %s); the best %d are the candidates for screening.",
			p.Search.Total, p.Search.At.Local().Format("2 Jan 15:04"), len(p.Search.IDs)))
	}
	s.candidates.Refresh()
	s.candidates.ScrollToTop()
}

// candidateCell is the text of a candidates table cell.
func (s *EvidenceScreen) candidateCell(row, col int) string {
	if s.project == nil || s.project.Search == nil || row >= len(s.project.Search.IDs) {
		return ""
	}
	id := s.project.Search.IDs[row]
	info := s.project.Studies[id]
	switch col {
	case 0:
		return strconv.Itoa(row + 1)
	case 1:
		return s.project.Label(id)
	case 2:
		if info.Year > 0 {
			return strconv.Itoa(info.Year)
		}
		return ""
	case 3:
		if info.Title == "" {
			return id
		}
		return info.Title
	}
	return ""
}

// --- criteria and screening ---

// AddCriterion adds an empty criterion (weight 1) for the user to write.
func (s *EvidenceScreen) AddCriterion() {
	if s.project == nil {
		return
	}
	s.project.Criteria = append(s.project.Criteria, evidence.Criterion{Weight: 1})
	s.rebuildCriteria()
	s.criteriaChanged()
}

// rebuildCriteria shows one editable row per criterion: its text, weight,
// whether it counts, and a delete button.
func (s *EvidenceScreen) rebuildCriteria() {
	s.criteriaBox.RemoveAll()
	s.criterionText = s.criterionText[:0]
	for i, c := range s.project.Criteria {
		text := widget.NewMultiLineEntry()
		text.Wrapping = fyne.TextWrapWord
		text.SetMinRowsVisible(2)
		text.SetPlaceHolder("a statement a study meets or not, e.g. The study is a randomized controlled trial")
		text.SetText(c.Text)
		s.criterionText = append(s.criterionText, text)
		text.OnChanged = func(t string) {
			if s.updating || i >= len(s.project.Criteria) {
				return
			}
			s.project.Criteria[i].Text = t
			s.criteriaChanged()
		}
		weight := widget.NewEntry()
		weight.SetText(strconv.FormatFloat(c.Weight, 'g', -1, 64))
		weight.Validator = func(t string) error {
			if v, err := strconv.ParseFloat(strings.TrimSpace(t), 64); err != nil || v < 0 {
				return errors.New("a weight is a number ≥ 0")
			}
			return nil
		}
		weight.OnChanged = func(t string) {
			v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
			if s.updating || err != nil || v < 0 || i >= len(s.project.Criteria) {
				return
			}
			s.project.Criteria[i].Weight = v
			s.criteriaChanged()
		}
		on := widget.NewCheck("", func(b bool) {
			if s.updating || i >= len(s.project.Criteria) {
				return
			}
			s.project.Criteria[i].Disabled = !b
			s.criteriaChanged()
		})
		on.SetChecked(!c.Disabled)
		del := widget.NewButtonWithIcon("", theme.DeleteIcon(), func() {
			if i >= len(s.project.Criteria) {
				return
			}
			s.project.Criteria = slices.Delete(s.project.Criteria, i, i+1)
			s.rebuildCriteria()
			s.criteriaChanged()
		})
		w := container.NewGridWrap(fyne.NewSize(84, weight.MinSize().Height), weight)
		s.criteriaBox.Add(container.NewBorder(nil, nil, bold(fmt.Sprintf("C%d", i+1)), container.NewHBox(w, on, del), text))
	}
	if len(s.project.Criteria) == 0 {
		s.criteriaBox.Add(hint("No criteria yet: add them, or ask the model to suggest some from the PICO."))
	}
	s.criteriaBox.Refresh()
}

// criteriaChanged rescores the screening for the edited criteria (no model
// call) and saves.
func (s *EvidenceScreen) criteriaChanged() {
	if s.updating || s.project == nil {
		return
	}
	s.project.Rescore()
	s.showScreeningTable()
	s.changed()
}

// screenColumns are the screening table's columns: rank, decision, score,
// title, then one per criterion.
func (s *EvidenceScreen) screenColumns() []tableColumn {
	cols := []tableColumn{{"#", 40}, {"Decision", 110}, {"Score", 60}, {"Title", 220}}
	n := 0
	if s.project != nil {
		n = len(s.project.Criteria)
		for _, st := range s.project.Screening {
			n = max(n, len(st.Verdicts))
		}
	}
	for i := range n {
		cols = append(cols, tableColumn{fmt.Sprintf("C%d", i+1), 42})
	}
	return cols
}

// screenedStudy returns the screening of a study, nil when it has none.
func (s *EvidenceScreen) screenedStudy(id string) *evidence.ScreenedStudy {
	for i := range s.project.Screening {
		if s.project.Screening[i].ID == id {
			return &s.project.Screening[i]
		}
	}
	return nil
}

// verdictMark is a verdict's symbol and colour.
func verdictMark(v evidence.Verdict) (string, widget.Importance) {
	switch v {
	case evidence.Yes:
		return "✓", widget.SuccessImportance
	case evidence.No:
		return "✗", widget.DangerImportance
	case evidence.Uncertain:
		return "?", widget.WarningImportance
	}
	return "", widget.MediumImportance
}

// decisionText describes the user's decision on a study.
func (s *EvidenceScreen) decisionText(id string) (string, widget.Importance) {
	d, ok := s.project.Decisions[id]
	switch {
	case !ok:
		return "—", widget.LowImportance
	case d.Include:
		return "Included", widget.SuccessImportance
	}
	return "Excluded: " + d.Reason, widget.DangerImportance
}

// screenCell is the text and colour of a screening table cell.
func (s *EvidenceScreen) screenCell(row, col int) (string, widget.Importance) {
	if s.project == nil || row >= len(s.screenRows) {
		return "", widget.MediumImportance
	}
	id := s.screenRows[row]
	st := s.screenedStudy(id)
	switch col {
	case 0:
		return strconv.Itoa(row + 1), widget.MediumImportance
	case 1:
		return s.decisionText(id)
	case 2:
		switch {
		case st == nil:
			return "—", widget.LowImportance
		case st.Error != "":
			return "failed", widget.DangerImportance
		}
		return fmt.Sprintf("%.2f", st.Score), widget.MediumImportance
	case 3:
		if t := s.project.Studies[id].Title; t != "" {
			return t, widget.MediumImportance
		}
		if st != nil && st.Title != "" {
			return st.Title, widget.MediumImportance
		}
		return id, widget.MediumImportance
	}
	if st == nil || col-4 >= len(st.Verdicts) {
		return "", widget.MediumImportance
	}
	return verdictMark(st.Verdicts[col-4])
}

// showScreening shows the screening table, the PRISMA counts and diagram,
// and the selected study.
func (s *EvidenceScreen) showScreening() {
	s.showScreeningTable()
	s.showPRISMA()
}

// showScreeningTable shows the screening table, its status and the
// selected study.
func (s *EvidenceScreen) showScreeningTable() {
	p := s.project
	s.screenRows = s.screenRows[:0]
	seen := map[string]bool{}
	for _, st := range p.Screening {
		if p.IsCandidate(st.ID) && !seen[st.ID] {
			seen[st.ID] = true
			s.screenRows = append(s.screenRows, st.ID)
		}
	}
	if p.Search != nil {
		for _, id := range p.Search.IDs {
			if !seen[id] {
				seen[id] = true
				s.screenRows = append(s.screenRows, id)
			}
		}
	}
	for i, c := range s.screenColumns() {
		s.screenTable.SetColumnWidth(i, c.width)
	}
	s.screenTable.Refresh()

	screened, failed := 0, 0
	for _, st := range p.Screening {
		if p.IsCandidate(st.ID) {
			screened++
			if st.Error != "" {
				failed++
			}
		}
	}
	var status []string
	switch {
	case p.Search == nil:
		status = append(status, "Run a search first: its candidates are screened here.")
	case screened == 0:
		status = append(status, fmt.Sprintf("%d candidates not screened yet.", len(p.Search.IDs)))
	default:
		status = append(status, fmt.Sprintf("%d of %d candidates screened.", screened-failed, len(p.Search.IDs)))
		if failed > 0 {
			status = append(status, fmt.Sprintf("%d could not be screened (select one to see why); Screen again to retry them.", failed))
		}
	}
	if p.ScreeningStale() {
		status = append(status, "The criteria changed since the screening: Screen again to update the verdicts.")
	}
	s.screenStatus.SetText(strings.Join(status, " "))
	if s.selected != "" {
		s.ShowStudy(s.selected)
	} else {
		s.studyDetail.ParseMarkdown("Select a study to see its abstract and verdicts, then include or exclude it.")
		s.setDecisionButtons(false)
	}
}

func (s *EvidenceScreen) setDecisionButtons(on bool) {
	for _, b := range []*widget.Button{s.includeBtn, s.excludeBtn, s.undecideBtn} {
		if on {
			b.Enable()
		} else {
			b.Disable()
		}
	}
}

// ShowStudy shows a candidate's title, decision, verdicts per criterion
// and abstract (read off the UI goroutine the first time).
func (s *EvidenceScreen) ShowStudy(id string) {
	if s.project == nil || !s.project.IsCandidate(id) {
		return
	}
	s.selected = id
	s.setDecisionButtons(true)
	p := s.project
	seg := func(text string, style widget.RichTextStyle) *widget.TextSegment {
		return &widget.TextSegment{Text: text, Style: style}
	}
	info := p.Studies[id]
	title := info.Title
	if title == "" {
		title = id
	}
	segs := []widget.RichTextSegment{seg(title, widget.RichTextStyleSubHeading)}
	line := p.Label(id) + " · " + id
	if info.PMID != "" {
		line += " · PMID " + info.PMID
	}
	segs = append(segs, seg(line, widget.RichTextStyleParagraph))
	dec, imp := s.decisionText(id)
	style := widget.RichTextStyleParagraph
	style.ColorName = importanceColor(imp)
	segs = append(segs, seg("Decision: "+dec, style))

	st := s.screenedStudy(id)
	switch {
	case st == nil:
		segs = append(segs, seg("Not screened yet.", widget.RichTextStyleParagraph))
	case st.Error != "":
		e := widget.RichTextStyleParagraph
		e.ColorName = theme.ColorNameError
		segs = append(segs, seg("Could not be screened: "+st.Error, e))
	default:
		segs = append(segs, seg(fmt.Sprintf("Verdicts (score %.2f)", st.Score), widget.RichTextStyleSubHeading))
		for i, v := range st.Verdicts {
			text := fmt.Sprintf("C%d", i+1)
			if i < len(p.Criteria) {
				text += " " + p.Criteria[i].Text
				if p.Criteria[i].Disabled {
					text += " (switched off)"
				}
			}
			mark, imp := verdictMark(v)
			vs := widget.RichTextStyleParagraph
			vs.ColorName = importanceColor(imp)
			segs = append(segs, seg(fmt.Sprintf("%s %s — %s", mark, v, text), vs))
		}
	}
	if t, ok := s.texts[id]; ok {
		heading := "Abstract"
		if t.FullText {
			heading = fmt.Sprintf("Full text (%d passages)", len(t.Chunks))
		}
		segs = append(segs, seg(heading, widget.RichTextStyleSubHeading))
		n := 0
		for _, c := range t.Chunks {
			if c.N == 1 && !t.FullText && c.Section == "Title" {
				continue // the title is shown above
			}
			text := c.Text
			if c.Section != "" {
				text = c.Section + ": " + text
			}
			segs = append(segs, seg(text, widget.RichTextStyleParagraph))
			n++
		}
		if n == 0 {
			segs = append(segs, seg("(no abstract)", widget.RichTextStyleParagraph))
		}
	} else {
		segs = append(segs, seg("Abstract", widget.RichTextStyleSubHeading), seg("Reading…", widget.RichTextStyleParagraph))
		s.loadText(id, func() {
			if s.selected == id {
				s.ShowStudy(id)
			}
		})
	}
	s.studyDetail.Segments = segs
	s.studyDetail.Refresh()
}

// importanceColor is the theme colour of a label importance.
func importanceColor(imp widget.Importance) fyne.ThemeColorName {
	switch imp {
	case widget.SuccessImportance:
		return theme.ColorNameSuccess
	case widget.DangerImportance:
		return theme.ColorNameError
	case widget.WarningImportance:
		return theme.ColorNameWarning
	}
	return theme.ColorNameForeground
}

// Decide records the user's decision on a study and saves it.
func (s *EvidenceScreen) Decide(id string, include bool, reason string) {
	if s.project == nil || id == "" {
		return
	}
	if err := s.project.Decide(id, include, reason); err != nil {
		dialog.ShowError(err, s.window)
		return
	}
	s.decisionsChanged()
}

// Undecide removes the decision on the selected study.
func (s *EvidenceScreen) Undecide() {
	if s.project == nil || s.selected == "" {
		return
	}
	s.project.Undecide(s.selected)
	s.decisionsChanged()
}

func (s *EvidenceScreen) decisionsChanged() {
	s.screenTable.Refresh()
	s.showPRISMA()
	if s.selected != "" {
		s.ShowStudy(s.selected)
	}
	s.showExtractStudies()
	s.showResults()
	s.changed()
}

// showExcludeDialog asks why the selected study is excluded.
func (s *EvidenceScreen) showExcludeDialog() {
	id := s.selected
	if s.project == nil || id == "" {
		return
	}
	reasons := slices.Clone(exclusionReasons)
	if st := s.screenedStudy(id); st != nil {
		for i, v := range st.Verdicts {
			if v == evidence.No && i < len(s.project.Criteria) {
				reasons = append([]string{"Does not meet: " + s.project.Criteria[i].Text}, reasons...)
			}
		}
	}
	for _, d := range s.project.Decisions {
		if !d.Include && !slices.Contains(reasons, d.Reason) {
			reasons = append(reasons, d.Reason)
		}
	}
	reason := widget.NewSelectEntry(reasons)
	reason.SetPlaceHolder("why the study is excluded")
	d := dialog.NewForm("Exclude "+s.project.Label(id), "Exclude", "Cancel",
		[]*widget.FormItem{widget.NewFormItem("Reason", reason)}, func(ok bool) {
			if ok {
				s.Decide(id, false, reason.Text)
			}
		}, s.window)
	d.Resize(fyne.NewSize(560, 200))
	d.Show()
}

// showPRISMA shows the PRISMA counts and draws the flow diagram off the UI
// goroutine.
func (s *EvidenceScreen) showPRISMA() {
	c := s.project.PRISMA()
	text := fmt.Sprintf("Identified %d · screened %d · excluded %d · undecided %d · included %d · not screened %d",
		c.Identified, c.Screened, c.Excluded, c.Undecided, c.Included, c.NotScreened)
	if len(c.Reasons) > 0 {
		var rs []string
		for _, r := range sortedKeys(c.Reasons) {
			rs = append(rs, fmt.Sprintf("%s: %d", r, c.Reasons[r]))
		}
		text += "\nExcluded: " + strings.Join(rs, "; ")
	}
	s.prismaCounts.SetText(text)
	s.prismaGen++
	gen := s.prismaGen
	go func() {
		var buf bytes.Buffer
		var img image.Image
		err := evidence.WritePRISMADiagram(&buf, c)
		if err == nil {
			img, err = png.Decode(&buf)
		}
		fyne.Do(func() {
			if gen != s.prismaGen {
				return
			}
			if err != nil {
				s.ws.Logger().Warn("evidence screen: PRISMA diagram", "err", err)
				s.prismaCounts.SetText(text + "\nThe diagram could not be drawn: " + err.Error())
			}
			s.prismaImg.Image = img
			s.prismaImg.Refresh()
		})
	}()
}

// sortedKeys returns a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

// --- fields ---

// AddField adds an empty field for the user to describe.
func (s *EvidenceScreen) AddField() {
	if s.project == nil {
		return
	}
	s.project.Fields = append(s.project.Fields, evidence.FieldSpec{})
	s.rebuildFields()
	s.showValues()
	s.changed()
}

// rebuildFields shows one editable row per field: name, description and a
// delete button.
func (s *EvidenceScreen) rebuildFields() {
	s.fieldsBox.RemoveAll()
	s.fieldEntries = s.fieldEntries[:0]
	for i, f := range s.project.Fields {
		name := widget.NewEntry()
		name.SetPlaceHolder("name, e.g. median age")
		name.SetText(f.Name)
		name.OnChanged = func(t string) {
			if s.updating || i >= len(s.project.Fields) {
				return
			}
			s.project.Fields[i].Name = t
			s.showValues()
			s.changed()
		}
		desc := widget.NewMultiLineEntry()
		desc.Wrapping = fyne.TextWrapWord
		desc.SetMinRowsVisible(2)
		desc.SetPlaceHolder("what to extract, e.g. the median age of the patients at enrolment, in years")
		desc.SetText(f.Description)
		desc.OnChanged = func(t string) {
			if s.updating || i >= len(s.project.Fields) {
				return
			}
			s.project.Fields[i].Description = t
			s.changed()
		}
		del := widget.NewButtonWithIcon("", theme.DeleteIcon(), func() {
			if i >= len(s.project.Fields) {
				return
			}
			s.project.Fields = slices.Delete(s.project.Fields, i, i+1)
			s.rebuildFields()
			s.showValues()
			s.changed()
		})
		s.fieldEntries = append(s.fieldEntries, [2]*widget.Entry{name, desc})
		s.fieldsBox.Add(container.NewBorder(nil, nil, nil, del, container.NewVBox(name, desc)))
	}
	if len(s.project.Fields) == 0 {
		s.fieldsBox.Add(hint("No fields yet: add one per piece of information to extract from every included study."))
	}
	s.fieldsBox.Refresh()
}

// showExtractStudies lists the included studies on the Extract step.
func (s *EvidenceScreen) showExtractStudies() {
	ids := s.project.Included()
	labels := make([]string, len(ids))
	cur := ""
	if i := s.extractStudy.SelectedIndex(); i >= 0 && i < len(s.extractStudies) {
		cur = s.extractStudies[i]
	}
	sel := -1
	for i, id := range ids {
		labels[i] = s.project.Label(id) + " — " + id
		if id == cur {
			sel = i
		}
	}
	s.extractStudies = ids
	was := s.updating
	s.updating = true
	s.extractStudy.SetOptions(labels)
	switch {
	case sel >= 0:
		s.extractStudy.SetSelectedIndex(sel)
	case len(ids) > 0:
		s.extractStudy.SetSelectedIndex(0)
	default:
		s.extractStudy.ClearSelected()
	}
	s.updating = was
	n := 0
	for _, id := range ids {
		if len(s.project.Extractions[id]) > 0 {
			n++
		}
	}
	switch {
	case len(ids) == 0:
		s.extractStatus.SetText("Include studies on the Screen step: their fields are extracted here.")
	default:
		s.extractStatus.SetText(fmt.Sprintf("%d included studies, %d with extracted values.", len(ids), n))
	}
	s.showValues()
}

// extractStudyID is the study shown on the Extract step, "" for none.
func (s *EvidenceScreen) extractStudyID() string {
	if i := s.extractStudy.SelectedIndex(); i >= 0 && i < len(s.extractStudies) {
		return s.extractStudies[i]
	}
	return ""
}

// fieldValue returns the value of a field of a study, and false when none
// was extracted or typed.
func (s *EvidenceScreen) fieldValue(id, name string) (evidence.FieldValue, bool) {
	for _, v := range s.project.Extractions[id] {
		if v.Name == name {
			return v, true
		}
	}
	return evidence.FieldValue{Name: name}, false
}

// showValues shows the selected study's values, each beside the chunks it
// cites, unsupported values flagged; a value is editable.
func (s *EvidenceScreen) showValues() {
	s.valuesBox.RemoveAll()
	s.valueEntries = map[string]*widget.Entry{}
	s.valueFlags = map[string]*widget.Label{}
	id := s.extractStudyID()
	if s.project == nil || id == "" {
		s.valuesBox.Refresh()
		return
	}
	t, haveText := s.texts[id]
	if !haveText {
		s.loadText(id, func() {
			if s.extractStudyID() == id {
				s.showValues()
			}
		})
	}
	if len(s.project.Fields) == 0 {
		s.valuesBox.Add(hint("Add the fields to extract on the left."))
	}
	for _, f := range s.project.Fields {
		if strings.TrimSpace(f.Name) == "" {
			continue
		}
		v, _ := s.fieldValue(id, f.Name)
		flag := widget.NewLabel("")
		flag.Wrapping = fyne.TextWrapWord
		s.showFlag(flag, v)
		value := widget.NewEntry()
		value.SetPlaceHolder("not extracted yet: type the value, or NP when the study does not report it")
		value.SetText(v.Value)
		name := f.Name
		value.OnChanged = func(text string) { s.editValue(id, name, text, flag) }
		s.valueEntries[name], s.valueFlags[name] = value, flag
		box := container.NewVBox(bold(f.Name), value, flag)
		for _, n := range v.Sources {
			box.Add(s.chunkLabel(t, haveText, n))
		}
		s.valuesBox.Add(widget.NewCard("", "", box))
	}
	s.valuesBox.Refresh()
}

// chunkLabel shows a cited chunk's text.
func (s *EvidenceScreen) chunkLabel(t evidence.StudyText, haveText bool, n int) fyne.CanvasObject {
	var text string
	c, ok := t.Chunk(n)
	switch {
	case !haveText:
		text = fmt.Sprintf("[%d] reading…", n)
	case !ok:
		text = fmt.Sprintf("[%d] no such chunk in the study's text", n)
	case c.Section != "":
		text = fmt.Sprintf("[%d] %s: %s", n, c.Section, c.Text)
	default:
		text = fmt.Sprintf("[%d] %s", n, c.Text)
	}
	l := widget.NewLabelWithStyle(text, fyne.TextAlignLeading, fyne.TextStyle{Italic: true})
	l.Wrapping = fyne.TextWrapWord
	return l
}

// showFlag says whether a value is supported by its chunks, not reported
// or edited.
func (s *EvidenceScreen) showFlag(l *widget.Label, v evidence.FieldValue) {
	var parts []string
	l.Importance = widget.LowImportance
	switch {
	case v.Unsupported:
		parts = append(parts, "⚠ Unsupported: a number of this value is not in the cited text — check it.")
		l.Importance = widget.DangerImportance
	case v.Value == evidence.NotPresent:
		parts = append(parts, "Not reported (NP).")
	case v.Value != "" && len(v.Sources) > 0:
		parts = append(parts, fmt.Sprintf("Read from chunk %s.", intList(v.Sources)))
	}
	if v.Edited {
		parts = append(parts, "Edited by you.")
	}
	l.SetText(strings.Join(parts, " "))
}

// editValue records the user's value of a field, marked Edited, and
// checks it against the cited chunks.
func (s *EvidenceScreen) editValue(id, name, text string, flag *widget.Label) {
	if s.updating || s.project == nil {
		return
	}
	if s.project.Extractions == nil {
		s.project.Extractions = map[string][]evidence.FieldValue{}
	}
	vals := s.project.Extractions[id]
	i := slices.IndexFunc(vals, func(v evidence.FieldValue) bool { return v.Name == name })
	if i < 0 {
		vals = append(vals, evidence.FieldValue{Name: name})
		i = len(vals) - 1
	}
	v := &vals[i]
	v.Value, v.Edited = text, true
	if t, ok := s.texts[id]; ok {
		v.Unsupported = text != evidence.NotPresent && strings.TrimSpace(text) != "" && !evidence.Supported(text, t, v.Sources)
	}
	s.project.Extractions[id] = vals
	s.showFlag(flag, *v)
	s.changed()
}

// intList formats chunk numbers as "3, 4".
func intList(ns []int) string {
	s := make([]string, len(ns))
	for i, n := range ns {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

// --- results ---

func (s *EvidenceScreen) resultSpecChanged() {
	if s.updating || s.project == nil {
		return
	}
	spec := evidence.ResultSpec{Outcome: s.outcome.Text, Cohort: s.cohort.Text}
	if i := s.shapeSel.SelectedIndex(); i >= 0 {
		spec.Measure = resultShapes[i].measure
	}
	shapeChanged := spec.Measure != s.project.Result.Measure
	s.project.Result = spec
	if shapeChanged {
		s.project.Meta.Measure = "" // the default measure of the new shape
		if spec.Measure == "" || !slices.Contains(metaModels(evidence.DefaultMeasure(spec.Measure).Kind()), meta.Method(s.project.Meta.Method)) {
			s.project.Meta.Method = ""
		}
		s.showMetaSettings()
	}
	s.showResults()
	s.changed()
}

// showResults shows the extracted groups and the standardized table.
func (s *EvidenceScreen) showResults() {
	p := s.project
	s.groupRows = s.groupRows[:0]
	n := 0
	for _, id := range p.Included() {
		r, ok := p.Results[id]
		if !ok {
			continue
		}
		n++
		for g := range r.Groups {
			s.groupRows = append(s.groupRows, groupRow{id, g})
		}
		if r.Effect != nil {
			s.groupRows = append(s.groupRows, groupRow{id, -1})
		}
	}
	s.selectedGroup = -1
	s.groupsTable.UnselectAll()
	s.editGroupBtn.Disable()
	s.groupsTable.Refresh()
	included := len(p.Included())
	if included == 0 {
		s.resultsStatus.SetText("Include studies on the Screen step: their results are extracted here.")
	} else {
		s.resultsStatus.SetText(fmt.Sprintf("%d of %d included studies have an extracted result. Select a row and Edit to correct a number.", n, included))
	}

	s.standardRows, s.resultProblems = p.StandardTable()
	s.standardCols = standardColumns(p.Result.Measure)
	for i, c := range s.standardCols {
		s.standardTable.SetColumnWidth(i, c.width)
	}
	s.standardTable.Refresh()
	if len(s.resultProblems) > 0 {
		s.problems.SetText("• " + strings.Join(s.resultProblems, "\n• "))
		s.problems.Show()
	} else {
		s.problems.SetText("")
		s.problems.Hide()
	}
}

// numberText formats an extracted number, flagged when unsupported.
func numberText(n *evidence.Number) string {
	if n == nil {
		return ""
	}
	t := strconv.FormatFloat(n.Value, 'g', -1, 64)
	if n.Unsupported {
		t += " ⚠"
	}
	return t
}

// groupNumbers returns the numbers of a groups table row.
func (s *EvidenceScreen) groupNumbers(row groupRow) []*evidence.Number {
	r := s.project.Results[row.id]
	if row.group < 0 {
		if r.Effect == nil {
			return nil
		}
		return []*evidence.Number{&r.Effect.Est, &r.Effect.Lower, &r.Effect.Upper}
	}
	if row.group >= len(r.Groups) {
		return nil
	}
	g := r.Groups[row.group]
	return []*evidence.Number{g.N, g.Events, g.Percent, g.Mean, g.SD}
}

// groupCell is the text of a groups table cell.
func (s *EvidenceScreen) groupCell(row, col int) string {
	if s.project == nil || row >= len(s.groupRows) {
		return ""
	}
	gr := s.groupRows[row]
	r := s.project.Results[gr.id]
	nums := s.groupNumbers(gr)
	if col == 0 {
		return s.project.Label(gr.id)
	}
	if gr.group < 0 { // the reported effect: kind, est (lower–upper)
		if r.Effect == nil {
			return ""
		}
		if col == 1 {
			return fmt.Sprintf("Reported %s %s (%s – %s)", r.Effect.Kind, numberText(&r.Effect.Est), numberText(&r.Effect.Lower), numberText(&r.Effect.Upper))
		}
	} else if gr.group < len(r.Groups) {
		g := r.Groups[gr.group]
		switch col {
		case 1:
			return g.Name
		case 2:
			return g.Role
		case 3, 4, 5, 6, 7:
			return numberText(nums[col-3])
		}
	}
	switch col {
	case 8:
		var src []int
		for _, n := range nums {
			if n != nil {
				for _, c := range n.Sources {
					if !slices.Contains(src, c) {
						src = append(src, c)
					}
				}
			}
		}
		slices.Sort(src)
		return intList(src)
	case 9:
		var flags []string
		for _, n := range nums {
			if n != nil && n.Unsupported {
				flags = append(flags, "⚠ not in its chunk")
				break
			}
		}
		if r.Edited {
			flags = append(flags, "edited")
		}
		return strings.Join(flags, ", ")
	}
	return ""
}

// standardColumns are the standardized table's columns for a result shape.
func standardColumns(m evidence.Measure) []tableColumn {
	cols := []tableColumn{{"Study", 150}}
	switch m {
	case evidence.TwoGroups:
		cols = append(cols, tableColumn{"Events T", 75}, tableColumn{"Total T", 75}, tableColumn{"Events C", 75}, tableColumn{"Total C", 75})
	case evidence.SingleArm:
		cols = append(cols, tableColumn{"Events", 75}, tableColumn{"Total", 75})
	case evidence.MeansSDs:
		cols = append(cols, tableColumn{"Mean T", 70}, tableColumn{"SD T", 60}, tableColumn{"N T", 60}, tableColumn{"Mean C", 70}, tableColumn{"SD C", 60}, tableColumn{"N C", 60})
	case evidence.RatioCI:
		cols = append(cols, tableColumn{"Ratio", 60}, tableColumn{"Estimate", 75}, tableColumn{"Lower", 70}, tableColumn{"Upper", 70})
	}
	return append(cols, tableColumn{"Chunks", 70}, tableColumn{"Check", 200}, tableColumn{"How computed", 360})
}

// standardCell is the text of a standardized table cell.
func (s *EvidenceScreen) standardCell(row, col int) string {
	if row >= len(s.standardRows) || col >= len(s.standardCols) {
		return ""
	}
	r := s.standardRows[row]
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	var vals []string
	switch r.Measure {
	case evidence.TwoGroups:
		vals = []string{f(r.Events1), f(r.Total1), f(r.Events2), f(r.Total2)}
	case evidence.SingleArm:
		vals = []string{f(r.Events1), f(r.Total1)}
	case evidence.MeansSDs:
		vals = []string{f(r.Mean1), f(r.SD1), f(r.Total1), f(r.Mean2), f(r.SD2), f(r.Total2)}
	case evidence.RatioCI:
		vals = []string{r.EffectKind, f(r.Est), f(r.Lower), f(r.Upper)}
	}
	check := ""
	if len(r.Unsupported) > 0 {
		check = "⚠ not in its chunk: " + strings.Join(r.Unsupported, ", ")
	}
	all := append(append([]string{r.Label}, vals...), intList(r.Sources), check, strings.Join(r.Derivations, "; "))
	if col < len(all) {
		return all[col]
	}
	return ""
}

// showEditGroupDialog lets the user correct the numbers of the selected
// group (or reported effect); blank means not reported.
func (s *EvidenceScreen) showEditGroupDialog() {
	if s.project == nil || s.selectedGroup < 0 || s.selectedGroup >= len(s.groupRows) {
		return
	}
	gr := s.groupRows[s.selectedGroup]
	r := s.project.Results[gr.id]
	var labels []string
	var nums []*evidence.Number
	if gr.group < 0 {
		if r.Effect == nil {
			return
		}
		labels = []string{"Estimate", "CI lower", "CI upper"}
		nums = []*evidence.Number{&r.Effect.Est, &r.Effect.Lower, &r.Effect.Upper}
	} else {
		labels = []string{"N", "Events", "Percent", "Mean", "SD"}
		nums = s.groupNumbers(gr)
	}
	entries := make([]*widget.Entry, len(nums))
	var items []*widget.FormItem
	role := widget.NewSelect([]string{"treatment", "control", "(other)"}, nil)
	if gr.group >= 0 {
		role.SetSelected(r.Groups[gr.group].Role)
		if r.Groups[gr.group].Role == "" {
			role.SetSelected("(other)")
		}
		items = append(items, widget.NewFormItem("Role", role))
	}
	for i, n := range nums {
		e := widget.NewEntry()
		if n != nil {
			e.SetText(strconv.FormatFloat(n.Value, 'g', -1, 64))
		}
		e.SetPlaceHolder("not reported")
		entries[i] = e
		items = append(items, widget.NewFormItem(labels[i], e))
	}
	d := dialog.NewForm("Correct "+s.project.Label(gr.id), "Save", "Cancel", items, func(ok bool) {
		if !ok {
			return
		}
		vals := make([]string, len(entries))
		for i, e := range entries {
			vals[i] = e.Text
		}
		rl := role.Selected
		if rl == "(other)" {
			rl = ""
		}
		if err := s.EditGroup(gr.id, gr.group, rl, vals); err != nil {
			dialog.ShowError(err, s.window)
		}
	}, s.window)
	d.Resize(fyne.NewSize(420, 360))
	d.Show()
}

// EditGroup sets the numbers of a study's group (group -1: its reported
// effect's estimate, lower and upper limits) from the user's text, blank
// for not reported, marks the result Edited and checks each changed number
// against its cited chunks.
func (s *EvidenceScreen) EditGroup(id string, group int, role string, values []string) error {
	r, ok := s.project.Results[id]
	if !ok {
		return fmt.Errorf("no result extracted for %s", s.project.Label(id))
	}
	r = cloneResult(r)
	t, haveText := s.texts[id]
	parse := func(text string, old *evidence.Number) (*evidence.Number, error) {
		text = strings.TrimSpace(text)
		if text == "" {
			return nil, nil
		}
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("%q is not a number", text)
		}
		n := &evidence.Number{Value: v}
		if old != nil {
			n.Sources = old.Sources
			n.Unsupported = old.Unsupported
			if old.Value == v {
				return n, nil
			}
		}
		if haveText {
			n.Unsupported = !evidence.Supported(text, t, n.Sources)
		}
		return n, nil
	}
	if group < 0 {
		if r.Effect == nil || len(values) != 3 {
			return fmt.Errorf("%s has no reported effect", s.project.Label(id))
		}
		for i, dst := range []*evidence.Number{&r.Effect.Est, &r.Effect.Lower, &r.Effect.Upper} {
			n, err := parse(values[i], dst)
			if err != nil {
				return err
			}
			if n == nil {
				return errors.New("the estimate and both limits of a reported effect are needed")
			}
			*dst = *n
		}
	} else {
		if group >= len(r.Groups) || len(values) != 5 {
			return fmt.Errorf("%s has no group %d", s.project.Label(id), group+1)
		}
		g := &r.Groups[group]
		g.Role = role
		for i, dst := range []**evidence.Number{&g.N, &g.Events, &g.Percent, &g.Mean, &g.SD} {
			n, err := parse(values[i], *dst)
			if err != nil {
				return err
			}
			*dst = n
		}
	}
	s.project.CorrectResult(id, r)
	s.showResults()
	s.changed()
	return nil
}

// cloneResult copies a result so that editing it leaves the original
// (shared with earlier copies of the project) as it was.
func cloneResult(r evidence.ResultExtraction) evidence.ResultExtraction {
	cp := func(n *evidence.Number) *evidence.Number {
		if n == nil {
			return nil
		}
		c := *n
		c.Sources = slices.Clone(n.Sources)
		return &c
	}
	out := r
	out.Groups = make([]evidence.ResultGroup, len(r.Groups))
	for i, g := range r.Groups {
		out.Groups[i] = evidence.ResultGroup{Name: g.Name, Role: g.Role, N: cp(g.N), Events: cp(g.Events), Percent: cp(g.Percent), Mean: cp(g.Mean), SD: cp(g.SD)}
	}
	if r.Effect != nil {
		e := *r.Effect
		out.Effect = &e
	}
	return out
}

// --- meta-analysis ---

// showMetaSettings offers the measures of the result's shape and the
// methods of their kind, with the project's choices selected.
func (s *EvidenceScreen) showMetaSettings() {
	p := s.project
	was := s.updating
	s.updating = true
	defer func() { s.updating = was }()
	s.measures = evidence.MeasuresFor(p.Result.Measure)
	labels := make([]string, len(s.measures))
	sel := -1
	cur := meta.Measure(p.Meta.Measure)
	if cur == "" && p.Result.Measure != "" {
		cur = evidence.DefaultMeasure(p.Result.Measure)
	}
	for i, m := range s.measures {
		labels[i] = measureChoice(m)
		if m == cur {
			sel = i
		}
	}
	s.measureSel.SetOptions(labels)
	if sel >= 0 {
		s.measureSel.SetSelectedIndex(sel)
	} else {
		s.measureSel.ClearSelected()
	}
	kind := meta.Binary
	if cur != "" {
		kind = cur.Kind()
	}
	s.methods = metaModels(kind)
	labels = make([]string, len(s.methods))
	sel = 0
	for i, m := range s.methods {
		labels[i] = modelChoice(m)
		if string(m) == p.Meta.Method {
			sel = i
		}
	}
	s.methodSel.SetOptions(labels)
	s.methodSel.SetSelectedIndex(sel)
	s.hk.SetChecked(p.Meta.KnappHartung)
	if s.methods[sel] == meta.MH {
		s.hk.Disable()
	} else {
		s.hk.Enable()
	}
	if p.Result.Measure == "" {
		s.metaStatus.SetText("Choose the shape of the result on the Results step: it decides the effect measures offered.")
	} else {
		s.metaStatus.SetText("Run pools the standardized table of the Results step.")
	}
}

func (s *EvidenceScreen) metaSettingsChanged() {
	if s.updating || s.project == nil {
		return
	}
	if i := s.measureSel.SelectedIndex(); i >= 0 && i < len(s.measures) {
		s.project.Meta.Measure = string(s.measures[i])
	}
	if i := s.methodSel.SelectedIndex(); i >= 0 && i < len(s.methods) {
		s.project.Meta.Method = string(s.methods[i])
	}
	if m := meta.Measure(s.project.Meta.Measure); m != "" && !slices.Contains(metaModels(m.Kind()), meta.Method(s.project.Meta.Method)) {
		s.project.Meta.Method = "" // MH for a measure it does not pool: the default
	}
	s.project.Meta.KnappHartung = s.hk.Checked
	if s.project.Meta.Method == string(meta.MH) {
		s.project.Meta.KnappHartung = false
	}
	s.showMetaSettings()
	s.changed()
}

// RunMeta pools the standardized table with the project's settings, off
// the UI goroutine, and shows the forest plot and the summary.
func (s *EvidenceScreen) RunMeta() {
	if s.project == nil {
		return
	}
	cp, err := cloneProject(s.project)
	if err != nil {
		s.setNotice(err.Error())
		return
	}
	s.runMetaBtn.Disable()
	s.metaStatus.SetText("Analysing…")
	go func() {
		_, res, err := cp.Analyze()
		var img image.Image
		if err == nil {
			var buf bytes.Buffer
			if err = meta.WriteForestPlot(&buf, res, meta.PlotOptions{}); err == nil {
				img, err = png.Decode(&buf)
			}
		}
		fyne.Do(func() {
			defer s.done()
			s.runMetaBtn.Enable()
			if err != nil {
				s.forest.Image = nil
				s.forest.Refresh()
				s.metaSummary.SetText("")
				s.metaStatus.SetText("The meta-analysis could not run: " + meta.ErrorMessage(err))
				return
			}
			s.forest.Image = img
			s.forest.Refresh()
			s.metaSummary.SetText(metaSummaryText(res))
			s.metaStatus.SetText(fmt.Sprintf("%s, %s: k = %d", res.ModelLabel(), res.Measure.Label(), res.K))
		})
	}()
}

// metaSummaryText lists the pooled result's statistics and notes.
func metaSummaryText(res meta.Result) string {
	var lines, notes []string
	for _, st := range res.Statistics() {
		if st.Key == "note" {
			notes = append(notes, "• "+st.Text())
			continue
		}
		lines = append(lines, st.Label+": "+st.Text())
	}
	return strings.Join(append(lines, notes...), "\n")
}

// --- export ---

// ExportWorkbook writes the whole review (search strategy and counts,
// PRISMA, verdicts and decisions, extracted fields with their cited
// chunks, results, the meta-analysis with its forest plot, provenance) to
// an Excel workbook at path, with progress and Cancel.
func (s *EvidenceScreen) ExportWorkbook(path string) {
	if s.project == nil {
		return
	}
	s.flushSave()
	cp, err := cloneProject(s.project)
	if err != nil {
		s.setNotice(err.Error())
		return
	}
	prov := export.Provenance{AppVersion: s.version, DataSource: cp.Source, Created: time.Now()}
	s.running = runTask(s.ctx, s.window, "Export workbook", func(ctx context.Context, report progress.Func) error {
		report(progress.Report{Stage: "Reading the studies"})
		sess, err := s.ws.OpenReview(ctx, cp)
		if err != nil {
			return err
		}
		defer func() {
			if cerr := sess.Close(); cerr != nil {
				s.ws.Logger().Warn("evidence screen: closing the review session", "err", cerr)
			}
		}()
		report(progress.Report{Stage: "Writing " + path})
		_, err = sess.ExportWorkbook(ctx, path, prov, nil)
		return err
	}, func(err error) {
		defer s.done()
		s.running = nil
		if err != nil {
			showError(s.window, err)
			return
		}
		dialog.ShowInformation("Export workbook", fmt.Sprintf("Wrote the review %q to %s", cp.Name, path), s.window)
	})
}

// stepShown follows a change of step: the values of the Extract step and
// the results follow the decisions made meanwhile.
func (s *EvidenceScreen) stepShown() {
	if s.project == nil {
		return
	}
	switch s.steps.SelectedIndex() {
	case 3:
		s.showValues()
	case 4:
		s.showResults()
	}
}

// evidenceTab builds the Evidence screen for the main window and lists
// its projects.
func (mw *MainWindow) evidenceTab(ctx context.Context, ws *app.Workspace, w fyne.Window, version string) fyne.CanvasObject {
	mw.Evidence = NewEvidenceScreen(ctx, ws, w, version)
	w.SetOnClosed(mw.Evidence.saveBeforeClose)
	mw.Evidence.Refresh()
	return mw.Evidence.Content()
}

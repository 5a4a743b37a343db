package ui

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/meta"
	"github.com/clinsight/clinsight/internal/progress"
)

// pastedSource names pasted CSV text in messages and the provenance.
const pastedSource = "pasted text"

// exampleSource names the built-in example in messages and the provenance.
const exampleSource = "Example: BCG vaccine trials"

// MetaScreen runs a meta-analysis of a study table loaded from a CSV or
// .xlsx file or pasted as CSV text: the user maps the columns, chooses the
// measure and model, and sees the pooled summary and the forest plot, which
// follow every change of measure or model, and can export everything to
// Excel.
type MetaScreen struct {
	ctx     context.Context
	window  fyne.Window
	version string
	svc     app.MetaService

	openBtn     *widget.Button
	paste       *widget.Entry
	pasteBtn    *widget.Button
	exampleBtn  *widget.Button
	sourceLabel *widget.Label
	layoutSel   *widget.Select
	sheet       *widget.Entry
	filter      *widget.Entry
	columns     map[string]*widget.Entry
	columnsBox  *fyne.Container
	skipMissing *widget.Check
	reloadBtn   *widget.Button
	measureSel  *widget.Select
	modelSel    *widget.Select
	hk          *widget.Check
	exportBtn   *widget.Button
	status      *widget.Label
	stopBtn     *widget.Button // shown while an analysis runs
	errLabel    *widget.Label
	summary     *widget.Table
	notes       *widget.Label
	plot        *canvas.Image
	funnel      *canvas.Image
	bubble      *canvas.Image
	cumul       *canvas.Image
	analysesTxt *widget.Label
	analyses    *metaAnalysesForm
	content     fyne.CanvasObject

	// Owned by the UI goroutine.
	layouts    []metaLayout
	layout     int
	measures   []meta.Measure
	models     []meta.Method
	updating   bool   // selections are being changed by the screen itself
	sourcePath string // the file loaded, "" for pasted text
	sourceText string // the pasted text, when sourcePath is ""
	textName   string // what the text is: pastedSource or exampleSource
	hasSource  bool
	spec       meta.InputSpec // of the studies loaded
	plan       meta.Plan      // of the report shown
	studies    []meta.Study
	res        meta.Result
	report     meta.Report
	hasResult  bool
	plotPNG    []byte
	stats      []meta.Statistic

	mu  sync.Mutex
	gen int // load and analysis generation: late results are dropped
	// stopRun cancels the analysis under way: a newer load or analysis
	// stops it instead of letting it run on unseen.
	stopRun context.CancelFunc
}

// NewMetaScreen builds the Meta-analysis screen.
func NewMetaScreen(ctx context.Context, svc app.MetaService, w fyne.Window, version string) *MetaScreen {
	s := &MetaScreen{ctx: ctx, window: w, version: version, layouts: metaLayouts(), svc: svc}
	s.analyses = newMetaAnalysesForm(func() { s.Reload() })

	s.openBtn = widget.NewButtonWithIcon("Open file…", theme.FolderOpenIcon(), s.chooseFile)
	s.paste = widget.NewMultiLineEntry()
	s.paste.SetPlaceHolder("Or paste CSV with a header row, e.g.\nstudy,ai,n1i,ci,n2i\nAronson,4,123,11,139")
	s.paste.SetMinRowsVisible(6)
	s.pasteBtn = widget.NewButtonWithIcon("Use pasted text", theme.ContentPasteIcon(), func() { s.LoadText(s.paste.Text) })
	s.exampleBtn = widget.NewButtonWithIcon("Example", theme.HelpIcon(), s.LoadExample)
	s.sourceLabel = widget.NewLabel("No study table loaded.")
	s.sourceLabel.Wrapping = fyne.TextWrapWord

	labels := make([]string, len(s.layouts))
	for i, l := range s.layouts {
		labels[i] = l.label
	}
	s.layoutSel = widget.NewSelect(labels, func(string) { s.layoutChanged() })
	s.sheet = widget.NewEntry()
	s.sheet.SetPlaceHolder("first sheet")
	s.filter = widget.NewEntry()
	s.filter.SetPlaceHolder("column=value, e.g. dataset=dat.bcg")
	s.columns = map[string]*widget.Entry{}
	s.columnsBox = container.New(layout.NewFormLayout())
	s.skipMissing = widget.NewCheck("Omit studies with missing values (na.omit)", nil)
	s.reloadBtn = widget.NewButtonWithIcon("Apply and reload", theme.ViewRefreshIcon(), s.Reload)

	s.measureSel = widget.NewSelect(nil, func(string) { s.optionsChanged() })
	s.measureSel.PlaceHolder = "(measure)"
	s.modelSel = widget.NewSelect(nil, func(string) { s.optionsChanged() })
	s.modelSel.PlaceHolder = "(model)"
	s.hk = widget.NewCheck("Knapp–Hartung adjustment", func(bool) { s.optionsChanged() })
	s.exportBtn = widget.NewButtonWithIcon("Export to Excel…", theme.DocumentSaveIcon(), s.chooseExport)
	s.exportBtn.Disable()

	s.status = widget.NewLabel("")
	s.status.Truncation = fyne.TextTruncateEllipsis
	s.stopBtn = widget.NewButtonWithIcon("Stop", theme.MediaStopIcon(), s.StopAnalysis)
	s.stopBtn.Hide()
	s.errLabel = widget.NewLabel("")
	s.errLabel.Wrapping = fyne.TextWrapWord
	s.errLabel.Importance = widget.DangerImportance
	s.errLabel.Hide()

	s.summary = widget.NewTable(
		func() (int, int) { return len(s.stats), 2 },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.TableCellID, o fyne.CanvasObject) {
			st := s.stats[id.Row]
			if id.Col == 0 {
				o.(*widget.Label).SetText(st.Label)
			} else {
				o.(*widget.Label).SetText(st.Text())
			}
		},
	)
	s.summary.SetColumnWidth(0, 340)
	s.summary.SetColumnWidth(1, 260)
	s.notes = widget.NewLabel("")
	s.notes.Wrapping = fyne.TextWrapWord
	s.plot = canvas.NewImageFromImage(nil)
	s.plot.FillMode = canvas.ImageFillContain
	s.plot.ScaleMode = canvas.ImageScaleSmooth
	s.plot.SetMinSize(fyne.NewSize(360, 240))
	s.funnel = canvas.NewImageFromImage(nil)
	s.funnel.FillMode = canvas.ImageFillContain
	s.bubble = canvas.NewImageFromImage(nil)
	s.bubble.FillMode = canvas.ImageFillContain
	s.cumul = canvas.NewImageFromImage(nil)
	s.cumul.FillMode = canvas.ImageFillContain
	s.analysesTxt = widget.NewLabel("")
	s.analysesTxt.TextStyle = fyne.TextStyle{Monospace: true}

	s.updating = true
	s.layoutSel.SetSelectedIndex(0)
	s.updating = false
	s.applyLayout()

	source := widget.NewCard("Study table", "",
		container.NewVBox(
			container.NewHBox(s.openBtn, s.pasteBtn), container.NewHBox(s.exampleBtn),
			s.sourceLabel,
			s.errLabel,
			s.paste,
			widget.NewForm(
				widget.NewFormItem("Layout", s.layoutSel),
				widget.NewFormItem("Sheet (.xlsx)", s.sheet),
				widget.NewFormItem("Filter", s.filter),
			),
			widget.NewLabel("Columns (empty: metafor's names)"),
			s.columnsBox,
			s.skipMissing,
			s.reloadBtn,
		))
	toolbar := container.NewVBox(
		s.measureSel, s.modelSel, // one per row: the model's name is long ("REML — random effects (Restricted maximum likelihood)")
		container.NewBorder(nil, nil, s.hk, s.exportBtn),
	)
	left := container.NewScroll(container.NewVBox(source, s.analyses.card())) // scrolls both ways, so narrow windows still fit
	plots := container.NewAppTabs(
		container.NewTabItem("Forest plot", s.plot),
		container.NewTabItem("Funnel plot", s.funnel),
		container.NewTabItem("Bubble plot", s.bubble),
		container.NewTabItem("Cumulative plot", s.cumul),
		container.NewTabItem("Analyses", container.NewScroll(s.analysesTxt)),
	)
	results := container.NewVSplit(plots, container.NewBorder(nil, container.NewVScroll(s.notes), nil, nil, s.summary))
	results.Offset = 0.6
	right := container.NewBorder(container.NewVBox(toolbar, container.NewBorder(nil, nil, nil, s.stopBtn, s.status)), nil, nil, nil, results)
	split := container.NewHSplit(left, right)
	split.Offset = 0.49 // the study table's form needs 485 pixels: it fits a 1024-pixel window
	s.content = split
	return s
}

// Content returns the screen's root object.
func (s *MetaScreen) Content() fyne.CanvasObject { return s.content }

// layoutChanged follows a new table layout: its columns, measures and
// models, then reloads the table.
func (s *MetaScreen) layoutChanged() {
	if s.updating {
		return
	}
	s.applyLayout()
	if s.hasSource {
		s.Reload()
	}
}

// applyLayout shows the column fields, measures and models of the chosen
// layout, keeping the current measure and model when they still apply.
func (s *MetaScreen) applyLayout() {
	if i := s.layoutSel.SelectedIndex(); i >= 0 {
		s.layout = i
	}
	l := s.layouts[s.layout]
	s.columnsBox.RemoveAll()
	for _, field := range append([]string{"study"}, l.fields...) {
		e, ok := s.columns[field]
		if !ok {
			e = widget.NewEntry()
			e.SetPlaceHolder(field)
			s.columns[field] = e
		}
		s.columnsBox.Add(widget.NewLabel(metaFieldHelp(field)))
		s.columnsBox.Add(e)
	}
	s.columnsBox.Refresh()

	s.updating = true
	defer func() { s.updating = false }()
	curMeasure, curModel := s.selectedMeasure(), s.selectedModel()
	s.measures = l.measures
	labels := make([]string, len(s.measures))
	sel := 0
	for i, m := range s.measures {
		labels[i] = measureChoice(m)
		if m == curMeasure {
			sel = i
		}
	}
	s.measureSel.SetOptions(labels)
	s.measureSel.SetSelectedIndex(sel)
	s.refreshModels(curModel)
}

// refreshModels offers the pooling methods of the selected measure
// (meta.MethodsFor: MH for 2x2 data, Peto for odds ratios only), keeping
// cur selected when it is still offered (else the first, REML). The caller
// holds s.updating.
func (s *MetaScreen) refreshModels(cur meta.Method) {
	s.models = meta.MethodsFor(s.selectedMeasure())
	labels := make([]string, len(s.models))
	sel := 0
	for i, m := range s.models {
		labels[i] = modelChoice(m)
		if m == cur {
			sel = i
		}
	}
	s.modelSel.SetOptions(labels)
	s.modelSel.SetSelectedIndex(sel)
	s.syncHK()
}

// syncHK enables the Knapp–Hartung choice where it applies (not MH or
// Peto).
func (s *MetaScreen) syncHK() {
	if m := s.selectedModel(); m == meta.MH || m == meta.PETO {
		s.hk.SetChecked(false)
		s.hk.Disable()
	} else {
		s.hk.Enable()
	}
}

func (s *MetaScreen) selectedMeasure() meta.Measure {
	if i := s.measureSel.SelectedIndex(); i >= 0 && i < len(s.measures) {
		return s.measures[i]
	}
	return ""
}

func (s *MetaScreen) selectedModel() meta.Method {
	if i := s.modelSel.SelectedIndex(); i >= 0 && i < len(s.models) {
		return s.models[i]
	}
	return ""
}

// SelectMeasure chooses a measure of the current layout; it reports false
// when the layout has no such measure.
func (s *MetaScreen) SelectMeasure(m meta.Measure) bool {
	for i, x := range s.measures {
		if x == m {
			s.measureSel.SetSelectedIndex(i)
			return true
		}
	}
	return false
}

// SelectModel chooses a pooling method; it reports false when the layout
// does not offer it.
func (s *MetaScreen) SelectModel(m meta.Method) bool {
	for i, x := range s.models {
		if x == m {
			s.modelSel.SetSelectedIndex(i)
			return true
		}
	}
	return false
}

// optionsChanged re-runs the analysis after a change of measure, model or
// Knapp–Hartung choice.
func (s *MetaScreen) optionsChanged() {
	if s.updating {
		return
	}
	s.updating = true // a new model list or unchecking HK is not a change of its own
	if !slices.Equal(meta.MethodsFor(s.selectedMeasure()), s.models) {
		s.refreshModels(s.selectedModel())
	}
	s.syncHK()
	s.updating = false
	s.analyse()
}

// inputSpec reads the input settings: the layout's kind, the column mapping,
// the sheet, the filter and the missing-value rule.
func (s *MetaScreen) inputSpec() (meta.InputSpec, error) {
	l := s.layouts[s.layout]
	spec := meta.InputSpec{Kind: l.kind, Sheet: strings.TrimSpace(s.sheet.Text), SkipMissing: s.skipMissing.Checked}
	for _, field := range append([]string{"study"}, l.fields...) {
		name := strings.TrimSpace(s.columns[field].Text)
		if name == "" && field != "study" {
			name = field // name every field, so that bi/di win over n1i/n2i
		}
		if err := spec.Columns.Set(field, name); err != nil {
			return spec, err
		}
	}
	if f := strings.TrimSpace(s.filter.Text); f != "" {
		col, val, err := meta.ParseFilter(f)
		if err != nil {
			return spec, err
		}
		spec.Where = map[string]string{col: val}
	}
	return spec, nil
}

// LoadFile reads the study table of a CSV or .xlsx file, off the UI
// goroutine, and analyses it.
func (s *MetaScreen) LoadFile(path string) {
	s.sourcePath, s.sourceText, s.hasSource = path, "", true
	s.Reload()
}

// LoadExample loads the BCG vaccine trials with the 2x2 layout, the risk
// ratio and REML, to show what the screen does.
func (s *MetaScreen) LoadExample() {
	s.layoutSel.SetSelectedIndex(0) // 2x2 counts: events and totals
	s.paste.SetText(meta.ExampleBCG)
	s.SelectMeasure(meta.RR)
	s.SelectModel(meta.REML)
	s.loadText(meta.ExampleBCG, exampleSource)
}

// LoadText reads the study table from pasted CSV text and analyses it.
func (s *MetaScreen) LoadText(text string) { s.loadText(text, pastedSource) }

// loadText analyses text, named name in messages and the provenance.
func (s *MetaScreen) loadText(text, name string) {
	s.sourcePath, s.sourceText, s.textName, s.hasSource = "", text, name, true
	s.Reload()
}

// sourceName names the study table in messages and the provenance.
func (s *MetaScreen) sourceName() string {
	switch {
	case s.sourcePath != "":
		return s.sourcePath
	case s.textName != "":
		return s.textName
	}
	return pastedSource
}

// Reload reads the current file or pasted text again with the current
// layout, column mapping, sheet and filter, then analyses it.
func (s *MetaScreen) Reload() {
	if !s.hasSource {
		s.showError(fmt.Errorf("open a file or paste a study table first"))
		return
	}
	spec, err := s.inputSpec()
	if err != nil {
		s.showError(err)
		return
	}
	path, text := s.sourcePath, s.sourceText
	plan := s.analyses.plan()
	svc, ctx := s.svc, s.ctx
	name := s.sourceName()
	gen := s.nextGen()
	s.status.SetText("Reading " + name + " …")
	go func() {
		var studies []meta.Study
		var err error
		if path != "" {
			studies, err = svc.Load(ctx, path, spec, plan)
		} else {
			studies, err = svc.Parse(ctx, text, spec, plan)
		}
		fyne.Do(func() {
			if s.stale(gen) {
				return
			}
			if err != nil {
				s.clearResult()
				s.studies = nil
				s.sourceLabel.SetText(name)
				s.status.SetText("Could not read " + name)
				s.showError(err)
				return
			}
			s.studies, s.spec = studies, spec
			s.sourceLabel.SetText(fmt.Sprintf("%s: %d studies", name, len(studies)))
			s.analyse()
		})
	}()
}

// analyse pools the loaded studies with the chosen measure and model, runs
// the chosen further analyses and draws the plots, off the UI goroutine.
func (s *MetaScreen) analyse() {
	if s.studies == nil {
		return
	}
	opts := meta.Options{Measure: s.selectedMeasure(), Method: s.selectedModel()}
	if s.hk.Checked && !s.hk.Disabled() {
		opts.Test = meta.TestKnHa
	}
	if err := s.analyses.zeroCells(&opts); err != nil {
		s.clearResult()
		s.status.SetText("Not analysed")
		s.showError(err)
		return
	}
	studies, plan, contours := s.studies, s.analyses.plan(), s.analyses.contours.Checked
	svc := s.svc
	gen := s.nextGen()
	ctx, stop := context.WithCancel(s.ctx)
	s.mu.Lock()
	s.stopRun = stop
	s.mu.Unlock()
	s.status.SetText("Analysing…")
	s.stopBtn.Show()
	plan.Progress = func(p progress.Report) {
		fyne.Do(func() {
			if !s.stale(gen) {
				s.status.SetText("Analysing… " + p.Stage)
			}
		})
	}
	go func() {
		defer stop()
		rep, err := svc.Run(ctx, studies, opts, plan)
		var fig metaFigures
		if err == nil {
			fig = drawMetaFigures(rep, contours)
		}
		fyne.Do(func() {
			if s.stale(gen) {
				return
			}
			s.stopBtn.Hide()
			if err != nil {
				s.clearResult()
				s.status.SetText("Not analysed")
				s.showError(err)
				return
			}
			s.hideError()
			res := rep.Result
			s.res, s.report, s.plan, s.hasResult, s.plotPNG = res, rep, plan, true, fig.forestPNG
			s.stats = s.stats[:0]
			notes := append([]string(nil), rep.Sentences...)
			for _, p := range rep.Problems {
				notes = append(notes, "Not computed — "+p)
			}
			for _, st := range res.Statistics() {
				if st.Key == "note" {
					notes = append(notes, "• "+st.Value.(string))
					continue
				}
				s.stats = append(s.stats, st)
			}
			s.summary.Refresh()
			s.notes.SetText(strings.Join(notes, "\n"))
			s.plot.Image, s.funnel.Image, s.bubble.Image, s.cumul.Image = fig.forest, fig.funnel, fig.bubble, fig.cumul
			s.plot.Refresh()
			s.funnel.Refresh()
			s.bubble.Refresh()
			s.cumul.Refresh()
			s.analysesTxt.SetText(fig.text)
			s.exportBtn.Enable()
			s.status.SetText(fmt.Sprintf("%s, %s: k = %d", res.ModelLabel(), res.Measure.Label(), res.K))
		})
	}()
}

// clearResult forgets the shown result.
func (s *MetaScreen) clearResult() {
	s.res, s.report, s.hasResult, s.plotPNG, s.stats = meta.Result{}, meta.Report{}, false, nil, nil
	s.summary.Refresh()
	s.notes.SetText("")
	s.plot.Image, s.funnel.Image, s.bubble.Image, s.cumul.Image = nil, nil, nil, nil
	s.plot.Refresh()
	s.funnel.Refresh()
	s.bubble.Refresh()
	s.cumul.Refresh()
	s.analysesTxt.SetText("")
	s.exportBtn.Disable()
}

// showError shows err inline: the engine's messages name the row and
// study; other errors are logged and shown without their technical detail.
func (s *MetaScreen) showError(err error) {
	msg := meta.ErrorMessage(err)
	if meta.ErrorCode(err) == meta.EINTERNAL {
		slog.Error("meta screen: internal error of the meta-analysis engine", "err", err)
	}
	s.errLabel.SetText(msg)
	s.errLabel.Show()
}

func (s *MetaScreen) hideError() {
	s.errLabel.SetText("")
	s.errLabel.Hide()
}

// StopAnalysis stops the analysis under way (the Stop button beside the
// status line). The result shown is cleared: it belongs to the settings
// before the stopped analysis.
func (s *MetaScreen) StopAnalysis() {
	s.nextGen()
	s.clearResult()
	s.hideError()
	s.status.SetText("Analysis stopped: change a setting or choose Apply and reload to analyse again")
}

// nextGen starts a new load or analysis (on the UI goroutine); results of
// earlier ones are dropped, an analysis under way is stopped and its Stop
// button hidden.
func (s *MetaScreen) nextGen() int {
	s.stopBtn.Hide()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.gen++
	if s.stopRun != nil {
		s.stopRun()
		s.stopRun = nil
	}
	return s.gen
}

// stale reports whether a newer load or analysis started after gen.
func (s *MetaScreen) stale(gen int) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return gen != s.gen
}

// ExportWorkbook writes the studies, the pooled result, the further
// analyses, the plots and the provenance to an Excel workbook at path, with progress and
// Cancel; nothing is left at path on an error or Cancel.
func (s *MetaScreen) ExportWorkbook(path string) {
	if !s.hasResult {
		return
	}
	studies, rep, plan, svc := s.studies, s.report, s.plan, s.svc
	prov := meta.NewProvenance(s.version, s.sourceName(), s.spec)
	runTask(s.ctx, s.window, "Export to Excel", func(ctx context.Context, report progress.Func) error {
		report(progress.Report{Stage: "Writing " + path})
		_, err := svc.Export(ctx, path, studies, rep, plan, prov)
		return err
	}, func(err error) {
		if err != nil {
			s.status.SetText("Export failed: nothing written to " + path)
			showError(s.window, err)
			return
		}
		s.status.SetText(fmt.Sprintf("Exported %d studies to %s", len(studies), path))
		dialog.ShowInformation("Export to Excel", fmt.Sprintf("Wrote %d studies, the results of every analysis and the plots to %s", len(studies), path), s.window)
	})
}

func (s *MetaScreen) chooseFile() {
	chooseOpenFile(s.window, []string{".csv", ".tsv", ".txt", ".xlsx", ".xlsm"}, s.LoadFile)
}

func (s *MetaScreen) chooseExport() {
	chooseSaveFile(s.window, "meta-analysis.xlsx", s.ExportWorkbook)
}

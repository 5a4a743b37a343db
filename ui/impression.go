package ui

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/impression"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/durfmt"
	"github.com/clinsight/clinsight/internal/progress"
)

// demoFindingsSeed seeds the synthetic example findings of the screen.
const demoFindingsSeed = 42

// ImpressionsScreen turns radiology FINDINGS into an IMPRESSION from the
// similar reports of a report corpus (ImpressionGPT): the input's
// observation labels, the similar reports with their labels and distance,
// every iteration with its score and good/bad role, the answer streamed and
// editable, batch mode for a CSV file, and Export to Excel.
type ImpressionsScreen struct {
	ctx     context.Context
	imps    app.ImpressionsService
	window  fyne.Window
	version string

	sourceSel   *widget.Select
	corpusInfo  *widget.Label
	useModel    *widget.Check
	modelGate   *modelGate // off and explained while no chat model is usable
	findings    *widget.Entry
	exampleBtn  *widget.Button
	generateBtn *widget.Button
	cancelBtn   *widget.Button
	labels      *widget.Label
	similar     *widget.Table
	iterations  *widget.Table
	answer      *widget.Entry
	sourceLabel *widget.Label
	consistency *widget.Label // the impression's contradictions of the findings, if any
	notice      *widget.Label
	acceptBtn   *widget.Button
	batchBtn    *widget.Button
	exportBtn   *widget.Button
	status      *widget.Label
	content     fyne.CanvasObject

	// Owned by the UI goroutine.
	sources   []app.Source
	source    string
	corpus    *impression.Corpus
	result    *impression.Result
	streaming int // iteration being streamed
	accepted  []impression.ExportRow
	demo      []string
	demoNext  int
	cancel    context.CancelFunc

	mu  sync.Mutex
	gen int // corpus load generation: late loads are dropped
}

// NewImpressionsScreen builds the Impressions screen; call Refresh to list
// the report corpora.
func NewImpressionsScreen(ctx context.Context, imps app.ImpressionsService, w fyne.Window, version string) *ImpressionsScreen {
	s := &ImpressionsScreen{ctx: ctx, imps: imps, window: w, version: version, demo: impression.DemoFindings(12, demoFindingsSeed)}

	s.sourceSel = widget.NewSelect(nil, func(name string) { s.SelectSource(name) })
	s.sourceSel.PlaceHolder = "(report corpus)"
	s.corpusInfo = widget.NewLabel("Choose a data source holding radiology reports.")
	s.corpusInfo.Wrapping = fyne.TextWrapWord
	s.useModel = widget.NewCheck("Generate with the chat model", nil)
	s.useModel.SetChecked(true)
	s.modelGate = newModelGate(s.useModel, app.TaskChat)

	s.findings = widget.NewMultiLineEntry()
	s.findings.SetPlaceHolder("Paste the FINDINGS of a chest X-ray report, e.g.\nThe heart is mildly enlarged. Small left pleural effusion. No pneumothorax.")
	s.findings.Wrapping = fyne.TextWrapWord
	s.findings.SetMinRowsVisible(5)
	s.exampleBtn = widget.NewButtonWithIcon("Demo example", theme.HelpIcon(), s.NextExample)
	s.generateBtn = widget.NewButtonWithIcon("Generate", theme.MediaPlayIcon(), s.Generate)
	s.generateBtn.Importance = widget.HighImportance
	s.cancelBtn = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), func() {
		if s.cancel != nil {
			s.cancel()
		}
	})
	s.cancelBtn.Disable()

	s.labels = widget.NewLabel("Observations: —")
	s.labels.Wrapping = fyne.TextWrapWord
	s.similar = s.newSimilarTable()
	s.iterations = s.newIterationTable()

	s.answer = widget.NewMultiLineEntry()
	s.answer.Wrapping = fyne.TextWrapWord
	s.answer.SetMinRowsVisible(3)
	s.answer.SetPlaceHolder("The impression appears here; edit it before accepting.")
	s.sourceLabel = widget.NewLabel("")
	s.sourceLabel.Wrapping = fyne.TextWrapWord
	s.consistency = widget.NewLabel("")
	s.consistency.Wrapping = fyne.TextWrapWord
	s.consistency.Importance = widget.DangerImportance
	s.answer.OnChanged = func(text string) {
		// An edit is checked again once the answer is complete.
		if s.result != nil && s.result.Impression != "" {
			s.consistency.SetText(consistencyText(impression.Contradictions(s.result.Labels, text)))
		}
	}
	s.notice = widget.NewLabel("")
	s.notice.Wrapping = fyne.TextWrapWord
	s.notice.Importance = widget.WarningImportance
	s.acceptBtn = widget.NewButtonWithIcon("Accept", theme.ConfirmIcon(), s.Accept)
	s.acceptBtn.Disable()
	s.batchBtn = widget.NewButtonWithIcon("Batch CSV…", theme.FolderOpenIcon(), func() {
		chooseOpenFile(s.window, []string{".csv"}, s.RunBatch)
	})
	s.exportBtn = widget.NewButtonWithIcon("Export to Excel…", theme.DocumentSaveIcon(), func() {
		chooseSaveFile(s.window, "clinsight-impressions.xlsx", s.ExportWorkbook)
	})
	s.exportBtn.Disable()
	s.status = widget.NewLabel("")
	s.status.Wrapping = fyne.TextWrapWord

	top := container.NewVBox(
		container.NewBorder(nil, nil, bold("Report corpus"), nil, s.sourceSel),
		s.corpusInfo, s.useModel, s.modelGate.note, hint("Unchecked: the impression of a similar report, consistent with the findings when one fits, is retrieved instead."),
		bold("Findings"), s.findings,
		container.NewHBox(s.generateBtn, s.cancelBtn, s.exampleBtn), container.NewHBox(s.batchBtn, s.exportBtn), // one row did not fit a 1024-pixel window
		s.labels,
	)
	answerBox := container.NewVBox(bold("Impression"), s.answer, s.consistency, s.sourceLabel, s.notice, container.NewHBox(s.acceptBtn), s.status)
	tables := container.NewVSplit(
		container.NewBorder(bold("Similar reports"), nil, nil, nil, s.similar),
		container.NewBorder(container.NewVBox(bold("Iterations"), hint("Score: mean ROUGE-1 against the similar reports' impressions.")), nil, nil, nil, s.iterations),
	)
	left := container.NewBorder(top, answerBox, nil, nil, nil)
	split := container.NewHSplit(container.NewScroll(left), tables)
	split.Offset = 0.45
	s.content = split
	return s
}

// Content returns the screen's root object.
func (s *ImpressionsScreen) Content() fyne.CanvasObject { return s.content }

var similarColumns = []tableColumn{{"#", 36}, {"report", 110}, {"distance", 80}, {"similarity", 90}, {"observations", 220}, {"impression", 420}}

func (s *ImpressionsScreen) newSimilarTable() *widget.Table {
	return newTextTable(similarColumns, func() int {
		if s.result == nil {
			return 0
		}
		return len(s.result.Examples)
	}, s.similarCell)
}

// similarCell is the text of one cell of the similar-reports table.
func (s *ImpressionsScreen) similarCell(row, col int) string {
	if s.result == nil || row >= len(s.result.Examples) {
		return ""
	}
	m := s.result.Examples[row]
	switch col {
	case 0:
		if row == s.result.Retrieved {
			return fmt.Sprintf("%d*", row+1)
		}
		return fmt.Sprint(row + 1)
	case 1:
		return m.Report.UID
	case 2:
		return fmt.Sprintf("%.2f", m.Distance)
	case 3:
		return fmt.Sprintf("%.3f", m.Similarity)
	case 4:
		if p := m.Report.Labels.Positives(); p != "" {
			return p
		}
		return "no positive finding"
	case 5:
		return m.Report.Impression
	}
	return ""
}

var iterationColumns = []tableColumn{{"#", 36}, {"role", 60}, {"ROUGE-1", 80}, {"response", 560}}

func (s *ImpressionsScreen) newIterationTable() *widget.Table {
	return newTextTable(iterationColumns, func() int {
		if s.result == nil {
			return 0
		}
		return len(s.result.Iterations)
	}, s.iterationCell)
}

// iterationCell is the text of one cell of the iterations table.
func (s *ImpressionsScreen) iterationCell(row, col int) string {
	if s.result == nil || row >= len(s.result.Iterations) {
		return ""
	}
	it := s.result.Iterations[row]
	switch col {
	case 0:
		if row == s.result.Best {
			return fmt.Sprintf("%d*", it.Number)
		}
		return fmt.Sprint(it.Number)
	case 1:
		if it.Err != "" {
			return "failed"
		}
		return it.Role
	case 2:
		if it.Err != "" {
			return ""
		}
		return fmt.Sprintf("%.3f", it.Score)
	case 3:
		if it.Err != "" {
			return it.Err
		}
		return it.Response
	}
	return ""
}

// Refresh lists the data sources holding a report corpus (off the UI
// goroutine) and selects the current one, or the first.
func (s *ImpressionsScreen) Refresh() {
	go func() {
		sources := s.imps.Sources(s.ctx)
		fyne.Do(func() {
			s.sources = sources
			names := make([]string, len(sources))
			for i, src := range sources {
				names[i] = src.Name
			}
			s.sourceSel.SetOptions(names)
			if len(names) == 0 {
				s.corpusInfo.SetText("No data source holds radiology reports yet: import some into a data source (the demo data has synthetic ones).")
				return
			}
			cur := s.source
			if !containsString(names, cur) {
				cur = names[0]
			}
			s.sourceSel.SetSelected(cur)
		})
	}()
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// SelectSource loads and indexes the report corpus of a data source (off
// the UI goroutine).
func (s *ImpressionsScreen) SelectSource(name string) {
	if name == "" || (name == s.source && s.corpus != nil) {
		return
	}
	s.source, s.corpus = name, nil
	s.generateBtn.Disable()
	s.corpusInfo.SetText("Loading the reports of " + name + "…")
	s.mu.Lock()
	s.gen++
	gen := s.gen
	s.mu.Unlock()
	var src app.Source
	for _, x := range s.sources {
		if x.Name == name {
			src = x
		}
	}
	go func() {
		c, err := s.imps.Corpus(s.ctx, src)
		fyne.Do(func() {
			s.mu.Lock()
			late := gen != s.gen
			s.mu.Unlock()
			if late {
				return
			}
			if err != nil {
				s.corpusInfo.SetText("Cannot use " + name + ": " + errorText(err))
				return
			}
			s.corpus = c
			s.generateBtn.Enable()
			s.corpusInfo.SetText(fmt.Sprintf("%s: %s reports, %s eligible as examples.", name, formatCount(int64(c.Len())), formatCount(int64(c.Examples()))))
		})
	}()
}

// NextExample puts the next synthetic demo findings in the findings box.
func (s *ImpressionsScreen) NextExample() {
	if len(s.demo) == 0 {
		return
	}
	s.findings.SetText(s.demo[s.demoNext%len(s.demo)])
	s.demoNext++
}

// options returns the pipeline options chosen on the screen.
func (s *ImpressionsScreen) options() impression.Options {
	return impression.Options{NoLLM: !s.useModel.Checked}
}

// Generate produces the impression of the findings box (off the UI
// goroutine), streaming the model's text into the impression box.
func (s *ImpressionsScreen) Generate() {
	findings := strings.TrimSpace(s.findings.Text)
	if s.corpus == nil || findings == "" {
		s.status.SetText("Choose a report corpus and enter findings first.")
		return
	}
	p, err := s.imps.Generator(s.corpus, s.options())
	if err != nil {
		s.status.SetText(errorText(err))
		showError(s.window, err)
		return
	}
	ctx, cancel := context.WithCancel(s.ctx)
	s.cancel = cancel
	s.setBusy(true)
	s.result = nil
	s.streaming = 0
	s.answer.SetText("")
	s.sourceLabel.SetText("")
	s.consistency.SetText("")
	s.notice.SetText("")
	s.labels.SetText("Observations: " + describeLabels(impression.LabelText(findings)))
	s.status.SetText("Searching similar reports…")
	s.refreshTables()
	go func() {
		res, err := p.Generate(ctx, impression.Request{Findings: findings}, func(e impression.Event) {
			fyne.Do(func() { s.onEvent(e) })
		})
		cancel()
		fyne.Do(func() {
			s.setBusy(false)
			if err != nil {
				s.status.SetText(errorText(err))
				if ctx.Err() != nil {
					s.status.SetText("Cancelled.")
				}
				showError(s.window, err)
				return
			}
			s.show(res)
		})
	}()
}

// onEvent shows progress of a generation (on the UI goroutine).
func (s *ImpressionsScreen) onEvent(e impression.Event) {
	switch {
	case e.Examples != nil:
		s.result = &impression.Result{Examples: e.Examples, Best: -1}
		s.refreshTables()
		s.status.SetText(fmt.Sprintf("%d similar reports found; asking the model…", len(e.Examples)))
	case e.Done != nil:
		if s.result != nil {
			s.result.Iterations = append(s.result.Iterations, *e.Done)
			s.iterations.Refresh()
		}
	case e.Delta != "":
		if e.Iteration != s.streaming {
			s.streaming = e.Iteration
			s.answer.SetText("")
			s.sourceLabel.SetText(fmt.Sprintf("Iteration %d…", e.Iteration))
		}
		s.answer.SetText(s.answer.Text + e.Delta)
	}
}

// show displays a finished result.
func (s *ImpressionsScreen) show(res impression.Result) {
	s.result = &res
	s.answer.SetText(res.Impression)
	s.labels.SetText("Observations: " + describeLabels(res.Labels))
	if res.Generated {
		s.sourceLabel.SetText(fmt.Sprintf("Generated by %s: iteration %d of %d, mean ROUGE-1 %.3f against the similar reports (threshold %.3f).",
			res.Model, res.Best+1, len(res.Iterations), res.Score, res.Threshold))
	} else {
		s.sourceLabel.SetText(fmt.Sprintf("Retrieved, not generated: the impression of similar report %s (mean ROUGE-1 %.3f with the other similar reports).",
			res.Examples[res.Retrieved].Report.UID, res.RetrievedScore))
	}
	s.consistency.SetText(consistencyText(res.Contradictions))
	s.notice.SetText(res.Notice)
	s.status.SetText(fmt.Sprintf("Done in %s.", durfmt.Human(res.Elapsed)))
	s.acceptBtn.Enable()
	s.refreshTables()
}

func (s *ImpressionsScreen) refreshTables() {
	s.similar.Refresh()
	s.iterations.Refresh()
}

func (s *ImpressionsScreen) setBusy(busy bool) {
	if busy {
		s.generateBtn.Disable()
		s.batchBtn.Disable()
		s.acceptBtn.Disable()
		s.cancelBtn.Enable()
		return
	}
	s.generateBtn.Enable()
	s.batchBtn.Enable()
	s.cancelBtn.Disable()
	s.cancel = nil
}

// consistencyText flags an impression that contradicts its findings ("" when
// it does not).
func consistencyText(cs []impression.Contradiction) string {
	if len(cs) == 0 {
		return ""
	}
	return "Check before accepting: " + impression.DescribeContradictions(cs)
}

// describeLabels lists an input's observations for people.
func describeLabels(l impression.Labels) string {
	var parts []string
	for _, o := range impression.AllObservations() {
		if l[o] != impression.Blank {
			parts = append(parts, fmt.Sprintf("%s: %s", o, l[o]))
		}
	}
	if len(parts) == 0 {
		return "none mentioned"
	}
	return strings.Join(parts, " · ")
}

// Accept records the shown impression (as edited in the box) for Export.
func (s *ImpressionsScreen) Accept() {
	if s.result == nil || strings.TrimSpace(s.answer.Text) == "" {
		return
	}
	s.accepted = append(s.accepted, impression.ExportRow{UID: fmt.Sprintf("typed-%d", len(s.accepted)+1), Result: *s.result, Final: s.answer.Text})
	s.acceptBtn.Disable()
	s.exportBtn.Enable()
	edited := ""
	if s.answer.Text != s.result.Impression {
		edited = " (edited)"
	}
	s.status.SetText(fmt.Sprintf("Accepted%s. %d impression(s) ready to export.", edited, len(s.accepted)))
}

// RunBatch produces an impression for every report of a CSV file (columns
// uid, findings and optionally impression), with a progress bar and
// Cancel; the results join the accepted ones for Export.
func (s *ImpressionsScreen) RunBatch(path string) {
	if s.corpus == nil {
		s.status.SetText("Choose a report corpus first.")
		return
	}
	p, err := s.imps.Generator(s.corpus, s.options())
	if err != nil {
		s.status.SetText(errorText(err))
		showError(s.window, err)
		return
	}
	var rows []impression.ExportRow
	s.setBusy(true)
	runTask(s.ctx, s.window, "Batch impressions", func(ctx context.Context, report progress.Func) error {
		reports, err := impression.ReadReports(ctx, path)
		if err != nil {
			return err
		}
		for i, r := range reports {
			if strings.TrimSpace(r.Findings) == "" {
				continue
			}
			res, err := p.Generate(ctx, impression.Request{Findings: r.Findings}, nil)
			if err != nil {
				return err
			}
			rows = append(rows, impression.ExportRow{UID: r.UID, Result: res, Reference: r.Impression})
			report(progress.Report{Stage: fmt.Sprintf("Report %d of %d", i+1, len(reports)), Done: int64(i + 1), Total: int64(len(reports)), Unit: "reports"})
		}
		return nil
	}, func(err error) {
		s.setBusy(false)
		if err != nil {
			showError(s.window, err)
			if len(rows) == 0 {
				s.status.SetText("Batch stopped: " + errorText(err))
				return
			}
			s.status.SetText(fmt.Sprintf("Batch stopped: kept the %d impressions produced before.", len(rows)))
		} else {
			flagged := 0
			for _, r := range rows {
				if len(r.Result.Contradictions) > 0 {
					flagged++
				}
			}
			note := ""
			if flagged > 0 {
				note = fmt.Sprintf(" %d contradict their findings (flagged in the export).", flagged)
			}
			s.status.SetText(fmt.Sprintf("Batch done: %d impressions from %s ready to export.%s", len(rows), path, note))
		}
		s.accepted = append(s.accepted, rows...)
		if len(s.accepted) > 0 {
			s.exportBtn.Enable()
		}
	})
}

// ExportWorkbook writes the accepted and batch impressions, their
// iterations and similar reports, and a Provenance sheet.
func (s *ImpressionsScreen) ExportWorkbook(path string) {
	rows := append([]impression.ExportRow(nil), s.accepted...)
	if len(rows) == 0 {
		return
	}
	opts := s.options()
	models := []string{}
	if !opts.NoLLM {
		models = append(models, s.imps.ChatModel())
	}
	prov := export.Provenance{AppVersion: s.version, DataSource: s.source, Models: models, Created: time.Now()}
	for _, src := range s.sources {
		if src.Name == s.source {
			prov.Add("Data source path", src.Path)
		}
	}
	runTask(s.ctx, s.window, "Export to Excel", func(ctx context.Context, report progress.Func) error {
		_, err := s.imps.Export(ctx, path, rows, impressionOptionsForExport(opts), prov, func(n int64) {
			report(progress.Report{Stage: "Writing " + path, Done: n, Unit: "rows"})
		})
		return err
	}, func(err error) {
		if err != nil {
			showError(s.window, err)
			return
		}
		s.status.SetText(fmt.Sprintf("Exported %d impressions to %s.", len(rows), path))
		dialog.ShowInformation("Export to Excel", fmt.Sprintf("Wrote %d impressions to %s", len(rows), path), s.window)
	})
}

// impressionOptionsForExport fills the defaults recorded in the provenance.
func impressionOptionsForExport(o impression.Options) impression.Options {
	if o.Examples <= 0 {
		o.Examples = impression.DefaultExamples
	}
	if o.Iterations <= 0 {
		o.Iterations = impression.DefaultIterations
	}
	return o
}

// SetModels switches "Generate with the chat model" off, with the reason,
// while the chat model is not usable (call on the UI goroutine).
func (s *ImpressionsScreen) SetModels(rep app.DoctorReport) { s.modelGate.apply(rep) }

// impressionsTab builds the Impressions screen of the main window, starts
// listing its report corpora, and returns its content.
func (mw *MainWindow) impressionsTab(ctx context.Context, imps app.ImpressionsService, w fyne.Window, version string) fyne.CanvasObject {
	mw.Impressions = NewImpressionsScreen(ctx, imps, w, version)
	mw.Impressions.Refresh()
	return mw.Impressions.Content()
}

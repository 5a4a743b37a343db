package ui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/storage"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/internal/durfmt"
	"github.com/clinsight/clinsight/internal/progress"
)

// cohortExamples is how many example questions the screen offers.
const cohortExamples = 12

// CohortScreen answers plain-English questions about a data source: the
// question box with example questions, the streamed answer with
// unverified numbers highlighted, the retrieved tables with their scores,
// the SQL (editable and re-runnable), the attempts log, the result table,
// a bar chart for small grouped counts, and Export cohort. Follow-up
// questions continue the conversation until "New conversation".
type CohortScreen struct {
	ctx     context.Context
	cohorts app.CohortService
	window  fyne.Window
	version string

	sourceSel  *widget.Select
	examples   *widget.Select
	question   *widget.Entry
	askBtn     *widget.Button
	askGate    *buttonGate // Ask off and explained while no SQL model is usable
	cancelBtn  *widget.Button
	newConvBtn *widget.Button
	progress   *widget.ProgressBarInfinite
	status     *widget.Label
	answer     *widget.RichText
	tables     *widget.List
	attempts   *widget.List
	sqlEntry   *widget.Entry
	runBtn     *widget.Button
	exportBtn  *widget.Button
	// exportExact exports an aggregate's exact values (row-level sources
	// only, recorded in the audit trail); else small cells read <k.
	exportExact *widget.Check
	result      *resultTable
	chart       *fyne.Container
	tabs        *container.AppTabs
	content     fyne.CanvasObject

	// Owned by the UI goroutine.
	sources   []app.Source
	source    string
	pipelines map[string]app.CohortSession
	answerBuf strings.Builder
	last      *cohort.Answer
	retrieved []cohort.TableScore
	tried     []cohort.Attempt
	history   []cohort.Turn
	cancel    context.CancelFunc
	// attrition is the Attrition tab (cohort_attrition.go).
	attrition *cohortAttrition
	extras    *cohortExtras   // Table 1 and saved cohorts (cohort_table1.go)
	concepts  *cohortConcepts // OMOP concept sets (cohort_concepts.go)

	// prescreen is the Trial pre-screening tab (cohort_prescreen.go).
	prescreen *cohortPrescreen

	mu  sync.Mutex
	gen int // source generation: late pipelines are dropped
}

// NewCohortScreen builds the Cohort screen; call Refresh to load the data
// sources.
func NewCohortScreen(ctx context.Context, cohorts app.CohortService, w fyne.Window, version string) *CohortScreen {
	s := &CohortScreen{ctx: ctx, cohorts: cohorts, window: w, version: version, pipelines: map[string]app.CohortSession{}}

	s.sourceSel = widget.NewSelect(nil, func(name string) { s.SelectSource(name) })
	s.sourceSel.PlaceHolder = "(data source)"
	s.examples = widget.NewSelect(nil, func(q string) {
		if q != "" {
			s.question.SetText(q)
		}
	})
	s.examples.PlaceHolder = "Example questions…"
	s.question = widget.NewMultiLineEntry()
	s.question.SetPlaceHolder("Ask a question about the data, e.g. How many female patients had a heart attack?")
	s.question.SetMinRowsVisible(2)
	s.question.Wrapping = fyne.TextWrapWord
	s.askBtn = widget.NewButtonWithIcon("Ask", theme.MailSendIcon(), func() { s.Ask(s.question.Text) })
	s.askBtn.Importance = widget.HighImportance
	s.cancelBtn = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), s.Cancel)
	s.cancelBtn.Disable()
	s.newConvBtn = widget.NewButtonWithIcon("New conversation", theme.ContentClearIcon(), s.NewConversation)
	s.progress = widget.NewProgressBarInfinite()
	s.progress.Stop()
	s.progress.Hide()
	s.status = widget.NewLabel("Choose a data source and ask a question.")
	s.status.Wrapping = fyne.TextWrapWord

	s.answer = widget.NewRichText()
	s.answer.Wrapping = fyne.TextWrapWord

	s.tables = widget.NewList(
		func() int { return len(s.retrieved) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("table 0.00 — evidence")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.ListItemID, o fyne.CanvasObject) {
			t := s.retrieved[id]
			text := fmt.Sprintf("%s  %.2f", t.Table, t.Score)
			if len(t.Evidence) > 0 {
				text += " — " + strings.Join(t.Evidence, "; ")
			}
			o.(*widget.Label).SetText(text)
		},
	)
	s.attempts = widget.NewList(
		func() int { return len(s.tried) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("attempt")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(id widget.ListItemID, o fyne.CanvasObject) {
			o.(*widget.Label).SetText(attemptText(s.tried[id]))
		},
	)
	s.attempts.OnSelected = func(id widget.ListItemID) {
		if id >= 0 && id < len(s.tried) && s.tried[id].SQL != "" {
			s.sqlEntry.SetText(s.tried[id].SQL)
		}
	}

	s.sqlEntry = widget.NewMultiLineEntry()
	s.sqlEntry.SetPlaceHolder("The SQL of the answer appears here; edit it and Run to re-run it (read-only).")
	s.sqlEntry.SetMinRowsVisible(4)
	s.sqlEntry.Wrapping = fyne.TextWrapWord
	s.runBtn = widget.NewButtonWithIcon("Run SQL", theme.MediaPlayIcon(), func() { s.RunSQL(s.sqlEntry.Text) })
	s.exportBtn = widget.NewButtonWithIcon("Export cohort…", theme.DocumentSaveIcon(), s.chooseExport)
	s.exportBtn.Disable()
	s.exportExact = widget.NewCheck("Exact counts", nil)

	s.result = newResultTable()
	s.chart = container.NewVBox(widget.NewLabel("A chart appears when the result is a small grouped count."))
	s.tabs = container.NewAppTabs(
		container.NewTabItem("Result", s.result.table),
		container.NewTabItem("Chart", container.NewVScroll(s.chart)),
		container.NewTabItem("Attempts", s.attempts),
		container.NewTabItem("Tables", s.tables),
	)
	s.addCohortExtras() // Table 1 and Saved cohorts tabs (cohort_table1.go)
	// The Attrition tab (cohort_attrition.go).
	s.attrition = s.addAttrition()
	// The Trial pre-screening tab (cohort_prescreen.go).
	s.addPrescreen()
	s.concepts = newCohortConcepts(s)

	s.askGate = newButtonGate(app.TaskSQL, "Run SQL, the charts and the exports work without it.", s.askBtn)
	top := container.NewVBox(
		container.NewBorder(nil, nil, widget.NewLabel("Data source"), s.newConvBtn, s.sourceSel),
		s.examples,
		container.NewBorder(nil, nil, nil, container.NewVBox(s.askBtn, s.cancelBtn), s.question),
		s.askGate.note, // why Ask is off: no SQL model (model_buttons.go)
		s.progress,
		s.status,
	)
	answerCard := widget.NewCard("Answer", "", container.NewVScroll(s.answer))
	sqlBox := container.NewBorder(bold("SQL"), container.NewVBox(container.NewHBox(s.runBtn, s.exportBtn), s.exportExact), nil, nil, s.sqlEntry)
	left := container.NewVSplit(answerCard, sqlBox)
	left.Offset = 0.55
	split := container.NewHSplit(left, s.tabs)
	split.Offset = 0.42
	s.content = container.NewBorder(top, nil, nil, nil, split)
	return s
}

// Content returns the screen's root object.
func (s *CohortScreen) Content() fyne.CanvasObject { return s.content }

// Refresh reloads the data sources and selects the current one (or the
// first).
func (s *CohortScreen) Refresh() {
	s.sources = s.cohorts.Sources()
	names := make([]string, len(s.sources))
	sel := ""
	for i, src := range s.sources {
		names[i] = src.Name
		if src.Name == s.source {
			sel = src.Name
		}
	}
	s.sourceSel.SetOptions(names)
	if sel == "" && len(names) > 0 {
		sel = names[0]
	}
	if sel == "" {
		s.status.SetText("No data sources yet: import one on the Data screen.")
		return
	}
	s.sourceSel.SetSelected(sel) // calls SelectSource
}

// SelectSource makes name the data source questions are asked about and
// loads its example questions off the UI goroutine. The pipeline itself
// (schema with samples, retrieval index) is prepared on the first question.
func (s *CohortScreen) SelectSource(name string) {
	if name == "" || name == s.source {
		return
	}
	s.source = name
	s.history = nil
	if p := s.pipelines[name]; p != nil {
		s.showExamples(p.Examples(cohortExamples))
		return
	}
	s.mu.Lock()
	s.gen++
	gen := s.gen
	s.mu.Unlock()
	src, _ := s.sourceNamed(name)
	go func() {
		ex, err := s.cohorts.Examples(s.ctx, src, cohortExamples)
		fyne.Do(func() {
			s.mu.Lock()
			stale := gen != s.gen
			s.mu.Unlock()
			if stale {
				return
			}
			if err != nil {
				s.status.SetText("Could not read " + name + ": " + err.Error())
				return
			}
			s.showExamples(ex.Questions)
			s.status.SetText(fmt.Sprintf("%s: %d tables. Ask a question, or pick an example.", name, ex.Tables))
		})
	}()
}

// sourceNamed returns the listed source called name.
func (s *CohortScreen) sourceNamed(name string) (app.Source, bool) {
	for _, src := range s.sources {
		if src.Name == name {
			return src, true
		}
	}
	return app.Source{}, false
}

// withPipeline calls then with the selected source's pipeline, preparing
// it first (off the UI goroutine, with progress) when needed.
func (s *CohortScreen) withPipeline(then func(p app.CohortSession)) {
	name := s.source
	if name == "" {
		s.status.SetText("Choose a data source first.")
		return
	}
	if p := s.pipelines[name]; p != nil {
		then(p)
		return
	}
	s.askBtn.Disable()
	s.runBtn.Disable()
	s.busy(true, "Preparing "+name+": reading its schema and indexing its documentation…")
	ctx, cancel := context.WithCancel(s.ctx)
	s.cancel = cancel
	src, _ := s.sourceNamed(name)
	go func() {
		p, err := s.cohorts.Open(ctx, src, app.CohortOptions{Progress: func(pr progress.Report) {
			fyne.Do(func() { s.status.SetText(pr.Stage) })
		}})
		cancel()
		fyne.Do(func() {
			s.cancel = nil
			s.busy(false, "")
			s.askGate.enable(s.askBtn)
			s.runBtn.Enable()
			if err != nil {
				if errors.Is(err, context.Canceled) {
					s.status.SetText("Cancelled.")
				} else {
					s.status.SetText("Could not prepare " + name + ": " + err.Error())
				}
				return
			}
			if old := s.pipelines[name]; old != nil {
				p.Close()
				p = old
			}
			s.pipelines[name] = p
			then(p)
		})
	}()
}

// showExamples offers example questions.
func (s *CohortScreen) showExamples(ex []string) {
	s.examples.SetOptions(ex)
	s.examples.ClearSelected()
}

// busy shows or hides the progress bar and switches Cancel.
func (s *CohortScreen) busy(on bool, msg string) {
	if on {
		s.progress.Show()
		s.progress.Start()
		s.cancelBtn.Enable()
		if msg != "" {
			s.status.SetText(msg)
		}
		return
	}
	s.progress.Stop()
	s.progress.Hide()
	s.cancelBtn.Disable()
}

// Cancel stops the question being answered.
func (s *CohortScreen) Cancel() {
	if s.cancel != nil {
		s.cancel()
	}
}

// NewConversation forgets the earlier questions (follow-ups start over).
func (s *CohortScreen) NewConversation() {
	s.history = nil
	s.status.SetText("New conversation: the next question does not refer to earlier ones.")
}

// Ask answers question about the selected source, streaming the answer;
// it continues the conversation (the earlier questions are context).
func (s *CohortScreen) Ask(question string) {
	if strings.TrimSpace(question) == "" {
		s.status.SetText("Type a question first.")
		return
	}
	s.withPipeline(func(p app.CohortSession) { s.ask(p, question) })
}

// ask runs a question on p.
func (s *CohortScreen) ask(p app.CohortSession, question string) {
	s.askRequest(p, cohort.Request{Question: question, History: append([]cohort.Turn(nil), s.history...)})
}

// askRequest runs a request on p; once answered, the conversation is the
// request's history and this turn.
func (s *CohortScreen) askRequest(p app.CohortSession, req cohort.Request) {
	ctx, cancel := context.WithCancel(s.ctx)
	s.cancel = cancel
	s.askBtn.Disable()
	s.runBtn.Disable()
	s.exportBtn.Disable()
	s.answerBuf.Reset()
	s.setAnswer(nil)
	s.retrieved, s.tried = nil, nil
	s.tables.Refresh()
	s.attempts.Refresh()
	s.result.SetResult(nil)
	s.setChart(nil)
	s.sqlEntry.SetText("")
	s.busy(true, "Thinking…")
	s.concepts.asked(req)
	go func() {
		ans, err := p.Ask(ctx, req, func(e cohort.Event) {
			// Events arrive on this goroutine; widgets change on the UI one.
			fyne.Do(func() { s.onEvent(e) })
		})
		cancel()
		fyne.Do(func() {
			s.cancel = nil
			s.busy(false, "")
			s.askGate.enable(s.askBtn)
			s.runBtn.Enable()
			s.showAnswer(ans, err)
			if ans.Status == cohort.StatusAnswered {
				s.history = append(slices.Clip(req.History), ans.Turn())
			}
		})
	}()
}

// onEvent shows the progress of a question.
func (s *CohortScreen) onEvent(e cohort.Event) {
	switch e.Kind {
	case cohort.EventStage:
		s.status.SetText(stageText(e.Stage))
	case cohort.EventRetrieved:
		s.retrieved = e.Retrieval.Tables
		s.tables.Refresh()
	case cohort.EventAttempt:
		s.tried = append(s.tried, *e.Attempt)
		s.attempts.Refresh()
		if e.Attempt.SQL != "" {
			s.sqlEntry.SetText(e.Attempt.SQL)
		}
	case cohort.EventResult:
		s.result.SetResult(e.Result)
		s.setChart(e.Result)
		s.tabs.SelectIndex(0)
	case cohort.EventConcepts:
		s.concepts.showSets(e.ConceptSets)
	case cohort.EventDelta:
		s.answerBuf.WriteString(e.Text)
		s.answer.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: s.answerBuf.String(), Style: widget.RichTextStyleParagraph}}
		s.answer.Refresh()
	}
}

// stageText describes a pipeline stage for the status line.
func stageText(stage string) string {
	switch stage {
	case "retrieve":
		return "Finding the relevant tables…"
	case "guard", "classify+generate":
		return "Writing the query…"
	case "validate":
		return "Checking the query against the database…"
	case "execute":
		return "Running the query (read-only)…"
	case "repair":
		return "Correcting the query with the database's error…"
	case "recheck":
		return "No rows: re-checking the filters against the stored values…"
	case "explain":
		return "Explaining the result…"
	case "verify":
		return "Checking the numbers of the answer…"
	case "attrition":
		return "Counting the patients after each criterion…"
	}
	return stage + "…"
}

// showAnswer shows a finished answer (or what a failed run recorded).
func (s *CohortScreen) showAnswer(ans *cohort.Answer, err error) {
	s.last = ans
	s.attrition.showAnswer(ans)
	s.concepts.showAnswer(ans)
	if ans == nil {
		s.status.SetText("Error: " + err.Error())
		return
	}
	s.setAnswer(ans)
	if ans.Retrieval != nil {
		s.retrieved = ans.Retrieval.Tables
	}
	s.tried = ans.Attempts
	s.tables.Refresh()
	s.attempts.Refresh()
	if ans.SQL != "" {
		s.sqlEntry.SetText(ans.SQL)
	}
	s.result.SetResult(ans.Result)
	s.setChart(ans.Result)
	if ans.Result != nil {
		s.exportBtn.Enable()
	}
	switch {
	case errors.Is(err, context.Canceled):
		s.status.SetText("Cancelled.")
	case err != nil:
		s.status.SetText("Stopped: " + ans.Message)
	default:
		s.status.SetText(fmt.Sprintf("%s · %d attempt(s) · %d model calls · %d tokens · %s",
			ans.Status, len(ans.Attempts), ans.Calls(), ans.Usage.Tokens(), durfmt.Human(ans.Elapsed)))
	}
}

// setAnswer renders the explanation with unverified numbers highlighted,
// or the reason there is none.
func (s *CohortScreen) setAnswer(ans *cohort.Answer) {
	s.answer.Segments = answerSegments(ans)
	s.answer.Refresh()
}

// RunSQL re-runs the (edited) SQL through the same read-only runner and
// shows its result; the explanation is cleared, since it described the
// earlier result.
func (s *CohortScreen) RunSQL(query string) {
	if strings.TrimSpace(query) == "" {
		s.status.SetText("Write a query first.")
		return
	}
	s.withPipeline(func(p app.CohortSession) { s.runSQL(p, query) })
}

// runSQL runs query on p.
func (s *CohortScreen) runSQL(p app.CohortSession, query string) {
	prev := s.last
	s.runBtn.Disable()
	s.busy(true, "Running the query (read-only)…")
	ctx, cancel := context.WithCancel(s.ctx)
	s.cancel = cancel
	go func() {
		ans, err := p.Run(ctx, prev, query)
		cancel()
		fyne.Do(func() {
			s.cancel = nil
			s.busy(false, "")
			s.runBtn.Enable()
			s.last = ans
			s.attrition.showAnswer(ans)
			s.tried = ans.Attempts
			s.attempts.Refresh()
			if err != nil {
				s.status.SetText("Error: " + ans.Message)
				return
			}
			s.setAnswer(ans)
			s.result.SetResult(ans.Result)
			s.setChart(ans.Result)
			s.exportBtn.Enable()
			s.status.SetText(resultSummary(ans.Result))
		})
	}()
}

// ExportCohort writes the last result with its attempts, retrieval and
// provenance to an Excel workbook at path, with progress and Cancel.
// Small cells read <k unless "Exact counts" is ticked (row-level sources).
func (s *CohortScreen) ExportCohort(path string) {
	s.exportCohort(path, app.ExportOptions{Exact: s.exportExact.Checked})
}

// exportCohort exports under the source's disclosure policy: a
// patient-level cohort after the user confirms it (export_confirm.go).
func (s *CohortScreen) exportCohort(path string, opts app.ExportOptions) {
	ans := s.last
	if ans == nil || ans.Result == nil {
		return
	}
	total := int64(len(ans.Result.Rows))
	src, _ := s.sourceNamed(s.source)
	runTask(s.ctx, s.window, "Export cohort", func(ctx context.Context, report progress.Func) error {
		opts.Source, opts.Version = src, s.version
		opts.Progress = func(n int64) {
			report(progress.Report{Stage: "Writing " + path, Done: n, Total: total, Unit: "rows"})
		}
		_, err := s.cohorts.Export(ctx, path, ans, opts)
		return err
	}, func(err error) {
		if pl := patientLevelOf(err); pl != nil && !opts.PatientLevel {
			confirmPatientLevel(s.window, pl, func(shift bool) {
				s.exportCohort(path, app.ExportOptions{PatientLevel: true, ShiftDates: shift, Exact: opts.Exact})
			})
			return
		}
		if err != nil {
			showError(s.window, err)
			return
		}
		s.status.SetText(fmt.Sprintf("Exported %s rows to %s", formatCount(total), path))
	})
}

// chooseExport asks where to export the cohort.
func (s *CohortScreen) chooseExport() {
	d := dialog.NewFileSave(func(wc fyne.URIWriteCloser, err error) {
		if err != nil || wc == nil {
			showError(s.window, err)
			return
		}
		uri := wc.URI()
		wc.Close()
		// The exporter renames a finished temp file over path: drop the
		// empty file the dialog created, so an error leaves nothing.
		if err := storage.Delete(uri); err != nil {
			showError(s.window, err)
			return
		}
		s.ExportCohort(uri.Path())
	}, s.window)
	d.SetFileName("clinsight-cohort.xlsx")
	d.Show()
}

// cohortTab builds the Cohort screen of the main window, loads its data
// sources and returns its content (for the window's tab list).
func (mw *MainWindow) cohortTab(ctx context.Context, cohorts app.CohortService, w fyne.Window, version string) fyne.CanvasObject {
	mw.Cohort = NewCohortScreen(ctx, cohorts, w, version)
	mw.Cohort.Refresh()
	return mw.Cohort.Content()
}

package ui

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/progress"
)

// EvidenceScreen runs a systematic review as a project of steps: PICO →
// Search → Screen → Extract → Results → Meta-analysis, one view per step
// over the open review (app.Reviewer), which holds the rules and saves
// every change. Every intermediate output (terms, query, criteria,
// verdicts, values, numbers) is shown for the user to check and edit; the
// model steps run with progress and Cancel and leave the project unchanged
// when they fail. Export writes the whole review to one workbook.
type EvidenceScreen struct {
	ctx     context.Context
	svc     app.ReviewService
	logger  *slog.Logger
	window  fyne.Window
	version string

	// Top bar.
	projectSel *widget.Select
	newBtn     *widget.Button
	importBtn  *widget.Button
	exportBtn  *widget.Button
	saveState  *widget.Label
	notice     *widget.Label
	modelGate  *buttonGate // the chat model's steps off and explained while it is not usable
	steps      *container.AppTabs
	content    fyne.CanvasObject

	// The steps.
	pico      *picoView
	search    *searchView
	screening *screeningView
	extract   *extractView
	results   *resultsView
	meta      *metaView

	// Owned by the UI goroutine.
	review       app.Reviewer // the open review, nil when none
	projects     []string
	sources      []string
	loadingTexts map[string]bool
	running      *task // the model step in progress, nil when idle
	updating     bool  // widgets are being filled by the screen itself

	closing sync.WaitGroup // reviews being closed off the UI goroutine

	// Closing the window (evidence_close.go).
	unsavedMu     sync.Mutex
	unsaved       []app.Reviewer // closed reviews whose save failed: their changes are only in memory
	retrying      bool           // unsaved being saved again (under unsavedMu)
	unsavedNote   string         // the notice that says a review is kept unsaved (UI goroutine)
	closeBegun    bool           // the window's close began: the open review joined the unsaved ones
	closingWindow bool           // the reviews are being saved, or the user asked, before the window closes
	closedForGood bool           // every review saved, copied or let go: the window closes
	closeAsk      *closeAsk      // the question shown, nil when none
	closeNote     *closeNote     // where the recovery copy is, nil when not shown
}

// NewEvidenceScreen builds the Evidence screen over the review service;
// call Refresh to list the review projects and the literature sources.
func NewEvidenceScreen(ctx context.Context, svc app.ReviewService, logger *slog.Logger, w fyne.Window, version string) *EvidenceScreen {
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	s := &EvidenceScreen{ctx: ctx, svc: svc, logger: logger, window: w, version: version, loadingTexts: map[string]bool{}}

	s.projectSel = widget.NewSelect(nil, s.projectChosen)
	s.projectSel.PlaceHolder = "(review project)"
	s.newBtn = widget.NewButtonWithIcon("New…", theme.ContentAddIcon(), func() {
		go func() { // the sources may have changed since the screen opened
			sources := s.svc.Sources(s.ctx)
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
		if p := s.project(); p != nil {
			chooseSaveFile(s.window, p.Name+".xlsx", s.ExportWorkbook)
		}
	})
	s.saveState = widget.NewLabel("")
	s.notice = widget.NewLabel("")
	s.notice.Wrapping = fyne.TextWrapWord
	s.notice.Importance = widget.WarningImportance
	s.notice.Hide()

	s.pico, s.search, s.screening = newPICOView(s), newSearchView(s), newScreeningView(s)
	s.extract, s.results, s.meta = newExtractView(s), newResultsView(s), newMetaView(s)
	s.steps = container.NewAppTabs(
		container.NewTabItem(evidence.StepPICO, s.pico.content),
		container.NewTabItem(evidence.StepSearch, s.search.content),
		container.NewTabItem(evidence.StepScreen, s.screening.content),
		container.NewTabItem(evidence.StepExtract, s.extract.content),
		container.NewTabItem(evidence.StepResults, s.results.content),
		container.NewTabItem(evidence.StepMeta, s.meta.content),
	)
	s.steps.OnSelected = func(*container.TabItem) { s.stepShown() }

	// The review's name takes the width the buttons leave (at a fixed 220
	// pixels it was cut: "Demo - microwave vs rad…").
	s.modelGate = newButtonGate(app.TaskChat, "Suggesting search terms and criteria, screening and extracting by the model are off; searching, screening by hand and the meta-analysis work without it.",
		s.pico.suggestBtn, s.screening.suggestCriteriaBtn, s.screening.screenBtn, s.extract.extractBtn, s.results.resultsBtn)
	top := container.NewVBox(
		container.NewBorder(nil, nil, bold("Review"), container.NewHBox(s.newBtn, s.importBtn, s.exportBtn, s.saveState), s.projectSel),
		s.notice, s.modelGate.note, // why the model's steps are off (model_buttons.go)
	)
	s.content = container.NewBorder(top, nil, nil, nil, s.steps)
	s.setReview(nil)
	return s
}

// Content returns the screen's root object.
func (s *EvidenceScreen) Content() fyne.CanvasObject { return s.content }

// project returns the open review's project, nil when none is open.
func (s *EvidenceScreen) project() *evidence.Project {
	if s.review == nil {
		return nil
	}
	return s.review.Project()
}

// edit changes the open project through the review (which saves it),
// unless the screen is filling its widgets.
func (s *EvidenceScreen) edit(change func(p *evidence.Project)) bool {
	if s.updating || s.review == nil {
		return false
	}
	s.review.Update(change)
	s.changed()
	return true
}

// changed shows that the project has a change the review saves shortly.
func (s *EvidenceScreen) changed() {
	s.showSaveStatus(app.SaveStatus{Pending: true})
}

// literatureExts are the files Import offers: records (PubMed XML, MEDLINE,
// RIS, CSV) and full texts (JATS XML, plain text, PDF).
var literatureExts = []string{".xml", ".nbib", ".txt", ".ris", ".csv", ".pdf"}

// ImportLiterature imports a literature file or a full text into the
// workspace's literature source, with progress and Cancel, and says what
// it added.
func (s *EvidenceScreen) ImportLiterature(path string) {
	if s.running != nil {
		return
	}
	var summary string
	s.running = runTask(s.ctx, s.window, "Import literature", func(ctx context.Context, report progress.Func) error {
		var err error
		summary, err = s.svc.Import(ctx, path, report)
		return err
	}, func(err error) {
		s.running = nil
		if err != nil {
			showError(s.window, err)
			return
		}
		go func() {
			sources := s.svc.Sources(s.ctx)
			fyne.Do(func() { s.sources = sources })
		}()
		dialog.ShowInformation("Import literature", "Imported "+summary+" Start a review on it with New….", s.window)
	})
}

// --- projects ---

// Refresh lists the review projects and the data sources (off the UI
// goroutine) and opens the first project when none is open.
func (s *EvidenceScreen) Refresh() {
	go func() {
		names, err := s.svc.Projects()
		sources := s.svc.Sources(s.ctx)
		fyne.Do(func() {
			if err != nil {
				s.setNotice("Could not list the review projects: " + err.Error())
				return
			}
			s.sources = sources
			s.setProjectOptions(names)
			if s.review == nil && len(names) > 0 {
				s.projectSel.SetSelected(names[0]) // opens it
			}
			if len(names) == 0 && s.review == nil {
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
	if s.updating || name == "" {
		return
	}
	if p := s.project(); p != nil && p.Name == name {
		return
	}
	s.OpenProject(name)
}

// OpenProject opens a saved project (off the UI goroutine, after the one
// open has saved its last changes) and shows it.
func (s *EvidenceScreen) OpenProject(name string) {
	old := s.review
	s.closing.Add(1)
	go func() {
		if old != nil {
			if err := old.Close(); err != nil {
				s.keepUnsaved(old, err)
			}
		}
		s.closing.Done()
		if u := s.unsavedNamed(name); u != nil {
			// Its file lacks the changes kept in memory: opening it would
			// go on from the file, and saving the changes later would
			// overwrite what was done meanwhile.
			if err := u.Save(); err != nil {
				fyne.Do(func() {
					s.setNotice(fmt.Sprintf("The review %q is not opened again: its last changes could not be saved (%s) and are kept in memory. Solve the problem and open it again, or close Clinsight to save a copy elsewhere.", name, saveProblem(err)))
				})
				return
			}
			s.letGo(u)
		}
		r, err := s.svc.Open(name)
		fyne.Do(func() {
			if err != nil {
				s.setNotice(fmt.Sprintf("Could not open the review project %q: %v", name, err))
				return
			}
			s.clearNotice()
			s.setReview(r)
			p := r.Project()
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
			"with Import…, or create the demo data (on the command line: clinsight demo init), which holds demo literature.", s.window)
		return
	}
	name := widget.NewEntry()
	name.SetPlaceHolder("e.g. MWA vs RFA in HCC")
	src := widget.NewSelect(s.sources, nil)
	if slices.Contains(s.sources, app.DemoSourceName) {
		src.SetSelected(app.DemoSourceName)
	} else {
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

// NewProject creates a review project on a literature source (saved by
// the review service) and shows it.
func (s *EvidenceScreen) NewProject(name, source string, q evidence.PICO) {
	r, err := s.svc.Create(name, source, q)
	if err != nil {
		showError(s.window, err)
		return
	}
	s.clearNotice()
	s.setReview(r)
	name = r.Project().Name
	if !slices.Contains(s.projects, name) {
		s.setProjectOptions(append(slices.Clone(s.projects), name))
	}
	s.updating = true
	s.projectSel.SetSelected(name)
	s.updating = false
	s.steps.SelectIndex(0)
	s.showSaveStatus(app.SaveStatus{Saved: time.Now()})
}

// setReview shows an open review (nil: none); the one open before is
// closed (saved) off the UI goroutine.
func (s *EvidenceScreen) setReview(r app.Reviewer) {
	if old := s.review; old != nil && old != r {
		s.closing.Add(1)
		go func() {
			defer s.closing.Done()
			if err := old.Close(); err != nil {
				s.keepUnsaved(old, err)
			}
		}()
	}
	s.review = r
	s.loadingTexts = map[string]bool{}
	if r != nil {
		r.OnSave(func(st app.SaveStatus) {
			if st.Err == nil && !st.Pending {
				s.retryUnsaved() // the disk takes a save again: those kept unsaved may save too
			}
			fyne.Do(func() {
				if s.review == r {
					s.showSaveStatus(st)
				}
			})
		})
	}
	s.showProject()
}

// showProject shows the open project in every step.
func (s *EvidenceScreen) showProject() {
	p := s.project()
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
	s.pico.show(p)
	s.search.show(p)
	s.screening.show(p)
	s.extract.show(p)
	s.results.show(p)
	s.meta.show(p)
}

// showSaveStatus shows where the saving of the project stands.
func (s *EvidenceScreen) showSaveStatus(st app.SaveStatus) {
	switch {
	case st.Err != nil:
		s.saveState.Importance = widget.DangerImportance
		s.saveState.SetText("not saved: " + st.Err.Error())
	case st.Pending:
		s.saveState.Importance = widget.MediumImportance
		s.saveState.SetText("unsaved changes…")
	default:
		s.saveState.Importance = widget.SuccessImportance
		s.saveState.SetText("saved " + st.Saved.Local().Format("15:04"))
	}
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

// runStep runs a step of the open review with progress and Cancel. When
// it ends, the review's project (changed by the step, or as it was) is
// shown and applied (if not nil) runs; a notice says why a step failed
// or was cancelled.
func (s *EvidenceScreen) runStep(title string, work func(ctx context.Context, r app.Reviewer, report progress.Func) error, applied func()) {
	r := s.review
	if r == nil {
		s.setNotice("Create or open a review project first.")
		return
	}
	if s.running != nil {
		return
	}
	s.running = runTask(s.ctx, s.window, title, func(ctx context.Context, report progress.Func) error {
		return work(ctx, r, report)
	}, func(err error) {
		s.running = nil
		// A step that fails for some studies, or is cancelled, keeps what
		// it did for the others; any other failure changed nothing.
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
		if r != s.review {
			return // another project was opened meanwhile: the review saved the step's work in its own file
		}
		s.showProject()
		if applied != nil {
			applied()
		}
	})
}

// stepProgress adapts a progress.Func to the review's done-of-total
// callbacks.
func stepProgress(report progress.Func, verb string) func(done, total int) {
	return func(done, total int) {
		report(progress.Report{Stage: fmt.Sprintf("%s %d of %d studies", verb, done, total), Done: int64(done), Total: int64(total), Unit: "studies"})
	}
}

// loadText reads a study's text off the UI goroutine, then calls shown.
func (s *EvidenceScreen) loadText(id string, shown func()) {
	r := s.review
	if r == nil || s.loadingTexts[id] {
		return
	}
	s.loadingTexts[id] = true
	go func() {
		_, err := r.StudyText(s.ctx, id)
		fyne.Do(func() {
			delete(s.loadingTexts, id)
			if r != s.review {
				return
			}
			if err != nil {
				s.setNotice("Could not read the text of " + id + ": " + err.Error())
				return
			}
			shown()
		})
	}()
}

// ExportWorkbook writes the whole review (search strategy and counts,
// PRISMA, verdicts and decisions, extracted fields with their cited
// chunks, results, the meta-analysis with its forest plot, provenance) to
// an Excel workbook at path, with progress and Cancel.
func (s *EvidenceScreen) ExportWorkbook(path string) {
	r := s.review
	if r == nil || s.running != nil {
		return
	}
	p := r.Project()
	name := p.Name
	prov := export.Provenance{AppVersion: s.version, DataSource: p.Source, Created: time.Now()}
	s.running = runTask(s.ctx, s.window, "Export workbook", func(ctx context.Context, report progress.Func) error {
		report(progress.Report{Stage: "Writing " + path})
		return r.ExportWorkbook(ctx, path, prov)
	}, func(err error) {
		s.running = nil
		if err != nil {
			showError(s.window, err)
			return
		}
		dialog.ShowInformation("Export workbook", fmt.Sprintf("Wrote the review %q to %s", name, path), s.window)
	})
}

// stepShown follows a change of step: the values of the Extract step and
// the results follow the decisions made meanwhile.
func (s *EvidenceScreen) stepShown() {
	p := s.project()
	if p == nil {
		return
	}
	switch s.steps.SelectedIndex() {
	case 3:
		s.extract.showValues()
	case 4:
		s.results.showTables(p)
	}
}

// evidenceTab builds the Evidence screen for the main window and lists
// its projects.
func (mw *MainWindow) evidenceTab(ctx context.Context, ws *app.Workspace, w fyne.Window, version string) fyne.CanvasObject {
	mw.Evidence = NewEvidenceScreen(ctx, ws.Reviews(), ws.Logger(), w, version)
	mw.Evidence.Refresh()
	return mw.Evidence.Content()
}

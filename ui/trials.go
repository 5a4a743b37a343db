package ui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/durfmt"
	"github.com/clinsight/clinsight/internal/progress"
)

// trialColumns are the columns of the ranked trials table: what a
// clinician reads; the component scores are under "Scoring details" in the
// trial's pane.
var trialColumns = []tableColumn{{"Rank", 50}, {"Trial", 110}, {"Title", 300}, {"Why this trial", 380}, {"Eligibility", 100}}

// Columns of trialColumns.
const (
	colRank = iota
	colTrial
	colTitle
	colWhy
	colEligibility
)

// TrialsScreen matches a patient description to the trials of a data
// source: the patient box (with the demo patients), the ranked trials with
// each component's score and rank, a trial's detail with its criteria
// coloured by the model's verdict and evidence, and Export to Excel.
type TrialsScreen struct {
	ctx     context.Context
	trials  app.TrialsService
	window  fyne.Window
	version string

	sourceSel  *widget.Select
	patientSel *widget.Select
	patient    *widget.Entry
	useModel   *widget.Check
	modelGate  *modelGate // off and explained while no chat model is usable
	filters    *widget.Check
	recruiting *widget.Check
	matchBtn   *widget.Button
	exportBtn  *widget.Button
	query      *widget.Label
	notices    *widget.Label
	status     *widget.Label
	table      *widget.Table
	detail     *widget.RichText
	scoring    *widget.Label     // the component scores, one line each
	scoringBox *widget.Accordion // "Scoring details", closed by default
	content    fyne.CanvasObject

	// Owned by the UI goroutine.
	sources  []app.Source
	patients []trials.SyntheticPatient
	result   *trials.Result
	selected int
	running  *task // the matching in progress, nil when idle
}

// NewTrialsScreen builds the Trials screen; call Refresh to list the
// sources holding trials.
func NewTrialsScreen(ctx context.Context, svc app.TrialsService, w fyne.Window, version string) *TrialsScreen {
	s := &TrialsScreen{ctx: ctx, trials: svc, window: w, version: version, selected: -1}
	s.sourceSel = widget.NewSelect(nil, func(string) { s.loadPatients() })
	s.sourceSel.PlaceHolder = "(trials source)"
	s.patientSel = widget.NewSelect(nil, s.choosePatient)
	s.patientSel.PlaceHolder = "(demo patient)"
	s.patient = widget.NewMultiLineEntry()
	s.patient.Wrapping = fyne.TextWrapWord
	s.patient.SetMinRowsVisible(6)
	s.patient.SetPlaceHolder("Describe the patient: age, sex, diagnoses, findings, treatments, e.g.\nA 58-year-old woman with hypertension and obesity presents with exertional chest pain. She denies smoking.")
	s.useModel = widget.NewCheck("Use the chat model (concepts, eligibility)", nil)
	s.useModel.SetChecked(true)
	s.modelGate = newModelGate(s.useModel, app.TaskChat)
	s.filters = widget.NewCheck("Filter by the patient's age and sex", nil)
	s.filters.SetChecked(true)
	s.recruiting = widget.NewCheck("Recruiting trials only", nil)
	s.matchBtn = widget.NewButtonWithIcon("Match", theme.SearchIcon(), s.Match)
	s.matchBtn.Importance = widget.HighImportance
	s.exportBtn = widget.NewButtonWithIcon("Export to Excel…", theme.DocumentSaveIcon(), func() {
		chooseSaveFile(s.window, "clinsight-trials.xlsx", s.ExportWorkbook)
	})
	s.exportBtn.Disable()
	s.query = widget.NewLabel("")
	s.query.Wrapping = fyne.TextWrapWord
	s.notices = widget.NewLabel("")
	s.notices.Wrapping = fyne.TextWrapWord
	s.notices.Importance = widget.WarningImportance
	s.status = widget.NewLabel("")
	s.status.Wrapping = fyne.TextWrapWord
	s.table = s.newTable()
	s.detail = widget.NewRichText()
	s.detail.Wrapping = fyne.TextWrapWord
	s.scoring = widget.NewLabel("")
	s.scoring.Wrapping = fyne.TextWrapWord
	s.scoringBox = widget.NewAccordion(widget.NewAccordionItem("Scoring details", s.scoring))
	s.scoringBox.Hide()

	form := container.NewVBox(
		container.NewBorder(nil, nil, bold("Trials"), nil, s.sourceSel),
		bold("Patient"), s.patientSel, // the label above: the list keeps the width for "P0001: 21 y female, Major Depressive Disorder"
		s.patient,
		s.useModel, s.modelGate.note, s.filters, s.recruiting,
		container.NewHBox(s.matchBtn, s.exportBtn),
		s.query, s.notices, s.status,
	)
	right := container.NewVSplit(
		container.NewBorder(bold("Ranked trials"), nil, nil, nil, s.table),
		container.NewBorder(bold("Trial"), nil, nil, nil, container.NewVScroll(container.NewVBox(s.detail, s.scoringBox))),
	)
	split := container.NewHSplit(container.NewVScroll(form), right)
	split.Offset = 0.4
	s.content = split
	return s
}

// Content returns the screen's root object.
func (s *TrialsScreen) Content() fyne.CanvasObject { return s.content }

// Refresh lists the sources that hold trials (off the UI goroutine) and
// selects the demo, or the first one.
func (s *TrialsScreen) Refresh() {
	go func() {
		sources := s.trials.Sources(s.ctx)
		fyne.Do(func() {
			s.sources = sources
			names := make([]string, len(sources))
			for i, src := range sources {
				names[i] = src.Name
			}
			s.sourceSel.Options = names
			s.sourceSel.Refresh()
			switch {
			case len(sources) == 0:
				s.status.SetText("No data source holds trials yet: import trials into a data source (the demo data has some).")
			case s.sourceSel.Selected == "":
				sel := names[0]
				for _, n := range names {
					if n == app.DemoSourceName {
						sel = n
					}
				}
				s.sourceSel.SetSelected(sel) // loads the patients
			}
		})
	}()
}

// selectedSource returns the source chosen in the picker.
func (s *TrialsScreen) selectedSource() (app.Source, bool) {
	for _, src := range s.sources {
		if src.Name == s.sourceSel.Selected {
			return src, true
		}
	}
	return app.Source{}, false
}

// loadPatients lists the demo patients of the selected source.
func (s *TrialsScreen) loadPatients() {
	src, ok := s.selectedSource()
	if !ok {
		return
	}
	go func() {
		ps, err := s.trials.Patients(s.ctx, src)
		fyne.Do(func() {
			if err != nil {
				s.status.SetText("Could not read the demo patients: " + errorText(err))
				return
			}
			s.patients = ps
			opts := make([]string, len(ps))
			for i, p := range ps {
				opts[i] = fmt.Sprintf("%s: %d y %s, %s", p.ID, p.Age, p.Sex, p.Condition)
			}
			s.patientSel.Options = opts
			s.patientSel.ClearSelected()
			if len(ps) == 0 {
				s.patientSel.PlaceHolder = "(no demo patients in this source)"
			} else {
				s.patientSel.PlaceHolder = "(demo patient)"
			}
			s.patientSel.Refresh()
		})
	}()
}

func (s *TrialsScreen) choosePatient(label string) {
	for i, o := range s.patientSel.Options {
		if o == label && i < len(s.patients) {
			s.patient.SetText(s.patients[i].Description)
		}
	}
}

// Match ranks the trials of the selected source for the patient, with a
// progress bar and Cancel.
func (s *TrialsScreen) Match() {
	src, ok := s.selectedSource()
	text := strings.TrimSpace(s.patient.Text)
	if !ok || text == "" {
		dialog.ShowInformation("Trials", "Choose a trials source and describe the patient.", s.window)
		return
	}
	useModel, flt, rec := s.useModel.Checked, s.filters.Checked, s.recruiting.Checked
	var res *trials.Result
	s.matchBtn.Disable()
	s.running = runTask(s.ctx, s.window, "Matching trials", func(ctx context.Context, report progress.Func) error {
		report(progress.Report{Stage: "Opening the trials"})
		var err error
		res, err = s.trials.Match(ctx, src, trials.Request{
			Patient: text, Top: 50, UseModel: useModel, FilterAge: flt, FilterSex: flt, RecruitingOnly: rec,
			Progress: func(stage string, done, total int) {
				report(progress.Report{Stage: stage, Done: int64(done), Total: int64(total), Unit: "trials"})
			},
		}, app.TrialsOptions{NoModel: !useModel})
		return err
	}, func(err error) {
		s.running = nil
		s.matchBtn.Enable()
		if err != nil {
			showError(s.window, err)
			if s.result == nil {
				s.status.SetText("Cancelled or failed: " + errorText(err))
			}
			return
		}
		s.show(res)
	})
}

// show displays a result.
func (s *TrialsScreen) show(res *trials.Result) {
	s.result = res
	s.selected = -1
	q := res.Query
	age := "age not stated"
	if q.HasAge {
		age = fmt.Sprintf("%g years", q.Age)
	}
	sex := string(q.Sex)
	if sex == "" {
		sex = "sex not stated"
	}
	var cs []string
	for _, c := range q.Concepts {
		switch {
		case c.Negated:
			cs = append(cs, "no "+c.Text)
		case c.Weight > 0 && len(cs) < 20:
			cs = append(cs, fmt.Sprintf("%s %.2g", c.Text, c.Weight))
		}
	}
	s.query.SetText(fmt.Sprintf("Patient: %s, %s. Concepts (%s): %s", age, sex, q.Source, strings.Join(cs, "; ")))
	s.notices.SetText(strings.Join(res.Notices, "\n"))
	s.status.SetText(rankingSummary(res))
	s.table.Refresh()
	s.table.ScrollToTop()
	if len(res.Trials) > 0 {
		s.exportBtn.Enable()
		s.table.Select(widget.TableCellID{Row: 0, Col: 1})
		s.ShowTrial(0) // also when row 0 was already selected (a second run)
	} else {
		s.exportBtn.Disable()
		s.scoringBox.Hide()
		s.detail.Segments = []widget.RichTextSegment{&widget.TextSegment{Text: "No trial matches: try other words, or clear the filters.", Style: widget.RichTextStyleParagraph}}
		s.detail.Refresh()
	}
}

// rankingSummary describes a ranking for the status line, the embedder in
// plain words.
func rankingSummary(res *trials.Result) string {
	how := "meaning-based matching with " + res.Embedder
	if strings.HasPrefix(res.Embedder, "lexical") {
		how = "word matching only — install an embedding model for meaning-based matching (see Settings)"
	}
	return fmt.Sprintf("%d trials ranked, %d removed by filters, in %s; %s.", res.Candidates, res.Filtered, durfmt.Human(res.Elapsed), how)
}

// eligibilitySummary says in a sentence what the model found of a trial's
// criteria, or why they were not checked.
func eligibilitySummary(r trials.RankedTrial) string {
	switch {
	case r.Eligibility == nil:
		return "Eligibility not checked (the chat model is off or this trial is below the ones checked): read the criteria below."
	case r.Eligibility.Error != "":
		return "Eligibility not assessed: " + r.Eligibility.Error
	}
	var met, inc, hit, exc, unknown int
	for _, v := range r.Eligibility.Verdicts {
		switch v.Verdict {
		case trials.Included:
			met++
			inc++
		case trials.NotIncluded:
			inc++
		case trials.Excluded:
			hit++
			exc++
		case trials.NotExcluded:
			exc++
		case trials.NotEnoughInfo:
			unknown++
		}
	}
	text := fmt.Sprintf("Eligibility (checked by the model): %d of %d inclusion criteria met, %d of %d exclusion criteria apply", met, inc, hit, exc)
	if unknown > 0 {
		text += fmt.Sprintf(", %d without enough information", unknown)
	}
	return text + "."
}

// scoringText explains each component score of a ranked trial, one line
// each.
func scoringText(r trials.RankedTrial) string {
	return strings.Join([]string{
		fmt.Sprintf("Combined rank (R_combo) %.1f, #%d: the component ranks below, weighted and added; lower is better.", r.Combo.Score, r.Combo.Rank),
		fmt.Sprintf("BM25 %.2f, #%d: how often the patient's terms occur in the trial's text, rare terms counting more.", r.BM25.Score, r.BM25.Rank),
		fmt.Sprintf("STS1 %.2f, #%d: how well each of the patient's concepts is matched by the trial's conditions and interventions.", r.STS1.Score, r.STS1.Rank),
		fmt.Sprintf("STS2 %.2f, #%d: how well each of the trial's conditions and interventions is matched by the patient's concepts.", r.STS2.Score, r.STS2.Rank),
	}, "\n")
}

func (s *TrialsScreen) newTable() *widget.Table {
	t := newTextTable(trialColumns, func() int {
		if s.result == nil {
			return 0
		}
		return len(s.result.Trials)
	}, s.cell)
	t.OnSelected = func(id widget.TableCellID) { s.ShowTrial(id.Row) }
	return t
}

// cell is the text of a ranked trials cell.
func (s *TrialsScreen) cell(row, col int) string {
	if s.result == nil || row >= len(s.result.Trials) {
		return ""
	}
	r := s.result.Trials[row]
	switch col {
	case colRank:
		return fmt.Sprint(r.Rank)
	case colTrial:
		return r.Trial.ID
	case colTitle:
		return r.Trial.Title
	case colWhy:
		return trials.Why(s.result.Query, r.Trial)
	case colEligibility:
		switch {
		case r.Eligibility == nil:
			return "—"
		case r.Eligibility.Error != "":
			return "not assessed"
		}
		return fmt.Sprintf("%.2f", r.Eligibility.Score)
	}
	return ""
}

// verdictColor colours a criterion by the model's verdict: met / not
// excluded green, failed / excluded red, not enough information orange,
// not assessed in the default colour.
func verdictColor(v trials.Verdict) fyne.ThemeColorName {
	switch v {
	case trials.Included, trials.NotExcluded:
		return theme.ColorNameSuccess
	case trials.NotIncluded, trials.Excluded:
		return theme.ColorNameError
	case trials.NotEnoughInfo:
		return theme.ColorNameWarning
	}
	return theme.ColorNameForeground
}

// ShowTrial shows the detail of the ranked trial at row: its fields and its
// criteria, coloured by verdict, with the evidence.
func (s *TrialsScreen) ShowTrial(row int) {
	if s.result == nil || row < 0 || row >= len(s.result.Trials) {
		return
	}
	s.selected = row
	r := s.result.Trials[row]
	t := r.Trial
	seg := func(text string, style widget.RichTextStyle) *widget.TextSegment {
		return &widget.TextSegment{Text: text, Style: style}
	}
	plain := widget.RichTextStyleInline
	heading := widget.RichTextStyleSubHeading
	var segs []widget.RichTextSegment
	segs = append(segs,
		seg(t.ID+" — "+t.Title, heading),
		seg(fmt.Sprintf("Conditions: %s", orNone(t.Conditions)), widget.RichTextStyleParagraph),
		seg(fmt.Sprintf("Interventions: %s", orNone(t.Interventions)), widget.RichTextStyleParagraph),
		seg(fmt.Sprintf("Sex: %s · Ages: %s · Status: %s · Phase: %s", t.Sex, t.AgeLimits(), orDash(t.Status), orDash(t.Phase)), widget.RichTextStyleParagraph),
		seg(fmt.Sprintf("Rank %d. Why this trial: %s", r.Rank, trials.Why(s.result.Query, t)), widget.RichTextStyleParagraph),
		seg(eligibilitySummary(r), widget.RichTextStyleParagraph),
	)
	verdicts := map[string]trials.CriterionVerdict{}
	if r.Eligibility != nil {
		for _, v := range r.Eligibility.Verdicts {
			verdicts[fmt.Sprintf("%s%d", v.Kind, v.Index)] = v
		}
	}
	for _, kind := range []trials.CriterionKind{trials.Inclusion, trials.Exclusion} {
		title := "Inclusion criteria"
		if kind == trials.Exclusion {
			title = "Exclusion criteria"
		}
		segs = append(segs, seg(title, heading))
		n := 0
		for _, c := range t.Criteria() {
			if c.Kind != kind {
				continue
			}
			n++
			v, ok := verdicts[fmt.Sprintf("%s%d", c.Kind, c.Index)]
			style := widget.RichTextStyleParagraph
			verdict := ""
			if ok {
				style.ColorName = verdictColor(v.Verdict)
				verdict = " [" + string(v.Verdict) + "]"
			}
			segs = append(segs, seg(fmt.Sprintf("%d. %s%s", c.Index, c.Text, verdict), style))
			if ok && (v.Evidence != "" || v.Explanation != "") {
				ev := plain
				ev.TextStyle = fyne.TextStyle{Italic: true}
				ev.Inline = false
				segs = append(segs, seg("    "+strings.TrimSpace(v.Explanation+" — “"+v.Evidence+"”"), ev))
			}
		}
		if n == 0 {
			segs = append(segs, seg("(none)", widget.RichTextStyleParagraph))
		}
	}
	s.detail.Segments = segs
	s.detail.Refresh()
	s.scoring.SetText(scoringText(r))
	s.scoringBox.Show()
}

func orNone(xs []string) string {
	if len(xs) == 0 {
		return "—"
	}
	return strings.Join(xs, "; ")
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// ExportWorkbook writes the last result (ranked trials, criteria with
// verdicts, concepts, provenance) to an Excel workbook at path.
func (s *TrialsScreen) ExportWorkbook(path string) {
	res := s.result
	if res == nil {
		return
	}
	prov := export.Provenance{AppVersion: s.version, DataSource: s.sourceSel.Selected, Created: time.Now()}
	if res.Model != "" {
		prov.Models = append(prov.Models, res.Model)
	}
	prov.Models = append(prov.Models, res.Embedder)
	runTask(s.ctx, s.window, "Export to Excel", func(ctx context.Context, report progress.Func) error {
		report(progress.Report{Stage: "Writing " + path})
		_, err := s.trials.Export(ctx, path, res, prov)
		return err
	}, func(err error) {
		if err != nil {
			showError(s.window, err)
			return
		}
		s.status.SetText(rankingSummary(res) + fmt.Sprintf("\nExported %d trials to %s", len(res.Trials), path))
		dialog.ShowInformation("Export to Excel", fmt.Sprintf("Wrote %d trials and their criteria to %s", len(res.Trials), path), s.window)
	})
}

// SetModels switches "Use the chat model" off, with the reason, while the
// chat model is not usable (call on the UI goroutine).
func (s *TrialsScreen) SetModels(rep app.DoctorReport) { s.modelGate.apply(rep) }

// trialsTab builds the Trials screen for the main window and lists its
// sources.
func (mw *MainWindow) trialsTab(ctx context.Context, svc app.TrialsService, w fyne.Window, version string) fyne.CanvasObject {
	mw.Trials = NewTrialsScreen(ctx, svc, w, version)
	mw.Trials.Refresh()
	return mw.Trials.Content()
}

package app

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/app/prescreen"
	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/progress"
)

// PrescreenService pre-screens the patients of a cohort for the trials
// of a trials source (issue 19 item 6). *Prescreen implements it; the
// Cohort screen and `clinsight cohort prescreen` use it.
type PrescreenService interface {
	// TrialSources lists the data sources holding trials.
	TrialSources(ctx context.Context) []Source
	// Prescreen reads the cohort's patients, ranks the trials for each
	// and checks the criteria of each patient's top K (see
	// prescreen.Run). Cancelling ctx stops it.
	Prescreen(ctx context.Context, req PrescreenRequest) (*PrescreenResult, error)
	// Export writes the result to a workbook (Matrix, Criteria, Trials,
	// Provenance), patient identifiers pseudonymised, recorded in the
	// audit trail.
	Export(ctx context.Context, path string, res *PrescreenResult, opts PrescreenExportOptions) (export.Summary, error)
}

var _ PrescreenService = (*Prescreen)(nil)

// Prescreen is the workspace's pre-screening service (ws.Prescreen()).
type Prescreen struct{ ws *Workspace }

// Prescreen returns the workspace's pre-screening service.
func (ws *Workspace) Prescreen() *Prescreen { return &Prescreen{ws: ws} }

// PrescreenRequest is one pre-screening: a saved cohort definition
// (Cohort, its id or name) or a cohort statement on a source (Source and
// Query), and the trials source.
type PrescreenRequest struct {
	Cohort string
	Source Source
	Query  string
	// Trials is the source holding the trials.
	Trials Source
	// Top is K, the best-ranked trials per patient checked (0: 10).
	Top int
	// NoModel ranks without a model and leaves the criteria without a
	// structured check unassessed; otherwise the configured chat model
	// assesses the criteria of each patient's top K, when it is installed
	// and the source's rows may be sent to it.
	NoModel bool
	// MaxPatients bounds the patients (0: 500).
	MaxPatients int
	// Progress receives the stages: reading the patients, then ranking
	// the trials for each.
	Progress progress.Func
}

// PrescreenResult is a pre-screening's matrix with where it came from.
type PrescreenResult struct {
	*prescreen.Matrix
	// Source and Query are the cohort's; Cohort the saved definition's
	// name ("" for a statement); PatientColumn the column read.
	Source        Source
	Query         string
	Cohort        string
	PatientColumn string
	// TrialsSource is the source holding the trials.
	TrialsSource Source
	// Total is the cohort's patients (more than len(Patients) when it was
	// bounded); Screened the patients pre-screened.
	Total, Screened int
	// AggregateOnly is set for a source that shows aggregates only: the
	// matrix holds no patients (Patients and Cells are empty), only the
	// trials with their counts, small counts shown under MinCell.
	AggregateOnly bool
	MinCell       int
	// Counts are the trials' counts (for an aggregate-only source, the
	// only per-patient information kept), in Matrix.Trials order.
	Counts []prescreen.TrialCount
}

// CountText writes a count as it may be shown: "<k" for 1 to k−1 on an
// aggregate-only source.
func (r *PrescreenResult) CountText(n int) string {
	if r.AggregateOnly && r.MinCell >= 2 && n >= 1 && n < r.MinCell {
		return disclosure.Suppressed{K: r.MinCell}.String()
	}
	return fmt.Sprint(n)
}

// Shown returns trial j's counts as they may be shown: on an
// aggregate-only source under prescreen.TrialCount.Shown's rule (small
// counts, and the totals that would give them away, as "<k"), otherwise
// exact.
func (r *PrescreenResult) Shown(j int) prescreen.ShownCounts {
	k := 0
	if r.AggregateOnly {
		k = r.MinCell
	}
	return r.Counts[j].Shown(k)
}

// progress is a stage's progress report: patients done of total on a
// row-level source. On an aggregate-only source it is in percent only
// (Unit "%", Total 100), and for fewer than MinCell patients only its
// start and end (0 and 100 %): the steps between would give the count
// away (one patient of 6 is 16 %).
func (r *PrescreenResult) progress(stage string, done, total int) progress.Report {
	if !r.AggregateOnly {
		return progress.Report{Stage: stage, Done: int64(done), Total: int64(total), Unit: "patients"}
	}
	pct := 0
	switch {
	case total <= 0 || done <= 0:
	case done >= total:
		pct = 100
	case total >= r.MinCell:
		pct = done * 100 / total
	}
	return progress.Report{Stage: stage, Done: int64(pct), Total: 100, Unit: "%"}
}

// TrialSources lists the sources holding trials.
func (p *Prescreen) TrialSources(ctx context.Context) []Source { return p.ws.Trials().Sources(ctx) }

// engine opens a read-only engine on a source able to read a batch of
// patients' diagnoses, medications and lab values.
func (p *Prescreen) engine(ctx context.Context, src Source) (prescreen.Querier, func(), error) {
	opts := p.ws.RunnerOptions()
	opts.MaxRows = max(opts.MaxRows, 100_000)
	if src.Kind == SourcePostgres {
		eng, release, err := p.ws.postgresEngine(ctx, src, datasets.RunnerOptions{MaxRows: opts.MaxRows})
		if err != nil {
			return nil, nil, err
		}
		return eng, release, nil
	}
	path, err := p.ws.file(src)
	if err != nil {
		return nil, nil, err
	}
	eng, err := datasets.NewSQLiteEngine(ctx, path, opts)
	if err != nil {
		return nil, nil, err
	}
	return eng, func() { eng.Close() }, nil
}

// definition finds a saved cohort definition by id or name.
func (p *Prescreen) definition(ctx context.Context, ref string) (cohort.Definition, error) {
	st := p.ws.Cohort().store()
	if d, err := st.Load(ref); err == nil {
		return d, nil
	}
	defs, _, err := st.List()
	if err != nil {
		return cohort.Definition{}, err
	}
	var names []string
	for _, d := range defs {
		if strings.EqualFold(d.Name, ref) || strings.EqualFold(d.ID, ref) {
			return d, nil
		}
		names = append(names, d.ID)
	}
	if len(names) == 0 {
		return cohort.Definition{}, fmt.Errorf("there is no saved cohort %q: save a cohort first", ref)
	}
	return cohort.Definition{}, fmt.Errorf("there is no saved cohort %q (saved: %s)", ref, strings.Join(names[:min(len(names), 10)], ", "))
}

// Prescreen runs a pre-screening.
func (p *Prescreen) Prescreen(ctx context.Context, req PrescreenRequest) (*PrescreenResult, error) {
	ws := p.ws
	report := func(r progress.Report) {
		if req.Progress != nil {
			req.Progress(r)
		}
	}
	out := &PrescreenResult{Source: req.Source, Query: req.Query, TrialsSource: req.Trials}
	if strings.TrimSpace(req.Cohort) != "" {
		d, err := p.definition(ctx, req.Cohort)
		if err != nil {
			return nil, err
		}
		src, err := ws.Resolve(d.Source.Name)
		if err != nil {
			return nil, fmt.Errorf("the saved cohort %q runs on the data source %q: %w", d.Name, d.Source.Name, err)
		}
		out.Source, out.Query, out.Cohort = src, d.SQL, d.Name
	}
	if strings.TrimSpace(out.Query) == "" {
		return nil, errors.New("choose a cohort to pre-screen: a saved cohort, or an answer with a column that identifies patients")
	}
	if out.TrialsSource.Name == "" && out.TrialsSource.Path == "" {
		return nil, errors.New("choose the data source that holds the trials")
	}
	pol := ws.Data().Policy(out.Source)
	out.AggregateOnly, out.MinCell = pol.AggregateOnly(), pol.K()

	q, release, err := p.engine(ctx, out.Source)
	if err != nil {
		return nil, err
	}
	defer release()
	col, err := cohort.FindPatientColumn(ctx, q, out.Query, out.Source.Kind)
	if err != nil {
		return nil, err
	}
	if col == "" {
		return nil, errors.New("the cohort's result has no column that identifies patients (subject_id or person_id), so its patients cannot be pre-screened")
	}
	out.PatientColumn = col
	step := func(stage string) func(done, total int) {
		return func(done, total int) { report(out.progress(stage, done, total)) }
	}
	step("Reading the patients")(0, 0)
	c, err := prescreen.ReadCohort(ctx, q, prescreen.ReadOptions{Query: out.Query, PatientColumn: col, MaxPatients: req.MaxPatients,
		Progress: step("Reading the patients"), CountText: out.CountText})
	det := map[string]any{"what": "trial pre-screening", "sql": out.Query, "patient_column": col, "trials_source": out.TrialsSource.Name}
	if c != nil {
		det["patients"] = len(c.Summaries)
	}
	if err != nil {
		det["error"] = err.Error()
	}
	if rerr := ws.Record(context.WithoutCancel(ctx), audit.Event{Action: audit.ActionSQL, Source: out.Source.Name, Details: det}); rerr != nil {
		return nil, errors.Join(err, rerr)
	}
	if err != nil {
		return nil, err
	}
	out.Total, out.Screened = c.Total, len(c.Summaries)

	top := req.Top
	if top <= 0 {
		top = prescreen.DefaultTop
	}
	if top > prescreen.MaxTop {
		return nil, fmt.Errorf("at most the %d best-ranked trials per patient can be checked (%d asked)", prescreen.MaxTop, top)
	}
	topts := TrialsOptions{NoModel: req.NoModel}
	topts.Ranking.EligibilityTop = top
	var notices []string
	if !req.NoModel && (out.AggregateOnly || !ws.SendRowsToModel()) {
		topts.NoModel = true
		why := "the data source shows aggregates only"
		if !out.AggregateOnly {
			why = "the source's rows may not be sent to the model server (Settings → Connection and privacy)"
		}
		notices = append(notices, "The model was not used because "+why+": criteria without a structured check are not assessed.")
	}
	m, err := ws.Trials().Open(ctx, out.TrialsSource, topts)
	if err != nil {
		return nil, err
	}
	defer m.Close()
	notices = append(notices, m.Notices...)
	useModel := !topts.NoModel && m.HasModel()
	step("Ranking the trials for each patient")(0, len(c.Summaries))
	mx, err := prescreen.Run(ctx, m, c.Summaries, prescreen.Options{Top: top, UseModel: useModel,
		Progress: step("Ranking the trials for each patient")})
	if err != nil {
		return nil, err
	}
	mx.Notices = append(append(append([]string(nil), c.Notices...), notices...), mx.Notices...)
	out.Matrix = mx
	out.Counts = make([]prescreen.TrialCount, len(mx.Trials))
	for j := range mx.Trials {
		out.Counts[j] = mx.TrialCounts(j)
	}
	if out.AggregateOnly {
		// No patient leaves the service: only the trials and their counts.
		mx.Patients, mx.Cells = nil, nil
	}
	ws.logger.Info("trial pre-screening", "source", out.Source.Label(), "trials_source", out.TrialsSource.Label(), "patients", len(c.Summaries),
		"trials", len(mx.Trials), "top", top, "model", mx.Model, "elapsed_ms", mx.Elapsed.Milliseconds())
	return out, nil
}

// PrescreenExportOptions say how a pre-screening is exported.
type PrescreenExportOptions struct {
	// ShiftDates moves each patient's dates by a number of days of their
	// own (intervals kept); otherwise the dates of the values are kept.
	ShiftDates bool
	// Version names Clinsight in the provenance.
	Version string
	// PatientLevel confirms the export of a row-level source's sheets
	// with a row per patient (Matrix, Criteria): without it Export refuses
	// with a *disclosure.PatientLevelError, as for a query result.
	PatientLevel bool
	// Exact exports the counts of patients (Trials sheet, the Matrix
	// sheet's count row) exactly; otherwise those under the source's
	// minimum cell size are written "<k" (TrialCount.Shown). Refused on
	// an aggregate-only source (ErrExactAggregateOnly).
	Exact bool
}

// prescreenIdentifiers are what a pre-screening's per-patient sheets
// hold that identifies patients, for the confirmation of their export.
func prescreenIdentifiers(patientColumn string, shiftDates bool) []disclosure.Identifier {
	return []disclosure.Identifier{
		{Column: patientColumn, Kind: disclosure.Direct, What: "patient identifier (pseudonymised)"},
		{Column: "Age", Kind: disclosure.Quasi, What: "age"},
		{Column: "Date", Kind: disclosure.Quasi, What: "dates of the cited values", Date: !shiftDates},
	}
}

// Export writes a pre-screening to a workbook. Patient identifiers are
// always pseudonymised (HMAC-SHA-256 under a key made for this export and
// never written); an aggregate-only source's workbook holds only the
// trials and their counts, small counts suppressed.
func (p *Prescreen) Export(ctx context.Context, path string, res *PrescreenResult, opts PrescreenExportOptions) (export.Summary, error) {
	if res == nil || res.Matrix == nil {
		return export.Summary{}, errors.New("export the pre-screening: there is no pre-screening to export")
	}
	if opts.Exact && res.AggregateOnly {
		return export.Summary{}, ErrExactAggregateOnly
	}
	if !res.AggregateOnly && !opts.PatientLevel {
		return export.Summary{}, &disclosure.PatientLevelError{Identifiers: prescreenIdentifiers(res.PatientColumn, opts.ShiftDates), RowLevel: true}
	}
	ps, err := disclosure.NewPseudonymizer()
	if err != nil {
		return export.Summary{}, err
	}
	domain := res.PatientColumn
	k := p.ws.Data().Policy(res.Source).K()
	if opts.Exact {
		k = 0
	}
	so := prescreen.SheetOptions{AggregateOnly: res.AggregateOnly, K: k,
		PatientID: func(id string) string { return fmt.Sprint(ps.Pseudonym(domain, id)) }}
	if opts.ShiftDates {
		so.ShiftDate = func(id, date string) string {
			v, _ := disclosure.ShiftDate(date, ps.ShiftDays(id))
			return fmt.Sprint(v)
		}
	}
	var sheets []export.Table
	if res.AggregateOnly {
		sheets = aggregateSheets(res)
	} else {
		sheets = res.Sheets(so)
	}
	prov := export.Provenance{AppVersion: opts.Version, DataSource: p.ws.Data().Describe(res.Source), Query: res.Query, Created: time.Now()}
	if res.Model != "" {
		prov.Models = append(prov.Models, res.Model)
	}
	if res.Embedder != "" {
		prov.Models = append(prov.Models, res.Embedder)
	}
	if res.Cohort != "" {
		prov.Add("Saved cohort", res.Cohort)
	}
	prov.Add("Trials source", p.ws.Data().Describe(res.TrialsSource))
	prov.Add("Trials per patient (K)", res.Top)
	prov.Add("Disclosure policy", p.ws.Data().Policy(res.Source).String())
	if res.AggregateOnly {
		prov.Add("Patients", "not exported: the source shows aggregates only; counts of 1 to "+fmt.Sprint(res.MinCell-1)+" patients are shown as <"+fmt.Sprint(res.MinCell))
	} else {
		prov.Add("Patients", fmt.Sprintf("%d of the cohort's %d (patient-level export, confirmed)", len(res.Patients), res.Total))
		if k >= 2 {
			prov.Add("Counts of patients", fmt.Sprintf("in the Trials sheet and the Matrix sheet's count row, counts of 1 to %d are shown as <%d, with the totals that would give them away", k-1, k))
		} else {
			prov.Add("Counts of patients", "exact (an exact export was chosen)")
		}
		prov.Add("Pseudonymised", res.PatientColumn+": each value replaced by HMAC-SHA256 with a random key made for this export and not kept (the same patient has the same pseudonym within this workbook only)")
		if opts.ShiftDates {
			prov.Add("Dates shifted", "by a per-patient number of days (1 to 365, either way) derived from the pseudonym key; intervals within a patient are kept")
		} else {
			prov.Add("Dates", "the dates of the cited values are kept (quasi-identifiers)")
		}
	}
	prov.Add("Structured checks", "lab values (the latest of each test), age and sex are compared with the criteria's numbers, units converted (creatinine mg/dL and µmol/L, HbA1c % and mmol/mol, …); a missing value or a unit that cannot be reconciled is unknown, never eligible; eGFR not measured is computed from creatinine (CKD-EPI 2021)")
	prov.Add("Verdict of a trial", "not eligible when any criterion rules the patient out; eligible when every criterion is met; otherwise unknown (the patient might qualify)")
	for i, n := range res.Notices {
		prov.Add(fmt.Sprintf("Note %d", i+1), n)
	}
	details := map[string]any{"what": "trial pre-screening", "patients": len(res.Patients), "trials": len(res.Trials),
		"pseudonymised": !res.AggregateOnly, "dates_shifted": opts.ShiftDates, "aggregate_only": res.AggregateOnly,
		"patient_level": !res.AggregateOnly, "exact": opts.Exact}
	eo := p.ws.ExportOptions(ctx, res.Source.Name, details, export.Options{})
	return export.WriteWorkbook(ctx, path, sheets, prov, eo)
}

// aggregateSheets is the Trials sheet of an aggregate-only result (its
// matrix holds no patients; the counts were kept).
func aggregateSheets(res *PrescreenResult) []export.Table {
	rows := make([][]any, 0, len(res.Trials))
	for j, t := range res.Trials {
		row := []any{t.ID, t.Title, strings.Join(t.Conditions, "; "), t.Phase, t.Status, t.AgeLimits, t.Sex}
		rows = append(rows, append(row, res.Shown(j).Values()...))
	}
	return []export.Table{{Name: "Trials", Columns: []string{"Trial", "Title", "Conditions", "Phase", "Status", "Age limits", "Sex",
		"Patients with it in their top K", "Eligible", "Unknown", "Not eligible", "Might qualify (eligible or unknown)"}, Rows: sliceRows(rows)}}
}

// TrialOrder returns the trials' indexes, those more patients might
// qualify for first (then more eligible, then by id), from Counts (an
// aggregate-only result has no patients to count). On an aggregate-only
// source the order uses the shown counts only (Shown; a hidden one sorts
// as k−1): sorting by a hidden count would place it between its shown
// neighbours, and two equal neighbours would give it back.
func (r *PrescreenResult) TrialOrder() []int {
	idx := make([]int, len(r.Trials))
	for j := range idx {
		idx[j] = j
	}
	might := func(j int) int { return r.Counts[j].Might() }
	eligible := func(j int) int { return r.Counts[j].Eligible }
	if r.AggregateOnly {
		key := func(s string) int {
			if n, err := strconv.Atoi(s); err == nil {
				return n
			}
			return r.MinCell - 1
		}
		might = func(j int) int { return key(r.Shown(j).Might) }
		eligible = func(j int) int { return key(r.Shown(j).Eligible) }
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		if c := cmp.Compare(might(b), might(a)); c != 0 {
			return c
		}
		if c := cmp.Compare(eligible(b), eligible(a)); c != 0 {
			return c
		}
		return cmp.Compare(r.Trials[a].ID, r.Trials[b].ID)
	})
	return idx
}

// PrescreenProvider is a cohort service that also offers trial
// pre-screening: the Cohort screen finds the service through it.
type PrescreenProvider interface {
	Prescreener() PrescreenService
}

var _ PrescreenProvider = (*Cohort)(nil)

// Prescreener returns the workspace's pre-screening service.
func (c *Cohort) Prescreener() PrescreenService { return c.ws.Prescreen() }

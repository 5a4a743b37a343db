package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/postgres"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/atomicfile"
)

// CohortDefinitionsService is what a front end does with a cohort beyond
// the answer (issue 19 items 2 and 3): its Table 1 of baseline
// characteristics, and saved definitions run again later or handed to a
// colleague as a file. *Cohort implements it.
type CohortDefinitionsService interface {
	// Table1 describes the patients a cohort statement selects on a
	// source (see cohort.ComputeTable1); opts.Query is replaced by query,
	// and an empty opts.PatientColumn is found from the source's kind.
	Table1(ctx context.Context, src Source, query string, opts cohort.Table1Options) (*cohort.Table1, error)
	// Table1MinCell is the minimum cell size a Table 1 of the source is
	// shown under on screen: the source's k when it is aggregate-only, 0
	// (exact) otherwise. Exports are always suppressed under k.
	Table1MinCell(src Source) int
	// ExportTable1 writes a Table 1 as a sheet formatted as in a paper,
	// small cells suppressed under the source's policy, recorded in the
	// audit trail.
	ExportTable1(ctx context.Context, path string, src Source, query string, t *cohort.Table1) (export.Summary, error)
	// Save saves an answer's cohort definition with its counts now.
	Save(ctx context.Context, src Source, ans *cohort.Answer, name string) (cohort.Definition, error)
	// List returns the saved definitions, newest first, and the files
	// that could not be read (left as they are).
	List(ctx context.Context) ([]cohort.Definition, []error, error)
	// Load returns a saved definition.
	Load(id string) (cohort.Definition, error)
	// Rerun runs a saved definition's statement again on its source and
	// compares the counts with those at creation.
	Rerun(ctx context.Context, id string) (cohort.Rerun, error)
	// Regenerate asks a saved definition's question again (the model
	// writes the statement anew), counts the new statement on the source
	// and compares the counts with those at creation. The saved statement
	// is kept; save the new answer to keep the new one.
	Regenerate(ctx context.Context, id string, opts CohortOptions) (cohort.Rerun, *cohort.Answer, error)
	// ExportFile writes a saved definition to a file for a colleague.
	ExportFile(ctx context.Context, id, path string) error
	// ImportFile adds a definition file to the workspace, to run on the
	// source named source, or when "" on the source of the definition's
	// name (a *DefinitionSourceError when there is none).
	ImportFile(ctx context.Context, path, source string) (cohort.Definition, error)
}

var _ CohortDefinitionsService = (*Cohort)(nil)

// definitionsDir is where a workspace keeps its cohort definitions.
const definitionsDir = "cohorts"

// DefinitionSourceError is returned by ImportFile when the workspace has
// no data source of the definition's name and none was chosen.
type DefinitionSourceError struct {
	// Wanted is the definition's source; Available the workspace's.
	Wanted    string
	Available []string
}

func (e *DefinitionSourceError) Error() string {
	if len(e.Available) == 0 {
		return fmt.Sprintf("the cohort definition runs on the data source %q, and this workspace has no data source: add one first", e.Wanted)
	}
	return fmt.Sprintf("the cohort definition runs on the data source %q, which this workspace does not have: choose one of its data sources (%s)", e.Wanted, strings.Join(e.Available, ", "))
}

func (c *Cohort) store() cohort.DefinitionStore {
	return cohort.DefinitionStore{Dir: filepath.Join(c.ws.Dir(), definitionsDir)}
}

// cohortQuerier is a read-only runner of a source for Table 1 and saved
// cohorts: SQLite's runner or a PostgreSQL source's engine.
type cohortQuerier interface {
	cohort.Querier
	Close() error
}

// sharedEngine is a PostgreSQL source's engine lent for one task: Close
// gives it back (the workspace keeps it open for the source).
type sharedEngine struct {
	*postgres.Engine
	release func()
}

// Close gives the engine back.
func (e sharedEngine) Close() error { e.release(); return nil }

// runner opens a read-only runner on a source, able to read the patients
// of a Table 1.
func (c *Cohort) runner(ctx context.Context, src Source) (cohortQuerier, error) {
	if src.Kind == SourcePostgres {
		eng, release, err := c.ws.postgresEngine(ctx, src, datasets.RunnerOptions{MaxRows: cohort.Table1MaxPatients + 1})
		if err != nil {
			return nil, err
		}
		return c.withholdingQuerier(src, sharedEngine{Engine: eng, release: release}), nil
	}
	path, err := c.ws.file(src)
	if err != nil {
		return nil, err
	}
	opts := c.ws.RunnerOptions()
	opts.MaxRows = max(opts.MaxRows, cohort.Table1MaxPatients+1)
	r, err := datasets.NewRunner(ctx, path, opts)
	if err != nil {
		return nil, err
	}
	return c.withholdingQuerier(src, r), nil // errors without values of the data (disclosure_errors.go)
}

// Table1 computes the Table 1 of a cohort statement.
func (c *Cohort) Table1(ctx context.Context, src Source, query string, opts cohort.Table1Options) (*cohort.Table1, error) {
	r, err := c.runner(ctx, src)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	opts.Query = query
	if opts.PatientColumn == "" {
		col, err := cohort.FindPatientColumn(ctx, r, query, src.Kind)
		if err != nil {
			return nil, err
		}
		if col == "" {
			return nil, errors.New("a Table 1 needs a result with a column that identifies patients (subject_id or person_id)")
		}
		opts.PatientColumn = col
	}
	t, err := cohort.ComputeTable1(ctx, r, opts)
	det := map[string]any{"what": "Table 1", "sql": query, "patient_column": opts.PatientColumn}
	if opts.Stratify != "" {
		det["stratified_by"] = opts.Stratify
	}
	if t != nil {
		det["patients"] = t.Patients
	}
	if rerr := c.recordSQL(ctx, src, det, err); rerr != nil {
		return nil, errors.Join(err, rerr)
	}
	if err != nil {
		return nil, err
	}
	c.ws.logger.Info("table 1", "source", src.Label(), "patients", t.Patients, "strata", len(t.Strata), "rows", len(t.Rows))
	return t, nil
}

// recordSQL records in the audit trail the statements Table 1 and the
// cohort definitions ran on a source (what, the cohort's SQL, the counts);
// a result whose record cannot be written is not shown.
func (c *Cohort) recordSQL(ctx context.Context, src Source, det map[string]any, err error) error {
	if err != nil {
		det["error"] = err.Error()
	}
	return c.ws.Record(context.WithoutCancel(ctx), audit.Event{Action: audit.ActionSQL, Source: src.Name, Details: det})
}

// Table1MinCell is k for an aggregate-only source, 0 otherwise.
func (c *Cohort) Table1MinCell(src Source) int {
	if p := c.table1Policy(src); p.AggregateOnly() {
		return p.K()
	}
	return 0
}

// table1Policy is the disclosure policy Table 1 follows: the source's.
func (c *Cohort) table1Policy(src Source) disclosure.Policy {
	return c.ws.Data().Policy(src)
}

// table1Definitions are the Provenance sheet's explanation of the cells.
var table1Definitions = []export.Entry{
	{Key: "Index admission", Value: "the patient's first admission (of the cohort's admissions when its result has hadm_id)"},
	{Key: "Age", Value: "at the index admission"},
	{Key: "Diagnoses, medications", Value: "recorded at the index admission; a patient counts once"},
	{Key: "Lab values", Value: "first numeric value of the index admission"},
	{Key: "Percentages", Value: "of all the column's patients, missing included"},
	{Key: "Statistics", Value: "mean ± sample SD; median [IQR] by linear interpolation (R type 7)"},
	{Key: "SMD", Value: "first stratum minus second: (m1−m2)/√((s1²+s2²)/2); levels (p1−p2)/√((p1(1−p1)+p2(1−p2))/2)"},
}

// ExportTable1 writes the table to a workbook sheet "Table 1".
func (c *Cohort) ExportTable1(ctx context.Context, path string, src Source, query string, t *cohort.Table1) (export.Summary, error) {
	if t == nil {
		return export.Summary{}, errors.New("export Table 1: there is no table to export")
	}
	k := c.table1Policy(src).K()
	header, cells := t.Cells(k)
	rows := make([][]any, len(cells))
	for i, r := range cells {
		rows[i] = make([]any, len(r))
		for j, v := range r {
			rows[i][j] = v
		}
	}
	prov := export.Provenance{AppVersion: c.ws.versionLocked(), DataSource: c.ws.Data().Describe(src), Query: query, Created: time.Now()}
	if t.Patients < int64(k) { // the sheet suppresses it: so does the provenance
		prov.Add("Patients", disclosure.Suppressed{K: k}.String())
	} else {
		prov.Add("Patients", t.Patients)
	}
	prov.Add("Patient column", t.PatientColumn)
	if t.Stratify != "" {
		prov.Add("Stratified by", t.Stratify)
	}
	suppressed := t.Suppressed(k)
	prov.Add("Small cells", fmt.Sprintf("counts of 1 to %d patients and statistics of fewer than %d are shown as <%d (%d cells), with the cells that would reveal them", k-1, k, k, suppressed))
	prov.Extra = append(prov.Extra, table1Definitions...)
	for i, n := range t.Notes {
		prov.Add(fmt.Sprintf("Note %d", i+1), n)
	}
	details := map[string]any{"what": "Table 1", "patients": t.Patients, "min_cell": k, "suppressed_cells": suppressed}
	opts := c.ws.ExportOptions(ctx, src.Name, details, export.Options{})
	return export.WriteWorkbook(ctx, path, []export.Table{{Name: "Table 1", Columns: header, Rows: sliceRows(rows)}}, prov, opts)
}

// Save saves an answer's definition, counting its rows and patients now.
func (c *Cohort) Save(ctx context.Context, src Source, ans *cohort.Answer, name string) (cohort.Definition, error) {
	if src.Name == "" {
		return cohort.Definition{}, errors.New("save the cohort: only a cohort of a registered data source can be saved (add the database as a data source first)")
	}
	if ans == nil || strings.TrimSpace(ans.SQL) == "" {
		return cohort.Definition{}, errors.New("save the cohort: there is no statement to save")
	}
	r, err := c.runner(ctx, src)
	if err != nil {
		return cohort.Definition{}, err
	}
	defer r.Close()
	counts, err := cohort.CountCohort(ctx, r, ans.SQL, src.Kind)
	if rerr := c.recordSQL(ctx, src, map[string]any{"what": "cohort definition saved", "sql": ans.SQL, "rows": counts.Rows, "patients": counts.Patients}, err); rerr != nil {
		return cohort.Definition{}, errors.Join(err, rerr)
	}
	if err != nil {
		return cohort.Definition{}, fmt.Errorf("save the cohort: %w", err)
	}
	d, err := cohort.NewDefinition(ans, name, cohort.DefinitionSource{Name: src.Name, Kind: src.Kind, Description: src.Description}, counts, time.Now())
	if err != nil {
		return cohort.Definition{}, err
	}
	st := c.store()
	d.ID = st.FreeID(d.ID)
	if err := st.Save(d); err != nil {
		return cohort.Definition{}, err
	}
	c.ws.logger.Info("cohort definition saved", "id", d.ID, "source", src.Name, "rows", counts.Rows, "patients", counts.Patients)
	return c.shown(d), nil
}

// countsMinCell is the minimum cell size the counts of a definition are
// shown and exported under: the k of its source when that source shows
// aggregates only, else 0 (exact).
func (c *Cohort) countsMinCell(d cohort.Definition) int {
	src, ok := c.ws.Source(d.Source.Name)
	if !ok {
		return 0
	}
	return c.Table1MinCell(src)
}

// shown returns a definition as its source's policy lets it be shown and
// leave the workspace: for an aggregate-only source, its counts below k
// are suppressed (the workspace's file keeps them exact, to compare runs).
func (c *Cohort) shown(d cohort.Definition) cohort.Definition {
	k := c.countsMinCell(d)
	if k < 2 {
		return d
	}
	d.Counts = d.Counts.Under(k)
	runs := make([]cohort.DefinitionRun, len(d.Runs))
	for i, r := range d.Runs {
		r.Counts = r.Counts.Under(k)
		runs[i] = r
	}
	d.Runs = runs
	return d
}

// List returns the saved definitions.
func (c *Cohort) List(ctx context.Context) ([]cohort.Definition, []error, error) {
	if err := ctx.Err(); err != nil {
		return nil, nil, err
	}
	defs, problems, err := c.store().List()
	for i := range defs {
		defs[i] = c.shown(defs[i])
	}
	return defs, problems, err
}

// Load returns a saved definition (see shown).
func (c *Cohort) Load(id string) (cohort.Definition, error) {
	d, err := c.store().Load(id)
	if err != nil {
		return d, err
	}
	return c.shown(d), nil
}

// Rerun runs a saved definition again on its source.
func (c *Cohort) Rerun(ctx context.Context, id string) (cohort.Rerun, error) {
	return c.rerun(ctx, id, func(_ context.Context, _ Source, d cohort.Definition) (string, error) { return d.SQL, nil })
}

// Regenerate asks a saved definition's question again through the cohort
// pipeline (the model writes a new statement), then counts that statement
// as Rerun counts the saved one. The answer is returned so that it can be
// shown or saved as a new definition.
func (c *Cohort) Regenerate(ctx context.Context, id string, opts CohortOptions) (cohort.Rerun, *cohort.Answer, error) {
	var ans *cohort.Answer
	rr, err := c.rerun(ctx, id, func(ctx context.Context, src Source, d cohort.Definition) (string, error) {
		if strings.TrimSpace(d.Question) == "" {
			return "", fmt.Errorf("ask the cohort %q again: it was saved without a question (only its statement can be run again)", d.ID)
		}
		sess, err := c.Open(ctx, src, opts)
		if err != nil {
			return "", err
		}
		defer sess.Close()
		ans, err = sess.Ask(ctx, cohort.Request{Question: d.Question}, nil)
		if err != nil {
			return "", fmt.Errorf("ask the cohort %q again: %w", d.ID, err)
		}
		if strings.TrimSpace(ans.SQL) == "" {
			return "", fmt.Errorf("ask the cohort %q again: the model wrote no statement this time", d.ID)
		}
		return ans.SQL, nil
	})
	return rr, ans, err
}

// rerun counts the statement sqlOf gives for a saved definition on its
// source, records the run and compares its counts with those at creation.
func (c *Cohort) rerun(ctx context.Context, id string, sqlOf func(context.Context, Source, cohort.Definition) (string, error)) (cohort.Rerun, error) {
	st := c.store()
	d, err := st.Load(id)
	if err != nil {
		return cohort.Rerun{}, err
	}
	src, ok := c.ws.Source(d.Source.Name)
	if !ok {
		return cohort.Rerun{}, fmt.Errorf("run the cohort definition %q again: this workspace has no data source %q", d.ID, d.Source.Name)
	}
	src, err = c.ws.Resolve(src.Name)
	if err != nil {
		return cohort.Rerun{}, err
	}
	query, err := sqlOf(ctx, src, d)
	if err != nil {
		return cohort.Rerun{}, err
	}
	regenerated := query != d.SQL
	what := "cohort definition run again"
	if regenerated {
		what = "cohort definition asked again"
	}
	r, err := c.runner(ctx, src)
	if err != nil {
		return cohort.Rerun{}, err
	}
	defer r.Close()
	now, err := cohort.CountCohort(ctx, r, query, src.Kind)
	if rerr := c.recordSQL(ctx, src, map[string]any{"what": what, "id": d.ID, "sql": query, "rows": now.Rows, "patients": now.Patients}, err); rerr != nil {
		return cohort.Rerun{}, errors.Join(err, rerr)
	}
	if err != nil {
		return cohort.Rerun{}, fmt.Errorf("run the cohort definition %q again: %w", d.ID, err)
	}
	out := cohort.Rerun{Then: d.Counts, Now: now, SQL: query, Regenerated: regenerated}
	if n := len(d.Runs); n > 0 {
		prev := d.Runs[n-1]
		out.Previous = &prev
	}
	run := cohort.DefinitionRun{At: time.Now().UTC().Truncate(time.Second), Source: src.Name, Counts: now}
	if regenerated {
		run.SQL = query
	}
	d.Runs = append(d.Runs, run)
	if err := st.Save(d); err != nil {
		return cohort.Rerun{}, err
	}
	c.ws.logger.Info(what, "id", d.ID, "source", src.Name, "changes", out.Changes())
	out.Definition = c.shown(d)
	if k := c.countsMinCell(d); k >= 2 {
		out.Then, out.Now = out.Then.Under(k), out.Now.Under(k)
		if out.Previous != nil {
			out.Previous.Counts = out.Previous.Counts.Under(k)
		}
	}
	return out, nil
}

// ExportFile writes a saved definition to path (atomically), recorded in
// the audit trail before the file is put in place.
func (c *Cohort) ExportFile(ctx context.Context, id, path string) error {
	d, err := c.store().Load(id)
	if err != nil {
		return err
	}
	d = c.shown(d)
	data, err := d.Marshal()
	if err != nil {
		return err
	}
	f, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return fmt.Errorf("export the cohort definition to %s: %w", path, err)
	}
	defer f.Discard()
	if _, err := f.Write(data); err != nil {
		return fmt.Errorf("export the cohort definition to %s: %w", path, err)
	}
	sum := sha256.Sum256(data)
	if err := c.ws.Record(ctx, audit.Event{Action: audit.ActionExport, Source: d.Source.Name, Details: map[string]any{
		"what": "cohort definition", "id": d.ID, "path": path, "sha256": hex.EncodeToString(sum[:]),
	}}); err != nil {
		return err
	}
	if err := f.Commit(); err != nil {
		return fmt.Errorf("export the cohort definition to %s: %w", path, err)
	}
	return nil
}

// ImportFile adds a definition file to the workspace.
func (c *Cohort) ImportFile(ctx context.Context, path, source string) (cohort.Definition, error) {
	d, err := cohort.ReadDefinition(path)
	if err != nil {
		return cohort.Definition{}, err
	}
	var src Source
	if strings.TrimSpace(source) != "" {
		s, ok := c.ws.Source(source)
		if !ok {
			return cohort.Definition{}, fmt.Errorf("import the cohort definition: this workspace has no data source %q", source)
		}
		src = s
	} else {
		var names []string
		found := false
		for _, s := range c.ws.Sources() {
			names = append(names, s.Name)
			if strings.EqualFold(s.Name, d.Source.Name) {
				src, found = s, true
			}
		}
		if !found {
			return cohort.Definition{}, &DefinitionSourceError{Wanted: d.Source.Name, Available: names}
		}
	}
	origin := &cohort.DefinitionOrigin{ID: d.ID, Source: d.Source.Name, At: time.Now().UTC().Truncate(time.Second)}
	if d.ImportedFrom != nil {
		origin.ID, origin.Source = d.ImportedFrom.ID, d.ImportedFrom.Source
	}
	d.ImportedFrom = origin
	d.Source = cohort.DefinitionSource{Name: src.Name, Kind: src.Kind, Description: src.Description}
	d.Runs = nil // runs on another copy of the data
	st := c.store()
	d.ID = st.FreeID(d.ID)
	if err := c.ws.Record(ctx, audit.Event{Action: audit.ActionImport, Source: src.Name, Details: map[string]any{
		"what": "cohort definition", "id": d.ID, "path": path, "from_source": origin.Source,
	}}); err != nil {
		return cohort.Definition{}, err
	}
	if err := st.Save(d); err != nil {
		return cohort.Definition{}, err
	}
	return c.shown(d), nil
}

package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
)

// Disclosure control of query results (issue 13): what a data source's
// policy lets a front end show, what an export writes, and what the model
// may see. Package disclosure holds the rules; this file runs the queries
// they need (the individuals behind each row) on the source's engine.

// Policy returns the disclosure policy of a source, defaults filled in
// (row-level, minimum cell size 11).
func (d *Data) Policy(src Source) disclosure.Policy {
	return disclosure.Policy{Access: disclosure.Access(src.Access), MinCell: src.MinCell}.Normalized()
}

// minPersons is the minimum cell size under which an aggregate-only
// source's concept-set person counts are hidden; 0 for a row-level source.
func (ws *Workspace) minPersons(src Source) int {
	if pol := ws.Data().Policy(src); pol.AggregateOnly() {
		return pol.K()
	}
	return 0
}

// SetPolicy changes the disclosure policy of a registered source (saved in
// the workspace settings, recorded as a settings change).
func (d *Data) SetPolicy(name string, p disclosure.Policy) error {
	if err := p.Validate(); err != nil {
		return err
	}
	access, _ := disclosure.ParseAccess(string(p.Access))
	found := false
	err := d.ws.UpdateConfig(func(c *Config) {
		for i, s := range c.Sources {
			if strings.EqualFold(s.Name, name) {
				c.Sources[i].Access, c.Sources[i].MinCell = string(access), p.MinCell
				found = true
			}
		}
	})
	if err != nil {
		return fmt.Errorf("set the disclosure policy of %q: %w", name, err)
	}
	if !found {
		return fmt.Errorf("no data source named %q", name)
	}
	return nil
}

// Disclosed is a query result as it may be shown.
type Disclosed struct {
	// Result is the result to show: exact for a row-level source,
	// suppressed for an aggregate-only one.
	Result *datasets.Result
	// Policy is the source's policy.
	Policy disclosure.Policy
	// Report says what was suppressed; nil when the result is exact.
	Report *disclosure.Report
}

// QueryDisclosed runs one reading statement (see Query) and applies the
// source's disclosure policy: a row-level source's result comes back
// exact; an aggregate-only source's result comes back small-cell
// suppressed, and a patient-level one (rows of records, or identifier
// columns) is refused with a *disclosure.AggregateOnlyError.
//
// Every statement run this way is recorded in the audit trail (the SQL,
// the rows returned, the suppression applied); a result whose record
// cannot be written is not returned.
func (d *Data) QueryDisclosed(ctx context.Context, src Source, query string, limits datasets.RunnerOptions) (Disclosed, error) {
	out, err := d.queryDisclosed(ctx, src, query, limits)
	if rerr := d.recordQuery(ctx, src, query, out, err); rerr != nil {
		return Disclosed{Policy: out.Policy}, errors.Join(err, rerr)
	}
	return out, err
}

// queryDisclosed is QueryDisclosed without the audit record.
func (d *Data) queryDisclosed(ctx context.Context, src Source, query string, limits datasets.RunnerOptions) (Disclosed, error) {
	pol := d.Policy(src)
	res, err := d.query(ctx, src, query, limits)
	if err != nil {
		return Disclosed{Policy: pol}, withholdDataError(pol, query, err)
	}
	if !pol.AggregateOnly() {
		return Disclosed{Result: res, Policy: pol}, nil
	}
	out, rep, err := d.suppressForDisplay(ctx, src, query, res, limits)
	if err != nil {
		return Disclosed{Policy: pol}, err
	}
	return Disclosed{Result: out, Policy: pol, Report: &rep}, nil
}

// suppressForDisplay refuses a patient-level result of an aggregate-only
// source and suppresses an aggregate one.
func (d *Data) suppressForDisplay(ctx context.Context, src Source, query string, res *datasets.Result, limits datasets.RunnerOptions) (*datasets.Result, disclosure.Report, error) {
	pol := d.Policy(src)
	sh := disclosure.Analyze(query)
	kinds := disclosure.ColumnKinds(sh, res)
	ids := disclosure.ClassifyColumns(sh, res.Columns, disclosure.Profile(src.Kind))
	if !hasAggregate(kinds) {
		return nil, disclosure.Report{}, &disclosure.AggregateOnlyError{Source: src.Name, Why: "the result has one row per record"}
	}
	if disclosure.HasDirect(ids) {
		return nil, disclosure.Report{}, &disclosure.AggregateOnlyError{Source: src.Name,
			Why: "the result shows identifier columns: " + strings.Join((&disclosure.PatientLevelError{Identifiers: ids}).Direct(), ", ")}
	}
	if why := disclosure.RowLevelReason(query, src.Kind); why != "" {
		return nil, disclosure.Report{}, &disclosure.AggregateOnlyError{Source: src.Name, Why: why}
	}
	info := d.individuals(ctx, src, query, sh, res, kinds, limits)
	out, rep := disclosure.Suppress(res, info, pol.K())
	d.ws.logger.Info("suppression", "source", src.Name, "k", rep.K, "cells", len(rep.Cells), "individuals", rep.IndividualColumn)
	return out, rep, nil
}

// withholdDataError replaces, for an aggregate-only source, an engine's
// data error (SQLSTATE class 22: PostgreSQL quotes the value that failed,
// as in invalid input syntax for type integer: "52y"), or an error that
// quotes text the statement does not hold (quotesOtherText: relation
// "10014729" does not exist), by one without it: a cast in a WHERE clause
// would otherwise read a record's value.
func withholdDataError(pol disclosure.Policy, query string, err error) error {
	if !pol.AggregateOnly() || err == nil {
		return err
	}
	state := ""
	if st := (interface{ SQLState() string })(nil); errors.As(err, &st) {
		state = st.SQLState()
	}
	if !strings.HasPrefix(state, "22") && !quotesOtherText(query, err.Error()) {
		return err
	}
	if state == "" { // SQLite
		return errors.New("the statement failed on a value of the data (the value is not shown for an aggregate-only source): check the casts and functions applied to columns")
	}
	return fmt.Errorf("the statement failed on a value of the data (SQLSTATE %s; the value is not shown for an aggregate-only source): check the casts and functions applied to columns", state)
}

func hasAggregate(kinds []disclosure.ColumnKind) bool {
	return slices.ContainsFunc(kinds, func(k disclosure.ColumnKind) bool { return k != disclosure.Key })
}

// maxIndividualTries bounds the augmented queries tried per result.
const maxIndividualTries = 8

// individuals counts the distinct individuals behind each row of an
// aggregate result: the statement run again with count(DISTINCT <the
// profile's individual column>) appended, unqualified and then qualified
// with each table of its FROM clause, on the same engine with the same
// limits. When that fails, a count column of the row stands in; otherwise
// the rows' individuals are unknown.
func (d *Data) individuals(ctx context.Context, src Source, query string, sh disclosure.Shape, res *datasets.Result, kinds []disclosure.ColumnKind, limits datasets.RunnerOptions) disclosure.Individuals {
	info := disclosure.Individuals{Kinds: kinds}
	if sh.Aggregate && !sh.Compound {
		tries := 0
	columns:
		for _, col := range disclosure.IndividualColumns(src.Kind) {
			quals := append([]string{""}, sh.Tables...)
			for _, q := range quals {
				if tries++; tries > maxIndividualTries || ctx.Err() != nil {
					break columns
				}
				expr := individualExpr(src, q, col)
				aug, ok := disclosure.Augment(query, expr)
				if !ok {
					break columns
				}
				r, err := d.query(ctx, src, aug, limits)
				if err != nil {
					if !strings.Contains(strings.ToLower(err.Error()), "column") {
						break columns // not a missing or ambiguous column: do not run it again
					}
					continue
				}
				if counts, ok := alignIndividuals(res, r, kinds); ok {
					info.Column, info.Counts = col, counts
					if q != "" {
						info.Column = q + "." + col
					}
					info.Cells = d.cellIndividuals(ctx, src, query, expr, res, kinds, limits) // disclosure_cells.go
					return info
				}
			}
		}
	}
	// A count of the row stands in: the first count column.
	for j, k := range kinds {
		if k != disclosure.Count {
			continue
		}
		counts := make([]int64, len(res.Rows))
		for i, r := range res.Rows {
			counts[i] = -1
			switch x := r[j].(type) {
			case int64:
				counts[i] = x
			case float64:
				counts[i] = int64(x)
			}
		}
		info.Column, info.Counts = res.Columns[j].Name+" (the row's count)", counts
		info.Cells = d.cellIndividuals(ctx, src, query, "", res, kinds, limits) // records, for want of individuals
		return info
	}
	return info
}

// individualExpr writes the individual column col, qualified by table
// when not "", for the source's engine. SQLite takes a bare double-quoted
// name that matches no column for a string literal (count(DISTINCT "x")
// would count one "individual"), so an unqualified name stays unquoted
// there (the candidate names are plain identifiers); a qualified name is
// quoted, which SQLite never reads as a literal. PostgreSQL needs the
// quotes for mixed case (PatientID) and has no such fallback.
func individualExpr(src Source, table, col string) string {
	if table != "" {
		return datasets.QuoteIdent(table) + "." + datasets.QuoteIdent(col)
	}
	if src.Kind == SourcePostgres {
		return datasets.QuoteIdent(col)
	}
	return col
}

// alignIndividuals reads the appended column of an augmented result,
// matching its rows to res by their key (grouping) columns: in order when
// they agree, by key otherwise.
func alignIndividuals(res, aug *datasets.Result, kinds []disclosure.ColumnKind) ([]int64, bool) {
	n := len(res.Columns)
	if len(aug.Columns) != n+1 || len(aug.Rows) != len(res.Rows) {
		return nil, false
	}
	key := func(r []any) string {
		var b strings.Builder
		for j, k := range kinds {
			if k == disclosure.Key {
				fmt.Fprintf(&b, "%T:%v\x00", r[j], r[j])
			}
		}
		return b.String()
	}
	value := func(r []any) int64 {
		if x, ok := r[n].(int64); ok {
			return x
		}
		return -1
	}
	counts := make([]int64, len(res.Rows))
	inOrder := true
	for i := range res.Rows {
		if key(res.Rows[i]) != key(aug.Rows[i]) {
			inOrder = false
			break
		}
		counts[i] = value(aug.Rows[i])
	}
	if inOrder {
		return counts, true
	}
	byKey := map[string]int64{}
	for _, r := range aug.Rows {
		k := key(r)
		if _, dup := byKey[k]; dup {
			return nil, false
		}
		byKey[k] = value(r)
	}
	for i, r := range res.Rows {
		c, ok := byKey[key(r)]
		if !ok {
			return nil, false
		}
		counts[i] = c
	}
	return counts, true
}

// ExportOptions say what an export of a query result may write.
type ExportOptions struct {
	// Source is the data source the result came from (its policy, its
	// individuals); Query the statement that produced it.
	Source Source
	Query  string
	// Exact exports an aggregate's exact values, without small-cell
	// suppression: allowed for row-level sources only, and recorded.
	Exact bool
	// PatientLevel confirms the export of a patient-level result (rows of
	// records, or identifier columns); its direct identifiers are then
	// pseudonymised.
	PatientLevel bool
	// ShiftDates shifts the dates of a patient-level export by a
	// per-patient number of days (intervals within a patient are kept).
	ShiftDates bool
	// Progress receives the rows written.
	Progress func(rows int64)
	// Version is the Clinsight version named in a cohort export's
	// provenance (Data.Export takes it from its Provenance).
	Version string
	// Head is how many of the first rows Data.ExportQuery keeps for
	// display (QueryExport.Head).
	Head int
}

// ErrExactAggregateOnly refuses exact values from an aggregate-only source.
var ErrExactAggregateOnly = errors.New("exact values cannot be exported from an aggregate-only data source: its exports are always suppressed")

// exportPlan is a result prepared for an export.
type exportPlan struct {
	result  *datasets.Result
	prov    []export.Entry
	details map[string]any
}

// maxListedCells bounds the suppressed cells listed in provenance.
const maxListedCells = 50

// planExport applies the disclosure rules of an export to a result: an
// aggregate is suppressed unless exact values are asked for (row-level
// sources only); a patient-level result needs opts.PatientLevel and has
// its direct identifiers pseudonymised (and dates shifted if asked).
func (d *Data) planExport(ctx context.Context, res *datasets.Result, opts ExportOptions) (exportPlan, error) {
	src := opts.Source
	pol := d.Policy(src)
	if opts.Exact && pol.AggregateOnly() {
		return exportPlan{}, ErrExactAggregateOnly
	}
	profile := disclosure.Profile(src.Kind)
	sh := disclosure.Analyze(opts.Query)
	kinds := disclosure.ColumnKinds(sh, res)
	aggregate := hasAggregate(kinds)
	ids := disclosure.ClassifyColumns(sh, res.Columns, profile)
	rowLevelWhy := disclosure.RowLevelReason(opts.Query, src.Kind)
	patientLevel := !aggregate || disclosure.HasDirect(ids) || rowLevelWhy != ""
	plan := exportPlan{result: res, details: map[string]any{
		"rows": len(res.Rows), "columns": len(res.Columns), "exact": opts.Exact, "patient_level": patientLevel,
		"access": string(pol.Access), "min_cell": pol.K(),
	}}
	add := func(k string, v any) { plan.prov = append(plan.prov, export.Entry{Key: k, Value: v}) }
	add("Disclosure policy", pol.String())
	if patientLevel {
		if pol.AggregateOnly() {
			why := "the result has one row per record"
			if aggregate {
				why = "the result shows identifier columns"
				if !disclosure.HasDirect(ids) && rowLevelWhy != "" {
					why = rowLevelWhy
				}
			}
			return exportPlan{}, &disclosure.AggregateOnlyError{Source: src.Name, Why: why}
		}
		if !opts.PatientLevel {
			return exportPlan{}, &disclosure.PatientLevelError{Identifiers: ids, RowLevel: !aggregate}
		}
		out, entries, pseud, shifted, err := pseudonymise(res, ids, profile, opts.ShiftDates)
		if err != nil {
			return exportPlan{}, err
		}
		plan.result = out
		plan.prov = append(plan.prov, entries...)
		plan.details["pseudonymised"] = pseud
		plan.details["dates_shifted"] = shifted
	}
	if aggregate {
		if opts.Exact {
			add("Small-cell suppression", "none: exact values exported at the user's request")
			plan.details["suppressed_cells"] = 0
		} else {
			info := d.individuals(ctx, src, opts.Query, sh, plan.result, kinds, datasets.RunnerOptions{})
			out, rep := disclosure.Suppress(plan.result, info, pol.K())
			plan.result = out
			add("Small-cell suppression", rep.Summary())
			if rep.IndividualColumn == "" {
				add("Individuals", "unknown: statistics were suppressed")
			} else {
				add("Individuals counted by", rep.IndividualColumn)
			}
			if len(rep.Cells) > 0 {
				var cells []string
				for i, c := range rep.Cells {
					if i == maxListedCells {
						cells = append(cells, fmt.Sprintf("… and %d more", len(rep.Cells)-i))
						break
					}
					cells = append(cells, fmt.Sprintf("row %d, %s (%s)", c.Row+1, c.Column, c.Reason))
				}
				add("Suppressed cells", strings.Join(cells, "; "))
			}
			for _, n := range rep.Notes {
				add("Suppression note", n)
			}
			plan.details["suppressed_cells"] = len(rep.Cells)
			plan.details["individual_column"] = rep.IndividualColumn
		}
	}
	return plan, nil
}

// baseColumn drops a table qualifier and quotes from a column name.
func baseColumn(c string) string {
	if i := strings.LastIndexByte(c, '.'); i >= 0 && !strings.Contains(c, "(") {
		c = c[i+1:]
	}
	return strings.Trim(c, "\"`[]")
}

// exportRecorder returns the export's BeforeCommit: the audit record of
// the export, written before the workbook is renamed into place, so that
// an export whose record cannot be written does not happen.
func (d *Data) exportRecorder(ctx context.Context, src Source, path string, details map[string]any) func(string, export.Summary) error {
	return func(sha string, sum export.Summary) error {
		ev := map[string]any{"path": path, "sha256": sha, "rows_written": sum.Rows}
		for k, v := range details {
			ev[k] = v
		}
		return d.ws.Record(ctx, audit.Event{Action: audit.ActionExport, Source: src.Name, Details: ev})
	}
}

// discloseCohort is the cohort pipeline's Config.Disclose for a source:
// an aggregate-only source's results are suppressed (patient-level ones
// refused) for display and explanation; a row-level source's results are
// shown exact, and explained from the suppressed aggregate (or from the
// row count of a patient-level result) when result rows may not be sent
// to the model host (Workspace.SendRowsToModel).
func (ws *Workspace) discloseCohort(ctx context.Context, src Source, query string, res *datasets.Result) (cohort.Disclosed, error) {
	d := ws.Data()
	out := cohort.Disclosed{Shown: res, Explain: res}
	if d.Policy(src).AggregateOnly() {
		shown, rep, err := d.suppressForDisplay(ctx, src, query, res, datasets.RunnerOptions{})
		if err != nil {
			return out, err
		}
		out.Shown, out.Explain = shown, shown
		out.Info.Shown, out.Info.Explained = &rep, &rep
		return out, nil
	}
	if ws.SendRowsToModel() {
		return out, nil
	}
	k := d.Policy(src).K()
	sh := disclosure.Analyze(query)
	kinds := disclosure.ColumnKinds(sh, res)
	if hasAggregate(kinds) && disclosure.RowLevelReason(query, src.Kind) == "" && !disclosure.HasDirect(disclosure.ClassifyColumns(sh, res.Columns, disclosure.Profile(src.Kind))) {
		sup, rep := disclosure.Suppress(res, d.individuals(ctx, src, query, sh, res, kinds, datasets.RunnerOptions{}), k)
		out.Explain, out.Info.Explained = sup, &rep
		return out, nil
	}
	// A patient-level result: the model hears how many rows there are.
	var n any = int64(len(res.Rows))
	if len(res.Rows) >= 1 && len(res.Rows) < k {
		n = disclosure.Suppressed{K: k}
	}
	out.Explain = &datasets.Result{Columns: []datasets.Column{{Name: "rows in the result (patient-level rows are not sent to the model)"}},
		Rows: [][]any{{n}}, Truncated: res.Truncated, TruncatedBy: res.TruncatedBy, Limits: res.Limits}
	out.Info.RowsWithheld = true
	return out, nil
}

// Export writes a cohort answer to an Excel workbook (cohort.ExportWorkbookWith)
// under the source's disclosure policy, as Data.Export does for a query
// result: the Cohort sheet suppressed or pseudonymised (see ExportOptions),
// the OMOP definition's patient counts suppressed, the explanation left out
// of a suppressed export when it was written from exact values, and the
// export recorded in the audit trail before the file is in place.
func (c *Cohort) Export(ctx context.Context, path string, ans *cohort.Answer, opts ExportOptions) (export.Summary, error) {
	if ans == nil || ans.Result == nil {
		return export.Summary{}, errors.New("there is no result to export")
	}
	d := c.ws.Data()
	if opts.Query == "" {
		opts.Query = ans.SQL
	}
	if sum, ok, err := c.exportCohortStreamed(ctx, path, ans, opts); ok { // export_stream.go
		return sum, err
	}
	plan, err := d.planExport(ctx, ans.Result, opts)
	if err != nil {
		return export.Summary{}, err
	}
	cop := cohort.ExportOptions{Progress: opts.Progress, Result: plan.result, Provenance: plan.prov,
		BeforeCommit: d.exportRecorder(ctx, opts.Source, path, plan.details)}
	if !opts.Exact {
		cop.MinCell = d.Policy(opts.Source).K()
		if n, _ := plan.details["suppressed_cells"].(int); n > 0 && ans.Disclosure.Explained == nil && !ans.Disclosure.RowsWithheld {
			cop.OmitExplanation = "it was written from the exact result, and this export is small-cell suppressed"
		}
	}
	return cohort.ExportWorkbookWith(ctx, path, ans, opts.Version, cop)
}

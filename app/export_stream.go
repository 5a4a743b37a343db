package app

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
)

// Streamed exports (issue 21 item 2): a query's rows go from the
// database's cursor to the workbook as they are read, so an export of a
// million rows holds one row at a time. Which path an export takes is
// decided per statement (exportPath): an aggregate (or a statement whose
// shape cannot be read) is small and is read into memory, because
// small-cell suppression needs the whole table; a patient-level statement
// (one row per record) streams, pseudonymised row by row under the key of
// its export.

// QueryExport is what ExportQuery did.
type QueryExport struct {
	// Summary describes the workbook written.
	Summary export.Summary
	// Columns are the result's columns.
	Columns []datasets.Column
	// Head holds the first rows of the result as they may be shown (at
	// most ExportOptions.Head of them): exact for a row-level source,
	// suppressed for an aggregate-only one. Report says what was
	// suppressed; nil when nothing was.
	Head   [][]any
	Report *disclosure.Report
	// Stats counts the rows the query returned (all of them, within the
	// row cap) and what the limits left out.
	Stats datasets.StreamStats
	// Streamed is set when the rows went from the database to the file
	// one at a time.
	Streamed bool
}

// ExportQuery runs one reading statement on a source and writes its
// result and provenance to an .xlsx workbook at path, under the source's
// disclosure policy (see ExportOptions), with the workspace's limits
// unless limits overrides them. A patient-level result (one row per
// record) is read from the database's cursor and written as it comes,
// never held in memory; an aggregate is read whole and small-cell
// suppressed. As with Export, the statement and the export are recorded in
// the audit trail before the workbook is put in place, and an error or a
// cancel leaves no file.
func (d *Data) ExportQuery(ctx context.Context, path string, src Source, query string, limits datasets.RunnerOptions, prov export.Provenance, opts ExportOptions) (QueryExport, error) {
	opts.Source, opts.Query = src, query
	if prov.Query == "" {
		prov.Query = query
	}
	if !d.streamable(src, query) {
		return d.exportInMemory(ctx, path, src, query, limits, prov, opts)
	}
	se, err := d.startStreamedExport(ctx, src, query, limits, opts)
	if err != nil {
		return QueryExport{}, err
	}
	defer se.rows.Close()
	out := QueryExport{Columns: se.rows.Columns(), Streamed: true}
	prov.Extra = append(prov.Extra, se.entries()...)
	prov.Late = se.late
	table := export.Table{Name: "Results", Columns: se.names, Rows: se.table(&out.Head, opts.Head)}
	sum, err := export.WriteWorkbook(ctx, path, []export.Table{table}, prov, export.Options{Progress: opts.Progress,
		BeforeCommit: d.streamedCommit(ctx, path, se)})
	out.Stats = se.rows.Stats()
	if err != nil {
		return out, d.streamedFailed(ctx, se, err)
	}
	out.Summary = sum
	d.ws.logger.Info("export", "source", src.Name, "path", path, "rows", out.Stats.Rows, "streamed", true)
	return out, nil
}

// streamedExport is a patient-level export under way: the statement's
// cursor and the pseudonymiser of its rows.
type streamedExport struct {
	src     Source
	query   string
	pol     disclosure.Policy
	rows    datasets.RowStream
	names   []string
	ps      *rowPseudonymiser
	details map[string]any
}

// startStreamedExport opens the cursor of a patient-level export (see
// streamable) once the source's policy and the user's confirmation allow
// it: an aggregate-only source refuses it, an unconfirmed one is refused
// naming its identifier columns.
func (d *Data) startStreamedExport(ctx context.Context, src Source, query string, limits datasets.RunnerOptions, opts ExportOptions) (*streamedExport, error) {
	pol := d.Policy(src)
	if opts.Exact && pol.AggregateOnly() {
		return nil, ErrExactAggregateOnly
	}
	if pol.AggregateOnly() {
		err := &disclosure.AggregateOnlyError{Source: src.Name, Why: "the result has one row per record"}
		return nil, errors.Join(err, d.recordQuery(ctx, src, query, Disclosed{Policy: pol}, err))
	}
	rows, err := d.stream(ctx, src, query, limits)
	if err != nil {
		return nil, errors.Join(err, d.recordQuery(ctx, src, query, Disclosed{Policy: pol}, err))
	}
	se := &streamedExport{src: src, query: query, pol: pol, rows: rows}
	for _, c := range rows.Columns() {
		se.names = append(se.names, c.Name)
	}
	profile := disclosure.Profile(src.Kind)
	ids := disclosure.ClassifyColumns(disclosure.Analyze(query), rows.Columns(), profile)
	if !opts.PatientLevel {
		// Refused before any row is read; recorded as the in-memory
		// path records the statement it ran.
		st := rows.Stats()
		rows.Close()
		err := &disclosure.PatientLevelError{Identifiers: ids, RowLevel: true}
		return nil, errors.Join(err, d.recordStream(ctx, src, query, pol, st, len(se.names), err))
	}
	if se.ps, err = newRowPseudonymiser(rows.Columns(), ids, profile, opts.ShiftDates); err != nil {
		rows.Close()
		return nil, err
	}
	se.details = map[string]any{
		"columns": len(se.names), "exact": opts.Exact, "patient_level": true, "streamed": true,
		"access": string(pol.Access), "min_cell": pol.K(), "pseudonymised": se.ps.pseud, "dates_shifted": se.ps.shifted,
	}
	return se, nil
}

// entries are the export's Provenance entries known before its rows.
func (se *streamedExport) entries() []export.Entry {
	return append([]export.Entry{
		{Key: "Row cap", Value: se.rows.Stats().Limits.MaxRows},
		{Key: "Disclosure policy", Value: se.pol.String()},
	}, se.ps.entries()...)
}

// late are the entries known after the last row: the rows read and what
// the limits left out.
func (se *streamedExport) late() []export.Entry {
	st := se.rows.Stats()
	es := []export.Entry{{Key: "Rows", Value: st.Rows}}
	if n := st.Notice(); n != "" {
		es = append(es, export.Entry{Key: "Truncated", Value: "yes: " + n})
	}
	return es
}

// table yields the pseudonymised rows as they are read, keeping the first
// n as read in *head.
func (se *streamedExport) table(head *[][]any, n int) func(yield func([]any, error) bool) {
	return func(yield func([]any, error) bool) {
		shown := make([]any, len(se.names))
		for se.rows.Next() {
			row := se.rows.Row()
			if head != nil && len(*head) < n {
				*head = append(*head, slices.Clone(row))
			}
			se.ps.apply(shown, row)
			if !yield(shown, nil) {
				return
			}
		}
		if err := se.rows.Err(); err != nil {
			yield(nil, err)
		}
	}
}

// streamedCommit is the export's BeforeCommit: the statement's record
// (with the rows read) and the export's, before the file is put in place.
func (d *Data) streamedCommit(ctx context.Context, path string, se *streamedExport) func(string, export.Summary) error {
	record := d.exportRecorder(ctx, se.src, path, se.details)
	return func(sha string, sum export.Summary) error {
		st := se.rows.Stats()
		se.details["rows"] = st.Rows
		if err := d.recordStream(ctx, se.src, se.query, se.pol, st, len(se.names), nil); err != nil {
			return err
		}
		if err := record(sha, sum); err != nil {
			return &recordError{err: err}
		}
		return nil
	}
}

// streamedFailed records a streamed export's statement that failed (or was
// cancelled) and returns err with any error of the record.
func (d *Data) streamedFailed(ctx context.Context, se *streamedExport, err error) error {
	var rec *recordError
	if errors.As(err, &rec) {
		return err
	}
	return errors.Join(err, d.recordStream(ctx, se.src, se.query, se.pol, se.rows.Stats(), len(se.names), err))
}

// exportCohortStreamed writes a cohort answer whose statement is
// patient-level (streamable) with its Cohort sheet read again from the
// database's cursor, pseudonymised row by row, instead of from the rows
// the answer holds; it returns false when the answer does not qualify.
func (c *Cohort) exportCohortStreamed(ctx context.Context, path string, ans *cohort.Answer, opts ExportOptions) (export.Summary, bool, error) {
	d := c.ws.Data()
	if !opts.PatientLevel || !d.CanStream(opts.Source) || !d.streamable(opts.Source, opts.Query) {
		return export.Summary{}, false, nil
	}
	se, err := d.startStreamedExport(ctx, opts.Source, opts.Query, datasets.RunnerOptions{}, opts)
	if err != nil {
		return export.Summary{}, true, err
	}
	defer se.rows.Close()
	cop := cohort.ExportOptions{Progress: opts.Progress, Provenance: se.entries(), Late: se.late,
		Columns: se.names, Rows: se.table(nil, 0), BeforeCommit: d.streamedCommit(ctx, path, se)}
	if !opts.Exact {
		cop.MinCell = se.pol.K() // the Definition sheet's and the attrition's patient counts
	}
	sum, err := cohort.ExportWorkbookWith(ctx, path, ans, opts.Version, cop)
	if err != nil {
		return sum, true, d.streamedFailed(ctx, se, err)
	}
	return sum, true, nil
}

// CanStream says whether a source's query results can be read row by
// row with Stream: a row-level source's can (SQLite's from its statement,
// PostgreSQL's from a cursor); an aggregate-only source's results must be
// read whole to be suppressed.
func (d *Data) CanStream(src Source) bool {
	return !d.Policy(src).AggregateOnly()
}

// Stream runs one reading statement on a row-level source (CanStream) and
// returns a cursor over its rows, read under the workspace's limits (or
// the non-zero fields of limits) except the result byte cap, which a
// cursor does not need. The statement is recorded in the audit trail
// before its first row is read (if the record cannot be written, no row
// is returned), and again when the cursor is closed, with the rows read.
func (d *Data) Stream(ctx context.Context, src Source, query string, limits datasets.RunnerOptions) (datasets.RowStream, error) {
	if !d.CanStream(src) {
		return nil, fmt.Errorf("the results of %s cannot be read row by row: run the query whole", src.Label())
	}
	rows, err := d.stream(ctx, src, query, limits)
	pol := d.Policy(src)
	if err != nil {
		return nil, errors.Join(err, d.recordStream(ctx, src, query, pol, datasets.StreamStats{}, 0, err))
	}
	n := len(rows.Columns())
	if err := d.recordStream(ctx, src, query, pol, datasets.StreamStats{Rows: -1}, n, nil); err != nil {
		rows.Close()
		return nil, err
	}
	return &auditedStream{RowStream: rows, record: func(st datasets.StreamStats, runErr error) error {
		return d.recordStream(ctx, src, query, pol, st, n, runErr)
	}}, nil
}

// streamable says whether a statement's export streams: a statement that
// is plainly not an aggregate (no aggregate function, GROUP BY or nested
// select whose columns could be counts).
func (d *Data) streamable(src Source, query string) bool {
	sh := disclosure.Analyze(query)
	return !sh.Aggregate && !sh.Nested && !sh.Compound && disclosure.RowLevelReason(query, src.Kind) == ""
}

// stream opens a cursor over a statement's rows, with the workspace's
// limits or the non-zero fields of limits: on a SQLite source a runner's
// statement, on a PostgreSQL one a cursor in a read-only transaction on a
// connection of the source's pool, held until the stream is closed.
func (d *Data) stream(ctx context.Context, src Source, query string, limits datasets.RunnerOptions) (datasets.RowStream, error) {
	if src.Kind == SourcePostgres {
		eng, release, err := d.ws.postgresEngine(ctx, src, limits)
		if err != nil {
			return nil, err
		}
		rows, err := eng.Stream(ctx, query)
		if err != nil {
			release()
			return nil, err
		}
		return &releasingStream{RowStream: rows, release: release}, nil
	}
	path, err := d.ws.file(src)
	if err != nil {
		return nil, err
	}
	r, err := datasets.NewRunner(ctx, path, d.limits(limits))
	if err != nil {
		return nil, err
	}
	defer r.Close() // a stream keeps its own connection
	return r.Stream(ctx, query)
}

// releasingStream releases the engine a stream was read from when it is
// closed.
type releasingStream struct {
	datasets.RowStream
	release func()
	once    sync.Once
}

func (s *releasingStream) Close() error {
	err := s.RowStream.Close()
	s.once.Do(s.release)
	return err
}

// limits are the workspace's runner limits with the non-zero fields of
// over.
func (d *Data) limits(over datasets.RunnerOptions) datasets.RunnerOptions {
	opts := d.ws.RunnerOptions()
	if over.Timeout > 0 {
		opts.Timeout = over.Timeout
	}
	if over.MaxRows > 0 {
		opts.MaxRows = over.MaxRows
	}
	return opts
}

// exportInMemory is ExportQuery for an aggregate: the result read whole
// (within the limits), shown and exported under the source's policy.
func (d *Data) exportInMemory(ctx context.Context, path string, src Source, query string, limits datasets.RunnerOptions, prov export.Provenance, opts ExportOptions) (QueryExport, error) {
	shown, err := d.QueryDisclosed(ctx, src, query, limits)
	if err != nil {
		return QueryExport{}, err
	}
	res := shown.Result
	out := QueryExport{Columns: res.Columns, Report: shown.Report, Stats: datasets.StreamStats{
		Rows: int64(len(res.Rows)), Truncated: res.Truncated, TruncatedBy: res.TruncatedBy,
		CutCells: res.CutCells, Limits: res.Limits, Elapsed: res.Elapsed,
	}}
	out.Head = res.Rows[:min(len(res.Rows), max(opts.Head, 0))]
	prov.Add("Row cap", res.Limits.MaxRows)
	prov.Add("Rows", len(res.Rows))
	out.Summary, err = d.Export(ctx, path, res, prov, opts)
	return out, err
}

// recordError is an audit record that could not be written.
type recordError struct{ err error }

func (e *recordError) Error() string { return e.err.Error() }
func (e *recordError) Unwrap() error { return e.err }

// recordStream records a streamed statement in the audit trail, as
// recordQuery does for one read whole.
func (d *Data) recordStream(ctx context.Context, src Source, query string, pol disclosure.Policy, st datasets.StreamStats, columns int, runErr error) error {
	det := map[string]any{"sql": query, "columns": columns, "streamed": true, "access": "row-level"}
	if st.Rows >= 0 { // -1: recorded before the rows are read
		det["rows"] = st.Rows
	}
	if pol.AggregateOnly() {
		det["access"] = "aggregate-only"
	}
	if st.Truncated {
		det["truncated"] = string(st.TruncatedBy)
	}
	if runErr != nil {
		det["error"] = runErr.Error()
	}
	if err := d.ws.Record(context.WithoutCancel(ctx), audit.Event{Action: audit.ActionSQL, Source: src.Name, Details: det}); err != nil {
		return &recordError{err: err}
	}
	return nil
}

// rowPseudonymiser pseudonymises the rows of one patient-level export
// under one random key: direct identifiers replaced by HMAC pseudonyms,
// dates of birth and death cut to the year, or every date shifted by a
// per-patient number of days when shift is set. The streamed export and
// the in-memory one (pseudonymise) both use it.
type rowPseudonymiser struct {
	ps         *disclosure.Pseudonymizer
	ids        []disclosure.Identifier
	columns    []datasets.Column
	shift      bool
	patientCol int   // the patient of each row, for per-patient shifts; -1 when none
	dateCols   []int // the columns shifted
	// pseud and shifted name the columns pseudonymised and shifted.
	pseud, shifted []string
}

func newRowPseudonymiser(columns []datasets.Column, ids []disclosure.Identifier, profile string, shift bool) (*rowPseudonymiser, error) {
	ps, err := disclosure.NewPseudonymizer()
	if err != nil {
		return nil, err
	}
	p := &rowPseudonymiser{ps: ps, ids: ids, columns: columns, shift: shift, patientCol: -1}
	for _, id := range ids {
		// The column the values come from when the database traces it
		// (an id renamed by an alias or a WITH clause), else its name.
		name := baseColumn(id.Column)
		if id.Index < len(columns) && columns[id.Index].OriginColumn != "" {
			name = columns[id.Index].OriginColumn
		}
		for _, c := range disclosure.IndividualColumns(profile) {
			if p.patientCol < 0 && strings.EqualFold(name, c) {
				p.patientCol = id.Index
			}
		}
	}
	if shift {
		for j, c := range columns {
			decl := strings.ToUpper(c.DeclType)
			isDate := strings.Contains(decl, "DATE") || strings.Contains(decl, "TIME")
			for _, id := range ids {
				isDate = isDate || id.Index == j && id.Date
			}
			if isDate {
				p.dateCols = append(p.dateCols, j)
			}
		}
	}
	p.pseud, p.shifted = []string{}, []string{}
	for _, id := range ids {
		if id.Kind == disclosure.Direct && !id.Date {
			p.pseud = append(p.pseud, id.Column)
		}
	}
	for _, j := range p.dateCols {
		p.shifted = append(p.shifted, columns[j].Name)
	}
	return p, nil
}

// apply writes the pseudonymised row r into dst (len(r) values).
func (p *rowPseudonymiser) apply(dst, r []any) {
	copy(dst, r)
	if p.shift {
		days := 0
		if p.patientCol >= 0 {
			days = p.ps.ShiftDays(r[p.patientCol])
		} else {
			days = p.ps.ShiftDays("every row of this export")
		}
		for _, j := range p.dateCols {
			dst[j], _ = disclosure.ShiftDate(r[j], days)
		}
	}
	for _, id := range p.ids {
		if id.Kind != disclosure.Direct {
			continue
		}
		v := r[id.Index]
		switch {
		case id.Date && p.shift:
			// shifted above
		case id.Date:
			dst[id.Index], _ = disclosure.YearOf(v)
		default:
			dst[id.Index] = p.ps.Pseudonym(baseColumn(id.Column), v)
		}
	}
}

// entries are the Provenance entries saying what was done.
func (p *rowPseudonymiser) entries() []export.Entry {
	var years, quasi []string
	for _, id := range p.ids {
		switch {
		case id.Kind == disclosure.Direct && id.Date && !p.shift:
			years = append(years, id.Column)
		case id.Kind == disclosure.Quasi && !slices.Contains(p.dateCols, id.Index):
			quasi = append(quasi, id.Column+" ("+id.What+")")
		}
	}
	entries := []export.Entry{{Key: "Patient-level export", Value: "confirmed by the user"}}
	if len(p.pseud) > 0 {
		entries = append(entries, export.Entry{Key: "Pseudonymised columns", Value: strings.Join(p.pseud, ", ") +
			": each value replaced by HMAC-SHA256 with a random key made for this export and not kept (the same value has the same pseudonym within this workbook only)"})
	}
	if len(years) > 0 {
		entries = append(entries, export.Entry{Key: "Dates reduced to the year", Value: strings.Join(years, ", ")})
	}
	if len(p.shifted) > 0 {
		how := "by a per-patient number of days (1 to 365, either way) derived from the pseudonym key; intervals within a patient are kept"
		if p.patientCol < 0 {
			how = "by one number of days for every row (no patient column in the result); intervals are kept"
		}
		entries = append(entries, export.Entry{Key: "Dates shifted", Value: strings.Join(p.shifted, ", ") + ": " + how})
	}
	if len(quasi) > 0 {
		entries = append(entries, export.Entry{Key: "Quasi-identifiers (kept)", Value: strings.Join(quasi, ", ")})
	}
	return entries
}

// pseudonymise replaces the direct identifiers of a patient-level result
// held in memory (see rowPseudonymiser) and returns the provenance
// entries and the columns pseudonymised and shifted.
func pseudonymise(res *datasets.Result, ids []disclosure.Identifier, profile string, shift bool) (*datasets.Result, []export.Entry, []string, []string, error) {
	p, err := newRowPseudonymiser(res.Columns, ids, profile, shift)
	if err != nil {
		return nil, nil, nil, nil, fmt.Errorf("pseudonymise: %w", err)
	}
	out := *res
	out.Rows = make([][]any, len(res.Rows))
	for i, r := range res.Rows {
		out.Rows[i] = make([]any, len(r))
		p.apply(out.Rows[i], r)
	}
	return &out, p.entries(), p.pseud, p.shifted, nil
}

package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/durfmt"
)

func newSQLCmd(f *Factory) *cobra.Command {
	var (
		db, xlsx string
		asJSON   bool
		limits   datasets.RunnerOptions
		exp      app.ExportOptions
	)
	cmd := &cobra.Command{
		Use:   `sql --db DB "SELECT ..."`,
		Short: "Run one read-only SQL query",
		Long: `Runs one reading statement (SELECT, WITH, VALUES, EXPLAIN or a read-only PRAGMA)
on a read-only connection, with a time limit and a row cap. Anything that would
write, change the schema, attach files or run several statements is refused.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			src, err := ws.Resolve(db)
			if err != nil {
				return err
			}
			query := args[0]
			ctx, data := cmd.Context(), ws.Data()
			head := headRows(f.Out)
			if xlsx != "" {
				prov := export.Provenance{AppVersion: f.Version, DataSource: data.Describe(src), Query: query, Created: time.Now()}
				exp.Head = head
				qe, err := data.ExportQuery(ctx, xlsx, src, query, limits, prov, exp)
				if err != nil {
					return exportHint(err)
				}
				fmt.Fprintf(f.Err, "wrote %d rows to %s\n", qe.Summary.Rows, xlsx)
				if !asJSON {
					writeSuppressionNote(f.Err, qe.Report)
					if err := writeHead(f.Out, qe.Columns, qe.Head, qe.Stats.Rows); err != nil {
						return err
					}
					writeStats(f.Err, qe.Stats)
					return nil
				}
			}
			if data.CanStream(src) {
				// A row-level source: the rows go from the database's
				// cursor to the output, never held whole.
				rows, err := data.Stream(ctx, src, query, limits)
				if err != nil {
					return err
				}
				defer rows.Close()
				if asJSON {
					return streamJSON(f.Out, rows)
				}
				if err := streamText(f.Out, rows, head); err != nil {
					return err
				}
				writeStats(f.Err, rows.Stats())
				return nil
			}
			shown, err := data.QueryDisclosed(ctx, src, query, limits)
			if err != nil {
				return err
			}
			res := shown.Result
			if asJSON {
				return writeResultJSON(f.Out, res, shown.Report)
			}
			writeSuppressionNote(f.Err, shown.Report)
			if err := writeHead(f.Out, res.Columns, res.Rows[:min(len(res.Rows), head)], int64(len(res.Rows))); err != nil {
				return err
			}
			writeStats(f.Err, datasets.StreamStats{Rows: int64(len(res.Rows)), Truncated: res.Truncated, TruncatedBy: res.TruncatedBy,
				CutCells: res.CutCells, Limits: res.Limits, Elapsed: res.Elapsed})
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database file or data source name")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print every row as {"columns":[...],"rows":[[...]],"truncated":false} (the text table shows the first rows)`)
	cmd.Flags().StringVar(&xlsx, "xlsx", "", "also write the result to this Excel workbook (aggregates small-cell suppressed)")
	addExportFlags(cmd, &exp)
	cmd.Flags().DurationVar(&limits.Timeout, "timeout", 0, "time limit (default from the workspace settings, 30s)")
	cmd.Flags().IntVar(&limits.MaxRows, "max-rows", 0, "row cap (default from the workspace settings, 50000)")
	_ = cmd.MarkFlagRequired("db")
	return cmd
}

// writeStats writes the summary line under a result: its rows, time and
// what the limits left out.
func writeStats(w io.Writer, st datasets.StreamStats) {
	note := ""
	if st.Truncated && st.TruncatedBy == datasets.CapRows {
		note = " (truncated: more rows exist; raise --max-rows or narrow the query)"
	}
	fmt.Fprintf(w, "%d rows in %s%s\n", st.Rows, durfmt.Human(st.Elapsed), note)
	if n := st.Notice(); n != "" {
		fmt.Fprintln(w, n)
	}
}

// addExportFlags adds the disclosure choices of an --xlsx export.
func addExportFlags(cmd *cobra.Command, exp *app.ExportOptions) {
	cmd.Flags().BoolVar(&exp.Exact, "exact", false, "export an aggregate's exact values, without small-cell suppression (row-level sources only; recorded in the audit trail)")
	cmd.Flags().BoolVar(&exp.PatientLevel, "patient-level", false, "confirm the export of patient-level rows (identifier columns are pseudonymised)")
	cmd.Flags().BoolVar(&exp.ShiftDates, "shift-dates", false, "with --patient-level: shift dates by a per-patient number of days (intervals kept)")
}

// exportHint adds the flag that answers a refused export.
func exportHint(err error) error {
	if errors.Is(err, app.ErrExactAggregateOnly) {
		return fmt.Errorf("%w (leave out --exact)", err)
	}
	var pl *disclosure.PatientLevelError
	if errors.As(err, &pl) {
		return fmt.Errorf("%w (add --patient-level to export it; --shift-dates also shifts its dates by patient)", err)
	}
	return err
}

// writeSuppressionNote tells what small-cell suppression hid, if anything.
func writeSuppressionNote(w io.Writer, rep *disclosure.Report) {
	if rep == nil {
		return
	}
	msg := fmt.Sprintf("aggregate-only source: %d cells shown as <%d", len(rep.Cells), rep.K)
	if rep.IndividualColumn != "" {
		msg += "; individuals counted by " + rep.IndividualColumn
	}
	fmt.Fprintln(w, msg)
	for _, n := range rep.Notes {
		fmt.Fprintln(w, "note: "+n)
	}
}

// resultJSON is the --json shape of a query result. Suppressed and MinCell
// are set for an aggregate-only source: the cells shown as "<k".
type resultJSON struct {
	Columns    []string         `json:"columns"`
	Rows       [][]any          `json:"rows"`
	Truncated  bool             `json:"truncated"`
	Suppressed []suppressedJSON `json:"suppressed,omitempty"`
	MinCell    int              `json:"min_cell,omitempty"`
	Individual string           `json:"individual_column,omitempty"`
}

// suppressedJSON marks one suppressed cell.
type suppressedJSON struct {
	Row    int    `json:"row"`
	Column string `json:"column"`
	Shown  string `json:"shown"`
}

// suppressedCells lists the suppressed cells of a result for --json.
func suppressedCells(res *datasets.Result, rep *disclosure.Report) ([]suppressedJSON, int, string) {
	if rep == nil {
		return nil, 0, ""
	}
	out := []suppressedJSON{}
	for _, c := range disclosure.Cells(res) {
		out = append(out, suppressedJSON{Row: c.Row, Column: c.Column, Shown: disclosure.Suppressed{K: rep.K}.String()})
	}
	return out, rep.K, rep.IndividualColumn
}

func writeResultJSON(w io.Writer, res *datasets.Result, rep *disclosure.Report) error {
	rows := res.Rows
	if rows == nil {
		rows = [][]any{}
	}
	for _, row := range rows {
		jsonSafe(row) // JSON has no infinities
	}
	out := resultJSON{Columns: res.ColumnNames(), Rows: rows, Truncated: res.Truncated}
	out.Suppressed, out.MinCell, out.Individual = suppressedCells(res, rep)
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false) // "<11" as written
	return enc.Encode(out)
}

// formatCell renders a value for the text table: NULL as "NULL", tabs and
// newlines as spaces and other control characters as escapes (which the
// output writer would add anyway), so the columns stay aligned.
func formatCell(v any) string {
	if v == nil {
		return "NULL"
	}
	s, ok := v.(string)
	if !ok {
		s = fmt.Sprint(v)
	}
	return escapeControls(strings.Map(controlSpaces, s))
}

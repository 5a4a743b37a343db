package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/export"
)

func newSQLCmd(f *Factory) *cobra.Command {
	var (
		db, xlsx string
		asJSON   bool
		limits   datasets.RunnerOptions
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
			res, err := ws.Data().Query(cmd.Context(), src, query, limits)
			if err != nil {
				return err
			}
			if xlsx != "" {
				opts := ws.Config().RunnerOptions()
				if limits.MaxRows > 0 {
					opts.MaxRows = limits.MaxRows
				}
				prov := export.Provenance{AppVersion: f.Version, DataSource: ws.Data().Describe(src), Query: query, Created: time.Now()}
				prov.Add("Row cap", opts.MaxRows)
				prov.Add("Rows", len(res.Rows))
				sum, err := ws.Data().Export(cmd.Context(), xlsx, res, prov, nil)
				if err != nil {
					return err
				}
				fmt.Fprintf(f.Err, "wrote %d rows to %s\n", sum.Rows, xlsx)
			}
			if asJSON {
				return writeResultJSON(f.Out, res)
			}
			if err := writeResultText(f.Out, res); err != nil {
				return err
			}
			note := ""
			if res.Truncated && res.TruncatedBy == datasets.CapRows {
				note = " (truncated: more rows exist; raise --max-rows or narrow the query)"
			}
			fmt.Fprintf(f.Err, "%d rows in %s%s\n", len(res.Rows), res.Elapsed.Round(time.Millisecond), note)
			if n := res.Notice(); n != "" {
				fmt.Fprintln(f.Err, n)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database file or data source name")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"columns":[...],"rows":[[...]],"truncated":false}`)
	cmd.Flags().StringVar(&xlsx, "xlsx", "", "also write the result to this Excel workbook")
	cmd.Flags().DurationVar(&limits.Timeout, "timeout", 0, "time limit (default from the workspace settings, 30s)")
	cmd.Flags().IntVar(&limits.MaxRows, "max-rows", 0, "row cap (default from the workspace settings, 50000)")
	_ = cmd.MarkFlagRequired("db")
	return cmd
}

// resultJSON is the --json shape of a query result.
type resultJSON struct {
	Columns   []string `json:"columns"`
	Rows      [][]any  `json:"rows"`
	Truncated bool     `json:"truncated"`
}

func writeResultJSON(w io.Writer, res *datasets.Result) error {
	rows := res.Rows
	if rows == nil {
		rows = [][]any{}
	}
	for _, row := range rows {
		for i, v := range row {
			if x, ok := v.(float64); ok && (math.IsInf(x, 0) || math.IsNaN(x)) {
				row[i] = fmt.Sprint(x) // JSON has no infinities
			}
		}
	}
	return json.NewEncoder(w).Encode(resultJSON{Columns: res.ColumnNames(), Rows: rows, Truncated: res.Truncated})
}

func writeResultText(w io.Writer, res *datasets.Result) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, strings.Join(res.ColumnNames(), "\t"))
	cells := make([]string, len(res.Columns))
	for _, row := range res.Rows {
		for i, v := range row {
			cells[i] = formatCell(v)
		}
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// formatCell renders a value for the text table: NULL as "NULL", tabs and
// newlines as spaces and other control characters as escapes (which the
// output writer would add anyway), so the columns stay aligned.
func formatCell(v any) string {
	if v == nil {
		return "NULL"
	}
	s := fmt.Sprint(v)
	return escapeControls(strings.NewReplacer("\t", " ", "\n", " ", "\r", " ").Replace(s))
}

package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
)

func newTablesCmd(f *Factory) *cobra.Command {
	var (
		db     string
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "tables [--db DB]",
		Short: "List the tables of a database, or the registered data sources when --db is not given",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			if db == "" {
				return listSources(f, asJSON)
			}
			src, err := ws.Resolve(db)
			if err != nil {
				return err
			}
			cat, err := ws.Data().Catalog(cmd.Context(), src, false)
			if err != nil {
				return err
			}
			type tableJSON struct {
				Name          string `json:"name"`
				Kind          string `json:"kind"`
				Rows          int64  `json:"rows"`
				RowsEstimated bool   `json:"rows_estimated,omitempty"`
				Columns       int    `json:"columns"`
			}
			out := make([]tableJSON, 0, len(cat.Tables))
			for _, t := range cat.Tables {
				out = append(out, tableJSON{t.Name, string(t.Kind), t.RowCount, t.RowCountEstimated, len(t.Columns)})
			}
			if asJSON {
				return json.NewEncoder(f.Out).Encode(out)
			}
			tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', tabwriter.AlignRight)
			fmt.Fprintln(tw, "table\tkind\trows\tcolumns\t")
			for _, t := range out {
				rows := fmt.Sprint(t.Rows)
				if t.RowsEstimated {
					rows = "~" + rows
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t\n", t.Name, t.Kind, rows, t.Columns)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database file or data source name")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON")
	return cmd
}

// listSources prints the workspace's registered data sources.
func listSources(f *Factory, asJSON bool) error {
	ws, err := f.Workspace()
	if err != nil {
		return err
	}
	sources := ws.Config().Sources
	if asJSON {
		return json.NewEncoder(f.Out).Encode(sources)
	}
	if len(sources) == 0 {
		fmt.Fprintf(f.Out, "no data sources in %s yet: run 'clinsight demo init' or an import\n", ws.Dir())
		return nil
	}
	tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "source\tkind\tpath\tdescription")
	for _, s := range sources {
		where := ws.SourcePath(s)
		if s.Kind == app.SourcePostgres {
			where = ws.Data().Describe(s)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Name, s.Kind, where, s.Description)
	}
	return tw.Flush()
}

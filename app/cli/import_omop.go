package cli

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets"
)

func newImportOMOPCmd(f *Factory) *cobra.Command {
	var (
		db, name string
		opts     datasets.OMOPOptions
	)
	cmd := &cobra.Command{
		Use:   "omop DIR --db DB",
		Short: "Import an OMOP CDM 5.4 folder of per-table CSV files (PERSON.csv, CONCEPT.csv, ...) with the official column types",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			src, err := ws.Resolve(db)
			if err != nil {
				return err
			}
			pp := newProgressPrinter(f.Err)
			opts.Progress = pp.Report
			res, err := ws.Data().ImportOMOPInto(cmd.Context(), src, args[0], opts)
			pp.Done()
			for _, t := range res.Tables {
				fmt.Fprintf(f.Out, "  %-24s %10d rows  %s\n", t.Table, t.Rows, t.Duration.Round(1e6))
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "imported %d tables, %d rows in %s; %d concept names indexed for concept search\n",
				len(res.Tables), res.Rows, res.Duration.Round(1e6), res.Concepts)
			if len(res.Missing) > 0 {
				fmt.Fprintf(f.Err, "no file in %s for: %s (created empty)\n", args[0], strings.Join(res.Missing, ", "))
			}
			if len(res.Skipped) > 0 {
				fmt.Fprintf(f.Err, "not OMOP CDM tables, skipped: %s\n", strings.Join(res.Skipped, ", "))
			}
			return register(f, ws, src, name, app.SourceOMOP, "OMOP CDM imported from "+filepath.Base(filepath.Clean(args[0])))
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database file or data source name (created if missing)")
	cmd.Flags().BoolVar(&opts.Replace, "replace", false, "replace tables that exist")
	cmd.Flags().StringVar(&name, "name", "", "register the database as a data source with this name")
	_ = cmd.MarkFlagRequired("db")
	return cmd
}

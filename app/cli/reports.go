package cli

import (
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/impression"
)

func newReportsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "reports",
		Short: "Manage the radiology report corpus used for impressions",
	}
	cmd.AddCommand(newReportsImportCmd(f))
	return cmd
}

func newReportsImportCmd(f *Factory) *cobra.Command {
	var (
		db, name string
		opts     impression.ImportOptions
	)
	cmd := &cobra.Command{
		Use:   "import PATH --db DB",
		Short: "Import radiology reports (CSV, Open-i XML, plain text, a folder or .tgz of them) into a report corpus",
		Long: `Imports radiology reports into the table ` + impression.ReportsTable + ` of a database and labels
each with CheXpert's 14 observations (1 positive, 0 negative, -1 uncertain, 2 blank).
PATH is a CSV file with findings and impression columns (the Open-i layout
uid,findings,impression) or a report column, an Open-i XML file, a plain-text
report split by its section headers (FINDINGS:, IMPRESSION:, CONCLUSION:),
a folder of such files, or a .tgz/.tar.gz/.tar archive of them.

Reports without findings, with findings under 10 words or an impression under
3 words are kept but flagged ineligible as examples. The import is one
transaction: an error or Ctrl-C adds nothing.`,
		Example: `  clinsight reports import indiana_reports.csv --db reports.sqlite --name reports
  clinsight reports import NLMCXR_reports.tgz --db reports --replace`,
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
			pp := newProgressPrinter(f.Err)
			opts.Progress = pp.Report
			res, err := ws.Impressions().Import(cmd.Context(), src, args[0], opts)
			pp.Done()
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "imported %d reports from %s (%d files) in %s: %d eligible as examples; the corpus now holds %d reports\n",
				res.Reports, filepath.Base(res.Path), res.Files, res.Duration.Round(1e6), res.Eligible, res.Total)
			for _, o := range impression.AllObservations() {
				if n := res.Positive[o]; n > 0 {
					fmt.Fprintf(f.Out, "  %-27s %7d positive\n", o, n)
				}
			}
			if res.CutFields > 0 {
				what := fmt.Sprintf("%d fields were", res.CutFields)
				if res.CutFields == 1 {
					what = "1 field was"
				}
				fmt.Fprintf(f.Out, "%s longer than a report holds and cut (the stored text ends with \"[…]\"):\n", what)
				for _, c := range res.Cuts {
					fmt.Fprintf(f.Out, "  %s\n", escapeControls(c.String()))
				}
				if len(res.Cuts) < res.CutFields {
					fmt.Fprintf(f.Out, "  ... and %d more\n", res.CutFields-len(res.Cuts))
				}
			}
			return register(f, ws, src, name, app.SourceCSV, "radiology reports imported from "+filepath.Base(res.Path))
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database file or data source name (created if missing)")
	cmd.Flags().BoolVar(&opts.Replace, "replace", false, "replace the reports already in the corpus")
	cmd.Flags().StringVar(&name, "name", "", "register the database as a data source with this name")
	_ = cmd.MarkFlagRequired("db")
	return cmd
}

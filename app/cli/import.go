package cli

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/impression"
	"github.com/clinsight/clinsight/datasets"
)

func newImportCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "import",
		Short: "Import data into a SQLite database",
	}
	cmd.AddCommand(newImportCSVCmd(f), newImportMIMICCmd(f), newImportOMOPCmd(f), newImportSQLiteCmd(f))
	return cmd
}

func newImportCSVCmd(f *Factory) *cobra.Command {
	var (
		db, name string
		opts     datasets.CSVOptions
	)
	cmd := &cobra.Command{
		Use:   "csv FILE --db DB",
		Short: "Import a CSV or CSV.gz file as one table (types inferred)",
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
			res, err := ws.Data().ImportCSVInto(cmd.Context(), src, args[0], opts)
			pp.Done()
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "imported %s into table %s: %d rows, %d columns in %s\n",
				filepath.Base(res.Path), res.Table, res.Rows, len(res.Columns), res.Duration.Round(1e6))
			return register(f, ws, src, name, app.SourceCSV, "imported from "+filepath.Base(res.Path))
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database file or data source name (created if missing)")
	cmd.Flags().StringVar(&opts.Table, "table", "", "table name (default: from the file name)")
	cmd.Flags().BoolVar(&opts.Replace, "replace", false, "replace an existing table of the same name")
	cmd.Flags().StringVar(&name, "name", "", "register the database as a data source with this name")
	_ = cmd.MarkFlagRequired("db")
	return cmd
}

func newImportMIMICCmd(f *Factory) *cobra.Command {
	var (
		db, name string
		opts     datasets.MIMICOptions
	)
	cmd := &cobra.Command{
		Use:   "mimic-iv DIR --db DB",
		Short: "Import a MIMIC-IV directory (hosp/*.csv.gz, icu/*.csv.gz) with its official column types",
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
			res, err := ws.Data().ImportMIMICInto(cmd.Context(), src, args[0], opts)
			pp.Done()
			for _, t := range res.Tables {
				fmt.Fprintf(f.Out, "  %-4s %-22s %10d rows  %s\n", t.Module, t.Table, t.Rows, t.Duration.Round(1e6))
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "imported %d tables, %d rows in %s\n", len(res.Tables), res.Rows, res.Duration.Round(1e6))
			if len(res.Missing) > 0 {
				fmt.Fprintf(f.Err, "not present in %s: %s\n", args[0], strings.Join(res.Missing, ", "))
			}
			return register(f, ws, src, name, app.SourceMIMICIV, "MIMIC-IV imported from "+filepath.Base(filepath.Clean(args[0])))
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database file or data source name (created if missing)")
	cmd.Flags().BoolVar(&opts.Replace, "replace", false, "replace tables that exist")
	cmd.Flags().StringVar(&name, "name", "", "register the database as a data source with this name")
	_ = cmd.MarkFlagRequired("db")
	return cmd
}

func newImportSQLiteCmd(f *Factory) *cobra.Command {
	var name string
	cmd := &cobra.Command{
		Use:   "sqlite FILE",
		Short: "Register an existing SQLite file as a data source (opened read-only, never modified)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			src, err := ws.RegisterSQLite(cmd.Context(), args[0], name)
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "registered %s as data source %q (%s)\n", src.Path, src.Name, src.Description)
			return nil
		},
	}
	cmd.Flags().StringVar(&name, "name", "", "data source name (default: the file name)")
	return cmd
}

// register records an imported database as a named data source when asked.
func register(f *Factory, ws *app.Workspace, into app.Source, name, kind, description string) error {
	if name == "" {
		return nil
	}
	src, err := ws.RegisterImported(name, into.Path, kind, description)
	if err != nil {
		return err
	}
	fmt.Fprintf(f.Out, "registered as data source %q\n", src.Name)
	return nil
}

// cliHint adds the command-line form of what to do to an error whose
// message (written for every front end) says it in the product's words:
// the services never name a flag, the CLI does.
func cliHint(err error) string {
	var ro *app.ReadOnlySourceError
	var missing *app.MissingDataError
	switch {
	case errors.As(err, &ro):
		return fmt.Sprintf(" (for example --db %s-imports.sqlite --name %s-imports)", ro.Source, ro.Source)
	case errors.Is(err, app.ErrNoSource):
		return " (pass --db with a file path or a data source name; see 'clinsight tables')"
	case errors.As(err, &missing) && missing.What == "trials":
		return fmt.Sprintf(" (clinsight trials import PATH --db %s)", missing.Source)
	case errors.Is(err, impression.ErrNoCorpus):
		return " (clinsight reports import FILE --db DB)"
	case errors.Is(err, impression.ErrNoChatModel):
		return " (pass --model, or --no-llm to work without one)"
	case errors.Is(err, app.ErrDemoExists):
		return " (use --force to recreate it)"
	}
	return ""
}

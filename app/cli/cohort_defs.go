package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/internal/inputfile"
)

// maxLabelWidth bounds the first column of Table 1 printed as text (the
// JSON and the workbook keep the full labels).
const maxLabelWidth = 72

// newCohortCmd is "clinsight cohort": saved cohort definitions (save,
// list, rerun, export, import) and Table 1 (issue 19 items 2 and 3).
func newCohortCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "cohort",
		Short: "Save, re-run and share cohort definitions; describe a cohort (Table 1)",
	}
	cmd.AddCommand(newCohortSaveCmd(f), newCohortListCmd(f), newCohortRerunCmd(f),
		newCohortExportCmd(f), newCohortImportCmd(f), newCohortTable1Cmd(f),
		newCohortPrescreenCmd(f)) // trial pre-screening: cohort_prescreen.go
	return cmd
}

// cohortStatement reads --sql or --sql-file.
func cohortStatement(sql, file string) (string, error) {
	switch {
	case sql != "" && file != "":
		return "", errors.New("pass either --sql or --sql-file, not both")
	case file != "":
		fh, _, err := inputfile.Open(file) // a named pipe would block for ever
		if err != nil {
			return "", err
		}
		defer fh.Close()
		const maxSQL = 1 << 20
		b, err := io.ReadAll(io.LimitReader(fh, maxSQL+1))
		if err != nil {
			return "", fmt.Errorf("read %s: %w", file, err)
		}
		if len(b) > maxSQL {
			return "", fmt.Errorf("%s is larger than %d bytes: it is not one SQL statement", file, maxSQL)
		}
		return string(b), nil
	case strings.TrimSpace(sql) == "":
		return "", errors.New("no cohort statement: pass --sql or --sql-file")
	}
	return sql, nil
}

func newCohortSaveCmd(f *Factory) *cobra.Command {
	var db, sql, sqlFile, question, name string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "save --db SOURCE --sql SQL [--question Q] [--name NAME]",
		Short: "Save a cohort definition (its statement, source and counts now) in the workspace",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			stmt, err := cohortStatement(sql, sqlFile)
			if err != nil {
				return err
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			src, err := ws.Resolve(db)
			if err != nil {
				return err
			}
			d, err := ws.Cohort().Save(cmd.Context(), src, &cohort.Answer{Question: question, SQL: stmt}, name)
			if err != nil {
				return err
			}
			if asJSON {
				return writeCohortJSON(f.Out, d)
			}
			fmt.Fprintf(f.Out, "Saved %s: %s\n", d.ID, d.Counts.Text())
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "data source name or SQLite file")
	cmd.Flags().StringVar(&sql, "sql", "", "the cohort's SQL statement")
	cmd.Flags().StringVar(&sqlFile, "sql-file", "", "file holding the cohort's SQL statement")
	cmd.Flags().StringVar(&question, "question", "", "the question the statement answers")
	cmd.Flags().StringVar(&name, "name", "", "name of the definition (default: the question)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the saved definition as JSON")
	return cmd
}

func newCohortListCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "list",
		Short: "List the saved cohort definitions, newest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			defs, problems, err := ws.Cohort().List(cmd.Context())
			if err != nil {
				return err
			}
			for _, p := range problems {
				fmt.Fprintln(f.Err, "warning:", p)
			}
			if asJSON {
				if defs == nil {
					defs = []cohort.Definition{}
				}
				return writeCohortJSON(f.Out, defs)
			}
			if len(defs) == 0 {
				fmt.Fprintln(f.Out, "No saved cohort definitions (clinsight cohort save --db SOURCE --sql SQL).")
				return nil
			}
			tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tSOURCE\tCREATED\tCOUNTS AT CREATION\tLAST RUN")
			for _, d := range defs {
				last := "-"
				if n := len(d.Runs); n > 0 {
					last = d.Runs[n-1].At.Local().Format("2006-01-02 15:04") + ": " + d.Runs[n-1].Counts.Text()
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", d.ID, d.Source.Name, d.Created.Local().Format("2006-01-02 15:04"), d.Counts.Text(), last)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the definitions as JSON")
	return cmd
}

func newCohortRerunCmd(f *Factory) *cobra.Command {
	var asJSON, regenerate bool
	var model string
	cmd := &cobra.Command{
		Use:   "rerun ID",
		Short: "Run a saved cohort definition again (the same SQL, or --regenerate: ask its question again) and show how its counts changed",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			var rr cohort.Rerun
			if regenerate {
				rr, _, err = ws.Cohort().Regenerate(cmd.Context(), args[0], app.CohortOptions{Model: model})
			} else {
				rr, err = ws.Cohort().Rerun(cmd.Context(), args[0])
			}
			if err != nil {
				return err
			}
			if rr.Regenerated && !asJSON {
				fmt.Fprintf(f.Out, "The model wrote a new statement:\n%s\n", rr.SQL)
			}
			if asJSON {
				out := map[string]any{"id": rr.Definition.ID, "source": rr.Definition.Source.Name,
					"created": rr.Definition.Created, "then": rr.Then, "previous": rr.Previous, "now": rr.Now,
					"rows_change": nil, "patients_change": nil, "changes": rr.Changes(),
					"regenerated": rr.Regenerated, "sql": rr.SQL}
				if rr.Then.SuppressedBelow == 0 && rr.Now.SuppressedBelow == 0 { // exact counts
					out["rows_change"], out["patients_change"] = rr.Now.Rows-rr.Then.Rows, rr.Now.Patients-rr.Then.Patients
				}
				return writeCohortJSON(f.Out, out)
			}
			fmt.Fprintf(f.Out, "%s on %s (saved %s): %s\n", rr.Definition.ID, rr.Definition.Source.Name,
				rr.Definition.Created.Local().Format("2006-01-02 15:04"), rr.Changes())
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the counts as JSON")
	cmd.Flags().BoolVar(&regenerate, "regenerate", false, "ask the saved question again (the model writes a new statement) and count that; the saved statement is kept")
	cmd.Flags().StringVar(&model, "model", "", "with --regenerate: the model to ask (default: the configured SQL model)")
	return cmd
}

func newCohortExportCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "export ID FILE",
		Short: "Write a saved cohort definition to a file a colleague can import",
		Args:  cobra.ExactArgs(2),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			if err := ws.Cohort().ExportFile(cmd.Context(), args[0], args[1]); err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Wrote %s\n", args[1])
			return nil
		},
	}
}

func newCohortImportCmd(f *Factory) *cobra.Command {
	var db string
	cmd := &cobra.Command{
		Use:   "import FILE [--db SOURCE]",
		Short: "Import a cohort definition file, to run on the data source of its name or on --db",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			d, err := ws.Cohort().ImportFile(cmd.Context(), args[0], db)
			var se *app.DefinitionSourceError
			if errors.As(err, &se) {
				return fmt.Errorf("%w (pass --db with one of them)", err)
			}
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "Imported %s to run on %s (counts where it was made: %s); run it with 'clinsight cohort rerun %s'\n",
				d.ID, d.Source.Name, d.Counts.Text(), d.ID)
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "data source to run the definition on (default: the source of its name)")
	return cmd
}

func newCohortTable1Cmd(f *Factory) *cobra.Command {
	var db, sql, sqlFile, saved, by, labs, xlsx string
	var topDx, topRx int
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "table1 (--db SOURCE --sql SQL | --cohort ID) [--by sex|cohort|COLUMN] [--xlsx FILE]",
		Short: "Describe a cohort's patients: the Table 1 of baseline characteristics",
		Long: `Describe the patients a cohort statement selects (a result with subject_id or
person_id) on a MIMIC-IV-shaped or OMOP CDM source: age, sex,
race/ethnicity, admission type, length of stay, the
most frequent diagnoses and medications and the first lab values of the
index admission, each with its missing count. --by stratifies by sex, by
cohort (the cohort against the rest of the source's patients) or by a column
of the result, with standardized mean differences between two strata.
Exports suppress counts below the source's minimum cell size (11 unless the
source says otherwise); an aggregate-only source's table is suppressed on
screen too.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			var src app.Source
			var stmt string
			if saved != "" {
				if sql != "" || sqlFile != "" {
					return errors.New("pass either --cohort or --sql, not both")
				}
				d, err := ws.Cohort().Load(saved)
				if err != nil {
					return err
				}
				stmt = d.SQL
				if db == "" {
					db = d.Source.Name
				}
			} else if stmt, err = cohortStatement(sql, sqlFile); err != nil {
				return err
			}
			if src, err = ws.Resolve(db); err != nil {
				return err
			}
			opts := cohort.Table1Options{Stratify: by, TopDiagnoses: topDx, TopMedications: topRx}
			if labs != "" {
				opts.Labs = []string{}
				for _, l := range strings.Split(labs, ",") {
					if l = strings.TrimSpace(l); l != "" {
						opts.Labs = append(opts.Labs, l)
					}
				}
			}
			t, err := ws.Cohort().Table1(ctx, src, stmt, opts)
			if err != nil {
				return err
			}
			k := ws.Cohort().Table1MinCell(src)
			header, rows := t.Cells(k)
			if asJSON {
				var patients any = t.Patients
				if k >= 2 && t.Patients < int64(k) { // an aggregate-only source's small cohort
					patients = disclosure.Suppressed{K: k}
				}
				if err := writeCohortJSON(f.Out, map[string]any{"patients": patients, "patient_column": t.PatientColumn,
					"stratify": t.Stratify, "min_cell": k, "columns": header, "rows": rows, "notes": t.Notes}); err != nil {
					return err
				}
			} else {
				tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, strings.Join(header, "\t"))
				for _, r := range rows {
					if c := []rune(r[0]); len(c) > maxLabelWidth { // long diagnosis titles
						r[0] = string(c[:maxLabelWidth-1]) + "…"
					}
					fmt.Fprintln(tw, strings.Join(r, "\t"))
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				for _, n := range t.Notes {
					fmt.Fprintln(f.Out, "Note:", n)
				}
			}
			if xlsx != "" {
				sum, err := ws.Cohort().ExportTable1(ctx, xlsx, src, stmt, t)
				if err != nil {
					return err
				}
				fmt.Fprintf(f.Err, "Wrote %s (sheet %s)\n", sum.Path, sum.Sheets[0].Name)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "data source name or SQLite file (default with --cohort: the definition's)")
	cmd.Flags().StringVar(&sql, "sql", "", "the cohort's SQL statement")
	cmd.Flags().StringVar(&sqlFile, "sql-file", "", "file holding the cohort's SQL statement")
	cmd.Flags().StringVar(&saved, "cohort", "", "a saved cohort definition's ID instead of --sql")
	cmd.Flags().StringVar(&by, "by", "", "stratify by sex, cohort (cohort vs the rest) or a column of the result")
	cmd.Flags().StringVar(&labs, "labs", "", "comma-separated lab test labels (default "+strings.Join(cohort.DefaultTable1Labs, ", ")+")")
	cmd.Flags().IntVar(&topDx, "top-diagnoses", 10, "how many of the most frequent diagnoses to list (negative: none)")
	cmd.Flags().IntVar(&topRx, "top-medications", 10, "how many of the most frequent medications to list (negative: none)")
	cmd.Flags().StringVar(&xlsx, "xlsx", "", "also write the table to this Excel workbook")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the table as JSON")
	return cmd
}

// writeCohortJSON prints v as indented JSON.
func writeCohortJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

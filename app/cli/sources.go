package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/datasets/postgres"
	"github.com/clinsight/clinsight/disclosure"
)

func newSourcesCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "sources",
		Short: "List, add, test and remove data sources",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return listSources(f, false)
		},
	}
	cmd.AddCommand(newSourcesAddCmd(f), newSourcesTestCmd(f), newSourcesRemoveCmd(f), newSourcesSetCmd(f))
	return cmd
}

func newSourcesAddCmd(f *Factory) *cobra.Command {
	var (
		dsn, passwordEnv string
		schemas          []string
	)
	cmd := &cobra.Command{
		Use:   "add NAME --postgres DSN [--schemas a,b] [--password-env VAR]",
		Short: "Register a database on a PostgreSQL server as a read-only data source",
		Long: `Registers a PostgreSQL database, read in place and read-only. The DSN names the
server, database and user ("postgres://reader@db.example.org:5432/mimiciv?sslmode=verify-full"
or "host=... dbname=... user=..."); it must not hold a password, which comes from
the environment variable named by --password-env, else PGPASSWORD, else the
password file (PGPASSFILE or ~/.pgpass), as for psql. Run 'clinsight sources test NAME'
to check the connection and what the role could write.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if dsn == "" {
				return fmt.Errorf("say where the database is: --postgres DSN")
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			var clean []string
			for _, s := range schemas {
				if s = strings.TrimSpace(s); s != "" {
					clean = append(clean, s)
				}
			}
			src, err := ws.AddPostgres(args[0], postgres.Source{DSN: dsn, Schemas: clean, PasswordEnv: passwordEnv})
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "added data source %q: %s\n", src.Name, src.Description)
			return nil
		},
	}
	cmd.Flags().StringVar(&dsn, "postgres", "", "PostgreSQL connection address, without a password")
	cmd.Flags().StringSliceVar(&schemas, "schemas", nil, "schemas to read, in search_path order (default: the role's search_path)")
	cmd.Flags().StringVar(&passwordEnv, "password-env", "", "environment variable holding the password (default PGPASSWORD, then the password file)")
	return cmd
}

func newSourcesTestCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "test NAME",
		Short: "Connect to a PostgreSQL data source and report the server, the role and what it could write",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			src, ok := ws.Source(args[0])
			if !ok {
				return fmt.Errorf("no data source named %q", args[0])
			}
			rep, err := ws.TestSource(cmd.Context(), src)
			if err != nil {
				return err
			}
			writeConnectionReport(f, rep)
			return nil
		},
	}
}

// writeConnectionReport prints a connection test's report.
func writeConnectionReport(f *Factory, rep postgres.ConnectionReport) {
	fmt.Fprintf(f.Out, "server:   PostgreSQL %s\n", rep.ServerVersion)
	fmt.Fprintf(f.Out, "user:     %s\n", rep.User)
	fmt.Fprintf(f.Out, "database: %s\n", rep.Database)
	fmt.Fprintf(f.Out, "schemas:  %s (%d readable tables and views)\n", strings.Join(rep.Schemas, ", "), rep.Tables)
	if !rep.CanWrite() {
		fmt.Fprintln(f.Out, "writes:   none (a read-only role)")
	} else {
		fmt.Fprintln(f.Out, "writes:")
		for _, w := range rep.Writes {
			fmt.Fprintf(f.Out, "  - %s\n", w)
		}
	}
	if rep.Warning != "" {
		fmt.Fprintf(f.Out, "\nwarning: %s\n", rep.Warning)
	}
	if rep.GrantSQL != "" {
		fmt.Fprintf(f.Out, "\nStatements for a read-only role, for your database administrator:\n\n%s\n", strings.TrimRight(rep.GrantSQL, "\n"))
	}
}

func newSourcesRemoveCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "remove NAME",
		Short: "Unregister a data source (its database is not touched)",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			if err := ws.Data().Remove(args[0]); err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "removed data source %q\n", args[0])
			return nil
		},
	}
}

func newSourcesSetCmd(f *Factory) *cobra.Command {
	var (
		access  string
		minCell int
	)
	cmd := &cobra.Command{
		Use:   "set NAME [--access row-level|aggregate-only] [--min-cell K]",
		Short: "Show or set a data source's disclosure policy (access level, minimum cell size)",
		Long: `Sets what the data agreement of a source lets users see. row-level (the default,
also for imported sources and the demo): records and exact values are shown, on
screen and in --json. aggregate-only: only aggregates are shown, charted,
exported or sent to a model, with every count (or statistic of fewer
individuals) under the minimum cell size shown as <K (default 11), and no
patient-level rows. Whatever the level, exports of aggregates are suppressed
unless --exact is given (row-level sources only). Without flags, prints the
current policy. The change is recorded in the audit trail.`,
		Example: `  clinsight sources set mimic-iv --access aggregate-only
  clinsight sources set mimic-iv --min-cell 20`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			src, ok := ws.Source(args[0])
			if !ok {
				return fmt.Errorf("no data source named %q (see 'clinsight sources')", args[0])
			}
			pol := ws.Data().Policy(src)
			if cmd.Flags().Changed("access") || cmd.Flags().Changed("min-cell") {
				if cmd.Flags().Changed("access") {
					a, err := disclosure.ParseAccess(access)
					if err != nil {
						return fmt.Errorf("%w (--access)", err)
					}
					pol.Access = a
				}
				if cmd.Flags().Changed("min-cell") {
					pol.MinCell = minCell
				}
				if err := pol.Validate(); err != nil {
					return fmt.Errorf("%w (--min-cell)", err)
				}
				if err := ws.Data().SetPolicy(src.Name, pol); err != nil {
					return err
				}
			}
			fmt.Fprintf(f.Out, "data source %q: %s\n", src.Name, pol)
			return nil
		},
	}
	cmd.Flags().StringVar(&access, "access", "", "row-level or aggregate-only")
	cmd.Flags().IntVar(&minCell, "min-cell", disclosure.DefaultMinCell, "minimum cell size k: counts under k are shown as <k")
	return cmd
}

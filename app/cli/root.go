// Package cli is Clinsight's command-line front end: cobra commands built
// on a Factory that supplies the workspace, the I/O streams and the GUI
// launcher, so each command runs in-process in tests. Like the GUI, it holds
// no business logic: it parses arguments, calls the app services and prints.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
)

// Factory supplies what commands need. Tests build one with buffers.
type Factory struct {
	// In, Out and Err are the command's standard streams.
	In       io.Reader
	Out, Err io.Writer
	// Version is the application version printed by "version" and recorded
	// in exports.
	Version string
	// RunGUI opens the desktop app on the workspace, showing the named
	// screen first ("" for the default); it is called when no subcommand
	// is given. Nil means this build has no GUI.
	RunGUI func(ctx context.Context, ws *app.Workspace, screen string) error

	workspaceDir string
	screen       string
	ws           *app.Workspace
}

// Workspace opens the workspace chosen by --workspace, $CLINSIGHT_WORKSPACE
// or the default location, once per command run, and reports on Err any
// warnings found while opening it and, as they come, while it is in use.
func (f *Factory) Workspace() (*app.Workspace, error) {
	if f.ws != nil {
		return f.ws, nil
	}
	dir, err := app.ResolveDir(f.workspaceDir)
	if err != nil {
		return nil, err
	}
	ws, err := app.Open(dir)
	if err != nil {
		return nil, err
	}
	for _, w := range ws.Warnings() {
		fmt.Fprintln(f.Err, "warning:", w)
	}
	ws.OnWarning(func(w string) { fmt.Fprintln(f.Err, "warning:", w) }) // found while in use
	ws.SetVersion(f.Version)
	f.ws = ws
	return ws, nil
}

// close releases the workspace if a command opened it.
func (f *Factory) close() {
	if f.ws != nil {
		f.ws.Close()
		f.ws = nil
	}
}

// NewRootCmd builds the clinsight command tree.
func NewRootCmd(f *Factory) *cobra.Command {
	root := &cobra.Command{
		Use:   "clinsight",
		Short: "Offline research assistant for clinical data",
		Long: `Clinsight runs entirely on this computer: SQLite copies of the data, a local
Ollama model, Excel export. Without a subcommand it opens the desktop app.`,
		Args:          cobra.NoArgs,
		SilenceUsage:  true,
		SilenceErrors: true,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if f.RunGUI == nil {
				return errors.New("this build has no desktop app; use a subcommand (see 'clinsight --help')")
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			return f.RunGUI(cmd.Context(), ws, f.screen)
		},
	}
	root.SetIn(f.In)
	root.SetOut(f.Out)
	root.SetErr(f.Err)
	root.PersistentFlags().StringVar(&f.workspaceDir, "workspace", "", "workspace directory (default $"+app.EnvWorkspace+" or the user config dir)")
	root.Flags().StringVar(&f.screen, "screen", "", "screen the desktop app opens on (data, settings, ...)")
	root.AddCommand(
		newDemoCmd(f),
		newImportCmd(f),
		newTablesCmd(f),
		newSourcesCmd(f), // data sources, PostgreSQL among them (sources.go)
		newSQLCmd(f),
		newAuditCmd(f), // the audit trail (audit.go)
		newMetaCmd(f),
		newReportsCmd(f), newImpressionCmd(f), newEvalImpressionCmd(f),
		newModelsCmd(f),
		newStatusCmd(f),
		newVersionCmd(f),
		newTrialsCmd(f),
		newAskCmd(f),
		newConceptsCmd(f), // OMOP vocabulary search (concepts.go)
		newCohortCmd(f),   // saved cohort definitions and Table 1 (cohort_defs.go)
	)
	attachCohortEval(f, root) // "eval retrieval" and "eval ehrsql", beside the other pipelines' evaluations
	attachEvidence(f, root)   // "evidence import|search" and "eval screening"
	attachTrialsEval(f, root) // "eval trec": trial ranking
	attachActiveEval(f, root) // "eval active": active-learning screening simulated
	return root
}

// evalCommand returns root's "eval" command, which groups the pipelines'
// evaluations on public benchmark data, creating it on first use.
func evalCommand(root *cobra.Command) *cobra.Command {
	for _, c := range root.Commands() {
		if c.Name() == "eval" {
			return c
		}
	}
	cmd := &cobra.Command{Use: "eval", Short: "Score the pipelines on public benchmark data"}
	root.AddCommand(cmd)
	return cmd
}

// Run executes the command line args and returns the process exit code;
// errors are printed as one line on Err. Everything printed on Out and Err
// during the run goes through a termWriter, so text from data, files and
// the model cannot drive the terminal (see termsafe.go).
func Run(ctx context.Context, f *Factory, args []string) int {
	out, errw := newTermWriter(f.Out), newTermWriter(f.Err)
	f.Out, f.Err = out, errw
	defer func() {
		out.Flush()
		errw.Flush()
		f.Out, f.Err = underlying(out), underlying(errw)
	}()
	defer f.close()
	root := NewRootCmd(f)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		var reported *ReportedError
		if errors.As(err, &reported) {
			return reported.Code
		}
		fmt.Fprintln(f.Err, "clinsight:", oneLine(err)+cliHint(err))
		return 1
	}
	return 0
}

// ReportedError is a failure already reported to the user (by the desktop
// app's process, which the command-line build hands over to): Run prints
// nothing more and exits with Code.
type ReportedError struct{ Code int }

func (e *ReportedError) Error() string { return fmt.Sprintf("exit status %d", e.Code) }

// oneLine flattens an error message onto a single line.
func oneLine(err error) string {
	msg := []rune(err.Error())
	for i, r := range msg {
		if r == '\n' || r == '\r' {
			msg[i] = ' '
		}
	}
	return string(msg)
}

func newVersionCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := fmt.Fprintf(f.Out, "clinsight %s (%s %s/%s)\n", f.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return err
		},
	}
}

// isTerminal reports whether w is a character device (an interactive
// terminal), where progress can be redrawn in place.
func isTerminal(w io.Writer) bool {
	file, ok := underlying(w).(*os.File)
	if !ok {
		return false
	}
	fi, err := file.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

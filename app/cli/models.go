package cli

import (
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/localllm"
)

func newModelsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models",
		Short: "List, pull and import local models (Ollama)",
	}
	cmd.AddCommand(
		newModelsDoctorCmd(f), // models_doctor.go
		newModelsHostCmd(f),
		&cobra.Command{
			Use:   "list",
			Short: "List the models installed on the Ollama server",
			Args:  cobra.NoArgs,
			RunE: func(cmd *cobra.Command, _ []string) error {
				client, err := f.modelClient()
				if err != nil {
					return err
				}
				models, err := client.Models(cmd.Context())
				if err != nil {
					return err
				}
				if len(models) == 0 {
					fmt.Fprintln(f.Out, "no models installed: run 'clinsight models pull NAME' or 'clinsight models import NAME FILE.gguf'")
					return nil
				}
				tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "name\tsize\tfamily\tparameters\tquantization")
				for _, m := range models {
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", m.Name, humanBytes(m.Size), m.Family, m.ParameterSize, m.Quantization)
				}
				return tw.Flush()
			},
		},
		&cobra.Command{
			Use:   "pull NAME",
			Short: "Download a model through the Ollama server (needs its registry to be reachable)",
			Args:  cobra.ExactArgs(1),
			RunE: func(cmd *cobra.Command, args []string) error {
				client, err := f.modelClient()
				if err != nil {
					return err
				}
				pp := newProgressPrinter(f.Err)
				err = client.Pull(cmd.Context(), args[0], modelProgress(pp))
				pp.Done()
				if err != nil {
					return err
				}
				fmt.Fprintf(f.Out, "pulled %s\n", args[0])
				return nil
			},
		},
		&cobra.Command{
			Use:   "import NAME FILE.gguf",
			Short: "Install a local GGUF file (for example copied from a USB stick) as model NAME",
			Args:  cobra.ExactArgs(2),
			RunE: func(cmd *cobra.Command, args []string) error {
				client, err := f.modelClient()
				if err != nil {
					return err
				}
				pp := newProgressPrinter(f.Err)
				err = client.Import(cmd.Context(), args[0], args[1], modelProgress(pp))
				pp.Done()
				if err != nil {
					return err
				}
				fmt.Fprintf(f.Out, "imported %s as %s\n", args[1], args[0])
				return nil
			},
		},
	)
	return cmd
}

// modelClient opens the workspace and returns a client for its Ollama host.
func (f *Factory) modelClient() (*localllm.Client, error) {
	ws, err := f.Workspace()
	if err != nil {
		return nil, err
	}
	return ws.ModelClient()
}

// modelProgress adapts model transfer progress to the progress printer.
func modelProgress(pp *progressPrinter) func(localllm.Progress) {
	return func(p localllm.Progress) {
		pp.Report(app.TransferProgress(p))
	}
}

func newStatusCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "status",
		Short: "Show whether Ollama is reachable, the configured models and the data sources",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			if _, err := ws.ModelHost(); err != nil { // an invalid OLLAMA_HOST or saved host
				return err
			}
			st := ws.CheckModels(cmd.Context())
			hs := ws.HostState()
			fmt.Fprintf(f.Out, "workspace: %s\n", st.Workspace)
			fmt.Fprintf(f.Out, "ollama host: %s\n", st.Host)
			if st.Host.Overrides() {
				fmt.Fprintf(f.Out, "             (the workspace settings name %s, used when %s is not set)\n", st.Host.Saved, app.EnvOllamaHost)
			}
			fmt.Fprintf(f.Out, "connection:  %s; result rows %s\n", hs.TLS, hs.RowsText())
			if st.Health.Reachable {
				fmt.Fprintf(f.Out, "ollama:    reachable at %s (version %s)\n", st.Health.Host, st.Health.Version)
			} else {
				fmt.Fprintf(f.Out, "ollama:    not reachable: %s\n", oneLine(st.HealthError))
			}
			for _, t := range st.Tasks {
				state := "installed"
				if !t.Installed {
					state = "not installed"
					if !st.Health.Reachable {
						state = "unknown (server not reachable)"
					}
				}
				fmt.Fprintf(f.Out, "model for %-15s %s (%s)\n", t.Task+":", t.Model, state)
			}
			fmt.Fprintln(f.Out, st.EmbeddingNote())
			if len(st.Sources) == 0 {
				fmt.Fprintln(f.Out, "data sources: none (run 'clinsight demo init' or an import)")
			}
			for _, s := range st.Sources {
				fmt.Fprintf(f.Out, "data source: %s (%s) %s\n", s.Name, s.Kind, ws.SourcePath(s))
			}
			return nil
		},
	}
}

// newModelsHostCmd shows the model host policy and, with flags, changes it.
func newModelsHostCmd(f *Factory) *cobra.Command {
	var (
		allowHTTP, sendRows, noToken bool
		tokenFile, tokenEnv, caFile  string
	)
	cmd := &cobra.Command{
		Use:   "host",
		Short: "Show or set how the model server is reached: https, plain http, access token, site CA, result rows",
		Long: `Show the model server in use, how it is reached and what may be sent to it;
with flags, change it (saved in the workspace settings, recorded in the audit trail).

A server on this computer (localhost, 127.0.0.0/8, ::1) is trusted. Any other
server must use https, unless plain http is allowed for it with --allow-http
(only on a network path you trust: what is sent crosses it unencrypted).
A server behind a site's reverse proxy may need an access token, read from a
file (--token-file, not readable by other users) or an environment variable
(--token-env NAME): the settings hold the file's path or the variable's name,
never the token. --ca-file names the site's CA certificate (PEM) when the
server's certificate is not from a public authority; only that CA is then
trusted for the server. --send-rows decides whether result rows may go to the
model (by default only to a server on this computer).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			fl := cmd.Flags()
			if fl.NFlag() > 0 {
				ch := ws.HostState().Choices
				if fl.Changed("allow-http") {
					ch.AllowPlainHTTP = allowHTTP
				}
				if fl.Changed("token-file") {
					ch.TokenFile, ch.TokenEnv = tokenFile, ""
				}
				if fl.Changed("token-env") {
					ch.TokenEnv, ch.TokenFile = tokenEnv, ""
				}
				if noToken {
					ch.TokenFile, ch.TokenEnv = "", ""
				}
				if fl.Changed("ca-file") {
					ch.CAFile = caFile
				}
				if fl.Changed("send-rows") {
					ch.SendRows = sendRows
				}
				if err := ws.SetHostChoices(ch); err != nil {
					return fmt.Errorf("%w (the settings are unchanged)", err)
				}
			}
			st := ws.HostState()
			fmt.Fprintf(f.Out, "model host:   %s\n", st.Host)
			conn := string(st.TLS)
			if st.TLS == app.TLSCustomCA {
				conn += " (" + st.Choices.CAFile + ")"
			}
			fmt.Fprintf(f.Out, "connection:   %s\n", conn)
			fmt.Fprintf(f.Out, "access token: %s\n", st.TokenText())
			fmt.Fprintf(f.Out, "result rows:  %s\n", st.RowsText())
			if st.Warning != "" {
				fmt.Fprintln(f.Err, "warning:", st.Warning)
			}
			switch {
			case st.Problem != nil:
				fmt.Fprintln(f.Err, "problem:", st.Problem)
			case st.TLS == app.TLSRefused:
				if _, err := ws.ModelClient(); err != nil {
					fmt.Fprintf(f.Err, "refused: %v\n  (to allow it: clinsight models host --allow-http)\n", err)
				}
			}
			return nil
		},
	}
	fl := cmd.Flags()
	fl.BoolVar(&allowHTTP, "allow-http", false, "allow plain http to the host in use although it is not on this computer (--allow-http=false withdraws it)")
	fl.StringVar(&tokenFile, "token-file", "", "full path of a file holding the access token (not readable by other users)")
	fl.StringVar(&tokenEnv, "token-env", "", "NAME of an environment variable holding the access token (e.g. CLINSIGHT_MODEL_TOKEN)")
	fl.BoolVar(&noToken, "no-token", false, "send no access token")
	fl.StringVar(&caFile, "ca-file", "", "full path of the site's CA certificate bundle (PEM); empty: the system's authorities")
	fl.BoolVar(&sendRows, "send-rows", false, "let result rows go to the model (--send-rows=false: only aggregates)")
	cmd.MarkFlagsMutuallyExclusive("token-file", "token-env", "no-token")
	return cmd
}

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
			client, err := ws.ModelClient()
			if err != nil {
				return err
			}
			st := ws.Status(cmd.Context(), client)
			fmt.Fprintf(f.Out, "workspace: %s\n", st.Workspace)
			fmt.Fprintf(f.Out, "ollama host: %s\n", st.Host)
			if st.Host.Overrides() {
				fmt.Fprintf(f.Out, "             (the workspace settings name %s, used when %s is not set)\n", st.Host.Saved, app.EnvOllamaHost)
			}
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

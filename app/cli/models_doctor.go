package cli

import (
	"encoding/json"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
)

func newModelsDoctorCmd(f *Factory) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor [--json]",
		Short: "Check the model server and each task's model, and print what is missing with the command that fixes it",
		Long: `Checks what the model features need: the model server address (and its security
policy), that the server answers (and its version), and for SQL generation, chat
and embeddings that the configured model is installed, can do the task, has a
long enough context and (embeddings) a known dimension. Exits with status 1 when
anything is missing, after printing how to fix it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			rep := ws.Doctor(cmd.Context())
			if asJSON {
				if err := json.NewEncoder(f.Out).Encode(rep); err != nil {
					return err
				}
			} else {
				writeDoctorReport(f, rep)
			}
			if n := len(rep.Missing()); n > 0 {
				return fmt.Errorf("%d of %d model checks need attention (see above)", n, len(rep.Checks))
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	return cmd
}

// writeDoctorReport prints each check and, for what is missing, the
// commands that fix it.
func writeDoctorReport(f *Factory, rep app.DoctorReport) {
	for _, c := range rep.Checks {
		mark := "ok     "
		if !c.OK {
			mark = "MISSING"
		}
		fmt.Fprintf(f.Out, "%s  %s: %s\n", mark, c.Item, escapeControls(c.Detail))
		if c.OK {
			continue
		}
		if c.Fix != "" {
			fmt.Fprintf(f.Out, "         fix: %s\n", c.Fix)
		}
		switch {
		case c.Pull != "":
			fmt.Fprintf(f.Out, "           online:  clinsight models pull %s\n", c.Pull)
			fmt.Fprintf(f.Out, "           offline: copy ~/.ollama/models (blobs and manifests) from a machine that ran 'ollama pull %s',\n", c.Pull)
			fmt.Fprintf(f.Out, "                    or: clinsight models import %s FILE.gguf\n", c.Pull)
		case c.Item == "model server":
			fmt.Fprintln(f.Out, "           make ollama    (in the Clinsight source folder: builds Ollama if needed and runs it on this computer)")
			fmt.Fprintln(f.Out, "           or: ollama serve, or OLLAMA_HOST=https://your-site-server clinsight ...")
		}
	}
	if rep.OK() {
		fmt.Fprintln(f.Out, "everything the model features need is in place")
	}
}

package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets/demo"
)

func newDemoCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Manage the synthetic demo data",
	}
	opts := demo.DefaultOptions()
	var force, ifMissing bool
	initCmd := &cobra.Command{
		Use:   "init",
		Short: "Create the synthetic demo database in the workspace and register it as the 'demo' source",
		Long: `Creates a deterministic synthetic dataset (MIMIC-IV-shaped hospital tables and an
imaging-metadata table shaped like the Imaging Data Commons dicom_all). It never
contains real patient data.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			if ifMissing && ws.HasDemo() {
				fmt.Fprintf(f.Err, "demo data already present: %s\n", ws.DemoPath())
				return nil
			}
			pp := newProgressPrinter(f.Err)
			opts.Progress = pp.Report
			sum, err := ws.InitDemo(cmd.Context(), opts, force)
			pp.Done()
			for _, n := range sum.Notices {
				fmt.Fprintln(f.Err, n)
			}
			if errors.Is(err, app.ErrDemoExists) {
				return fmt.Errorf("%w: %s", err, ws.DemoPath())
			}
			if err != nil {
				return err
			}
			if sum.Reused {
				return nil
			}
			fmt.Fprintf(f.Out, "demo data created in %s (%s)\n", ws.DemoPath(), sum.Elapsed.Round(1e6))
			for _, t := range sum.Tables {
				fmt.Fprintf(f.Out, "  %-18s %9d rows\n", t.Name, t.Rows)
			}
			return nil
		},
	}
	initCmd.Flags().BoolVar(&force, "force", false, "recreate the demo data if it exists")
	initCmd.Flags().BoolVar(&ifMissing, "if-missing", false, "do nothing (and succeed) when the demo data exists")
	initCmd.Flags().Uint64Var(&opts.Seed, "seed", opts.Seed, "random seed (the same seed gives the same data)")
	initCmd.Flags().IntVar(&opts.Patients, "patients", opts.Patients, "number of synthetic patients")
	cmd.AddCommand(initCmd)
	return cmd
}

package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
)

func newAuditCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "audit",
		Short: "Check, list and export the workspace's audit trail",
		Long: `Every question asked, SQL run, model call, import, export and settings change is
recorded in the workspace's audit trail (audit.jsonl), one hash-chained record
per line: each record holds the SHA-256 of the one before, so an edited, deleted
or reordered record is detected by 'clinsight audit verify'.`,
	}
	cmd.AddCommand(newAuditVerifyCmd(f), newAuditShowCmd(f), newAuditExportCmd(f), newAuditResealCmd(f))
	return cmd
}

func newAuditVerifyCmd(f *Factory) *cobra.Command {
	return &cobra.Command{
		Use:   "verify",
		Short: "Check the audit trail's hash chain; fails naming the first broken record",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			rep, err := ws.Audit().Verify(cmd.Context())
			if err != nil {
				return err
			}
			if !rep.OK() {
				return fmt.Errorf("the audit trail %s is broken at %s (%d records read before it)", ws.Audit().Path(), rep.Problem, rep.Records)
			}
			fmt.Fprintf(f.Out, "audit trail intact: %d records, hash chain verified (%s)\n", rep.Records, ws.Audit().Path())
			return nil
		},
	}
}

func newAuditShowCmd(f *Factory) *cobra.Command {
	var (
		since  string
		max    int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "show [--since 24h|2026-11-01] [--max N] [--json]",
		Short: "List audit records, oldest first",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			from, err := parseSince(since, time.Now())
			if err != nil {
				return err
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			recs, err := ws.Audit().Records(cmd.Context(), from, max)
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(f.Out)
				for _, r := range recs {
					if err := enc.Encode(r); err != nil {
						return err
					}
				}
				return nil
			}
			tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "seq\ttime (UTC)\tuser\taction\tsource\tdetails")
			for _, r := range recs {
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\n", r.Seq, r.Time.Format(time.DateTime), escapeControls(r.User), r.Action,
					escapeControls(r.Source), escapeControls(strings.ReplaceAll(app.DetailsText(r.Details), "\n", " ")))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&since, "since", "", "only records from this time on: a duration back from now (24h, 168h) or a date (2026-11-01)")
	cmd.Flags().IntVar(&max, "max", 0, "at most this many records, the newest (default all)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the records as written, one JSON object per line")
	return cmd
}

// parseSince reads --since: a duration back from now or a date (UTC).
func parseSince(s string, now time.Time) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	if d, err := time.ParseDuration(s); err == nil {
		if d < 0 {
			return time.Time{}, fmt.Errorf("--since %q: give a positive duration back from now", s)
		}
		return now.Add(-d), nil
	}
	for _, layout := range []string{time.RFC3339, time.DateTime, time.DateOnly} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("--since %q: give a duration (24h) or a date (2026-11-01 or 2026-11-01T08:00:00Z)", s)
}

func newAuditExportCmd(f *Factory) *cobra.Command {
	var xlsx string
	cmd := &cobra.Command{
		Use:   "export --xlsx FILE",
		Short: "Write the audit trail and the result of its check to an Excel workbook for a data steward",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if xlsx == "" {
				return errors.New("give the workbook to write with --xlsx FILE")
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			sum, err := ws.Audit().Export(cmd.Context(), xlsx)
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Err, "wrote %d audit records to %s\n", sum.Rows, xlsx)
			return nil
		},
	}
	cmd.Flags().StringVar(&xlsx, "xlsx", "", "the workbook to write")
	return cmd
}

func newAuditResealCmd(f *Factory) *cobra.Command {
	var reason string
	cmd := &cobra.Command{
		Use:   `reseal --reason "who checked what"`,
		Short: "After a broken trail was examined: keep it aside and start a new chain that names it",
		Long: `When 'audit verify' fails (a record edited or deleted, or Clinsight killed
between writing a record and its head), Clinsight records nothing more, and so
exports nothing more, until the trail is resealed. Resealing keeps the broken
trail and head beside the new one unchanged (audit.jsonl.broken-TIMESTAMP) and
starts a new chain whose first record names them, their SHA-256, the problem
found and the reason given. An intact trail is not resealed.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if strings.TrimSpace(reason) == "" {
				return errors.New(`give the reason with --reason "…" (who examined the broken trail, and what they found)`)
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			rec, err := ws.Audit().Reseal(cmd.Context(), reason)
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "audit trail resealed: the broken trail is kept as %v; the new chain starts with record %d\n", rec.Details["previous_trail"], rec.Seq)
			return nil
		},
	}
	cmd.Flags().StringVar(&reason, "reason", "", "who examined the broken trail, and what they found (recorded)")
	return cmd
}

package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/prescreen"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/internal/durfmt"
)

// newCohortPrescreenCmd is "clinsight cohort prescreen": the trial
// pre-screening of a saved cohort (issue 19 item 6).
func newCohortPrescreenCmd(f *Factory) *cobra.Command {
	var (
		saved, trialsDB, xlsx string
		top, maxPatients      int
		noLLM, asJSON, shift  bool
		patientLevel, exact   bool
	)
	cmd := &cobra.Command{
		Use:   "prescreen --cohort SAVED --trials SOURCE [--top K] [--xlsx OUT --patient-level [--exact]] [--json]",
		Short: "Pre-screen a saved cohort's patients for the trials of a trials source (patient × trial matrix)",
		Long: `Reads each patient's age, sex, diagnoses, medications and latest lab values from the cohort's
source, ranks the trials of the trials source for each patient, and checks the criteria of each
patient's top K trials: lab-value, age and sex criteria against the structured values (the value
and its date cited; a missing value is unknown, never eligible), the others by the model when one
is installed (--no-llm: not assessed). Prints the trials by how many patients might qualify.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			tsrc, err := ws.Resolve(trialsDB)
			if err != nil {
				return err
			}
			pp := newProgressPrinter(f.Err)
			res, err := ws.Prescreen().Prescreen(cmd.Context(), app.PrescreenRequest{Cohort: saved, Trials: tsrc, Top: top,
				NoModel: noLLM, MaxPatients: maxPatients, Progress: pp.Report})
			pp.Done()
			if err != nil {
				if strings.Contains(err.Error(), "no saved cohort") {
					return fmt.Errorf("%w (list them with: clinsight cohort list)", err)
				}
				return err
			}
			for _, n := range res.Notices {
				fmt.Fprintln(f.Err, "note:", n)
			}
			if xlsx != "" {
				sum, err := ws.Prescreen().Export(cmd.Context(), xlsx, res, app.PrescreenExportOptions{ShiftDates: shift, Version: f.Version,
					PatientLevel: patientLevel, Exact: exact})
				var pl *disclosure.PatientLevelError
				switch {
				case errors.As(err, &pl):
					return fmt.Errorf("the workbook has a row per patient (pseudonyms, ages, dates of the cited values): add --patient-level to confirm its export (--shift-dates also shifts its dates by patient)")
				case errors.Is(err, app.ErrExactAggregateOnly):
					return fmt.Errorf("%w (leave out --exact)", err)
				case err != nil:
					return err
				}
				fmt.Fprintf(f.Err, "wrote the pre-screening of %d patients and %d trials to %s (patient ids pseudonymised)\n", len(res.Patients), len(res.Trials), sum.Path)
			}
			if asJSON {
				return json.NewEncoder(f.Out).Encode(prescreenJSON(res))
			}
			printPrescreen(f, res)
			return nil
		},
	}
	cmd.Flags().StringVar(&saved, "cohort", "", "saved cohort definition (id or name; see clinsight cohort list)")
	cmd.Flags().StringVar(&trialsDB, "trials", "", "data source holding the trials (name or file)")
	cmd.Flags().IntVar(&top, "top", prescreen.DefaultTop, fmt.Sprintf("best-ranked trials per patient to check (at most %d)", prescreen.MaxTop))
	cmd.Flags().IntVar(&maxPatients, "max-patients", prescreen.DefaultMaxPatients, fmt.Sprintf("pre-screen at most this many patients, the first by id (at most %d)", prescreen.MaxPatients))
	cmd.Flags().BoolVar(&noLLM, "no-llm", false, "no model: lexical ranking, and only the structured checks")
	cmd.Flags().StringVar(&xlsx, "xlsx", "", "also write the matrix, the per-criterion detail and the trials to this workbook (patient ids pseudonymised)")
	cmd.Flags().BoolVar(&shift, "shift-dates", false, "in the workbook, shift each patient's dates by a number of days of their own")
	cmd.Flags().BoolVar(&patientLevel, "patient-level", false, "confirm the export of the workbook's rows per patient (Matrix, Criteria; patient ids pseudonymised) from a row-level source")
	cmd.Flags().BoolVar(&exact, "exact", false, "in the workbook, write the counts of patients exactly, without small-cell suppression (row-level sources only; recorded in the audit trail)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	_ = cmd.MarkFlagRequired("cohort")
	_ = cmd.MarkFlagRequired("trials")
	return cmd
}

// prescreenJSON is what --json prints: the matrix, or for an
// aggregate-only source only the trials and their (suppressed) counts.
func prescreenJSON(res *app.PrescreenResult) any {
	type trial struct {
		prescreen.TrialInfo
		Ranked      string `json:"patients_ranked"`
		Eligible    string `json:"eligible"`
		Unknown     string `json:"unknown"`
		NotEligible string `json:"not_eligible"`
		Might       string `json:"might_qualify"`
	}
	out := struct {
		Cohort        string            `json:"cohort,omitempty"`
		Source        string            `json:"source"`
		Trials        string            `json:"trials_source"`
		Total         string            `json:"cohort_patients"`
		AggregateOnly bool              `json:"aggregate_only,omitempty"`
		Ranked        []trial           `json:"trials"`
		Matrix        *prescreen.Matrix `json:"matrix,omitempty"`
	}{Cohort: res.Cohort, Source: res.Source.Name, Trials: res.TrialsSource.Name, Total: res.CountText(res.Total), AggregateOnly: res.AggregateOnly}
	for _, j := range res.TrialOrder() {
		c := res.Shown(j)
		out.Ranked = append(out.Ranked, trial{TrialInfo: res.Trials[j], Ranked: c.Ranked,
			Eligible: c.Eligible, Unknown: c.Unknown, NotEligible: c.NotEligible, Might: c.Might})
	}
	if !res.AggregateOnly {
		out.Matrix = res.Matrix
	}
	return out
}

// printPrescreen prints the trials by how many patients might qualify,
// then (row-level sources) each patient's verdicts.
func printPrescreen(f *Factory, res *app.PrescreenResult) {
	who := res.Cohort
	if who == "" {
		who = "the cohort"
	}
	fmt.Fprintf(f.Out, "%s: %s patients pre-screened for %d trials (top %d per patient) in %s\n\n", who,
		res.CountText(res.Screened), len(res.Trials), res.Top, durfmt.Human(res.Elapsed))
	tw := tabwriter.NewWriter(f.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "trial\tmight qualify\teligible\tunknown\tnot eligible\ttitle")
	for _, j := range res.TrialOrder() {
		c := res.Shown(j)
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", res.Trials[j].ID, c.Might, c.Eligible,
			c.Unknown, c.NotEligible, truncateText(res.Trials[j].Title, 60))
	}
	tw.Flush()
	if res.AggregateOnly {
		fmt.Fprintln(f.Out, "\nThe data source shows aggregates only: no patient is listed.")
		return
	}
	fmt.Fprintln(f.Out)
	tw = tabwriter.NewWriter(f.Out, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "patient\tage\tsex\tmight qualify\ttrials (verdict, rank)")
	for _, i := range res.PatientOrder() {
		p := res.Patients[i]
		var cells []string
		for _, j := range res.TrialOrder() {
			if c := res.Cells[i][j]; c.Ranked {
				cells = append(cells, fmt.Sprintf("%s %s #%d", res.Trials[j].ID, c.Status, c.Rank))
			}
		}
		age := "-"
		if p.HasAge {
			age = fmt.Sprint(p.Age)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", p.ID, age, p.Sex, res.PatientCounts(i).Might(), strings.Join(cells, "; "))
	}
	tw.Flush()
}

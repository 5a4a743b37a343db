package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/cohort"
)

// switchStepsOff counts an answer's attrition again with the criteria of
// off switched off (ask --without-step), through the session and without
// the model, and puts the new table in the answer.
func switchStepsOff(ctx context.Context, p app.CohortSession, ans *cohort.Answer, off []int) error {
	if len(off) == 0 || ans == nil || ans.Status != cohort.StatusAnswered {
		return nil
	}
	if ans.Attrition == nil {
		return errors.New("--without-step: the answer's statement is not a list of criteria (a chain of WITH steps), so it has no steps to switch off")
	}
	a, err := p.Attrition(ctx, ans, off, nil)
	if err != nil {
		return fmt.Errorf("--without-step: %w", err)
	}
	ans.Attrition = a
	return nil
}

// writeAttrition prints the attrition table of a cohort written as a chain
// of criteria: the patients remaining after each step, those it removed
// and the share of the base population.
func writeAttrition(w io.Writer, a *cohort.Attrition) {
	if a == nil || len(a.Steps) == 0 {
		return
	}
	fmt.Fprintln(w, "\nAttrition:")
	if a.Error != "" {
		fmt.Fprintf(w, "  the patients could not be counted: %s\n", a.Error)
	}
	header, rows := a.Cells()
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprint(tw, " ")
	for _, h := range header {
		fmt.Fprintf(tw, " %s\t", h)
	}
	fmt.Fprintln(tw)
	for _, r := range rows {
		fmt.Fprint(tw, " ")
		for _, c := range r {
			fmt.Fprintf(tw, " %s\t", c)
		}
		fmt.Fprintln(tw)
	}
	tw.Flush()
	note := fmt.Sprintf("distinct %s counted after each step; switch a criterion off with --without-step N", a.PatientColumn)
	if hidden := a.HiddenNote(); hidden != "" {
		note += "; " + hidden
	}
	fmt.Fprintf(w, "  (%s)\n", note)
}

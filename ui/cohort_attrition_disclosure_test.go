package ui

import (
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/cohort"
)

// TestAttritionStatusWithAWithheldCount: when the cohort's own count is
// withheld (it would give away a small difference from the count before
// it), the tab's status does not read "— patients remain" and says how
// hidden counts read.
func TestAttritionStatusWithAWithheldCount(t *testing.T) {
	exact := &cohort.Attrition{PatientColumn: "subject_id", Steps: []cohort.AttritionStep{
		{ChainStep: cohort.ChainStep{Number: 0}, On: true, Patients: cohort.Count{N: 60}, Removed: cohort.Count{N: 0}},
		{ChainStep: cohort.ChainStep{Number: 1}, On: true, Patients: cohort.Count{N: 59}, Removed: cohort.Count{N: 1}},
	}}
	a := exact.Under(11)
	got := attritionStatus(a)
	if strings.Contains(got, "patients remain after") || strings.Contains(got, "59") || !strings.Contains(got, "below 11 are shown as <11") || !strings.Contains(got, "as "+cohort.WithheldText) {
		t.Errorf("status %q", got)
	}
	_, rows := a.Cells()
	if rows[1][2] != cohort.WithheldText || rows[1][3] != cohort.WithheldText || rows[1][4] != "" {
		t.Errorf("step 1 reads %q", rows[1])
	}
	if got := attritionStatus(exact); !strings.Contains(got, "59 patients remain after 1 of 1 criteria") {
		t.Errorf("exact status %q", got)
	}
}

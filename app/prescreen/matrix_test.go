package prescreen

import (
	"slices"
	"testing"
)

// The matrix counts only ranked cells, and orders trials and patients by
// those who might qualify, then by those eligible, then by id.
func TestMatrixCountsAndOrder(t *testing.T) {
	e, u, n, off := Cell{Ranked: true, Status: Eligible}, Cell{Ranked: true, Status: Unknown}, Cell{Ranked: true, Status: NotEligible}, Cell{Status: Eligible}
	m := &Matrix{
		Patients: []*Summary{{ID: "p3"}, {ID: "p1"}, {ID: "p2"}},
		Trials:   []TrialInfo{{ID: "NCT3"}, {ID: "NCT2"}, {ID: "NCT1"}, {ID: "NCT0"}},
		Cells: [][]Cell{
			{u, e, n, off}, // p3: might 2, eligible 1
			{e, u, n, n},   // p1: might 2, eligible 1
			{e, e, u, off}, // p2: might 3, eligible 2
		},
	}
	if got, want := m.TrialCounts(0), (TrialCount{Eligible: 2, Unknown: 1}); got != want {
		t.Errorf("TrialCounts(0) = %+v, want %+v", got, want)
	}
	if got, want := m.TrialCounts(3), (TrialCount{NotEligible: 1}); got != want {
		t.Errorf("TrialCounts(3) = %+v, want %+v (an unranked cell does not count)", got, want)
	}
	if got, want := m.PatientCounts(1), (TrialCount{Eligible: 1, Unknown: 1, NotEligible: 2}); got != want {
		t.Errorf("PatientCounts(1) = %+v, want %+v", got, want)
	}
	// Trials: NCT3 and NCT2 might 3 (eligible 2 each: by id NCT2 first), NCT1 might 1, NCT0 none.
	if got, want := m.TrialOrder(), []int{1, 0, 2, 3}; !slices.Equal(got, want) {
		t.Errorf("TrialOrder = %v, want %v", got, want)
	}
	// Patients: p2 (might 3), then p1 and p3 (might 2, eligible 1: by id).
	if got, want := m.PatientOrder(), []int{2, 1, 0}; !slices.Equal(got, want) {
		t.Errorf("PatientOrder = %v, want %v", got, want)
	}
}

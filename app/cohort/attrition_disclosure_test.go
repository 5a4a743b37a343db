package cohort

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// checkNoSmallDifference fails when two shown counts of a (in the order of
// its steps that are on) or a shown number removed differ by 1 to k−1, or
// when a hidden count has a percentage.
func checkNoSmallDifference(t *testing.T, a *Attrition, k int) {
	t.Helper()
	small := func(d int64) bool { return max(d, -d) >= 1 && max(d, -d) < int64(k) }
	var shown []int64
	for i, s := range a.Steps {
		if !s.On {
			continue
		}
		if s.Patients.Hidden() && s.PercentOfBase != nil {
			t.Errorf("step %d: hidden count %s with a percentage %v", i, s.Patients, *s.PercentOfBase)
		}
		if i > 0 && !s.Removed.Hidden() && s.Removed.N >= 0 && small(s.Removed.N) {
			t.Errorf("step %d shows %d removed (under %d)", i, s.Removed.N, k)
		}
		if s.Patients.Hidden() || s.Patients.N < 0 {
			continue
		}
		if small(s.Patients.N) {
			t.Errorf("step %d shows %d patients (under %d)", i, s.Patients.N, k)
		}
		for _, m := range shown {
			if small(s.Patients.N - m) {
				t.Errorf("step %d shows %d patients beside a shown %d: their difference is under %d", i, s.Patients.N, m, k)
			}
		}
		shown = append(shown, s.Patients.N)
	}
}

// TestAttritionHidesASmallDifference: on an aggregate-only source (k 11),
// a criterion written to remove one named patient when (and only when)
// that patient has a diagnosis must not show the counts before and after
// it both exactly (60 and 59 give away the one patient removed, whatever
// the number removed reads): the step's count, number removed and
// percentage are hidden, in the table, its cells, the workbook sheet and
// the JSON. The same table counted exactly (a row-level source) still
// shows 60 and 59.
func TestAttritionHidesASmallDifference(t *testing.T) {
	const k = 11
	f := newFixture(t, Config{MinPersons: k})
	id := f.scalar(t, `SELECT MIN(subject_id) FROM diagnoses_icd`)
	sql := fmt.Sprintf(`WITH
base AS (SELECT DISTINCT subject_id FROM patients),
probe AS (SELECT * FROM base WHERE NOT (subject_id = %v AND subject_id IN (SELECT subject_id FROM diagnoses_icd WHERE icd_code LIKE '%%')))
SELECT COUNT(DISTINCT subject_id) FROM probe`, id)
	ctx := context.Background()
	exact, err := ComputeAttrition(ctx, f.runner, sql, "demo", nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	base := f.scalar(t, `SELECT COUNT(DISTINCT subject_id) FROM patients`)
	if fmt.Sprint(exact.Steps[0].Patients.N) != fmt.Sprint(base) || exact.Steps[1].Patients.N != exact.Steps[0].Patients.N-1 || exact.Steps[0].Patients.N < 2*k {
		t.Fatalf("exact counts %s and %s, want %v and one fewer", exact.Steps[0].Patients, exact.Steps[1].Patients, base)
	}

	a, err := f.p.Attrition(ctx, &Answer{SQL: sql}, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.MinCell != k {
		t.Fatalf("min cell %d, want %d", a.MinCell, k)
	}
	checkNoSmallDifference(t, a, k)
	if s := a.Steps[0]; s.Patients != exact.Steps[0].Patients || s.PercentOfBase == nil || *s.PercentOfBase != 100 {
		t.Errorf("base population %s (%v), want %s shown", s.Patients, s.PercentOfBase, exact.Steps[0].Patients)
	}
	s := a.Steps[1]
	if !s.Patients.Withheld || !s.Removed.Withheld || s.PercentOfBase != nil || s.Patients.N != 0 || s.Removed.N != 0 {
		t.Errorf("step 1: %+v, want its count, number removed and percentage hidden", s)
	}
	_, rows := a.Cells()
	if rows[1][2] != WithheldText || rows[1][3] != WithheldText || rows[1][4] != "" {
		t.Errorf("step 1 reads %q", rows[1])
	}
	var sheet [][]any
	for r, err := range AttritionSheet(a).Rows {
		if err != nil {
			t.Fatal(err)
		}
		sheet = append(sheet, r)
	}
	if got := fmt.Sprintf("%v|%v|%v", sheet[1][3], sheet[1][4], sheet[1][5]); got != WithheldText+"|"+WithheldText+"|<nil>" {
		t.Errorf("workbook step 1 reads %s", got)
	}
	data, err := json.Marshal(a)
	if err != nil {
		t.Fatal(err)
	}
	n := fmt.Sprint(exact.Steps[1].Patients.N)
	if strings.Contains(string(data), `"patients":`+n) || !strings.Contains(string(data), `"patients":"`+WithheldText+`"`) {
		t.Errorf("JSON %s", data)
	}
	var back Attrition
	if err := json.Unmarshal(data, &back); err != nil || back.Steps[1].Patients != s.Patients || back.Steps[1].Removed != s.Removed {
		t.Errorf("JSON round trip: %v, %+v", err, back.Steps[1])
	}
	if !strings.Contains(a.Summary(), "as "+WithheldText) {
		t.Errorf("summary %q does not say how a hidden count reads", a.Summary())
	}

	// The exact table is unchanged, and Under applies the same rule.
	if exact.Steps[1].Patients.Hidden() || exact.Steps[1].Removed.N != 1 || exact.MinCell != 0 {
		t.Errorf("exact step 1: %+v", exact.Steps[1])
	}
	if u := exact.Under(k); u.Steps[1] != a.Steps[1] || u.Steps[0].Patients != a.Steps[0].Patients {
		t.Errorf("Under(%d) step 1 = %+v, want %+v", k, u.Steps[1], a.Steps[1])
	}
}

// TestHideSmallDifferences runs the rule on made-up counts: an anchor is
// the last count shown; a count within 1 to k−1 of a shown one is hidden
// and is no anchor; a number removed is shown only after a shown count.
func TestHideSmallDifferences(t *testing.T) {
	const k = 11
	for _, tc := range []struct {
		counts []int64 // patients after each step (−1 off)
		want   string  // patients/removed of each step
	}{
		{[]int64{60, 59}, "60/0 —/—"},
		{[]int64{60, 60, 49, 48, 30}, "60/0 60/0 49/11 —/— 30/—"},
		{[]int64{60, 55, 40, 0}, "60/0 —/— 40/— 0/40"},
		{[]int64{60, 5, 0}, "60/0 <11/— 0/—"},
		{[]int64{8, 8, 0}, "<11/0 <11/— 0/—"},
		{[]int64{100, -1, 95, 80}, "100/0 off —/— 80/—"},
		{[]int64{100, 80, 95}, "100/0 80/20 —/—"},
		{[]int64{0, 0}, "0/0 0/0"},
	} {
		var steps []AttritionStep
		var prev int64 = -1
		for i, n := range tc.counts {
			st := AttritionStep{ChainStep: ChainStep{Number: i}, On: n >= 0, Patients: Count{N: -1}, Removed: Count{N: -1}}
			if st.On {
				st.Patients, st.Removed = Count{N: n}, Count{N: 0}
				if prev >= 0 {
					st.Removed = Count{N: prev - n}
				}
				prev = n
				if tc.counts[0] > 0 {
					p := 100 * float64(n) / float64(tc.counts[0])
					st.PercentOfBase = &p
				}
			}
			steps = append(steps, st)
		}
		a := (&Attrition{Steps: steps}).Under(k)
		var got []string
		for _, s := range a.Steps {
			if !s.On {
				got = append(got, "off")
				continue
			}
			got = append(got, s.Patients.String()+"/"+s.Removed.String())
		}
		if strings.Join(got, " ") != tc.want {
			t.Errorf("%v: %s, want %s", tc.counts, strings.Join(got, " "), tc.want)
		}
		checkNoSmallDifference(t, a, k)
		if steps[1].Patients.Hidden() || (tc.counts[1] > 0 && steps[1].Patients.N != tc.counts[1]) {
			t.Errorf("%v: Under changed the table it was given", tc.counts)
		}
	}
}

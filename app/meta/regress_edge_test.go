package meta

import (
	"strings"
	"testing"
)

// A moderator constant across studies is dropped, as metafor does
// ("Redundant predictors dropped from the model."), leaving the
// intercept-only model; a subgroup with one study is that study's estimate.
func TestRegressConstantModeratorAndSingleStudySubgroup(t *testing.T) {
	st := binaryStudies([]float64{4, 6, 3, 62, 33}, []float64{123, 306, 231, 13598, 5069}, []float64{11, 29, 11, 248, 47}, []float64{139, 303, 220, 12867, 5808})
	for i := range st {
		st[i].Covariates = map[string]string{"dose": "10", "arm": map[bool]string{true: "solo", false: "many"}[i == 0]}
	}
	res := mustAnalyze(t, st, Options{Measure: RR})
	reg, err := Regress(res, []string{"dose"})
	if err != nil {
		t.Fatal(err)
	}
	if len(reg.Coefficients) != 1 || !strings.Contains(strings.Join(reg.Notes, " "), "dropped") {
		t.Fatalf("constant moderator: coefficients %+v notes %q", reg.Coefficients, reg.Notes)
	}
	near(t, "intercept-only estimate", float64(reg.Coefficients[0].Est), res.Est, 1e-12)
	if !isNaNFloat(reg.R2) {
		t.Errorf("R2 = %v, want null (metafor gives no R² without moderators)", reg.R2)
	}
	sa, err := Subgroups(st, Options{Measure: RR}, "arm")
	if err != nil {
		t.Fatal(err)
	}
	for _, g := range sa.Groups {
		if g.Name == "solo" {
			near(t, "single-study subgroup", g.Result.Est, res.Studies[0].YI, 1e-12)
		}
	}
	if sa.DF != 1 {
		t.Errorf("df = %d, want 1", sa.DF)
	}
	if _, err := Regress(res, []string{"missingcol"}); err == nil {
		t.Error("a moderator column with no values gave no error")
	}
	mh := mustAnalyze(t, st, Options{Measure: RR, Method: MH})
	if _, err := Regress(mh, []string{"dose"}); err == nil || !strings.Contains(err.Error(), "inverse-variance") {
		t.Errorf("MH meta-regression: %v", err)
	}
}

func isNaNFloat(f Float) bool { return f != f }

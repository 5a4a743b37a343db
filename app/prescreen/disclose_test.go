package prescreen

import "testing"

// TestTrialCountShown checks the suppression rule: small parts hidden,
// and the totals that would give a hidden part back hidden with them.
func TestTrialCountShown(t *testing.T) {
	for _, tc := range []struct {
		c    TrialCount
		k    int
		want ShownCounts
	}{
		{TrialCount{0, 12, 1}, 11, ShownCounts{Ranked: "<11", Eligible: "0", Unknown: "12", NotEligible: "<11", Might: "12"}},
		{TrialCount{3, 12, 20}, 11, ShownCounts{Ranked: "<11", Eligible: "<11", Unknown: "12", NotEligible: "20", Might: "<11"}},
		{TrialCount{0, 12, 0}, 11, ShownCounts{Ranked: "12", Eligible: "0", Unknown: "12", NotEligible: "0", Might: "12"}},
		{TrialCount{11, 0, 30}, 11, ShownCounts{Ranked: "41", Eligible: "11", Unknown: "0", NotEligible: "30", Might: "11"}},
		{TrialCount{1, 2, 3}, 0, ShownCounts{Ranked: "6", Eligible: "1", Unknown: "2", NotEligible: "3", Might: "3"}},
	} {
		if got := tc.c.Shown(tc.k); got != tc.want {
			t.Errorf("%+v, k %d: %+v, want %+v", tc.c, tc.k, got, tc.want)
		}
	}
	if v := (TrialCount{0, 12, 1}).Shown(11).Values(); v[0] != "<11" || v[2] != int64(12) {
		t.Errorf("values %v", v)
	}
}

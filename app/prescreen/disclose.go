package prescreen

import (
	"strconv"
)

// ShownCounts are a trial's counts as they may be shown: each an exact
// number or "<K" (hidden).
type ShownCounts struct {
	// Ranked is the patients with the trial in their top K (R = E+U+N).
	Ranked string
	// Eligible, Unknown and NotEligible are E, U and N.
	Eligible, Unknown, NotEligible string
	// Might is the patients who might qualify (M = E+U).
	Might string
}

// Shown writes a trial's counts under a minimum cell size k (k < 2: all
// exact). It is the one rule of the Trials sheet, the CLI's table and
// JSON and the Cohort screen on an aggregate-only source:
//
//   - primary: each of E, U and N from 1 to k−1 is hidden ("<k");
//   - complementary: when any of E, U and N is hidden, R = E+U+N is hidden
//     too, and M = E+U when E or U is hidden; otherwise a shown total
//     minus its shown parts would give a hidden count back (e.g. E 0,
//     U 12, N hidden, R 13 gives N = 1). A hidden total is written "<k"
//     whatever its value, as disclosure.Suppressed writes a complementary
//     cell, so the marker says nothing of the value.
//
// R or M from 1 to k−1 always has a part from 1 to k−1, so the totals
// need no primary rule of their own; a shown M with a hidden N is E+U,
// both shown, and gives nothing away.
func (c TrialCount) Shown(k int) ShownCounts {
	small := func(n int) bool { return k >= 2 && n >= 1 && n < k }
	hidden := "<" + strconv.Itoa(k)
	text := func(n int, hide bool) string {
		if hide {
			return hidden
		}
		return strconv.Itoa(n)
	}
	e, u, n := small(c.Eligible), small(c.Unknown), small(c.NotEligible)
	return ShownCounts{
		Ranked:      text(c.Eligible+c.Unknown+c.NotEligible, e || u || n),
		Eligible:    text(c.Eligible, e),
		Unknown:     text(c.Unknown, u),
		NotEligible: text(c.NotEligible, n),
		Might:       text(c.Might(), e || u),
	}
}

// Values returns the shown counts in the Trials sheet's order: ranked,
// eligible, unknown, not eligible, might qualify; an exact count as an
// int64 (a number in a workbook), a hidden one as "<K".
func (s ShownCounts) Values() []any {
	out := make([]any, 0, 5)
	for _, t := range []string{s.Ranked, s.Eligible, s.Unknown, s.NotEligible, s.Might} {
		if n, err := strconv.ParseInt(t, 10, 64); err == nil {
			out = append(out, n)
		} else {
			out = append(out, t)
		}
	}
	return out
}

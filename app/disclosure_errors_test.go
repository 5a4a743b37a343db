package app

import "testing"

// TestQuotesOtherText: a PostgreSQL message quoting the statement's own
// words (any case, quoted identifiers, the LINE echo) is kept; one quoting
// anything else (a value read at run time) is not.
func TestQuotesOtherText(t *testing.T) {
	for _, tc := range []struct {
		query, msg string
		want       bool
	}{
		{"SELECT count(*) FROM Patientz", `relation "patientz" does not exist`, false},
		{`SELECT count(*) FROM "mimiciv_hosp"."x"`, `relation "mimiciv_hosp.x" does not exist`, false},
		{"SELECT count(*) FORM patients", "syntax error at or near \"patients\"\nLINE 1: SELECT count(*) FORM patients\n                            ^", false},
		{"SELECT count(*) FROM patients WHERE subject_id::text::regclass IS NULL", `relation "10014729" does not exist`, true},
		{"SELECT count(*) FROM p WHERE dod::text::regtype IS NULL", "syntax error at or near \"2137\"\nLINE 1: SELECT \"2137\"\n       ^", true},
		{"SELECT 1", "division by zero", false},
	} {
		if got := quotesOtherText(tc.query, tc.msg); got != tc.want {
			t.Errorf("%q / %q: %v, want %v", tc.query, tc.msg, got, tc.want)
		}
	}
}

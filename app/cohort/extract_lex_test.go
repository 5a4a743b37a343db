package cohort

import "testing"

// TestExtractSQLEndsWhereSQLiteDoes: the statement taken from a reply ends
// at the first semicolon SQLite would see, not at one inside a comment or
// a bracketed identifier (issue 12, same class as defect 1).
func TestExtractSQLEndsWhereSQLiteDoes(t *testing.T) {
	for in, want := range map[string]string{
		"SELECT count(*) /* one; two */ FROM patients; -- done": "SELECT count(*) /* one; two */ FROM patients",
		"SELECT [a;b] FROM t; SELECT 2":                         "SELECT [a;b] FROM t",
		"SELECT 'it''s;' AS x;":                                 "SELECT 'it''s;' AS x",
		"SELECT 1\n\nThis counts the rows.":                     "SELECT 1",
		"SELECT 1\n\nFROM t":                                    "SELECT 1\n\nFROM t",
	} {
		if got, err := ExtractSQL(in); err != nil || got != want {
			t.Errorf("ExtractSQL(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
}

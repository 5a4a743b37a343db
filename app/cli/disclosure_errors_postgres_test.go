package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// TestAggregateOnlyPostgresErrorsQuoteNoValues: on an aggregate-only
// PostgreSQL source, an error whose message would quote a record's value
// (a cast to regclass or regtype, current_setting or a privilege check on
// a column: relation "10014729" does not exist) is shown without it; an
// error that quotes the statement's own words (a misspelt table, a syntax
// error) is shown as it is.
func TestAggregateOnlyPostgresErrorsQuoteNoValues(t *testing.T) {
	_, _, dsn := mimicOnPostgres(t)
	ws := t.TempDir()
	if _, stderr, code := run(t, ws, "sources", "add", "pg", "--postgres", dsn, "--schemas", "mimiciv_hosp,mimiciv_icu", "--password-env", "CLI_READER_PW"); code != 0 {
		t.Fatalf("sources add: %s", stderr)
	}
	out, stderr, code := run(t, ws, "sql", "--db", "pg", "--json", "SELECT subject_id::text, coalesce(substr(dod::text, 1, 4), '') FROM patients")
	var ref struct {
		Rows [][]string `json:"rows"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &ref) != nil || len(ref.Rows) == 0 {
		t.Fatalf("reference: %d %s %s", code, out, stderr)
	}
	run(t, ws, "sources", "set", "pg", "--access", "aggregate-only")
	for _, q := range []string{
		"SELECT count(*) FROM patients WHERE subject_id::text::regclass IS NULL",
		"SELECT count(*) FROM patients WHERE dod::text::regtype IS NULL",
		"SELECT count(*) FROM patients WHERE current_setting(subject_id::text) IS NULL",
		"SELECT count(*) FROM patients WHERE has_table_privilege(subject_id::text, 'SELECT')",
		"SELECT count(*) FROM patients WHERE pg_get_viewdef(subject_id::text) IS NULL",
	} {
		_, stderr, code := run(t, ws, "sql", "--db", "pg", q)
		if code != 1 || !strings.Contains(stderr, "not shown") {
			t.Errorf("%s: %d %s, want the error without its value", q, code, stderr)
		}
		for _, r := range ref.Rows {
			for _, v := range r {
				if v != "" && strings.Contains(stderr, v) {
					t.Fatalf("%s: the error quotes the value %q of the data: %s", q, v, stderr)
				}
			}
		}
	}
	for q, want := range map[string]string{
		"SELECT count(*) FROM patientz": `relation "patientz" does not exist`,
		"SELECT count(*) FORM patients": `syntax error at or near "patients"`,
	} {
		if _, stderr, code := run(t, ws, "sql", "--db", "pg", q); code != 1 || !strings.Contains(stderr, want) {
			t.Errorf("%s: %d %s, want %s", q, code, stderr, fmt.Sprint(want))
		}
	}
}

package datasets

import (
	"context"
	"errors"
	"testing"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// TestPragmaFunctionsSpelledAsStrings: SQLite takes a string where its
// grammar takes a table name, so FROM 'pragma_optimize' reaches the
// pragma's table-valued function although the gate, which checks names,
// sees a string. The authorizer (or SQLite itself: a pragma function
// takes no value to set) must still refuse each, and nothing may change:
// the connection's answers, the process-wide heap limits, the file.
func TestPragmaFunctionsSpelledAsStrings(t *testing.T) {
	path := newDemoLikeDB(t)
	before := fileSum(t, path)
	r := newTestRunner(t, path, RunnerOptions{})
	tls := libc.NewTLS()
	defer tls.Close()
	soft, hard := sqlite3.Xsqlite3_soft_heap_limit64(tls, -1), sqlite3.Xsqlite3_hard_heap_limit64(tls, -1)
	for _, q := range []string{
		"SELECT * FROM 'pragma_optimize'",
		"SELECT * FROM 'pragma_integrity_check'",
		"SELECT * FROM main.'pragma_quick_check'",
		"SELECT * FROM 'pragma_soft_heap_limit'(1000)",
		"SELECT * FROM 'pragma_hard_heap_limit'(1000000)",
		"SELECT * FROM 'pragma_writable_schema'(1)",
		"SELECT * FROM 'pragma_query_only'(0)",
		"SELECT * FROM 'pragma_cache_size'(1)",
		"SELECT * FROM 'pragma_journal_mode'('delete')",
		"SELECT * FROM patients, 'pragma_threads'(8)",
		"SELECT * FROM 'pragma_case_sensitive_like'(1)",
	} {
		_, err := r.Query(context.Background(), q)
		var qe *QueryError
		var refused *RefusedError
		if !errors.As(err, &refused) && !errors.As(err, &qe) {
			t.Errorf("%q: err = %v, want a refusal or SQLite's error", q, err)
		}
		checkReferenceAnswers(t, r, q)
	}
	if s, h := sqlite3.Xsqlite3_soft_heap_limit64(tls, -1), sqlite3.Xsqlite3_hard_heap_limit64(tls, -1); s != soft || h != hard {
		t.Errorf("heap limits now %d and %d, were %d and %d", s, h, soft, hard)
	}
	r.Close()
	if fileSum(t, path) != before {
		t.Error("the database file changed")
	}
}

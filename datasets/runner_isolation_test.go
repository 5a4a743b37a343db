package datasets

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
)

// newDemoLikeDB creates a database shaped like the demo's patients table:
// 3,200 patients, 1,598 of them with gender 'F' (as in the demo of issue 12).
func newDemoLikeDB(t testing.TB) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "demo-like.sqlite")
	db, err := sql.Open(DriverName, "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE patients (subject_id INTEGER PRIMARY KEY, gender TEXT, anchor_age INTEGER, note TEXT)`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 3200)
		INSERT INTO patients SELECT i, CASE WHEN i <= 1598 THEN 'F' ELSE 'M' END, 18 + i % 70, 'note ' || i FROM n`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE VIRTUAL TABLE notes_fts USING fts5(body); INSERT INTO notes_fts(body) VALUES ('chest pain on exertion'), ('no acute distress')`); err != nil {
		t.Fatal(err)
	}
	return path
}

// referenceAnswers are queries whose answers a refused statement must never
// change, with those answers.
var referenceAnswers = []struct {
	query string
	want  int64
}{
	{"SELECT count(*) FROM patients WHERE gender LIKE 'f'", 1598}, // case_sensitive_like would make it 0
	{"SELECT query_only FROM pragma_query_only", 1},
	{"SELECT count(*) FROM pragma_database_list WHERE name <> 'temp'", 1}, // an ATTACH would add one
}

// checkReferenceAnswers runs the reference queries and fails the test when
// any answer differs.
func checkReferenceAnswers(t testing.TB, r *Runner, after string) {
	t.Helper()
	for _, ref := range referenceAnswers {
		res, err := r.Query(context.Background(), ref.query)
		if err != nil {
			t.Fatalf("after %q: %q: %v", after, ref.query, err)
		}
		if got := res.Rows[0][0]; got != ref.want {
			t.Fatalf("after %q: %q = %v, want %d: a refused statement changed the connection", after, ref.query, got, ref.want)
		}
	}
}

// issue12Attacks are statements that SQLite applies while compiling them
// when the text before PRAGMA hides the keyword from a gate that does not
// tokenize as SQLite does.
var issue12Attacks = []string{
	"\ufeffPRAGMA case_sensitive_like=1",
	"EXPLAIN \ufeffPRAGMA case_sensitive_like=1",
	"\ufeff\ufeffPRAGMA case_sensitive_like=1",
	"/* x */\ufeffPRAGMA case_sensitive_like=1",
	"\ufeffPRAGMA query_only=0",
	"\ufeffpragma QUERY_ONLY = false",
	"EXPLAIN QUERY PLAN \ufeffPRAGMA query_only=0",
	"\ufeffATTACH '/tmp/clinsight-issue12.db' AS x",
	" \v PRAGMA case_sensitive_like=1",
	// SQLite reads "$x(')" as a parameter, then a second statement; a
	// naive tokenizer reads a string.
	"SELECT $x(');PRAGMA/**/case_sensitive_like=1;--')",
}

// TestRefusedStatementsLeaveLaterAnswersUnchanged is the reproduction of
// issue 12, defect 1: a refused statement before an ordinary SELECT must not
// change that SELECT's answer, through Query and through Check, on one
// runner used for many queries.
func TestRefusedStatementsLeaveLaterAnswersUnchanged(t *testing.T) {
	path := newDemoLikeDB(t)
	before := fileSum(t, path)
	ctx := context.Background()
	for name, run := range map[string]func(*Runner, string) error{
		"Query": func(r *Runner, q string) error { _, err := r.Query(ctx, q); return err },
		"Check": func(r *Runner, q string) error { return r.Check(ctx, q) },
	} {
		t.Run(name, func(t *testing.T) {
			r := newTestRunner(t, path, RunnerOptions{})
			checkReferenceAnswers(t, r, "nothing")
			for _, attack := range issue12Attacks {
				err := run(r, attack)
				var refused *RefusedError
				var qe *QueryError
				if !errors.As(err, &refused) && !errors.As(err, &qe) {
					t.Errorf("%s(%q) = %v, want a refusal or an SQLite error", name, attack, err)
				}
				checkReferenceAnswers(t, r, attack)
				// A write must still fail after it.
				if _, err := r.Query(ctx, "CREATE TEMP TABLE t(x)"); err == nil {
					t.Fatalf("after %q: a write was accepted", attack)
				}
			}
		})
	}
	if after := fileSum(t, path); after != before {
		t.Error("the database file changed")
	}
}

// TestGateSeesBOMAsSQLiteDoes: U+FEFF where a token may start is white
// space to SQLite, so the gate must see the PRAGMA behind it.
func TestGateSeesBOMAsSQLiteDoes(t *testing.T) {
	for _, q := range []string{
		"\ufeffPRAGMA case_sensitive_like=1",
		"\ufeffPRAGMA query_only=0",
		"EXPLAIN \ufeffPRAGMA query_only=0",
		"SELECT 1;\ufeffPRAGMA query_only=0",
	} {
		_, err := gate(q)
		var refused *RefusedError
		if !errors.As(err, &refused) {
			t.Errorf("gate(%q) = %v, want a refusal", q, err)
			continue
		}
		if !strings.Contains(refused.Reason, "query_only") && !strings.Contains(refused.Reason, "case_sensitive_like") &&
			!strings.Contains(refused.Reason, "one statement") {
			t.Errorf("gate(%q) refused for the wrong reason: %s", q, refused.Reason)
		}
	}
}

// TestRunnerReadsFTS5: the authorizer lets FTS5 read what it needs
// (PRAGMA data_version among it).
func TestRunnerReadsFTS5(t *testing.T) {
	r := newTestRunner(t, newDemoLikeDB(t), RunnerOptions{})
	res, err := r.Query(context.Background(), "SELECT body, bm25(notes_fts) FROM notes_fts WHERE notes_fts MATCH 'chest' ORDER BY rank")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 1 || res.Rows[0][0] != "chest pain on exertion" {
		t.Errorf("rows = %v", res.Rows)
	}
}

// TestRunnerConcurrentQueries: each call has its own connection.
func TestRunnerConcurrentQueries(t *testing.T) {
	r := newTestRunner(t, newDemoLikeDB(t), RunnerOptions{})
	errs := make(chan error, 16)
	for i := range 16 {
		go func() {
			q := "SELECT count(*) FROM patients WHERE gender LIKE 'f'"
			if i%2 == 0 {
				q = "\ufeffPRAGMA case_sensitive_like=1"
			}
			res, err := r.Query(context.Background(), q)
			switch {
			case i%2 == 0 && err == nil:
				errs <- fmt.Errorf("%q was accepted", q)
			case i%2 == 1 && err != nil:
				errs <- err
			case i%2 == 1 && res.Rows[0][0] != int64(1598):
				errs <- fmt.Errorf("count = %v", res.Rows[0][0])
			default:
				errs <- nil
			}
		}()
	}
	for range 16 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

package datasets

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// newFixtureDB creates a small database file (rollback journal, so the file
// alone is the whole database) and returns its path.
func newFixtureDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fixture.sqlite")
	db, err := sql.Open(DriverName, "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	stmts := []string{
		`CREATE TABLE patients (subject_id INTEGER PRIMARY KEY, gender TEXT, anchor_age INTEGER,
			weight REAL, dod DATE, admittime TIMESTAMP, photo BLOB, note TEXT)`,
		`INSERT INTO patients VALUES
			(1, 'F', 52, 61.5, NULL, '2180-07-23 12:35:00', x'00ff10', 'first'),
			(2, 'M', 71, 80.25, '2181-01-02', '2180-08-01T09:00:00', NULL, NULL),
			(3, 'F', 33, NULL, NULL, '2180-09-30 23:59:59.123', NULL, 'a;b'),
			(4, 'M', 90, 70, NULL, 'not a time', NULL, '')`,
		`CREATE TABLE admissions (hadm_id INTEGER, subject_id INTEGER, admittime TIMESTAMP)`,
		`INSERT INTO admissions VALUES (10, 1, '2180-07-23 12:35:00'), (11, 1, '2180-07-25 08:00:00'), (12, 2, '2180-08-01 09:00:00')`,
	}
	for _, s := range stmts {
		if _, err := db.Exec(s); err != nil {
			t.Fatalf("fixture %q: %v", s, err)
		}
	}
	return path
}

func newTestRunner(t testing.TB, path string, opts RunnerOptions) *Runner {
	t.Helper()
	r, err := NewRunner(context.Background(), path, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r
}

func TestRunnerTypedValues(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{})
	res, err := r.Query(context.Background(),
		"SELECT subject_id, gender, weight, dod, admittime, photo, note FROM patients ORDER BY subject_id")
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{int64(1), "F", 61.5, nil, "2180-07-23 12:35:00", Blob{0x00, 0xff, 0x10}, "first"},
		{int64(2), "M", 80.25, "2181-01-02", "2180-08-01T09:00:00", nil, nil},
		{int64(3), "F", nil, nil, "2180-09-30 23:59:59.123", nil, "a;b"},
		{int64(4), "M", float64(70), nil, "not a time", nil, ""},
	}
	if len(res.Rows) != len(want) {
		t.Fatalf("got %d rows, want %d", len(res.Rows), len(want))
	}
	for i, row := range res.Rows {
		for j, v := range row {
			if !equalValue(v, want[i][j]) {
				t.Errorf("row %d col %s: got %#v (%T), want %#v (%T)", i, res.Columns[j].Name, v, v, want[i][j], want[i][j])
			}
		}
	}
	if got := res.ColumnNames(); strings.Join(got, ",") != "subject_id,gender,weight,dod,admittime,photo,note" {
		t.Errorf("columns = %v", got)
	}
	if res.Columns[4].DeclType != "TIMESTAMP" {
		t.Errorf("admittime decltype = %q, want TIMESTAMP", res.Columns[4].DeclType)
	}
	if res.Truncated {
		t.Error("unexpected truncation")
	}
	if got := (Blob{0x00, 0xff}).String(); got != "00ff" {
		t.Errorf("Blob.String = %q", got)
	}
}

func equalValue(a, b any) bool {
	if ab, ok := a.(Blob); ok {
		bb, ok := b.(Blob)
		return ok && string(ab) == string(bb)
	}
	return a == b
}

// TestRunnerTimeColumnsKeepOrderAndNames covers the rewrite that keeps
// DATE/TIMESTAMP text as stored: duplicate column names, ORDER BY, a CTE and
// a compound query must come through unchanged.
func TestRunnerTimeColumnsKeepOrderAndNames(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{})
	ctx := context.Background()
	res, err := r.Query(ctx, `WITH a AS (SELECT * FROM admissions)
		SELECT p.admittime, a.admittime, a.hadm_id FROM patients p JOIN a USING (subject_id)
		ORDER BY a.admittime DESC;`)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.ColumnNames(), ","); got != "admittime,admittime,hadm_id" {
		t.Errorf("columns = %s", got)
	}
	var order []any
	for _, row := range res.Rows {
		order = append(order, row[2])
		if _, ok := row[1].(string); !ok {
			t.Errorf("admittime came back as %T, want string", row[1])
		}
	}
	if len(order) != 3 || order[0] != int64(12) || order[1] != int64(11) || order[2] != int64(10) {
		t.Errorf("ORDER BY DESC not kept: %v", order)
	}
	res, err = r.Query(ctx, "SELECT dod FROM patients WHERE dod IS NOT NULL UNION ALL SELECT '2100-12-31' ORDER BY 1 LIMIT 5")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || res.Rows[0][0] != "2100-12-31" || res.Rows[1][0] != "2181-01-02" {
		t.Errorf("compound result = %v", res.Rows)
	}
}

func TestRunnerRowCap(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{MaxRows: 2})
	res, err := r.Query(context.Background(), "SELECT subject_id FROM patients")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || !res.Truncated {
		t.Errorf("got %d rows truncated=%v, want 2 rows truncated", len(res.Rows), res.Truncated)
	}
	res, err = r.Query(context.Background(), "SELECT subject_id FROM patients LIMIT 2")
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Rows) != 2 || res.Truncated {
		t.Errorf("exactly the cap: got %d rows truncated=%v, want 2 rows not truncated", len(res.Rows), res.Truncated)
	}
}

// hostileStatements must each be refused before anything is written.
var hostileStatements = []string{
	"DROP TABLE patients",
	"SELECT 1; DROP TABLE patients",
	"SELECT 1;DROP TABLE patients;",
	"DELETE FROM patients",
	"INSERT INTO patients(subject_id) VALUES (99)",
	"REPLACE INTO patients(subject_id) VALUES (1)",
	"UPDATE patients SET gender = 'X'",
	"CREATE TABLE evil (a)",
	"CREATE TEMP TABLE evil (a)",
	"CREATE VIEW v AS SELECT 1",
	"CREATE TRIGGER t AFTER INSERT ON patients BEGIN DELETE FROM patients; END",
	"CREATE INDEX i ON patients(gender)",
	"ALTER TABLE patients ADD COLUMN evil TEXT",
	"ALTER TABLE patients RENAME TO p2",
	"ATTACH DATABASE '/tmp/clinsight-evil.db' AS evil",
	"DETACH DATABASE main",
	"PRAGMA query_only = 0",
	"PRAGMA query_only(0)",
	"PRAGMA writable_schema = ON",
	"PRAGMA journal_mode = DELETE",
	"PRAGMA user_version = 5",
	"PRAGMA user_version(5)",
	"PRAGMA main.user_version = 5",
	"PRAGMA foreign_keys = OFF",
	"VACUUM",
	"VACUUM INTO '/tmp/clinsight-copy.db'",
	"REINDEX",
	"ANALYZE",
	"BEGIN; DELETE FROM patients; COMMIT",
	"SAVEPOINT s",
	"WITH x AS (SELECT 1) DELETE FROM patients",
	"WITH x(a) AS (SELECT 99) INSERT INTO patients(subject_id) SELECT a FROM x",
	"WITH x AS (SELECT 1) UPDATE patients SET gender = 'X'",
	"/* harmless */ DROP TABLE patients",
	"DROP/**/TABLE patients",
	"SELECT 1 -- comment ;\n; DROP TABLE patients",
	"SELECT 'a;b'; DROP TABLE patients",
	"SELECT \"x;\" FROM patients; DELETE FROM patients",
	"EXPLAIN DROP TABLE patients",
	"EXPLAIN QUERY PLAN DELETE FROM patients",
	"SELECT load_extension('/tmp/clinsight-evil.so')",
	"",
	"  ;  ; -- nothing",
}

func fileSum(t testing.TB, path string) [32]byte {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return sum
}

func TestRunnerRefusesHostileStatements(t *testing.T) {
	path := newFixtureDB(t)
	before := fileSum(t, path)
	r := newTestRunner(t, path, RunnerOptions{})
	ctx := context.Background()
	for _, q := range hostileStatements {
		_, err := r.Query(ctx, q)
		var refused *RefusedError
		if !errors.As(err, &refused) {
			t.Errorf("%q: got %v (%T), want a refusal", q, err, err)
			continue
		}
		if len(refused.Reason) < 15 || strings.Contains(refused.Reason, "(1)") {
			t.Errorf("%q: refusal message not clear: %q", q, refused.Reason)
		}
		if err := r.Check(ctx, q); !errors.As(err, &refused) {
			t.Errorf("Check(%q) = %v, want a refusal", q, err)
		}
		t.Logf("%-55q → %s", q, err)
	}
	// The connections must still be read-only and usable afterwards.
	res, err := r.Query(ctx, "SELECT count(*) FROM patients")
	if err != nil || res.Rows[0][0] != int64(4) {
		t.Fatalf("after hostile corpus: %v %v", res, err)
	}
	r.Close()
	if after := fileSum(t, path); after != before {
		t.Error("database file changed")
	}
	for _, stray := range []string{"/tmp/clinsight-evil.db", "/tmp/clinsight-copy.db"} {
		if _, err := os.Stat(stray); err == nil {
			t.Errorf("%s was created", stray)
			os.Remove(stray)
		}
	}
}

func TestRunnerAllowsReads(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{})
	ctx := context.Background()
	for _, q := range []string{
		"SELECT 1",
		"select gender, count(*) from patients group by gender;",
		"  -- leading comment\nSELECT 1 /* trailing */ ; ",
		"WITH RECURSIVE n(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM n WHERE x < 5) SELECT sum(x) FROM n",
		"VALUES (1, 'a'), (2, 'b')",
		"EXPLAIN QUERY PLAN SELECT * FROM patients WHERE subject_id = 1",
		"EXPLAIN SELECT 1",
		"PRAGMA table_info(patients)",
		"PRAGMA main.table_info('patients')",
		"PRAGMA user_version",
		"SELECT name FROM pragma_table_info('patients')",
		"SELECT DISTINCT gender FROM patients ORDER BY 1",
		"SELECT 'DROP TABLE patients; --' AS text",
		"SELECT * FROM sqlite_schema",
	} {
		if _, err := r.Query(ctx, q); err != nil {
			t.Errorf("%q: %v", q, err)
		}
	}
}

func TestRunnerSQLiteErrors(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{})
	ctx := context.Background()
	cases := []struct{ q, want string }{
		{"SELECT nope FROM patients", "no such column: nope"},
		{"SELECT * FROM nope", "no such table: nope"},
		{"SELEC 1", `near "SELEC": syntax error`},
		{"SELECT writefile('/tmp/x', 'y')", "no such function: writefile"},
	}
	for _, c := range cases {
		for name, err := range map[string]error{"Check": r.Check(ctx, c.q), "Query": queryErr(r, c.q)} {
			var qe *QueryError
			if !errors.As(err, &qe) || qe.Message != c.want {
				t.Errorf("%s(%q) = %v (%T), want QueryError %q", name, c.q, err, err, c.want)
			}
		}
	}
}

func queryErr(r *Runner, q string) error {
	_, err := r.Query(context.Background(), q)
	return err
}

// TestRunnerTimeoutInterrupts: a runaway recursive CTE under a 1 s limit
// returns a timeout within 1.5 s, and the next query on the same database
// works.
func TestRunnerTimeoutInterrupts(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{Timeout: time.Second})
	start := time.Now()
	_, err := r.Query(context.Background(),
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c")
	elapsed := time.Since(start)
	var te *TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("got %v (%T), want *TimeoutError", err, err)
	}
	if elapsed > 1500*time.Millisecond {
		t.Errorf("timeout returned after %s, want ≤ 1.5 s", elapsed)
	}
	t.Logf("interrupted after %s: %v", elapsed, err)
	res, err := r.Query(context.Background(), "SELECT count(*) FROM patients")
	if err != nil || res.Rows[0][0] != int64(4) {
		t.Fatalf("query after timeout: %v %v", res, err)
	}
}

func TestRunnerCancel(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(100*time.Millisecond, cancel)
	_, err := r.Query(ctx, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c")
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestNewRunnerErrors(t *testing.T) {
	ctx := context.Background()
	if _, err := NewRunner(ctx, filepath.Join(t.TempDir(), "missing.sqlite"), RunnerOptions{}); !errors.Is(err, ErrNoDatabase) {
		t.Errorf("missing file: %v", err)
	}
	junk := filepath.Join(t.TempDir(), "junk.sqlite")
	if err := os.WriteFile(junk, []byte("this is not a database, just text that is long enough to have a header"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := NewRunner(ctx, junk, RunnerOptions{}); err == nil || !strings.Contains(err.Error(), "not a readable SQLite database") {
		t.Errorf("junk file: %v", err)
	}
}

func TestSplitStatements(t *testing.T) {
	cases := []struct {
		src  string
		want []string
	}{
		{"SELECT 1", []string{"SELECT 1"}},
		{"SELECT 1;", []string{"SELECT 1"}},
		{" SELECT 1 ; SELECT 2 ", []string{"SELECT 1", "SELECT 2"}},
		{"SELECT ';' ; ", []string{"SELECT ';'"}},
		{"SELECT \"a;b\", [c;d], `e;f`", []string{"SELECT \"a;b\", [c;d], `e;f`"}},
		{"SELECT 1 -- ; x\n", []string{"SELECT 1"}},
		{"SELECT /* ; */ 1", []string{"SELECT /* ; */ 1"}},
		{"SELECT 'it''s;'", []string{"SELECT 'it''s;'"}},
		{"SELECT 'open", []string{"SELECT 'open"}},
		{"/* only a comment */", nil},
		{"SELECT 1e+5;SELECT 2", []string{"SELECT 1e+5", "SELECT 2"}},
	}
	for _, c := range cases {
		var got []string
		for _, s := range splitStatements(c.src) {
			got = append(got, c.src[s.start:s.end])
		}
		if strings.Join(got, "|") != strings.Join(c.want, "|") {
			t.Errorf("splitStatements(%q) = %q, want %q", c.src, got, c.want)
		}
	}
}

func FuzzSplitStatements(f *testing.F) {
	for _, s := range hostileStatements {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, src string) {
		for _, s := range splitStatements(src) {
			if s.start < 0 || s.end > len(src) || s.start >= s.end {
				t.Fatalf("bad bounds %d..%d for %q", s.start, s.end, src)
			}
			for _, tok := range s.tokens {
				if tok.Kind == TokenSemicolon || tok.Start < s.start || tok.End > s.end {
					t.Fatalf("token %v outside statement %d..%d", tok, s.start, s.end)
				}
			}
		}
		_, _ = gate(src)
	})
}

func TestTokenizeSQLIdentifiers(t *testing.T) {
	src := `SELECT "a ""b""", [c d], ` + "`e``f`" + `, g, 'h''i', 12.5e+3; x`
	var got []string
	for _, tok := range TokenizeSQL(src) {
		if name, ok := tok.Identifier(src); ok {
			got = append(got, name)
		} else {
			got = append(got, "<"+tok.Text(src)+">")
		}
	}
	want := `SELECT|a "b"|<,>|c d|<,>|e` + "`" + `f|<,>|g|<,>|<'h''i'>|<,>|<12.5e+3>|<;>|x`
	if strings.Join(got, "|") != want {
		t.Errorf("tokens = %s\nwant     %s", strings.Join(got, "|"), want)
	}
}

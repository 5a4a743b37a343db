package datasets

import (
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// This file holds the acceptance fuzz target of issue 12: statements built
// from SQLite's grammar with Unicode white space and comments between their
// tokens, judged by the read-only gate, by the Runner, and by SQLite itself
// on a scratch connection.

// fuzzSeps go between generated tokens: what SQLite calls white space (and
// U+FEFF), what it does not (U+00A0, U+2000..U+200B, U+3000, a leading \v),
// comments, and nothing at all.
var fuzzSeps = []string{
	" ", "\ufeff", "\u00a0", "\u2000", "\u2003", "\u2009", "\u200a", "\u200b", "\u3000",
	"\f", "\v", " \v", "\t", "\n", "\r\n", "/* c */", "/*;*/", "-- c;\n", "", "\ufeff\ufeff",
	" \ufeff ", "/**/", "\u2028", "\ufeff/*x*/\u00a0",
}

// fuzzPragmas are pragma names: the read-only list, pragmas that change the
// connection or the file, and some that do not exist.
var fuzzPragmas = []string{
	"table_info", "table_xinfo", "table_list", "index_list", "user_version", "schema_version",
	"data_version", "query_only", "page_count", "encoding", "function_list", "pragma_list",
	"case_sensitive_like", "writable_schema", "journal_mode", "foreign_keys", "recursive_triggers",
	"cache_size", "temp_store", "optimize", "integrity_check", "quick_check", "shrink_memory",
	"legacy_alter_table", "trusted_schema", "reverse_unordered_selects", "automatic_index",
	"busy_timeout", "defer_foreign_keys", "ignore_check_constraints", "secure_delete", "synchronous",
	"locking_mode", "mmap_size", "threads", "analysis_limit", "cell_size_check", "wal_checkpoint",
	"incremental_vacuum", "application_id", "foreign_key_check", "collation_list", "database_list",
	"soft_heap_limit", "hard_heap_limit", "temp_store_directory", "no_such_pragma", "count_changes",
	"short_column_names", "full_column_names", "empty_result_callbacks", "checkpoint_fullfsync",
	"query_only\ufeff", "QUERY_ONLY", "Case_Sensitive_Like",
}

var fuzzPragmaValues = []string{"1", "0", "ON", "off", "true", "'patients'", "patients", "-5", "WAL", "DELETE", "'x'", "2"}

// fuzzStatements are token lists of statements SQLite accepts (some only
// on a writable database).
var fuzzStatements = [][]string{
	{"SELECT", "count", "(", "*", ")", "FROM", "patients", "WHERE", "gender", "LIKE", "'f'"},
	{"SELECT", "*", "FROM", "patients", "LIMIT", "2"},
	{"WITH", "a", "AS", "(", "SELECT", "1", ")", "SELECT", "*", "FROM", "a"},
	{"WITH", "RECURSIVE", "n", "(", "x", ")", "AS", "(", "SELECT", "1", "UNION", "ALL", "SELECT", "x", "+", "1", "FROM", "n", "WHERE", "x", "<", "3", ")", "SELECT", "x", "FROM", "n"},
	{"VALUES", "(", "1", ",", "'a'", ")"},
	{"SELECT", "name", "FROM", "pragma_table_info", "(", "'patients'", ")"},
	{"SELECT", "x'00ff'", ",", "$a", ",", ":b", ",", "@c", ",", "?1"},
	{"SELECT", "'a;b'", ",", "\"gender\"", ",", "[note]", "FROM", "patients", "LIMIT", "1"},
	{"SELECT", "$x(');PRAGMA", "case_sensitive_like=1;--')"},
	{"SELECT", "body", "FROM", "notes_fts", "WHERE", "notes_fts", "MATCH", "'chest'"},
	{"SELECT", "load_extension", "(", "'x'", ")"},
	{"INSERT", "INTO", "patients", "(", "gender", ")", "VALUES", "(", "'X'", ")"},
	{"REPLACE", "INTO", "patients", "(", "subject_id", ")", "VALUES", "(", "1", ")"},
	{"UPDATE", "patients", "SET", "gender", "=", "'X'"},
	{"DELETE", "FROM", "patients"},
	{"WITH", "a", "AS", "(", "SELECT", "1", ")", "DELETE", "FROM", "patients"},
	{"CREATE", "TABLE", "evil", "(", "a", ")"},
	{"CREATE", "TEMP", "TABLE", "evil", "(", "a", ")"},
	{"CREATE", "TEMP", "VIEW", "v", "AS", "SELECT", "1"},
	{"CREATE", "INDEX", "i", "ON", "patients", "(", "gender", ")"},
	{"CREATE", "TRIGGER", "t", "AFTER", "INSERT", "ON", "patients", "BEGIN", "SELECT", "1", ";", "END"},
	{"DROP", "TABLE", "patients"},
	{"ALTER", "TABLE", "patients", "ADD", "COLUMN", "evil"},
	{"ATTACH", "':memory:'", "AS", "aux1"},
	{"DETACH", "aux1"},
	{"VACUUM"},
	{"REINDEX"},
	{"ANALYZE"},
	{"BEGIN"},
	{"BEGIN", "IMMEDIATE"},
	{"COMMIT"},
	{"END"},
	{"ROLLBACK"},
	{"SAVEPOINT", "s"},
	{"RELEASE", "s"},
	{"SELEC", "1"},
	{"(", "SELECT", "1", ")"},
}

// stmtGen turns fuzz bytes into choices.
type stmtGen struct {
	data []byte
	pos  int
}

func (g *stmtGen) next(n int) int {
	if n <= 1 || g.pos >= len(g.data) {
		return 0
	}
	b := g.data[g.pos]
	g.pos++
	return int(b) % n
}

// statement builds one statement from the grammar.
func (g *stmtGen) statement() []string {
	var toks []string
	switch g.next(3) {
	case 1:
		toks = append(toks, "EXPLAIN")
	case 2:
		toks = append(toks, "EXPLAIN", "QUERY", "PLAN")
	}
	if g.next(2) == 0 {
		return append(toks, g.pragma()...)
	}
	st := fuzzStatements[g.next(len(fuzzStatements))]
	if g.next(8) == 0 { // a pragma_ function
		st = []string{"SELECT", "*", "FROM", "pragma_" + fuzzPragmas[g.next(len(fuzzPragmas))]}
		if g.next(2) == 0 {
			st = append(st, "(", fuzzPragmaValues[g.next(len(fuzzPragmaValues))], ")")
		}
	}
	return append(toks, st...)
}

func (g *stmtGen) pragma() []string {
	toks := []string{"PRAGMA"}
	if g.next(4) == 0 {
		toks = append(toks, "main", ".")
	}
	toks = append(toks, fuzzPragmas[g.next(len(fuzzPragmas))])
	switch g.next(4) {
	case 1:
		toks = append(toks, "=", fuzzPragmaValues[g.next(len(fuzzPragmaValues))])
	case 2:
		toks = append(toks, "(", fuzzPragmaValues[g.next(len(fuzzPragmaValues))], ")")
	case 3:
		toks = append(toks, "==", fuzzPragmaValues[g.next(len(fuzzPragmaValues))])
	}
	return toks
}

// text builds the SQL text: one or two statements, the tokens joined by
// separators, keywords in random case, sometimes a separator inside a token.
func (g *stmtGen) text() string {
	var b strings.Builder
	b.WriteString(fuzzSeps[g.next(len(fuzzSeps))])
	n := 1 + g.next(4)/3 // mostly one statement
	for s := range n {
		if s > 0 {
			b.WriteString(";")
			b.WriteString(fuzzSeps[g.next(len(fuzzSeps))])
		}
		for i, tok := range g.statement() {
			if i > 0 {
				sep := fuzzSeps[g.next(len(fuzzSeps))]
				if sep == "" && isIdentByte(tok[0]) {
					sep = " "
				}
				b.WriteString(sep)
			}
			switch g.next(6) {
			case 1:
				tok = strings.ToLower(tok)
			case 2:
				tok = strings.ToUpper(tok)
			case 3:
				if len(tok) > 2 { // a separator inside the token
					k := 1 + g.next(len(tok)-1)
					tok = tok[:k] + fuzzSeps[g.next(len(fuzzSeps))] + tok[k:]
				}
			}
			b.WriteString(tok)
		}
	}
	if g.next(3) == 0 {
		b.WriteString(";")
	}
	b.WriteString(fuzzSeps[g.next(len(fuzzSeps))])
	return b.String()
}

// oracleVerdict is what SQLite itself says about a text, on a scratch
// connection with nothing of Clinsight's in between.
type oracleVerdict struct {
	// compiled: the first statement compiled.
	compiled   bool
	compileErr string
	// single: SQLite found nothing but white space and comments after it.
	single bool
	// readOnly is sqlite3_stmt_readonly of the first statement.
	readOnly bool
	// effect names what running the first statement changed (connection
	// state, file, temp schema, transaction), "" when nothing.
	effect string
	// chunks are the byte ranges SQLite read as each statement, for the
	// statements that compiled.
	chunks [][2]int
}

// reading is SQLite's verdict that the text is one statement that only
// reads.
func (v oracleVerdict) reading() bool {
	return v.compiled && v.single && v.readOnly && v.effect == ""
}

// processWide are pragmas whose effect is process-wide (or that touch
// files by name): the oracle must not run them, and counts them as effects.
var processWide = map[string]bool{
	"hard_heap_limit": true, "soft_heap_limit": true, "temp_store_directory": true, "data_store_directory": true,
}

// fuzzOracle judges texts with SQLite on a scratch copy of the database.
type fuzzOracle struct {
	pristine, scratch string
	pristineSum       [32]byte
}

func newFuzzOracle(t testing.TB, src string) *fuzzOracle {
	t.Helper()
	o := &fuzzOracle{pristine: src, scratch: filepath.Join(t.TempDir(), "scratch.sqlite")}
	o.pristineSum = fileSum(t, src)
	o.restore(t)
	return o
}

func (o *fuzzOracle) restore(t testing.TB) {
	t.Helper()
	for _, suffix := range []string{"-journal", "-wal", "-shm"} {
		os.Remove(o.scratch + suffix)
	}
	in, err := os.Open(o.pristine)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.Create(o.scratch)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}

// fingerprint reads the connection state a statement might change.
func fingerprint(c *sqliteConn) string {
	var b strings.Builder
	fmt.Fprintf(&b, "autocommit=%d changes=%d ", sqlite3.Xsqlite3_get_autocommit(c.tls, c.db), sqlite3.Xsqlite3_total_changes64(c.tls, c.db))
	queries := []string{
		"SELECT count(*) FROM patients WHERE gender LIKE 'f'",
		"SELECT group_concat(name) FROM pragma_database_list WHERE name <> 'temp'", // temp opens on demand
		"SELECT count(*) FROM temp.sqlite_schema",
		"SELECT count(*) FROM sqlite_schema",
	}
	for _, p := range []string{"query_only", "foreign_keys", "recursive_triggers", "cache_size", "temp_store",
		"journal_mode", "user_version", "application_id", "writable_schema", "trusted_schema", "legacy_alter_table",
		"reverse_unordered_selects", "automatic_index", "busy_timeout", "defer_foreign_keys",
		"ignore_check_constraints", "secure_delete", "synchronous", "locking_mode", "mmap_size", "threads",
		"analysis_limit", "cell_size_check", "count_changes", "short_column_names", "full_column_names",
		"empty_result_callbacks", "checkpoint_fullfsync", "soft_heap_limit", "hard_heap_limit", "schema_version"} {
		queries = append(queries, "PRAGMA "+p)
	}
	for _, q := range queries {
		fmt.Fprintf(&b, "%s=%s ", q, firstValue(c, q))
	}
	return b.String()
}

// firstValue runs q and returns its first column of its first row as text
// (or the error).
func firstValue(c *sqliteConn, q string) string {
	stmt, _, err := c.prepare(q)
	if err != nil {
		return "error: " + err.Error()
	}
	if stmt == 0 {
		return "-"
	}
	defer c.finalize(stmt)
	switch rc := sqlite3.Xsqlite3_step(c.tls, stmt); rc {
	case sqlite3.SQLITE_ROW:
		return cText(sqlite3.Xsqlite3_column_text(c.tls, stmt, 0))
	case sqlite3.SQLITE_DONE:
		return "-"
	default:
		return "error: " + c.lastError(rc).Error()
	}
}

// judge compiles text on a fresh scratch connection, runs its first
// statement when it is read-only, and reports what SQLite says.
func (o *fuzzOracle) judge(t testing.TB, text string) oracleVerdict {
	t.Helper()
	var v oracleVerdict
	c, err := openConn(o.scratch, false)
	if err != nil {
		t.Fatalf("oracle: open scratch: %v", err)
	}
	defer c.close()
	effect := ""
	// Record actions; refuse only what must not run in this process.
	err = c.setAuthorizer(func(action int32, arg1, arg2 string, hasArg2 bool) *RefusedError {
		switch {
		case action == sqlite3.SQLITE_ATTACH || action == sqlite3.SQLITE_DETACH:
			effect = "attach"
			return refuse("", "oracle: no ATTACH")
		case action == sqlite3.SQLITE_PRAGMA && processWide[asciiLower(arg1)] && hasArg2:
			effect = "process-wide pragma"
			return refuse("", "oracle: no process-wide pragma")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	before := fingerprint(c)
	start := 0
	stmt, tail, err := c.prepare(text)
	if err != nil {
		v.compileErr = err.Error()
		if effect != "" {
			v.effect = effect
		}
		return v
	}
	for stmt == 0 && tail != "" && len(tail) < len(text[start:]) { // leading empty statements
		start = len(text) - len(tail)
		if stmt, tail, err = c.prepare(tail); err != nil {
			v.compileErr = err.Error()
			return v
		}
	}
	if stmt == 0 {
		v.compileErr = "no statement"
		return v
	}
	v.compiled = true
	v.readOnly = sqlite3.Xsqlite3_stmt_readonly(c.tls, stmt) != 0
	v.chunks = append(v.chunks, [2]int{start, len(text) - len(tail)})
	if v.readOnly && effect == "" {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		stop := context.AfterFunc(ctx, c.interrupt)
		for range 1000 {
			if rc := sqlite3.Xsqlite3_step(c.tls, stmt); rc != sqlite3.SQLITE_ROW {
				break
			}
		}
		stop()
		cancel()
	}
	c.finalize(stmt)
	if effect == "" && before != fingerprint(c) {
		effect = "connection state"
	}
	// The rest: SQLite's own statement boundaries (not run).
	v.single = true
	for rest := tail; rest != ""; {
		s, next, err := c.prepare(rest)
		if err != nil {
			v.single = false // SQLite sees more text that is no statement
			break
		}
		if s == 0 && len(next) == len(rest) {
			break
		}
		if s != 0 {
			v.single = false
			c.finalize(s)
			v.chunks = append(v.chunks, [2]int{len(text) - len(rest), len(text) - len(next)})
		}
		rest = next
	}
	c.close()
	if fileSumNoFail(o.scratch) != o.pristineSum {
		effect = "file"
		o.restore(t)
	}
	v.effect = effect
	return v
}

func fileSumNoFail(path string) [32]byte {
	var sum [32]byte
	f, err := os.Open(path)
	if err != nil {
		return sum
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	if err != nil {
		return sum
	}
	return sha256.Sum256(b)
}

// stricterByDesign reports whether a refusal is one of the places where
// the gate is documented to be stricter than "SQLite would only read".
func stricterByDesign(r *RefusedError) bool {
	switch {
	case r.Verb == "PRAGMA": // pragmas outside the read-only list, or not in their reading form
		return true
	case r.Verb == "EXPLAIN": // EXPLAIN of a refused statement, or of nothing
		return true
	case verbReasons[r.Verb] != "": // statements that are not reading (BEGIN, DETACH ...)
		return true
	case strings.Contains(r.Reason, "NUL character"):
		return true
	case strings.HasPrefix(r.Reason, "load_extension"): // refused even where SQLite would only fail to load
		return true
	}
	return false
}

// fuzzFixture is the fixture database, one runner used across all
// iterations of a process (so a refused statement that changed a
// connection would show in a later iteration), and the oracle.
type fuzzFixture struct {
	path   string
	sum    [32]byte
	runner *Runner
	oracle *fuzzOracle
}

// FuzzGateAgreesWithSQLite: for statements from SQLite's grammar with
// Unicode white space and comments between (and inside) their tokens, and
// for any text the fuzzer makes:
//
//   - when the gate passes a statement SQLite compiles, SQLite agrees that
//     it is one statement, read-only, and that running it changes nothing;
//   - when the gate refuses a statement SQLite would only read, the refusal
//     is one of the documented stricter cases (stricterByDesign);
//   - where SQLite compiled statements, the gate split the text at the same
//     places;
//   - the Runner refuses everything SQLite says is not only reading, and
//     after any statement the runner's answers to the reference queries
//     and the database file are unchanged.
func FuzzGateAgreesWithSQLite(f *testing.F) {
	for _, q := range append(append([]string{}, issue12Attacks...), hostileStatements...) {
		f.Add(q, []byte{})
	}
	for i := range 64 {
		f.Add("", []byte{byte(i), byte(i * 7), byte(i * 13), byte(i * 31), 1, 2, 3, byte(i), 5, byte(i * 3)})
	}
	f.Add("", []byte("\x00\x01\x01\x00\x00\x00"))
	fx := &fuzzFixture{path: newDemoLikeDB(f)}
	fx.sum = fileSum(f, fx.path)
	fx.runner = newTestRunner(f, fx.path, RunnerOptions{Timeout: 2 * time.Second})
	fx.oracle = newFuzzOracle(f, fx.path)
	f.Fuzz(func(t *testing.T, raw string, data []byte) {
		texts := []string{raw}
		if len(data) > 0 {
			texts = append(texts, (&stmtGen{data: data}).text())
		}
		for _, text := range texts {
			if text == "" || len(text) > 4000 {
				continue
			}
			checkGateAgainstSQLite(t, fx, text)
		}
	})
}

func checkGateAgainstSQLite(t *testing.T, fx *fuzzFixture, text string) {
	r, o := fx.runner, fx.oracle
	cs, gateErr := gate(text)
	var refused *RefusedError
	if gateErr != nil && !errors.As(gateErr, &refused) {
		t.Fatalf("gate(%q) = %v, want nil or a refusal", text, gateErr)
	}
	v := o.judge(t, text)

	// 1. What the gate passes, SQLite must judge reading.
	if gateErr == nil && !cs.unknownVerb && v.compiled && !v.reading() {
		t.Fatalf("gate passed %q but SQLite says: single=%v readOnly=%v effect=%q", text, v.single, v.readOnly, v.effect)
	}
	// The gate knows every statement SQLite has: what it does not
	// recognise, SQLite must not compile either.
	if gateErr == nil && cs.unknownVerb && v.compiled {
		t.Fatalf("the gate does not recognise %q (leading word %q), but SQLite compiles it", text, cs.verb)
	}
	// 2. What the gate refuses that SQLite would only read must be a
	// documented stricter case.
	if gateErr != nil && v.reading() && !stricterByDesign(refused) {
		t.Fatalf("gate refused %q (%s), but SQLite reads it as one harmless read-only statement", text, refused.Reason)
	}
	// 3. Statement boundaries: each statement the gate found lies inside
	// the chunk SQLite read as that statement.
	if !strings.Contains(asciiUpper(text), "TRIGGER") && strings.IndexByte(text, 0) < 0 {
		stmts := splitStatements(text)
		for k, chunk := range v.chunks {
			if k >= len(stmts) {
				t.Fatalf("SQLite read statement %d of %q at %v; the gate found only %d statements", k+1, text, chunk, len(stmts))
			}
			if s := stmts[k]; s.start < chunk[0] || s.end > chunk[1] {
				t.Fatalf("statement %d of %q: gate %q, SQLite %q", k+1, text, text[s.start:s.end], text[chunk[0]:chunk[1]])
			}
		}
		if v.compiled && v.single && len(stmts) > 1 {
			t.Fatalf("SQLite reads %q as one statement, the gate as %d", text, len(stmts))
		}
	}
	// 4. The runner: refuses what is not reading, and nothing it does
	// changes later answers or the file.
	res, qerr := r.Query(context.Background(), text)
	cerr := r.Check(context.Background(), text)
	if qerr == nil && !v.reading() {
		t.Fatalf("Runner.Query ran %q (%d rows) but SQLite says: compiled=%v single=%v readOnly=%v effect=%q",
			text, len(res.Rows), v.compiled, v.single, v.readOnly, v.effect)
	}
	if cerr == nil && !v.reading() {
		t.Fatalf("Runner.Check accepted %q but SQLite says: compiled=%v single=%v readOnly=%v effect=%q",
			text, v.compiled, v.single, v.readOnly, v.effect)
	}
	var te *TimeoutError
	if errors.As(qerr, &te) {
		return // not a verdict; the generator makes no long statements, but the fuzzer might
	}
	checkReferenceAnswers(t, r, text)
	if sum := fileSum(t, fx.path); sum != fx.sum {
		t.Fatalf("the database file changed after %q", text)
	}
}

package datasets

import (
	"context"
	"errors"
	"strings"
	"testing"
)

// TestTokenizeSQLMatchesSQLiteTokenizer pins TokenizeSQL's tokens on the
// places where SQLite's tokenizer differs from intuition.
func TestTokenizeSQLMatchesSQLiteTokenizer(t *testing.T) {
	cases := []struct{ src, want string }{
		{"\ufeffPRAGMA x", "w:PRAGMA w:x"},
		{"SELECT\ufeff1", "w:SELECT\ufeff1"}, // inside a word the BOM is part of it
		{"SELECT \ufeff1", "w:SELECT n:1"},
		{"\u00a0PRAGMA", "w:\u00a0PRAGMA"}, // U+00A0 is a word character
		{"\u3000PRAGMA", "w:\u3000PRAGMA"},
		{"\u2003SELECT", "w:\u2003SELECT"},
		{"\vPRAGMA", "!:\v w:PRAGMA"}, // \v cannot start white space
		{" \vPRAGMA", "w:PRAGMA"},     // but continues it
		{"\fSELECT", "w:SELECT"},
		{"SELECT 1\x00; DROP TABLE t", "w:SELECT n:1"}, // NUL ends the text
		{"SELECT $x(');PRAGMA/**/a=1;--')", "w:SELECT v:$x(') ;:; w:PRAGMA w:a p:= n:1 ;:;"}, // the parameter ends at ')'
		{"SELECT $x(';PRAGMA a", "w:SELECT !:$x(';PRAGMA w:a"},                               // or at white space
		{"SELECT :a::b, @c, #d, ?12, ?", "w:SELECT v::a::b p:, v:@c p:, v:#d p:, v:?12 p:, v:?"},
		{"SELECT x'0a1B', x'abc', X''", "w:SELECT b:x'0a1B' p:, !:x'abc' p:, b:X''"},
		{"SELECT 1e+5, .5, 0x1F, 1_000, 12abc, 1.2.3", "w:SELECT n:1e+5 p:, n:.5 p:, n:0x1F p:, n:1_000 p:, !:12abc p:, n:1.2 n:.3"},
		{"SELECT 'it''s', \"a\"\"b\", `c`, [d e]", "w:SELECT s:'it''s' p:, q:\"a\"\"b\" p:, q:`c` p:, q:[d e]"},
		{"SELECT 'open", "w:SELECT !:'open"},
		{"SELECT [open", "w:SELECT !:[open"},
		{"SELECT 1 /* open", "w:SELECT n:1"},
		{"SELECT 1 /*", "w:SELECT n:1 p:/ p:*"}, // "/*" at the very end is not a comment
		{"a->b->>c||d<>e!=f==g<=h>=i<<j>>k", "w:a p:-> w:b p:->> w:c p:|| w:d p:<> w:e p:!= w:f p:== w:g p:<= w:h p:>= w:i p:<< w:j p:>> w:k"},
		{"SELECT ! 1, \\, ^, {", "w:SELECT !:! n:1 p:, !:\\ p:, !:^ p:, !:{"},
		{"ſelect", "w:ſelect"},
		{"\xefPRAGMA", "w:\xefPRAGMA"}, // a lone 0xEF starts a word
		{"-- c\nSELECT--", "w:SELECT"},
	}
	kind := map[SQLTokenKind]string{TokenWord: "w", TokenQuoted: "q", TokenString: "s", TokenNumber: "n",
		TokenSemicolon: ";", TokenPunct: "p", TokenBlob: "b", TokenVariable: "v", TokenIllegal: "!"}
	for _, c := range cases {
		var got []string
		for _, tok := range TokenizeSQL(c.src) {
			got = append(got, kind[tok.Kind]+":"+tok.Text(c.src))
		}
		if g := strings.Join(got, " "); g != c.want {
			t.Errorf("TokenizeSQL(%q)\n got %q\nwant %q", c.src, g, c.want)
		}
	}
}

// TestRunnerAuthorizerRefusesWhatTheGateMightMiss drives the connection's
// authorizer directly, as if the gate had let these through.
func TestRunnerAuthorizerRefusesWhatTheGateMightMiss(t *testing.T) {
	path := newDemoLikeDB(t)
	r := newTestRunner(t, path, RunnerOptions{})
	ctx := context.Background()
	for _, q := range []string{
		"PRAGMA case_sensitive_like=1",
		"PRAGMA query_only=0",
		"EXPLAIN PRAGMA query_only=0",
		"PRAGMA writable_schema=1",
		"SELECT * FROM pragma_optimize",
		"SELECT * FROM pragma_integrity_check",
		"ATTACH '/tmp/clinsight-issue12.db' AS x",
		"BEGIN",
		"SELECT load_extension('x')",
		"CREATE TEMP TABLE t(x)",
		"WITH a AS (SELECT 1) DELETE FROM patients",
	} {
		cs := checkedStatement{text: q, verb: "SELECT"}
		c, err := r.open(ctx)
		if err != nil {
			t.Fatal(err)
		}
		stmt, err := r.compile(ctx, c, cs)
		if err == nil {
			// pragma_* functions run their PRAGMA only when stepped.
			_, err = r.read(ctx, c, stmt)
			c.finalize(stmt)
		}
		c.close()
		var refused *RefusedError
		if !errors.As(err, &refused) {
			t.Errorf("%q: %v, want a refusal", q, err)
		} else {
			t.Logf("%-45q → %s", q, refused.Reason)
		}
		checkReferenceAnswers(t, r, q)
	}
}

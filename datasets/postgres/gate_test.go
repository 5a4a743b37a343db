package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
)

func TestLex(t *testing.T) {
	kinds := map[tokenKind]string{tokWord: "w", tokQuoted: "q", tokString: "s", tokDollar: "$", tokNumber: "n",
		tokParam: "p", tokOp: "o", tokPunct: ".", tokError: "!"}
	for _, c := range []struct{ src, want string }{
		{"SELECT a, b FROM t;", "w:SELECT w:a .:, w:b w:FROM w:t .:;"},
		{"select 'it''s' AS \"Quo\"\"ted\"", "w:select s:'it''s' w:AS q:\"Quo\"\"ted\""},
		{"E'a\\'b' x", "s:E'a\\'b' w:x"},
		{"'a\\' x", "s:'a\\' w:x"}, // standard_conforming_strings: no escape
		{"$$a;b$$ $t$x$$y$t$ $1 a$b", "$:$$a;b$$ $:$t$x$$y$t$ p:$1 w:a$b"},
		{"/* a /* nested */ still */ x -- c\ny", "w:x w:y"},
		{"1.5e3 .5 0x1F 1_000", "n:1.5e3 n:.5 n:0x1F n:1_000"},
		{"a::int <> b >= c || d --x", "w:a .::: w:int o:<> w:b o:>= w:c o:|| w:d"},
		{"a+-- comment\nb", "w:a o:+ w:b"},
		{"a */ b", "w:a o:*/ w:b"},
		{`U&"d\0061t" U&'x'`, `q:U&"d\0061t" s:U&'x'`},
		{"B'101' X'ff' N'n'", "s:B'101' s:X'ff' s:N'n'"},
		{"/* open", "!:/* open"},
		{"'open", "!:'open"},
		{"$q$ open", "!:$q$ open"},
		{"é_ident", "w:é_ident"},
	} {
		var parts []string
		for _, tok := range lex(c.src) {
			parts = append(parts, kinds[tok.kind]+":"+tok.text(c.src))
		}
		if got := strings.Join(parts, " "); got != c.want {
			t.Errorf("lex(%q)\n got %s\nwant %s", c.src, got, c.want)
		}
	}
}

func TestGateSpellingsOfRefusedNames(t *testing.T) {
	var names []string
	for n := range refusedFunctions {
		names = append(names, n)
	}
	for _, p := range refusedPrefixes {
		names = append(names, p.prefix+"x")
	}
	for _, n := range names {
		for _, q := range []string{
			"SELECT %s(1)",
			"SELECT %s (1)",
			"select %s/**/(1)",
			"SELECT pg_catalog.%s(1)",
			`SELECT "%s"(1)`,
			"SELECT * FROM %s(1) AS x",
			"SELECT 1 AS %s",
			"WITH x AS (SELECT %s(1)) SELECT * FROM x",
			"EXPLAIN ANALYZE SELECT %s(1)",
			"SELECT (SELECT %s(1))",
		} {
			q := fmt.Sprintf(q, n)
			for _, v := range []string{q, strings.ToUpper(q)} {
				var refused *datasets.RefusedError
				if _, err := gate(v); !errors.As(err, &refused) {
					t.Errorf("gate passed %q", v)
				}
			}
		}
		// Inside a string, a dollar quote or a comment the name is text.
		for _, q := range []string{"SELECT '%s(1)'", "SELECT $$%s(1)$$", "SELECT 1 -- %s(1)", "SELECT 1 /* %s(1) */"} {
			if _, err := gate(fmt.Sprintf(q, n)); err != nil {
				t.Errorf("gate refused %q: %v", fmt.Sprintf(q, n), err)
			}
		}
	}
}

// FuzzGate checks the lexer and gate on any text: no panic, tokens in
// order within the text, and a statement that passes is one statement
// whose text lies within the input.
func FuzzGate(f *testing.F) {
	for _, q := range attackCorpus {
		f.Add(q)
	}
	for _, q := range []string{"SELECT 1", "SELECT $a$ x $a$", "SELECT E'\\\\'", "/* /* */ */ SELECT 1", "SELECT 'a'';'"} {
		f.Add(q)
	}
	f.Fuzz(func(t *testing.T, q string) {
		end := 0
		for _, tok := range lex(q) {
			if tok.start < end || tok.end < tok.start || tok.end > len(q) {
				t.Fatalf("token %+v out of order in %q", tok, q)
			}
			end = tok.end
		}
		cs, err := gate(q)
		if err != nil {
			return
		}
		if !strings.Contains(q, cs.text) || cs.text == "" {
			t.Fatalf("statement %q not within %q", cs.text, q)
		}
		for _, tok := range lex(cs.text) {
			if tok.kind == tokPunct && tok.text(cs.text) == ";" {
				t.Fatalf("a passed statement holds a ';': %q", cs.text)
			}
		}
	})
}

// gateAgreementCorpus are inputs for FuzzEngineLeavesStateUnchanged beside
// the attack corpus: reads, and texts whose reading depends on exact
// lexing (strings, dollar quotes, nested comments, escapes).
var gateAgreementCorpus = []string{
	"SELECT count(*) FROM clin.patients",
	"SELECT 'a;b', $$c;d$$, E'\\';' FROM clin.patients",
	"SELECT 1 /* ; DELETE FROM clin.admissions; */",
	"SELECT 1 /* /* */ ; DELETE FROM clin.admissions; */",
	"SELECT 1 -- ; DELETE FROM clin.admissions",
	"SELECT $x$ $$ ; DELETE $x$",
	"SELECT $x$ ; $y$ ; DELETE FROM clin.admissions; $x$",
	"SELECT 'it''s'; DELETE FROM clin.admissions",
	"SELECT E'\\'; DELETE FROM clin.admissions; --'",
	"SELECT a$$b FROM (SELECT 1 AS a$$b) s",
	"SELECT U&'\\0041' AS x",
	"SELECT 1e; DELETE FROM clin.admissions",
	"SELECT 0x; DELETE FROM clin.admissions",
	"SELECT 1 FROM clin.patients WHERE gender = 'F'\u00a0; DELETE FROM clin.admissions",
	"SELECT\u000b1; DELETE FROM clin.admissions",
	"SELECT \"pg_terminate_backend\" FROM (SELECT 1 AS \"pg_terminate_backend\") s",
	"SELECT nextval FROM (SELECT 1 AS nextval) s",
	"TABLE clin.patients",
	"VALUES (1); VALUES (2)",
	"EXPLAIN (FORMAT JSON) SELECT * FROM clin.admissions",
}

// FuzzEngineLeavesStateUnchanged runs any text through the engine as the
// superuser and checks the database is unchanged afterwards (tables, the
// sequence, server files, locks, slots, prepared transactions, large
// objects, roles, settings, the victim session), and that whenever the
// gate lets a text through, the server also reads it as one statement. Its
// seeds (the attack corpus and gateAgreementCorpus) run with every go
// test; `go test -fuzz FuzzEngineLeavesStateUnchanged` explores further.
func FuzzEngineLeavesStateUnchanged(f *testing.F) {
	for _, q := range attackCorpus {
		if !strings.Contains(q, "%[") {
			f.Add(q)
		}
	}
	for _, q := range gateAgreementCorpus {
		f.Add(q)
	}
	a := newAttackEnv(f)
	e := a.d.open(f, datasets.RunnerOptions{MaxRows: 100})
	before := a.state(f)
	f.Fuzz(func(t *testing.T, q string) {
		_, gateErr := gate(q)
		_, err := e.Query(context.Background(), q)
		if gateErr == nil && err != nil && strings.Contains(err.Error(), "multiple commands") {
			t.Errorf("the gate read one statement where the server read several: %q", q)
		}
		if gateErr != nil && err == nil {
			t.Errorf("the gate refused %q but the engine ran it", q)
		}
		if after := a.state(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Fatalf("%q changed the database:\nbefore %+v\nafter  %+v", q, before, after)
		}
	})
}

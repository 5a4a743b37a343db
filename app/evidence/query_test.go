package evidence

import (
	"context"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestToFTS5(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`cancer`, `"cancer"`},
		{`breast cancer`, `("breast" AND "cancer")`},
		{`"breast cancer"`, `"breast cancer"`},
		{`“breast cancer”[tiab]`, `{title abstract} : "breast cancer"`},
		{`cancer[ti]`, `title : "cancer"`},
		{`cancer [Title]`, `title : "cancer"`},
		{`neoplasms[MeSH Terms]`, `mesh : "neoplasms"`},
		{`x[ab] OR y[Title/Abstract]`, `(abstract : "x" OR {title abstract} : "y")`},
		{`canc*`, `"canc" *`},
		{`"breast canc*"[ti]`, `title : "breast canc" *`},
		{`non-small-cell`, `"non-small-cell"`},
		{`a OR b AND c`, `(("a" OR "b") AND "c")`}, // PubMed: left to right
		{`a OR (b AND c)`, `("a" OR ("b" AND "c"))`},
		{`a NOT b OR c`, `(("a" NOT "b") OR "c")`},
		{`(a or b) and not_x`, `(("a" OR "b") AND "not_x")`},
		{`((immune checkpoint) OR ICI*) AND (nephritis[ti] OR "acute kidney injury") NOT review[ti]`,
			`(((("immune" AND "checkpoint") OR "ICI" *) AND (title : "nephritis" OR "acute kidney injury")) NOT title : "review")`},
		{`5-fluorouracil`, `"5-fluorouracil"`},
		{`Müller`, `"Müller"`},
	} {
		got, err := ToFTS5(c.in)
		if err != nil || got != c.want {
			t.Errorf("ToFTS5(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
}

func TestQueryErrorsPointAtPosition(t *testing.T) {
	for _, c := range []struct {
		in   string
		col  int
		want string
	}{
		{``, 1, "empty"},
		{`   `, 1, "empty"},
		{`cancer AND`, 11, "AND needs a term after it"},
		{`AND cancer`, 1, "AND needs a term before it"},
		{`NOT cancer`, 1, "NOT needs a term before it"},
		{`cancer OR OR x`, 11, "OR needs a term before it"},
		{`(cancer OR x`, 1, "this ( is never closed"},
		{`cancer OR x)`, 12, "unmatched closing parenthesis"},
		{`cancer ()`, 9, "empty parentheses"},
		{`cancer AND "breast`, 12, `closing " is missing`},
		{`cancer[xx]`, 7, "unknown field tag [xx]"},
		{`cancer[ti`, 7, "closing ] is missing"},
		{`[ti]cancer`, 1, "field tag must follow a term"},
		{`(a OR b)[ti]`, 9, "not to a group"},
		{`can*cer`, 4, "only allowed at the end"},
		{`c*`, 1, "at least two letters"},
		{`a AND -`, 7, "not a searchable term"},
		{`a AND ""`, 7, "phrase has no words"},
		{`größe AND (x OR`, 16, "OR needs a term after it"},
		{`größe AND (`, 12, "term is missing at the end"},
		{`a ]`, 3, "] without an opening ["},
	} {
		_, err := ParseQuery(c.in)
		var qe *QueryError
		if !errors.As(err, &qe) || !strings.Contains(qe.Msg, c.want) || qe.Column() != c.col {
			t.Errorf("ParseQuery(%q) = %v; want %q at position %d", c.in, err, c.want, c.col)
			continue
		}
		if p := qe.Pointer(); !strings.HasSuffix(p, strings.Repeat(" ", c.col-1)+"^") {
			t.Errorf("Pointer(%q) = %q", c.in, p)
		}
	}
}

func TestQueryString(t *testing.T) {
	n, err := ParseQuery(`(cancer[title] OR "solid tumo*") leuk*[mh]`)
	if err != nil {
		t.Fatal(err)
	}
	if got := n.String(); got != `((cancer[ti] OR "solid tumo*") AND leuk*[mh])` {
		t.Errorf("String() = %q", got)
	}
	// The canonical form parses to the same FTS5 expression.
	again, err := ParseQuery(n.String())
	if err != nil || again.FTS5() != n.FTS5() {
		t.Errorf("round trip: %v %v", again, err)
	}
}

// FuzzParseQuery checks that any input either parses to an expression that
// SQLite's FTS5 accepts and that round-trips through String, or fails with
// a *QueryError whose position lies inside the query.
func FuzzParseQuery(f *testing.F) {
	for _, s := range []string{`cancer`, `a OR (b AND c)`, `"x y*"[tiab] NOT z[mh]`, `((`, `a[`, `"`, `*`, `a AND`, `größe*`, `x[ti] y[ab]`, "\xff", `“a”`} {
		f.Add(s)
	}
	db, _ := openDB(f)
	importFixtures(f, db)
	c := NewCorpus(db)
	f.Fuzz(func(t *testing.T, q string) {
		n, err := ParseQuery(q)
		if err != nil {
			var qe *QueryError
			if !errors.As(err, &qe) || qe.Pos < 0 || qe.Pos > len(q) {
				t.Fatalf("ParseQuery(%q): %v", q, err)
			}
			return
		}
		if !utf8.ValidString(q) {
			return // FTS5 text must be UTF-8; the CLI and UI only pass valid text
		}
		if _, err := c.Search(context.Background(), q, 1); err != nil {
			t.Fatalf("Search(%q) (FTS5 %s): %v", q, n.FTS5(), err)
		}
		again, err := ParseQuery(n.String())
		if err != nil || again.FTS5() != n.FTS5() {
			t.Fatalf("round trip of %q via %q: %v", q, n.String(), err)
		}
	})
}

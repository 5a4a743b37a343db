package cohort

import (
	"strings"

	"github.com/clinsight/clinsight/datasets"
)

// sqlToken is a token of SQL text: an identifier (bare or quoted), a string
// literal, a number or a punctuation character.
type sqlToken struct {
	text   string // identifier without quotes; literal with its quotes
	ident  bool
	str    bool
	quoted bool
}

// sqlTokens splits SQL into tokens with the data layer's SQLite tokenizer
// (comments dropped; unterminated strings and comments run to the end of
// the text).
func sqlTokens(src string) []sqlToken {
	toks := datasets.TokenizeSQL(src)
	out := make([]sqlToken, 0, len(toks))
	for _, t := range toks {
		switch t.Kind {
		case datasets.TokenWord:
			out = append(out, sqlToken{text: t.Text(src), ident: true})
		case datasets.TokenQuoted:
			name, _ := t.Identifier(src)
			out = append(out, sqlToken{text: name, ident: true, quoted: true})
		case datasets.TokenString:
			out = append(out, sqlToken{text: t.Text(src), str: true})
		default: // numbers, semicolons, punctuation
			out = append(out, sqlToken{text: t.Text(src)})
		}
	}
	return out
}

// ReferencedTables returns the tables of the catalog that query reads:
// names following FROM or JOIN (and further names of a comma-separated FROM
// list) and names qualifying a column ("t.col"). Names inside string
// literals and comments are not references. Each table is listed once, in
// order of first reference, with the catalog's spelling.
func ReferencedTables(query string, cat *datasets.Catalog) []string {
	toks := sqlTokens(query)
	var out []string
	add := func(name string) {
		t, ok := cat.Table(name)
		if !ok {
			return
		}
		for _, o := range out {
			if o == t.Name {
				return
			}
		}
		out = append(out, t.Name)
	}
	// froms holds the parenthesis depths at which a FROM list is open.
	var froms []int
	depth := 0
	for i, t := range toks {
		up := strings.ToUpper(t.text)
		switch {
		case t.text == "(" && !t.str && !t.ident:
			depth++
		case t.text == ")" && !t.str && !t.ident:
			depth--
			for len(froms) > 0 && froms[len(froms)-1] > depth {
				froms = froms[:len(froms)-1]
			}
		case !t.quoted && (up == "FROM" || up == "JOIN"):
			if len(froms) == 0 || froms[len(froms)-1] != depth {
				froms = append(froms, depth)
			}
			if i+1 < len(toks) && toks[i+1].ident {
				add(toks[i+1].text)
			}
		case t.text == "," && !t.str && len(froms) > 0 && froms[len(froms)-1] == depth:
			if i+1 < len(toks) && toks[i+1].ident {
				add(toks[i+1].text)
			}
		case !t.quoted && t.ident && isClauseKeyword(up):
			if len(froms) > 0 && froms[len(froms)-1] == depth {
				froms = froms[:len(froms)-1]
			}
		}
		if t.ident && i+2 < len(toks) && toks[i+1].text == "." && toks[i+2].ident {
			add(t.text)
			add(t.text + "." + toks[i+2].text) // schema.table (PostgreSQL)
		}
	}
	return out
}

// isClauseKeyword reports whether a keyword ends a FROM list.
func isClauseKeyword(up string) bool {
	switch up {
	case "WHERE", "GROUP", "ORDER", "HAVING", "LIMIT", "UNION", "INTERSECT", "EXCEPT", "WINDOW", "ON", "USING", "SELECT":
		return true
	}
	return false
}

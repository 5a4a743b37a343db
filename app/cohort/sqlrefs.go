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

// sqlTokens splits SQL into tokens following SQLite's lexical rules for
// comments, strings and quoted identifiers. It is lenient: unterminated
// strings and comments run to the end of the text.
func sqlTokens(src string) []sqlToken {
	var out []sqlToken
	isWord := func(c byte) bool {
		return c == '_' || c == '$' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c >= 0x80
	}
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f':
			i++
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				i = len(src)
			} else {
				i += j + 1
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				i = len(src)
			} else {
				i += j + 4
			}
		case c == '\'' || c == '"' || c == '`' || c == '[':
			end := c
			if c == '[' {
				end = ']'
			}
			j := i + 1
			var b strings.Builder
			for j < len(src) {
				if src[j] == end {
					if end != ']' && j+1 < len(src) && src[j+1] == end {
						b.WriteByte(end)
						j += 2
						continue
					}
					break
				}
				b.WriteByte(src[j])
				j++
			}
			if c == '\'' {
				out = append(out, sqlToken{text: src[i:min(j+1, len(src))], str: true})
			} else {
				out = append(out, sqlToken{text: b.String(), ident: true, quoted: true})
			}
			i = min(j+1, len(src))
		case isWord(c):
			j := i
			for j < len(src) && isWord(src[j]) {
				j++
			}
			w := src[i:j]
			out = append(out, sqlToken{text: w, ident: !(w[0] >= '0' && w[0] <= '9')})
			i = j
		default:
			out = append(out, sqlToken{text: src[i : i+1]})
			i++
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

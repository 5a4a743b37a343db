package cohort

import (
	"strings"

	"github.com/clinsight/clinsight/datasets"
)

// literalRefs finds the string literals of query compared with a column of
// the catalog: "col = 'x'", "t.col != 'x'", "alias.col IN ('x', 'y')",
// "LOWER(col) LIKE '%x%'", "col COLLATE NOCASE = 'x'", with table aliases
// resolved. Literals compared with anything else (a function of several
// arguments, another literal, a sub-query's column) are not returned.
func (g *Grounder) literalRefs(query string) []literalRef {
	toks := datasets.TokenizeSQL(query)
	aliases := tableAliases(query, toks, g.cat)
	tables := ReferencedTables(query, g.cat)
	var out []literalRef
	for i, t := range toks {
		if t.Kind != datasets.TokenString {
			continue
		}
		op, end := operatorBefore(query, toks, i)
		if op == "" || end < 0 {
			continue
		}
		ref, ok := columnBefore(query, toks, end)
		if !ok {
			continue
		}
		ref.start, ref.end, ref.op = t.Start, t.End, op
		ref.value = strings.ReplaceAll(strings.TrimSuffix(strings.TrimPrefix(t.Text(query), "'"), "'"), "''", "'")
		if ref.table != "" {
			name, ok := aliases[strings.ToLower(ref.table)]
			if !ok {
				continue // a sub-query or an unknown name
			}
			ref.table = name
		} else {
			for _, tn := range tables {
				if tb, ok := g.cat.Table(tn); ok {
					if _, ok := tb.Column(ref.column); ok {
						ref.table = tb.Name
						break
					}
				}
			}
			if ref.table == "" {
				continue
			}
		}
		if tb, ok := g.cat.Table(ref.table); ok {
			if c, ok := tb.Column(ref.column); ok {
				ref.column = c.Name
				out = append(out, ref)
			}
		}
		if len(out) == maxGroundLiterals {
			break
		}
	}
	return out
}

// tableAliases maps the lower-case names a query may qualify columns with
// (the catalog's table names, and the aliases given to them after FROM,
// JOIN or a comma: "FROM prescriptions p", "JOIN d_items AS di") to the
// catalog's table names.
func tableAliases(src string, toks []datasets.SQLToken, cat *datasets.Catalog) map[string]string {
	out := map[string]string{}
	for _, t := range cat.Tables {
		out[strings.ToLower(t.Name)] = t.Name
	}
	ident := func(k int) (string, bool) {
		if k < 0 || k >= len(toks) {
			return "", false
		}
		return toks[k].Identifier(src)
	}
	for k := 1; k < len(toks); k++ {
		prev := strings.ToUpper(toks[k-1].Text(src))
		if prev != "FROM" && prev != "JOIN" && prev != "," {
			continue
		}
		name, ok := ident(k)
		if !ok {
			continue
		}
		next := k + 1
		if k+2 < len(toks) && toks[k+1].Text(src) == "." { // schema.table (PostgreSQL)
			if rel, ok := ident(k + 2); ok {
				name, next = name+"."+rel, k+3
			}
		}
		tb, ok := cat.Table(name)
		if !ok {
			continue
		}
		if w, ok := ident(next); ok && strings.EqualFold(w, "AS") && toks[next].Kind == datasets.TokenWord {
			next++
		}
		if a, ok := ident(next); ok && (toks[next].Kind == datasets.TokenQuoted || !followsTable(a)) {
			out[strings.ToLower(a)] = tb.Name
		}
	}
	return out
}

// followsTable reports whether a word after a table name is a keyword (so
// not an alias).
func followsTable(w string) bool {
	switch strings.ToUpper(w) {
	case "WHERE", "ON", "USING", "JOIN", "INNER", "LEFT", "RIGHT", "FULL", "OUTER", "CROSS", "NATURAL", "GROUP", "ORDER",
		"HAVING", "LIMIT", "UNION", "INTERSECT", "EXCEPT", "WINDOW", "AS", "INDEXED", "NOT", "AND", "OR", "SELECT", "FROM":
		return true
	}
	return false
}

// operatorBefore returns the comparison a string literal (token i) is the
// right side of — "=", "!=", "IN", "NOT IN", "LIKE", "NOT LIKE", "ILIKE",
// "NOT ILIKE" — and the
// index of the last token of its left side; "" when it is none of these.
func operatorBefore(src string, toks []datasets.SQLToken, i int) (string, int) {
	text := func(k int) string {
		if k < 0 {
			return ""
		}
		return strings.ToUpper(toks[k].Text(src))
	}
	k := i - 1
	switch text(k) {
	case "=", "==":
		return "=", k - 1
	case "!=", "<>":
		return "!=", k - 1
	case "LIKE", "ILIKE": // ILIKE: PostgreSQL's case-insensitive LIKE
		if text(k-1) == "NOT" {
			return "NOT " + text(k), k - 2
		}
		return text(k), k - 1
	case ",", "(":
		for k >= 0 && (text(k) == "," || toks[k].Kind == datasets.TokenString) {
			k--
		}
		if text(k) != "(" || text(k-1) != "IN" {
			return "", -1
		}
		// The list must hold only literals up to its closing parenthesis.
		for j := i + 1; j < len(toks); j++ {
			if t := text(j); t == ")" {
				break
			} else if t != "," && toks[j].Kind != datasets.TokenString {
				return "", -1
			}
		}
		if text(k-2) == "NOT" {
			return "NOT IN", k - 3
		}
		return "IN", k - 2
	}
	return "", -1
}

// columnBefore reads the column expression ending at token end: a column
// ("col", "t.col"), optionally wrapped in LOWER, UPPER or TRIM, optionally
// followed by COLLATE NOCASE. The returned ref's table is the qualifier as
// written ("" when none).
func columnBefore(src string, toks []datasets.SQLToken, end int) (literalRef, bool) {
	var ref literalRef
	text := func(k int) string {
		if k < 0 || k >= len(toks) {
			return ""
		}
		return strings.ToUpper(toks[k].Text(src))
	}
	if text(end) == "NOCASE" && text(end-1) == "COLLATE" {
		ref.nocase = true
		end -= 2
	}
	start := end
	if text(end) == ")" {
		open := end - 1
		for open >= 0 && text(open) != "(" {
			open--
		}
		switch fn := text(open - 1); fn {
		case "LOWER", "UPPER", "TRIM":
			ref.fn = fn
		default:
			return ref, false
		}
		start, end = open+1, end-1
		if start > end {
			return ref, false
		}
	}
	name, ok := toks[end].Identifier(src)
	if !ok || isSQLWord(name) && toks[end].Kind == datasets.TokenWord {
		return ref, false
	}
	ref.column = name
	first := end
	if end >= 2 && text(end-1) == "." {
		q, ok := toks[end-2].Identifier(src)
		if !ok {
			return ref, false
		}
		ref.table = q
		first = end - 2
	}
	if ref.fn != "" && first != start {
		return ref, false // more than a column inside the function
	}
	return ref, true
}

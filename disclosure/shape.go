package disclosure

import (
	"strings"

	"github.com/clinsight/clinsight/datasets"
)

// ColumnKind says how suppression treats a result column.
type ColumnKind int

// Column kinds.
const (
	// Key is a grouping or plain column: never suppressed.
	Key ColumnKind = iota
	// Count is count(...) or a count-like integer column.
	Count
	// Statistic is any other aggregate (avg, sum, min, max, …).
	Statistic
)

func (k ColumnKind) String() string {
	switch k {
	case Count:
		return "count"
	case Statistic:
		return "statistic"
	}
	return "key"
}

// Shape is what suppression needs to know of a statement.
type Shape struct {
	// Aggregate is set when the statement aggregates at its top level: an
	// aggregate function (not a window function) in the top-level select
	// list, or a top-level GROUP BY; for a compound SELECT, in every part.
	Aggregate bool
	// Nested is set when the statement is not an aggregate at its top level
	// but aggregates inside (a CTE or subquery with GROUP BY or an
	// aggregate function), as in WITH c AS (SELECT g, count(*) n … GROUP BY
	// g) SELECT * FROM c.
	Nested bool
	// Compound is set for UNION, INTERSECT and EXCEPT.
	Compound bool
	// Items are the kinds of the top-level select list's items, in order
	// (nil for a compound statement). A "*" item makes Star true.
	Items []ColumnKind
	// Exprs are the items' expressions as written (without aliases), in
	// the order of Items.
	Exprs []string
	// Star is set when the select list has * or table.*.
	Star bool
	// Tables are the names (or aliases) of the top-level FROM clause, to
	// qualify the individual column with.
	Tables []string

	listEnd int // byte offset where the top-level select list ends
}

// aggregateFuncs are the aggregate functions of SQLite and PostgreSQL that
// matter here (min and max only with one argument).
var aggregateFuncs = map[string]bool{
	"count": true, "sum": true, "total": true, "avg": true, "min": true, "max": true,
	"group_concat": true, "string_agg": true, "json_group_array": true, "json_group_object": true,
	"jsonb_agg": true, "json_agg": true, "array_agg": true, "median": true, "mode": true,
	"stdev": true, "stddev": true, "stddev_samp": true, "stddev_pop": true,
	"variance": true, "var_samp": true, "var_pop": true, "percentile": true,
	"percentile_cont": true, "percentile_disc": true, "count_if": true,
	"bool_and": true, "bool_or": true, "every": true,
}

// clauseWords end a select list or a FROM clause.
var clauseWords = map[string]bool{
	"FROM": true, "WHERE": true, "GROUP": true, "HAVING": true, "WINDOW": true,
	"ORDER": true, "LIMIT": true, "UNION": true, "INTERSECT": true, "EXCEPT": true,
}

// lexed is a statement's tokens with their nesting depth.
type lexed struct {
	src   string
	toks  []datasets.SQLToken
	depth []int
}

func lex(src string) lexed {
	all := datasets.TokenizeSQL(src)
	l := lexed{src: src}
	d := 0
	for _, t := range all {
		if t.Kind == datasets.TokenSemicolon {
			break // one statement: the runner refuses more
		}
		text := t.Text(src)
		if t.Kind == datasets.TokenPunct && text == ")" {
			d--
		}
		l.toks = append(l.toks, t)
		l.depth = append(l.depth, d)
		if t.Kind == datasets.TokenPunct && text == "(" {
			d++
		}
	}
	return l
}

// word returns token i's keyword (upper case) or "".
func (l lexed) word(i int) string {
	if i < 0 || i >= len(l.toks) || l.toks[i].Kind != datasets.TokenWord {
		return ""
	}
	return strings.ToUpper(l.toks[i].Text(l.src))
}

func (l lexed) punct(i int, p string) bool {
	return i >= 0 && i < len(l.toks) && l.toks[i].Kind == datasets.TokenPunct && l.toks[i].Text(l.src) == p
}

// closing returns the index of the ")" matching the "(" at i.
func (l lexed) closing(i int) int {
	for j := i + 1; j < len(l.toks); j++ {
		if l.depth[j] == l.depth[i] && l.punct(j, ")") {
			return j
		}
	}
	return len(l.toks)
}

// Analyze finds the shape of one statement with SQLite's tokenizer (it is
// not a parser: it looks at the top-level SELECT only).
func Analyze(query string) Shape {
	l := lex(query)
	var selects []int
	compound := false
	for i := range l.toks {
		if l.depth[i] != 0 {
			continue
		}
		switch l.word(i) {
		case "SELECT":
			selects = append(selects, i)
		case "UNION", "INTERSECT", "EXCEPT":
			compound = true
		}
	}
	var sh Shape
	sh.Nested = l.aggregatesInside()
	if len(selects) == 0 {
		return sh
	}
	if compound || len(selects) > 1 {
		sh.Compound = true
		sh.Aggregate = true
		for k, s := range selects {
			end := len(l.toks)
			if k+1 < len(selects) {
				end = selects[k+1]
			}
			c := l.core(s, end)
			sh.Aggregate = sh.Aggregate && c.Aggregate
		}
		sh.Nested = sh.Nested && !sh.Aggregate
		return sh
	}
	c := l.core(selects[0], len(l.toks))
	c.Nested = sh.Nested && !c.Aggregate
	return c
}

// aggregatesInside reports whether any nested query aggregates.
func (l lexed) aggregatesInside() bool {
	for i := range l.toks {
		if l.depth[i] == 0 {
			continue
		}
		if l.word(i) == "GROUP" && l.word(i+1) == "BY" {
			return true
		}
		if l.isAggregateCall(i) {
			return true
		}
	}
	return false
}

// isAggregateCall reports whether token i starts an aggregate function
// call that is not a window function.
func (l lexed) isAggregateCall(i int) bool {
	name := strings.ToLower(l.tokenName(i))
	if !aggregateFuncs[name] || !l.punct(i+1, "(") {
		return false
	}
	end := l.closing(i + 1)
	if l.word(end+1) == "OVER" || l.word(end+1) == "FILTER" && l.word(l.closing(end+2)+1) == "OVER" {
		return false
	}
	if name == "min" || name == "max" { // min(a, b) is a scalar function
		for j := i + 2; j < end; j++ {
			if l.depth[j] == l.depth[i]+1 && l.punct(j, ",") {
				return false
			}
		}
	}
	return true
}

func (l lexed) tokenName(i int) string {
	if i < 0 || i >= len(l.toks) {
		return ""
	}
	name, _ := l.toks[i].Identifier(l.src)
	if l.toks[i].Kind != datasets.TokenWord {
		return ""
	}
	return name
}

// core analyses the SELECT core of tokens [s, end): s is the SELECT.
func (l lexed) core(s, end int) Shape {
	d := l.depth[s]
	sh := Shape{}
	i := s + 1
	if w := l.word(i); w == "DISTINCT" || w == "ALL" {
		i++
	}
	listStart := i
	listEnd := end
	for j := i; j < end; j++ {
		if l.depth[j] == d && clauseWords[l.word(j)] {
			listEnd = j
			break
		}
	}
	if listEnd < len(l.toks) {
		sh.listEnd = l.toks[listEnd].Start
	} else {
		sh.listEnd = len(l.src)
	}
	// Select-list items.
	itemStart := listStart
	for j := listStart; j <= listEnd; j++ {
		if j < listEnd && !(l.depth[j] == d && l.punct(j, ",")) {
			continue
		}
		kind, star := l.item(itemStart, j)
		sh.Items = append(sh.Items, kind)
		sh.Exprs = append(sh.Exprs, l.exprText(itemStart, j))
		sh.Star = sh.Star || star
		if kind != Key {
			sh.Aggregate = true
		}
		itemStart = j + 1
	}
	// GROUP BY and the FROM clause.
	for j := listEnd; j < end; j++ {
		if l.depth[j] != d {
			continue
		}
		switch l.word(j) {
		case "GROUP":
			if l.word(j+1) == "BY" {
				sh.Aggregate = true
			}
		case "FROM":
			sh.Tables = l.fromTables(j+1, end, d)
		}
	}
	return sh
}

// exprText returns the expression of the item of tokens [a, b), without
// an alias ("x AS y", "f(x) y").
func (l lexed) exprText(a, b int) string {
	if b <= a {
		return ""
	}
	end := b
	if end-a >= 3 && l.word(end-2) == "AS" {
		end -= 2
	} else if end-a >= 2 && (l.toks[end-1].Kind == datasets.TokenWord || l.toks[end-1].Kind == datasets.TokenQuoted) &&
		(l.punct(end-2, ")") || l.toks[end-2].Kind == datasets.TokenWord && !reserved[l.word(end-2)] && l.word(end-1) != "END") {
		end--
	}
	return l.src[l.toks[a].Start:l.toks[end-1].End]
}

// item classifies the select-list item of tokens [a, b).
func (l lexed) item(a, b int) (ColumnKind, bool) {
	if b <= a {
		return Key, false
	}
	if b-a == 1 && l.punct(a, "*") || b-a == 3 && l.punct(a+1, ".") && l.punct(a+2, "*") {
		return Key, true
	}
	// count( … ) alone (or FILTER (WHERE …)), possibly with an alias, or
	// counts added and subtracted (count(*) - count(dod) counts the rows
	// without a date of death).
	if l.countArithmetic(a, b) {
		return Count, false
	}
	for j := a; j < b; j++ {
		if l.punct(j, "(") && l.word(j+1) == "SELECT" {
			j = l.closing(j) // a scalar subquery aggregates on its own
			continue
		}
		if l.isAggregateCall(j) {
			return Statistic, false
		}
	}
	return Key, false
}

// fromTables lists the names or aliases of the FROM clause in [a, end)
// at depth d.
func (l lexed) fromTables(a, end, d int) []string {
	var out []string
	expect := true // a table reference follows
	for j := a; j < end; j++ {
		if l.depth[j] != d {
			continue
		}
		w := l.word(j)
		if clauseWords[w] {
			break
		}
		if w == "JOIN" || l.punct(j, ",") {
			expect = true
			continue
		}
		if !expect || w == "LEFT" || w == "RIGHT" || w == "INNER" || w == "OUTER" || w == "CROSS" || w == "NATURAL" || w == "FULL" || w == "LATERAL" {
			continue
		}
		expect = false
		k := j
		name := ""
		if l.punct(k, "(") {
			k = l.closing(k)
		} else {
			name, _ = l.toks[k].Identifier(l.src)
			for l.punct(k+1, ".") { // schema.table
				k += 2
				name, _ = l.toks[min(k, len(l.toks)-1)].Identifier(l.src)
			}
		}
		// Alias: [AS] name.
		n := k + 1
		if l.word(n) == "AS" {
			n++
		}
		if n < end && (l.toks[n].Kind == datasets.TokenQuoted || l.toks[n].Kind == datasets.TokenWord && !reserved[l.word(n)]) {
			name, _ = l.toks[n].Identifier(l.src)
		}
		if name != "" {
			out = append(out, name)
		}
	}
	return out
}

// reserved are words that follow a table reference and are not aliases.
var reserved = map[string]bool{
	"ON": true, "USING": true, "JOIN": true, "LEFT": true, "RIGHT": true, "INNER": true, "OUTER": true,
	"CROSS": true, "NATURAL": true, "FULL": true, "WHERE": true, "GROUP": true, "HAVING": true,
	"ORDER": true, "LIMIT": true, "WINDOW": true, "UNION": true, "INTERSECT": true, "EXCEPT": true,
	"INDEXED": true, "NOT": true, "LATERAL": true,
}

// IndividualsAlias is the name of the column Augment appends.
const IndividualsAlias = "__individuals"

// Augment returns query with count(DISTINCT column) appended to its
// top-level select list as IndividualsAlias, and false when the statement
// does not aggregate at its top level or is compound. column is written as
// given (quote it with datasets.QuoteIdent).
func Augment(query, column string) (string, bool) {
	sh := Analyze(query)
	if !sh.Aggregate || sh.Compound || sh.listEnd <= 0 {
		return "", false
	}
	head := strings.TrimRight(query[:sh.listEnd], " \t\r\n")
	return head + ", count(DISTINCT " + column + ") AS " + `"` + IndividualsAlias + `" ` + query[sh.listEnd:], true
}

// ColumnKinds returns the kind of each column of res produced by a
// statement of shape sh: by position when the select list matches the
// result's columns, otherwise by name (an expression name such as
// "count(*)", a count-like alias with integer values). Nothing is a count
// or statistic in a result that is not an aggregate.
func ColumnKinds(sh Shape, res *datasets.Result) []ColumnKind {
	kinds := make([]ColumnKind, len(res.Columns))
	if !sh.Aggregate && !sh.Nested {
		return kinds
	}
	byPosition := !sh.Star && !sh.Compound && len(sh.Items) == len(res.Columns)
	for j, c := range res.Columns {
		switch {
		case byPosition && sh.Items[j] != Key:
			kinds[j] = sh.Items[j]
		default:
			kinds[j] = kindByName(c.Name, res, j)
		}
	}
	// A statement that shows a nested query's aggregates (WITH c AS
	// (SELECT g, max(age) AS x, count(*) AS n … GROUP BY g) SELECT * FROM
	// c): once a column reads as a count, a column that comes from no
	// table column (computed in that query: max(age) AS x) is one of its
	// statistics, whatever its name, and is suppressed with its row.
	if !sh.Aggregate && sh.Nested && hasNonKey(kinds) {
		for j, c := range res.Columns {
			if kinds[j] == Key && c.OriginColumn == "" {
				kinds[j] = Statistic
			}
		}
	}
	return kinds
}

func hasNonKey(kinds []ColumnKind) bool {
	for _, k := range kinds {
		if k != Key {
			return true
		}
	}
	return false
}

// kindByName classifies a column by its name and values.
func kindByName(name string, res *datasets.Result, j int) ColumnKind {
	if k, _ := lex(name).item(0, len(lex(name).toks)); k != Key {
		return k
	}
	if countLikeName(name) && integerColumn(res, j) {
		return Count
	}
	return Key
}

// countLikeName reports whether a column name reads like a count.
func countLikeName(name string) bool {
	n := strings.ToLower(strings.TrimSpace(name))
	switch n {
	case "n", "count", "cnt", "num", "number", "total", "patients", "subjects", "persons", "people",
		"admissions", "frequency", "freq", "records", "cases":
		return true
	}
	for _, p := range []string{"num_", "n_", "count_", "number_of_", "total_", "cnt_", "no_of_"} {
		if strings.HasPrefix(n, p) {
			return true
		}
	}
	for _, s := range []string{"_count", "_cnt", "_n", "_total", "_patients", "_subjects", "_persons", "_admissions"} {
		if strings.HasSuffix(n, s) {
			return true
		}
	}
	return false
}

// integerColumn reports whether every non-NULL value of column j is an
// integer (and there is at least one).
func integerColumn(res *datasets.Result, j int) bool {
	seen := false
	for _, r := range res.Rows {
		switch x := r[j].(type) {
		case nil, Suppressed:
		case int64:
			seen = true
		case float64:
			if x != float64(int64(x)) {
				return false
			}
			seen = true
		default:
			return false
		}
	}
	return seen
}

// countArithmetic reports whether the select-list item of tokens [a, b)
// is made of count(…) calls (each possibly with FILTER (WHERE …)), whole
// numbers, + and − and parentheses, with an optional alias: a number of
// records, checked like a count.
func (l lexed) countArithmetic(a, b int) bool {
	counts := 0
	for j := a; j < b; j++ {
		switch {
		case strings.EqualFold(l.tokenName(j), "count") && l.isAggregateCall(j):
			j = l.closing(j + 1)
			if l.word(j+1) == "FILTER" && l.punct(j+2, "(") {
				j = l.closing(j + 2)
			}
			counts++
		case l.punct(j, "+") || l.punct(j, "-") || l.punct(j, "(") || l.punct(j, ")"):
		case l.toks[j].Kind == datasets.TokenNumber && !strings.ContainsAny(l.toks[j].Text(l.src), ".eE"):
		case l.word(j) == "AS" && j+2 == b:
			return counts > 0
		case j == b-1 && j > a && (l.toks[j].Kind == datasets.TokenWord || l.toks[j].Kind == datasets.TokenQuoted) && l.punct(j-1, ")"):
			return counts > 0 // an alias without AS
		default:
			return false
		}
	}
	return counts > 0
}

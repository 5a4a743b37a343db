package cohort

import (
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/textsearch"
)

// feedback builds the repair prompt for a failed query: the database's
// exact error (PostgreSQL's with the position it names marked under the
// line), the full column list of every table the query references
// (the retrieved tables when it references none) and the existing names
// closest to those the error names.
func (p *Pipeline) feedback(query string, err error, retrieved []string) repairData {
	d := repairData{SQL: query, Error: errorText(err)}
	tables := ReferencedTables(query, p.cat)
	if len(tables) == 0 {
		tables = retrieved
	}
	for _, name := range tables {
		if t, ok := p.cat.Table(name); ok {
			cols := make([]string, len(t.Columns))
			for i, c := range t.Columns {
				cols[i] = c.Name
			}
			d.Columns = append(d.Columns, fmt.Sprintf("%s(%s)", t.Name, strings.Join(cols, ", ")))
		}
	}
	var closest []string
	for _, m := range unknownNamesIn(d.Error) {
		kind, name := m[0], m[1]
		var cands []string
		switch kind {
		case "column":
			if i := strings.LastIndexByte(name, '.'); i >= 0 {
				name = name[i+1:]
			}
			for _, tn := range tables {
				if t, ok := p.cat.Table(tn); ok {
					for _, c := range t.Columns {
						cands = append(cands, t.Name+"."+c.Name)
					}
				}
			}
			if len(cands) == 0 {
				for _, t := range p.cat.Tables {
					for _, c := range t.Columns {
						cands = append(cands, t.Name+"."+c.Name)
					}
				}
			}
		case "table":
			for _, t := range p.cat.Tables {
				cands = append(cands, t.Name)
			}
		default:
			continue
		}
		for _, c := range nearest(name, cands, 3) {
			if !slices.Contains(closest, c) {
				closest = append(closest, c)
			}
		}
	}
	d.Closest = strings.Join(closest, ", ")
	return d
}

// errorText is the message a model needs: the engine's own text for query
// errors, the runner's reason for refusals.
func errorText(err error) string {
	var qe *datasets.QueryError
	if errors.As(err, &qe) {
		return qe.Message
	}
	return err.Error()
}

// nearest returns up to n candidates closest to name: by edit distance on
// the part after any "table." prefix, case-insensitive.
func nearest(name string, cands []string, n int) []string {
	type scored struct {
		s string
		d int
	}
	l := strings.ToLower(name)
	var list []scored
	for _, c := range cands {
		base := strings.ToLower(c)
		if i := strings.LastIndexByte(base, '.'); i >= 0 {
			base = base[i+1:]
		}
		d := editDistance(l, base)
		if strings.Contains(base, l) || strings.Contains(l, base) {
			d = min(d, 1+abs(len(base)-len(l))/3)
		}
		list = append(list, scored{c, d})
	}
	sort.SliceStable(list, func(i, j int) bool { return list[i].d < list[j].d })
	var out []string
	for _, s := range list {
		if len(out) == n || s.d > max(3, len(l)/2+1) {
			break
		}
		out = append(out, s.s)
	}
	return out
}

func abs(x int) int {
	if x < 0 {
		return -x
	}
	return x
}

// editDistance is the Levenshtein distance of two strings (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// filterColumn is a column a query compares with string literals.
type filterColumn struct {
	table, column string
	literals      []string
}

// filteredColumns finds the columns a query compares with string literals
// ("col = 'x'", "LOWER(t.col) LIKE '%x%'", "col IN ('a', 'b')"), resolved
// against the tables the query references.
func (p *Pipeline) filteredColumns(query string) []filterColumn {
	toks := sqlTokens(query)
	tables := ReferencedTables(query, p.cat)
	var out []filterColumn
	find := func(col string) (string, string, bool) {
		for _, tn := range tables {
			if t, ok := p.cat.Table(tn); ok {
				if c, ok := t.Column(col); ok {
					return t.Name, c.Name, true
				}
			}
		}
		return "", "", false
	}
	for i, t := range toks {
		if !t.str {
			continue
		}
		lit := strings.ReplaceAll(strings.Trim(t.text, "'"), "''", "'")
		// Walk back over operators, function calls and list punctuation to
		// the column.
		for j := i - 1; j >= 0 && j >= i-8; j-- {
			tok := toks[j]
			if !tok.ident || isSQLWord(tok.text) {
				continue
			}
			tn, cn, ok := find(tok.text)
			if !ok {
				continue
			}
			k := slices.IndexFunc(out, func(f filterColumn) bool { return f.table == tn && f.column == cn })
			if k < 0 {
				out = append(out, filterColumn{table: tn, column: cn})
				k = len(out) - 1
			}
			out[k].literals = append(out[k].literals, strings.Trim(lit, "%"))
			break
		}
	}
	return out
}

// isSQLWord reports whether an identifier token is an SQL keyword or a
// common function, not a column.
func isSQLWord(w string) bool {
	switch strings.ToUpper(w) {
	case "LOWER", "UPPER", "TRIM", "LIKE", "IN", "NOT", "AND", "OR", "IS", "NULL", "GLOB", "SUBSTR", "COALESCE",
		"WHERE", "ON", "SELECT", "FROM", "CASE", "WHEN", "THEN", "ELSE", "END", "BETWEEN", "ESCAPE", "DISTINCT",
		"DATETIME", "DATE", "STRFTIME", "JULIANDAY", "CAST", "AS", "TEXT", "HAVING", "COLLATE", "NOCASE":
		return true
	}
	return false
}

// recheckSamples lists, for each column a query filters on, stored values:
// those closest to the query's literals first, then the catalog's samples.
func (p *Pipeline) recheckSamples(query string) []string {
	var out []string
	for _, f := range p.filteredColumns(query) {
		var vals []string
		if p.index.values != nil {
			vals = p.index.values.similar(p.cat, f.table, f.column, f.literals, 12)
		}
		if t, ok := p.cat.Table(f.table); ok {
			if c, ok := t.Column(f.column); ok {
				for _, s := range c.Samples {
					if len(vals) >= 15 {
						break
					}
					if !slices.Contains(vals, s) {
						vals = append(vals, s)
					}
				}
			}
		}
		if len(vals) == 0 {
			continue
		}
		quoted := make([]string, len(vals))
		for i, v := range vals {
			quoted[i] = "'" + strings.ReplaceAll(v, "'", "''") + "'"
		}
		out = append(out, fmt.Sprintf("%s.%s: %s", f.table, f.column, strings.Join(quoted, ", ")))
	}
	return out
}

// similar returns up to n stored values of table.column sharing the most
// words with the literals (normalized form), best first.
func (vi *valueIndex) similar(cat *datasets.Catalog, table, column string, literals []string, n int) []string {
	var ids []int32
	for i, c := range vi.cols {
		if strings.EqualFold(cat.Tables[c.table].Name, table) && strings.EqualFold(c.column, column) {
			ids = append(ids, int32(i))
		}
	}
	if len(ids) == 0 {
		return nil
	}
	want := map[string]bool{}
	for _, l := range literals {
		for _, w := range textsearch.Words(l) {
			if !isStopWord(w) {
				want[stem(w)] = true
			}
		}
	}
	type scored struct {
		v string
		s float64
	}
	var list []scored
	for v, e := range vi.exact {
		in := false
		for _, c := range e.cols {
			if slices.Contains(ids, c) {
				in = true
				break
			}
		}
		if !in {
			continue
		}
		hit := 0
		ws := textsearch.Words(v)
		for _, w := range ws {
			if want[stem(w)] {
				hit++
			}
		}
		if hit == 0 && len(want) > 0 {
			continue
		}
		list = append(list, scored{e.text, float64(hit) - 0.01*float64(len(ws))})
	}
	sort.Slice(list, func(i, j int) bool {
		if list[i].s != list[j].s {
			return list[i].s > list[j].s
		}
		return list[i].v < list[j].v
	})
	var out []string
	for i := 0; i < len(list) && i < n; i++ {
		out = append(out, list[i].v)
	}
	return out
}

package disclosure

import "strings"

// listAggregates return every value of their argument.
var listAggregates = map[string]bool{
	"group_concat": true, "string_agg": true, "json_group_array": true, "json_group_object": true,
	"array_agg": true, "json_agg": true, "jsonb_agg": true, "json_objectagg": true, "json_arrayagg": true,
}

// RowLevelReason says why an aggregate statement still discloses values
// of single individuals, which an aggregate-only source must refuse even
// though its result looks aggregate, or "" when nothing was found:
//   - an aggregate that lists values (group_concat(anchor_age), at any
//     depth: one value per record, not a statistic);
//   - a top-level GROUP BY term or select-list item that uses a direct
//     identifier other than inside count(…) (GROUP BY subject_id gives one
//     row per patient whose other columns are that patient's values;
//     substr(subject_id, 1, 9) shows the identifier itself);
//   - a subquery in the top-level select list of an aggregate (its
//     individuals are not those counted for the row, so a small count
//     computed there would be shown as it is).
//
// Like Analyze it reads tokens, not a parse tree.
func RowLevelReason(query, profile string) string {
	l := lex(query)
	for i := range l.toks {
		if name := strings.ToLower(l.tokenName(i)); listAggregates[name] && l.punct(i+1, "(") {
			return name + "(…) lists the values of single records"
		}
	}
	table := profileIdentifiers()[Profile(profile)]
	direct := func(i int) (string, bool) {
		if l.punct(i+1, "(") || l.punct(i+1, ".") {
			return "", false
		}
		name, ok := l.toks[i].Identifier(l.src)
		if !ok {
			return "", false
		}
		n := baseName(name)
		r, ok := table[n]
		if !ok {
			r, ok = classifyName(n)
		}
		return name, ok && r.kind == Direct
	}
	// scan checks tokens [a, b) at depth d: identifiers outside count(…),
	// and (for a select list) subqueries.
	scan := func(a, b, d int, what string, list bool) string {
		for j := a; j < b; j++ {
			if strings.EqualFold(l.tokenName(j), "count") && l.punct(j+1, "(") {
				j = l.closing(j + 1)
				continue
			}
			if l.punct(j, "(") && l.word(j+1) == "SELECT" {
				if list {
					return "a subquery in the select list counts other individuals than the row's"
				}
				j = l.closing(j)
				continue
			}
			if l.word(j) == "AS" { // an alias or a CAST's type names no column
				j++
				continue
			}
			if name, ok := direct(j); ok {
				return what + " uses the identifier " + name
			}
		}
		return ""
	}
	// When the statement does not aggregate at its top level, its rows are
	// those of a nested query (WITH c AS (… GROUP BY subject_id) SELECT
	// a, n FROM c): that query's GROUP BY must not be on an identifier.
	if !Analyze(query).Aggregate {
		for s := range l.toks {
			if l.depth[s] == 0 || l.word(s) != "SELECT" {
				continue
			}
			d := l.depth[s]
			end := len(l.toks)
			for j := s + 1; j < len(l.toks); j++ {
				if l.depth[j] < d || l.depth[j] == d && (l.word(j) == "SELECT" || l.word(j) == "UNION" || l.word(j) == "INTERSECT" || l.word(j) == "EXCEPT") {
					end = j
					break
				}
			}
			for j := s + 1; j < end; j++ {
				if l.depth[j] == d && l.word(j) == "GROUP" && l.word(j+1) == "BY" {
					g := j + 2
					for g < end && !(l.depth[g] == d && clauseWords[l.word(g)]) {
						g++
					}
					if why := scan(j+2, g, d, "a nested query's GROUP BY", false); why != "" {
						return why + " and the statement shows that query's rows"
					}
				}
			}
		}
	}
	for s := range l.toks {
		if l.depth[s] != 0 || l.word(s) != "SELECT" {
			continue
		}
		end := len(l.toks)
		for j := s + 1; j < len(l.toks); j++ {
			if l.depth[j] == 0 && (l.word(j) == "SELECT" || l.word(j) == "UNION" || l.word(j) == "INTERSECT" || l.word(j) == "EXCEPT") {
				end = j
				break
			}
		}
		c := l.core(s, end)
		if !c.Aggregate {
			continue
		}
		listEnd := end
		for j := s + 1; j < end; j++ {
			if l.depth[j] == 0 && clauseWords[l.word(j)] {
				listEnd = j
				break
			}
		}
		if why := scan(s+1, listEnd, 0, "the select list", true); why != "" {
			return why
		}
		for j := listEnd; j < end; j++ {
			if l.depth[j] == 0 && l.word(j) == "GROUP" && l.word(j+1) == "BY" {
				g := j + 2
				for g < end && !(l.depth[g] == 0 && clauseWords[l.word(g)]) {
					g++
				}
				if why := scan(j+2, g, 0, "GROUP BY", false); why != "" {
					return why
				}
			}
		}
	}
	return ""
}

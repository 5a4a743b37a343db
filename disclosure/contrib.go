package disclosure

import (
	"math"
	"strconv"
	"strings"
)

// Contributions: the individuals behind each aggregate of a cell.
//
// A row's individuals (Individuals.Counts) are everyone in its group, but
// an aggregate of a condition counts far fewer: in a group of 84
// admissions, sum(CASE WHEN died THEN 1 ELSE 0 END), sum(hospital_expire_flag),
// count(*) FILTER (WHERE …), avg(flag) as a percentage, or
// max(CASE WHEN died THEN age END) can each show one person. So each
// aggregate call of the select list is checked on its own: the statement
// is run again with, per call, the number of distinct individuals whose
// value enters it —
//
//   - sum and total: a value other than 0 and NULL (zeros add nothing, so
//     a sum of one non-zero value and 40 zeros is that one value) and,
//     when every value is 0 or 1, those with 0 (sum(male) = 83 beside
//     count(*) = 84 shows the one woman);
//   - count(*) FILTER (WHERE c): c holds; count(x): x is not NULL, and
//     x is NULL (count(x) = 83 beside count(*) = 84 shows the one without);
//   - avg, min, max and the other statistics: x is not NULL; for avg,
//     also those with a value other than 0 (avg(died) is a proportion:
//     0.012 of 84 shows the one who died) and, when every value is 0 or
//     1, those with 0 (0.988 of 84 shows the one person with 0);
//
// and a cell is small when one of its aggregates has from 1 to k−1
// individuals.

// contribKind is what an added column of a contributions query counts.
type contribKind int

const (
	contribValues contribKind = iota // individuals whose value enters the aggregate
	contribZeros                     // individuals with the value 0 (an avg)
	contribOther                     // records with a value other than 0 and 1 (an avg)
)

// contribution is one added column of a contributions query.
type contribution struct {
	column int // the result column of the aggregate
	call   int // the aggregate call, over the whole select list
	kind   contribKind
}

// Contributions is a statement run again to count the individuals behind
// each aggregate of its select list (PlanContributions).
type Contributions struct {
	// Query is the statement with the added columns at the end of its
	// select list.
	Query string
	cols  []contribution
	items int
	calls int
}

// Calls is the number of aggregate calls of the statement that are
// checked (all of them, whatever call was planned).
func (c Contributions) Calls() int { return c.calls }

// Added is the number of columns Query adds to the statement's result.
func (c Contributions) Added() int { return len(c.cols) }

// Fits reports whether the statement's select list has one item per
// result column (ncols), so that the counts map onto the columns.
func (c Contributions) Fits(ncols int) bool { return c.items == ncols }

// MaxContributions bounds the columns a contributions query adds.
const MaxContributions = 32

// AllCalls asks PlanContributions for every aggregate call.
const AllCalls = -1

// PlanContributions writes the contributions query of a statement that
// aggregates at its top level (not compound, no * item), counting
// individual (an expression such as subject_id or "p"."person_id"; ""
// counts records instead, when no individual column is known), for the
// aggregate call numbered call (from 0, in the order of the select list;
// count(*) without FILTER is not numbered) or AllCalls (when that would add
// more than MaxContributions columns, Query is empty: plan the calls one
// by one). With typed false
// it only tests values for NULL, which works for every type (the typed
// form compares values with 0, which PostgreSQL refuses for an interval
// or a date). It returns false when there is nothing to count: no
// aggregate other than a plain count(*), no such call, or too many.
func PlanContributions(query, individual string, typed bool, call int) (Contributions, bool) {
	sh := Analyze(query)
	if !sh.Aggregate || sh.Compound || sh.Star || sh.listEnd <= 0 {
		return Contributions{}, false
	}
	var exprs []string
	var cols []contribution
	count := func(cond string) string {
		if individual == "" {
			return "count(CASE WHEN " + cond + " THEN 1 END)"
		}
		return "count(DISTINCT CASE WHEN " + cond + " THEN " + individual + " END)"
	}
	calls := 0
	for item, ex := range sh.Exprs {
		if sh.Items[item] == Key {
			continue
		}
		il := lex(ex)
		for i := 0; i < len(il.toks); i++ {
			if il.punct(i, "(") && il.word(i+1) == "SELECT" {
				i = il.closing(i) // a scalar subquery aggregates on its own
				continue
			}
			if !il.isAggregateCall(i) {
				continue
			}
			name := strings.ToLower(il.tokenName(i))
			open := i + 1
			end := il.closing(open)
			arg := il.firstArg(open, end)
			filter := il.filter(end)
			i = end
			and := func(cond string) string {
				if filter == "" {
					return cond
				}
				return cond + " AND (" + filter + ")"
			}
			var add []contribution
			var adds []string
			if (arg == "" || arg == "*") && filter == "" {
				continue // count(*): the row's individuals
			}
			this := calls
			calls++
			if call != AllCalls && call != this {
				continue
			}
			switch {
			case arg == "" || arg == "*":
				adds = append(adds, count("("+filter+")"))
				add = append(add, contribution{item, this, contribValues})
			case typed && (name == "sum" || name == "total"):
				adds = append(adds, count(and("("+arg+") <> 0")), count(and("("+arg+") = 0")),
					"count(CASE WHEN "+and("("+arg+") NOT IN (0, 1)")+" THEN 1 END)")
				add = append(add, contribution{item, this, contribValues}, contribution{item, this, contribZeros},
					contribution{item, this, contribOther})
			case name == "count":
				adds = append(adds, count(and("("+arg+") IS NOT NULL")), count(and("("+arg+") IS NULL")))
				add = append(add, contribution{item, this, contribValues}, contribution{item, this, contribValues})
			case typed && name == "avg":
				adds = append(adds, count(and("("+arg+") IS NOT NULL")), count(and("("+arg+") <> 0")),
					count(and("("+arg+") = 0")), "count(CASE WHEN "+and("("+arg+") NOT IN (0, 1)")+" THEN 1 END)")
				add = append(add, contribution{item, this, contribValues}, contribution{item, this, contribValues},
					contribution{item, this, contribZeros}, contribution{item, this, contribOther})
			default:
				adds = append(adds, count(and("("+arg+") IS NOT NULL")))
				add = append(add, contribution{item, this, contribValues})
			}
			exprs = append(exprs, adds...)
			cols = append(cols, add...)
		}
	}
	if len(cols) == 0 {
		return Contributions{}, false
	}
	if len(cols) > MaxContributions { // too many at once: plan them call by call
		return Contributions{items: len(sh.Items), calls: calls}, true
	}
	var b strings.Builder
	b.WriteString(strings.TrimRight(query[:sh.listEnd], " \t\r\n"))
	for i, e := range exprs {
		b.WriteString(", " + e + ` AS "` + IndividualsAlias + "_" + strconv.Itoa(i+1) + `"`)
	}
	b.WriteString(" " + query[sh.listEnd:])
	return Contributions{Query: b.String(), cols: cols, items: len(sh.Items), calls: calls}, true
}

// firstArg returns the text of the first argument of the call whose "("
// is token open and ")" token end, without DISTINCT or ALL.
func (l lexed) firstArg(open, end int) string {
	a := open + 1
	if w := l.word(a); w == "DISTINCT" || w == "ALL" {
		a++
	}
	b := a
	for b < end && !(l.depth[b] == l.depth[open]+1 && (l.punct(b, ",") || l.word(b) == "ORDER")) {
		b++
	}
	if b <= a {
		return ""
	}
	return l.src[l.toks[a].Start:l.toks[b-1].End]
}

// filter returns the condition of a FILTER (WHERE …) clause following the
// call that ends at token end, or "".
func (l lexed) filter(end int) string {
	if l.word(end+1) != "FILTER" || !l.punct(end+2, "(") || l.word(end+3) != "WHERE" {
		return ""
	}
	c := l.closing(end + 2)
	if c <= end+4 || c > len(l.toks) {
		return ""
	}
	return l.src[l.toks[end+4].Start:l.toks[c-1].End]
}

// Cells reads the added columns of one row of the contributions query
// (extra, in order) into the fewest individuals behind one aggregate of
// each of the statement's result columns (ncols): math.MaxInt64 for a
// column without aggregates to check, CellUnknown when a count could not
// be read.
func (c Contributions) Cells(extra []any, ncols int) []int64 {
	out := make([]int64, ncols)
	for j := range out {
		out[j] = math.MaxInt64
	}
	zeros := map[int]int64{}
	other := map[int]int64{}
	for i, col := range c.cols {
		if col.column >= ncols {
			continue
		}
		v := int64(CellUnknown)
		if i < len(extra) {
			if x, ok := extra[i].(int64); ok {
				v = x
			}
		}
		switch col.kind {
		case contribZeros:
			zeros[col.call] = v
			continue
		case contribOther:
			other[col.call] = v
			if z := zeros[col.call]; v == 0 && z >= 1 { // a 0/1 value: its zeros count too
				out[col.column] = Fewest(out[col.column], z)
			}
			continue
		}
		out[col.column] = Fewest(out[col.column], v)
	}
	return out
}

// CellUnknown marks a cell whose individuals could not be counted.
const CellUnknown = -1

// Fewest keeps the smaller of two individual counts, where 0 (nobody:
// the aggregate is 0 or NULL) shows nothing and CellUnknown wins.
func Fewest(a, b int64) int64 {
	switch {
	case a == CellUnknown || b == CellUnknown:
		return CellUnknown
	case b == 0:
		return a
	case a == 0:
		return b
	}
	return min(a, b)
}

// UnknownCells marks every result column that has an aggregate to check
// as CellUnknown, for a row whose contributions could not be counted.
func (c Contributions) UnknownCells(ncols int) []int64 {
	extra := make([]any, len(c.cols))
	return c.Cells(extra, ncols)
}

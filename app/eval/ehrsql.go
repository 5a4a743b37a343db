package eval

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/clinsight/clinsight/internal/lazyre"
)

// EHRSQLNow is the fixed "current time" of the EHRSQL 2024 MIMIC-IV task:
// questions about "now", "this year" or "last month" are relative to it.
const EHRSQLNow = "2100-12-31 23:59:00"

var multiSpace = lazyre.New(`\s+`)

// EHRSQLQuery applies the task's conventions to a query before it runs:
// current_time and current_date become the task's fixed time, strftime's
// %y and %j become %Y and %J (as the task's SQL expects), and runs of
// whitespace collapse to one space.
func EHRSQLQuery(sql string) string {
	sql = strings.ReplaceAll(sql, "current_time", "'"+EHRSQLNow+"'")
	sql = strings.ReplaceAll(sql, "current_date", "'"+EHRSQLNow[:10]+"'")
	sql = strings.ReplaceAll(sql, "%y", "%Y")
	sql = strings.ReplaceAll(sql, "%j", "%J")
	return strings.TrimSpace(multiSpace().ReplaceAllString(sql, " "))
}

// EHRSQLMaxRows is how many rows of an answer the task compares.
const EHRSQLMaxRows = 100

// EHRSQLAnswer renders result rows the way the task's scorer does: each
// numeric cell rounded to 3 decimals and printed as Python prints it, text
// as is, NULL as None; rows sorted; the first 100 rows kept.
func EHRSQLAnswer(rows [][]any) [][]string {
	out := make([][]string, 0, len(rows))
	for _, row := range rows {
		cells := make([]string, len(row))
		for i, v := range row {
			cells[i] = pythonCell(v)
		}
		out = append(out, cells)
	}
	return sortAndCut(out)
}

// ParseEHRSQLGold parses a gold answer, a Python literal list of rows such
// as "[['m'], ['f']]", into rows of strings, sorted and cut like
// EHRSQLAnswer's.
func ParseEHRSQLGold(lit string) ([][]string, error) {
	p := pyParser{s: lit}
	rows, err := p.rows()
	if err != nil {
		return nil, fmt.Errorf("parse gold answer %q: %w", truncate(lit, 60), err)
	}
	return sortAndCut(rows), nil
}

// SameEHRSQLAnswer reports whether two rendered answers are equal.
func SameEHRSQLAnswer(a, b [][]string) bool {
	return slices.EqualFunc(a, b, slices.Equal[[]string])
}

func sortAndCut(rows [][]string) [][]string {
	slices.SortFunc(rows, slices.Compare[[]string])
	if len(rows) > EHRSQLMaxRows {
		rows = rows[:EHRSQLMaxRows]
	}
	return rows
}

// pythonCell prints a value as str(round(v, 3)) would in Python for numbers.
func pythonCell(v any) string {
	switch x := v.(type) {
	case nil:
		return "None"
	case int64:
		return strconv.FormatInt(x, 10)
	case int:
		return strconv.Itoa(x)
	case float64:
		return pythonFloat(round3(x))
	case string:
		return x
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// round3 rounds like Python's round(x, 3): to the double nearest the
// correctly rounded (half-to-even on the exact binary value) decimal.
func round3(x float64) float64 {
	if math.IsInf(x, 0) || math.IsNaN(x) {
		return x
	}
	r, err := strconv.ParseFloat(strconv.FormatFloat(x, 'f', 3, 64), 64)
	if err != nil {
		return x
	}
	return r
}

// pythonFloat formats like Python's repr(float): the shortest round-trip
// digits, positional notation for exponents in [-4, 16), otherwise
// scientific, and always a ".0" on integral values.
func pythonFloat(x float64) string {
	switch {
	case math.IsNaN(x):
		return "nan"
	case math.IsInf(x, 1):
		return "inf"
	case math.IsInf(x, -1):
		return "-inf"
	}
	e := strconv.FormatFloat(x, 'e', -1, 64)
	exp, _ := strconv.Atoi(e[strings.IndexByte(e, 'e')+1:])
	if exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(x, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}

package disclosure

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/clinsight/clinsight/datasets"
)

// Suppressed replaces a cell that could identify fewer than K people. It
// prints, exports and marshals as "<K" and carries no trace of the value.
type Suppressed struct{ K int }

// String returns "<K".
func (s Suppressed) String() string { return "<" + strconv.Itoa(s.K) }

// MarshalJSON writes "<K" as a JSON string (an encoder that escapes HTML
// writes it "\u003cK").
func (s Suppressed) MarshalJSON() ([]byte, error) { return []byte(`"` + s.String() + `"`), nil }

// Reason says why a cell was suppressed.
type Reason string

// Reasons.
const (
	// Primary: the cell itself is small (a count under k, or a statistic
	// of fewer than k individuals or of an unknown number of them).
	Primary Reason = "primary"
	// Complementary: suppressed so that a known total cannot reveal a
	// primarily suppressed cell of its column.
	Complementary Reason = "complementary"
	// Earlier: the cell came in suppressed (a result suppressed for
	// display, suppressed again for an export).
	Earlier Reason = "suppressed when shown"
)

// Cell is one suppressed cell.
type Cell struct {
	// Row and Col index the cell in the result (from 0).
	Row int `json:"row"`
	Col int `json:"-"`
	// Column is the column's name.
	Column string `json:"column"`
	// Reason is Primary or Complementary.
	Reason Reason `json:"reason"`
}

// Individuals says how many distinct individuals each row of a result
// comes from.
type Individuals struct {
	// Column is what was counted ("subject_id"), or the count column that
	// stands in for it; "" when unknown.
	Column string
	// Counts holds one number per row; -1 (or a missing entry) is unknown.
	Counts []int64
	// Kinds are the kinds of the result's columns (ColumnKinds); nil means
	// by name only.
	Kinds []ColumnKind
	// Cells, when not nil, holds per row and column the fewest individuals
	// behind one aggregate of the cell (Contributions.Cells): a count or
	// statistic from 1 to k−1 of them is suppressed (a sum of a condition
	// in a group of 84 that one person meets); CellUnknown suppresses a
	// statistic.
	Cells [][]int64
}

func (in Individuals) count(row int) int64 {
	if row < len(in.Counts) {
		return in.Counts[row]
	}
	return -1
}

// cell returns the fewest individuals behind one aggregate of a cell, or
// math.MaxInt64 when that is not known to matter.
func (in Individuals) cell(row, col int) int64 {
	if row < len(in.Cells) && col < len(in.Cells[row]) {
		return in.Cells[row][col]
	}
	return math.MaxInt64
}

// Report describes what Suppress did.
type Report struct {
	// K is the minimum cell size applied.
	K int `json:"min_cell"`
	// Aggregate is set when the result was treated as an aggregate.
	Aggregate bool `json:"aggregate"`
	// IndividualColumn is the column whose distinct values counted the
	// individuals of each row ("" when unknown).
	IndividualColumn string `json:"individual_column,omitempty"`
	// Cells are the suppressed cells in row order.
	Cells []Cell `json:"cells"`
	// Notes explain anything the reader should know (unknown individuals,
	// a total that could not be protected).
	Notes []string `json:"notes,omitempty"`
}

// Summary describes the report in one sentence for provenance records.
func (r Report) Summary() string {
	n := map[Reason]int{}
	for _, c := range r.Cells {
		n[c.Reason]++
	}
	s := fmt.Sprintf("minimum cell size %d: %d cells suppressed (%d primary, %d complementary", r.K, len(r.Cells), n[Primary], n[Complementary])
	if n[Earlier] > 0 {
		s += fmt.Sprintf(", %d already suppressed on screen", n[Earlier])
	}
	s += ")"
	if r.IndividualColumn != "" {
		s += "; individuals counted by " + r.IndividualColumn
	}
	return s
}

// Suppress returns a copy of res in which the cells of an aggregate result
// that could identify fewer than k individuals are replaced by
// Suppressed{k} (see the package documentation for the rules). res is
// never modified. k < 2 means DefaultMinCell.
func Suppress(res *datasets.Result, info Individuals, k int) (*datasets.Result, Report) {
	if k < 2 {
		k = DefaultMinCell
	}
	rep := Report{K: k, IndividualColumn: info.Column, Cells: []Cell{}}
	out := *res
	out.Columns = slices.Clone(res.Columns)
	out.Rows = make([][]any, len(res.Rows))
	for i, r := range res.Rows {
		out.Rows[i] = slices.Clone(r)
	}
	kinds := info.Kinds
	if len(kinds) != len(res.Columns) {
		kinds = ColumnKinds(Shape{Nested: true}, res)
	}
	for _, kind := range kinds {
		if kind != Key {
			rep.Aggregate = true
		}
	}
	if !rep.Aggregate {
		return &out, rep
	}
	unknown := false
	primary := map[int]int{} // column → primary cells
	for i, row := range out.Rows {
		ind := info.count(i)
		for j, kind := range kinds {
			v := row[j]
			if kind == Key || v == nil {
				continue
			}
			if _, done := v.(Suppressed); done {
				rep.Cells = append(rep.Cells, Cell{Row: i, Col: j, Column: res.Columns[j].Name, Reason: Earlier})
				primary[j]++
				continue
			}
			small := false
			cell := info.cell(i, j)
			switch kind {
			case Count:
				x, ok := number(v)
				small = ok && x >= 1 && x < float64(k) || ind >= 1 && ind < int64(k) && (!ok || x != 0) ||
					cell >= 1 && cell < int64(k)
			case Statistic:
				small = ind < int64(k) || cell < int64(k) && cell != 0 // unknown (-1) too: conservative
				unknown = unknown || ind < 0 || cell == CellUnknown
			}
			if small {
				row[j] = Suppressed{K: k}
				rep.Cells = append(rep.Cells, Cell{Row: i, Col: j, Column: res.Columns[j].Name, Reason: Primary})
				primary[j]++
			}
		}
	}
	if unknown {
		rep.Notes = append(rep.Notes, "the number of individuals behind some rows could not be counted, so their statistics are suppressed")
	}
	// Complementary suppression in count and sum columns.
	for j, kind := range kinds {
		if primary[j] != 1 || len(out.Rows) < 2 || !(kind == Count || additive(res.Columns[j].Name)) {
			continue
		}
		best, bestX := -1, math.Inf(1)
		for i, row := range out.Rows {
			if x, ok := number(row[j]); ok && x > 0 && x < bestX {
				best, bestX = i, x
			}
		}
		if best < 0 {
			rep.Notes = append(rep.Notes, fmt.Sprintf("column %s: no other cell could be suppressed with its one small cell; a known total would reveal it", res.Columns[j].Name))
			continue
		}
		out.Rows[best][j] = Suppressed{K: k}
		rep.Cells = append(rep.Cells, Cell{Row: best, Col: j, Column: res.Columns[j].Name, Reason: Complementary})
	}
	slices.SortStableFunc(rep.Cells, func(a, b Cell) int {
		if a.Row != b.Row {
			return a.Row - b.Row
		}
		return a.Col - b.Col
	})
	return &out, rep
}

// additive reports whether a statistic column adds up to a total (a sum).
func additive(name string) bool {
	f := lex(name).tokenName(0)
	return strings.EqualFold(f, "sum") || strings.EqualFold(f, "total")
}

// number converts an integer or real cell.
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// Cells lists the suppressed cells of a result by looking at its values:
// what a front end needs to mark them (a result that went through Suppress
// carries them as Suppressed values).
func Cells(res *datasets.Result) []Cell {
	var out []Cell
	for i, r := range res.Rows {
		for j, v := range r {
			if _, ok := v.(Suppressed); ok {
				out = append(out, Cell{Row: i, Col: j, Column: res.Columns[j].Name})
			}
		}
	}
	return out
}

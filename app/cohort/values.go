package cohort

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/textsearch"
)

// Limits of the value index.
const (
	// valueScanRows is how many leading rows of a table are read for its
	// text values: every row of a dictionary, a large sample of a big
	// event table.
	valueScanRows = 500_000
	// maxValueLen is the longest value indexed, in bytes; longer text is
	// free text (notes), not a name a question would quote.
	maxValueLen = 160
	// maxValueWords is the most words an indexed value may have.
	maxValueWords = 24
	// maxColumnValues caps the distinct values kept per column.
	maxColumnValues = 250_000
	// maxSpellings caps the stored spellings kept per normalized value
	// (value grounding checks a literal against them byte for byte).
	maxSpellings = 16
)

// valueColumn is one indexed text column.
type valueColumn struct {
	table  int // index into the catalog's tables
	column string
}

// valueEntry is one normalized value of the index.
type valueEntry struct {
	cols []int32 // indexes into valueIndex.cols
	text string  // the value as first seen
	// spell lists the stored spellings of the value in each column
	// ("Aspirin" in one, "aspirin" in another), at most maxSpellings.
	spell []spelling
}

// spelling is one stored spelling of a normalized value in one column.
type spelling struct {
	col  int32 // index into valueIndex.cols
	text string
}

// valueMatch is a phrase of the question that is a stored value.
type valueMatch struct {
	phrase string
	cols   []int32 // indexes into valueIndex.cols
}

// valueIndex holds the distinct short text values of a database's text
// columns, so that a question naming a drug, a lab test, a diagnosis or a
// care unit exactly as the data spells it points at the tables holding it
// (schema linking by value).
type valueIndex struct {
	cols []valueColumn
	// exact maps a normalized value (lower-case words joined by spaces)
	// to the columns holding it and its stored spelling.
	exact map[string]*valueEntry
	// longest is the most words of any indexed value.
	longest int
	// values is the number of distinct (column, value) pairs indexed.
	values int
}

// buildValueIndex reads the distinct text values of every text column of
// the catalog's tables (the first valueScanRows rows of each table),
// through the engine's Scanner in its dialect. Cancelling ctx stops it.
func buildValueIndex(ctx context.Context, db datasets.Scanner, cat *datasets.Catalog) (*valueIndex, error) {
	vi := &valueIndex{exact: map[string]*valueEntry{}}
	for ti := range cat.Tables {
		t := &cat.Tables[ti]
		if t.Kind == datasets.KindVirtual || t.RowCount == 0 {
			continue
		}
		var cols []string
		for _, c := range t.Columns {
			if textColumn(c) {
				cols = append(cols, c.Name)
			}
		}
		if len(cols) == 0 {
			continue
		}
		if err := vi.addTable(ctx, db, ti, t, cols); err != nil {
			return nil, err
		}
	}
	return vi, nil
}

// textColumn reports whether a column may hold names worth indexing: text
// affinity (or no declared type), not a time or an identifier.
func textColumn(c datasets.TableColumn) bool {
	t := strings.ToUpper(c.Type)
	if strings.Contains(t, "INT") || strings.Contains(t, "REAL") || strings.Contains(t, "FLOA") ||
		strings.Contains(t, "DOUB") || strings.Contains(t, "TIME") || strings.Contains(t, "DATE") ||
		strings.Contains(t, "NUM") || strings.Contains(t, "DEC") || strings.Contains(t, "BLOB") || strings.Contains(t, "BOOL") {
		return false
	}
	name := strings.ToLower(c.Name)
	if strings.HasSuffix(name, "uid") || name == "id" || strings.HasSuffix(name, "_id") {
		return false
	}
	return true
}

// addTable reads the distinct values of cols of one table in one scan.
func (vi *valueIndex) addTable(ctx context.Context, db datasets.Scanner, ti int, t *datasets.Table, cols []string) error {
	quoted := make([]string, len(cols))
	for i, c := range cols {
		// Values longer than maxValueLen are not indexed: leave them in
		// the database rather than copying huge texts out only to drop
		// them. PostgreSQL reads any type as its text (varchar, char,
		// an enumeration).
		q := datasets.QuoteIdent(c)
		if db.Dialect() == datasets.DialectPostgres {
			q += "::text"
		}
		quoted[i] = fmt.Sprintf("CASE WHEN octet_length(%s) <= %d THEN %s END", q, maxValueLen, q)
	}
	q := fmt.Sprintf("SELECT %s FROM %s LIMIT %d", strings.Join(quoted, ", "), datasets.QualifiedName(t), valueScanRows)
	seen := make([]map[string]bool, len(cols))
	ids := make([]int32, len(cols))
	for i, c := range cols {
		seen[i] = map[string]bool{}
		ids[i] = int32(len(vi.cols))
		vi.cols = append(vi.cols, valueColumn{table: ti, column: c})
	}
	err := db.Scan(ctx, q, func(vals []any) error {
		for i, v := range vals {
			var s string
			switch x := v.(type) {
			case string:
				s = x
			case []byte:
				s = string(x)
			default:
				continue
			}
			if len(s) > maxValueLen || len(seen[i]) >= maxColumnValues || seen[i][s] {
				continue
			}
			seen[i][s] = true
			vi.add(s, ids[i])
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("index the values of %s: %w", t.Name, err)
	}
	return nil
}

// add indexes one value of column col.
func (vi *valueIndex) add(value string, col int32) {
	ws := textsearch.Words(value)
	if len(ws) == 0 || len(ws) > maxValueWords || !strings.ContainsFunc(value, unicode.IsLetter) {
		return
	}
	key := strings.Join(ws, " ")
	e := vi.exact[key]
	if e == nil {
		e = &valueEntry{text: value}
		vi.exact[key] = e
	}
	if len(e.spell) < maxSpellings && !slices.Contains(e.spell, spelling{col, value}) {
		e.spell = append(e.spell, spelling{col, value})
	}
	for _, c := range e.cols {
		if c == col {
			return
		}
	}
	e.cols = append(e.cols, col)
	vi.longest = max(vi.longest, len(ws))
	vi.values++
}

// match finds the phrases of the question (lower-case words) that are
// stored values, longest first and without overlap. Single words must be
// at least 3 letters long and not stop words: "iv" or "the" alone say
// little.
func (vi *valueIndex) match(qw []string) []valueMatch {
	var out []valueMatch
	for i := 0; i < len(qw); {
		found := 0
		for n := min(vi.longest, len(qw)-i); n >= 1; n-- {
			phrase := strings.Join(qw[i:i+n], " ")
			e, ok := vi.exact[phrase]
			if !ok {
				continue
			}
			if n == 1 && (len(phrase) < 3 || isStopWord(phrase) || !strings.ContainsFunc(phrase, unicode.IsLetter)) {
				continue
			}
			out = append(out, valueMatch{phrase: phrase, cols: e.cols})
			found = n
			break
		}
		if found == 0 {
			i++
		} else {
			i += found
		}
	}
	return out
}

package cohort

import (
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"github.com/clinsight/clinsight/datasets"
)

// Limits of the result shown to the explaining model.
const (
	// fullResultRows and fullResultChars bound a result shown whole.
	fullResultRows  = 30
	fullResultChars = 4000
	// sampleRows is how many rows of a larger result are shown.
	sampleRows = 10
	// maxCheckedCells bounds the cells number verification reads.
	maxCheckedCells = 200_000
)

// resultForPrompt describes a result for the explaining model: the whole
// result when it is small; otherwise its row count, a sample of rows and
// statistics of each column.
func resultForPrompt(res *datasets.Result) string {
	if len(res.Rows) == 0 {
		return fmt.Sprintf("No rows (columns: %s).", strings.Join(res.ColumnNames(), ", "))
	}
	if len(res.Rows) <= fullResultRows {
		if s := tableText(res, len(res.Rows)); len(s) <= fullResultChars {
			return s
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d rows", len(res.Rows))
	if res.Truncated {
		b.WriteString(" (the row cap was reached: there are more)")
	}
	fmt.Fprintf(&b, ". First %d rows:\n%s\n", min(sampleRows, len(res.Rows)), tableText(res, sampleRows))
	b.WriteString("Column statistics over all rows:\n")
	for i, c := range res.Columns {
		st := columnStats(res, i)
		fmt.Fprintf(&b, "- %s: %d non-null, %d distinct", c.Name, st.count, st.distinct)
		if st.numeric > 0 {
			fmt.Fprintf(&b, ", min %s, max %s, mean %s, sum %s", num(st.min), num(st.max), num(st.sum/float64(st.numeric)), num(st.sum))
		}
		b.WriteString("\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// tableText renders the first n rows as "a | b" lines under a header.
func tableText(res *datasets.Result, n int) string {
	var b strings.Builder
	b.WriteString(strings.Join(res.ColumnNames(), " | "))
	for i, r := range res.Rows {
		if i == n {
			break
		}
		cells := make([]string, len(r))
		for j, v := range r {
			cells[j] = cellString(v)
		}
		b.WriteString("\n" + strings.Join(cells, " | "))
	}
	return b.String()
}

// num prints a statistic compactly.
func num(x float64) string { return strconv.FormatFloat(x, 'g', 6, 64) }

// stats summarises one column.
type stats struct {
	count, distinct, numeric int
	min, max, sum            float64
}

// columnStats computes the statistics of column i.
func columnStats(res *datasets.Result, i int) stats {
	st := stats{min: math.Inf(1), max: math.Inf(-1)}
	seen := map[string]bool{}
	for _, r := range res.Rows {
		v := r[i]
		if v == nil {
			continue
		}
		st.count++
		seen[fmt.Sprint(v)] = true
		if x, ok := numeric(v); ok {
			st.numeric++
			st.sum += x
			st.min, st.max = math.Min(st.min, x), math.Max(st.max, x)
		}
	}
	st.distinct = len(seen)
	return st
}

// numeric converts an integer or real cell.
func numeric(v any) (float64, bool) {
	switch x := v.(type) {
	case int64:
		return float64(x), true
	case float64:
		return x, true
	}
	return 0, false
}

// numberPattern matches numbers written in prose: dates and times first,
// then numbers with thousands separators, decimals and an optional percent
// sign.
var numberPattern = regexp.MustCompile(`\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?|\d{1,2}:\d{2}(?::\d{2})?|\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|\d+(?:\.\d+)?%?`)

// evidence holds what numbers in an explanation may be checked against.
type evidence struct {
	values  []sourced
	strings []sourced // text cells and the question, for dates and times
}

// sourced is a value with where it comes from.
type sourced struct {
	x    float64
	s    string
	from string
}

// collectEvidence gathers the numbers an explanation may state: every
// numeric cell (and the numbers inside text cells), the row and column
// counts, per-column count, distinct count, sum, mean, min and max, each
// cell's share of its column total, differences and ratios between the
// cells of a small result, the numbers of the question and of the query.
func collectEvidence(question, query string, res *datasets.Result) *evidence {
	ev := &evidence{}
	add := func(x float64, from string) { ev.values = append(ev.values, sourced{x: x, from: from}) }
	addText := func(text, from string) {
		for _, m := range numberPattern.FindAllString(text, -1) {
			if x, ok := parseNumber(m); ok {
				add(x, from)
			}
		}
		ev.strings = append(ev.strings, sourced{s: text, from: from})
	}
	addText(question, "question")
	for _, t := range splitKeepingLiterals(query) {
		addText(t.text, "query")
	}
	if res == nil {
		return ev
	}
	add(float64(len(res.Rows)), "row count")
	add(float64(len(res.Columns)), "column count")
	cells := 0
	var small []float64
	for _, r := range res.Rows {
		for _, v := range r {
			if cells++; cells > maxCheckedCells {
				break
			}
			if x, ok := numeric(v); ok {
				add(x, "cell")
				small = append(small, x)
			} else if s, ok := v.(string); ok {
				addText(s, "cell")
			}
		}
	}
	for i := range res.Columns {
		st := columnStats(res, i)
		add(float64(st.count), "column count of values")
		add(float64(st.distinct), "distinct values")
		if st.numeric == 0 {
			continue
		}
		add(st.sum, "column sum")
		add(st.sum/float64(st.numeric), "column mean")
		add(st.min, "column min")
		add(st.max, "column max")
		if st.sum != 0 && len(res.Rows) <= 1000 {
			for _, r := range res.Rows {
				if x, ok := numeric(r[i]); ok {
					add(100*x/st.sum, "share of total")
				}
			}
		}
	}
	if len(small) <= 12 {
		for i, a := range small {
			for j, b := range small {
				if i == j {
					continue
				}
				add(a-b, "difference")
				if b != 0 {
					add(100*a/b, "ratio")
					add(100*(a-b)/b, "change")
				}
			}
		}
	}
	return ev
}

// parseNumber reads a number as written in prose ("1,234.5", "42%").
func parseNumber(s string) (float64, bool) {
	s = strings.TrimSuffix(strings.ReplaceAll(s, ",", ""), "%")
	x, err := strconv.ParseFloat(s, 64)
	return x, err == nil
}

// verifyNumbers finds the numbers of an explanation and checks each
// against the evidence: a number matches a value when they agree to the
// precision it is written with (42 matches 41.7; 41.7 matches 41.68).
// Dates and times must appear in a text cell or the question.
func verifyNumbers(text string, ev *evidence) []NumberCheck {
	var out []NumberCheck
	for _, loc := range numberPattern.FindAllStringIndex(text, -1) {
		if partOfWord(text, loc[0], loc[1]) {
			continue // a code or a name ("ICD-10", "B12", "COVID-19"), not a figure
		}
		m := text[loc[0]:loc[1]]
		nc := NumberCheck{Text: m, Start: loc[0], End: loc[1]}
		if strings.ContainsAny(m, "-:") {
			for _, s := range ev.strings {
				if strings.Contains(s.s, m) {
					nc.Verified, nc.Source = true, s.from
					break
				}
			}
			out = append(out, nc)
			continue
		}
		x, ok := parseNumber(m)
		if !ok {
			continue
		}
		tol := 0.5
		if i := strings.IndexByte(m, '.'); i >= 0 {
			decimals := len(strings.TrimSuffix(m, "%")) - i - 1
			tol = 0.5 * math.Pow(10, -float64(decimals))
		}
		tol += 1e-9 * math.Abs(x)
		for _, v := range ev.values {
			if math.Abs(v.x-x) <= tol || math.Abs(math.Abs(v.x)-x) <= tol && v.from == "difference" {
				nc.Verified, nc.Source = true, v.from
				break
			}
		}
		out = append(out, nc)
	}
	return out
}

// partOfWord reports whether text[start:end] is glued to letters: preceded
// by a letter (or by a letter and a hyphen) or followed by a letter.
func partOfWord(text string, start, end int) bool {
	isLetter := func(c byte) bool { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') }
	if start > 0 && (isLetter(text[start-1]) || text[start-1] == '-' && start > 1 && isLetter(text[start-2])) {
		return true
	}
	return end < len(text) && isLetter(text[end])
}

// ChartData returns the bars of a small grouped count: a result of 2 to 30
// rows whose last column is numeric and whose other columns label the
// rows (for example diagnosis and number of patients). ok is false for any
// other result.
func ChartData(res *datasets.Result) (labels []string, values []float64, ok bool) {
	if res == nil || len(res.Columns) < 2 || len(res.Rows) < 2 || len(res.Rows) > 30 {
		return nil, nil, false
	}
	last := len(res.Columns) - 1
	for _, r := range res.Rows {
		x, isNum := numeric(r[last])
		if !isNum || x < 0 {
			return nil, nil, false
		}
		parts := make([]string, last)
		for i := range last {
			parts[i] = cellString(r[i])
		}
		labels = append(labels, strings.Join(parts, " · "))
		values = append(values, x)
	}
	return labels, values, true
}

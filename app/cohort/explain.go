package cohort

import (
	"crypto/sha256"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/internal/lazyre"
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
	// maxPromptColumns is the most columns shown to a model; a result
	// wider than that is summarised by its first columns.
	maxPromptColumns = 40
	// maxPromptName is the longest column name shown, in bytes.
	maxPromptName = 60
	// charsPerToken turns a budget in tokens into characters: about 4
	// characters of English or SQL make one token for the tokenizers of
	// common local models. Digits and symbols take more tokens per
	// character, which the share of the window left to the result (half)
	// leaves room for.
	charsPerToken = 4
)

// resultBudget is the characters of the explain prompt the result may
// take: half the context window less the reply, the other half being for
// the instructions, the question and the SQL.
func (p *Pipeline) resultBudget() int {
	return max(p.cfg.NumCtx/2-explainTokens, 256) * charsPerToken
}

// resultForPrompt describes a result for the explaining model in at most
// budget characters: the whole result when it is small; otherwise its row
// count, a sample of rows and statistics of each column. Cells are cut
// (cellString), at most maxPromptColumns columns are shown, and when
// anything had to be left out a last line says how many rows, columns and
// bytes of values the model did not see.
func resultForPrompt(res *datasets.Result, budget int) string {
	ncols := min(len(res.Columns), maxPromptColumns)
	names := promptNames(res, ncols)
	// The closing lines (what was left out, what the runner cut) always
	// fit: they take at most summaryReserve characters.
	const summaryReserve = 600
	w := &budgetWriter{left: max(budget-summaryReserve, 0)}
	shown := shownCells{rows: map[int]bool{}}
	if len(res.Rows) == 0 {
		w.line(fmt.Sprintf("No rows (columns: %s).", strings.Join(names, ", ")))
		return w.close(res, ncols, shown, budget)
	}
	if len(res.Rows) <= fullResultRows && ncols == len(res.Columns) {
		whole := &budgetWriter{left: min(fullResultChars, w.left)}
		ok := whole.line(strings.Join(names, " | "))
		for i := 0; ok && i < len(res.Rows); i++ {
			ok = whole.line(rowText(res.Rows[i], ncols))
		}
		if ok {
			for i := range res.Rows {
				shown.rows[i] = true
			}
			shown.stats = ncols
			*w = *whole
			return w.close(res, ncols, shown, budget)
		}
	}
	head := fmt.Sprintf("%d rows", len(res.Rows))
	if res.Truncated {
		head += " (the query's result was cut: there are more)"
	}
	w.line(fmt.Sprintf("%s. First %d rows:", head, min(sampleRows, len(res.Rows))))
	w.line(strings.Join(names, " | "))
	for i := 0; i < len(res.Rows) && i < sampleRows; i++ {
		if !w.line(rowText(res.Rows[i], ncols)) {
			break
		}
		shown.rows[i] = true
	}
	if w.line("Column statistics over all rows:") {
		for i := range ncols {
			st := columnStats(res, i)
			line := fmt.Sprintf("- %s: %d non-null, %d distinct", names[i], st.count, st.distinct)
			if st.numeric > 0 {
				line += fmt.Sprintf(", min %s, max %s, mean %s, sum %s", num(st.min), num(st.max), num(st.sum/float64(st.numeric)), num(st.sum))
			}
			if !w.line(line) {
				break
			}
			shown.stats++
		}
	}
	return w.close(res, ncols, shown, budget)
}

// shownCells records what of a result a prompt shows.
type shownCells struct {
	rows  map[int]bool // rows shown (their first ncols cells)
	stats int          // columns whose statistics are shown
}

// budgetWriter writes whole lines while they fit in its budget.
type budgetWriter struct {
	b    strings.Builder
	left int
}

// line writes s as one line if it fits and reports whether it did.
func (w *budgetWriter) line(s string) bool {
	if len(s)+1 > w.left {
		return false
	}
	if w.b.Len() > 0 {
		w.b.WriteByte('\n')
	}
	w.b.WriteString(s)
	w.left -= len(s) + 1
	return true
}

// close appends what was left out of the prompt and what the runner cut,
// and returns the text (never longer than budget).
func (w *budgetWriter) close(res *datasets.Result, ncols int, shown shownCells, budget int) string {
	var all, seen int64
	for i, r := range res.Rows {
		for j, v := range r {
			all += valueBytes(v)
			if shown.rows[i] && j < ncols {
				seen += shownBytes(v)
			}
		}
	}
	var left []string
	if n := len(res.Rows) - len(shown.rows); n > 0 && len(res.Rows) > 0 {
		left = append(left, fmt.Sprintf("%d of %d rows", n, len(res.Rows)))
	}
	if n := len(res.Columns) - ncols; n > 0 {
		left = append(left, fmt.Sprintf("%d of %d columns", n, len(res.Columns)))
	}
	if n := ncols - shown.stats; n > 0 && len(res.Rows) > 0 {
		left = append(left, fmt.Sprintf("the statistics of %d columns", n))
	}
	if all > seen {
		left = append(left, "about "+datasets.FormatBytes(all-seen)+" of values")
	}
	var tail []string
	if len(left) > 0 {
		tail = append(tail, "Not shown, to fit the model's context: "+strings.Join(left, ", ")+".")
	}
	if n := res.Notice(); n != "" {
		tail = append(tail, "The query's result was itself cut: "+n)
	}
	out := w.b.String()
	if len(tail) > 0 {
		out = strings.TrimLeft(out+"\n"+strings.Join(tail, "\n"), "\n")
	}
	return cutText(out, budget)
}

// cutText cuts s to at most n bytes, at a character boundary, ending a cut
// with "…".
func cutText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	if n < len("…") {
		return ""
	}
	k := n - len("…")
	for k > 0 && !utf8.RuneStart(s[k]) {
		k--
	}
	return s[:k] + "…"
}

// valueBytes is the size of a value: the bytes of text and BLOBs, the
// digits of numbers.
func valueBytes(v any) int64 {
	switch x := v.(type) {
	case nil:
		return 0
	case string:
		return int64(len(x))
	case datasets.Blob:
		return int64(len(x))
	}
	return int64(len(cellString(v)))
}

// shownBytes is how much of a value cellString shows: text up to its cut,
// nothing of a BLOB's bytes (only its size), all of a number.
func shownBytes(v any) int64 {
	switch x := v.(type) {
	case string:
		return min(int64(len(x)), int64(len(cellString(x))))
	case datasets.Blob:
		return 0
	}
	return valueBytes(v)
}

// promptNames returns the first n column names, each cut to maxPromptName.
func promptNames(res *datasets.Result, n int) []string {
	names := make([]string, n)
	for i := range n {
		names[i] = cutText(res.Columns[i].Name, maxPromptName)
	}
	return names
}

// rowText renders the first n cells of a row as "a | b".
func rowText(r []any, n int) string {
	cells := make([]string, min(n, len(r)))
	for j := range cells {
		cells[j] = cellString(r[j])
	}
	return strings.Join(cells, " | ")
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
		seen[distinctKey(v)] = true
		if x, ok := numeric(v); ok {
			st.numeric++
			st.sum += x
			st.min, st.max = math.Min(st.min, x), math.Max(st.max, x)
		}
	}
	st.distinct = len(seen)
	return st
}

// distinctKey identifies a value for counting distinct values without
// copying long ones: text is its own key, a BLOB is keyed by its hash.
func distinctKey(v any) string {
	switch x := v.(type) {
	case string:
		return "t" + x
	case datasets.Blob:
		sum := sha256.Sum256(x)
		return "b" + string(sum[:])
	}
	return "n" + fmt.Sprint(v)
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
var numberPattern = lazyre.New(`\d{4}-\d{2}-\d{2}(?:[ T]\d{2}:\d{2}(?::\d{2})?)?|\d{1,2}:\d{2}(?::\d{2})?|\d{1,3}(?:,\d{3})+(?:\.\d+)?%?|\d+(?:\.\d+)?%?`)

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
		for _, m := range numberPattern().FindAllString(text, -1) {
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
			} else if sup, ok := v.(disclosure.Suppressed); ok {
				add(float64(sup.K), "suppressed cell ("+sup.String()+")") // "fewer than 11"
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
	for _, loc := range numberPattern().FindAllStringIndex(text, -1) {
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
		sup, suppressed := r[last].(disclosure.Suppressed)
		if (!isNum || x < 0) && !suppressed {
			return nil, nil, false
		}
		parts := make([]string, last)
		for i := range last {
			parts[i] = cellString(r[i])
		}
		label := strings.Join(parts, " · ")
		if suppressed { // no bar: its height would tell the hidden value
			label, x = label+" ("+sup.String()+", not shown)", 0
		}
		labels = append(labels, label)
		values = append(values, x)
	}
	return labels, values, true
}

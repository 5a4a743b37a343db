package evidence

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
)

// maxLineBytes bounds one line of a text format (MEDLINE, RIS).
const maxLineBytes = 4 << 20

// taggedLine is one tag and its value, with continuation lines joined.
type taggedLine struct {
	tag, value string
	line       int
	// more are the continuation lines, joined to value by joinMore (one
	// join: adding each line to value would copy it once per line).
	more []string
}

// joinMore joins the continuation lines of each line to its value.
func joinMore(lines []taggedLine) {
	for i := range lines {
		if l := &lines[i]; len(l.more) > 0 {
			l.value = l.value + " " + strings.Join(l.more, " ")
			l.more = nil
		}
	}
}

// MEDLINEReader streams the records of PubMed's MEDLINE text format
// (.nbib): "TAG - value" lines (the tag padded to four characters),
// continuation lines indented by six spaces, a blank line between records.
type MEDLINEReader struct {
	sc      *bufio.Scanner
	budget  *recordBudget
	line    int
	n       int
	pending *taggedLine // the first line of the next record, read ahead
	done    bool
}

// NewMEDLINEReader returns a reader of the MEDLINE text in r.
func NewMEDLINEReader(r io.Reader) *MEDLINEReader {
	budget := newRecordBudget(r, maxRecordBytes, errRecordTooLarge)
	sc := bufio.NewScanner(budget)
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	return &MEDLINEReader{sc: sc, budget: budget}
}

// medlineTag splits "TAG - value" (the tag is 1–4 upper-case letters or
// digits, padded with spaces to four characters); ok is false for other
// lines.
func medlineTag(line string) (tag, value string, ok bool) {
	i := 0
	for i < len(line) && i < 4 && (line[i] >= 'A' && line[i] <= 'Z' || isDigit(line[i])) {
		i++
	}
	if i == 0 {
		return "", "", false
	}
	tag = line[:i]
	for i < len(line) && line[i] == ' ' {
		i++
	}
	if i >= len(line) || line[i] != '-' {
		return "", "", false
	}
	return tag, strings.TrimPrefix(line[i+1:], " "), true
}

// lines returns the next record's tagged lines, nil at the end of input.
func (m *MEDLINEReader) lines() ([]taggedLine, error) {
	var out []taggedLine
	m.budget.reset()
	if m.pending != nil {
		out = append(out, *m.pending)
		m.pending = nil
	}
	for !m.done {
		if !m.sc.Scan() {
			m.done = true
			if err := m.sc.Err(); err != nil {
				return nil, &ParseError{Record: m.n + 1, Line: m.line + 1, Err: readErr(err)}
			}
			break
		}
		m.line++
		text := strings.TrimRight(m.sc.Text(), "\r")
		if m.line == 1 {
			text = strings.TrimPrefix(text, "\ufeff")
		}
		if strings.TrimSpace(text) == "" {
			if len(out) > 0 {
				return out, nil
			}
			continue
		}
		if strings.HasPrefix(text, "      ") || strings.HasPrefix(text, "\t") {
			if len(out) == 0 {
				return nil, &ParseError{Record: m.n + 1, Line: m.line, Err: errors.New("a continuation line (indented) comes before any tag")}
			}
			out[len(out)-1].more = append(out[len(out)-1].more, strings.TrimSpace(text))
			continue
		}
		tag, value, ok := medlineTag(text)
		if !ok || len(text) < 5 {
			return nil, &ParseError{Record: m.n + 1, Line: m.line, Err: fmt.Errorf("%q is not a MEDLINE line (expected \"TAG - value\")", clip(text, 40))}
		}
		tl := taggedLine{tag: tag, value: strings.TrimSpace(value), line: m.line}
		if tl.tag == "PMID" && len(out) > 0 {
			// A new record without a blank line in between.
			m.pending = &tl
			return out, nil
		}
		out = append(out, tl)
	}
	return out, nil
}

// Next returns the next record, io.EOF after the last one.
func (m *MEDLINEReader) Next() (Record, error) {
	lines, err := m.lines()
	if err != nil {
		return Record{}, err
	}
	joinMore(lines)
	if len(lines) == 0 {
		if m.n == 0 {
			return Record{}, &ParseError{Line: m.line, Err: errors.New("no MEDLINE records (expected lines such as \"PMID- 12345678\")")}
		}
		return Record{}, io.EOF
	}
	m.n++
	r := Record{Line: lines[0].line}
	var ab string
	for _, l := range lines {
		v := l.value
		switch l.tag {
		case "PMID":
			r.PMID = v
		case "TI":
			r.Title = cleanSpace(v)
		case "BTI":
			if r.Title == "" {
				r.Title = cleanSpace(v)
			}
		case "AB":
			ab = cleanSpace(v)
		case "MH":
			r.MeSH = append(r.MeSH, meshEntries(v)...)
		case "PT":
			r.PublicationTypes = append(r.PublicationTypes, cleanSpace(v))
		case "JT":
			r.Journal = cleanSpace(v)
		case "TA":
			if r.Journal == "" {
				r.Journal = cleanSpace(v)
			}
		case "DP":
			r.Year = parseYear(v)
		case "FAU":
			r.Authors = append(r.Authors, strings.ReplaceAll(cleanSpace(v), ",", ""))
		case "CN":
			r.Authors = append(r.Authors, cleanSpace(v))
		case "LID", "AID":
			if doi, ok := strings.CutSuffix(v, "[doi]"); ok && r.DOI == "" {
				r.DOI = strings.TrimSpace(doi)
			}
		case "OT":
			r.Keywords = append(r.Keywords, cleanSpace(v))
		}
	}
	if len(r.Authors) == 0 {
		for _, l := range lines {
			if l.tag == "AU" {
				r.Authors = append(r.Authors, cleanSpace(l.value))
			}
		}
	}
	if ab != "" {
		r.Sections = splitStructured(ab)
	}
	if r.PMID == "" {
		return Record{}, recordErr(m.n, &r, r.Line, errors.New("the record has no PMID line"))
	}
	if !isPMID(r.PMID) {
		return Record{}, recordErr(m.n, nil, r.Line, fmt.Errorf("PMID %q is not a number", r.PMID))
	}
	if err := r.Validate(); err != nil {
		return Record{}, recordErr(m.n, &r, r.Line, err)
	}
	return r, nil
}

// meshEntries turns a MEDLINE MH value ("*Breast Neoplasms/*drug
// therapy/mortality") into "Descriptor/Qualifier" entries without the
// major-topic stars.
func meshEntries(v string) []string {
	parts := strings.Split(strings.ReplaceAll(v, "*", ""), "/")
	d := cleanSpace(parts[0])
	if d == "" {
		return nil
	}
	if len(parts) == 1 {
		return []string{d}
	}
	var out []string
	for _, q := range parts[1:] {
		if q = cleanSpace(q); q != "" {
			out = append(out, d+"/"+q)
		}
	}
	return out
}

// labelSpans finds the section headings of a structured abstract written
// as one text: an upper-case label of 3–40 characters ([A-Z] then
// [A-Z0-9 ,&/-]) at the start or after white space, followed by ":" and
// white space. Each span is [label start, label end, text start].
func labelSpans(ab string) [][3]int {
	var out [][3]int
	from := 0
	for i := 0; i+1 < len(ab); i++ {
		if ab[i] != ':' || !isSpaceByte(ab[i+1]) || i < from {
			continue
		}
		j := i
		for j > from && i-j < 40 && isLabelByte(ab[j-1]) {
			j--
		}
		// The leftmost start that begins with a capital after white space
		// not taken by the previous heading's ": ".
		start := -1
		for p := j; p <= i-3; p++ {
			if ab[p] >= 'A' && ab[p] <= 'Z' && (p == 0 || isSpaceByte(ab[p-1]) && p-1 >= from) {
				start = p
				break
			}
		}
		if start < 0 {
			continue
		}
		out = append(out, [3]int{start, i, i + 2})
		from = i + 2
	}
	return out
}

func isLabelByte(c byte) bool {
	return c >= 'A' && c <= 'Z' || isDigit(c) || c == ' ' || c == ',' || c == '&' || c == '/' || c == '-'
}

func isSpaceByte(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// splitStructured splits "BACKGROUND: ... METHODS: ..." into sections; an
// abstract without such labels is one unlabelled section.
func splitStructured(ab string) []Section {
	spans := labelSpans(ab)
	if len(spans) == 0 || strings.TrimSpace(ab[:spans[0][0]]) != "" {
		return []Section{{Text: ab}}
	}
	var out []Section
	for i, sp := range spans {
		end := len(ab)
		if i+1 < len(spans) {
			end = spans[i+1][0]
		}
		text := strings.TrimSpace(ab[min(sp[2], end):end])
		if text == "" {
			continue
		}
		out = append(out, Section{Label: ab[sp[0]:sp[1]], Text: text})
	}
	return out
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

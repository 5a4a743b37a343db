package evidence

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/clinsight/clinsight/internal/lazyre"
)

// maxTextBytes bounds a plain-text full text (a long article is well under
// 1 MB).
const maxTextBytes = 32 << 20

// ParseText reads a full text in plain UTF-8 text into sections:
// paragraphs are separated by blank lines (the lines of a paragraph are
// joined), and a paragraph's first line that looks like a heading starts a
// section: a known heading ("Methods", "RESULTS:", "Statistical
// analysis"), a numbered one ("2. Methods", "2.1 Statistical analysis",
// nested as "Methods / Statistical analysis") or a short line in capitals.
// A paragraph whose lines hold tab- or "|"-separated cells, or that starts
// with "Table N", is a table section of its own (Category TableCategory,
// cells joined by " | "). Everything from a "References" heading on is
// left out. Errors are *ParseError values with the line.
func ParseText(r io.Reader) ([]Section, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	p := &textParser{}
	var para []string
	line, size := 0, 0
	for sc.Scan() {
		line++
		b := sc.Bytes()
		size += len(b) + 1
		if size > maxTextBytes {
			return nil, &ParseError{Line: line, Err: fmt.Errorf("the text is longer than %d MB: is this one article?", maxTextBytes>>20)}
		}
		if line == 1 {
			b = []byte(strings.TrimPrefix(string(b), "\ufeff"))
		}
		if !utf8.Valid(b) {
			return nil, &ParseError{Line: line, Err: errors.New("the text is not UTF-8 (save the file as UTF-8 text)")}
		}
		s := strings.TrimRight(string(b), " \t\r\f")
		if strings.TrimSpace(s) == "" {
			if p.paragraph(para) {
				return p.done(), nil
			}
			para = para[:0]
			continue
		}
		para = append(para, s)
	}
	if err := sc.Err(); err != nil {
		if errors.Is(err, bufio.ErrTooLong) {
			return nil, &ParseError{Line: line + 1, Err: errors.New("a line is longer than 4 MB: is this a text file?")}
		}
		return nil, &ParseError{Line: line, Err: err}
	}
	p.paragraph(para)
	return p.done(), nil
}

// textParser assembles the sections of a plain text.
type textParser struct {
	out     []Section
	path    []string // the headings in force, outermost first
	text    []string // paragraphs of the current section
	tables  int
	started bool // a paragraph has been read
}

// label is the current section's label.
func (p *textParser) label() string { return strings.Join(p.path, " / ") }

// flush ends the current run of paragraphs.
func (p *textParser) flush() {
	if len(p.text) > 0 {
		p.out = append(p.out, Section{Label: p.label(), Text: strings.Join(p.text, "\n")})
		p.text = nil
	}
}

func (p *textParser) done() []Section {
	p.flush()
	return p.out
}

// paragraph adds a paragraph (its lines); it reports true when the
// paragraph is the references heading, after which nothing is read.
func (p *textParser) paragraph(lines []string) bool {
	if len(lines) == 0 {
		return false
	}
	// A heading inside a paragraph (text extracted from a PDF has no blank
	// lines): a known heading or a line in capitals after a sentence's end.
	for i := 1; i < len(lines); i++ {
		prev := strings.TrimSpace(lines[i-1])
		if prev == "" || !strings.ContainsAny(prev[len(prev)-1:], ".?!:") {
			continue
		}
		if _, _, ok := heading(lines[i], false); ok && !numberedHeading().MatchString(strings.TrimSpace(lines[i])) && strongHeading(lines[i]) {
			if p.paragraph(lines[:i]) {
				return true
			}
			return p.paragraph(lines[i:])
		}
	}
	first := !p.started
	p.started = true
	if h, depth, ok := heading(lines[0], first); ok {
		if isReferencesHeading(h) {
			return true
		}
		p.flush()
		if depth <= 0 || depth > len(p.path)+1 {
			depth = min(max(depth, 1), len(p.path)+1)
		}
		p.path = append(p.path[:depth-1], h)
		lines = lines[1:]
		if len(lines) == 0 {
			return false
		}
	}
	if rows, caption, ok := tableRows(lines); ok {
		p.flush()
		p.tables++
		label := fmt.Sprintf("Table %d", p.tables)
		if m := tableLabel().FindStringSubmatch(caption); m != nil {
			label = m[1]
		}
		if caption == "" {
			caption = label
		}
		p.out = append(p.out, Section{Label: label, Category: TableCategory, Text: caption + "\n" + strings.Join(rows, "\n")})
		return false
	}
	p.text = append(p.text, joinLines(lines))
	return false
}

// joinLines joins the hard-wrapped lines of a paragraph; a line ending in
// a hyphen is joined without a space ("CAR-" + "T cells").
func joinLines(lines []string) string {
	var b strings.Builder
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if i > 0 && !strings.HasSuffix(b.String(), "-") {
			b.WriteByte(' ')
		}
		b.WriteString(l)
	}
	return cleanSpace(b.String())
}

var (
	// numberedHeading is "2. Methods", "2.1 Statistical analysis", "3) Results".
	numberedHeading = lazyre.New(`^(\d{1,2}(?:\.\d{1,2})*)[.)]?\s+(\p{Lu}.*)$`)
	// tableLabel is the "Table 2." a table's caption starts with (not
	// "Table 2 shows ...").
	tableLabel = lazyre.New(`^((?i:table)\s+[0-9IVX]+[A-Za-z]?)(?:[.:]|\s+\p{Lu}|\s*$)`)
	// cellSplit separates the cells of a table row.
	cellSplit = lazyre.New(`\t+|\s*\|\s*|\s{2,}`)
)

// knownHeadings are section headings of articles (lower case).
var knownHeadings = sync.OnceValue(func() map[string]bool {
	return map[string]bool{
		"abstract": true, "summary": true, "background": true, "introduction": true, "objective": true, "objectives": true,
		"aim": true, "aims": true, "purpose": true, "methods": true, "method": true, "materials and methods": true,
		"patients and methods": true, "methodology": true, "study design": true, "design": true, "setting": true,
		"participants": true, "patients": true, "interventions": true, "outcomes": true, "main outcome measures": true,
		"statistical analysis": true, "statistical analyses": true, "statistical methods": true, "results": true,
		"findings": true, "discussion": true, "conclusion": true, "conclusions": true, "limitations": true,
		"strengths and limitations": true, "interpretation": true, "funding": true, "acknowledgements": true,
		"acknowledgments": true, "conflicts of interest": true, "declaration of interests": true,
		"references": true, "bibliography": true, "literature cited": true, "trial registration": true,
		"safety": true, "efficacy": true, "baseline characteristics": true, "adverse events": true,
	}
})

// isReferencesHeading reports whether h starts the reference list.
func isReferencesHeading(h string) bool {
	switch strings.ToLower(h) {
	case "references", "bibliography", "literature cited", "reference list":
		return true
	}
	return false
}

// heading reports whether line looks like a section heading and returns
// it without its number and final colon, with its depth (1 for "2.
// Methods" or an unnumbered heading, 2 for "2.1 ..."). The first paragraph
// of a text (usually the title) is a heading only when it is a known one
// or numbered.
func heading(line string, first bool) (string, int, bool) {
	h := strings.TrimSpace(line)
	h = strings.TrimSpace(strings.TrimSuffix(h, ":"))
	n := utf8.RuneCountInString(h)
	if n == 0 || n > 80 || len(strings.Fields(h)) > 10 {
		return "", 0, false
	}
	if strings.HasSuffix(h, ".") || strings.HasSuffix(h, ",") || strings.HasSuffix(h, ";") || tableLabel().MatchString(h) {
		return "", 0, false
	}
	if m := numberedHeading().FindStringSubmatch(h); m != nil && len(strings.Fields(m[2])) <= 8 {
		return m[2], strings.Count(m[1], ".") + 1, true
	}
	if knownHeadings()[strings.ToLower(h)] {
		return h, 1, true
	}
	if first {
		return "", 0, false
	}
	letters, upper := 0, 0
	for _, r := range h {
		if unicode.IsLetter(r) {
			letters++
			if unicode.IsUpper(r) {
				upper++
			}
		}
	}
	if letters >= 3 && upper == letters {
		return h, 1, true
	}
	return "", 0, false
}

// strongHeading reports whether a line is a known heading or at least
// five letters all in capitals ("RESULTS", not "HER2").
func strongHeading(line string) bool {
	h := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(line), ":"))
	if knownHeadings()[strings.ToLower(h)] {
		return true
	}
	letters := 0
	for _, r := range h {
		if unicode.IsLower(r) {
			return false
		}
		if unicode.IsLetter(r) {
			letters++
		}
	}
	return letters >= 5
}

// tableRows returns a paragraph's rows with their cells joined by " | "
// and its caption when the paragraph is a table: it starts with "Table N"
// and has rows, or every line but a caption has tab- or "|"-separated
// cells.
func tableRows(lines []string) (rows []string, caption string, ok bool) {
	body := lines
	cells := func(l string) bool { return strings.Contains(l, "\t") || strings.Contains(l, "|") }
	if tableLabel().MatchString(strings.TrimSpace(lines[0])) {
		caption = cleanSpace(lines[0])
		body = lines[1:]
		some := false
		for _, l := range body {
			some = some || cells(l) || strings.Contains(strings.TrimSpace(l), "  ")
		}
		if !some {
			return nil, "", false
		}
	} else {
		if len(lines) < 2 {
			return nil, "", false
		}
		n := 0
		for _, l := range lines {
			if cells(l) {
				n++
			}
		}
		switch {
		case n == len(lines):
		case n == len(lines)-1 && !cells(lines[0]):
			caption = cleanSpace(lines[0])
			body = lines[1:]
		default:
			return nil, "", false
		}
	}
	for _, l := range body {
		var cs []string
		for _, c := range cellSplit().Split(strings.Trim(strings.TrimSpace(l), "|"), -1) {
			cs = append(cs, cleanSpace(c))
		}
		rows = append(rows, strings.Join(cs, " | "))
	}
	return rows, caption, true
}

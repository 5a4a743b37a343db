package evidence

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/clinsight/clinsight/internal/lazyre"
)

// RISReader streams the records of a RIS file: "TY  - JOUR" opens a record,
// "ER  -" closes it, "XX  - value" lines in between.
type RISReader struct {
	sc     *bufio.Scanner
	budget *recordBudget
	line   int
	n      int
}

// NewRISReader returns a reader of the RIS text in r.
func NewRISReader(r io.Reader) *RISReader {
	budget := newRecordBudget(r, maxRecordBytes, errRecordTooLarge)
	sc := bufio.NewScanner(budget)
	sc.Buffer(make([]byte, 64<<10), maxLineBytes)
	return &RISReader{sc: sc, budget: budget}
}

// risTag matches "XX  - value" (two characters, two spaces, a dash); some
// writers use one space or none before the dash.
var risTag = lazyre.New(`^([A-Z][A-Z0-9]) {0,2}-(?: (.*))?$`)

// pubmedURL finds a PMID in a PubMed link.
var pubmedURL = lazyre.New(`pubmed(?:\.ncbi\.nlm\.nih\.gov)?/(\d{1,9})`)

// Next returns the next record, io.EOF after the last one.
func (x *RISReader) Next() (Record, error) {
	var lines []taggedLine
	in := false
	x.budget.reset()
	for x.sc.Scan() {
		x.line++
		text := strings.TrimRight(x.sc.Text(), "\r")
		if x.line == 1 {
			text = strings.TrimPrefix(text, "\ufeff")
		}
		if strings.TrimSpace(text) == "" {
			continue
		}
		g := risTag().FindStringSubmatch(text)
		if g == nil {
			if in && len(lines) > 0 {
				// A wrapped value continues the previous tag.
				lines[len(lines)-1].more = append(lines[len(lines)-1].more, strings.TrimSpace(text))
				continue
			}
			return Record{}, &ParseError{Record: x.n + 1, Line: x.line, Err: fmt.Errorf("%q is not a RIS line (expected \"TY  - JOUR\")", clip(text, 40))}
		}
		tl := taggedLine{tag: g[1], value: strings.TrimSpace(g[2]), line: x.line}
		switch {
		case tl.tag == "TY":
			if in {
				return Record{}, &ParseError{Record: x.n, Line: x.line, Err: errors.New("a new record (TY) starts before the previous one ended (ER)")}
			}
			in = true
			x.n++
			lines = []taggedLine{tl}
		case !in:
			return Record{}, &ParseError{Record: x.n + 1, Line: x.line, Err: fmt.Errorf("tag %s outside a record (a record starts with \"TY  - \")", tl.tag)}
		case tl.tag == "ER":
			joinMore(lines)
			return x.record(lines)
		default:
			lines = append(lines, tl)
		}
	}
	if err := x.sc.Err(); err != nil {
		return Record{}, &ParseError{Record: x.n, Line: x.line + 1, Err: readErr(err)}
	}
	if in {
		return Record{}, &ParseError{Record: x.n, Line: x.line, Err: errors.New("the file ends inside a record (no \"ER  - \" line)")}
	}
	if x.n == 0 {
		return Record{}, &ParseError{Line: x.line, Err: errors.New("no RIS records (expected a line \"TY  - JOUR\")")}
	}
	return Record{}, io.EOF
}

func (x *RISReader) record(lines []taggedLine) (Record, error) {
	r := Record{Line: lines[0].line}
	var ab string
	for _, l := range lines {
		v := cleanSpace(l.value)
		switch l.tag {
		case "TI", "T1":
			if r.Title == "" {
				r.Title = v
			}
		case "AB", "N2":
			if ab == "" {
				ab = v
			}
		case "AU", "A1":
			r.Authors = append(r.Authors, strings.ReplaceAll(v, ",", ""))
		case "KW":
			r.Keywords = append(r.Keywords, v)
		case "PY", "Y1", "DA":
			if r.Year == 0 {
				r.Year = parseYear(v)
			}
		case "JF", "JO", "T2", "JA":
			if r.Journal == "" {
				r.Journal = v
			}
		case "DO":
			r.DOI = v
		case "AN":
			if isPMID(v) {
				r.PMID = v
			}
		case "UR", "L2":
			if g := pubmedURL().FindStringSubmatch(v); g != nil && r.PMID == "" {
				r.PMID = g[1]
			}
		case "M3":
			if v != "" {
				r.PublicationTypes = append(r.PublicationTypes, v)
			}
		}
	}
	if ab != "" {
		r.Sections = splitStructured(ab)
	}
	if err := r.Validate(); err != nil {
		return Record{}, recordErr(x.n, &r, r.Line, err)
	}
	return r, nil
}

package evidence

import (
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/clinsight/clinsight/internal/xmlbound"
)

// Article is a full text read from a file: its front matter as a record
// (the PMID, DOI, title, abstract, journal, year, authors and keywords
// found; ID empty) and its text as sections in reading order.
type Article struct {
	// Record is the front matter.
	Record Record
	// PMCID is the PubMed Central ID ("PMC1234567"), "" when not given.
	PMCID string
	// Body is the article's text after the abstract: its sections (labels
	// of nested sections joined as "Methods / Statistical analysis"),
	// tables (Category TableCategory, labelled "Table 2") and figure
	// captions (labelled "Figure 1"), in reading order. References,
	// acknowledgements and footnotes are left out.
	Body []Section
}

// Sections returns the article's text for chunking: "Title", the
// abstract's sections ("Abstract: Methods", or "Abstract" when
// unstructured), then the body.
func (a *Article) Sections() []Section {
	var out []Section
	if t := strings.TrimSpace(a.Record.Title); t != "" {
		out = append(out, Section{Label: "Title", Text: t})
	}
	out = append(out, abstractSections(a.Record.Sections)...)
	return append(out, a.Body...)
}

// abstractSections labels an abstract's sections for chunking: "Abstract:
// RESULTS", or "Abstract" for an unstructured abstract.
func abstractSections(secs []Section) []Section {
	out := make([]Section, 0, len(secs))
	for _, s := range secs {
		label := "Abstract"
		if s.Label != "" {
			label += ": " + s.Label
		}
		out = append(out, Section{Label: label, Category: s.Category, Text: s.Text})
	}
	return out
}

// JATSReader streams the articles of a JATS (PMC) XML file: one <article>,
// or the articles of a <pmc-articleset>, one at a time.
type JATSReader struct {
	// d reads the tokens, its nesting bounded (xmlbound); raw is the
	// decoder under it, which knows the line.
	d, raw *xml.Decoder
	budget *recordBudget
	n      int
	begun  bool
	set    bool
}

// NewJATSReader returns a reader of the JATS XML in r.
func NewJATSReader(r io.Reader) *JATSReader {
	budget := newRecordBudget(r, maxArticleBytes, errArticleTooLarge)
	raw := newXMLDecoder(budget)
	return &JATSReader{d: xmlbound.NewDecoder(raw, maxXMLDepth), raw: raw, budget: budget}
}

// Next returns the next article, io.EOF after the last one. Errors are
// *ParseError values with the line (and, in a set of articles, the
// article's number).
func (j *JATSReader) Next() (Article, error) {
	j.budget.reset()
	for {
		line, _ := j.raw.InputPos()
		tok, err := j.d.Token()
		if err == io.EOF {
			if !j.begun {
				return Article{}, &ParseError{Line: line, Err: errors.New("no <article> element: this is not JATS (PMC) XML")}
			}
			return Article{}, io.EOF
		}
		if err != nil {
			return Article{}, j.syntaxErr(err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch se.Name.Local {
		case "pmc-articleset":
			if !j.begun {
				j.begun, j.set = true, true
				continue
			}
		case "article":
			if !j.begun || j.set {
				j.begun = true
				j.n++
				p := &jatsParser{d: j.d}
				if err := p.article(); err != nil {
					return Article{}, j.articleErr(line, &p.a, err)
				}
				a := p.a
				a.Record.Line = line
				return a, nil
			}
		}
		if !j.begun {
			return Article{}, &ParseError{Line: line, Err: fmt.Errorf("the root element is <%s>, not <article>: this is not JATS (PMC) XML", se.Name.Local)}
		}
		if err := j.d.Skip(); err != nil {
			return Article{}, j.syntaxErr(err)
		}
	}
}

func (j *JATSReader) articleErr(line int, a *Article, err error) error {
	n := 0
	if j.set {
		n = j.n
	}
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return recordErr(n, &a.Record, se.Line, fmt.Errorf("malformed XML: %s", se.Msg))
	}
	var de *xmlbound.DepthError
	if errors.As(err, &de) {
		return recordErr(n, &a.Record, de.Line, fmt.Errorf("%w: is this a JATS article?", err))
	}
	return recordErr(n, &a.Record, line, err)
}

func (j *JATSReader) syntaxErr(err error) error {
	n := 0
	if j.set {
		n = j.n
	}
	var se *xml.SyntaxError
	if errors.As(err, &se) {
		return &ParseError{Record: n, Line: se.Line, Err: fmt.Errorf("malformed XML: %s", se.Msg)}
	}
	var de *xmlbound.DepthError
	if errors.As(err, &de) {
		// Between articles (a skipped element): no article is at fault.
		return &ParseError{Line: de.Line, Err: fmt.Errorf("%w: is this a JATS article?", err)}
	}
	line, _ := j.raw.InputPos()
	return &ParseError{Record: n, Line: line, Err: err}
}

// jatsParser reads one <article> element. It recurses per element: the
// decoder bounds the nesting (xmlbound, maxXMLDepth), Skip's too.
type jatsParser struct {
	d       *xml.Decoder
	a       Article
	tables  int
	figures int
	// pending are tables and figures met inside a paragraph, added after it.
	pending []Section
}

// attr returns the value of the attribute named local.
func attr(se xml.StartElement, local string) string {
	for _, a := range se.Attr {
		if a.Name.Local == local {
			return strings.TrimSpace(a.Value)
		}
	}
	return ""
}

// token reads the next token inside an element: the end of the input
// there is io.ErrUnexpectedEOF.
func (p *jatsParser) token() (xml.Token, error) {
	tok, err := p.d.Token()
	if err == io.EOF {
		return nil, io.ErrUnexpectedEOF
	}
	return tok, err
}

// children calls fn for each child element of the element just opened,
// until its end; fn must consume the child (read to its end or Skip).
func (p *jatsParser) children(fn func(se xml.StartElement) error) error {
	for {
		tok, err := p.token()
		if err != nil {
			return err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if err := fn(t); err != nil {
				return err
			}
		case xml.EndElement:
			return nil
		}
	}
}

// skippedInText are elements whose content is not part of the running
// text (alternative renderings, footnote bodies, graphics).
var skippedInText = map[string]bool{
	"tex-math": true, "graphic": true, "inline-graphic": true, "media": true, "object-id": true,
	"alt-text": true, "long-desc": true, "annotation": true,
}

// text flattens the element just opened to its text. Tables and figures
// inside it are parsed into p.pending when collect is set (a paragraph),
// and skipped otherwise.
func (p *jatsParser) text(collect bool) (string, error) {
	var b strings.Builder
	var walk func() error
	walk = func() error {
		for {
			tok, err := p.token()
			if err != nil {
				return err
			}
			switch t := tok.(type) {
			case xml.StartElement:
				name := t.Name.Local
				switch {
				case skippedInText[name]:
					if err := p.d.Skip(); err != nil {
						return err
					}
					continue
				case collect && (name == "table-wrap" || name == "fig"):
					sec, err := p.float(t)
					if err != nil {
						return err
					}
					p.pending = append(p.pending, sec)
					continue
				case name == "table-wrap" || name == "fig" || name == "table-wrap-group" || name == "fig-group":
					if err := p.d.Skip(); err != nil {
						return err
					}
					continue
				case name == "break" || name == "list-item" || name == "p" || name == "td" || name == "th":
					b.WriteByte(' ')
				case name == "sup":
					b.WriteByte('^') // 10^9/L, not 109/L
				}
				if err := walk(); err != nil {
					return err
				}
			case xml.EndElement:
				return nil
			case xml.CharData:
				b.Write(t)
			}
		}
	}
	if err := walk(); err != nil {
		return "", err
	}
	return cleanSpace(b.String()), nil
}

// article reads the <article> element just opened.
func (p *jatsParser) article() error {
	return p.children(func(se xml.StartElement) error {
		switch se.Name.Local {
		case "front":
			return p.front()
		case "body":
			return p.sec(nil, true)
		case "back":
			// Appendices only: no references, acknowledgements or notes.
			return p.children(func(se xml.StartElement) error {
				switch se.Name.Local {
				case "app-group":
					return p.children(func(se xml.StartElement) error {
						if se.Name.Local == "app" {
							return p.sec(nil, false)
						}
						return p.d.Skip()
					})
				case "app":
					return p.sec(nil, false)
				}
				return p.d.Skip()
			})
		case "floats-group":
			return p.children(func(se xml.StartElement) error {
				switch se.Name.Local {
				case "table-wrap", "fig":
					sec, err := p.float(se)
					if err != nil {
						return err
					}
					p.a.Body = append(p.a.Body, sec)
					return nil
				}
				return p.d.Skip()
			})
		}
		return p.d.Skip() // sub-article, response
	})
}

// front reads <front>: the journal and the article's metadata.
func (p *jatsParser) front() error {
	r := &p.a.Record
	return p.children(func(se xml.StartElement) error {
		switch se.Name.Local {
		case "journal-meta":
			return p.children(func(se xml.StartElement) error {
				switch se.Name.Local {
				case "journal-title-group":
					return p.children(func(se xml.StartElement) error {
						if se.Name.Local == "journal-title" && r.Journal == "" {
							t, err := p.text(false)
							r.Journal = t
							return err
						}
						return p.d.Skip()
					})
				case "journal-title":
					t, err := p.text(false)
					if r.Journal == "" {
						r.Journal = t
					}
					return err
				}
				return p.d.Skip()
			})
		case "article-meta":
			return p.articleMeta()
		}
		return p.d.Skip()
	})
}

// articleMeta reads <article-meta>.
func (p *jatsParser) articleMeta() error {
	r := &p.a.Record
	haveAbstract := false
	return p.children(func(se xml.StartElement) error {
		switch se.Name.Local {
		case "article-id":
			typ := strings.ToLower(attr(se, "pub-id-type"))
			v, err := p.text(false)
			if err != nil {
				return err
			}
			switch typ {
			case "pmid":
				r.PMID = v
			case "doi":
				r.DOI = v
			case "pmc", "pmcid":
				if v != "" && !strings.HasPrefix(strings.ToUpper(v), "PMC") {
					v = "PMC" + v
				}
				p.a.PMCID = v
			}
			return nil
		case "title-group":
			return p.children(func(se xml.StartElement) error {
				if se.Name.Local == "article-title" {
					t, err := p.text(false)
					r.Title = t
					return err
				}
				return p.d.Skip()
			})
		case "contrib-group":
			return p.children(func(se xml.StartElement) error {
				if se.Name.Local != "contrib" {
					return p.d.Skip()
				}
				author := attr(se, "contrib-type")
				if author != "" && author != "author" {
					return p.d.Skip()
				}
				return p.children(func(se xml.StartElement) error {
					switch se.Name.Local {
					case "name":
						var sur, given string
						err := p.children(func(se xml.StartElement) error {
							t, err := p.text(false)
							switch se.Name.Local {
							case "surname":
								sur = t
							case "given-names":
								given = t
							}
							return err
						})
						if n := cleanSpace(sur + " " + given); n != "" {
							r.Authors = append(r.Authors, n)
						}
						return err
					case "collab", "string-name":
						t, err := p.text(false)
						if t != "" {
							r.Authors = append(r.Authors, t)
						}
						return err
					}
					return p.d.Skip()
				})
			})
		case "pub-date":
			return p.children(func(se xml.StartElement) error {
				if se.Name.Local == "year" {
					t, err := p.text(false)
					if r.Year == 0 {
						r.Year = parseYear(t)
					}
					return err
				}
				return p.d.Skip()
			})
		case "abstract":
			switch strings.ToLower(attr(se, "abstract-type")) {
			case "", "structured", "abstract", "short":
			default: // graphical, teaser, toc, author summary, ...
				return p.d.Skip()
			}
			if haveAbstract {
				return p.d.Skip()
			}
			haveAbstract = true
			return p.abstract()
		case "kwd-group":
			return p.children(func(se xml.StartElement) error {
				if se.Name.Local == "kwd" {
					t, err := p.text(false)
					if t != "" {
						r.Keywords = append(r.Keywords, t)
					}
					return err
				}
				return p.d.Skip()
			})
		}
		return p.d.Skip()
	})
}

// abstract reads <abstract>: its sections, or its paragraphs as one
// unstructured section.
func (p *jatsParser) abstract() error {
	r := &p.a.Record
	var plain []string
	err := p.children(func(se xml.StartElement) error {
		switch se.Name.Local {
		case "sec":
			var label string
			var paras []string
			err := p.children(func(se xml.StartElement) error {
				t, err := p.text(false)
				if se.Name.Local == "title" {
					label = t
				} else if t != "" {
					paras = append(paras, t)
				}
				return err
			})
			if len(paras) > 0 {
				r.Sections = append(r.Sections, Section{Label: strings.TrimSuffix(label, ":"), Text: strings.Join(paras, " ")})
			}
			return err
		case "title", "label":
			return p.d.Skip()
		}
		t, err := p.text(false)
		if t != "" {
			plain = append(plain, t)
		}
		return err
	})
	if len(plain) > 0 {
		r.Sections = append([]Section{{Text: strings.Join(plain, " ")}}, r.Sections...)
	}
	return err
}

// sec reads a <sec> (or <body>, <app>) just opened, under the headings
// path; body says the element is <body> itself (no title of its own).
func (p *jatsParser) sec(path []string, body bool) error {
	var paras []string
	label := strings.Join(path, " / ")
	flush := func() {
		if len(paras) > 0 {
			p.a.Body = append(p.a.Body, Section{Label: label, Text: strings.Join(paras, "\n")})
			paras = nil
		}
	}
	err := p.children(func(se xml.StartElement) error {
		switch se.Name.Local {
		case "title":
			t, err := p.text(false)
			if !body && t != "" && len(paras) == 0 {
				path = append(path[:len(path):len(path)], t)
				label = strings.Join(path, " / ")
			}
			return err
		case "label", "ref-list", "fn-group", "ack", "notes", "sec-meta", "disp-formula", "supplementary-material", "glossary":
			return p.d.Skip()
		case "sec":
			flush()
			return p.sec(path, false)
		case "table-wrap", "fig":
			flush()
			sec, err := p.float(se)
			if err == nil {
				p.a.Body = append(p.a.Body, sec)
			}
			return err
		case "table-wrap-group", "fig-group":
			flush()
			return p.children(func(se xml.StartElement) error {
				switch se.Name.Local {
				case "table-wrap", "fig":
					sec, err := p.float(se)
					if err == nil {
						p.a.Body = append(p.a.Body, sec)
					}
					return err
				}
				return p.d.Skip()
			})
		case "list":
			return p.children(func(se xml.StartElement) error {
				t, err := p.text(true)
				if t != "" {
					paras = append(paras, t)
				}
				return err
			})
		}
		// p, disp-quote, boxed-text, statement, ...
		t, err := p.text(true)
		if t != "" {
			paras = append(paras, t)
		}
		if len(p.pending) > 0 {
			flush()
			p.a.Body = append(p.a.Body, p.pending...)
			p.pending = nil
		}
		return err
	})
	flush()
	return err
}

// float reads a <table-wrap> or <fig> just opened into a section of its
// own: "Table 2" (Category TableCategory: the caption, then one line per
// row with the cells joined by " | ", then the table's footnotes) or
// "Figure 1" (the caption).
func (p *jatsParser) float(se xml.StartElement) (Section, error) {
	isTable := se.Name.Local == "table-wrap"
	var label, caption string
	var rows, foot []string
	err := p.children(func(se xml.StartElement) error {
		switch se.Name.Local {
		case "label":
			t, err := p.text(false)
			label = t
			return err
		case "caption":
			t, err := p.caption()
			caption = t
			return err
		case "table":
			return p.table(&rows)
		case "alternatives":
			return p.children(func(se xml.StartElement) error {
				if se.Name.Local == "table" && len(rows) == 0 {
					return p.table(&rows)
				}
				return p.d.Skip()
			})
		case "table-wrap-foot":
			t, err := p.text(false)
			if t != "" {
				foot = append(foot, t)
			}
			return err
		}
		return p.d.Skip()
	})
	if err != nil {
		return Section{}, err
	}
	label = strings.TrimRight(label, ".: ")
	if isTable {
		p.tables++
		if label == "" {
			label = fmt.Sprintf("Table %d", p.tables)
		}
	} else {
		p.figures++
		if label == "" {
			label = fmt.Sprintf("Figure %d", p.figures)
		}
	}
	head := label
	if caption != "" {
		head += ". " + caption
	}
	s := Section{Label: label, Text: head}
	if isTable {
		s.Category = TableCategory
		lines := append([]string{head}, rows...)
		s.Text = strings.Join(append(lines, foot...), "\n")
	}
	return s, nil
}

// caption reads a <caption> just opened: its title and paragraphs, the
// title ended with a period.
func (p *jatsParser) caption() (string, error) {
	var parts []string
	var loose strings.Builder // text outside <title> and <p>
	endLoose := func() {
		if t := cleanSpace(loose.String()); t != "" {
			parts = append(parts, t)
		}
		loose.Reset()
	}
	for {
		tok, err := p.token()
		if err != nil {
			return "", err
		}
		switch t := tok.(type) {
		case xml.StartElement:
			if skippedInText[t.Name.Local] {
				if err := p.d.Skip(); err != nil {
					return "", err
				}
				continue
			}
			txt, err := p.text(false)
			if err != nil {
				return "", err
			}
			switch t.Name.Local {
			case "title", "p":
				endLoose()
				if t.Name.Local == "title" && txt != "" && !strings.ContainsAny(txt[len(txt)-1:], ".:?!") {
					txt += "."
				}
				if txt != "" {
					parts = append(parts, txt)
				}
			default:
				loose.WriteString(txt)
			}
		case xml.CharData:
			loose.Write(t)
		case xml.EndElement:
			endLoose()
			return strings.Join(parts, " "), nil
		}
	}
}

// table reads a <table> just opened into rows of cells joined by " | ".
func (p *jatsParser) table(rows *[]string) error {
	var row func(se xml.StartElement) error
	row = func(se xml.StartElement) error {
		switch se.Name.Local {
		case "thead", "tbody", "tfoot":
			return p.children(row)
		case "tr":
			var cells []string
			filled := false
			err := p.children(func(se xml.StartElement) error {
				if se.Name.Local != "td" && se.Name.Local != "th" {
					return p.d.Skip()
				}
				t, err := p.text(false)
				cells = append(cells, t)
				filled = filled || t != ""
				return err
			})
			if filled {
				*rows = append(*rows, strings.Join(cells, " | "))
			}
			return err
		}
		return p.d.Skip() // col, colgroup
	}
	return p.children(row)
}

package evidence

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Field is the part of a record a search term is restricted to.
type Field string

const (
	// AllFields searches title, abstract and MeSH headings.
	AllFields Field = ""
	// TitleField is [ti]: the title.
	TitleField Field = "ti"
	// AbstractField is [ab]: the abstract.
	AbstractField Field = "ab"
	// TitleAbstractField is [tiab]: title or abstract.
	TitleAbstractField Field = "tiab"
	// MeSHField is [mh]: the MeSH headings (not exploded to narrower terms,
	// which would need the MeSH tree).
	MeSHField Field = "mh"
)

// fieldTags maps PubMed's field tags (lower case) to fields.
var fieldTags = map[string]Field{
	"ti": TitleField, "title": TitleField,
	"ab": AbstractField, "abstract": AbstractField,
	"tiab": TitleAbstractField, "title/abstract": TitleAbstractField,
	"mh": MeSHField, "mesh": MeSHField, "mesh terms": MeSHField, "majr": MeSHField, "mesh major topic": MeSHField,
	"tw": AllFields, "text word": AllFields, "all": AllFields, "all fields": AllFields,
}

// ftsColumns is the FTS5 column filter of a field.
func (f Field) ftsColumns() string {
	switch f {
	case TitleField:
		return "title"
	case AbstractField:
		return "abstract"
	case TitleAbstractField:
		return "{title abstract}"
	case MeSHField:
		return "mesh"
	}
	return ""
}

// Op is a boolean operator.
type Op string

// The boolean operators.
const (
	And Op = "AND"
	Or  Op = "OR"
	Not Op = "NOT"
)

// Node is a node of a parsed boolean query: *Term or *Binary.
type Node interface {
	// FTS5 renders the node as an FTS5 MATCH expression.
	FTS5() string
	// String renders the node in PubMed syntax, fully parenthesised.
	String() string
}

// Term is a word or "phrase", with an optional field tag and truncation.
type Term struct {
	// Text is the word or the phrase's words (without quotes or *).
	Text string
	// Phrase is true for a quoted phrase.
	Phrase bool
	// Prefix is true when the term ends in * (truncation): the last word
	// matches every word it begins.
	Prefix bool
	// Field restricts the term to part of the record.
	Field Field
	// Pos is the 0-based byte offset of the term in the query.
	Pos int
}

// FTS5 renders the term as an FTS5 string (so punctuation and hyphens are
// tokenized as in the index), "... *" for truncation, with a column filter.
func (t *Term) FTS5() string {
	s := `"` + strings.ReplaceAll(t.Text, `"`, `""`) + `"`
	if t.Prefix {
		s += " *"
	}
	if c := t.Field.ftsColumns(); c != "" {
		s = c + " : " + s
	}
	return s
}

// String renders the term in PubMed syntax.
func (t *Term) String() string {
	s := t.Text
	if t.Prefix {
		s += "*"
	}
	if t.Phrase {
		s = `"` + s + `"`
	}
	if t.Field != AllFields {
		s += "[" + string(t.Field) + "]"
	}
	return s
}

// Binary is two operands joined by AND, OR or NOT (left AND NOT right).
type Binary struct {
	Op          Op
	Left, Right Node
}

// FTS5 renders the operation, parenthesised.
func (b *Binary) FTS5() string {
	return "(" + b.Left.FTS5() + " " + string(b.Op) + " " + b.Right.FTS5() + ")"
}

// String renders the operation in PubMed syntax, parenthesised.
func (b *Binary) String() string {
	return "(" + b.Left.String() + " " + string(b.Op) + " " + b.Right.String() + ")"
}

// QueryError is a malformed query: what is wrong and where.
type QueryError struct {
	// Query is the query text.
	Query string
	// Pos is the 0-based byte offset of the problem.
	Pos int
	// Msg says what is wrong.
	Msg string
}

// Column is the 1-based character position of the problem.
func (e *QueryError) Column() int {
	p := min(max(e.Pos, 0), len(e.Query))
	return utf8.RuneCountInString(e.Query[:p]) + 1
}

// Error formats the error as "query position 12: message".
func (e *QueryError) Error() string {
	return fmt.Sprintf("query position %d: %s", e.Column(), e.Msg)
}

// Pointer returns the query and, under it, a caret at the problem.
func (e *QueryError) Pointer() string {
	return e.Query + "\n" + strings.Repeat(" ", e.Column()-1) + "^"
}

// ParseQuery parses a PubMed-style boolean query: words and "phrases",
// field tags [ti] [ab] [tiab] [mh] (and PubMed's long forms such as
// [Title/Abstract] and [MeSH Terms]) after a term, truncation with a
// trailing *, AND, OR and NOT (any case), parentheses. Adjacent terms are
// joined by AND. As in PubMed, operators are applied from left to right
// ("a OR b AND c" is "(a OR b) AND c"); use parentheses to group. Errors
// are *QueryError values pointing at the position.
func ParseQuery(q string) (Node, error) {
	p := &queryParser{q: q}
	if err := p.lex(); err != nil {
		return nil, err
	}
	if len(p.toks) == 0 {
		return nil, &QueryError{Query: q, Pos: 0, Msg: "the query is empty"}
	}
	n, err := p.expr(0)
	if err != nil {
		return nil, err
	}
	if p.i < len(p.toks) {
		t := p.toks[p.i]
		return nil, &QueryError{Query: q, Pos: t.pos, Msg: "unmatched closing parenthesis"}
	}
	return n, nil
}

type qtokKind int

const (
	qWord qtokKind = iota
	qPhrase
	qOpen
	qClose
	qOp
	qTag
)

type qtok struct {
	kind qtokKind
	text string
	pos  int
}

type queryParser struct {
	q    string
	toks []qtok
	i    int
}

func (p *queryParser) errAt(pos int, format string, args ...any) *QueryError {
	return &QueryError{Query: p.q, Pos: pos, Msg: fmt.Sprintf(format, args...)}
}

// lex splits the query into tokens.
func (p *queryParser) lex() error {
	q := p.q
	for i := 0; i < len(q); {
		r, size := utf8.DecodeRuneInString(q[i:])
		switch {
		case unicode.IsSpace(r) || unicode.IsControl(r):
			i += size // control characters (NUL ...) separate terms like spaces
		case r == '(':
			p.toks = append(p.toks, qtok{qOpen, "(", i})
			i++
		case r == ')':
			p.toks = append(p.toks, qtok{qClose, ")", i})
			i++
		case r == '"' || r == '“' || r == '”':
			start := i
			i += size
			end := -1
			for j := i; j < len(q); {
				r2, s2 := utf8.DecodeRuneInString(q[j:])
				if r2 == '"' || r2 == '”' || r2 == '“' {
					end = j
					break
				}
				j += s2
			}
			if end < 0 {
				return p.errAt(start, "unterminated phrase: a closing \" is missing")
			}
			p.toks = append(p.toks, qtok{qPhrase, q[i:end], start})
			_, s2 := utf8.DecodeRuneInString(q[end:])
			i = end + s2
		case r == '[':
			end := strings.IndexByte(q[i:], ']')
			if end < 0 {
				return p.errAt(i, "unterminated field tag: a closing ] is missing")
			}
			p.toks = append(p.toks, qtok{qTag, q[i+1 : i+end], i})
			i += end + 1
		case r == ']':
			return p.errAt(i, "] without an opening [")
		default:
			start := i
			for i < len(q) {
				r2, s2 := utf8.DecodeRuneInString(q[i:])
				if unicode.IsSpace(r2) || unicode.IsControl(r2) || strings.ContainsRune(`()"“”[]`, r2) {
					break
				}
				i += s2
			}
			w := q[start:i]
			switch strings.ToUpper(w) {
			case "AND", "OR", "NOT":
				p.toks = append(p.toks, qtok{qOp, strings.ToUpper(w), start})
			default:
				p.toks = append(p.toks, qtok{qWord, w, start})
			}
		}
	}
	return nil
}

// expr parses operands joined left to right.
func (p *queryParser) expr(depth int) (Node, error) {
	left, err := p.operand(depth)
	if err != nil {
		return nil, err
	}
	for p.i < len(p.toks) {
		t := p.toks[p.i]
		var op Op
		switch t.kind {
		case qClose:
			return left, nil
		case qOp:
			op = Op(t.text)
			p.i++
			if p.i == len(p.toks) {
				return nil, p.errAt(len(p.q), "%s needs a term after it", op)
			}
		case qTag:
			return nil, p.errAt(t.pos, "a field tag must follow a term directly, as in cancer[ti]")
		default:
			op = And // adjacent terms
		}
		right, err := p.operand(depth)
		if err != nil {
			return nil, err
		}
		left = &Binary{Op: op, Left: left, Right: right}
	}
	return left, nil
}

// operand parses a term or a parenthesised group.
func (p *queryParser) operand(depth int) (Node, error) {
	if p.i >= len(p.toks) {
		return nil, p.errAt(len(p.q), "a term is missing at the end of the query")
	}
	t := p.toks[p.i]
	switch t.kind {
	case qOpen:
		if depth > 100 {
			return nil, p.errAt(t.pos, "parentheses are nested too deeply")
		}
		p.i++
		if p.i < len(p.toks) && p.toks[p.i].kind == qClose {
			return nil, p.errAt(p.toks[p.i].pos, "empty parentheses")
		}
		n, err := p.expr(depth + 1)
		if err != nil {
			return nil, err
		}
		if p.i >= len(p.toks) {
			return nil, p.errAt(t.pos, "unbalanced parenthesis: this ( is never closed")
		}
		p.i++ // the )
		if p.i < len(p.toks) && p.toks[p.i].kind == qTag {
			return nil, p.errAt(p.toks[p.i].pos, "a field tag applies to one term, not to a group in parentheses")
		}
		return n, nil
	case qClose:
		return nil, p.errAt(t.pos, "a term is missing before )")
	case qOp:
		return nil, p.errAt(t.pos, "%s needs a term before it", t.text)
	case qTag:
		return nil, p.errAt(t.pos, "a field tag must follow a term directly, as in cancer[ti]")
	}
	p.i++
	term := &Term{Phrase: t.kind == qPhrase, Pos: t.pos}
	text := strings.TrimSpace(t.text)
	if strings.HasSuffix(text, "*") {
		term.Prefix = true
		text = strings.TrimRight(text, "*")
	}
	if k := strings.IndexByte(text, '*'); k >= 0 {
		off := strings.Index(p.q[t.pos:], "*")
		return nil, p.errAt(t.pos+off, "truncation * is only allowed at the end of a term")
	}
	text = cleanSpace(strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, text))
	if !strings.ContainsFunc(text, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }) {
		if t.kind == qPhrase {
			return nil, p.errAt(t.pos, "the phrase has no words")
		}
		return nil, p.errAt(t.pos, "%q is not a searchable term (no letters or digits)", t.text)
	}
	if term.Prefix {
		last := text[strings.LastIndexByte(text, ' ')+1:]
		if utf8.RuneCountInString(strings.Map(keepAlnum, last)) < 2 {
			return nil, p.errAt(t.pos, "truncation needs at least two letters before the * (%q)", t.text)
		}
	}
	term.Text = text
	if p.i < len(p.toks) && p.toks[p.i].kind == qTag {
		tag := p.toks[p.i]
		f, ok := fieldTags[strings.ToLower(cleanSpace(tag.text))]
		if !ok {
			return nil, p.errAt(tag.pos, "unknown field tag [%s] (use [ti], [ab], [tiab] or [mh])", tag.text)
		}
		term.Field = f
		p.i++
	}
	return term, nil
}

func keepAlnum(r rune) rune {
	if unicode.IsLetter(r) || unicode.IsDigit(r) {
		return r
	}
	return -1
}

package eval

import (
	"fmt"
	"strings"
)

// pyParser reads the subset of Python literal syntax used by benchmark
// answer files: lists and tuples of lists/tuples of strings, numbers,
// None, True and False. Every scalar is returned as Python's str() of it.
type pyParser struct {
	s   string
	pos int
}

func (p *pyParser) errorf(format string, args ...any) error {
	return fmt.Errorf("offset %d: %s", p.pos, fmt.Sprintf(format, args...))
}

func (p *pyParser) skipSpace() {
	for p.pos < len(p.s) && strings.IndexByte(" \t\r\n", p.s[p.pos]) >= 0 {
		p.pos++
	}
}

// rows parses the outer list of rows and requires the end of input after it.
func (p *pyParser) rows() ([][]string, error) {
	var out [][]string
	err := p.sequence(func() error {
		var row []string
		err := p.sequence(func() error {
			v, err := p.scalar()
			row = append(row, v)
			return err
		})
		out = append(out, row)
		return err
	})
	if err != nil {
		return nil, err
	}
	p.skipSpace()
	if p.pos != len(p.s) {
		return nil, p.errorf("unexpected text after the answer")
	}
	return out, nil
}

// sequence parses a [ ... ] or ( ... ) sequence, calling item for each element.
func (p *pyParser) sequence(item func() error) error {
	p.skipSpace()
	if p.pos >= len(p.s) || (p.s[p.pos] != '[' && p.s[p.pos] != '(') {
		return p.errorf("expected '[' or '('")
	}
	closer := byte(']')
	if p.s[p.pos] == '(' {
		closer = ')'
	}
	p.pos++
	for {
		p.skipSpace()
		if p.pos >= len(p.s) {
			return p.errorf("unterminated sequence")
		}
		if p.s[p.pos] == closer {
			p.pos++
			return nil
		}
		if err := item(); err != nil {
			return err
		}
		p.skipSpace()
		if p.pos < len(p.s) && p.s[p.pos] == ',' {
			p.pos++
		} else if p.pos >= len(p.s) || p.s[p.pos] != closer {
			return p.errorf("expected ',' or '%c'", closer)
		}
	}
}

// scalar parses a string, number, None, True or False.
func (p *pyParser) scalar() (string, error) {
	p.skipSpace()
	if p.pos >= len(p.s) {
		return "", p.errorf("expected a value")
	}
	switch c := p.s[p.pos]; c {
	case '\'', '"':
		return p.str(c)
	}
	start := p.pos
	for p.pos < len(p.s) && strings.IndexByte(",)] \t\r\n", p.s[p.pos]) < 0 {
		p.pos++
	}
	tok := p.s[start:p.pos]
	if tok == "" {
		return "", p.errorf("expected a value")
	}
	return tok, nil
}

// str parses a quoted Python string with backslash escapes.
func (p *pyParser) str(q byte) (string, error) {
	p.pos++
	var b strings.Builder
	for p.pos < len(p.s) {
		c := p.s[p.pos]
		switch {
		case c == q:
			p.pos++
			return b.String(), nil
		case c == '\\' && p.pos+1 < len(p.s):
			p.pos++
			switch e := p.s[p.pos]; e {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case '\\', '\'', '"':
				b.WriteByte(e)
			default:
				b.WriteByte('\\')
				b.WriteByte(e)
			}
			p.pos++
		default:
			b.WriteByte(c)
			p.pos++
		}
	}
	return "", p.errorf("unterminated string")
}

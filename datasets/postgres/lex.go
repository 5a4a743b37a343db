package postgres

import (
	"strings"
)

// tokenKind classifies a token of PostgreSQL's SQL.
type tokenKind int

// The kinds of token.
const (
	tokWord   tokenKind = iota // identifier or keyword, unquoted
	tokQuoted                  // "quoted identifier" (also U&"...")
	tokString                  // '...', E'...', B'...', X'...', N'...', U&'...'
	tokDollar                  // $tag$ ... $tag$
	tokNumber                  // 42, 1.5e3, 0x1F
	tokParam                   // $1
	tokOp                      // operator: + - * / < > = ~ ! @ # % ^ & | ` ? and runs of them
	tokPunct                   // ( ) [ ] , ; : :: . :=
	tokError                   // text PostgreSQL would reject: an unterminated string, comment or identifier
)

// token is one token: its kind and its byte range in the source.
type token struct {
	kind       tokenKind
	start, end int
	// unicode is set for U&"..." identifiers and U&'...' strings.
	unicode bool
}

func (t token) text(src string) string { return src[t.start:t.end] }

// ident returns the name an identifier token stands for, as PostgreSQL
// resolves it: an unquoted word folded to lower case (ASCII letters, as
// PostgreSQL does in UTF-8 databases), a quoted identifier without its
// quotes and with "" made ". ok is false for other tokens.
func (t token) ident(src string) (name string, ok bool) {
	switch t.kind {
	case tokWord:
		return asciiLower(t.text(src)), true
	case tokQuoted:
		s := t.text(src)
		if t.unicode {
			s = s[2:]
		}
		if len(s) >= 2 {
			s = s[1 : len(s)-1]
		}
		return strings.ReplaceAll(s, `""`, `"`), true
	}
	return "", false
}

// asciiLower lower-cases ASCII letters only.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// isSpace is PostgreSQL's white space ({space} in scan.l): space, tab,
// newline, carriage return, form feed and vertical tab.
func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'
}

// isIdentStart and isIdentCont follow scan.l: letters, underscore and every
// byte of a multi-byte character start an identifier; digits and $ may
// continue it.
func isIdentStart(c byte) bool {
	return c == '_' || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c >= 0x80
}

func isIdentCont(c byte) bool {
	return isIdentStart(c) || (c >= '0' && c <= '9') || c == '$'
}

func isDigit(c byte) bool { return c >= '0' && c <= '9' }

// isOpChar is a character that may be part of an operator.
func isOpChar(c byte) bool { return strings.IndexByte("+-*/<>=~!@#%^&|`?", c) >= 0 }

// lex splits SQL text into tokens the way PostgreSQL's scanner does with
// standard_conforming_strings on (which the engine sets for every
// statement): comments (-- to end of line, /* */ nested) and white space are
// dropped; strings, quoted identifiers and dollar-quoted strings are single
// tokens. Text PostgreSQL would reject (an unterminated string or comment)
// becomes a tokError token running to the end of the text.
func lex(src string) []token {
	var toks []token
	i := 0
	n := len(src)
	for i < n {
		c := src[i]
		start := i
		switch {
		case isSpace(c):
			i++
			continue
		case c == '-' && i+1 < n && src[i+1] == '-':
			for i < n && src[i] != '\n' && src[i] != '\r' {
				i++
			}
			continue
		case c == '/' && i+1 < n && src[i+1] == '*':
			depth := 0
			for i < n {
				if src[i] == '/' && i+1 < n && src[i+1] == '*' {
					depth++
					i += 2
					continue
				}
				if src[i] == '*' && i+1 < n && src[i+1] == '/' {
					depth--
					i += 2
					if depth == 0 {
						break
					}
					continue
				}
				i++
			}
			if depth != 0 {
				toks = append(toks, token{kind: tokError, start: start, end: n})
				return toks
			}
			continue
		case c == '\'':
			end, ok := scanQuoted(src, i, '\'', false)
			toks = append(toks, okOrError(token{kind: tokString, start: start, end: end}, ok, n))
			if !ok {
				return toks
			}
			i = end
		case (c == 'e' || c == 'E') && i+1 < n && src[i+1] == '\'':
			end, ok := scanQuoted(src, i+1, '\'', true)
			toks = append(toks, okOrError(token{kind: tokString, start: start, end: end}, ok, n))
			if !ok {
				return toks
			}
			i = end
		case (c == 'b' || c == 'B' || c == 'x' || c == 'X' || c == 'n' || c == 'N') && i+1 < n && src[i+1] == '\'':
			end, ok := scanQuoted(src, i+1, '\'', false)
			toks = append(toks, okOrError(token{kind: tokString, start: start, end: end}, ok, n))
			if !ok {
				return toks
			}
			i = end
		case (c == 'u' || c == 'U') && i+2 < n && src[i+1] == '&' && (src[i+2] == '\'' || src[i+2] == '"'):
			q := src[i+2]
			end, ok := scanQuoted(src, i+2, q, false)
			kind := tokString
			if q == '"' {
				kind = tokQuoted
			}
			toks = append(toks, okOrError(token{kind: kind, start: start, end: end, unicode: true}, ok, n))
			if !ok {
				return toks
			}
			i = end
		case c == '"':
			end, ok := scanQuoted(src, i, '"', false)
			if ok && end-start == 2 { // "" is a zero-length identifier: an error
				ok = false
			}
			toks = append(toks, okOrError(token{kind: tokQuoted, start: start, end: end}, ok, n))
			if !ok {
				return toks
			}
			i = end
		case c == '$':
			if i+1 < n && isDigit(src[i+1]) {
				i++
				for i < n && isDigit(src[i]) {
					i++
				}
				toks = append(toks, token{kind: tokParam, start: start, end: i})
				continue
			}
			// $tag$ or $$: the tag is an identifier without $.
			j := i + 1
			if j < n && isIdentStart(src[j]) {
				j++
				for j < n && (isIdentStart(src[j]) || isDigit(src[j])) {
					j++
				}
			}
			if j < n && src[j] == '$' {
				delim := src[i : j+1]
				k := strings.Index(src[j+1:], delim)
				if k < 0 {
					toks = append(toks, token{kind: tokError, start: start, end: n})
					return toks
				}
				i = j + 1 + k + len(delim)
				toks = append(toks, token{kind: tokDollar, start: start, end: i})
				continue
			}
			// A lone $ is an error in PostgreSQL.
			toks = append(toks, token{kind: tokError, start: start, end: n})
			return toks
		case isIdentStart(c):
			for i < n && isIdentCont(src[i]) {
				i++
			}
			toks = append(toks, token{kind: tokWord, start: start, end: i})
		case isDigit(c) || (c == '.' && i+1 < n && isDigit(src[i+1])):
			i = scanNumber(src, i)
			toks = append(toks, token{kind: tokNumber, start: start, end: i})
		case c == ':' && i+1 < n && (src[i+1] == ':' || src[i+1] == '='):
			i += 2
			toks = append(toks, token{kind: tokPunct, start: start, end: i})
		case strings.IndexByte("()[],;:.", c) >= 0:
			i++
			toks = append(toks, token{kind: tokPunct, start: start, end: i})
		case isOpChar(c):
			for i < n && isOpChar(src[i]) {
				// A comment start ends an operator (at its start it was
				// taken as a comment above).
				if i > start && i+1 < n && (src[i] == '-' && src[i+1] == '-' || src[i] == '/' && src[i+1] == '*') {
					break
				}
				i++
			}
			toks = append(toks, token{kind: tokOp, start: start, end: i})
		default:
			// A control character or other byte PostgreSQL does not accept
			// outside a string.
			toks = append(toks, token{kind: tokError, start: start, end: n})
			return toks
		}
	}
	return toks
}

func okOrError(t token, ok bool, n int) token {
	if !ok {
		t.kind, t.end = tokError, n
	}
	return t
}

// scanQuoted scans a quoted run starting at the opening quote at i. A
// doubled quote stands for itself; with backslash set (E'...') a backslash
// escapes the next byte. It returns the index after the closing quote and
// whether one was found.
func scanQuoted(src string, i int, q byte, backslash bool) (int, bool) {
	n := len(src)
	for j := i + 1; j < n; j++ {
		switch {
		case backslash && src[j] == '\\':
			j++
		case src[j] == q:
			if j+1 < n && src[j+1] == q {
				j++
				continue
			}
			return j + 1, true
		}
	}
	return n, false
}

// scanNumber scans a numeric literal: digits (with _ separators), a
// fraction, an exponent, or a 0x/0o/0b prefix; trailing identifier
// characters are included, as PostgreSQL rejects them with the number.
func scanNumber(src string, i int) int {
	n := len(src)
	for i < n && (isDigit(src[i]) || src[i] == '_') {
		i++
	}
	if i < n && src[i] == '.' && !(i+1 < n && src[i+1] == '.') {
		i++
		for i < n && (isDigit(src[i]) || src[i] == '_') {
			i++
		}
	}
	if i < n && (src[i] == 'e' || src[i] == 'E') {
		j := i + 1
		if j < n && (src[j] == '+' || src[j] == '-') {
			j++
		}
		if j < n && isDigit(src[j]) {
			i = j
			for i < n && isDigit(src[i]) {
				i++
			}
		}
	}
	for i < n && isIdentCont(src[i]) { // 0x1F, or junk PostgreSQL reports
		i++
	}
	return i
}

package datasets

import "strings"

// SQLTokenKind classifies the tokens of SQLite's lexical grammar.
type SQLTokenKind int

// Token kinds.
const (
	TokenWord      SQLTokenKind = iota // keyword or bare identifier
	TokenQuoted                        // "identifier", `identifier` or [identifier]
	TokenString                        // 'string' (also the body of x'..' blobs)
	TokenNumber                        // numeric literal
	TokenSemicolon                     // ;
	TokenPunct                         // any other operator or punctuation character
)

// SQLToken is one lexical token, as byte offsets into the source text.
type SQLToken struct {
	Kind       SQLTokenKind
	Start, End int
}

// Text returns the token's source text.
func (t SQLToken) Text(src string) string { return src[t.Start:t.End] }

// Identifier returns the name a word or quoted-identifier token stands for
// (without quotes, doubled quotes undone) and whether the token is one.
func (t SQLToken) Identifier(src string) (string, bool) {
	text := t.Text(src)
	switch t.Kind {
	case TokenWord:
		return text, true
	case TokenQuoted:
		q := text[0]
		body := text[1:]
		if q == '[' {
			return strings.TrimSuffix(body, "]"), true
		}
		if len(body) > 0 && body[len(body)-1] == q {
			body = body[:len(body)-1]
		}
		return strings.ReplaceAll(body, string([]byte{q, q}), string(q)), true
	}
	return "", false
}

// TokenizeSQL splits src into tokens following SQLite's lexical rules:
// comments and white space are dropped; strings, quoted identifiers,
// numbers, words, semicolons and punctuation are tokens. It is not a parser
// and never fails: unterminated strings and comments extend to the end of
// the text, as in SQLite. Everything that must know where SQL statements,
// strings and identifiers begin and end uses it.
func TokenizeSQL(src string) []SQLToken {
	var out []SQLToken
	for i := 0; i < len(src); {
		c := src[i]
		switch {
		case c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v':
			i++
		case c == '-' && i+1 < len(src) && src[i+1] == '-':
			j := strings.IndexByte(src[i:], '\n')
			if j < 0 {
				i = len(src)
			} else {
				i += j + 1
			}
		case c == '/' && i+1 < len(src) && src[i+1] == '*':
			j := strings.Index(src[i+2:], "*/")
			if j < 0 {
				i = len(src)
			} else {
				i += j + 4
			}
		case c == ';':
			out = append(out, SQLToken{TokenSemicolon, i, i + 1})
			i++
		case c == '\'':
			end := scanQuoted(src, i, '\'')
			out = append(out, SQLToken{TokenString, i, end})
			i = end
		case c == '"' || c == '`':
			end := scanQuoted(src, i, c)
			out = append(out, SQLToken{TokenQuoted, i, end})
			i = end
		case c == '[':
			j := strings.IndexByte(src[i:], ']')
			end := len(src)
			if j >= 0 {
				end = i + j + 1
			}
			out = append(out, SQLToken{TokenQuoted, i, end})
			i = end
		case isSQLDigit(c) || (c == '.' && i+1 < len(src) && isSQLDigit(src[i+1])):
			j := i + 1
			for j < len(src) && (isIdentByte(src[j]) || src[j] == '.' ||
				((src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E'))) {
				j++
			}
			out = append(out, SQLToken{TokenNumber, i, j})
			i = j
		case isIdentByte(c):
			j := i + 1
			for j < len(src) && (isIdentByte(src[j]) || src[j] == '$') {
				j++
			}
			out = append(out, SQLToken{TokenWord, i, j})
			i = j
		default:
			out = append(out, SQLToken{TokenPunct, i, i + 1})
			i++
		}
	}
	return out
}

// statement is the token range of one SQL statement (without its ';').
type statement struct {
	tokens []SQLToken
	// start and end are byte offsets of the statement's first and last
	// token, so src[start:end] is the statement without surrounding
	// comments, whitespace and terminator.
	start, end int
}

// splitStatements returns the non-empty statements of src, split at
// semicolons outside strings, identifiers and comments (see TokenizeSQL).
// SQLite itself prepares every statement afterwards; this only decides where
// statements begin and end so that a second statement can never be
// smuggled past the runner, and finds each statement's leading keyword.
func splitStatements(src string) []statement {
	var (
		out []statement
		cur []SQLToken
	)
	flush := func() {
		if len(cur) > 0 {
			out = append(out, statement{tokens: cur, start: cur[0].Start, end: cur[len(cur)-1].End})
			cur = nil
		}
	}
	for _, t := range TokenizeSQL(src) {
		if t.Kind == TokenSemicolon {
			flush()
			continue
		}
		cur = append(cur, t)
	}
	flush()
	return out
}

// scanQuoted returns the offset just past the quoted token starting at i,
// where a doubled quote character stands for itself.
func scanQuoted(src string, i int, q byte) int {
	for j := i + 1; j < len(src); j++ {
		if src[j] == q {
			if j+1 < len(src) && src[j+1] == q {
				j++
				continue
			}
			return j + 1
		}
	}
	return len(src)
}

func isSQLDigit(c byte) bool { return c >= '0' && c <= '9' }

// isIdentByte reports whether c may appear in a bare identifier. Bytes of
// multi-byte UTF-8 characters count, as in SQLite.
func isIdentByte(c byte) bool {
	return c == '_' || c >= 0x80 || isSQLDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// word returns the upper-cased text of token i of s when it is a bare word,
// and "" otherwise (including past the end).
func (s statement) word(src string, i int) string {
	if i >= len(s.tokens) || s.tokens[i].Kind != TokenWord {
		return ""
	}
	return strings.ToUpper(s.tokens[i].Text(src))
}

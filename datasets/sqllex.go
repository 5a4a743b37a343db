package datasets

import "strings"

// tokenKind classifies the tokens of SQLite's lexical grammar that matter for
// splitting text into statements and finding each statement's verb.
type tokenKind int

const (
	tokWord   tokenKind = iota // keyword or bare identifier
	tokQuoted                  // "identifier", `identifier` or [identifier]
	tokString                  // 'string' (also the body of x'..' blobs)
	tokNumber                  // numeric literal
	tokSemi                    // ;
	tokPunct                   // any other operator or punctuation
)

// token is one lexical token with its byte offsets in the source text.
type token struct {
	kind       tokenKind
	start, end int
}

// statement is the token range of one SQL statement (without its ';').
type statement struct {
	tokens []token
	// start and end are byte offsets of the statement's first and last
	// token, so src[start:end] is the statement without surrounding
	// comments, whitespace and terminator.
	start, end int
}

// splitStatements tokenizes src following SQLite's lexical rules (comments,
// quoted strings and identifiers, semicolons) and returns its non-empty
// statements. It is not a parser: SQLite itself prepares every statement
// afterwards; this only decides where statements begin and end so that a
// second statement can never be smuggled past the runner, and finds each
// statement's leading keyword. Unterminated strings and comments extend to
// the end of the text, as in SQLite.
func splitStatements(src string) []statement {
	var (
		out []statement
		cur []token
	)
	flush := func() {
		if len(cur) > 0 {
			out = append(out, statement{tokens: cur, start: cur[0].start, end: cur[len(cur)-1].end})
			cur = nil
		}
	}
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
			flush()
			i++
		case c == '\'':
			end := scanQuoted(src, i, '\'')
			cur = append(cur, token{tokString, i, end})
			i = end
		case c == '"' || c == '`':
			end := scanQuoted(src, i, c)
			cur = append(cur, token{tokQuoted, i, end})
			i = end
		case c == '[':
			j := strings.IndexByte(src[i:], ']')
			end := len(src)
			if j >= 0 {
				end = i + j + 1
			}
			cur = append(cur, token{tokQuoted, i, end})
			i = end
		case isSQLDigit(c) || (c == '.' && i+1 < len(src) && isSQLDigit(src[i+1])):
			j := i + 1
			for j < len(src) && (isIdentByte(src[j]) || src[j] == '.' ||
				((src[j] == '+' || src[j] == '-') && (src[j-1] == 'e' || src[j-1] == 'E'))) {
				j++
			}
			cur = append(cur, token{tokNumber, i, j})
			i = j
		case isIdentByte(c):
			j := i + 1
			for j < len(src) && (isIdentByte(src[j]) || src[j] == '$') {
				j++
			}
			cur = append(cur, token{tokWord, i, j})
			i = j
		default:
			cur = append(cur, token{tokPunct, i, i + 1})
			i++
		}
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
	if i >= len(s.tokens) || s.tokens[i].kind != tokWord {
		return ""
	}
	t := s.tokens[i]
	return strings.ToUpper(src[t.start:t.end])
}

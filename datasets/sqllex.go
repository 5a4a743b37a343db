package datasets

import "strings"

// SQLTokenKind classifies the tokens of SQLite's lexical grammar.
type SQLTokenKind int

// Token kinds.
const (
	TokenWord      SQLTokenKind = iota // keyword or bare identifier
	TokenQuoted                        // "identifier", `identifier` or [identifier]
	TokenString                        // 'string'
	TokenNumber                        // numeric literal
	TokenSemicolon                     // ;
	TokenPunct                         // operator or punctuation: ( ) , . = == <> || -> and the like
	TokenBlob                          // x'0a1b' blob literal
	TokenVariable                      // ?, ?3, :name, @name, $name, #name (parameters)
	TokenIllegal                       // text SQLite reports as "unrecognized token"
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
		return unquote(text), true
	}
	return "", false
}

// unquote removes the quotes of a quoted identifier or string literal and
// undoes doubled quote characters.
func unquote(text string) string {
	q := text[0]
	body := text[1:]
	if q == '[' {
		return strings.TrimSuffix(body, "]")
	}
	if len(body) > 0 && body[len(body)-1] == q {
		body = body[:len(body)-1]
	}
	return strings.ReplaceAll(body, string([]byte{q, q}), string(q))
}

// Character classes of SQLite's tokenizer (tokenize.c, aiClass[]): the
// class of a token's first byte decides what kind of token it is.
const (
	ccX        = iota // 'x' or 'X': a blob literal x'..' or a word
	ccKywd0           // a letter a keyword can start with
	ccKywd            // another letter or '_'
	ccID              // a byte >= 0x80: part of a word (any UTF-8 character)
	ccDigit           // 0-9
	ccDollar          // $
	ccVarAlpha        // @ # :
	ccVarNum          // ?
	ccSpace           // \t \n \f \r and space (not \v: see isSQLSpace)
	ccQuote           // " ' `
	ccQuote2          // [
	ccPipe            // |
	ccMinus           // -
	ccLT              // <
	ccGT              // >
	ccEQ              // =
	ccBang            // !
	ccSlash           // /
	ccLP              // (
	ccRP              // )
	ccSemi            // ;
	ccPlus            // +
	ccStar            // *
	ccPercent         // %
	ccComma           // ,
	ccAnd             // &
	ccTilda           // ~
	ccDot             // .
	ccBOM             // 0xEF: first byte of U+FEFF, the byte order mark
	ccNul             // 0x00: the end of the text for SQLite
	ccIllegal         // anything else
)

// sqlClass is SQLite's aiClass[] table for the ASCII build.
var sqlClass = func() (t [256]uint8) {
	for i := range t {
		t[i] = ccIllegal
	}
	for c := 'a'; c <= 'z'; c++ {
		t[c], t[c-'a'+'A'] = ccKywd0, ccKywd0
	}
	t['x'], t['X'] = ccX, ccX
	t['y'], t['Y'], t['z'], t['Z'], t['_'] = ccKywd, ccKywd, ccKywd, ccKywd, ccKywd
	for c := '0'; c <= '9'; c++ {
		t[c] = ccDigit
	}
	for c := 0x80; c <= 0xff; c++ {
		t[c] = ccID
	}
	t[0xef] = ccBOM
	t[0] = ccNul
	for _, c := range "\t\n\f\r " {
		t[c] = ccSpace
	}
	for c, cl := range map[byte]uint8{
		'$': ccDollar, '@': ccVarAlpha, '#': ccVarAlpha, ':': ccVarAlpha, '?': ccVarNum,
		'"': ccQuote, '\'': ccQuote, '`': ccQuote, '[': ccQuote2, '|': ccPipe, '-': ccMinus,
		'<': ccLT, '>': ccGT, '=': ccEQ, '!': ccBang, '/': ccSlash, '(': ccLP, ')': ccRP,
		';': ccSemi, '+': ccPlus, '*': ccStar, '%': ccPercent, ',': ccComma, '&': ccAnd,
		'~': ccTilda, '.': ccDot,
	} {
		t[c] = cl
	}
	return t
}()

// isSQLSpace is SQLite's sqlite3Isspace: it includes \v, which SQLite
// accepts inside a run of white space but not at its start.
func isSQLSpace(c byte) bool { return c == ' ' || (c >= '\t' && c <= '\r') }

func isSQLDigit(c byte) bool { return c >= '0' && c <= '9' }

func isSQLHexDigit(c byte) bool {
	return isSQLDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'f')
}

// isIdentByte is SQLite's IdChar: letters, digits, '_', '$' and every byte
// of a multi-byte UTF-8 character (including those of U+FEFF and of Unicode
// spaces such as U+00A0: inside a word they are part of it).
func isIdentByte(c byte) bool {
	return c == '_' || c == '$' || c >= 0x80 || isSQLDigit(c) || (c|0x20 >= 'a' && c|0x20 <= 'z')
}

// TokenizeSQL splits src into tokens exactly as SQLite's own tokenizer
// (sqlite3GetToken in tokenize.c) does, byte for byte, so that everything
// that reasons about SQL text sees the statements, strings, identifiers and
// keywords SQLite will see. White space and comments are dropped. Points
// where a reader might expect otherwise, all as in SQLite:
//
//   - U+FEFF (the byte order mark, EF BB BF) where a token may start is
//     white space; inside a word it is part of the word. Other Unicode
//     spaces (U+00A0, U+2000..U+200A, U+3000 ...) are never white space:
//     like every non-ASCII character they are word characters.
//   - \v is white space only after another white-space character; at the
//     start of a token it is an illegal token.
//   - A NUL byte ends the text: SQLite reads no further, so neither does
//     TokenizeSQL.
//   - $name(...), @name, :name and #name are single parameter tokens; the
//     parenthesised part of $name(...) runs to the next ')' or white space,
//     across quotes and semicolons.
//   - Unterminated strings, identifiers and comments run to the end of the
//     text (the first two as TokenIllegal).
//
// It is not a parser and never fails.
func TokenizeSQL(src string) []SQLToken {
	var out []SQLToken
	for i := 0; i < len(src); {
		n, kind, skip := sqlToken(src, i)
		if n == 0 { // NUL: the end of the text for SQLite
			break
		}
		if !skip {
			out = append(out, SQLToken{kind, i, i + n})
		}
		i += n
	}
	return out
}

// sqlToken returns the length and kind of the token starting at src[i], and
// whether it is white space or a comment; a length of 0 means the end of
// the text (a NUL byte). It follows sqlite3GetToken line by line; at(j)
// reads past the end of src as NUL, as C reads the terminator.
func sqlToken(src string, i int) (n int, kind SQLTokenKind, skip bool) {
	at := func(j int) byte {
		if i+j < len(src) {
			return src[i+j]
		}
		return 0
	}
	word := func(j int) (int, SQLTokenKind, bool) {
		for isIdentByte(at(j)) {
			j++
		}
		return j, TokenWord, false
	}
	switch sqlClass[at(0)] {
	case ccSpace:
		j := 1
		for isSQLSpace(at(j)) {
			j++
		}
		return j, 0, true
	case ccMinus:
		if at(1) == '-' {
			j := 2
			for c := at(j); c != 0 && c != '\n'; c = at(j) {
				j++
			}
			return j, 0, true
		}
		if at(1) == '>' {
			if at(2) == '>' {
				return 3, TokenPunct, false
			}
			return 2, TokenPunct, false
		}
		return 1, TokenPunct, false
	case ccSlash:
		if at(1) != '*' || at(2) == 0 {
			return 1, TokenPunct, false
		}
		j, c := 3, at(2)
		for (c != '*' || at(j) != '/') && at(j) != 0 {
			c = at(j)
			j++
		}
		if at(j) != 0 {
			j++
		}
		return j, 0, true
	case ccEQ:
		if at(1) == '=' {
			return 2, TokenPunct, false
		}
		return 1, TokenPunct, false
	case ccLT:
		if c := at(1); c == '=' || c == '>' || c == '<' {
			return 2, TokenPunct, false
		}
		return 1, TokenPunct, false
	case ccGT:
		if c := at(1); c == '=' || c == '>' {
			return 2, TokenPunct, false
		}
		return 1, TokenPunct, false
	case ccBang:
		if at(1) != '=' {
			return 1, TokenIllegal, false
		}
		return 2, TokenPunct, false
	case ccPipe:
		if at(1) == '|' {
			return 2, TokenPunct, false
		}
		return 1, TokenPunct, false
	case ccLP, ccRP, ccPlus, ccStar, ccPercent, ccComma, ccAnd, ccTilda:
		return 1, TokenPunct, false
	case ccSemi:
		return 1, TokenSemicolon, false
	case ccQuote:
		delim := at(0)
		j := 1
		var c byte
		for {
			if c = at(j); c == 0 {
				break
			}
			if c == delim {
				if at(j+1) != delim {
					break
				}
				j++ // a doubled quote stands for itself
			}
			j++
		}
		switch {
		case c == '\'':
			return j + 1, TokenString, false
		case c != 0:
			return j + 1, TokenQuoted, false
		}
		return j, TokenIllegal, false
	case ccDot:
		if !isSQLDigit(at(1)) {
			return 1, TokenPunct, false
		}
		return sqlNumber(at)
	case ccDigit:
		return sqlNumber(at)
	case ccQuote2:
		j, c := 1, at(0)
		for c != ']' && at(j) != 0 {
			c = at(j)
			j++
		}
		if c == ']' {
			return j, TokenQuoted, false
		}
		return j, TokenIllegal, false
	case ccVarNum:
		j := 1
		for isSQLDigit(at(j)) {
			j++
		}
		return j, TokenVariable, false
	case ccDollar, ccVarAlpha:
		kind, named := TokenVariable, 0
		j := 1
		for c := at(j); c != 0; c = at(j) {
			if isIdentByte(c) {
				named++
			} else if c == '(' && named > 0 {
				for {
					j++
					c = at(j)
					if c == 0 || isSQLSpace(c) || c == ')' {
						break
					}
				}
				if c == ')' {
					j++
				} else {
					kind = TokenIllegal
				}
				break
			} else if c == ':' && at(j+1) == ':' {
				j++
			} else {
				break
			}
			j++
		}
		if named == 0 {
			kind = TokenIllegal
		}
		return j, kind, false
	case ccKywd0:
		if sqlClass[at(1)] > ccKywd {
			return word(1)
		}
		j := 2
		for sqlClass[at(j)] <= ccKywd {
			j++
		}
		return word(j)
	case ccX:
		if at(1) == '\'' {
			kind := TokenBlob
			j := 2
			for isSQLHexDigit(at(j)) {
				j++
			}
			if at(j) != '\'' || j%2 != 0 {
				kind = TokenIllegal
				for at(j) != 0 && at(j) != '\'' {
					j++
				}
			}
			if at(j) != 0 {
				j++
			}
			return j, kind, false
		}
		return word(1)
	case ccKywd, ccID:
		return word(1)
	case ccBOM:
		if at(1) == 0xbb && at(2) == 0xbf {
			return 3, 0, true
		}
		return word(1)
	case ccNul:
		return 0, TokenIllegal, false
	}
	return 1, TokenIllegal, false
}

// sqlNumber scans a numeric literal as SQLite does, including hexadecimal
// integers and '_' digit separators; word characters right after a number
// make the whole run one illegal token.
func sqlNumber(at func(int) byte) (int, SQLTokenKind, bool) {
	kind := TokenNumber
	var j int
	if at(0) == '0' && (at(1) == 'x' || at(1) == 'X') && isSQLHexDigit(at(2)) {
		for j = 3; isSQLHexDigit(at(j)) || at(j) == '_'; j++ {
		}
	} else {
		for j = 0; isSQLDigit(at(j)) || at(j) == '_'; j++ {
		}
		if at(j) == '.' {
			for j++; isSQLDigit(at(j)) || at(j) == '_'; j++ {
			}
		}
		if (at(j) == 'e' || at(j) == 'E') &&
			(isSQLDigit(at(j+1)) || ((at(j+1) == '+' || at(j+1) == '-') && isSQLDigit(at(j+2)))) {
			for j += 2; isSQLDigit(at(j)) || at(j) == '_'; j++ {
			}
		}
	}
	for isIdentByte(at(j)) {
		kind = TokenIllegal
		j++
	}
	return j, kind, false
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
// It decides where statements begin and end the way SQLite does, so that a
// second statement can never be smuggled past the runner, and finds each
// statement's leading keyword. (SQLite's grammar also allows semicolons
// inside CREATE TRIGGER bodies; splitting there only makes such text, which
// is refused anyway, count as several statements.)
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

// word returns the upper-cased text of token i of s when it is a bare word,
// and "" otherwise (including past the end). Only ASCII letters are folded,
// as SQLite folds keywords: "ſelect" is no SELECT to SQLite, so not here
// either.
func (s statement) word(src string, i int) string {
	if i >= len(s.tokens) || s.tokens[i].Kind != TokenWord {
		return ""
	}
	return asciiUpper(s.tokens[i].Text(src))
}

// asciiUpper upper-cases the ASCII letters of s and leaves every other
// byte alone (strings.ToUpper maps some non-ASCII letters onto ASCII ones).
func asciiUpper(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'a' && c <= 'z' {
			b[i] = c - 'a' + 'A'
		}
	}
	return string(b)
}

// asciiLower lower-cases the ASCII letters of s, as SQLite compares names.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if c >= 'A' && c <= 'Z' {
			b[i] = c - 'A' + 'a'
		}
	}
	return string(b)
}

package datasets

import (
	"fmt"
	"strings"
)

// RefusedError reports a statement the read-only runner will not run. Its
// message is meant for the person (or model) who wrote the statement: it
// says what was refused and why, never a raw driver error.
type RefusedError struct {
	// Verb is the statement's leading keyword, upper-cased ("DROP", "PRAGMA").
	Verb string
	// Reason explains in plain words why it was refused.
	Reason string
}

func (e *RefusedError) Error() string {
	return "query refused: " + e.Reason
}

// refuse builds a RefusedError.
func refuse(verb, format string, args ...any) *RefusedError {
	return &RefusedError{Verb: verb, Reason: fmt.Sprintf(format, args...)}
}

// readOnlyPragmas lists the pragmas that may be run, in their reading form
// only, with whether they take a table or index name as argument. Every
// other pragma is refused, by the lexical gate and again by the
// connection's authorizer: some change the connection as soon as SQLite
// compiles them (query_only, case_sensitive_like, writable_schema).
// data_version is here because FTS5 reads it while answering a MATCH.
var readOnlyPragmas = map[string]bool{
	"table_info":       true,
	"table_xinfo":      true,
	"table_list":       true,
	"index_list":       true,
	"index_info":       true,
	"index_xinfo":      true,
	"foreign_key_list": true,
	"collation_list":   false,
	"database_list":    false,
	"function_list":    false,
	"module_list":      false,
	"pragma_list":      false,
	"compile_options":  false,
	"encoding":         false,
	"page_count":       false,
	"page_size":        false,
	"user_version":     false,
	"schema_version":   false,
	"application_id":   false,
	"data_version":     false,
	"query_only":       false,
}

// verbReasons explains why each kind of non-reading statement is refused.
var verbReasons = map[string]string{
	"INSERT":    "INSERT adds data; only reading queries (SELECT) can be run",
	"REPLACE":   "REPLACE changes data; only reading queries (SELECT) can be run",
	"UPDATE":    "UPDATE changes data; only reading queries (SELECT) can be run",
	"DELETE":    "DELETE removes data; only reading queries (SELECT) can be run",
	"CREATE":    "CREATE changes the database schema; only reading queries (SELECT) can be run",
	"DROP":      "DROP removes part of the database; only reading queries (SELECT) can be run",
	"ALTER":     "ALTER changes the database schema; only reading queries (SELECT) can be run",
	"ATTACH":    "ATTACH opens another database file; only the selected data source can be queried",
	"DETACH":    "DETACH changes which database files are open; only reading queries (SELECT) can be run",
	"VACUUM":    "VACUUM rewrites the database file; only reading queries (SELECT) can be run",
	"REINDEX":   "REINDEX rebuilds indexes; only reading queries (SELECT) can be run",
	"ANALYZE":   "ANALYZE writes statistics into the database; only reading queries (SELECT) can be run",
	"BEGIN":     "transaction control is not available; each query runs on its own",
	"COMMIT":    "transaction control is not available; each query runs on its own",
	"END":       "transaction control is not available; each query runs on its own",
	"ROLLBACK":  "transaction control is not available; each query runs on its own",
	"SAVEPOINT": "transaction control is not available; each query runs on its own",
	"RELEASE":   "transaction control is not available; each query runs on its own",
}

// checkedStatement is a statement that passed the lexical gate.
type checkedStatement struct {
	// text is the statement without terminator or surrounding comments.
	text string
	// verb is its leading keyword.
	verb string
	// unknownVerb is set when the statement starts with a word that is no
	// SQLite statement at all: SQLite is left to report its syntax error
	// (useful feedback for whoever wrote it), and it is refused should
	// SQLite ever accept it.
	unknownVerb bool
}

// gate is the first, lexical layer: exactly one statement, led by a reading
// verb, naming no pragma outside readOnlyPragmas. It sees the text through
// TokenizeSQL, which splits it exactly as SQLite does, so the statement it
// judges is the statement SQLite would compile. It gives the clearest
// refusals; the connection's authorizer (authorize) refuses the same
// things again inside SQLite.
//
// It is stricter than SQLite in a few documented places: a NUL byte
// anywhere is refused (SQLite would silently ignore the rest of the text),
// PRAGMA arguments must be a single name, and every identifier starting
// with "pragma_" must name a pragma of readOnlyPragmas, even one that is
// only a column alias; and so must any identifier load_extension.
func gate(query string) (checkedStatement, error) {
	if strings.IndexByte(query, 0) >= 0 {
		return checkedStatement{}, refuse("", "the query contains a NUL character (byte 0); SQLite would ignore everything after it, so remove it")
	}
	stmts := splitStatements(query)
	switch {
	case len(stmts) == 0:
		return checkedStatement{}, refuse("", "the query is empty")
	case len(stmts) > 1:
		return checkedStatement{}, refuse(stmts[1].word(query, 0),
			"only one statement can be run at a time; found %d (remove everything after the first ';')", len(stmts))
	}
	s := stmts[0]
	cs := checkedStatement{text: query[s.start:s.end], verb: s.word(query, 0)}
	first := 0
	if cs.verb == "EXPLAIN" {
		first = 1
		if s.word(query, 1) == "QUERY" && s.word(query, 2) == "PLAN" {
			first = 3
		}
		if first >= len(s.tokens) {
			return checkedStatement{}, refuse("EXPLAIN", "EXPLAIN needs a statement to explain")
		}
	}
	if err := checkFunctions(query, s); err != nil {
		return checkedStatement{}, err
	}
	verb := s.word(query, first)
	if verb == "WITH" {
		verb = withVerb(query, s, first)
	}
	switch verb {
	case "SELECT", "VALUES", "":
		return cs, nil
	case "PRAGMA":
		return cs, checkPragma(query, s, first)
	case "EXPLAIN":
		return checkedStatement{}, refuse(verb, "EXPLAIN cannot be nested")
	}
	if r, ok := verbReasons[verb]; ok {
		return checkedStatement{}, refuse(verb, "%s", r)
	}
	cs.unknownVerb = true
	return cs, nil
}

// tokenName returns the name a token stands for where SQLite's grammar
// takes a name (nm: an identifier, a quoted identifier or a string).
func tokenName(src string, t SQLToken) (string, bool) {
	switch t.Kind {
	case TokenWord:
		return t.Text(src), true
	case TokenQuoted, TokenString:
		return unquote(t.Text(src)), true
	}
	return "", false
}

// withVerb returns the leading keyword of the statement a WITH clause
// starting at token at belongs to (SELECT, VALUES, INSERT, REPLACE, UPDATE
// or DELETE), "" when the clause is malformed (SQLite then reports the
// syntax error). WITH [RECURSIVE] name [(columns)] AS [NOT] [MATERIALIZED]
// (select) [, ...] statement.
func withVerb(src string, s statement, at int) string {
	text := func(i int) string {
		if i < len(s.tokens) {
			return s.tokens[i].Text(src)
		}
		return ""
	}
	// skipParens returns the index after the parenthesis group at i.
	skipParens := func(i int) int {
		depth := 0
		for ; i < len(s.tokens); i++ {
			switch text(i) {
			case "(":
				depth++
			case ")":
				if depth--; depth == 0 {
					return i + 1
				}
			}
		}
		return i
	}
	i := at + 1
	if s.word(src, i) == "RECURSIVE" {
		i++
	}
	for i < len(s.tokens) {
		i++ // the table name
		if text(i) == "(" {
			i = skipParens(i)
		}
		if s.word(src, i) != "AS" {
			return ""
		}
		i++
		if s.word(src, i) == "NOT" {
			i++
		}
		if s.word(src, i) == "MATERIALIZED" {
			i++
		}
		if text(i) != "(" {
			return ""
		}
		i = skipParens(i)
		if text(i) != "," {
			return s.word(src, i)
		}
		i++
	}
	return ""
}

// checkFunctions refuses load_extension and pragma_NAME table-valued
// functions (SQLite runs "PRAGMA NAME=argument" for them while the query
// runs) unless NAME is a read-only pragma.
func checkFunctions(src string, s statement) error {
	for _, t := range s.tokens {
		if t.Kind != TokenWord && t.Kind != TokenQuoted {
			continue
		}
		name, _ := t.Identifier(src)
		name = asciiLower(name)
		if name == "load_extension" {
			return refuse("SELECT", "load_extension is not allowed; extensions cannot be loaded")
		}
		if !strings.HasPrefix(name, "pragma_") {
			continue
		}
		if _, ok := readOnlyPragmas[strings.TrimPrefix(name, "pragma_")]; !ok {
			return refuse("PRAGMA", "%s runs PRAGMA %s, which is not allowed; only read-only schema pragmas such as pragma_table_info can be used",
				name, strings.TrimPrefix(name, "pragma_"))
		}
	}
	return nil
}

// checkPragma allows only the reading form of the pragmas in readOnlyPragmas:
// PRAGMA [schema.]name, and for those that take a table or index name
// PRAGMA [schema.]name(argument) or PRAGMA [schema.]name = argument.
func checkPragma(src string, s statement, at int) error {
	i := at + 1
	if i+1 < len(s.tokens) && s.tokens[i+1].Kind == TokenPunct && s.tokens[i+1].Text(src) == "." {
		i += 2 // schema-qualified
	}
	if i >= len(s.tokens) {
		return refuse("PRAGMA", "PRAGMA needs a name")
	}
	name, _ := tokenName(src, s.tokens[i])
	name = asciiLower(name)
	takesArg, ok := readOnlyPragmas[name]
	if !ok {
		return refuse("PRAGMA", "PRAGMA %s is not allowed; only read-only schema pragmas such as table_info can be run", name)
	}
	rest := s.tokens[i+1:]
	if len(rest) == 0 {
		return nil
	}
	first := rest[0].Text(src)
	if !takesArg {
		if first == "=" || first == "==" {
			return refuse("PRAGMA", "setting PRAGMA %s is not allowed; its value can only be read", name)
		}
		return refuse("PRAGMA", "PRAGMA %s takes no argument here; its value can only be read", name)
	}
	isName := func(t SQLToken) bool { _, ok := tokenName(src, t); return ok }
	switch {
	case first == "(" && len(rest) == 3 && isName(rest[1]) && rest[2].Text(src) == ")":
		return nil
	case (first == "=" || first == "==") && len(rest) == 2 && isName(rest[1]):
		return nil
	}
	return refuse("PRAGMA", "PRAGMA %s must be written as %s(name)", name, name)
}

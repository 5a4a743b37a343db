package datasets

import (
	"context"
	"database/sql"
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
// other pragma is refused: some change the connection as soon as SQLite
// compiles them (query_only, writable_schema), before any bytecode check.
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

// writeOpcodes are the SQLite bytecode operations that write to a database,
// change its schema or its file, or control transactions. Their presence in
// a statement's program is how SQLite itself decides that a statement is not
// read-only (see sqlite3_stmt_readonly); OP_Transaction is checked
// separately through its write flag.
var writeOpcodes = map[string]bool{
	"OpenWrite":   true,
	"CreateBtree": true,
	"Destroy":     true,
	"ParseSchema": true,
	"SetCookie":   true,
	"DropTable":   true,
	"DropIndex":   true,
	"DropTrigger": true,
	"Vacuum":      true,
	"IncrVacuum":  true,
	"JournalMode": true,
	"Checkpoint":  true,
	"VUpdate":     true,
	"VCreate":     true,
	"VDestroy":    true,
	"AutoCommit":  true,
	"Savepoint":   true,
}

// checkedStatement is a statement that passed the lexical gate.
type checkedStatement struct {
	// text is the statement without terminator or surrounding comments.
	text string
	// verb is its leading keyword.
	verb string
	// inner is the statement EXPLAIN applies to (text itself when the
	// statement is not an EXPLAIN).
	inner string
	// unknownVerb is set when the statement starts with a word that is no
	// SQLite statement at all: SQLite is left to report its syntax error
	// (useful feedback for whoever wrote it), and it is refused should
	// SQLite ever accept it.
	unknownVerb bool
}

// gate is the first, lexical layer: exactly one statement, led by a reading
// verb. It runs before SQLite sees the text, because SQLite applies some
// statements (certain PRAGMAs) while merely compiling them.
func gate(query string) (checkedStatement, error) {
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
	cs.inner = cs.text
	first := 0
	if cs.verb == "EXPLAIN" {
		first = 1
		if s.word(query, 1) == "QUERY" && s.word(query, 2) == "PLAN" {
			first = 3
		}
		if first >= len(s.tokens) {
			return checkedStatement{}, refuse("EXPLAIN", "EXPLAIN needs a statement to explain")
		}
		cs.inner = query[s.tokens[first].Start:s.end]
	}
	verb := s.word(query, first)
	switch verb {
	case "SELECT", "WITH", "VALUES":
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

// checkPragma allows only the reading form of the pragmas in readOnlyPragmas:
// PRAGMA [schema.]name or PRAGMA [schema.]name(argument) for those that take
// a table or index name.
func checkPragma(src string, s statement, at int) error {
	i := at + 1
	if i+1 < len(s.tokens) && s.tokens[i+1].Kind == TokenPunct && src[s.tokens[i+1].Start] == '.' {
		i += 2 // schema-qualified
	}
	if i >= len(s.tokens) {
		return refuse("PRAGMA", "PRAGMA needs a name")
	}
	name, _ := s.tokens[i].Identifier(src)
	name = strings.ToLower(name)
	takesArg, ok := readOnlyPragmas[name]
	if !ok {
		return refuse("PRAGMA", "PRAGMA %s is not allowed; only read-only schema pragmas such as table_info can be run", name)
	}
	rest := s.tokens[i+1:]
	if len(rest) == 0 {
		return nil
	}
	if src[rest[0].Start] == '=' {
		return refuse("PRAGMA", "setting PRAGMA %s is not allowed; its value can only be read", name)
	}
	if !takesArg {
		return refuse("PRAGMA", "PRAGMA %s takes no argument here; its value can only be read", name)
	}
	if src[rest[0].Start] != '(' || src[rest[len(rest)-1].Start] != ')' {
		return refuse("PRAGMA", "PRAGMA %s must be written as %s(name)", name, name)
	}
	return nil
}

// inspectProgram is the second layer: SQLite compiles the statement (any
// syntax error, unknown table or column is reported here, in SQLite's own
// words) and its bytecode is searched for operations that write. This
// catches what a keyword check cannot, such as a WITH clause in front of a
// DELETE.
func inspectProgram(ctx context.Context, conn *sql.Conn, cs checkedStatement) error {
	rows, err := conn.QueryContext(ctx, "EXPLAIN "+cs.inner)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	if len(cols) < 6 { // addr, opcode, p1, p2, p3, p4, ...
		return fmt.Errorf("unexpected EXPLAIN output with %d columns", len(cols))
	}
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			return err
		}
		op, _ := vals[1].(string)
		if op == "Transaction" {
			if p2, _ := vals[3].(int64); p2 != 0 {
				return refuse(cs.verb, "the statement would write to the database; only reading queries can be run")
			}
			continue
		}
		if writeOpcodes[op] {
			return refuse(cs.verb, "the statement would modify the database (%s); only reading queries can be run", op)
		}
		if op == "Function" || op == "PureFunc" {
			if p4, _ := vals[5].(string); strings.HasPrefix(strings.ToLower(p4), "load_extension") {
				return refuse(cs.verb, "load_extension is not allowed; extensions cannot be loaded")
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if cs.unknownVerb {
		return refuse(cs.verb, "only SELECT, WITH, VALUES, EXPLAIN and a few read-only PRAGMAs can be run")
	}
	return nil
}

package postgres

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/clinsight/clinsight/datasets"
)

// refuse builds the runner's refusal error.
func refuse(verb, format string, args ...any) *datasets.RefusedError {
	return &datasets.RefusedError{Verb: verb, Reason: fmt.Sprintf(format, args...)}
}

// checkedStatement is a statement that passed the gate.
type checkedStatement struct {
	// text is the statement without surrounding comments and terminator.
	text string
	// verb is its leading keyword, upper-cased ("SELECT", "EXPLAIN"), or
	// "(" for a parenthesised query.
	verb string
	// query is set when the statement is a query (SELECT, WITH, VALUES,
	// TABLE or a parenthesised one) that can be read as a subquery: the
	// engine then reads it through a wrapping SELECT that cuts long values
	// and caps the rows on the server.
	query bool
}

// verbReasons explains why each kind of statement that is not a query is
// refused. Most would also be refused by the server in a read-only
// transaction; some (COPY ... TO PROGRAM, PREPARE TRANSACTION, LOCK,
// CHECKPOINT) would not.
var verbReasons = map[string]string{
	"INSERT":     "INSERT adds data; only reading queries (SELECT) can be run",
	"UPDATE":     "UPDATE changes data; only reading queries (SELECT) can be run",
	"DELETE":     "DELETE removes data; only reading queries (SELECT) can be run",
	"MERGE":      "MERGE changes data; only reading queries (SELECT) can be run",
	"TRUNCATE":   "TRUNCATE removes data; only reading queries (SELECT) can be run",
	"CREATE":     "CREATE changes the database schema; only reading queries (SELECT) can be run",
	"DROP":       "DROP removes part of the database; only reading queries (SELECT) can be run",
	"ALTER":      "ALTER changes the database; only reading queries (SELECT) can be run",
	"GRANT":      "GRANT changes permissions; only reading queries (SELECT) can be run",
	"REVOKE":     "REVOKE changes permissions; only reading queries (SELECT) can be run",
	"COMMENT":    "COMMENT changes the database's documentation; only reading queries (SELECT) can be run",
	"SECURITY":   "SECURITY LABEL changes the database; only reading queries (SELECT) can be run",
	"REASSIGN":   "REASSIGN OWNED changes the database; only reading queries (SELECT) can be run",
	"IMPORT":     "IMPORT FOREIGN SCHEMA changes the database; only reading queries (SELECT) can be run",
	"COPY":       "COPY reads or writes files and runs programs on the database server; only reading queries (SELECT) can be run (export results from Clinsight instead)",
	"DO":         "DO runs a block of procedural code; only reading queries (SELECT) can be run",
	"CALL":       "CALL runs a procedure; only reading queries (SELECT) can be run",
	"LOCK":       "LOCK TABLE blocks other users of the table; only reading queries (SELECT) can be run",
	"BEGIN":      "transaction control is not available; each query runs on its own, read-only",
	"START":      "transaction control is not available; each query runs on its own, read-only",
	"COMMIT":     "transaction control is not available; each query runs on its own, read-only",
	"END":        "transaction control is not available; each query runs on its own, read-only",
	"ROLLBACK":   "transaction control is not available; each query runs on its own, read-only",
	"ABORT":      "transaction control is not available; each query runs on its own, read-only",
	"SAVEPOINT":  "transaction control is not available; each query runs on its own, read-only",
	"RELEASE":    "transaction control is not available; each query runs on its own, read-only",
	"PREPARE":    "PREPARE keeps a statement or a transaction on the server after the query; only reading queries (SELECT) can be run",
	"EXECUTE":    "EXECUTE runs a prepared statement; only reading queries (SELECT) can be run",
	"DEALLOCATE": "DEALLOCATE changes the session; only reading queries (SELECT) can be run",
	"DECLARE":    "cursors are not available; only reading queries (SELECT) can be run",
	"FETCH":      "cursors are not available; only reading queries (SELECT) can be run",
	"MOVE":       "cursors are not available; only reading queries (SELECT) can be run",
	"CLOSE":      "cursors are not available; only reading queries (SELECT) can be run",
	"SET":        "SET changes session settings; the runner sets its own limits and search path",
	"RESET":      "RESET changes session settings; the runner sets its own limits and search path",
	"DISCARD":    "DISCARD changes the session; only reading queries (SELECT) can be run",
	"LISTEN":     "LISTEN waits for notifications; only reading queries (SELECT) can be run",
	"UNLISTEN":   "UNLISTEN changes the session; only reading queries (SELECT) can be run",
	"NOTIFY":     "NOTIFY sends a notification to other sessions; only reading queries (SELECT) can be run",
	"VACUUM":     "VACUUM rewrites tables; only reading queries (SELECT) can be run",
	"ANALYZE":    "ANALYZE writes statistics into the database; only reading queries (SELECT) can be run (EXPLAIN ANALYZE SELECT ... is allowed)",
	"ANALYSE":    "ANALYZE writes statistics into the database; only reading queries (SELECT) can be run (EXPLAIN ANALYZE SELECT ... is allowed)",
	"CLUSTER":    "CLUSTER rewrites a table; only reading queries (SELECT) can be run",
	"REINDEX":    "REINDEX rebuilds indexes; only reading queries (SELECT) can be run",
	"REFRESH":    "REFRESH MATERIALIZED VIEW rewrites a view's data; only reading queries (SELECT) can be run",
	"CHECKPOINT": "CHECKPOINT makes the server write to disk; only reading queries (SELECT) can be run",
	"LOAD":       "LOAD loads a library into the server; only reading queries (SELECT) can be run",
}

// Reasons for refusing functions, by what they do.
const (
	whyDblink    = "%s opens a connection of its own to a database, outside the read-only transaction"
	whyLargeObj  = "%s reads or writes large objects or files on the database server"
	whyFiles     = "%s reads files or directories of the database server"
	whySignal    = "%s stops other sessions' queries or connections"
	whyAdvisory  = "%s takes an advisory lock, which can outlive the query and block other users"
	whySetConfig = "%s changes server settings; the runner sets its own limits and search path"
	whySequence  = "%s changes a sequence"
	whyNotify    = "%s sends a notification to other sessions"
	whySQLText   = "%s runs SQL given as text, which cannot be checked before it runs"
	whyAdmin     = "%s administers the database server"
	whyRows      = "%s changes table rows in place"
	whyIndex     = "%s changes an index"
	whyTableLock = "%s locks a table against changes while it runs"
	whySeed      = "%s changes the random numbers of later queries on the same connection"
	whyActivity  = "%s shows the queries of other sessions, other Clinsight users' included"
)

// refusedFunctions are functions refused by name (compared in lower case,
// whatever the schema they are qualified with). Many act outside the
// transaction, so its READ ONLY mode does not stop them (measured on
// PostgreSQL 15, see TestServerAllowsWhatTheGateRefuses): COPY TO PROGRAM,
// dblink_exec, advisory locks, pg_terminate_backend, replication slots,
// pg_reload_conf, pg_read_file, query_to_xml of any text.
var refusedFunctions = map[string]string{
	"lowrite":                        whyLargeObj,
	"loread":                         whyLargeObj,
	"pg_stat_file":                   whyFiles,
	"pg_current_logfile":             whyFiles,
	"pg_terminate_backend":           whySignal,
	"pg_cancel_backend":              whySignal,
	"set_config":                     whySetConfig,
	"nextval":                        whySequence,
	"setval":                         whySequence,
	"pg_notify":                      whyNotify,
	"ts_stat":                        whySQLText,
	"ts_rewrite":                     whySQLText,
	"pg_reload_conf":                 whyAdmin,
	"pg_rotate_logfile":              whyAdmin,
	"pg_switch_wal":                  whyAdmin,
	"pg_promote":                     whyAdmin,
	"pg_create_restore_point":        whyAdmin,
	"pg_start_backup":                whyAdmin,
	"pg_stop_backup":                 whyAdmin,
	"pg_log_backend_memory_contexts": whyAdmin,
	"pg_import_system_collations":    whyAdmin,
	"pg_nextoid":                     whyAdmin,
	"pg_extension_config_dump":       whyAdmin,
	"pg_truncate_visibility_map":     whyAdmin,
	"txid_current":                   whyAdmin,
	"pg_current_xact_id":             whyAdmin,
	"pg_stat_statements_reset":       whyAdmin,
	// Found by TestExtensionFunctionsAreRefused: the core's index
	// functions and those of contrib extensions (tablefunc, xml2,
	// pg_surgery, pg_prewarm, amcheck, adminpack), measured on PostgreSQL
	// 15 in a READ ONLY transaction.
	"connectby":                 whySQLText,
	"xpath_table":               whySQLText,
	"brin_summarize_new_values": whyIndex,
	"brin_summarize_range":      whyIndex,
	"brin_desummarize_range":    whyIndex,
	"gin_clean_pending_list":    whyIndex,
	"bt_index_parent_check":     whyTableLock,
	"setseed":                   whySeed,
	"pg_hba_file_rules":         whyFiles,
	"pg_ident_file_mappings":    whyFiles,
	"pg_show_all_file_settings": whyFiles,
	"pg_logdir_ls":              whyFiles,
	// Newer servers, from PostgreSQL 16-18's documentation (not measured:
	// the tests run 15): they write WAL, sync slots or rewrite the
	// planner's statistics of a table.
	"pg_log_standby_snapshot":    whyAdmin,
	"pg_sync_replication_slots":  whyAdmin,
	"pg_restore_relation_stats":  whyAdmin,
	"pg_restore_attribute_stats": whyAdmin,
	"pg_clear_relation_stats":    whyAdmin,
	"pg_clear_attribute_stats":   whyAdmin,
	"pg_set_relation_stats":      whyAdmin,
	"pg_set_attribute_stats":     whyAdmin,
	// Every Clinsight user of a site shares one role, and a role sees the
	// query text of its own sessions (TestOtherSessionsQueriesAreRefused).
	"pg_stat_activity":     whyActivity,
	"pg_stat_get_activity": whyActivity,
}

// refusedPrefixes are name prefixes refused like refusedFunctions.
var refusedPrefixes = []struct{ prefix, why string }{
	{"dblink", whyDblink},
	{"lo_", whyLargeObj},
	{"pg_read_", whyFiles},
	{"pg_ls_", whyFiles},
	{"pg_file_", whyFiles},
	{"pg_advisory", whyAdvisory},
	{"pg_try_advisory", whyAdvisory},
	{"query_to_xml", whySQLText},
	{"cursor_to_xml", whySQLText},
	{"pg_stat_reset", whyAdmin},
	{"pg_replication_", whyAdmin},
	{"pg_logical_", whyAdmin},
	{"pg_create_", whyAdmin},
	{"pg_drop_", whyAdmin},
	{"pg_copy_", whyAdmin},
	{"pg_wal_replay_", whyAdmin},
	{"pg_backup_", whyAdmin},
	{"binary_upgrade_", whyAdmin},
	{"crosstab", whySQLText}, // tablefunc: crosstab, crosstab2, crosstab3, crosstab4
	{"heap_force_", whyRows}, // pg_surgery
	{"autoprewarm_", whyAdmin},
	{"pg_buffercache_evict", whyAdmin},            // PostgreSQL 17-18 contrib: empties shared buffers
	{"pg_stat_statements", whyActivity},           // the view, its function and pg_stat_statements_info
	{"pg_stat_get_backend_activity", whyActivity}, // a backend's query text // pg_prewarm: writes a file, starts workers
}

// refusedName returns why a name is refused, "" when it is not.
func refusedName(name string) string {
	name = strings.ToLower(name)
	if why, ok := refusedFunctions[name]; ok {
		return fmt.Sprintf(why, name)
	}
	for _, p := range refusedPrefixes {
		if strings.HasPrefix(name, p.prefix) {
			return fmt.Sprintf(p.why, name)
		}
	}
	return ""
}

// gate is the engine's lexical layer. The server enforces reading (every
// statement runs in a READ ONLY transaction over the extended protocol,
// which takes one statement only); the gate refuses, before anything
// reaches the server, what a read-only transaction does not stop and gives
// the clearest refusals:
//
//   - anything but exactly one statement led by SELECT, WITH, VALUES, TABLE,
//     EXPLAIN (of one of those) or SHOW, or a parenthesised query;
//   - SELECT ... INTO, data-modifying words (INSERT, UPDATE, DELETE, MERGE,
//     TRUNCATE) anywhere, and row locks (FOR UPDATE/SHARE);
//   - every name of refusedFunctions and refusedPrefixes wherever it
//     appears (a column alias too): functions that act outside the
//     transaction, read server files, signal other sessions, take
//     advisory locks, change settings, change rows or indexes in place
//     (contrib's pg_surgery, BRIN summaries) or run SQL given as text
//     (query_to_xml, ts_stat, contrib's crosstab, connectby, xpath_table);
//   - parameters ($1), Unicode-escaped identifiers (U&"..."), NUL bytes,
//     text that is not UTF-8, and unterminated strings or comments, which
//     the gate could not read the way the server does.
//
// It reads the text with lex, which follows PostgreSQL's scanner with
// standard_conforming_strings on (the engine sets it for every statement).
// Functions a user-defined function or view calls are out of its sight:
// that is what the role's privileges are for (see CheckConnection).
func gate(query string) (checkedStatement, error) {
	if strings.IndexByte(query, 0) >= 0 {
		return checkedStatement{}, refuse("", "the query contains a NUL character (byte 0); remove it")
	}
	if !utf8.ValidString(query) {
		return checkedStatement{}, refuse("", "the query is not valid UTF-8 text")
	}
	toks := lex(query)
	var stmts [][]token
	var cur []token
	for _, t := range toks {
		if t.kind == tokError {
			return checkedStatement{}, refuse("", "the query has an unterminated string, quoted name or comment, or a character PostgreSQL does not accept, near %q", excerpt(query, t.start))
		}
		if t.kind == tokPunct && t.text(query) == ";" {
			if len(cur) > 0 {
				stmts = append(stmts, cur)
			}
			cur = nil
			continue
		}
		cur = append(cur, t)
	}
	if len(cur) > 0 {
		stmts = append(stmts, cur)
	}
	switch {
	case len(stmts) == 0:
		return checkedStatement{}, refuse("", "the query is empty")
	case len(stmts) > 1:
		return checkedStatement{}, refuse(word(query, stmts[1], 0),
			"only one statement can be run at a time; found %d (remove everything after the first ';')", len(stmts))
	}
	s := stmts[0]
	cs := checkedStatement{text: query[s[0].start:s[len(s)-1].end], verb: word(query, s, 0)}
	if s[0].kind == tokPunct && s[0].text(query) == "(" {
		cs.verb = "("
	}
	switch cs.verb {
	case "SELECT", "WITH", "VALUES", "TABLE", "(":
		cs.query = true
	case "SHOW":
	case "EXPLAIN":
		i := 1
		if i < len(s) && s[i].text(query) == "(" {
			i = skipParens(query, s, i)
		} else {
			for w := word(query, s, i); w == "ANALYZE" || w == "ANALYSE" || w == "VERBOSE"; w = word(query, s, i) {
				i++
			}
		}
		inner := word(query, s, i)
		if i < len(s) && s[i].text(query) == "(" {
			inner = "("
		}
		switch inner {
		case "SELECT", "WITH", "VALUES", "TABLE", "(":
		case "":
			return checkedStatement{}, refuse("EXPLAIN", "EXPLAIN needs a query to explain")
		default:
			return checkedStatement{}, refuse("EXPLAIN", "only queries (SELECT, WITH, VALUES, TABLE) can be explained")
		}
	default:
		if r, ok := verbReasons[cs.verb]; ok {
			return checkedStatement{}, refuse(cs.verb, "%s", r)
		}
		return checkedStatement{}, refuse(cs.verb, "only SELECT, WITH, VALUES, TABLE, EXPLAIN and SHOW statements can be run")
	}
	if err := checkBody(query, s, cs.verb); err != nil {
		return checkedStatement{}, err
	}
	return cs, nil
}

// checkBody refuses parameters, unchecked names, writing words and
// refused functions anywhere in a statement.
func checkBody(src string, s []token, verb string) error {
	for i, t := range s {
		switch t.kind {
		case tokParam:
			return refuse(verb, "parameters such as %s cannot be used; write the value into the query", t.text(src))
		case tokQuoted:
			if t.unicode {
				return refuse(verb, "Unicode-escaped names (U&\"...\") cannot be used; write the name itself")
			}
		case tokWord:
			switch w := strings.ToUpper(t.text(src)); w {
			case "INTO":
				return refuse(verb, "SELECT ... INTO creates a table; only reading queries can be run")
			case "INSERT", "UPDATE", "DELETE", "MERGE", "TRUNCATE":
				if w == "UPDATE" && i > 0 && strings.EqualFold(s[i-1].text(src), "FOR") {
					return refuse(verb, "FOR UPDATE locks rows; only reading queries can be run")
				}
				return refuse(verb, "%s changes data; only reading queries can be run", w)
			case "FOR":
				if next := word(src, s, i+1); next == "SHARE" || next == "NO" || next == "KEY" {
					return refuse(verb, "FOR %s locks rows; only reading queries can be run", next)
				}
			}
		}
		if name, ok := t.ident(src); ok {
			if why := refusedName(name); why != "" {
				return refuse(verb, "%s", why)
			}
		}
	}
	return nil
}

// word returns token i of a statement upper-cased when it is an unquoted
// word, else "".
func word(src string, s []token, i int) string {
	if i < len(s) && s[i].kind == tokWord {
		return strings.ToUpper(s[i].text(src))
	}
	return ""
}

// skipParens returns the index after the parenthesis group opening at i.
func skipParens(src string, s []token, i int) int {
	depth := 0
	for ; i < len(s); i++ {
		switch s[i].text(src) {
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

// excerpt returns up to 30 characters of src from byte offset at.
func excerpt(src string, at int) string {
	s := src[at:]
	if utf8.RuneCountInString(s) > 30 {
		s = string([]rune(s)[:30]) + "…"
	}
	return s
}

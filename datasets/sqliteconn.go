package datasets

import (
	"encoding/binary"
	"fmt"
	"net/url"
	"path/filepath"
	"sync"
	"unsafe"

	"modernc.org/libc"
	sqlite3 "modernc.org/sqlite/lib"
)

// sqliteConn is one SQLite connection of the query runner, opened
// directly through the SQLite library (modernc.org/sqlite/lib, the same
// SQLite the database/sql driver wraps) for what database/sql cannot reach:
// an authorizer, sqlite3_stmt_readonly, where SQLite ended the first
// statement, and the size of a value before it is copied. Only one
// goroutine uses a sqliteConn at a time; interrupt may be called from another.
type sqliteConn struct {
	tls *libc.TLS
	db  uintptr // sqlite3*

	// mu guards db against interrupt racing close.
	mu sync.Mutex
	// onClose, when set, runs once when the connection is closed.
	onClose func()

	// denied is the first action the authorizer refused since the last
	// resetDenied, for the error message.
	denied *RefusedError
	// authFn is the authorizer callback; SQLite holds a pointer to it, so
	// the connection keeps it alive.
	authFn func(tls *libc.TLS, arg uintptr, action int32, z1, z2, z3, z4 uintptr) int32
}

// sqliteError is an error SQLite reported: its extended result code and
// its message (sqlite3_errmsg).
type sqliteError struct {
	code int
	msg  string
}

func (e *sqliteError) Error() string { return e.msg }

// openReadOnlyConn opens the database file at path read-only and prepares
// the connection for untrusted SQL:
//
//   - SQLITE_OPEN_READONLY: every write to the file fails (SQLITE_READONLY);
//   - PRAGMA query_only=1: writes fail even to the temp schema;
//   - SQLITE_DBCONFIG_DEFENSIVE: no writable_schema, no shadow-table or
//     sqlite_dbpage writes;
//   - SQLITE_LIMIT_ATTACHED=0: no other database file can be attached;
//   - SQLITE_LIMIT_LENGTH=64 MiB and SQLITE_LIMIT_LIKE_PATTERN_LENGTH=1000
//     (maxValueBytes, maxLikePatternBytes): bounds on what one call of a
//     function, which no interrupt reaches, can allocate and compute;
//   - instr, replace and trim replaced by versions linear in their
//     arguments (installLinearFunctions): SQLite's are quadratic, and no
//     interrupt reaches one call;
//   - an authorizer (authorize) that refuses, while SQLite compiles, every
//     action that is not reading, including every PRAGMA outside the
//     read-only list and those run by pragma_* table-valued functions.
func openReadOnlyConn(path string) (*sqliteConn, error) {
	c, err := openConn(path, true)
	if err != nil {
		return nil, err
	}
	if rc := c.dbConfig(sqlite3.SQLITE_DBCONFIG_DEFENSIVE, 1); rc != sqlite3.SQLITE_OK {
		err := c.lastError(rc)
		c.close()
		return nil, fmt.Errorf("open %s: enable defensive mode: %w", path, err)
	}
	if rc := c.dbConfig(sqlite3.SQLITE_DBCONFIG_ENABLE_LOAD_EXTENSION, 0); rc != sqlite3.SQLITE_OK {
		err := c.lastError(rc)
		c.close()
		return nil, fmt.Errorf("open %s: disable extension loading: %w", path, err)
	}
	if err := c.exec("PRAGMA query_only=1"); err != nil {
		c.close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	for _, l := range []struct{ id, value int32 }{
		{sqlite3.SQLITE_LIMIT_ATTACHED, 0},
		{sqlite3.SQLITE_LIMIT_LENGTH, maxValueBytes},
		{sqlite3.SQLITE_LIMIT_LIKE_PATTERN_LENGTH, maxLikePatternBytes},
	} {
		sqlite3.Xsqlite3_limit(c.tls, c.db, l.id, l.value)
		if got := sqlite3.Xsqlite3_limit(c.tls, c.db, l.id, -1); got != l.value {
			c.close()
			return nil, fmt.Errorf("open %s: SQLite kept limit %d at %d, not %d", path, l.id, got, l.value)
		}
	}
	if err := c.installLinearFunctions(); err != nil {
		c.close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := c.setAuthorizer(authorize); err != nil {
		c.close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return c, nil
}

// openConn opens the database file at path, read-only or read-write (never
// creating it), with extended result codes and a busy timeout.
func openConn(path string, readOnly bool) (*sqliteConn, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", path, err)
	}
	mode, flags := "rw", int32(sqlite3.SQLITE_OPEN_READWRITE)
	if readOnly {
		mode, flags = "ro", sqlite3.SQLITE_OPEN_READONLY
	}
	uri := (&url.URL{Scheme: "file", Path: abs, RawQuery: "mode=" + mode}).String()
	c := &sqliteConn{tls: libc.NewTLS()}
	zName, err := libc.CString(uri)
	if err != nil {
		c.tls.Close()
		return nil, err
	}
	defer libc.Xfree(c.tls, zName)
	ppDb := libc.Xmalloc(c.tls, 8)
	if ppDb == 0 {
		c.tls.Close()
		return nil, fmt.Errorf("open %s: out of memory", path)
	}
	defer libc.Xfree(c.tls, ppDb)
	clear(libc.GoBytes(ppDb, 8))
	rc := sqlite3.Xsqlite3_open_v2(c.tls, zName, ppDb, flags|sqlite3.SQLITE_OPEN_URI|sqlite3.SQLITE_OPEN_FULLMUTEX, 0)
	c.db = readPtr(ppDb)
	if rc != sqlite3.SQLITE_OK {
		err := c.lastError(rc)
		c.close()
		return nil, err
	}
	sqlite3.Xsqlite3_extended_result_codes(c.tls, c.db, 1)
	sqlite3.Xsqlite3_busy_timeout(c.tls, c.db, 5000)
	return c, nil
}

// setAuthorizer installs decide as the connection's authorizer: SQLite
// asks it about each action of each statement it compiles; a non-nil
// answer denies the action (and is kept for the error message).
func (c *sqliteConn) setAuthorizer(decide func(action int32, arg1, arg2 string, hasArg2 bool) *RefusedError) error {
	c.authFn = func(_ *libc.TLS, _ uintptr, action int32, z1, z2, _, _ uintptr) int32 {
		if r := decide(action, cText(z1), cText(z2), z2 != 0); r != nil {
			if c.denied == nil {
				c.denied = r
			}
			return sqlite3.SQLITE_DENY
		}
		return sqlite3.SQLITE_OK
	}
	fp := *(*uintptr)(unsafe.Pointer(&struct {
		f func(*libc.TLS, uintptr, int32, uintptr, uintptr, uintptr, uintptr) int32
	}{c.authFn}))
	if rc := sqlite3.Xsqlite3_set_authorizer(c.tls, c.db, fp, 0); rc != sqlite3.SQLITE_OK {
		return fmt.Errorf("install the authorizer: %w", c.lastError(rc))
	}
	return nil
}

// readPtr reads the C pointer stored at p (8 bytes of C memory the
// caller allocated).
func readPtr(p uintptr) uintptr {
	b := libc.GoBytes(p, int(unsafe.Sizeof(uintptr(0))))
	if len(b) == 8 {
		return uintptr(binary.NativeEndian.Uint64(b))
	}
	return uintptr(binary.NativeEndian.Uint32(b))
}

// cText reads a C string (NULL reads as "").
func cText(p uintptr) string {
	if p == 0 {
		return ""
	}
	return libc.GoString(p)
}

// dbConfig sets a boolean sqlite3_db_config option.
func (c *sqliteConn) dbConfig(op int32, v int32) int32 {
	bp := libc.Xmalloc(c.tls, 16)
	if bp == 0 {
		return sqlite3.SQLITE_NOMEM
	}
	defer libc.Xfree(c.tls, bp)
	return sqlite3.Xsqlite3_db_config(c.tls, c.db, op, libc.VaList(bp, v, uintptr(0)))
}

// lastError returns the connection's error for result code rc.
func (c *sqliteConn) lastError(rc int32) error {
	if c.db == 0 {
		return &sqliteError{code: int(rc), msg: libc.GoString(sqlite3.Xsqlite3_errstr(c.tls, rc))}
	}
	code := sqlite3.Xsqlite3_extended_errcode(c.tls, c.db)
	if code&0xff != rc&0xff {
		code = rc
	}
	return &sqliteError{code: int(code), msg: libc.GoString(sqlite3.Xsqlite3_errmsg(c.tls, c.db))}
}

// resetDenied forgets the authorizer's last refusal.
func (c *sqliteConn) resetDenied() { c.denied = nil }

// prepare compiles the first statement of query. It returns the statement
// (0 when query holds only white space and comments) and the text SQLite
// left after it.
func (c *sqliteConn) prepare(query string) (stmt uintptr, tail string, err error) {
	z, err := libc.CString(query)
	if err != nil {
		return 0, "", err
	}
	defer libc.Xfree(c.tls, z)
	pp := libc.Xmalloc(c.tls, 16)
	if pp == 0 {
		return 0, "", fmt.Errorf("prepare: out of memory")
	}
	defer libc.Xfree(c.tls, pp)
	clear(libc.GoBytes(pp, 16))
	ppStmt, pzTail := pp, pp+8
	rc := sqlite3.Xsqlite3_prepare_v3(c.tls, c.db, z, int32(len(query)), 0, ppStmt, pzTail)
	if rc != sqlite3.SQLITE_OK {
		return 0, "", c.lastError(rc)
	}
	stmt = readPtr(ppStmt)
	if t := readPtr(pzTail); t >= z && t <= z+uintptr(len(query)) {
		tail = query[t-z:]
	}
	return stmt, tail, nil
}

// exec runs one statement to completion, ignoring its rows.
func (c *sqliteConn) exec(query string) error {
	stmt, _, err := c.prepare(query)
	if err != nil || stmt == 0 {
		return err
	}
	defer c.finalize(stmt)
	for {
		switch rc := sqlite3.Xsqlite3_step(c.tls, stmt); rc {
		case sqlite3.SQLITE_ROW:
		case sqlite3.SQLITE_DONE:
			return nil
		default:
			return c.lastError(rc)
		}
	}
}

// column describes result column i of a compiled statement: its name,
// declared type and origin (the table column SQLite traces its values to).
func (c *sqliteConn) column(stmt uintptr, i int) Column {
	n := int32(i)
	return Column{
		Name:         cText(sqlite3.Xsqlite3_column_name(c.tls, stmt, n)),
		DeclType:     cText(sqlite3.Xsqlite3_column_decltype(c.tls, stmt, n)),
		OriginTable:  cText(sqlite3.Xsqlite3_column_table_name(c.tls, stmt, n)),
		OriginColumn: cText(sqlite3.Xsqlite3_column_origin_name(c.tls, stmt, n)),
	}
}

func (c *sqliteConn) finalize(stmt uintptr) { sqlite3.Xsqlite3_finalize(c.tls, stmt) }

// interrupt makes the running statement stop with SQLITE_INTERRUPT. It may
// be called from any goroutine, also after close.
func (c *sqliteConn) interrupt() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.db == 0 {
		return
	}
	// A libc.TLS is not safe for concurrent use: this runs beside the
	// goroutine stepping the statement on c.tls.
	tls := libc.NewTLS()
	sqlite3.Xsqlite3_interrupt(tls, c.db)
	tls.Close()
}

// close closes the connection. Nothing compiled or changed on it outlives
// it.
func (c *sqliteConn) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.db != 0 {
		sqlite3.Xsqlite3_close_v2(c.tls, c.db)
		c.db = 0
		if c.onClose != nil {
			c.onClose()
		}
	}
	if c.tls != nil {
		c.tls.Close()
		c.tls = nil
	}
}

// authorize is the connection's authorizer (sqlite3_set_authorizer): SQLite
// asks it about every action of every statement it compiles, including the
// PRAGMA statements that pragma_* table-valued functions compile while they
// run, before the action takes effect. It returns nil for reading actions
// and a refusal for everything else: a PRAGMA outside readOnlyPragmas or
// setting a value, writes, schema changes, ATTACH/DETACH, transactions,
// and load_extension.
func authorize(action int32, arg1, arg2 string, hasArg2 bool) *RefusedError {
	switch action {
	case sqlite3.SQLITE_SELECT, sqlite3.SQLITE_READ, sqlite3.SQLITE_RECURSIVE:
		return nil
	case sqlite3.SQLITE_FUNCTION:
		switch asciiLower(arg2) {
		case "load_extension":
			return refuse("SELECT", "load_extension is not allowed; extensions cannot be loaded")
		case "fts3_tokenizer":
			return refuse("SELECT", "fts3_tokenizer is not allowed here")
		}
		return nil
	case sqlite3.SQLITE_PRAGMA:
		name := asciiLower(arg1)
		takesArg, ok := readOnlyPragmas[name]
		switch {
		case !ok:
			return refuse("PRAGMA", "PRAGMA %s is not allowed; only read-only schema pragmas such as table_info can be run", name)
		case hasArg2 && !takesArg:
			return refuse("PRAGMA", "setting PRAGMA %s is not allowed; its value can only be read", name)
		}
		return nil
	case sqlite3.SQLITE_INSERT, sqlite3.SQLITE_UPDATE, sqlite3.SQLITE_DELETE:
		return refuse(verbOfAction(action), "the statement would modify the database; only reading queries can be run")
	case sqlite3.SQLITE_TRANSACTION, sqlite3.SQLITE_SAVEPOINT:
		return refuse("BEGIN", "%s", verbReasons["BEGIN"])
	case sqlite3.SQLITE_ATTACH:
		return refuse("ATTACH", "%s", verbReasons["ATTACH"])
	case sqlite3.SQLITE_DETACH:
		return refuse("DETACH", "%s", verbReasons["DETACH"])
	case sqlite3.SQLITE_ANALYZE:
		return refuse("ANALYZE", "%s", verbReasons["ANALYZE"])
	case sqlite3.SQLITE_REINDEX:
		return refuse("REINDEX", "%s", verbReasons["REINDEX"])
	}
	// Schema changes (CREATE/DROP/ALTER of any kind) and any action a
	// future SQLite adds.
	return refuse("", "the statement would change the database schema; only reading queries can be run")
}

// verbOfAction names the statement kind of a writing authorizer action.
func verbOfAction(action int32) string {
	switch action {
	case sqlite3.SQLITE_INSERT:
		return "INSERT"
	case sqlite3.SQLITE_UPDATE:
		return "UPDATE"
	}
	return "DELETE"
}

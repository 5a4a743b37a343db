// Package postgres is Clinsight's PostgreSQL engine: the read-only query
// runner, schema catalog and connection check for a data source on a
// site's own database server. It implements datasets.Engine, the interface
// the SQLite runner also implements, with the same limits and result types.
//
// Reading is enforced by the server: every statement runs in its own
// READ ONLY transaction, with the statement, lock and idle timeouts set
// for that transaction alone, over the extended protocol (which takes one
// statement only), and is rolled back. A lexical gate refuses beforehand
// what a read-only transaction does not stop (see gate).
package postgres

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgconn/ctxwatch"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinsight/clinsight/datasets"
)

// Options tunes an Engine. The zero value is ready to use.
type Options struct {
	// Limits are the runner's limits, as for SQLite (zero fields take the
	// defaults of datasets.RunnerOptions).
	Limits datasets.RunnerOptions
	// MaxConns bounds the connections kept open to the server: 0 means 4.
	MaxConns int
	// Logger receives one line per connection problem; nil discards.
	Logger *slog.Logger
}

// cancelGrace is how long after the server's statement_timeout the client
// gives up on its own, sending a cancel request (a network that stopped
// answering). The server normally ends the statement first.
const cancelGrace = time.Second

// Engine runs SQL that Clinsight did not write itself against one
// PostgreSQL database, read-only and within limits, and reads its catalog.
// It keeps a small pool of connections; nothing a statement does outlives
// its transaction (refused names aside, a rolled-back transaction leaves
// no trace in the session), and a connection whose state is in doubt is
// closed rather than reused. An Engine is safe for concurrent use.
type Engine struct {
	src      Source
	opts     datasets.RunnerOptions
	pool     *pgxpool.Pool
	logger   *slog.Logger
	schemas  []string // resolved schemas, in search_path order
	version  string   // server_version
	describe string   // host, port, database, user
}

// Open checks the source, connects to the server and resolves the schemas
// to read (Source.Schemas, else the role's search_path). Close the engine
// when done.
func Open(ctx context.Context, src Source, opts Options) (*Engine, error) {
	cc, err := src.parseConfig()
	if err != nil {
		return nil, err
	}
	limits := opts.Limits.WithDefaults()
	pcfg, err := pgxpool.ParseConfig("")
	if err != nil {
		return nil, fmt.Errorf("configure the connection: %w", err)
	}
	pcfg.ConnConfig.Config = *cc
	pcfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	conf := &pcfg.ConnConfig.Config
	if conf.RuntimeParams == nil {
		conf.RuntimeParams = map[string]string{}
	}
	ms := func(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }
	// Session defaults, behind the per-transaction settings: whatever
	// runs on these connections is read-only and bounded.
	conf.RuntimeParams["application_name"] = "clinsight"
	conf.RuntimeParams["default_transaction_read_only"] = "on"
	conf.RuntimeParams["statement_timeout"] = ms(limits.Timeout)
	conf.RuntimeParams["lock_timeout"] = ms(limits.Timeout)
	conf.RuntimeParams["idle_in_transaction_session_timeout"] = ms(limits.Timeout + 10*cancelGrace)
	// A cancelled context sends a cancel request to the server (pgx's
	// default only closes the socket, leaving the query running there).
	conf.BuildContextWatcherHandler = func(pc *pgconn.PgConn) ctxwatch.Handler {
		return &pgconn.CancelRequestContextWatcherHandler{Conn: pc, DeadlineDelay: 2 * cancelGrace}
	}
	// No message from the server may be larger than a whole result (with
	// room for the catalog's sample arrays under small result caps).
	conf.MaxProtocolMessageBodyLen = int(min(max(limits.MaxResultBytes, 16<<20), 1<<30))
	pcfg.MaxConns = int32(max(opts.MaxConns, 0))
	if pcfg.MaxConns == 0 {
		pcfg.MaxConns = 4
	}
	pcfg.MinConns = 0
	pcfg.MaxConnIdleTime = 5 * time.Minute
	logger := opts.Logger
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	e := &Engine{src: src, opts: limits, logger: logger, describe: describeConfig(cc)}
	if e.pool, err = pgxpool.NewWithConfig(ctx, pcfg); err != nil {
		return nil, e.connectError(err)
	}
	if err := e.resolveSchemas(ctx); err != nil {
		e.pool.Close()
		return nil, err
	}
	return e, nil
}

// connectError explains a failure to reach or log in to the server,
// without the password.
func (e *Engine) connectError(err error) error {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		switch pe.Code {
		case "28P01", "28000":
			return fmt.Errorf("the PostgreSQL server at %s refused the login (%s); check the password in %s",
				e.describe, pe.Message, e.src.passwordHint())
		case "3D000":
			return fmt.Errorf("the PostgreSQL server at %s has no such database (%s)", e.describe, pe.Message)
		}
	}
	return fmt.Errorf("connect to the PostgreSQL server at %s: %w", e.describe, err)
}

// resolveSchemas reads the server version and settles which schemas are
// read: the source's, each of which must exist, else the role's
// search_path.
func (e *Engine) resolveSchemas(ctx context.Context) error {
	// The role's own search_path applies here: the schemas are not known yet.
	return e.withTx(ctx, false, func(conn *pgx.Conn) error {
		if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&e.version); err != nil {
			return err
		}
		if len(e.src.Schemas) == 0 {
			return conn.QueryRow(ctx, "SELECT current_schemas(false)").Scan(&e.schemas)
		}
		var have []string
		if err := conn.QueryRow(ctx, "SELECT coalesce(array_agg(nspname::text ORDER BY nspname), '{}') FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema'").Scan(&have); err != nil {
			return err
		}
		for _, s := range e.src.Schemas {
			if !contains(have, s) {
				return fmt.Errorf("the database has no schema %q (schemas there: %s)", s, strings.Join(have, ", "))
			}
		}
		e.schemas = append([]string(nil), e.src.Schemas...)
		return nil
	})
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Close closes the connections. Calls in progress finish first.
func (e *Engine) Close() error {
	e.pool.Close()
	return nil
}

// Options returns the engine's limits.
func (e *Engine) Options() datasets.RunnerOptions { return e.opts }

// WithLimits returns the engine running statements under the row cap and
// timeout of limits (zero fields keep the engine's), sharing its
// connections: one pool per source, whatever each call's limits. The
// byte caps stay the engine's (the connections are configured for them).
// Close only the engine it came from.
func (e *Engine) WithLimits(limits datasets.RunnerOptions) *Engine {
	cp := *e
	if limits.Timeout > 0 {
		cp.opts.Timeout = limits.Timeout
	}
	if limits.MaxRows > 0 {
		cp.opts.MaxRows = limits.MaxRows
	}
	return &cp
}

// Schemas returns the schemas the engine reads, in search_path order.
func (e *Engine) Schemas() []string { return append([]string(nil), e.schemas...) }

// ServerVersion returns the server's version (server_version).
func (e *Engine) ServerVersion() string { return e.version }

// Dialect returns "postgres".
func (e *Engine) Dialect() datasets.Dialect { return datasets.DialectPostgres }

// Describe names the server, database, user and schemas for provenance:
// "PostgreSQL 15.14 at db.example.org:5432, database mimiciv, user reader,
// schemas mimiciv_hosp, mimiciv_icu". It never includes a password.
func (e *Engine) Describe() string {
	return fmt.Sprintf("PostgreSQL %s at %s, schemas %s", strings.Fields(e.version + " ?")[0], e.describe, strings.Join(e.schemas, ", "))
}

// searchPathSQL is the search_path value for the engine's schemas.
func (e *Engine) searchPathSQL() string {
	if len(e.schemas) == 0 {
		return "''"
	}
	q := make([]string, len(e.schemas))
	for i, s := range e.schemas {
		q[i] = pgx.Identifier{s}.Sanitize()
	}
	return strings.Join(q, ", ")
}

// withTx runs f on a pooled connection inside a READ ONLY transaction with
// the engine's timeouts and search path, then rolls it back. The
// connection goes back to the pool only when the rollback succeeded; it is
// closed otherwise. setPath sets the engine's search path (its schemas)
// for the transaction.
func (e *Engine) withTx(ctx context.Context, setPath bool, f func(*pgx.Conn) error) (err error) {
	pc, err := e.beginTx(ctx, setPath)
	if err != nil {
		return err
	}
	ferr := f(pc.Conn())
	e.endTx(ctx, pc, ferr == nil || !pc.Conn().PgConn().IsClosed())
	return ferr
}

// beginTx acquires a pooled connection and starts the READ ONLY
// transaction of withTx on it; end it with endTx.
func (e *Engine) beginTx(ctx context.Context, setPath bool) (*pgxpool.Conn, error) {
	pc, err := e.acquire(ctx)
	if err != nil {
		return nil, err
	}
	ms := e.opts.Timeout.Milliseconds()
	path := ""
	if setPath {
		path = "SET LOCAL search_path = " + e.searchPathSQL() + "; "
	}
	// One round trip of fixed text (the schema names are quoted): the
	// transaction is read-only before any user text reaches the server,
	// and the trailing SELECT takes the snapshot after which its mode can
	// no longer be changed. Dates, intervals and floats are written the
	// same way whatever the role's defaults (ISO dates as SQLite sources
	// hold them, shortest exact floats).
	setup := fmt.Sprintf("BEGIN ISOLATION LEVEL READ COMMITTED READ ONLY; "+
		"SET LOCAL statement_timeout = %d; SET LOCAL lock_timeout = %d; "+
		"SET LOCAL idle_in_transaction_session_timeout = %d; "+
		"SET LOCAL standard_conforming_strings = on; SET LOCAL DateStyle = 'ISO, YMD'; "+
		"SET LOCAL IntervalStyle = postgres; SET LOCAL extra_float_digits = 1; %sSELECT 1",
		ms, ms, ms+(10*cancelGrace).Milliseconds(), path)
	if _, err := pc.Conn().PgConn().Exec(ctx, setup).ReadAll(); err != nil {
		e.endTx(ctx, pc, false)
		return nil, fmt.Errorf("start a read-only transaction: %w", err)
	}
	return pc, nil
}

// endTx rolls back the transaction of beginTx and puts the connection back
// in the pool, or closes it when it is not healthy (its state in doubt) or
// the rollback fails. Session advisory locks, which a rollback keeps, are
// released in the same round trip: a function defined on the server can
// take one out of the gate's sight, and no privilege is needed for it
// (TestSessionAdvisoryLocksEndWithTheQuery).
func (e *Engine) endTx(ctx context.Context, pc *pgxpool.Conn, healthy bool) {
	if healthy && !pc.Conn().PgConn().IsClosed() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		_, rerr := pc.Conn().PgConn().Exec(rctx, "ROLLBACK; SELECT pg_advisory_unlock_all()").ReadAll()
		cancel()
		if rerr == nil {
			pc.Release()
			return
		}
		e.logger.Debug("postgres: rollback failed, connection closed", "server", e.describe, "err", rerr)
	}
	conn := pc.Hijack()
	cctx, cancel := context.WithTimeout(context.Background(), time.Second)
	conn.Close(cctx)
	cancel()
}

// Check runs every check of Query without executing the statement: the
// gate, then, inside the read-only transaction, the server parses and
// analyses it (PREPARE: syntax, unknown tables and columns, types) and
// plans a query (EXPLAIN: constants folded, such as a division by zero).
// An error is PostgreSQL's own, its position marked in the statement.
func (e *Engine) Check(ctx context.Context, query string) error {
	cs, err := gate(query)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout+cancelGrace)
	defer cancel()
	err = e.withTx(ctx, true, func(conn *pgx.Conn) error {
		if _, err := conn.PgConn().Prepare(ctx, "", cs.text, nil); err != nil || !cs.query {
			return err
		}
		return explainStatement(ctx, conn, cs.text)
	})
	return e.translate(ctx, cs.text, err)
}

// Query checks and runs one reading statement within the engine's limits.
// Errors are *datasets.RefusedError (refused before running, or a write
// the server refused), *datasets.QueryError (PostgreSQL's message, with
// the position it names marked), *datasets.TimeoutError, or a wrapped
// context or connection error.
func (e *Engine) Query(ctx context.Context, query string) (*datasets.Result, error) {
	start := time.Now()
	cs, err := gate(query)
	if err != nil {
		return nil, err
	}
	res, err := e.run(ctx, cs)
	if err != nil {
		return nil, err
	}
	res.Elapsed = time.Since(start)
	return res, nil
}

// run runs a statement that passed the gate.
func (e *Engine) run(ctx context.Context, cs checkedStatement) (*datasets.Result, error) {
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout+cancelGrace)
	defer cancel()
	var res *datasets.Result
	err := e.withTx(ctx, true, func(conn *pgx.Conn) error {
		desc, err := conn.PgConn().Prepare(ctx, "", cs.text, nil)
		if err != nil {
			return err
		}
		if res, err = e.read(ctx, conn, cs, desc); err != nil {
			return err
		}
		return setOrigins(ctx, conn, desc.Fields, res.Columns)
	})
	if err != nil {
		return nil, e.translate(ctx, cs.text, err)
	}
	return res, nil
}

// colKind says how a result column is sent and converted.
type colKind int

const (
	kindText    colKind = iota // any type, sent as its text, cut on the server
	kindInt                    // int2, int4, int8, oid: int64
	kindFloat                  // float4, float8: float64
	kindNumeric                // numeric: float64 when exact enough, else text
	kindBytea                  // bytea: datasets.Blob, cut on the server
)

func kindOf(oid uint32) colKind {
	switch oid {
	case pgtype.Int2OID, pgtype.Int4OID, pgtype.Int8OID, pgtype.OIDOID:
		return kindInt
	case pgtype.Float4OID, pgtype.Float8OID:
		return kindFloat
	case pgtype.NumericOID:
		return kindNumeric
	case pgtype.ByteaOID:
		return kindBytea
	}
	return kindText
}

// wrapQuery builds the statement that reads a query's result within the
// limits on the server: each text-like value is cut to the cell cap there
// (its full length sent beside it), so a long value never crosses the
// network whole, and the rows stop one past the row cap.
func (e *Engine) wrapQuery(text string, fields []pgconn.FieldDescription) string {
	var b strings.Builder
	b.WriteString("SELECT ")
	m := e.opts.MaxCellBytes
	for i, f := range fields {
		if i > 0 {
			b.WriteString(", ")
		}
		c := fmt.Sprintf("q.c%d", i+1)
		switch kindOf(f.DataTypeOID) {
		case kindInt, kindFloat, kindNumeric:
			b.WriteString(c)
		case kindBytea:
			fmt.Fprintf(&b, "substring(%s from 1 for %d), octet_length(%s)", c, m, c)
		default:
			fmt.Fprintf(&b, "left(%s::text, %d), octet_length(%s::text)", c, m, c)
		}
	}
	b.WriteString(" FROM (\n")
	b.WriteString(text)
	b.WriteString("\n) AS q")
	if len(fields) > 0 {
		b.WriteString("(")
		for i := range fields {
			if i > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "c%d", i+1)
		}
		b.WriteString(")")
	}
	fmt.Fprintf(&b, " LIMIT %d", e.opts.MaxRows+1)
	return b.String()
}

// Fixed memory costs of a result, as datasets counts them for SQLite.
const (
	valueOverhead  = 16
	headerOverhead = 24
	rowOverhead    = 24
)

// read runs the prepared statement (through wrapQuery when it is a query)
// and reads its rows within the limits.
func (e *Engine) read(ctx context.Context, conn *pgx.Conn, cs checkedStatement, desc *pgconn.StatementDescription) (*datasets.Result, error) {
	pg := conn.PgConn()
	fields := desc.Fields
	res := &datasets.Result{Columns: make([]datasets.Column, len(fields)), Limits: e.opts}
	kinds := make([]colKind, len(fields))
	for i, f := range fields {
		res.Columns[i] = datasets.Column{Name: f.Name}
		if t, ok := conn.TypeMap().TypeForOID(f.DataTypeOID); ok {
			res.Columns[i].DeclType = t.Name
		}
		kinds[i] = kindOf(f.DataTypeOID)
	}
	var rr *pgconn.ResultReader
	wrapped := cs.query
	if wrapped {
		rr = pg.ExecParams(ctx, e.wrapQuery(cs.text, fields), nil, nil, nil, nil)
	} else {
		rr = pg.ExecPrepared(ctx, "", nil, nil, nil)
	}
	var total int64
	stopEarly := false
	for rr.NextRow() {
		if len(res.Rows) == e.opts.MaxRows {
			res.Truncated, res.TruncatedBy = true, datasets.CapRows
			stopEarly = !wrapped // the wrapped query ends one row later anyway
			break
		}
		row := make([]any, len(fields))
		cut := e.decodeRow(kinds, wrapped, rr.Values(), row)
		res.CutCells += cut
		size := int64(rowOverhead)
		for _, v := range row {
			size += cellSize(v)
		}
		if total+size > e.opts.MaxResultBytes {
			res.Truncated, res.TruncatedBy = true, datasets.CapBytes
			stopEarly = true
			break
		}
		total += size
		res.Rows = append(res.Rows, row)
	}
	if stopEarly {
		// The rest of the result is not wanted: stop the server now and
		// drop the connection rather than read on.
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		_ = pg.CancelRequest(cctx)
		cancel()
		_ = pg.Close(context.Background())
		return res, nil
	}
	if _, err := rr.Close(); err != nil {
		var ble *pgproto3.ExceededMaxBodyLenErr
		if errors.As(err, &ble) {
			res.Truncated, res.TruncatedBy = true, datasets.CapBytes
			return res, nil
		}
		return nil, err
	}
	return res, nil
}

// lengthValue parses the octet_length column beside a cut value; -1 when
// NULL.
func lengthValue(raw []byte) int {
	if raw == nil {
		return -1
	}
	n, err := strconv.Atoi(string(raw))
	if err != nil {
		return -1
	}
	return n
}

// value converts a value sent as text.
func (e *Engine) value(k colKind, raw []byte) (any, bool) {
	if raw == nil {
		return nil, false
	}
	s := string(raw)
	switch k {
	case kindInt:
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			return n, false
		}
	case kindFloat:
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			return f, false
		}
	case kindNumeric:
		if significantDigits(s) <= 15 {
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				return f, false
			}
		}
	}
	return e.textValue(raw, len(raw))
}

// significantDigits counts the digits of a decimal number's text without
// leading zeros and without trailing zeros of its fraction ("61.7500" has
// 3): numeric keeps the scale it computed with.
func significantDigits(s string) int {
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		s = s[:i]
	}
	if strings.IndexByte(s, '.') >= 0 {
		s = strings.TrimRight(s, "0")
	}
	n, leading := 0, true
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			continue
		}
		if leading && c == '0' {
			continue
		}
		leading = false
		n++
	}
	return n
}

// textValue keeps at most the cell cap of a text value, cut at a character
// boundary and marked with datasets.CutMarker. full is the value's whole
// length in bytes (raw may be a prefix of it).
func (e *Engine) textValue(raw []byte, full int) (any, bool) {
	if raw == nil {
		return nil, false
	}
	if full < len(raw) {
		full = len(raw)
	}
	m := e.opts.MaxCellBytes
	if full <= m {
		return string(raw), false
	}
	k := min(len(raw), m)
	for k > 0 && k < len(raw) && !utf8.RuneStart(raw[k]) {
		k-- // drop a character whose bytes were cut
	}
	return string(raw[:k]) + datasets.CutMarker(k, full), true
}

// blobValue decodes a bytea sent as hexadecimal text (\x...), keeping at
// most the cell cap. full is the value's whole length, -1 when unknown.
func (e *Engine) blobValue(raw []byte, full int) (any, bool) {
	if raw == nil {
		return nil, false
	}
	s := strings.TrimPrefix(string(raw), `\x`)
	b := make([]byte, 0, min(len(s)/2, e.opts.MaxCellBytes))
	for i := 0; i+1 < len(s) && len(b) < e.opts.MaxCellBytes; i += 2 {
		hi, lo := unhex(s[i]), unhex(s[i+1])
		b = append(b, hi<<4|lo)
	}
	if full < 0 {
		full = len(s) / 2
	}
	return datasets.Blob(b), full > len(b)
}

func unhex(c byte) byte {
	switch {
	case c >= '0' && c <= '9':
		return c - '0'
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10
	}
	return 0
}

// cellSize is the memory a value takes, counted as for SQLite.
func cellSize(v any) int64 {
	switch v := v.(type) {
	case nil:
		return valueOverhead
	case int64, float64:
		return valueOverhead + 8
	case string:
		return valueOverhead + headerOverhead + int64(len(v))
	case datasets.Blob:
		return valueOverhead + headerOverhead + int64(len(v))
	}
	return valueOverhead
}

// translate turns server and context errors into the runner's error
// types. text is the statement the server parsed, for error positions.
func (e *Engine) translate(ctx context.Context, text string, err error) error {
	if err == nil {
		return nil
	}
	var refused *datasets.RefusedError
	if errors.As(err, &refused) {
		return refused
	}
	var busy *busyError
	if errors.As(err, &busy) {
		return busy // the statement never ran: not a time-out of its own
	}
	var pe *pgconn.PgError
	isPg := errors.As(err, &pe)
	if isPg && pe.Code == "57014" && strings.Contains(pe.Message, "statement timeout") {
		return &datasets.TimeoutError{Limit: e.opts.Timeout}
	}
	if ctxErr := ctx.Err(); ctxErr != nil && (!isPg || pe.Code == "57014") {
		if errors.Is(ctxErr, context.DeadlineExceeded) {
			return &datasets.TimeoutError{Limit: e.opts.Timeout}
		}
		return fmt.Errorf("query cancelled: %w", ctxErr)
	}
	if !isPg {
		var ble *pgproto3.ExceededMaxBodyLenErr
		if errors.As(err, &ble) {
			return fmt.Errorf("a message from the server was larger than the result size limit (%s)", datasets.FormatBytes(e.opts.MaxResultBytes))
		}
		return fmt.Errorf("query the PostgreSQL server at %s: %w", e.describe, err)
	}
	switch pe.Code {
	case "25006": // read_only_sql_transaction
		return refuse("", "the statement would write to the database; only reading queries can be run (the server said: %s)", pe.Message)
	case "55P03": // lock_not_available
		return &datasets.QueryError{Message: "a table the query reads is locked by another session (" + pe.Message + "); try again later"}
	}
	return &datasets.QueryError{Message: formatPgError(pe, text), State: pe.Code}
}

// formatPgError renders a server error as psql does: the message, the
// line it points at with a caret under the position, and the detail and
// hint. This is what a person or a model needs to correct the statement.
func formatPgError(pe *pgconn.PgError, text string) string {
	var b strings.Builder
	b.WriteString(pe.Message)
	if pe.Position > 0 && text != "" {
		runes := []rune(text)
		pos := int(pe.Position) - 1
		if pos > len(runes) {
			pos = len(runes)
		}
		lineStart, lineNo := 0, 1
		for i := 0; i < pos; i++ {
			if runes[i] == '\n' {
				lineStart, lineNo = i+1, lineNo+1
			}
		}
		lineEnd := lineStart
		for lineEnd < len(runes) && runes[lineEnd] != '\n' {
			lineEnd++
		}
		line := strings.ReplaceAll(string(runes[lineStart:lineEnd]), "\t", " ")
		prefix := fmt.Sprintf("LINE %d: ", lineNo)
		fmt.Fprintf(&b, "\n%s%s\n%s^", prefix, line, strings.Repeat(" ", len(prefix)+pos-lineStart))
	}
	if pe.Detail != "" {
		b.WriteString("\nDETAIL: " + pe.Detail)
	}
	if pe.Hint != "" {
		b.WriteString("\nHINT: " + pe.Hint)
	}
	return b.String()
}

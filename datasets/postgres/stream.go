package postgres

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/clinsight/clinsight/datasets"
)

// Streamed results (issue 21 item 2). A query's rows are read through a
// server-side cursor (DECLARE … NO SCROLL CURSOR, then FETCH FORWARD
// streamBatch at a time) inside the engine's read-only transaction, so:
//
//   - memory is bounded without any buffering here: pgconn reads each
//     row's message from the socket when NextRow is called (its read
//     buffer holds one message), so a stream holds one row;
//   - the time limit counts the time spent waiting for the server's rows,
//     as SQLite's stream counts SQLite's, not the time the caller spends
//     between rows writing a workbook: one statement sending a whole large
//     result would be cut by statement_timeout while it waited for a slow
//     reader. The transaction's statement_timeout still bounds each FETCH
//     on the server, and a FETCH's own deadline (the limit and the cancel
//     grace) a network that stopped answering.
//
// A statement that is not a query (EXPLAIN, SHOW: no cursor can hold it)
// is read from its own portal as it is sent; such results are small.

// streamBatch is the rows one FETCH asks for: enough that the round trips
// do not dominate (200,000 rows take 200), small enough that the time a
// batch waits for its reader is short.
const streamBatch = 1000

// cursorName is the stream's cursor; one stream per transaction.
const cursorName = "clinsight_stream"

var _ datasets.Streamer = (*Engine)(nil)

// Stream checks one reading statement as Query does (the gate, then the
// server's parse and the read-only transaction) and returns a cursor over
// its rows, with the engine's row cap, cell caps and time limit (counted
// over the FETCHes, see above) and the same errors as Query. The
// transaction is rolled back and the connection released on Close, at the
// end of the rows, on an error and when ctx is cancelled (the server is
// sent a cancel request); a connection whose state is in doubt is closed.
func (e *Engine) Stream(ctx context.Context, query string) (datasets.RowStream, error) {
	start := time.Now()
	cs, err := gate(query)
	if err != nil {
		return nil, err
	}
	s := &pgRows{e: e, ctx: ctx, start: start, text: cs.text}
	s.stats.Limits = e.opts
	pctx, cancel := context.WithTimeout(ctx, e.opts.Timeout+cancelGrace)
	defer cancel()
	if s.pc, err = e.beginTx(pctx, true); err != nil {
		return nil, e.translate(pctx, cs.text, err)
	}
	if err := s.open(pctx, cs); err != nil {
		s.healthy = !s.pc.Conn().PgConn().IsClosed()
		s.Close()
		return nil, e.translate(pctx, cs.text, err)
	}
	s.healthy = true
	s.spent = time.Since(start)
	return s, nil
}

// open prepares the statement (its columns, the server's errors with
// positions in the statement's own text) and declares its cursor.
func (s *pgRows) open(ctx context.Context, cs checkedStatement) error {
	conn := s.pc.Conn()
	desc, err := conn.PgConn().Prepare(ctx, "", cs.text, nil)
	if err != nil {
		return err
	}
	fields := desc.Fields
	s.cols = make([]datasets.Column, len(fields))
	s.kinds = make([]colKind, len(fields))
	for i, f := range fields {
		s.cols[i] = datasets.Column{Name: f.Name}
		if t, ok := conn.TypeMap().TypeForOID(f.DataTypeOID); ok {
			s.cols[i].DeclType = t.Name
		}
		s.kinds[i] = kindOf(f.DataTypeOID)
	}
	if err := setOrigins(ctx, conn, fields, s.cols); err != nil {
		return err
	}
	s.row = make([]any, len(fields))
	s.wrapped = cs.query
	if !cs.query {
		s.rr = conn.PgConn().ExecPrepared(s.ctx, "", nil, nil, nil)
		return nil
	}
	// The declared query is the one Query runs (cells cut on the server,
	// rows stopped one past the cap), from fixed text around the checked
	// statement, over the extended protocol (one statement only).
	decl := "DECLARE " + cursorName + " NO SCROLL CURSOR FOR " + s.e.wrapQuery(cs.text, fields)
	_, err = conn.PgConn().ExecParams(ctx, decl, nil, nil, nil, nil).Close()
	return err
}

// pgRows is the Engine's RowStream.
type pgRows struct {
	e       *Engine
	ctx     context.Context
	start   time.Time
	text    string
	pc      *pgxpool.Conn
	cols    []datasets.Column
	kinds   []colKind
	wrapped bool
	row     []any
	stats   datasets.StreamStats
	err     error
	done    bool
	healthy bool

	// rr is the result being read: the current FETCH's, or the portal's of
	// a statement that is not a query; batchRows counts the rows it gave.
	rr        *pgconn.ResultReader
	batchRows int
	fctx      context.Context
	cancel    context.CancelFunc
	// spent is the time spent waiting for the server so far (opening the
	// statement, then inside NextRow): the time limit counts it, not the
	// reader's time between rows.
	spent     time.Duration
	closeOnce sync.Once
}

func (s *pgRows) Columns() []datasets.Column  { return s.cols }
func (s *pgRows) Row() []any                  { return s.row }
func (s *pgRows) Err() error                  { return s.err }
func (s *pgRows) Stats() datasets.StreamStats { return s.stats }

func (s *pgRows) Next() bool {
	if s.done {
		return false
	}
	if err := s.ctx.Err(); err != nil {
		s.fail(err)
		s.finish()
		return false
	}
	if s.spent >= s.e.opts.Timeout {
		s.err = &datasets.TimeoutError{Limit: s.e.opts.Timeout}
		s.finish()
		return false
	}
	vals, ok := s.nextRaw()
	if !ok {
		s.finish()
		return false
	}
	if s.stats.Rows >= int64(s.e.opts.MaxRows) {
		// A row past the cap: rows were left out.
		s.stats.Truncated, s.stats.TruncatedBy = true, datasets.CapRows
		s.finish()
		return false
	}
	s.stats.CutCells += s.e.decodeRow(s.kinds, s.wrapped, vals, s.row)
	s.stats.Rows++
	s.stats.Elapsed = time.Since(s.start)
	return true
}

// nextRaw reads the next row's values, fetching the next batch when the
// current one is used up; false at the end or on an error (s.err).
func (s *pgRows) nextRaw() ([][]byte, bool) {
	for {
		if s.rr == nil {
			if !s.fetch() {
				return nil, false
			}
		}
		waited := time.Now()
		more := s.rr.NextRow()
		s.spent += time.Since(waited)
		if more {
			s.batchRows++
			return s.rr.Values(), true
		}
		_, err := s.rr.Close()
		s.rr = nil
		if err != nil {
			s.fail(err)
			s.endFetch()
			return nil, false
		}
		s.endFetch()
		if !s.wrapped || s.batchRows < streamBatch {
			return nil, false // the portal's or the cursor's last rows
		}
	}
}

// fetch sends the next FETCH if time is left.
func (s *pgRows) fetch() bool {
	if !s.wrapped {
		return false // the portal was read to its end
	}
	if err := s.ctx.Err(); err != nil {
		s.fail(err)
		return false
	}
	left := s.e.opts.Timeout - s.spent
	if left <= 0 {
		s.err = &datasets.TimeoutError{Limit: s.e.opts.Timeout}
		s.healthy = true
		return false
	}
	// The deadline guards against a network that stopped answering: the
	// reader's time between the batch's rows counts too, so it is the
	// whole limit, not the time left.
	s.fctx, s.cancel = context.WithTimeout(s.ctx, s.e.opts.Timeout+cancelGrace)
	s.batchRows = 0
	s.rr = s.pc.Conn().PgConn().ExecParams(s.fctx, fmt.Sprintf("FETCH FORWARD %d FROM %s", streamBatch, cursorName), nil, nil, nil, nil)
	return true
}

// endFetch releases the FETCH's context.
func (s *pgRows) endFetch() {
	if s.cancel != nil {
		s.cancel()
		s.cancel = nil
	}
}

// fail records the error that ended the rows, translated as Query's are.
func (s *pgRows) fail(err error) {
	var pe *pgconn.PgError
	s.healthy = errors.As(err, &pe) && !s.pc.Conn().PgConn().IsClosed()
	if s.ctx.Err() == nil && s.fctx != nil && errors.Is(s.fctx.Err(), context.DeadlineExceeded) {
		// The FETCH's own deadline: the time left ran out.
		s.err = &datasets.TimeoutError{Limit: s.e.opts.Timeout}
		return
	}
	s.err = s.e.translate(s.ctx, s.text, err)
}

// finish ends the rows and the transaction.
func (s *pgRows) finish() {
	s.stats.Elapsed = time.Since(s.start)
	s.Close()
}

// Close ends the transaction (rolled back; its cursor goes with it) and
// releases the connection, closing it when a FETCH is cut short or its
// state is in doubt.
func (s *pgRows) Close() error {
	s.done = true
	s.closeOnce.Do(func() {
		healthy := s.healthy
		if s.rr != nil {
			if s.wrapped && s.ctx.Err() == nil {
				// The rest of the current FETCH (at most streamBatch
				// rows): read and dropped, the connection kept.
				_, err := s.rr.Close()
				healthy = err == nil
			} else {
				// A portal's rows left unread, or cancelled: stop the
				// server rather than read on, and drop the connection.
				pg := s.pc.Conn().PgConn()
				cctx, cancel := context.WithTimeout(context.WithoutCancel(s.ctx), 2*time.Second)
				_ = pg.CancelRequest(cctx)
				cancel()
				_ = pg.Close(context.Background())
				healthy = false
			}
			s.rr = nil
			s.endFetch()
		}
		s.e.endTx(s.ctx, s.pc, healthy)
		for i := range s.row {
			s.row[i] = nil
		}
	})
	return nil
}

// decodeRow converts one row's values as sent (through wrapQuery when
// wrapped: each cut text or bytea followed by its full length) into row,
// returning the number of values cut to the cell cap. Query and Stream
// share it, so both give the same values.
func (e *Engine) decodeRow(kinds []colKind, wrapped bool, vals [][]byte, row []any) int {
	cuts := 0
	col := 0
	for i, k := range kinds {
		var v any
		var cut bool
		raw := vals[col]
		col++
		switch {
		case wrapped && k == kindBytea:
			full := lengthValue(vals[col])
			col++
			v, cut = e.blobValue(raw, full)
		case wrapped && k == kindText:
			full := lengthValue(vals[col])
			col++
			v, cut = e.textValue(raw, full)
		case k == kindBytea:
			v, cut = e.blobValue(raw, -1)
		default:
			v, cut = e.value(k, raw)
		}
		if cut {
			cuts++
		}
		row[i] = v
	}
	return cuts
}

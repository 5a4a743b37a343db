package datasets

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// RowStream is a query's result read one row at a time from the
// database's cursor, so that an export or a printer never holds the whole
// result: the rows are read under the same limits as Query's, except the
// result byte cap, which bounds a result held in memory (a stream holds one
// row). Use it as
//
//	for s.Next() { row := s.Row(); … }
//	if err := s.Err(); err != nil { … }
//	s.Close()
//
// A RowStream is used from one goroutine; Close may be called at any time
// and more than once.
type RowStream interface {
	// Columns are the result's columns, in order.
	Columns() []Column
	// Next reads the next row; false at the end of the result, at the row
	// cap, on an error (Err) or after Close.
	Next() bool
	// Row is the row Next read: values as in Result.Rows, each cut to the
	// cell cap. The slice is reused by the next call to Next.
	Row() []any
	// Err is the error that ended the rows, nil at their end or cap:
	// *QueryError, *TimeoutError or a wrapped context error.
	Err() error
	// Stats says how many rows were read and what the limits left out.
	Stats() StreamStats
	// Close releases the cursor and its connection.
	Close() error
}

// Streamer is an Engine that can read a result as a RowStream.
type Streamer interface {
	// Stream checks one reading statement as Query does and starts reading
	// its rows.
	Stream(ctx context.Context, query string) (RowStream, error)
}

// StreamStats describes the rows a RowStream has read so far.
type StreamStats struct {
	// Rows is the number of rows read.
	Rows int64
	// Truncated is set when the result had more rows than the row cap;
	// TruncatedBy is then CapRows.
	Truncated   bool
	TruncatedBy Cap
	// CutCells counts the values cut to the cell cap.
	CutCells int
	// Limits are the limits the rows were read under.
	Limits RunnerOptions
	// Elapsed is the time from the start of checks to the last row read.
	Elapsed time.Duration
}

// Notice says what of the result was left out and why, or "" (see
// Result.Notice).
func (s StreamStats) Notice() string {
	res := Result{Truncated: s.Truncated, TruncatedBy: s.TruncatedBy, CutCells: s.CutCells, Limits: s.Limits}
	n := res.Notice()
	if s.Truncated {
		// Result.Notice counts its rows; a stream kept none of them.
		n = strings.Replace(n, "the first 0 rows", "the first "+groupDigits(s.Rows)+" rows", 1)
	}
	return n
}

var _ Streamer = (*Runner)(nil)

// Stream checks one reading statement as Query does (the gate, the
// authorizer, SQLite's read-only verdict, on a connection of its own) and
// returns a cursor over its rows. The time limit counts the time SQLite
// spends producing rows, not the time the caller spends between rows (a
// slow disk under an export does not stop the query); the row cap and the
// cell cap apply as in Query. Cancelling ctx interrupts the statement.
func (r *Runner) Stream(ctx context.Context, query string) (RowStream, error) {
	start := time.Now()
	cs, err := gate(query)
	if err != nil {
		return nil, err
	}
	c, err := r.open(ctx)
	if err != nil {
		return nil, err
	}
	s := &sqliteRows{r: r, c: c, ctx: ctx, start: start}
	s.stopCtx = context.AfterFunc(ctx, c.interrupt)
	s.watch = time.AfterFunc(time.Duration(math.MaxInt64), s.checkTime)
	s.watch.Reset(r.opts.Timeout)       // after s.watch is set: checkTime reads it
	s.stepStart.Store(start.UnixNano()) // compiling counts as running
	stmt, err := r.compile(ctx, c, cs)
	s.stepDone()
	if err != nil {
		err = s.translate(err)
		s.Close()
		return nil, err
	}
	s.stmt = stmt
	n := int(sqlite3.Xsqlite3_column_count(c.tls, stmt))
	s.cols = make([]Column, n)
	for i := range n {
		s.cols[i] = c.column(stmt, i)
	}
	s.row = make([]any, n)
	s.stats.Limits = r.opts
	return s, nil
}

// sqliteRows is the Runner's RowStream.
type sqliteRows struct {
	r     *Runner
	c     *sqliteConn
	ctx   context.Context
	stmt  uintptr
	start time.Time
	cols  []Column
	row   []any
	stats StreamStats
	err   error
	done  bool

	stopCtx func() bool
	// The time limit: spent is the time (ns) SQLite has run so far,
	// stepStart the start (Unix ns) of the step under way, 0 between
	// steps; watch fires when the limit could have been reached and
	// interrupts SQLite if it has.
	spent     atomic.Int64
	stepStart atomic.Int64
	timedOut  atomic.Bool
	closed    atomic.Bool
	watch     *time.Timer
	closeOnce sync.Once
}

func (s *sqliteRows) Columns() []Column  { return s.cols }
func (s *sqliteRows) Row() []any         { return s.row }
func (s *sqliteRows) Err() error         { return s.err }
func (s *sqliteRows) Stats() StreamStats { return s.stats }

// stepDone adds the step that just ended to the time spent.
func (s *sqliteRows) stepDone() {
	if t := s.stepStart.Swap(0); t != 0 {
		s.spent.Add(time.Now().UnixNano() - t)
	}
}

// checkTime runs when the time limit may have been reached: it interrupts
// SQLite if its run time reached the limit, and otherwise looks again when
// the rest of the limit could have passed.
func (s *sqliteRows) checkTime() {
	if s.closed.Load() {
		return
	}
	spent := s.spent.Load()
	stepping := false
	if t := s.stepStart.Load(); t != 0 {
		spent += time.Now().UnixNano() - t
		stepping = true
	}
	left := s.r.opts.Timeout - time.Duration(spent)
	switch {
	case left > 0:
		s.watch.Reset(left)
	case stepping:
		s.timedOut.Store(true)
		s.c.interrupt()
	}
	// Between steps with the limit used up: the next step refuses to run.
}

func (s *sqliteRows) Next() bool {
	if s.done {
		return false
	}
	if s.stats.Rows >= int64(s.r.opts.MaxRows) {
		// One more step tells whether rows were left out.
		if s.step() {
			s.stats.Truncated, s.stats.TruncatedBy = true, CapRows
		}
		s.finish()
		return false
	}
	if !s.step() {
		s.finish()
		return false
	}
	for i := range s.row {
		var cut bool
		s.row[i], cut = s.r.cell(s.c, s.stmt, i)
		if cut {
			s.stats.CutCells++
		}
	}
	s.stats.Rows++
	s.stats.Elapsed = time.Since(s.start)
	return true
}

// step advances the statement; false at its end or on an error (s.err).
func (s *sqliteRows) step() bool {
	if err := s.ctx.Err(); err != nil {
		s.err = s.translate(err)
		return false
	}
	if time.Duration(s.spent.Load()) >= s.r.opts.Timeout {
		s.err = &TimeoutError{Limit: s.r.opts.Timeout}
		return false
	}
	s.stepStart.Store(time.Now().UnixNano())
	rc := sqlite3.Xsqlite3_step(s.c.tls, s.stmt)
	s.stepDone()
	switch rc {
	case sqlite3.SQLITE_ROW:
		return true
	case sqlite3.SQLITE_DONE:
		return false
	}
	s.err = s.translate(s.c.lastError(rc))
	return false
}

// translate is Runner.translate with the stream's own time limit.
func (s *sqliteRows) translate(err error) error {
	if s.timedOut.Load() && s.ctx.Err() == nil {
		return &TimeoutError{Limit: s.r.opts.Timeout}
	}
	return s.r.translate(s.ctx, s.c, err)
}

// finish ends the rows and releases the connection.
func (s *sqliteRows) finish() {
	s.stats.Elapsed = time.Since(s.start)
	s.Close()
}

func (s *sqliteRows) Close() error {
	s.done = true
	s.closeOnce.Do(func() {
		s.closed.Store(true)
		s.watch.Stop()
		s.stopCtx()
		if s.stmt != 0 {
			s.c.finalize(s.stmt)
		}
		s.c.close()
		for i := range s.row {
			s.row[i] = nil
		}
	})
	return nil
}

// String names the stream's state for logs.
func (s StreamStats) String() string {
	return fmt.Sprintf("%d rows in %s", s.Rows, s.Elapsed)
}

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
// As in Query, a step SQLite has not ended about a second after the time
// limit or Cancel is left to finish on its own (see Runner): Next returns
// false with the timeout or cancel error, and the step's goroutine closes
// the connection when SQLite returns.
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
	s := &sqliteRows{r: r, c: c, ctx: ctx, start: start, limitHit: make(chan struct{})}
	s.stopCtx = context.AfterFunc(ctx, c.interrupt)
	s.watch = time.AfterFunc(time.Duration(math.MaxInt64), s.checkTime)
	s.watch.Reset(r.opts.Timeout)       // after s.watch is set: checkTime reads it
	s.stepStart.Store(start.UnixNano()) // compiling counts as running
	var (
		stmt       uintptr
		compileErr error // fn's own: read only once fn returned
	)
	returned := s.guard(func() { stmt, compileErr = r.compile(ctx, c, cs) }, func() {
		// Abandoned while compiling: stmt is this goroutine's own.
		if stmt != 0 {
			c.finalize(stmt)
		}
		c.close()
	})
	s.stepDone()
	if !returned {
		err = r.stoppedError(ctx, s.timedOut.Load())
		s.Close()
		return nil, err
	}
	if compileErr != nil {
		err = s.translate(compileErr)
		s.Close()
		return nil, err
	}
	s.stmt = stmt
	n := int(sqlite3.Xsqlite3_column_count(c.tls, stmt))
	s.cols = make([]Column, n)
	for i := range n {
		s.cols[i] = c.column(stmt, i)
	}
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

	// batch holds the rows read ahead of the caller, next the index of
	// the next one; fetched counts the rows read from SQLite.
	batch   streamBatch
	next    int
	fetched int64

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
	// limitHit is closed when the time limit interrupts SQLite.
	limitHit chan struct{}
	hitOnce  sync.Once
	// abandoned is set when a step was left running past its limit: its
	// goroutine, not Close, then finalizes the statement and closes the
	// connection.
	abandoned atomic.Bool
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
		s.hitOnce.Do(func() { close(s.limitHit) })
	}
	// Between steps with the limit used up: the next step refuses to run.
}

// A stream reads rows from SQLite in batches, each on a goroutine of its
// own (Runner.call) so that the stream can stop waiting for a step stuck
// in one call; a batch makes that cost once per batch rather than once
// per row (a goroutine per row doubled the time of a million-row stream).
// A batch holds at most streamBatchRows rows and, past its first row,
// streamBatchBytes of values (sized as Query sizes them): it is what the
// stream holds beyond the row being read.
const (
	streamBatchRows  = 256
	streamBatchBytes = 1 << 20
	streamBatchSlots = 1 << 14
)

// streamBatch is the rows one fetch read and how the rows ended, if they
// did.
type streamBatch struct {
	rows [][]any
	cuts []int // values cut to the cell cap, per row
	// backing holds the rows' values when a whole batch of them fits
	// streamBatchSlots; the next batch reuses it, and rows and cuts.
	backing []any
	// end is set when the rows ended: at their end, at the row cap
	// (truncated tells whether rows were left out) or on err.
	end       bool
	truncated bool
	err       error
}

func (s *sqliteRows) Next() bool {
	if s.done {
		return false
	}
	if s.next == len(s.batch.rows) {
		if !s.batch.end {
			s.fetch()
		}
		if s.next == len(s.batch.rows) {
			s.err = s.batch.err
			if s.batch.truncated {
				s.stats.Truncated, s.stats.TruncatedBy = true, CapRows
			}
			s.finish()
			return false
		}
	}
	if err := s.ctx.Err(); err != nil { // cancelled between rows
		s.err = s.translate(err)
		s.finish()
		return false
	}
	s.row = s.batch.rows[s.next]
	s.stats.CutCells += s.batch.cuts[s.next]
	s.batch.rows[s.next] = nil
	s.next++
	s.stats.Rows++
	s.stats.Elapsed = time.Since(s.start)
	return true
}

// fetch reads the next batch of rows. When SQLite does not return from a
// step a grace period after the time limit or Cancel, the batch ends with
// the timeout or cancel error and the step is left to finish on its own
// goroutine, which then finalizes the statement and closes the connection.
func (s *sqliteRows) fetch() {
	prev, from := s.batch, s.fetched
	var (
		// The fetch goroutine's own: read only once it returned.
		b       streamBatch
		fetched int64
	)
	returned := s.guard(func() { b, fetched = s.readBatch(prev, from) }, func() {
		s.c.finalize(s.stmt)
		s.c.close()
	})
	if !returned {
		s.batch = streamBatch{end: true, err: s.r.stoppedError(s.ctx, s.timedOut.Load())}
	} else {
		s.batch, s.fetched = b, fetched
	}
	s.next = 0
}

// readBatch steps through up to one batch of rows, fetched rows having
// been read before it, and copies their values out of SQLite, reusing the
// memory of the previous batch (prev), which the caller has read. It runs
// on the goroutine of one fetch and touches only the statement, the
// connection and the stream's atomics.
func (s *sqliteRows) readBatch(prev streamBatch, fetched int64) (streamBatch, int64) {
	n := len(s.cols)
	b := streamBatch{rows: prev.rows[:0], cuts: prev.cuts[:0], backing: prev.backing}
	if b.backing == nil && n*streamBatchRows <= streamBatchSlots {
		b.backing = make([]any, n*streamBatchRows)
	}
	clear(b.backing)
	var bytes int64
	for len(b.rows) < streamBatchRows && (len(b.rows) == 0 || bytes < streamBatchBytes) {
		if fetched >= int64(s.r.opts.MaxRows) {
			// One more step tells whether rows were left out.
			row, err := s.step()
			b.end, b.truncated, b.err = true, row, err
			return b, fetched
		}
		row, err := s.step()
		if !row {
			b.end, b.err = true, err
			return b, fetched
		}
		var vals []any
		if b.backing != nil {
			k := len(b.rows) * n
			vals = b.backing[k : k+n : k+n]
		} else {
			vals = make([]any, n)
		}
		cut := 0
		for i := range n {
			bytes += s.r.cellSize(s.c, s.stmt, i)
			var c bool
			if vals[i], c = s.r.cell(s.c, s.stmt, i); c {
				cut++
			}
		}
		b.rows, b.cuts = append(b.rows, vals), append(b.cuts, cut)
		fetched++
	}
	return b, fetched
}

// step advances the statement: true on a row, false at its end or on an
// error (returned). The time SQLite spends in it counts toward the limit.
func (s *sqliteRows) step() (bool, error) {
	if err := s.ctx.Err(); err != nil {
		return false, s.translate(err)
	}
	if time.Duration(s.spent.Load()) >= s.r.opts.Timeout {
		return false, &TimeoutError{Limit: s.r.opts.Timeout}
	}
	s.stepStart.Store(time.Now().UnixNano())
	rc := sqlite3.Xsqlite3_step(s.c.tls, s.stmt)
	s.stepDone()
	switch rc {
	case sqlite3.SQLITE_ROW:
		return true, nil
	case sqlite3.SQLITE_DONE:
		return false, nil
	}
	return false, s.translate(s.c.lastError(rc))
}

// guard runs fn, one call into SQLite, as Runner.call does, stopping when
// ctx ends or the time limit interrupts SQLite; cleanup releases the
// statement and the connection if fn is left running.
func (s *sqliteRows) guard(fn, cleanup func()) bool {
	if s.r.call(s.ctx, s.limitHit, fn, cleanup) {
		return true
	}
	s.abandoned.Store(true)
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
		if !s.abandoned.Load() { // else the abandoned step's goroutine releases them
			if s.stmt != 0 {
				s.c.finalize(s.stmt)
			}
			s.c.close()
		}
		s.row, s.batch = nil, streamBatch{}
	})
	return nil
}

// String names the stream's state for logs.
func (s StreamStats) String() string {
	return fmt.Sprintf("%d rows in %s", s.Rows, s.Elapsed)
}

package datasets

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// The time limit and Cancel reach SQLite through sqlite3_interrupt, which
// SQLite notices only between the opcodes of its virtual machine: one call
// of a built-in function (randomblob, instr, LIKE, replace ...) runs to its
// end whatever the limit. What one such call can do is bounded by the
// connection's limits below, and the runner stops waiting for a statement
// that has not returned interruptGrace after its limit (see Runner.call).
const (
	// maxValueBytes is SQLITE_LIMIT_LENGTH on the runner's connections:
	// the largest string, BLOB or table row a statement may build or read.
	// SQLite's default is 1,000,000,000 bytes, and randomblob(999999999)
	// then allocated and filled 987 MB in one call that no interrupt
	// reached (57 s under a 10 s limit). 64 MiB is 64 times the cell cap
	// (DefaultMaxCellBytes), so no value a result can show comes near it,
	// and 4 times the largest record Clinsight's importers write
	// (maxCSVRecordBytes, maxOMOPRecordBytes: 16 MiB), so every row of an
	// imported table stays readable; building one value this large takes
	// SQLite a fraction of a second.
	maxValueBytes = 64 << 20
	// maxLikePatternBytes is SQLITE_LIMIT_LIKE_PATTERN_LENGTH: matching a
	// LIKE or GLOB pattern of k bytes can take k steps for each character
	// of the text, in one call (SQLite's default is 50,000; its "Defense
	// Against The Dark Arts" page advises lowering it, and the length
	// limit, for untrusted SQL). No pattern a person or a model writes
	// comes near 1000 bytes.
	maxLikePatternBytes = 1000
	// interruptGrace is how long a call waits, after SQLite was told to
	// interrupt, before it stops waiting for the statement.
	interruptGrace = time.Second
	// DefaultMaxAbandoned is the number of statements left running past
	// their limit (see AbandonedStatements) at which a runner refuses new
	// statements: each keeps a core busy until SQLite returns.
	DefaultMaxAbandoned = 2
)

// likeTooComplex is SQLite's message for a LIKE or GLOB pattern longer
// than SQLITE_LIMIT_LIKE_PATTERN_LENGTH.
const likeTooComplex = "LIKE or GLOB pattern too complex"

// limitMessage rewrites SQLite's errors for the connection limits above so
// that the person (or model) reading them knows what was too big, the
// limit, and what to do; "" for other errors.
func limitMessage(se *sqliteError) string {
	switch {
	case se.code&0xff == sqlite3.SQLITE_TOOBIG:
		return fmt.Sprintf("a value or row in this query would be larger than %s, the size limit for one text, BLOB or row here (SQLite: %s); "+
			"build smaller values, for example cut long text with substr(), or select fewer columns", FormatBytes(maxValueBytes), se.msg)
	case se.code&0xff == sqlite3.SQLITE_ERROR && se.msg == likeTooComplex:
		return fmt.Sprintf("a LIKE or GLOB pattern in this query is longer than %d bytes, the limit here (SQLite: %s); "+
			"use a shorter pattern, or compare with = or substr()", maxLikePatternBytes, se.msg)
	}
	return ""
}

// AbandonedStatements counts the statements runners stopped waiting for:
// statements told to interrupt at their time limit or on Cancel that had
// still not returned interruptGrace later, because SQLite was inside one
// long call. Each goes on running on a goroutine of its own until SQLite
// returns, then finalizes its statement and closes its connection. While
// the count is at its maximum, runners that share it refuse new statements
// with a *StillRunningError instead of piling up busy cores. Statements
// already running when the maximum is reached may still be abandoned, so
// the count can pass it by the number of statements run concurrently.
//
// It is safe for concurrent use.
type AbandonedStatements struct {
	max int

	mu sync.Mutex
	n  int
}

// NewAbandonedStatements returns a count that refuses new statements while
// max statements are left running (DefaultMaxAbandoned when max ≤ 0).
// Share one between runners to bound them together.
func NewAbandonedStatements(max int) *AbandonedStatements {
	if max <= 0 {
		max = DefaultMaxAbandoned
	}
	return &AbandonedStatements{max: max}
}

// Running returns the number of abandoned statements still running.
func (a *AbandonedStatements) Running() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.n
}

// admit refuses a new statement while the count is at its maximum.
func (a *AbandonedStatements) admit() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n >= a.max {
		return &StillRunningError{Running: a.n, Max: a.max}
	}
	return nil
}

func (a *AbandonedStatements) add() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n++
	return a.n
}

func (a *AbandonedStatements) done() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.n--
	return a.n
}

// StillRunningError reports a statement refused because statements
// stopped earlier are still running inside SQLite (see
// AbandonedStatements).
type StillRunningError struct {
	// Running is the number of stopped statements still running; Max the
	// number at which new ones are refused.
	Running, Max int
}

func (e *StillRunningError) Error() string {
	queries := "queries are"
	if e.Running == 1 {
		queries = "query is"
	}
	return fmt.Sprintf("the query was not started: %d stopped %s still finishing inside SQLite "+
		"(each passed its time limit inside one calculation SQLite cannot interrupt, and keeps a processor busy until it ends); "+
		"try again when one has ended, or restart Clinsight to end them at once", e.Running, queries)
}

// call runs fn, which uses SQLite, on a goroutine of its own and waits for
// it to return. When ctx ends or stop is closed, SQLite has been told to
// interrupt (by the caller's context.AfterFunc or time limit); call then
// waits interruptGrace more. If fn has still not returned, call stops
// waiting and returns false: fn's goroutine goes on until SQLite returns,
// then runs cleanup (which must release what fn used; nil when fn
// releases it itself) and leaves the runner's count of abandoned
// statements. A nil stop never closes.
func (r *Runner) call(ctx context.Context, stop <-chan struct{}, fn func(), cleanup func()) (returned bool) {
	var (
		mu       sync.Mutex
		over     bool // fn returned
		left     bool // call stopped waiting
		leftTime time.Time
	)
	done := make(chan struct{})
	go func() {
		defer close(done)
		fn()
		mu.Lock()
		over = true
		l := left
		mu.Unlock()
		if !l {
			return
		}
		if cleanup != nil {
			cleanup()
		}
		n := r.abandoned.done()
		r.log.Info("sqlite: a statement left running past its limit has ended; its connection is closed",
			"database", r.path, "ran_past_limit", time.Since(leftTime).Round(time.Millisecond), "still_running", n)
	}()
	reason := "time limit"
	select {
	case <-done:
		return true
	case <-ctx.Done():
		if errors.Is(ctx.Err(), context.Canceled) {
			reason = "cancelled"
		}
	case <-stop:
	}
	grace := time.NewTimer(interruptGrace)
	defer grace.Stop()
	select {
	case <-done:
		return true
	case <-grace.C:
	}
	mu.Lock()
	if over {
		mu.Unlock()
		<-done
		return true
	}
	left, leftTime = true, time.Now()
	n := r.abandoned.add()
	mu.Unlock()
	r.log.Warn("sqlite: a statement did not stop at its limit (SQLite is inside one long function call); "+
		"it is left to finish on its own and will close its connection",
		"database", r.path, "stopped_by", reason, "limit", r.opts.Timeout, "grace", interruptGrace, "still_running", n, "max", r.abandoned.max)
	return false
}

// guarded opens a connection of its own and runs work on it, under ctx:
// when ctx ends SQLite is interrupted, and if work has not returned
// interruptGrace later, guarded returns the timeout or cancel error and
// leaves work to finish on its own goroutine, which then closes the
// connection.
func (r *Runner) guarded(ctx context.Context, work func(*sqliteConn) error) error {
	var err error
	returned := r.call(ctx, nil, func() {
		c, oerr := r.open(ctx)
		if oerr != nil {
			err = oerr
			return
		}
		defer c.close()
		stop := context.AfterFunc(ctx, c.interrupt)
		defer stop()
		err = work(c)
	}, nil)
	if !returned {
		return r.stoppedError(ctx, false)
	}
	return err
}

// stoppedError is the error of a statement the runner stopped waiting for
// at its time limit (the context's deadline, or a stream's own limit when
// timedOut) or on Cancel.
func (r *Runner) stoppedError(ctx context.Context, timedOut bool) error {
	err := ctx.Err()
	if errors.Is(err, context.DeadlineExceeded) || (err == nil && timedOut) {
		return &TimeoutError{Limit: r.opts.Timeout, LeftRunning: true}
	}
	if err == nil {
		err = errors.New("stopped")
	}
	return fmt.Errorf("query cancelled inside one long calculation, which SQLite finishes in the background: %w", err)
}

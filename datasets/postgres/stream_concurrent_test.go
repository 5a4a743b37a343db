package postgres

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/pgtest"
)

// Exports hold a pool connection for as long as they run (issue 21 item
// 2): these tests run more exports at once than the pool has connections,
// with other work beside them, and check on the server (pg_stat_activity)
// and in the pool (Stat) that nothing waits forever, that the pool stays
// within its limit, that work waiting for a connection gives up within its
// time with a message its reader understands, and that no connection or
// transaction outlives the exports.

// concurrentRows is the rows of each export: 20 FETCHes.
const concurrentRows = 20_000

// concurrentQuery is an export of concurrentRows rows whose ids sum to
// concurrentSum.
var concurrentQuery = fmt.Sprintf("SELECT g AS id, repeat('x', 40) AS note FROM generate_series(1, %d) g", concurrentRows)

const concurrentSum = int64(concurrentRows) * (concurrentRows + 1) / 2

// opDeadline bounds every operation of these tests: one that takes longer
// is reported as hung (the engine's own limits are far shorter).
const opDeadline = 20 * time.Second

// poolWatch samples the engine's pool and the server's sessions of the
// engine until stopped, keeping the largest figures seen.
type poolWatch struct {
	stop chan struct{}
	done chan struct{}

	mu                                   sync.Mutex
	maxAcquired, maxTotal, maxSessions   int
	samples                              int
	err                                  error
	lastAcquired, lastTotal, lastSession int
}

func watchPool(t *testing.T, db testDB, e *Engine) *poolWatch {
	t.Helper()
	conn, err := db.c.Connect(context.Background(), pgtest.Superuser, db.c.SuperPassword, db.name)
	if err != nil {
		t.Fatal(err)
	}
	w := &poolWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		defer conn.Close(context.Background())
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			st := e.pool.Stat()
			var sessions int
			err := conn.QueryRow(context.Background(),
				"SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'clinsight'", db.name).Scan(&sessions)
			w.mu.Lock()
			if err != nil && w.err == nil {
				w.err = err
			}
			w.samples++
			w.lastAcquired, w.lastTotal, w.lastSession = int(st.AcquiredConns()), int(st.TotalConns()), sessions
			w.maxAcquired = max(w.maxAcquired, w.lastAcquired)
			w.maxTotal = max(w.maxTotal, w.lastTotal)
			w.maxSessions = max(w.maxSessions, sessions)
			w.mu.Unlock()
			select {
			case <-w.stop:
				return
			case <-tick.C:
			}
		}
	}()
	t.Cleanup(w.end)
	return w
}

// end stops the sampling (more than once is fine).
func (w *poolWatch) end() {
	select {
	case <-w.stop:
	default:
		close(w.stop)
	}
	<-w.done
}

func (w *poolWatch) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.figures()
}

// figures is String for a caller holding mu.
func (w *poolWatch) figures() string {
	return fmt.Sprintf("%d samples: at most %d connections acquired, %d open in the pool, %d sessions on the server (last: %d, %d, %d)",
		w.samples, w.maxAcquired, w.maxTotal, w.maxSessions, w.lastAcquired, w.lastTotal, w.lastSession)
}

// check stops the sampling and fails the test if the pool ever had more
// than limit connections, or the server more than limit sessions of the
// engine when sessionsToo (only where no connection is closed: a closed
// connection's server process may linger a moment after the pool has
// opened its replacement).
func (w *poolWatch) check(t *testing.T, limit int, sessionsToo bool) {
	t.Helper()
	w.end()
	w.mu.Lock()
	t.Log(w.figures())
	defer w.mu.Unlock()
	if w.err != nil {
		t.Fatalf("pg_stat_activity: %v", w.err)
	}
	if w.maxAcquired > limit || w.maxTotal > limit || sessionsToo && w.maxSessions > limit {
		t.Errorf("more than the pool's %d connections: %s", limit, w.figures())
	}
}

// sessions counts the engine's sessions on the server, and those of them
// in a transaction or running a statement.
func sessions(t *testing.T, super *pgx.Conn, db testDB) (all, busy int) {
	t.Helper()
	err := super.QueryRow(context.Background(),
		"SELECT count(*), count(*) FILTER (WHERE xact_start IS NOT NULL OR state <> 'idle') FROM pg_stat_activity WHERE datname = $1 AND application_name = 'clinsight'",
		db.name).Scan(&all, &busy)
	if err != nil {
		t.Fatalf("pg_stat_activity: %v", err)
	}
	return all, busy
}

// exportResult is what one export read.
type exportResult struct {
	rows, sum int64
	err       error
}

// readExport reads a stream to its end as an export does, summing the ids.
func readExport(s datasets.RowStream) exportResult {
	var r exportResult
	for s.Next() {
		r.rows++
		if id, ok := s.Row()[0].(int64); ok {
			r.sum += id
		}
	}
	r.err = s.Err()
	s.Close()
	return r
}

// concurrentEnv is an engine on a test database with the default pool, as
// the app opens it, its pool watched from the start.
type concurrentEnv struct {
	db       testDB
	e        *Engine
	maxConns int
	w        *poolWatch
	super    *pgx.Conn
	start    time.Time
}

func newConcurrentEnv(t *testing.T, timeout time.Duration) *concurrentEnv {
	t.Helper()
	db := newTestDB(t)
	e := db.open(t, datasets.RunnerOptions{MaxRows: 1_000_000, Timeout: timeout})
	c := &concurrentEnv{db: db, e: e, maxConns: int(e.pool.Config().MaxConns), start: time.Now()}
	if c.maxConns < 2 {
		t.Fatalf("pool of %d connections", c.maxConns)
	}
	c.w = watchPool(t, db, e)
	c.super = db.c.Super(t, db.name)
	return c
}

// goEach runs op(ctx, cancel, i) for i in [0, n) on goroutines counted in
// wg, each with a context bounded by opDeadline (cancel cancels it), and
// returns the slice each stores its result in: read it after wg.Wait.
func goEach[T any](wg *sync.WaitGroup, n int, op func(ctx context.Context, cancel context.CancelFunc, i int) T) []T {
	results := make([]T, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), opDeadline)
			defer cancel()
			results[i] = op(ctx, cancel, i)
		}()
	}
	return results
}

// startExports starts n exports of concurrentQuery on goroutines counted
// in wg; read gets export i's stream, or the error that kept it from
// opening (then s is nil), and the cancel of its context, and returns what
// the export read.
func startExports(wg *sync.WaitGroup, e *Engine, n int, read func(i int, s datasets.RowStream, err error, cancel context.CancelFunc) exportResult) []exportResult {
	return goEach(wg, n, func(ctx context.Context, cancel context.CancelFunc, i int) exportResult {
		s, err := e.Stream(ctx, concurrentQuery)
		return read(i, s, err, cancel)
	})
}

// queryCount runs a count of table's rows (3 in the fixture) through the
// engine and checks it.
func queryCount(ctx context.Context, e *Engine, table string) error {
	res, err := e.Query(ctx, "SELECT count(*) AS n FROM "+table)
	if err == nil && (len(res.Rows) != 1 || res.Rows[0][0] != int64(3)) {
		err = fmt.Errorf("count of %s %v, want 3", table, res.Rows)
	}
	return err
}

// checkExports fails the test for each export that ended with an error or
// read other than want(i) rows, or, where wantSum, ids that do not sum to
// concurrentSum.
func checkExports(t *testing.T, results []exportResult, want func(i int) (rows int64, wantSum bool)) {
	t.Helper()
	for i, r := range results {
		rows, wantSum := want(i)
		if r.err != nil || r.rows != rows || wantSum && r.sum != concurrentSum {
			t.Errorf("export %d: %d rows summing to %d, error %v; want %d rows (summing to %d if read to the end)", i, r.rows, r.sum, r.err, rows, concurrentSum)
		}
	}
}

// checkNoErrors fails the test for each error of errs.
func checkNoErrors(t *testing.T, what string, errs []error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Errorf("%s %d: %v", what, i, err)
		}
	}
}

// checkHeld fails the test unless every connection is held by an export:
// all acquired in the pool and in a transaction on the server.
func (c *concurrentEnv) checkHeld(t *testing.T) {
	t.Helper()
	waitFor(t, "every connection held by an export", func() bool {
		return int(c.e.pool.Stat().AcquiredConns()) == c.maxConns
	})
	if _, busy := sessions(t, c.super, c.db); busy != c.maxConns {
		t.Fatalf("%d exports under way: %d sessions in a transaction on the server, want %d", c.maxConns, busy, c.maxConns)
	}
}

// checkEnded checks that, after every export and query ended, no
// transaction is open, no connection is held, the server's sessions of the
// engine are the pool's (a cancelled export's connection is closed: its
// server session ends), and the pool and the server never had more than
// the pool's connections (sessionsToo: see poolWatch.check).
func (c *concurrentEnv) checkEnded(t *testing.T, sessionsToo bool) {
	t.Helper()
	c.db.c.WaitNoTransaction(t, c.db.name)
	if st := c.e.pool.Stat(); st.AcquiredConns() != 0 {
		t.Errorf("%d connections still acquired after every export ended", st.AcquiredConns())
	}
	waitFor(t, "the server's sessions of the engine to be the pool's", func() bool {
		all, _ := sessions(t, c.super, c.db)
		return all == int(c.e.pool.Stat().TotalConns())
	})
	c.w.check(t, c.maxConns, sessionsToo)
}

// waitAll waits for wg, failing the test as hung after opDeadline with the
// state of the pool and the server.
func (c *concurrentEnv) waitAll(t *testing.T, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(opDeadline):
		st := c.e.pool.Stat()
		all, busy := sessions(t, c.super, c.db)
		t.Fatalf("%s not finished after %s (hung): pool %d acquired of %d; server %d sessions, %d busy", what, opDeadline, st.AcquiredConns(), st.MaxConns(), all, busy)
	}
}

// givesUp runs op, which waits for a connection while every one is held
// by an export, and checks that it ended within allowed, saying why in
// words a clinician understands (not "narrow the query": the statement
// never ran), and that its error is still the context's to the code. An op
// still waiting after opDeadline is reported as hung (then the exports are
// ended with release, so that it can return).
func (c *concurrentEnv) givesUp(t *testing.T, what string, allowed time.Duration, release func(), op func() error) {
	t.Helper()
	t0 := time.Now()
	done := make(chan error, 1)
	go func() { done <- op() }()
	var err error
	select {
	case err = <-done:
	case <-time.After(opDeadline):
		t.Errorf("%s: still waiting after %s (hung)", what, opDeadline)
		release()
		err = <-done
	}
	took := time.Since(t0)
	if err == nil {
		t.Fatalf("%s: no error while all %d connections were held by exports", what, c.maxConns)
	}
	if took > allowed+3*time.Second {
		t.Errorf("%s: gave up after %s, allowed %s", what, took, allowed)
	}
	msg := err.Error()
	var te *datasets.TimeoutError
	if errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(msg, fmt.Sprintf("all %d connections", c.maxConns)) || !strings.Contains(msg, "export") ||
		strings.Contains(msg, "context deadline exceeded") || strings.Contains(msg, "narrow") {
		t.Errorf("%s: error %q (%T), want one saying the connections are all in use by exports", what, msg, err)
	}
}

// waitingOp is work that waits for a connection when exports hold them
// all, run through e.
type waitingOp struct {
	name string
	run  func(ctx context.Context, e *Engine) error
}

// TestConcurrentExportsBeyondThePool: more exports than the pool has
// connections, while queries and the catalog wait for one. The exports
// beyond the pool wait and then run; work that waits with a short time
// (its context's or the engine's limit) gives up within it, saying that
// the connections are in use; the rest finishes once exports end; the
// pool and the server never have more than the pool's connections; none
// is left in a transaction.
func TestConcurrentExportsBeyondThePool(t *testing.T) {
	// The exports beyond the pool wait for a connection within the time
	// limit: 15 s leaves them ample time behind the checks below (about
	// 2.5 s), and a hang is still reported within opDeadline.
	c := newConcurrentEnv(t, 15*time.Second)
	e, maxConns := c.e, c.maxConns

	// Exports: each reads its first row and then holds its connection
	// until hold is closed, as a long export does.
	exports := maxConns + 3
	hold := make(chan struct{})
	release := sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release) // before the engine closes: it waits for them
	type opened struct {
		i   int
		err error
	}
	started := make(chan opened, exports)
	var wg sync.WaitGroup
	results := startExports(&wg, e, exports, func(i int, s datasets.RowStream, err error, _ context.CancelFunc) exportResult {
		if err != nil {
			started <- opened{i, err}
			return exportResult{err: err}
		}
		var first exportResult
		if s.Next() {
			first.rows, first.sum = 1, s.Row()[0].(int64)
		}
		started <- opened{i, nil}
		<-hold
		r := readExport(s)
		r.rows += first.rows
		r.sum += first.sum
		return r
	})
	for range maxConns {
		select {
		case o := <-started:
			if o.err != nil {
				t.Fatalf("export %d: %v", o.i, o.err)
			}
		case <-time.After(opDeadline):
			t.Fatalf("the first %d exports did not start within %s", maxConns, opDeadline)
		}
	}
	c.checkHeld(t)
	select {
	case o := <-started:
		t.Fatalf("export %d started with every connection held (error: %v)", o.i, o.err)
	default:
	}

	// The work that waits for a connection below.
	queryOp := waitingOp{"a query", func(ctx context.Context, e *Engine) error {
		_, err := e.Query(ctx, "SELECT count(*) FROM patients")
		return err
	}}
	catalogOp := waitingOp{"the catalog", func(ctx context.Context, e *Engine) error {
		_, err := e.Catalog(ctx, datasets.CatalogOptions{})
		return err
	}}
	exportOp := waitingOp{"an export", func(ctx context.Context, e *Engine) error {
		s, err := e.Stream(ctx, concurrentQuery)
		if err == nil {
			s.Close()
		}
		return err
	}}
	countOp := waitingOp{"a row count", func(ctx context.Context, e *Engine) error {
		_, err := e.CountRows(ctx, "patients")
		return err
	}}

	// Work that waits with a short context deadline gives up within it.
	canceledBefore := e.pool.Stat().CanceledAcquireCount()
	short := 300 * time.Millisecond
	for _, op := range []waitingOp{queryOp, catalogOp, {"another export", exportOp.run}, countOp} {
		c.givesUp(t, op.name+" with a "+short.String()+" deadline", short, release, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), short)
			defer cancel()
			return op.run(ctx, e)
		})
	}
	if got := e.pool.Stat().CanceledAcquireCount() - canceledBefore; got != 4 {
		t.Errorf("%d acquisitions given up, want 4 (the work above waited for a connection)", got)
	}

	// With no deadline of its own, work waits no longer than the
	// engine's time limit.
	limit := 500 * time.Millisecond
	limited := e.WithLimits(datasets.RunnerOptions{Timeout: limit})
	for _, op := range []waitingOp{queryOp, catalogOp} {
		c.givesUp(t, op.name+" under a "+limit.String()+" limit", limit, release, func() error {
			return op.run(context.Background(), limited)
		})
	}

	// Cancelled while waiting (the user's Cancel on a query or on an
	// export queued behind the others): ends with the cancel.
	for _, op := range []waitingOp{queryOp, exportOp} {
		ctx, cancel := context.WithCancel(context.Background())
		qerr := make(chan error, 1)
		go func() { qerr <- op.run(ctx, e) }()
		cancel()
		select {
		case err := <-qerr:
			if !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "cancelled") {
				t.Errorf("%s cancelled while waiting: %v", op.name, err)
			}
		case <-time.After(opDeadline):
			t.Fatalf("%s cancelled while waiting for a connection did not return", op.name)
		}
	}

	// Work queued with time to spare finishes once exports end.
	var qwg sync.WaitGroup
	queued := goEach(&qwg, 3, func(ctx context.Context, _ context.CancelFunc, i int) error {
		if i > 0 {
			return queryCount(ctx, e, "patients")
		}
		cat, err := e.Catalog(ctx, datasets.CatalogOptions{})
		if err == nil && len(cat.Tables) != 3 {
			err = fmt.Errorf("catalog of %d tables, want 3", len(cat.Tables))
		}
		return err
	})
	release()
	c.waitAll(t, &wg, "the exports")
	c.waitAll(t, &qwg, "the queries and the catalog queued behind the exports")
	took := time.Since(c.start)
	checkExports(t, results, func(int) (int64, bool) { return concurrentRows, true })
	checkNoErrors(t, "queued work", queued)
	c.checkEnded(t, true)
	t.Logf("%d exports of %d rows and %d other operations on a pool of %d: %s", exports, concurrentRows, 11, maxConns, took.Round(time.Millisecond))
}

// TestConcurrentStreamsClosedOrCancelled: twice as many exports as the
// pool has connections, at once, with queries beside them; a third read
// to the end, a third closed early, a third cancelled mid-result. After
// them no transaction is open, no connection is held, the server has no
// more sessions than the pool connections, and the pool serves as many
// exports at once as it has connections.
func TestConcurrentStreamsClosedOrCancelled(t *testing.T) {
	c := newConcurrentEnv(t, 10*time.Second)
	e, maxConns := c.e, c.maxConns

	n := 2 * maxConns
	wantRows := func(i int) (int64, bool) { return []int64{concurrentRows, 1500, 2500}[i%3], i%3 == 0 }
	var wg sync.WaitGroup
	results := startExports(&wg, e, n, func(i int, s datasets.RowStream, err error, cancel context.CancelFunc) exportResult {
		if err != nil {
			return exportResult{err: err}
		}
		var r exportResult
		want, _ := wantRows(i)
		switch i % 3 {
		case 0: // to the end
			r = readExport(s)
		case 1: // closed by the reader mid-batch
			for r.rows < want && s.Next() {
				r.rows++
			}
			s.Close()
			if s.Next() {
				r.err = errors.New("a row after Close")
			}
		case 2: // cancelled mid-batch
			for r.rows < want && s.Next() {
				r.rows++
			}
			cancel()
			if s.Next() {
				r.err = errors.New("a row after the cancel")
			} else if !errors.Is(s.Err(), context.Canceled) {
				r.err = fmt.Errorf("error after the cancel: %v", s.Err())
			}
			s.Close()
		}
		return r
	})
	queries := goEach(&wg, maxConns, func(ctx context.Context, _ context.CancelFunc, _ int) error {
		return queryCount(ctx, e, "admissions")
	})
	c.waitAll(t, &wg, "the exports and queries")
	took := time.Since(c.start)
	checkExports(t, results, wantRows)
	checkNoErrors(t, "query", queries)
	c.checkEnded(t, false)

	// Nothing leaked: the pool holds as many exports at once as before.
	var held []datasets.RowStream
	t.Cleanup(func() { // before the engine closes: it waits for them
		for _, s := range held {
			s.Close()
		}
	})
	for i := range maxConns {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		s, err := e.Stream(ctx, concurrentQuery)
		if err != nil {
			cancel()
			t.Fatalf("export %d of %d at once after the others ended: %v", i+1, maxConns, err)
		}
		defer cancel()
		if !s.Next() {
			t.Fatalf("export %d: no row: %v", i+1, s.Err())
		}
		held = append(held, s)
	}
	c.checkHeld(t)
	for _, s := range held {
		s.Close()
	}
	c.db.c.WaitNoTransaction(t, c.db.name)
	t.Logf("%d exports (a third read, closed, cancelled) and %d queries on a pool of %d: %s", n, maxConns, maxConns, took.Round(time.Millisecond))
}

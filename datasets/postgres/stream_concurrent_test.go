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

// waitAll waits for wg, failing the test as hung after opDeadline with the
// state of the pool and the server.
func waitAll(t *testing.T, super *pgx.Conn, db testDB, e *Engine, wg *sync.WaitGroup, what string) {
	t.Helper()
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(opDeadline):
		st := e.pool.Stat()
		all, busy := sessions(t, super, db)
		t.Fatalf("%s not finished after %s (hung): pool %d acquired of %d; server %d sessions, %d busy", what, opDeadline, st.AcquiredConns(), st.MaxConns(), all, busy)
	}
}

// within runs op, reporting it as hung if it has not returned after
// opDeadline (then ending the exports, so that it can).
func within(t *testing.T, what string, release func(), op func() error) (time.Duration, error) {
	t.Helper()
	t0 := time.Now()
	done := make(chan error, 1)
	go func() { done <- op() }()
	select {
	case err := <-done:
		return time.Since(t0), err
	case <-time.After(opDeadline):
		t.Errorf("%s: still waiting after %s (hung)", what, opDeadline)
		release()
		err := <-done
		return time.Since(t0), err
	}
}

// checkBusy checks the error of work that waited for a connection while
// every one was held by an export: it ended within its time, says why in
// words a clinician understands (not "narrow the query": the statement
// never ran), and is still the context's error to the code.
func checkBusy(t *testing.T, what string, err error, took, allowed time.Duration, maxConns int) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error while all %d connections were held by exports", what, maxConns)
	}
	if took > allowed+3*time.Second {
		t.Errorf("%s: gave up after %s, allowed %s", what, took, allowed)
	}
	msg := err.Error()
	var te *datasets.TimeoutError
	if errors.As(err, &te) || !errors.Is(err, context.DeadlineExceeded) ||
		!strings.Contains(msg, fmt.Sprintf("all %d connections", maxConns)) || !strings.Contains(msg, "export") ||
		strings.Contains(msg, "context deadline exceeded") || strings.Contains(msg, "narrow") {
		t.Errorf("%s: error %q (%T), want one saying the connections are all in use by exports", what, msg, err)
	}
}

// TestConcurrentExportsBeyondThePool: more exports than the pool has
// connections, while queries and the catalog wait for one. The exports
// beyond the pool wait and then run; work that waits with a short time
// (its context's or the engine's limit) gives up within it, saying that
// the connections are in use; the rest finishes once exports end; the
// pool and the server never have more than the pool's connections; none
// is left in a transaction.
func TestConcurrentExportsBeyondThePool(t *testing.T) {
	db := newTestDB(t)
	// The exports beyond the pool wait for a connection within the time
	// limit: 15 s leaves them ample time behind the checks below (about
	// 2.5 s), and a hang is still reported within opDeadline.
	e := db.open(t, datasets.RunnerOptions{MaxRows: 1_000_000, Timeout: 15 * time.Second})
	maxConns := int(e.pool.Config().MaxConns) // the engine's default, as the app opens it
	if maxConns < 2 {
		t.Fatalf("pool of %d connections", maxConns)
	}
	start := time.Now()
	w := watchPool(t, db, e)
	super := db.c.Super(t, db.name)

	// Exports: each reads its first row and then holds its connection
	// until hold is closed, as a long export does.
	exports := maxConns + 3
	hold := make(chan struct{})
	release := sync.OnceFunc(func() { close(hold) })
	t.Cleanup(release) // before the engine closes: it waits for them
	started := make(chan int, exports)
	results := make([]exportResult, exports)
	var wg sync.WaitGroup
	for i := range exports {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), opDeadline)
			defer cancel()
			s, err := e.Stream(ctx, concurrentQuery)
			if err != nil {
				results[i] = exportResult{err: err}
				started <- i
				return
			}
			r := exportResult{}
			if s.Next() {
				r.rows, r.sum = 1, s.Row()[0].(int64)
			}
			started <- i
			<-hold
			rest := readExport(s)
			r.rows += rest.rows
			r.sum += rest.sum
			r.err = rest.err
			results[i] = r
		}()
	}
	for range maxConns {
		select {
		case i := <-started:
			if results[i].err != nil {
				t.Fatalf("export %d: %v", i, results[i].err)
			}
		case <-time.After(opDeadline):
			t.Fatalf("the first %d exports did not start within %s", maxConns, opDeadline)
		}
	}
	waitFor(t, "every connection held by an export", func() bool {
		st := e.pool.Stat()
		return int(st.AcquiredConns()) == maxConns
	})
	if _, busy := sessions(t, super, db); busy != maxConns {
		t.Fatalf("%d exports under way: %d sessions in a transaction on the server, want %d", maxConns, busy, maxConns)
	}
	select {
	case i := <-started:
		t.Fatalf("export %d started with every connection held", i)
	default:
	}

	// Work that waits with a short context deadline gives up within it.
	canceledBefore := e.pool.Stat().CanceledAcquireCount()
	short := 300 * time.Millisecond
	for _, op := range []struct {
		name string
		run  func(context.Context) error
	}{
		{"a query", func(ctx context.Context) error {
			_, err := e.Query(ctx, "SELECT count(*) FROM patients")
			return err
		}},
		{"the catalog", func(ctx context.Context) error {
			_, err := e.Catalog(ctx, datasets.CatalogOptions{})
			return err
		}},
		{"another export", func(ctx context.Context) error {
			s, err := e.Stream(ctx, concurrentQuery)
			if err == nil {
				s.Close()
			}
			return err
		}},
		{"a row count", func(ctx context.Context) error {
			_, err := e.CountRows(ctx, "patients")
			return err
		}},
	} {
		what := op.name + " with a " + short.String() + " deadline"
		took, err := within(t, what, release, func() error {
			ctx, cancel := context.WithTimeout(context.Background(), short)
			defer cancel()
			return op.run(ctx)
		})
		checkBusy(t, what, err, took, short, maxConns)
	}
	if got := e.pool.Stat().CanceledAcquireCount() - canceledBefore; got != 4 {
		t.Errorf("%d acquisitions given up, want 4 (the work above waited for a connection)", got)
	}

	// With no deadline of its own, work waits no longer than the
	// engine's time limit.
	limited := e.WithLimits(datasets.RunnerOptions{Timeout: 500 * time.Millisecond})
	took, err := within(t, "a query under a 500ms limit", release, func() error {
		_, err := limited.Query(context.Background(), "SELECT count(*) FROM patients")
		return err
	})
	checkBusy(t, "a query under a 500ms limit", err, took, 500*time.Millisecond, maxConns)
	took, err = within(t, "the catalog under a 500ms limit", release, func() error {
		_, err := limited.Catalog(context.Background(), datasets.CatalogOptions{})
		return err
	})
	checkBusy(t, "the catalog under a 500ms limit", err, took, 500*time.Millisecond, maxConns)

	// Cancelled while waiting (the user's Cancel on a query or on an
	// export queued behind the others): ends with the cancel.
	for _, op := range []struct {
		name string
		run  func(context.Context) error
	}{
		{"a query", func(ctx context.Context) error {
			_, err := e.Query(ctx, "SELECT count(*) FROM patients")
			return err
		}},
		{"an export", func(ctx context.Context) error {
			s, err := e.Stream(ctx, concurrentQuery)
			if err == nil {
				s.Close()
			}
			return err
		}},
	} {
		ctx, cancel := context.WithCancel(context.Background())
		qerr := make(chan error, 1)
		go func() { qerr <- op.run(ctx) }()
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
	queued := make([]error, 3)
	var qwg sync.WaitGroup
	for i := range queued {
		qwg.Add(1)
		go func() {
			defer qwg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), opDeadline)
			defer cancel()
			if i == 0 {
				cat, err := e.Catalog(ctx, datasets.CatalogOptions{})
				if err == nil && len(cat.Tables) != 3 {
					err = fmt.Errorf("catalog of %d tables, want 3", len(cat.Tables))
				}
				queued[i] = err
				return
			}
			res, err := e.Query(ctx, "SELECT count(*) AS n FROM patients")
			if err == nil && (len(res.Rows) != 1 || res.Rows[0][0] != int64(3)) {
				err = fmt.Errorf("count of patients %v, want 3", res.Rows)
			}
			queued[i] = err
		}()
	}
	release()
	waitAll(t, super, db, e, &wg, "the exports")
	waitAll(t, super, db, e, &qwg, "the queries and the catalog queued behind the exports")
	took = time.Since(start)
	for i, r := range results {
		if r.err != nil || r.rows != concurrentRows || r.sum != concurrentSum {
			t.Errorf("export %d: %d rows summing to %d, error %v; want %d rows summing to %d", i, r.rows, r.sum, r.err, concurrentRows, concurrentSum)
		}
	}
	for i, err := range queued {
		if err != nil {
			t.Errorf("queued work %d: %v", i, err)
		}
	}

	db.c.WaitNoTransaction(t, db.name)
	if st := e.pool.Stat(); st.AcquiredConns() != 0 {
		t.Errorf("%d connections still acquired after every export ended", st.AcquiredConns())
	}
	w.check(t, maxConns, true)
	t.Logf("%d exports of %d rows and %d other operations on a pool of %d: %s", exports, concurrentRows, 11, maxConns, took.Round(time.Millisecond))
}

// TestConcurrentStreamsClosedOrCancelled: twice as many exports as the
// pool has connections, at once, with queries beside them; a third read
// to the end, a third closed early, a third cancelled mid-result. After
// them no transaction is open, no connection is held, the server has no
// more sessions than the pool connections, and the pool serves as many
// exports at once as it has connections.
func TestConcurrentStreamsClosedOrCancelled(t *testing.T) {
	db := newTestDB(t)
	e := db.open(t, datasets.RunnerOptions{MaxRows: 1_000_000, Timeout: 10 * time.Second})
	maxConns := int(e.pool.Config().MaxConns)
	start := time.Now()
	w := watchPool(t, db, e)
	super := db.c.Super(t, db.name)

	n := 2 * maxConns
	results := make([]exportResult, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), opDeadline)
			defer cancel()
			s, err := e.Stream(ctx, concurrentQuery)
			if err != nil {
				results[i].err = err
				return
			}
			var r exportResult
			switch i % 3 {
			case 0: // to the end
				r = readExport(s)
			case 1: // closed by the reader mid-batch
				for r.rows < 1500 && s.Next() {
					r.rows++
				}
				s.Close()
				if s.Next() {
					r.err = errors.New("a row after Close")
				}
			case 2: // cancelled mid-batch
				for r.rows < 2500 && s.Next() {
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
			results[i] = r
		}()
	}
	queries := make([]error, maxConns)
	for i := range queries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), opDeadline)
			defer cancel()
			res, err := e.Query(ctx, "SELECT count(*) AS n FROM admissions")
			if err == nil && (len(res.Rows) != 1 || res.Rows[0][0] != int64(3)) {
				err = fmt.Errorf("count of admissions %v, want 3", res.Rows)
			}
			queries[i] = err
		}()
	}
	waitAll(t, super, db, e, &wg, "the exports and queries")
	took := time.Since(start)
	for i, r := range results {
		want := map[int]int64{0: concurrentRows, 1: 1500, 2: 2500}[i%3]
		if r.err != nil || r.rows != want || i%3 == 0 && r.sum != concurrentSum {
			t.Errorf("export %d: %d rows, error %v; want %d rows", i, r.rows, r.err, want)
		}
	}
	for i, err := range queries {
		if err != nil {
			t.Errorf("query %d: %v", i, err)
		}
	}

	db.c.WaitNoTransaction(t, db.name)
	if st := e.pool.Stat(); st.AcquiredConns() != 0 {
		t.Errorf("%d connections still acquired after every export ended", st.AcquiredConns())
	}
	// A cancelled export's connection is closed: its server session ends.
	waitFor(t, "the server's sessions of the engine to be the pool's", func() bool {
		all, _ := sessions(t, super, db)
		return all == int(e.pool.Stat().TotalConns())
	})
	w.check(t, maxConns, false)

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
	if _, busy := sessions(t, super, db); busy != maxConns {
		t.Errorf("%d exports under way: %d sessions in a transaction, want %d", maxConns, busy, maxConns)
	}
	for _, s := range held {
		s.Close()
	}
	db.c.WaitNoTransaction(t, db.name)
	t.Logf("%d exports (a third read, closed, cancelled) and %d queries on a pool of %d: %s", n, maxConns, maxConns, took.Round(time.Millisecond))
}

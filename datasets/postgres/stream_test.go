package postgres

import (
	"context"
	"errors"
	"reflect"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clinsight/clinsight/datasets"
)

// readAll reads a stream to its end.
func readAll(t *testing.T, s datasets.RowStream) [][]any {
	t.Helper()
	defer s.Close()
	var rows [][]any
	for s.Next() {
		rows = append(rows, append([]any(nil), s.Row()...))
	}
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	return rows
}

// TestStreamEqualsQuery: a streamed result has the columns, values, cut
// cells and row cap notice of the same statement read whole.
func TestStreamEqualsQuery(t *testing.T) {
	db := newTestDB(t)
	e := db.open(t, datasets.RunnerOptions{MaxCellBytes: 3, MaxRows: 2})
	ctx := context.Background()
	for _, q := range []string{
		"SELECT * FROM patients ORDER BY subject_id",
		"SELECT p.subject_id AS id, a.admittime, a.admission_type FROM admissions a JOIN patients p USING (subject_id) ORDER BY hadm_id",
		"SELECT * FROM patients WHERE subject_id = 1",
		"SELECT 1 AS one WHERE false",
		"EXPLAIN SELECT 1",
	} {
		want, err := e.Query(ctx, q)
		if err != nil {
			t.Fatal(q, err)
		}
		s, err := e.Stream(ctx, q)
		if err != nil {
			t.Fatal(q, err)
		}
		cols := s.Columns()
		rows := readAll(t, s)
		st := s.Stats()
		if !reflect.DeepEqual(cols, want.Columns) {
			t.Errorf("%s: columns %+v, want %+v", q, cols, want.Columns)
		}
		if len(rows) != len(want.Rows) || len(rows) > 0 && !reflect.DeepEqual(rows, want.Rows) {
			t.Errorf("%s: rows %#v, want %#v", q, rows, want.Rows)
		}
		if st.Truncated != want.Truncated || st.TruncatedBy != want.TruncatedBy || st.CutCells != want.CutCells || st.Rows != int64(len(want.Rows)) {
			t.Errorf("%s: stats %+v, want truncated %v by %q, %d cut cells", q, st, want.Truncated, want.TruncatedBy, want.CutCells)
		}
	}
}

// TestStreamRefusals: a write is refused before any row with the errors
// of Query (the gate's, or the server's for what reaches it), and a
// mistake is PostgreSQL's message with its position.
func TestStreamRefusals(t *testing.T) {
	db := newTestDB(t)
	e := db.open(t, datasets.RunnerOptions{})
	ctx := context.Background()
	for _, q := range []string{
		"DELETE FROM patients",
		"INSERT INTO patients (subject_id, gender) VALUES (9, 'F')",
		"SELECT 1; DROP TABLE patients",
		"SELECT nextval('clin.ids')",
	} {
		s, err := e.Stream(ctx, q)
		if err == nil {
			n := 0
			for s.Next() {
				n++
			}
			err = s.Err()
			s.Close()
			if n > 0 {
				t.Errorf("%s: %d rows before the refusal", q, n)
			}
		}
		var refused *datasets.RefusedError
		if !errors.As(err, &refused) {
			t.Errorf("%s: error %v (%T), want a refusal", q, err, err)
		}
	}
	_, err := e.Stream(ctx, "SELECT nosuch FROM patients")
	var qe *datasets.QueryError
	if !errors.As(err, &qe) || qe.State != "42703" {
		t.Fatalf("unknown column: %v", err)
	}
	var n int64
	if err := db.c.Super(t, db.name).QueryRow(ctx, "SELECT count(*) FROM clin.patients").Scan(&n); err != nil || n != 3 {
		t.Fatalf("patients after the refusals: %d, %v", n, err)
	}
}

// openTransactions counts the engine's sessions on the database that are
// in a transaction or running a statement, seen by the superuser.
func openTransactions(t *testing.T, db testDB) int {
	t.Helper()
	var n int
	err := db.c.Super(t, db.name).QueryRow(context.Background(),
		"SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND application_name = 'clinsight' AND (xact_start IS NOT NULL OR state <> 'idle')",
		db.name).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// waitNoTransaction waits (with a deadline) until no session of the engine
// holds a transaction open.
func waitNoTransaction(t *testing.T, db testDB) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for openTransactions(t, db) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d transactions of the engine still open", openTransactions(t, db))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestStreamCancelAndClose: a stream cancelled mid-result ends with the
// cancel, and one closed early ends its transaction; the engine's pool is
// usable after both, and no transaction stays open on the server.
func TestStreamCancelAndClose(t *testing.T) {
	db := newTestDB(t)
	e := db.open(t, datasets.RunnerOptions{MaxRows: 10_000_000})
	const q = "SELECT g AS id, repeat('x', 50) AS note FROM generate_series(1, 5000000) g"
	ctx, cancel := context.WithCancel(context.Background())
	s, err := e.Stream(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2500 && s.Next(); i++ {
	}
	if openTransactions(t, db) != 1 {
		t.Fatalf("a stream under way: %d open transactions, want 1", openTransactions(t, db))
	}
	cancel()
	if s.Next() {
		t.Fatal("a row after the cancel")
	}
	if !errors.Is(s.Err(), context.Canceled) {
		t.Fatalf("error after the cancel: %v", s.Err())
	}
	s.Close()
	waitNoTransaction(t, db)

	// Closed early by the reader: the transaction ends too.
	s, err = e.Stream(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 1500 && s.Next(); i++ {
	}
	s.Close()
	if s.Next() {
		t.Fatal("a row after Close")
	}
	waitNoTransaction(t, db)

	// The pool is usable: every connection of it.
	for range 6 {
		res, err := e.Query(context.Background(), "SELECT count(*) AS n FROM patients")
		if err != nil || res.Rows[0][0] != int64(3) {
			t.Fatalf("a query after the streams: %v %v", res, err)
		}
	}
	waitNoTransaction(t, db)
}

// TestStreamTimeLimit: the time limit counts the server's time on the
// statement; a statement slower than the limit ends with TimeoutError and
// its transaction.
func TestStreamTimeLimit(t *testing.T) {
	db := newTestDB(t)
	e := db.open(t, datasets.RunnerOptions{Timeout: 300 * time.Millisecond})
	s, err := e.Stream(context.Background(), "SELECT g, pg_sleep(0.2) FROM generate_series(1, 20) g")
	if err == nil {
		for s.Next() {
		}
		err = s.Err()
		s.Close()
	}
	var te *datasets.TimeoutError
	if !errors.As(err, &te) {
		t.Fatalf("error %v (%T), want a timeout", err, err)
	}
	waitNoTransaction(t, db)
}

// TestStreamBoundedMemory reads 200,000 rows of 100 bytes (about 20 MB
// of values, far more with Go's per-value overhead) and samples the heap
// meanwhile: a stream holds one row, so the heap stays near what it was.
func TestStreamBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 200,000 rows")
	}
	db := newTestDB(t)
	e := db.open(t, datasets.RunnerOptions{MaxRows: 300_000, Timeout: 2 * time.Minute})
	runtime.GC()
	var base runtime.MemStats
	runtime.ReadMemStats(&base)
	var peak atomic.Uint64
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			var m runtime.MemStats
			runtime.ReadMemStats(&m)
			if m.HeapInuse > peak.Load() {
				peak.Store(m.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	s, err := e.Stream(context.Background(), "SELECT g AS id, repeat(md5(g::text), 3) || 'abcd' AS note, g * 0.5 AS half FROM generate_series(1, 200000) g")
	if err != nil {
		t.Fatal(err)
	}
	var n, sum int64
	for s.Next() {
		n++
		sum += s.Row()[0].(int64)
	}
	close(stop)
	<-done
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if n != 200_000 || sum != 200_000*200_001/2 || s.Stats().Truncated {
		t.Fatalf("%d rows summing to %d (truncated %v)", n, sum, s.Stats().Truncated)
	}
	grew := int64(peak.Load()) - int64(base.HeapInuse)
	t.Logf("200,000 rows streamed: heap in use %.1f MB before, peak %.1f MB (+%.1f MB)",
		float64(base.HeapInuse)/1e6, float64(peak.Load())/1e6, float64(grew)/1e6)
	if grew > 16<<20 {
		t.Errorf("the heap grew by %.1f MB reading a stream", float64(grew)/1e6)
	}
}

// TestStreamSlowReaderWithinTheLimit: the reader's own time between rows
// (a workbook being written) does not count against the time limit: a
// stream read for longer than the limit, slowly, returns every row.
func TestStreamSlowReaderWithinTheLimit(t *testing.T) {
	db := newTestDB(t)
	const limit = 2 * time.Second
	e := db.open(t, datasets.RunnerOptions{Timeout: limit})
	start := time.Now()
	s, err := e.Stream(context.Background(), "SELECT g FROM generate_series(1, 2500) g")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for s.Next() {
		n++
		time.Sleep(time.Millisecond) // the reader's work on the row
	}
	s.Close()
	if err := s.Err(); err != nil || n != 2500 {
		t.Fatalf("%d rows read in %s, error %v", n, time.Since(start), err)
	}
	if took := time.Since(start); took <= limit {
		t.Fatalf("read in %s, within the limit: the test shows nothing", took)
	}
}

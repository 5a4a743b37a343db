package postgres

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/streamtest"
)

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
		rows := streamtest.ReadAll(t, s)
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
	if db.c.OpenTransactions(t, db.name) != 1 {
		t.Fatalf("a stream under way: %d open transactions, want 1", db.c.OpenTransactions(t, db.name))
	}
	cancel()
	if s.Next() {
		t.Fatal("a row after the cancel")
	}
	if !errors.Is(s.Err(), context.Canceled) {
		t.Fatalf("error after the cancel: %v", s.Err())
	}
	s.Close()
	db.c.WaitNoTransaction(t, db.name)

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
	db.c.WaitNoTransaction(t, db.name)

	// The pool is usable: every connection of it.
	for range 6 {
		res, err := e.Query(context.Background(), "SELECT count(*) AS n FROM patients")
		if err != nil || res.Rows[0][0] != int64(3) {
			t.Fatalf("a query after the streams: %v %v", res, err)
		}
	}
	db.c.WaitNoTransaction(t, db.name)
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
	db.c.WaitNoTransaction(t, db.name)
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
	heap := streamtest.SampleHeap(5 * time.Millisecond)
	s, err := e.Stream(context.Background(), "SELECT g AS id, repeat(md5(g::text), 3) || 'abcd' AS note, g * 0.5 AS half FROM generate_series(1, 200000) g")
	if err != nil {
		t.Fatal(err)
	}
	var n, sum int64
	for s.Next() {
		n++
		sum += s.Row()[0].(int64)
	}
	base, peak := heap.Stop()
	if err := s.Err(); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if n != 200_000 || sum != 200_000*200_001/2 || s.Stats().Truncated {
		t.Fatalf("%d rows summing to %d (truncated %v)", n, sum, s.Stats().Truncated)
	}
	grew := int64(peak) - int64(base)
	t.Logf("200,000 rows streamed: heap in use %.1f MB before, peak %.1f MB (+%.1f MB)",
		float64(base)/1e6, float64(peak)/1e6, float64(grew)/1e6)
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

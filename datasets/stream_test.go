package datasets

import (
	"context"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/internal/streamtest"
)

// TestStreamEqualsQuery: the rows a stream reads are Query's, value for
// value and type for type, with the same columns.
func TestStreamEqualsQuery(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{})
	ctx := context.Background()
	for _, q := range []string{
		"SELECT subject_id, gender, weight, dod, admittime, photo, note FROM patients ORDER BY subject_id",
		"SELECT p.subject_id, a.hadm_id FROM patients p JOIN admissions a USING (subject_id) ORDER BY 2",
		"SELECT * FROM patients WHERE 0",
	} {
		res, err := r.Query(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		s, err := r.Stream(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(s.Columns(), res.Columns) {
			t.Errorf("%s: columns %v, want %v", q, s.Columns(), res.Columns)
		}
		rows := streamtest.ReadAll(t, s)
		if len(rows) != len(res.Rows) || (len(rows) > 0 && !reflect.DeepEqual(rows, res.Rows)) {
			t.Errorf("%s: stream rows %v, want %v", q, rows, res.Rows)
		}
		if st := s.Stats(); st.Rows != int64(len(res.Rows)) || st.Truncated {
			t.Errorf("%s: stats %+v, want %d rows, not truncated", q, st, len(res.Rows))
		}
	}
}

// TestStreamRowAndCellCaps: a stream stops at the row cap and says so;
// text longer than the cell cap is cut with the marker, as Query cuts it.
func TestStreamRowAndCellCaps(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{MaxRows: 3, MaxCellBytes: 10})
	q := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 10) SELECT x, printf('%020d', x) FROM c"
	s, err := r.Stream(context.Background(), q)
	if err != nil {
		t.Fatal(err)
	}
	rows := streamtest.ReadAll(t, s)
	st := s.Stats()
	if len(rows) != 3 || st.Rows != 3 || !st.Truncated || st.TruncatedBy != CapRows {
		t.Fatalf("got %d rows, stats %+v; want 3 rows truncated by the row cap", len(rows), st)
	}
	if st.CutCells != 3 {
		t.Errorf("cut cells %d, want 3", st.CutCells)
	}
	want := "0000000000" + CutMarker(10, 20)
	if rows[0][1] != want {
		t.Errorf("cell %q, want %q", rows[0][1], want)
	}
	if n := st.Notice(); !strings.Contains(n, "first 3 rows") || !strings.Contains(n, "cut") {
		t.Errorf("notice %q names neither the rows kept nor the cut values", n)
	}
	// Exactly the cap is not truncated.
	s, err = r.Stream(context.Background(), "SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3")
	if err != nil {
		t.Fatal(err)
	}
	if rows := streamtest.ReadAll(t, s); len(rows) != 3 || s.Stats().Truncated {
		t.Errorf("3 rows under a cap of 3: got %d, truncated %v", len(rows), s.Stats().Truncated)
	}
}

// TestStreamRefusesWhatQueryRefuses: the gate, the authorizer and SQLite's
// read-only verdict stand before a stream as before Query, and the
// database is unchanged.
func TestStreamRefusesWhatQueryRefuses(t *testing.T) {
	path := newFixtureDB(t)
	r := newTestRunner(t, path, RunnerOptions{})
	ctx := context.Background()
	for _, q := range []string{
		"DELETE FROM patients",
		"SELECT 1; DROP TABLE patients",
		"WITH x AS (SELECT 1) DELETE FROM patients",
		"SELECT load_extension('x')",
		"PRAGMA writable_schema=1",
		"ATTACH DATABASE 'x.db' AS x",
	} {
		s, err := r.Stream(ctx, q)
		if err == nil {
			s.Close()
			t.Errorf("%q: streamed, want refused", q)
			continue
		}
		var refused *RefusedError
		var qe *QueryError
		if !errors.As(err, &refused) && !errors.As(err, &qe) {
			t.Errorf("%q: error %T %v, want a refusal or a query error", q, err, err)
		}
	}
	res, err := r.Query(ctx, "SELECT count(*) FROM patients")
	if err != nil || res.Rows[0][0] != int64(4) {
		t.Fatalf("patients after the refusals: %v %v, want 4", res, err)
	}
}

// TestStreamTimeLimitCountsTheDatabase: a statement that runs past the
// time limit is stopped with a TimeoutError, while a reader that spends
// longer than the limit between rows is not.
func TestStreamTimeLimitCountsTheDatabase(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{Timeout: 200 * time.Millisecond})
	ctx := context.Background()
	slow := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c"
	s, err := r.Stream(ctx, slow)
	if err != nil {
		t.Fatal(err)
	}
	for s.Next() {
	}
	var te *TimeoutError
	if !errors.As(s.Err(), &te) {
		t.Fatalf("endless statement: error %v, want a TimeoutError", s.Err())
	}
	s.Close()

	// The reader is the slow part here: it waits twice the limit between
	// rows (this wait is what is tested, not a synchronisation).
	s, err = r.Stream(ctx, "SELECT 1 UNION ALL SELECT 2 UNION ALL SELECT 3")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for s.Next() {
		n++
		time.Sleep(150 * time.Millisecond)
	}
	if err := s.Err(); err != nil || n != 3 {
		t.Fatalf("slow reader: %d rows, error %v; want 3 rows and no error", n, err)
	}
}

// TestStreamCancel: cancelling the context ends the rows with the
// context's error.
func TestStreamCancel(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{MaxRows: 1_000_000})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	s, err := r.Stream(ctx, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 100000) SELECT x FROM c")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	n := 0
	for s.Next() {
		if n++; n == 10 {
			cancel()
		}
	}
	if !errors.Is(s.Err(), context.Canceled) || n != 10 {
		t.Fatalf("after cancel: %d rows, error %v; want 10 rows and context.Canceled", n, s.Err())
	}
}

package postgres

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinsight/clinsight/datasets"
)

func TestQueryValuesAndTypes(t *testing.T) {
	d := newTestDB(t)
	// A role whose defaults write dates another way: results are ISO all the same.
	d.c.Exec(t, d.name, "ALTER DATABASE "+d.name+" SET DateStyle = 'SQL, DMY'")
	e := d.open(t, datasets.RunnerOptions{})
	res, err := e.Query(context.Background(),
		`SELECT subject_id, gender, anchor_age::int8 AS age8, dob, note, photo, score, weight, alive
		   FROM patients ORDER BY subject_id;`)
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.ColumnNames(), ","); got != "subject_id,gender,age8,dob,note,photo,score,weight,alive" {
		t.Fatalf("columns = %s", got)
	}
	if res.Columns[0].DeclType != "int4" || res.Columns[3].DeclType != "date" {
		t.Errorf("decltypes = %+v", res.Columns)
	}
	want := [][]any{
		{int64(1), "F", int64(54), "2130-01-02", "first", datasets.Blob{1, 2, 0xff}, 1.5, 61.25, "true"},
		{int64(2), "M", int64(17), "2140-05-06", nil, nil, 12345.678, nil, "false"},
		{int64(3), "F", int64(80), nil, "third", datasets.Blob{}, nil, float64(70), nil},
	}
	if len(res.Rows) != len(want) {
		t.Fatalf("rows = %d, want %d", len(res.Rows), len(want))
	}
	for i := range want {
		for j := range want[i] {
			g, w := res.Rows[i][j], want[i][j]
			if gb, ok := g.(datasets.Blob); ok {
				if wb, ok := w.(datasets.Blob); !ok || string(gb) != string(wb) {
					t.Errorf("row %d col %d = %#v, want %#v", i, j, g, w)
				}
				continue
			}
			if g != w {
				t.Errorf("row %d col %d = %#v (%T), want %#v (%T)", i, j, g, g, w, w)
			}
		}
	}
	if res.Truncated || res.CutCells != 0 || res.Notice() != "" {
		t.Errorf("truncated %v cut %d notice %q", res.Truncated, res.CutCells, res.Notice())
	}
}

func TestQueryForms(t *testing.T) {
	d := newTestDB(t)
	e := d.open(t, datasets.RunnerOptions{})
	for _, q := range []string{
		"SELECT 1",
		"  -- leading comment\nSELECT 1 -- trailing comment",
		"/* a /* nested */ comment */ SELECT 1;;",
		"WITH x AS (SELECT 1 AS a) SELECT a FROM x",
		"VALUES (1)",
		"TABLE clin.adults",
		"(SELECT 1) UNION (SELECT 2)",
		"SELECT FROM patients",
		"SELECT a.subject_id, b.subject_id FROM patients a JOIN admissions b USING (subject_id)",
		"EXPLAIN SELECT * FROM patients",
		"EXPLAIN (ANALYZE, COSTS OFF) SELECT count(*) FROM admissions",
		"SHOW search_path",
		"SELECT $$dollar; quoted$$, E'it''s \\' fine', 'semi;colon'",
		"SELECT current_setting('statement_timeout')",
		"SELECT * FROM patients WHERE gender ILIKE 'f' AND dob < date '2200-01-01' + interval '1 day'",
	} {
		res, err := e.Query(context.Background(), q)
		if err != nil {
			t.Errorf("%q: %v", q, err)
			continue
		}
		if len(res.Rows) == 0 {
			t.Errorf("%q: no rows", q)
		}
	}
	res, err := e.Query(context.Background(), "SHOW search_path")
	if err != nil || res.Rows[0][0] != "clin" {
		t.Errorf("search_path = %v, %v; want clin", res.Rows, err)
	}
}

func TestQueryErrorsCarryThePosition(t *testing.T) {
	d := newTestDB(t)
	e := d.open(t, datasets.RunnerOptions{})
	_, err := e.Query(context.Background(), "SELECT subject_id,\n  gendr FROM patients")
	var qe *datasets.QueryError
	if !errors.As(err, &qe) {
		t.Fatalf("err = %T %v, want *QueryError", err, err)
	}
	want := "column \"gendr\" does not exist\nLINE 2:   gendr FROM patients\n          ^"
	if !strings.HasPrefix(qe.Message, want) {
		t.Errorf("message =\n%s\nwant prefix\n%s", qe.Message, want)
	}
	if !strings.Contains(qe.Message, "HINT:") {
		t.Errorf("no hint in %q", qe.Message)
	}
	if err := e.Check(context.Background(), "SELECT nope FROM patients"); !errors.As(err, &qe) {
		t.Errorf("Check of an unknown column: %v", err)
	}
	if err := e.Check(context.Background(), "SELECT gender FROM patients"); err != nil {
		t.Errorf("Check: %v", err)
	}
}

func TestCaps(t *testing.T) {
	d := newTestDB(t)
	ctx := context.Background()
	t.Run("rows", func(t *testing.T) {
		e := d.open(t, datasets.RunnerOptions{MaxRows: 10})
		res, err := e.Query(ctx, "SELECT g FROM generate_series(1, 1000000) g")
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Rows) != 10 || !res.Truncated || res.TruncatedBy != datasets.CapRows || res.Rows[9][0] != int64(10) {
			t.Fatalf("rows %d truncated %v by %q", len(res.Rows), res.Truncated, res.TruncatedBy)
		}
		res, err = e.Query(ctx, "SELECT g FROM generate_series(1, 10) g")
		if err != nil || len(res.Rows) != 10 || res.Truncated {
			t.Fatalf("exactly the cap: rows %d truncated %v, %v", len(res.Rows), res.Truncated, err)
		}
		res, err = e.Query(ctx, "EXPLAIN VERBOSE SELECT * FROM patients a, admissions b, patients c, admissions d WHERE a.subject_id = b.subject_id")
		if err != nil || len(res.Rows) > 10 {
			t.Fatalf("an unwrapped statement over the cap: rows %d, %v", len(res.Rows), err)
		}
		if _, err := e.Query(ctx, "SELECT 1"); err != nil {
			t.Fatalf("the engine after a cut result: %v", err)
		}
	})
	t.Run("cell", func(t *testing.T) {
		e := d.open(t, datasets.RunnerOptions{MaxCellBytes: 100})
		res, err := e.Query(ctx, "SELECT repeat('é', 1000) AS t, decode(repeat('ab', 300), 'hex') AS b, repeat('x', 100) AS fits, '{\"a\": 1}'::jsonb AS j")
		if err != nil {
			t.Fatal(err)
		}
		s := res.Rows[0][0].(string)
		if !strings.HasPrefix(s, strings.Repeat("é", 50)+"…[cut") || strings.Contains(s, "ée") {
			t.Errorf("cut text = %q", s)
		}
		if !strings.Contains(s, "of 2.0 KiB]") {
			t.Errorf("the marker does not give the full length: %q", s)
		}
		if b := res.Rows[0][1].(datasets.Blob); len(b) != 100 || b[0] != 0xab {
			t.Errorf("cut blob = %d bytes", len(b))
		}
		if res.Rows[0][2] != strings.Repeat("x", 100) || res.Rows[0][3] != `{"a": 1}` {
			t.Errorf("uncut values = %q %q", res.Rows[0][2], res.Rows[0][3])
		}
		if res.CutCells != 2 || !strings.Contains(res.Notice(), "2 values were longer than 100 bytes") {
			t.Errorf("cut %d, notice %q", res.CutCells, res.Notice())
		}
	})
	t.Run("huge value is cut on the server", func(t *testing.T) {
		// 64 MiB of text with a 16 MiB message limit: the value can only
		// arrive because the server cut it.
		e := d.open(t, datasets.RunnerOptions{MaxCellBytes: 1000, MaxResultBytes: 1 << 20})
		res, err := e.Query(ctx, "SELECT repeat('x', 64 << 20) AS big, 1 AS one")
		if err != nil {
			t.Fatal(err)
		}
		if s := res.Rows[0][0].(string); !strings.HasPrefix(s, strings.Repeat("x", 1000)+"…[cut: first 1000 bytes of 64 MiB]") {
			t.Errorf("big = %.80q", s)
		}
	})
	t.Run("result bytes", func(t *testing.T) {
		e := d.open(t, datasets.RunnerOptions{MaxResultBytes: 100_000})
		res, err := e.Query(ctx, "SELECT g, repeat('y', 1000) FROM generate_series(1, 100000) g")
		if err != nil {
			t.Fatal(err)
		}
		if !res.Truncated || res.TruncatedBy != datasets.CapBytes || len(res.Rows) < 50 || len(res.Rows) > 100 {
			t.Fatalf("rows %d truncated %v by %q", len(res.Rows), res.Truncated, res.TruncatedBy)
		}
		if !strings.Contains(res.Notice(), "size limit") {
			t.Errorf("notice %q", res.Notice())
		}
		if _, err := e.Query(ctx, "SELECT 1"); err != nil {
			t.Fatalf("the engine after a cut result: %v", err)
		}
	})
}

// activeQueries lists the queries other backends are running that contain
// marker.
func activeQueries(t *testing.T, d testDB, marker string) []string {
	t.Helper()
	conn := d.c.Super(t, d.name)
	rows, err := conn.Query(context.Background(),
		"SELECT query FROM pg_stat_activity WHERE state = 'active' AND pid <> pg_backend_pid() AND strpos(query, $1) > 0", marker)
	if err != nil {
		t.Fatal(err)
	}
	qs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

// waitFor polls cond until it holds or the deadline passes.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTimeoutStopsTheServer(t *testing.T) {
	d := newTestDB(t)
	e := d.open(t, datasets.RunnerOptions{Timeout: time.Second})
	start := time.Now()
	_, err := e.Query(context.Background(), "SELECT count(*) /* runaway-timeout */ FROM generate_series(1, 1e12)")
	elapsed := time.Since(start)
	var te *datasets.TimeoutError
	if !errors.As(err, &te) || te.Limit != time.Second {
		t.Fatalf("err = %T %v, want a 1 s TimeoutError", err, err)
	}
	if elapsed > 1500*time.Millisecond {
		t.Errorf("returned after %s, want within 1.5 s", elapsed)
	}
	t.Logf("timeout returned after %s", elapsed)
	if qs := activeQueries(t, d, "runaway-timeout"); len(qs) > 0 {
		t.Errorf("the server still runs %q", qs)
	}
}

func TestCancelSendsACancelRequest(t *testing.T) {
	d := newTestDB(t)
	e := d.open(t, datasets.RunnerOptions{Timeout: time.Minute})
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var (
		wg  sync.WaitGroup
		err error
	)
	wg.Add(1)
	go func() {
		defer wg.Done()
		_, err = e.Query(ctx, "SELECT count(*) /* runaway-cancel */ FROM generate_series(1, 1e12)")
	}()
	waitFor(t, "the query to run on the server", func() bool { return len(activeQueries(t, d, "runaway-cancel")) > 0 })
	start := time.Now()
	cancel()
	wg.Wait()
	if err == nil || !errors.Is(err, context.Canceled) || !strings.Contains(err.Error(), "cancelled") {
		t.Fatalf("err = %v, want a cancellation", err)
	}
	if time.Since(start) > 1500*time.Millisecond {
		t.Errorf("cancel took %s", time.Since(start))
	}
	// The backend stops at once on the cancel request; it would run on for
	// hours with the socket merely closed.
	waitFor(t, "the server to stop the query", func() bool { return len(activeQueries(t, d, "runaway-cancel")) == 0 })
	if _, err := e.Query(context.Background(), "SELECT 1"); err != nil {
		t.Fatalf("the engine after a cancel: %v", err)
	}
}

func TestConcurrentQueries(t *testing.T) {
	d := newTestDB(t)
	e := d.open(t, datasets.RunnerOptions{})
	var wg sync.WaitGroup
	errs := make(chan error, 16)
	for i := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.Query(context.Background(), "SELECT count(*) FROM admissions")
			if err == nil && res.Rows[0][0] != int64(3) {
				err = errors.New("wrong count")
			}
			if err == nil && i%4 == 0 {
				_, err = e.Query(context.Background(), "SELECT nextval('clin.ids')")
				if err == nil {
					err = errors.New("nextval ran")
				} else {
					err = nil
				}
			}
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
}

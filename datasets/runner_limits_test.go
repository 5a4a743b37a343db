package datasets

import (
	"context"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sqlite3 "modernc.org/sqlite/lib"
)

// Statements that keep SQLite inside one call of a built-in function, where
// sqlite3_interrupt is not seen: the time limit and Cancel used to wait for
// the call to end (randomblob(999999999): 57 s and 987 MB under a 10 s
// limit; a quadratic instr or LIKE on texts of a few MB: minutes to hours).

// aText is SQL for a text of n letters a, which SQLite builds in one
// linear call.
func aText(n int) string { return fmt.Sprintf("printf('%%.*c', %d, 'a')", n) }

// likeRun is the length of the run of a's in likeQuery's pattern, under
// the pattern limit (maxLikePatternBytes) with its % and b.
const likeRun = 900

// likeQuery matches n letters a against '%', 900 letters a and a b: about
// 900·n character comparisons in one call of like.
func likeQuery(n int) string {
	return fmt.Sprintf("SELECT %s LIKE '%%' || %s || 'b'", aText(n), aText(likeRun))
}

// oneCallTarget is how long the hostile statements of these tests keep
// SQLite in one call: well past a 1 s limit and its grace, short enough
// that the tests see them end.
const oneCallTarget = 8 * time.Second

// sizeFor returns the size n at which query(n) keeps SQLite busy for about
// target on this machine (and under the race detector, which slows the
// transpiled SQLite): it doubles n from n0 until one run takes 200 ms, then
// scales n by the cost's exponent in n (2: quadratic, 1: linear).
func sizeFor(t *testing.T, path string, query func(int) string, n0 int, exponent float64, target time.Duration) int {
	t.Helper()
	r := newTestRunner(t, path, RunnerOptions{Timeout: time.Minute})
	for n := n0; ; n *= 2 {
		start := time.Now()
		if _, err := r.Query(context.Background(), query(n)); err != nil {
			t.Fatalf("calibrate at n = %d: %v", n, err)
		}
		took := time.Since(start)
		if took >= 200*time.Millisecond {
			size := int(float64(n) * math.Pow(float64(target)/float64(took), 1/exponent))
			t.Logf("calibration: n = %d took %s; n = %d should take about %s", n, took.Round(time.Millisecond), size, target)
			if 2*size > maxValueBytes {
				t.Fatalf("n = %d would build values over the length limit", size)
			}
			return size
		}
	}
}

// openFiles counts this process's open file descriptors on the file at
// path (Linux: /proc/self/fd), -1 elsewhere.
func openFiles(t *testing.T, path string) int {
	t.Helper()
	if runtime.GOOS != "linux" {
		return -1
	}
	want, err := filepath.EvalSymlinks(path)
	if err != nil {
		t.Fatal(err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, fd := range fds {
		if target, err := os.Readlink(filepath.Join("/proc/self/fd", fd.Name())); err == nil && target == want {
			n++
		}
	}
	return n
}

// noneAbandoned waits until none of r's abandoned statements is running
// (each has closed its connection by then), or within has passed, and
// reports which.
func noneAbandoned(r *Runner, within time.Duration) bool {
	deadline := time.Now().Add(within)
	for r.abandoned.Running() > 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(20 * time.Millisecond)
	}
	return true
}

// waitAbandonedEnd waits, until a generous deadline, for the runner's
// abandoned statements to end, and checks that their connections are
// closed: the runner's count of open connections, and the file
// descriptors on the database file.
func waitAbandonedEnd(t *testing.T, r *Runner, within time.Duration) {
	t.Helper()
	start := time.Now()
	if !noneAbandoned(r, within) {
		t.Fatalf("%d abandoned statements still running after %s", r.abandoned.Running(), within)
	}
	t.Logf("the abandoned statements ended %s later", time.Since(start).Round(time.Millisecond))
	if n := r.conns.Load(); n != 0 {
		t.Errorf("%d connections still open after the abandoned statements ended, want 0", n)
	}
	if n := openFiles(t, r.path); n > 0 {
		t.Errorf("%d file descriptors still open on %s, want 0", n, r.path)
	}
}

// stopBound is when a hostile statement must have returned: its limit,
// the grace, and generous slack for a loaded machine.
func stopBound(limit time.Duration) time.Duration { return limit + interruptGrace + 2*time.Second }

// TestRunnerQuadraticLikeStopsAtLimit: a LIKE that keeps SQLite in one
// call for about 8 s, under a 1 s limit, returns a TimeoutError within
// limit + grace + slack; the statement ends on its own and closes its
// connection, and the runner runs the next query.
func TestRunnerQuadraticLikeStopsAtLimit(t *testing.T) {
	path := newFixtureDB(t)
	n := sizeFor(t, path, likeQuery, 1000, 1, oneCallTarget)
	r := newTestRunner(t, path, RunnerOptions{Timeout: time.Second})
	start := time.Now()
	_, err := r.Query(context.Background(), likeQuery(n))
	elapsed := time.Since(start)
	t.Logf("LIKE on %d letters under a 1 s limit returned after %s: %v", n, elapsed.Round(time.Millisecond), err)
	if elapsed > stopBound(time.Second) {
		t.Errorf("Query returned after %s, want ≤ %s", elapsed, stopBound(time.Second))
	}
	var te *TimeoutError
	if !errors.As(err, &te) || te.Limit != time.Second || !te.LeftRunning {
		t.Fatalf("got %v (%T), want a 1 s *TimeoutError, left running", err, err)
	}
	if got := r.abandoned.Running(); got != 1 && elapsed < oneCallTarget/2 {
		t.Errorf("%d statements left running, want 1", got)
	}
	waitAbandonedEnd(t, r, 20*oneCallTarget)
	res, err := r.Query(context.Background(), "SELECT count(*) FROM patients")
	if err != nil || res.Rows[0][0] != int64(4) {
		t.Fatalf("query after the abandoned statement: %v %v", res, err)
	}
}

// TestRunnerQuadraticLikeStopsOnCancel: a LIKE that keeps SQLite in one
// call for about 8 s, cancelled after 300 ms, returns the cancel error
// within a second and a half or so; Close does not wait for the statement,
// which then closes its connection; a new runner on the file works.
func TestRunnerQuadraticLikeStopsOnCancel(t *testing.T) {
	path := newFixtureDB(t)
	n := sizeFor(t, path, likeQuery, 1000, 1, oneCallTarget)
	r, err := NewRunner(context.Background(), path, RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	const cancelAfter = 300 * time.Millisecond
	stopCancel := time.AfterFunc(cancelAfter, cancel)
	defer stopCancel.Stop()
	start := time.Now()
	_, err = r.Query(ctx, likeQuery(n))
	elapsed := time.Since(start)
	t.Logf("LIKE on %d letters, cancelled after %s, returned after %s: %v", n, cancelAfter, elapsed.Round(time.Millisecond), err)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v (%T), want context.Canceled", err, err)
	}
	if elapsed > stopBound(cancelAfter) {
		t.Errorf("Query returned after %s, want ≤ %s", elapsed, stopBound(cancelAfter))
	}
	closeStart := time.Now()
	r.Close()
	if d := time.Since(closeStart); d > time.Second {
		t.Errorf("Close took %s with a statement left running, want at once", d)
	}
	waitAbandonedEnd(t, r, 20*oneCallTarget)
	r2 := newTestRunner(t, path, RunnerOptions{})
	if res, err := r2.Query(context.Background(), "SELECT count(*) FROM patients WHERE gender LIKE 'f%'"); err != nil || res.Rows[0][0] != int64(2) {
		t.Fatalf("query after the abandoned statement: %v %v", res, err)
	}
}

// TestRunnerAbandonedBound: with two statements left running (the
// default bound), the next query is refused at once with a
// StillRunningError; once they end, queries run again.
func TestRunnerAbandonedBound(t *testing.T) {
	path := newFixtureDB(t)
	n := sizeFor(t, path, likeQuery, 1000, 1, oneCallTarget)
	r := newTestRunner(t, path, RunnerOptions{Timeout: time.Second})
	var wg sync.WaitGroup
	errs := make([]error, DefaultMaxAbandoned)
	for i := range errs {
		wg.Go(func() { _, errs[i] = r.Query(context.Background(), likeQuery(n)) })
	}
	wg.Wait()
	for i, err := range errs {
		var te *TimeoutError
		if !errors.As(err, &te) {
			t.Fatalf("hostile query %d: %v (%T), want *TimeoutError", i, err, err)
		}
	}
	if got := r.abandoned.Running(); got != DefaultMaxAbandoned {
		t.Fatalf("%d statements left running, want %d", got, DefaultMaxAbandoned)
	}
	start := time.Now()
	_, err := r.Query(context.Background(), "SELECT 1")
	var sr *StillRunningError
	if !errors.As(err, &sr) || sr.Running != DefaultMaxAbandoned {
		t.Fatalf("query with %d statements left running: %v (%T), want *StillRunningError", DefaultMaxAbandoned, err, err)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("refusal took %s, want at once", d)
	}
	if msg := err.Error(); !strings.Contains(msg, "still finishing inside SQLite") || !strings.Contains(msg, "2 stopped queries") {
		t.Errorf("message %q does not say that stopped queries are still finishing", msg)
	}
	if _, err := r.Stream(context.Background(), "SELECT 1"); !errors.As(err, &sr) {
		t.Errorf("stream with statements left running: %v, want *StillRunningError", err)
	}
	if err := r.Check(context.Background(), "SELECT 1"); !errors.As(err, &sr) {
		t.Errorf("check with statements left running: %v, want *StillRunningError", err)
	}
	waitAbandonedEnd(t, r, 20*oneCallTarget)
	if res, err := r.Query(context.Background(), "SELECT count(*) FROM patients"); err != nil || res.Rows[0][0] != int64(4) {
		t.Fatalf("query after the abandoned statements ended: %v %v", res, err)
	}
}

// TestStreamQuadraticStopsAtLimit: a stream's step stuck in one LIKE call
// ends Next within limit + grace + slack with a TimeoutError; Close
// returns at once and the step's goroutine closes the connection.
func TestStreamQuadraticStopsAtLimit(t *testing.T) {
	path := newFixtureDB(t)
	n := sizeFor(t, path, likeQuery, 1000, 1, oneCallTarget)
	r := newTestRunner(t, path, RunnerOptions{Timeout: time.Second})
	start := time.Now()
	s, err := r.Stream(context.Background(), likeQuery(n))
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for s.Next() {
		rows++
	}
	elapsed := time.Since(start)
	t.Logf("stream: %d rows, ended after %s: %v", rows, elapsed.Round(time.Millisecond), s.Err())
	if elapsed > stopBound(time.Second) {
		t.Errorf("Next returned after %s, want ≤ %s", elapsed, stopBound(time.Second))
	}
	var te *TimeoutError
	if !errors.As(s.Err(), &te) || !te.LeftRunning || rows != 0 {
		t.Fatalf("got %d rows, error %v (%T); want none and a *TimeoutError, left running", rows, s.Err(), s.Err())
	}
	closeStart := time.Now()
	s.Close()
	if d := time.Since(closeStart); d > time.Second {
		t.Errorf("Close took %s, want at once", d)
	}
	waitAbandonedEnd(t, r, 20*oneCallTarget)
	s, err = r.Stream(context.Background(), "SELECT subject_id FROM patients")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	got := 0
	for s.Next() {
		got++
	}
	if s.Err() != nil || got != 4 {
		t.Fatalf("stream after the abandoned statement: %d rows, %v", got, s.Err())
	}
}

// TestRunnerValueSizeLimit: a value over 64 MiB is refused by SQLite at
// once, with a message that says what was too big, the limit and what to
// do; values under it still work.
func TestRunnerValueSizeLimit(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{Timeout: 2 * time.Second})
	for _, q := range []string{
		"SELECT zeroblob(100000000)",
		"SELECT length(" + aText(maxValueBytes+1) + ")",
		"SELECT length(group_concat(x)) FROM (SELECT zeroblob(40000000) AS x UNION ALL SELECT zeroblob(40000000))",
	} {
		start := time.Now()
		_, err := r.Query(context.Background(), q)
		var qe *QueryError
		if !errors.As(err, &qe) || qe.Code&0xff != sqlite3.SQLITE_TOOBIG {
			t.Errorf("%s: %v (%T), want a *QueryError with SQLITE_TOOBIG", q, err, err)
			continue
		}
		if d := time.Since(start); d > 2*time.Second {
			t.Errorf("%s: refused after %s", q, d)
		}
		for _, want := range []string{"larger than 64 MiB", "string or blob too big", "substr()"} {
			if !strings.Contains(qe.Message, want) {
				t.Errorf("%s: message %q lacks %q", q, qe.Message, want)
			}
		}
	}
	res, err := r.Query(context.Background(), "SELECT length(zeroblob(60000000)), length(group_concat(note)) FROM patients")
	if err != nil || res.Rows[0][0] != int64(60_000_000) {
		t.Fatalf("values under the limit: %v %v", res, err)
	}
}

// TestRunnerLikePatternLimit: a LIKE or GLOB pattern over 1000 bytes is
// refused with a message naming the limit; one under it runs.
func TestRunnerLikePatternLimit(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{})
	for _, q := range []string{
		"SELECT 'abc' LIKE '%' || " + aText(1200) + " || 'b'",
		"SELECT 'abc' GLOB '*' || " + aText(1200) + " || 'b'",
	} {
		_, err := r.Query(context.Background(), q)
		var qe *QueryError
		if !errors.As(err, &qe) || !strings.Contains(qe.Message, "longer than 1000 bytes") || !strings.Contains(qe.Message, likeTooComplex) {
			t.Errorf("%s: %v (%T), want a *QueryError naming the 1000-byte pattern limit", q, err, err)
		}
	}
	res, err := r.Query(context.Background(), "SELECT 'abc' LIKE '%' || "+aText(likeRun)+" || 'b', 'Abc' LIKE 'a%'")
	if err != nil || res.Rows[0][0] != int64(0) || res.Rows[0][1] != int64(1) {
		t.Fatalf("patterns under the limit: %v %v", res, err)
	}
}

// TestRunnerHugeRandomblobBounded runs randomblob(999999999) under a 2 s
// limit in a child process and measures its peak resident memory: SQLite
// used to allocate and fill 987 MB in one call, for 57 s under a 10 s
// limit. It is refused at once now, and memory does not grow.
func TestRunnerHugeRandomblobBounded(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("peak resident memory is read from /proc/self/status")
	}
	if path := os.Getenv("CLINSIGHT_RANDOMBLOB_DB"); path != "" {
		randomblobChild(t, path)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunnerHugeRandomblobBounded$", "-test.v")
	cmd.Env = append(os.Environ(), "CLINSIGHT_RANDOMBLOB_DB="+newFixtureDB(t))
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	if !strings.Contains(string(out), "randomblob: returned after") {
		t.Fatal("the child did not report its measurement")
	}
}

func randomblobChild(t *testing.T, path string) {
	const limit = 2 * time.Second
	r := newTestRunner(t, path, RunnerOptions{Timeout: limit})
	if _, err := r.Query(context.Background(), "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	before := procKB(t, "VmHWM")
	start := time.Now()
	_, err := r.Query(context.Background(), "SELECT randomblob(999999999)")
	elapsed := time.Since(start)
	// A statement left running would still be allocating: wait for it
	// before reading the peak.
	if !noneAbandoned(r, 5*time.Minute) {
		t.Errorf("%d abandoned statements still running after 5m", r.abandoned.Running())
	}
	growth := procKB(t, "VmHWM") - before
	fmt.Printf("randomblob: returned after %s with %v; peak RSS grew by %d kB\n", elapsed.Round(time.Millisecond), err, growth)
	var qe *QueryError
	if !errors.As(err, &qe) || qe.Code&0xff != sqlite3.SQLITE_TOOBIG {
		t.Errorf("got %v (%T), want a *QueryError with SQLITE_TOOBIG", err, err)
	}
	if elapsed > stopBound(limit) {
		t.Errorf("returned after %s, want ≤ %s", elapsed, stopBound(limit))
	}
	if growth > 64<<10 {
		t.Errorf("peak resident memory grew by %d MiB, want < 64 MiB", growth>>10)
	}
}

// procKB reads a "kB" field of /proc/self/status.
func procKB(t *testing.T, field string) int64 {
	t.Helper()
	v, ok := strings.CutSuffix(procStatus(field), " kB")
	n, err := strconv.ParseInt(v, 10, 64)
	if !ok || err != nil {
		t.Fatalf("read %s from /proc/self/status: %q", field, procStatus(field))
	}
	return n
}

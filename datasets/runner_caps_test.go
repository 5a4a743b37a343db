package datasets

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"
)

// wideRowsQuery is the query of issue 12, defect 4 (5 rows of 100 MB),
// with values of 60 MB: a value over 64 MiB is now refused by SQLite
// (maxValueBytes; TestRunnerValueSizeLimit).
const wideRowsQuery = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 5) SELECT x, zeroblob(60000000) FROM c"

// TestRunnerWideRowsBoundedMemory: 300 MB of values come back as 5 cells
// cut to the cell cap, and the Go heap allocates a few MiB for them, not
// hundreds.
func TestRunnerWideRowsBoundedMemory(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{})
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	res, err := r.Query(context.Background(), wideRowsQuery)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	alloc := after.TotalAlloc - before.TotalAlloc
	t.Logf("5 × 60 MB: %d rows, Go heap allocated %.1f MiB", len(res.Rows), float64(alloc)/(1<<20))
	if len(res.Rows) != 5 {
		t.Fatalf("got %d rows, want 5", len(res.Rows))
	}
	for i, row := range res.Rows {
		if b, ok := row[1].(Blob); !ok || len(b) > 1<<20 {
			t.Fatalf("row %d: value of %d bytes (%T), want at most 1 MiB", i, len(b), row[1])
		}
	}
	if alloc > 32<<20 {
		t.Errorf("the Go heap allocated %.0f MiB for 5 values cut to 1 MiB, want ≤ 32 MiB", float64(alloc)/(1<<20))
	}
}

// TestRunnerWideRowsUnderAddressSpaceLimit runs the query of the issue in a
// child process that may grow its address space by 1 GiB at most (the
// unbounded runner needed 5.5 GB and died with "fatal error: out of
// memory").
func TestRunnerWideRowsUnderAddressSpaceLimit(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("RLIMIT_AS and /proc/self/status are Linux")
	}
	if path := os.Getenv("CLINSIGHT_WIDE_ROWS_DB"); path != "" {
		wideRowsChild(t, path)
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestRunnerWideRowsUnderAddressSpaceLimit$", "-test.v")
	cmd.Env = append(os.Environ(), "CLINSIGHT_WIDE_ROWS_DB="+newFixtureDB(t))
	out, err := cmd.CombinedOutput()
	t.Logf("child:\n%s", out)
	if err != nil {
		t.Fatalf("the query failed with 1 GiB of address space to spare: %v", err)
	}
	if !strings.Contains(string(out), "rows=5 cut=5") {
		t.Fatalf("the child did not report the cut result")
	}
}

// wideRowsChild limits its own address space to what it has now plus
// 1 GiB (the Go runtime reserves address space up front), runs the query,
// and reports the peak resident memory.
func wideRowsChild(t *testing.T, path string) {
	var size uint64
	if _, err := fmt.Sscanf(procStatus("VmSize"), "%d kB", &size); err != nil || size == 0 {
		t.Fatalf("read VmSize: %v", err)
	}
	if err := limitAddressSpace(size<<10 + 1<<30); err != nil {
		t.Fatal(err)
	}
	r := newTestRunner(t, path, RunnerOptions{})
	res, err := r.Query(context.Background(), wideRowsQuery)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Printf("rows=%d cut=%d peak RSS=%s address space at start=%d kB notice=%q\n",
		len(res.Rows), res.CutCells, procStatus("VmHWM"), size, res.Notice())
}

// procStatus reads a field of /proc/self/status ("VmHWM": "123 kB").
func procStatus(field string) string {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return "?"
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), field+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return "?"
}

// TestRunnerCellCap: text is cut at a character boundary and marked, a
// BLOB is cut to the cap, and the result counts and explains the cuts.
func TestRunnerCellCap(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{MaxCellBytes: 10})
	res, err := r.Query(context.Background(),
		"SELECT 'abcdefghijklmno', 'ééééééé', x'00112233445566778899aabb', 'short', 42, zeroblob(3), ''")
	if err != nil {
		t.Fatal(err)
	}
	row := res.Rows[0]
	if want := "abcdefghij" + CutMarker(10, 15); row[0] != want {
		t.Errorf("text cut = %q, want %q", row[0], want)
	}
	s, _ := row[1].(string)
	kept, _, _ := strings.Cut(s, "…[cut")
	if !utf8.ValidString(s) || kept != "ééééé" || !strings.HasSuffix(s, CutMarker(10, 14)) {
		t.Errorf("UTF-8 text cut = %q, want 5 whole characters and the marker", s)
	}
	if b, _ := row[2].(Blob); len(b) != 10 || b[9] != 0x99 {
		t.Errorf("blob cut = %v, want its first 10 bytes", row[2])
	}
	if row[3] != "short" || row[4] != int64(42) || len(row[5].(Blob)) != 3 || row[6] != "" {
		t.Errorf("values under the cap changed: %#v", row[3:])
	}
	if res.CutCells != 3 || res.Truncated {
		t.Errorf("CutCells = %d, Truncated = %v; want 3, false", res.CutCells, res.Truncated)
	}
	if n := res.Notice(); !strings.Contains(n, "3 values were longer than 10 bytes") {
		t.Errorf("notice = %q", n)
	}
}

// TestRunnerResultByteCap: rows past the result size cap are left out and
// the result says so; the row cap says so differently.
func TestRunnerResultByteCap(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{MaxResultBytes: 10_000})
	res, err := r.Query(context.Background(),
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 100) SELECT x, printf('%.1000c', 'a') FROM c")
	if err != nil {
		t.Fatal(err)
	}
	if !res.Truncated || res.TruncatedBy != CapBytes || len(res.Rows) == 0 || len(res.Rows) >= 10 {
		t.Fatalf("rows = %d, Truncated = %v by %q; want a few rows cut by the size cap", len(res.Rows), res.Truncated, res.TruncatedBy)
	}
	if n := res.Notice(); !strings.Contains(n, fmt.Sprintf("Only the first %d rows are shown: the result reached the size limit of 9.8 KiB", len(res.Rows))) {
		t.Errorf("notice = %q", n)
	}
	r = newTestRunner(t, newFixtureDB(t), RunnerOptions{MaxRows: 2})
	res, err = r.Query(context.Background(), "SELECT subject_id FROM patients")
	if err != nil {
		t.Fatal(err)
	}
	if n := res.Notice(); res.TruncatedBy != CapRows || n != "Only the first 2 rows are shown: the result has more rows than the row cap (2)." {
		t.Errorf("row cap: by %q, notice %q", res.TruncatedBy, n)
	}
	res, err = r.Query(context.Background(), "SELECT 1")
	if err != nil || res.Notice() != "" {
		t.Errorf("complete result: notice %q, err %v", res.Notice(), err)
	}
}

func TestFormatBytes(t *testing.T) {
	for n, want := range map[int64]string{0: "0 bytes", 1023: "1023 bytes", 1024: "1 KiB", 1 << 20: "1 MiB",
		100_000_000: "95.4 MiB", 256 << 20: "256 MiB", 3 << 30: "3 GiB"} {
		if got := FormatBytes(n); got != want {
			t.Errorf("FormatBytes(%d) = %q, want %q", n, got, want)
		}
	}
}

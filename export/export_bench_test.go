package export

import (
	"bufio"
	"context"
	"fmt"
	"iter"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// benchRows yields n rows of 10 mixed columns, generated on the fly into one
// reused slice: ids, ages, lab values, flags, timestamps, codes, names, free
// text, a column that is NULL every third row, and a ratio.
func benchRows(n int) iter.Seq2[[]any, error] {
	const pool = 1024 // distinct strings, formatted once
	codes, names, notes := make([]string, pool), make([]string, pool), make([]string, pool)
	for i := range pool {
		codes[i] = fmt.Sprintf("I%02d.%d", i%100, i%10)
		names[i] = fmt.Sprintf("Patient %05d", i)
		notes[i] = fmt.Sprintf("Admitted via ED, ward %d, note #%d: stable", i%40, i)
	}
	base := time.Date(2150, 1, 1, 0, 0, 0, 0, time.UTC)
	return func(yield func([]any, error) bool) {
		row := make([]any, 10)
		for i := range n {
			row[0] = int64(10_000_000 + i)
			row[1] = 18 + i%80
			row[2] = float64(i%5000) / 37.0
			row[3] = i%2 == 0
			row[4] = base.Add(time.Duration(i) * time.Minute)
			row[5] = codes[i%pool]
			row[6] = names[(i*7)%pool]
			row[7] = notes[(i*13)%pool]
			if i%3 == 0 {
				row[8] = nil
			} else {
				row[8] = i % 1000
			}
			row[9] = 1 / float64(i+1)
			if !yield(row, nil) {
				return
			}
		}
	}
}

// BenchmarkExport1Mx10 exports 1,000,000 rows of 10 mixed columns and
// reports rows/s and the peak resident set size in MB.
//
// The peak is VmHWM from /proc/self/status, the high-water mark of the whole
// test process: run this benchmark alone, once, so that nothing else raises
// it:
//
//	go test -run '^$' -bench Export1Mx10 -benchtime 1x ./export/
func BenchmarkExport1Mx10(b *testing.B) {
	const n = 1_000_000
	cols := []string{"subject_id", "age", "lab_value", "flag", "charttime", "icd_code", "name", "note", "nullable", "ratio"}
	dir := b.TempDir()
	path := filepath.Join(dir, "bench.xlsx")
	var elapsed time.Duration
	for b.Loop() {
		start := time.Now()
		sum, err := WriteWorkbook(context.Background(), path,
			[]Table{{Name: "Results", Columns: cols, Rows: benchRows(n)}},
			Provenance{AppVersion: "bench", Query: "SELECT * FROM bench"}, Options{TempDir: dir})
		if err != nil {
			b.Fatal(err)
		}
		elapsed += time.Since(start)
		if sum.Rows != n {
			b.Fatalf("wrote %d rows", sum.Rows)
		}
	}
	b.ReportMetric(float64(n*b.N)/elapsed.Seconds(), "rows/s")
	if hwm, err := vmHWM(); err == nil {
		b.ReportMetric(hwm, "peakRSS_MB")
	} else {
		b.Logf("peak RSS unavailable: %v", err)
	}
	if fi, err := os.Stat(path); err == nil {
		b.ReportMetric(float64(fi.Size())/1e6, "file_MB")
	}
}

// vmHWM returns the process's peak resident set size in MB (Linux only).
func vmHWM() (float64, error) {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmHWM:"); ok {
			kb, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			if err != nil {
				return 0, err
			}
			return kb / 1024, nil
		}
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("no VmHWM in /proc/self/status")
}

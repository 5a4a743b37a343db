package datasets

import (
	"bufio"
	"context"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// labeventsHeader is the header of MIMIC-IV v2.2 hosp/labevents.csv.gz.
const labeventsHeader = "labevent_id,subject_id,hadm_id,specimen_id,itemid,order_provider_id,charttime,storetime,value,valuenum,valueuom,ref_range_lower,ref_range_upper,flag,priority,comments\n"

// writeLabeventsCSV writes a deterministic labevents-shaped CSV of n data
// rows to path: ids, timestamps, numeric and text values, about a third of
// the optional fields empty, and a few quoted comments with commas.
func writeLabeventsCSV(tb testing.TB, path string, n int) {
	tb.Helper()
	f, err := os.Create(path)
	if err != nil {
		tb.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	rng := rand.New(rand.NewPCG(2024, 22))
	units := []string{"mg/dL", "mEq/L", "K/uL", "%", "g/dL", "IU/L"}
	priorities := []string{"ROUTINE", "STAT", ""}
	texts := []string{"NEG", "POS", "TR", "___", "HOLD"}
	base := time.Date(2150, 1, 1, 0, 0, 0, 0, time.UTC)
	w.WriteString(labeventsHeader)
	var buf []byte
	for i := range n {
		buf = buf[:0]
		subject := 10000000 + rng.IntN(100000)
		buf = strconv.AppendInt(buf, int64(i+1), 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(subject), 10)
		buf = append(buf, ',')
		if rng.IntN(3) > 0 {
			buf = strconv.AppendInt(buf, int64(20000000+rng.IntN(10000000)), 10)
		}
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(rng.IntN(100000000)), 10)
		buf = append(buf, ',')
		buf = strconv.AppendInt(buf, int64(50800+rng.IntN(2200)), 10)
		buf = append(buf, ',')
		if rng.IntN(2) == 0 {
			buf = append(buf, 'P')
			buf = strconv.AppendInt(buf, int64(10000+rng.IntN(89999)), 10)
		}
		buf = append(buf, ',')
		t := base.Add(time.Duration(rng.IntN(10*365*24*60)) * time.Minute)
		buf = t.AppendFormat(buf, "2006-01-02 15:04:05")
		buf = append(buf, ',')
		buf = t.Add(time.Duration(rng.IntN(600))*time.Minute).AppendFormat(buf, "2006-01-02 15:04:05")
		buf = append(buf, ',')
		numeric := rng.IntN(5) > 0
		v := float64(rng.IntN(20000)) / 10
		if numeric {
			buf = strconv.AppendFloat(buf, v, 'f', -1, 64)
		} else {
			buf = append(buf, texts[rng.IntN(len(texts))]...)
		}
		buf = append(buf, ',')
		if numeric {
			buf = strconv.AppendFloat(buf, v, 'f', -1, 64)
		}
		buf = append(buf, ',')
		if numeric {
			buf = append(buf, units[rng.IntN(len(units))]...)
		}
		buf = append(buf, ',')
		if numeric && rng.IntN(4) > 0 {
			buf = strconv.AppendFloat(buf, float64(rng.IntN(100)), 'f', -1, 64)
			buf = append(buf, ',')
			buf = strconv.AppendFloat(buf, float64(100+rng.IntN(100))+0.5, 'f', -1, 64)
		} else {
			buf = append(buf, ',')
		}
		buf = append(buf, ',')
		if rng.IntN(4) == 0 {
			buf = append(buf, "abnormal"...)
		}
		buf = append(buf, ',')
		buf = append(buf, priorities[rng.IntN(len(priorities))]...)
		buf = append(buf, ',')
		if rng.IntN(20) == 0 {
			buf = append(buf, `"Verified by phone, ___ notified at 10:12."`...)
		}
		buf = append(buf, '\n')
		w.Write(buf)
	}
	if err := w.Flush(); err != nil {
		tb.Fatal(err)
	}
	if err := f.Close(); err != nil {
		tb.Fatal(err)
	}
}

// BenchmarkImportMIMICDemo imports the real MIMIC-IV demo (skipped when the
// data is absent) into a fresh database per iteration.
func BenchmarkImportMIMICDemo(b *testing.B) {
	dir := realdata.Path(b, "mimic-iv-demo-2.2")
	ctx := context.Background()
	var total time.Duration
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		db, err := OpenReadWrite(ctx, filepath.Join(b.TempDir(), "mimic.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		res, err := ImportMIMIC(ctx, db, dir, MIMICOptions{})
		total += time.Since(start)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		b.ReportMetric(float64(res.Rows), "rows")
		db.Close()
		b.StartTimer()
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/import")
}

// BenchmarkImportCSVLabevents5M imports a generated 5,000,000-row
// labevents-shaped CSV and, when the sqlite3 shell is on PATH, times its
// ".import" of the same file for comparison (metric ours/sqlite3).
func BenchmarkImportCSVLabevents5M(b *testing.B) {
	const n = 5_000_000
	dir := b.TempDir()
	csvPath := filepath.Join(dir, "labevents.csv")
	writeLabeventsCSV(b, csvPath, n)
	ctx := context.Background()

	var ours time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		dbPath := filepath.Join(dir, "ours"+strconv.Itoa(i)+".db")
		db, err := OpenReadWrite(ctx, dbPath)
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		start := time.Now()
		res, err := ImportCSV(ctx, db, csvPath, CSVOptions{})
		ours += time.Since(start)
		b.StopTimer()
		if err != nil {
			b.Fatal(err)
		}
		if res.Rows != n {
			b.Fatalf("rows = %d, want %d", res.Rows, n)
		}
		db.Close()
		os.Remove(dbPath)
		b.StartTimer()
	}
	b.StopTimer()
	perImport := ours / time.Duration(b.N)
	b.ReportMetric(float64(n)/perImport.Seconds(), "rows/s")
	b.ReportMetric(perImport.Seconds(), "s/import")

	sqlite3, err := exec.LookPath("sqlite3")
	if err != nil {
		b.Logf("sqlite3 not on PATH: no comparison")
		return
	}
	dbPath := filepath.Join(dir, "sqlite3.db")
	start := time.Now()
	out, err := exec.Command(sqlite3, dbPath, ".mode csv", ".import "+csvPath+" t").CombinedOutput()
	theirs := time.Since(start)
	if err != nil {
		b.Fatalf("sqlite3 .import: %v\n%s", err, out)
	}
	b.ReportMetric(theirs.Seconds(), "sqlite3-s")
	b.ReportMetric(perImport.Seconds()/theirs.Seconds(), "ours/sqlite3")
}

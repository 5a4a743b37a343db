package meta

import (
	"archive/zip"
	"bufio"
	"compress/flate"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/internal/streamtest"
)

// loadMeasured loads path with the heap sampled (the collector run often,
// so that the peak is close to what the load holds); it returns the error
// and the peak heap growth, and checks that the file is unchanged.
func loadMeasured(t *testing.T, path string, spec InputSpec) (uint64, error) {
	t.Helper()
	sum := func() [32]byte {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		return sha256.Sum256(b)
	}
	before := sum()
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	heap := streamtest.SampleHeap(2 * time.Millisecond)
	start := time.Now()
	_, err := LoadFile(path, spec)
	base, peak := heap.Stop()
	grew := peak - min(base, peak)
	t.Logf("%s: %v in %v, peak heap +%d MB", filepath.Base(path), err, time.Since(start).Round(time.Millisecond), grew>>20)
	if sum() != before {
		t.Error("the file changed")
	}
	return grew, err
}

// TestLoadFileRefusesWorkbookBomb loads a 0.5 MB .xlsx file holding a
// small study table and a part that unpacks to 512 MB (a "zip bomb"):
// the Excel reader read every part into memory (a 1.5 MB workbook of 1.5
// GB took 4.6 GB and 52 s through clinsight meta); now it is refused from
// the parts' sizes, in bounded memory. The same workbook without the part
// loads.
func TestLoadFileRefusesWorkbookBomb(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "bcg.xlsx")
	writeXLSX(t, good, []string{"Studies"}, map[string][][]any{"Studies": {
		{"study", "ai", "n1i", "ci", "n2i"}, {"A", 4, 123, 11, 139}, {"B", 6, 306, 29, 303}, {"C", 3, 231, 11, 220}}})
	if st, err := LoadFile(good, InputSpec{Kind: Binary}); err != nil || len(st) != 3 {
		t.Fatalf("the workbook without the bomb: %d studies, %v", len(st), err)
	}
	bomb := filepath.Join(dir, "bomb.xlsx")
	zr, err := zip.OpenReader(good)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	out, err := os.Create(bomb)
	if err != nil {
		t.Fatal(err)
	}
	zw := zip.NewWriter(out)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) { return flate.NewWriter(w, flate.BestSpeed) })
	for _, f := range zr.File {
		if err := zw.Copy(f); err != nil {
			t.Fatal(err)
		}
	}
	w, err := zw.Create("xl/media/image1.bin")
	if err != nil {
		t.Fatal(err)
	}
	zeros := make([]byte, 1<<20)
	for range 512 {
		if _, err := w.Write(zeros); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
	grew, err := loadMeasured(t, bomb, InputSpec{Kind: Binary})
	if err == nil || !strings.Contains(err.Error(), "the workbook bomb.xlsx unpacks to more than 128 MB") {
		t.Errorf("error %v, want the workbook refused for its size", err)
	}
	if grew > 64<<20 {
		t.Errorf("refusing the workbook took %d MB of heap", grew>>20)
	}
}

// TestLoadFileRefusesHugeTables loads CSV study tables far beyond any
// meta-analysis: 200,000 rows (4 MB; every row was read, checked and
// pooled, and --leave1out ran for more than 2 minutes) and a 100 MB
// field (read whole into memory): each is refused, in bounded memory. A
// table of 50,000 rows loads.
func TestLoadFileRefusesHugeTables(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, rows, fieldBytes int) string {
		p := filepath.Join(dir, name)
		f, err := os.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w := bufio.NewWriter(f)
		w.WriteString("study,ai,n1i,ci,n2i\n")
		for i := range rows {
			fmt.Fprintf(w, "S%d,%d,100,%d,100\n", i+1, 1+i%20, 1+(i*7)%20)
		}
		if fieldBytes > 0 {
			w.WriteString("\"")
			chunk := strings.Repeat("x", 1<<20)
			for range fieldBytes >> 20 {
				w.WriteString(chunk)
			}
			w.WriteString("\",1,100,2,100\n")
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if err := f.Close(); err != nil {
			t.Fatal(err)
		}
		return p
	}
	spec := InputSpec{Kind: Binary}
	if st, err := LoadFile(write("max.csv", maxStudyRows, 0), spec); err != nil || len(st) != maxStudyRows {
		t.Errorf("%d rows: %d studies, %v", maxStudyRows, len(st), err)
	}
	grew, err := loadMeasured(t, write("rows.csv", 200_000, 0), spec)
	if err == nil || !strings.Contains(err.Error(), "the table has more than 50000 rows") {
		t.Errorf("200,000 rows: %v", err)
	}
	if grew > 128<<20 {
		t.Errorf("200,000 rows: %d MB of heap", grew>>20)
	}
	grew, err = loadMeasured(t, write("field.csv", 2, 100<<20), spec)
	if err == nil || !strings.Contains(err.Error(), "the table is larger than 32 MB") {
		t.Errorf("a 100 MB field: %v", err)
	}
	if grew > 160<<20 {
		t.Errorf("a 100 MB field: %d MB of heap", grew>>20)
	}
}

// TestLoadFileRefusesWideTables loads a CSV table whose header has 7
// million columns (14 MB, under the size bound): encoding/csv held them
// all (700 MB of memory through clinsight meta); now it is refused at the
// 1001st column.
func TestLoadFileRefusesWideTables(t *testing.T) {
	p := filepath.Join(t.TempDir(), "wide.csv")
	if err := os.WriteFile(p, []byte("study"+strings.Repeat(",ai", 7_000_000)+"\nA,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	grew, err := loadMeasured(t, p, InputSpec{Kind: Binary})
	if err == nil || !strings.Contains(err.Error(), "line 1 has more than 1000 columns") {
		t.Errorf("7 million columns: %v", err)
	}
	if grew > 32<<20 {
		t.Errorf("refusing 7 million columns took %d MB of heap", grew>>20)
	}
}

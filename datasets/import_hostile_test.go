package datasets

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"errors"
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

// fileSHA256 is the hex SHA-256 of the file at path.
func fileSHA256(t testing.TB, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("%x", h.Sum(nil))
}

// writeGzipStream writes a gzip file at path whose content write produces,
// compressed as it is written (the content is never held whole).
func writeGzipStream(t testing.TB, path string, write func(w *bufio.Writer) error) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	zw, err := gzip.NewWriterLevel(f, gzip.BestSpeed)
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(zw, 1<<20)
	if err := write(bw); err != nil {
		t.Fatal(err)
	}
	if err := bw.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// repeatByte writes n bytes b to w.
func repeatByte(w *bufio.Writer, b byte, n int) error {
	chunk := []byte(strings.Repeat(string(b), 64<<10))
	for n > 0 {
		k := min(n, len(chunk))
		if _, err := w.Write(chunk[:k]); err != nil {
			return err
		}
		n -= k
	}
	return nil
}

// hostileImport imports file into a database that already holds a table,
// with the heap sampled, and checks that the import failed and changed
// nothing: the database file and the input file have the same SHA-256
// afterwards, and no table of the file's name exists. It returns the error
// and the peak heap growth in bytes (with the collector run often, so that
// the peak is close to what the import holds).
func hostileImport(t *testing.T, file string) (uint64, error) {
	t.Helper()
	dbPath := filepath.Join(t.TempDir(), "work.db")
	db, err := OpenReadWrite(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE keep (id INTEGER, note TEXT); INSERT INTO keep VALUES (1, 'kept'), (2, 'also kept')`); err != nil {
		t.Fatal(err)
	}
	db.Close()
	dbBefore, inBefore := fileSHA256(t, dbPath), fileSHA256(t, file)

	db, err = OpenReadWrite(context.Background(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	defer debug.SetGCPercent(debug.SetGCPercent(20))
	heap := streamtest.SampleHeap(2 * time.Millisecond)
	start := time.Now()
	_, ierr := ImportCSV(ctx, db, file, CSVOptions{})
	base, peak := heap.Stop()
	t.Logf("%s: %v in %v, peak heap +%d MB", filepath.Base(file), ierr, time.Since(start).Round(time.Millisecond), (peak-min(base, peak))>>20)
	if ierr == nil {
		t.Fatal("the import succeeded")
	}
	if ctx.Err() != nil {
		t.Fatalf("the import was stopped only by the test's deadline: %v", ierr)
	}
	if tableExists(t, db, TableNameFromFile(file)) {
		t.Error("the failed import left its table")
	}
	if n := countRows(t, db, "keep"); n != 2 {
		t.Errorf("the table already there has %d rows, want 2", n)
	}
	db.Close()
	if got := fileSHA256(t, dbPath); got != dbBefore {
		t.Error("the database file changed")
	}
	if got := fileSHA256(t, file); got != inBefore {
		t.Error("the input file changed")
	}
	return peak - min(base, peak), ierr
}

// TestImportCSVHostileLongLine imports a 3 MB gzip file that unpacks to a
// header and then one 300 MB line without a newline (a binary file, a lost
// closing quote): before the import bounded records, encoding/csv buffered
// the line whole (an 800 MB line took 9.8 GB and more than two minutes);
// now the import stops at 16 MB with the line of the record, in bounded
// memory, and leaves the database as it was.
func TestImportCSVHostileLongLine(t *testing.T) {
	file := filepath.Join(t.TempDir(), "longline.csv.gz")
	writeGzipStream(t, file, func(w *bufio.Writer) error {
		w.WriteString("id,note\n1,")
		return repeatByte(w, 'x', 300<<20)
	})
	grew, err := hostileImport(t, file)
	var tl *RecordTooLongError
	if !errors.As(err, &tl) || tl.Line != 2 {
		t.Errorf("error %v, want the record at line 2 refused as too long", err)
	}
	wantImportError(t, err, "longline.csv.gz", 2, "longer than 16 MB", "closing quote")
	if grew > 200<<20 {
		t.Errorf("the import took %d MB of heap for a line it refuses at 16 MB", grew>>20)
	}
}

// TestImportCSVHostileLargeRows imports a gzip file of 150 rows of 2 MB
// (300 MB of values) whose last row is malformed: the rows held to infer
// the types and the batches between the reader and the inserter are
// bounded in bytes, not only in rows (before, the type sample held every
// row: 305 MB of heap here, 20 GB for a 10,000-row sample of such rows;
// now 80 MB); the import fails at the last row and leaves the database as
// it was.
func TestImportCSVHostileLargeRows(t *testing.T) {
	file := filepath.Join(t.TempDir(), "notes.csv.gz")
	const rows = 150
	writeGzipStream(t, file, func(w *bufio.Writer) error {
		w.WriteString("id,note\n")
		for i := range rows {
			fmt.Fprintf(w, "%d,", i+1)
			if err := repeatByte(w, 'n', 2<<20); err != nil {
				return err
			}
			w.WriteByte('\n')
		}
		_, err := w.WriteString("151,two,fields too many\n")
		return err
	})
	grew, err := hostileImport(t, file)
	wantImportError(t, err, "notes.csv.gz", rows+2, "expected 2 fields, found 3")
	if grew > 200<<20 {
		t.Errorf("importing rows of 2 MB took %d MB of heap", grew>>20)
	}
}

// TestImportCSVHostileColumns imports a file whose header has 7 million
// columns (14 MB, under the record bound): encoding/csv held them all
// (725 MB of memory for a 28 MB file through clinsight import csv) before
// the header check refused them; now the import stops at the 32,001st.
func TestImportCSVHostileColumns(t *testing.T) {
	file := filepath.Join(t.TempDir(), "wide.csv")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString("a")
	for range 7_000_000 - 1 {
		w.WriteString(",a")
	}
	w.WriteString("\n1\n")
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	f.Close()
	grew, err := hostileImport(t, file)
	wantImportError(t, err, "wide.csv", 1, "more than 32000 columns", "holds at most 2000", "split the file or remove columns")
	if grew > 32<<20 {
		t.Errorf("refusing 7 million columns took %d MB of heap", grew>>20)
	}
}

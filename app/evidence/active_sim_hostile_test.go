//go:build unix

package evidence

import (
	"bytes"
	"encoding/csv"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// TestReadLabelledCSVRefusesHostileFiles gives the screening simulation
// a named pipe (opening it waited for a writer for ever), a file larger
// than the bound (it was cut silently at 1 GB), a line of 600 MB without
// a line end and a header of 7 million columns (encoding/csv held each
// whole: gigabytes): each is refused at once, saying why, having read
// little.
func TestReadLabelledCSVRefusesHostileFiles(t *testing.T) {
	dir := t.TempDir()
	pipe := filepath.Join(dir, "pipe.csv")
	if err := syscall.Mkfifo(pipe, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	// sparse writes head, then extends the file with zeros to size bytes
	// (a sparse file: no disk used).
	sparse := func(name, head string, size int64) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(head), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, size); err != nil {
			t.Fatal(err)
		}
		return p
	}
	const header = "title,abstract,label_included\nA title,An abstract,1\n"
	cases := []struct{ path, want string }{
		{pipe, "reading labelled review pipe: pipe.csv is a named pipe, not a file"},
		{sparse("huge.csv", header, maxLabelledCSV+1), "reading labelled review huge: the file is larger than 1024 MB"},
		{sparse("endless.csv", header+"B title,", 600<<20), "reading labelled review endless: line 3 is longer than 1 MB"},
		{dir, "is a folder, not a file"},
	}
	wide := filepath.Join(dir, "wide.csv")
	if err := os.WriteFile(wide, []byte("title,label_included"+strings.Repeat(",x", 7_000_000)+"\nA,1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases = append(cases, struct{ path, want string }{wide, "line 1 is longer than 1 MB or has more than 10000 commas"})
	for _, c := range cases {
		var m0, m1 runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&m0)
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			_, err := ReadLabelledCSV(c.path)
			done <- err
		}()
		var err error
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			if w, err := os.OpenFile(pipe, os.O_WRONLY, 0); err == nil {
				w.Close() // ends the blocked reader
			}
			t.Fatalf("%s: still reading after 10 s", filepath.Base(c.path))
		}
		runtime.ReadMemStats(&m1)
		alloc := (m1.TotalAlloc - m0.TotalAlloc) >> 20
		t.Logf("%s: %v, %d MB allocated: %v", filepath.Base(c.path), time.Since(start), alloc, err)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %q", filepath.Base(c.path), err, c.want)
		}
		if alloc > 32 {
			t.Errorf("%s: %d MB allocated", filepath.Base(c.path), alloc)
		}
	}
}

// TestReadLabelledCSVRealFiles: the bounds leave the Cohen 2006 files as
// encoding/csv alone reads them.
func TestReadLabelledCSVRealFiles(t *testing.T) {
	dir := realdata.Path(t, "screening-cohen-2006")
	paths, _ := filepath.Glob(filepath.Join(dir, "*.csv"))
	if len(paths) == 0 {
		t.Fatalf("no CSV file in %s", dir)
	}
	for _, p := range paths {
		rev, err := ReadLabelledCSV(p)
		if err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		r := csv.NewReader(bytes.NewReader(raw))
		r.FieldsPerRecord = -1
		r.LazyQuotes = true
		recs, err := r.ReadAll()
		if err != nil {
			t.Fatal(err)
		}
		col := map[string]int{}
		for i, h := range recs[0] {
			col[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
		}
		var want []ActiveDoc
		for _, rec := range recs[1:] {
			want = append(want, ActiveDoc{Title: rec[col["title"]], Abstract: rec[col["abstract"]], Keywords: rec[col["keywords"]]})
		}
		if !reflect.DeepEqual(rev.Docs, want) {
			t.Errorf("%s: %d records read, encoding/csv reads %d (or they differ)", rev.Name, len(rev.Docs), len(want))
		}
	}
}

package app

import (
	"bytes"
	"context"
	"database/sql"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/vectorstore"
)

// TestDamagedVectorFileIsRebuilt: a cohort index whose vector file was
// damaged ("checksum mismatch") is built again, the damaged file is kept
// aside, and the user is told in plain words, through Warnings and the
// OnWarning functions; the rebuilt file loads.
func TestDamagedVectorFileIsRebuilt(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	dbPath := filepath.Join(t.TempDir(), "clinic.sqlite")
	db, err := sql.Open(datasets.DriverName, "file:"+dbPath)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE patients (subject_id INTEGER PRIMARY KEY, gender TEXT, anchor_age INTEGER)",
		"CREATE TABLE diagnoses (subject_id INTEGER, icd_code TEXT, long_title TEXT)",
		"INSERT INTO patients VALUES (1,'F',52),(2,'M',71)",
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	down := "http://" + l.Addr().String() // no model server: the lexical embedder
	l.Close()

	open := func() *Workspace {
		ws, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ws.Close() })
		if err := ws.UpdateConfig(func(c *Config) { c.OllamaHost = down }); err != nil {
			t.Fatal(err)
		}
		return ws
	}
	if _, err := open().Cohort().Index(ctx, Source{Path: dbPath}, nil); err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob(filepath.Join(dir, "vectors", "*.clvs"))
	if len(files) != 1 {
		t.Fatalf("vector files %v, want one", files)
	}
	good, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	bad := bytes.Clone(good)
	bad[len(bad)/2] ^= 0x40
	if err := os.WriteFile(files[0], bad, 0o600); err != nil {
		t.Fatal(err)
	}

	ws := open()
	var mu sync.Mutex
	var told []string
	ws.OnWarning(func(msg string) { mu.Lock(); told = append(told, msg); mu.Unlock() })
	ix, err := ws.Cohort().Index(ctx, Source{Path: dbPath}, nil)
	if err != nil {
		t.Fatalf("index with a damaged vector file: %v", err)
	}
	if len(ix.Catalog().Tables) != 2 {
		t.Errorf("index has %d tables", len(ix.Catalog().Tables))
	}
	mu.Lock()
	defer mu.Unlock()
	if len(told) != 1 || len(ws.Warnings()) != 1 || ws.Warnings()[0] != told[0] {
		t.Fatalf("told %q, warnings %q", told, ws.Warnings())
	}
	msg := told[0]
	for _, want := range []string{files[0], "damaged", "checksum mismatch", "rebuilt", "no data was lost"} {
		if !strings.Contains(msg, want) {
			t.Errorf("warning %q does not say %q", msg, want)
		}
	}
	if strings.Contains(msg, "--") {
		t.Errorf("warning %q names a command-line flag; the GUI shows it too", msg)
	}
	backups, _ := filepath.Glob(files[0] + ".corrupt-*")
	if len(backups) != 1 {
		t.Fatalf("backups %v", backups)
	}
	if kept, _ := os.ReadFile(backups[0]); !bytes.Equal(kept, bad) {
		t.Error("the backup does not hold the damaged file")
	}
	// The rebuilt file is whole: a fresh store loads it.
	s, err := vectorstore.Open(filepath.Join(dir, "vectors"), vectorstore.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, info := range s.Collections() {
		if info.Err != nil || info.Count != 2 {
			t.Errorf("after the rebuild: %+v", info)
		}
	}
}

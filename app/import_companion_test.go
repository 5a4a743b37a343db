package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
)

// TestImportIntoAJournalFileOfADatabaseIsRefused: SQLite keeps a
// database's rollback journal and write-ahead log beside it, as
// "<file>-journal", "<file>-wal" and "<file>-shm". An import into such a
// name wrote a new database where SQLite looks for the journal, and the
// read-only source could no longer be opened at all ("attempt to write a
// readonly database"): a read-only source changed through another path.
// Every importer refuses such a file, for read-only and workspace sources
// alike, and reached through a linked folder too.
func TestImportIntoAJournalFileOfADatabaseIsRefused(t *testing.T) {
	ctx := context.Background()
	ws := openTemp(t)
	in := writeInputs(t)
	dir := t.TempDir()
	ro := filepath.Join(dir, "ro.sqlite")
	rollbackJournalDB(t, ro)
	if _, err := ws.RegisterSQLite(ctx, ro, "rodemo"); err != nil {
		t.Fatal(err)
	}
	linkedDir := filepath.Join(t.TempDir(), "linked")
	if err := os.Symlink(dir, linkedDir); err != nil {
		t.Fatal(err)
	}
	own := filepath.Join(t.TempDir(), "own.sqlite")
	rollbackJournalDB(t, own)
	before := stateOf(t, ro)
	for _, imp := range importers(in) {
		for _, target := range []string{
			ro + "-journal", ro + "-wal", ro + "-shm",
			filepath.Join(linkedDir, "ro.sqlite-journal"),
			own + "-journal",
		} {
			err := imp.run(ctx, ws, target)
			if err == nil {
				t.Errorf("%s into %s: no error", imp.name, target)
			} else if msg := err.Error(); !strings.Contains(msg, "journal") || strings.Contains(msg, "--") {
				t.Errorf("%s into %s: the message does not say the file is a journal in the GUI's words: %q", imp.name, target, msg)
			}
			if _, err := os.Lstat(target); err == nil {
				t.Errorf("%s into %s: the file was created", imp.name, target)
				os.Remove(target)
			}
		}
	}
	if after := stateOf(t, ro); !after.equal(before) {
		t.Errorf("the read-only source changed: %+v, was %+v", after, before)
	}
	db, err := ws.Data().Query(ctx, source(t, ws, "rodemo"), "SELECT count(*) FROM patients", datasets.RunnerOptions{})
	if err != nil {
		t.Fatalf("the read-only source cannot be read any more: %v", err)
	}
	if got := db.Rows[0][0]; got != int64(2) {
		t.Errorf("patients in the read-only source: %v, want 2", got)
	}
}

package datasets

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// TestRemoveIfEmptyKeepsADatabaseAnotherImportHasOpen: a failed import
// removes the new database it created only when no other import has the
// file open. Two imports into the same new file started together: one
// fails and cleans up while the other has opened the file and not yet
// written its first table. Removing the file then made the other import
// write into a deleted file (WAL mode raises no error) and report success
// with nothing on disk.
func TestRemoveIfEmptyKeepsADatabaseAnotherImportHasOpen(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new.sqlite")
	failing, created, err := OpenImportTarget(ctx, path, ImportTargetOptions{})
	if err != nil || !created {
		t.Fatalf("first open: created %v, %v", created, err)
	}
	other, otherCreated, err := OpenImportTarget(ctx, path, ImportTargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if otherCreated {
		t.Error("the second import reports that it created a file that already existed")
	}
	failing.Close()

	removed, err := RemoveIfEmpty(ctx, path)
	if removed {
		t.Errorf("RemoveIfEmpty removed a database another import has open (err %v)", err)
	}
	if _, err := other.ExecContext(ctx, "CREATE TABLE t (x)"); err != nil {
		t.Fatal(err)
	}
	if _, err := other.ExecContext(ctx, "INSERT INTO t VALUES (42)"); err != nil {
		t.Fatal(err)
	}
	other.Close()
	db, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatalf("the other import's database is gone: %v", err)
	}
	defer db.Close()
	var x int
	if err := db.QueryRowContext(ctx, "SELECT x FROM t").Scan(&x); err != nil || x != 42 {
		t.Fatalf("the other import's row: %d, %v", x, err)
	}
}

// TestWriteAfterRemovalFailsLoudly guards what RemoveIfEmpty relies on for
// an import that opens the file after the check: out of WAL mode, SQLite
// refuses to write to a database file that was deleted while open
// (SQLITE_READONLY_DBMOVED), so such an import fails instead of reporting
// rows that are nowhere.
func TestWriteAfterRemovalFailsLoudly(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "new.sqlite")
	first, _, err := OpenImportTarget(ctx, path, ImportTargetOptions{})
	if err != nil {
		t.Fatal(err)
	}
	first.Close()
	var late *sql.DB
	removed, err := removeIfEmptyThen(ctx, path, func() {
		// Opens between the check and the removal.
		db, _, err := OpenImportTarget(ctx, path, ImportTargetOptions{})
		if err != nil {
			t.Error(err)
			return
		}
		late = db
	})
	if err != nil || !removed {
		t.Fatalf("RemoveIfEmpty of an unused empty database: %v, %v", removed, err)
	}
	if late == nil {
		t.Fatal("the late import could not open the file")
	}
	defer late.Close()
	if _, err := late.ExecContext(ctx, "CREATE TABLE t (x)"); err == nil {
		t.Error("an import wrote into a database file that was deleted, without an error")
	}
	if _, err := os.Stat(path); err == nil {
		t.Error("the removed file is back")
	}
}

// TestOnlyOneImportCreatesANewFile: of imports into the same new file
// started at once, exactly one reports that it created it (and so may
// remove it again after a failure, and sets its journal mode).
func TestOnlyOneImportCreatesANewFile(t *testing.T) {
	ctx := context.Background()
	for round := range 20 {
		path := filepath.Join(t.TempDir(), "new.sqlite")
		const n = 8
		var (
			wg      sync.WaitGroup
			start   = make(chan struct{})
			mu      sync.Mutex
			creator int
		)
		for range n {
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				db, created, err := OpenImportTarget(ctx, path, ImportTargetOptions{})
				if err != nil {
					t.Error(err)
					return
				}
				db.Close()
				if created {
					mu.Lock()
					creator++
					mu.Unlock()
				}
			}()
		}
		close(start)
		wg.Wait()
		if creator != 1 {
			t.Fatalf("round %d: %d of %d imports report that they created the new file, want exactly 1", round, creator, n)
		}
	}
}

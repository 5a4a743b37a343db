package datasets

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"modernc.org/sqlite"
)

// DefaultBusyTimeout is how long an importer waits for another writer of
// the same database before giving up.
const DefaultBusyTimeout = 5 * time.Second

// sqliteBusy is SQLite's primary result code SQLITE_BUSY ("database is
// locked"): another connection holds the write lock.
const sqliteBusy = 5

// ImportTargetOptions configure OpenImportTarget.
type ImportTargetOptions struct {
	// BusyTimeout is how long a write waits for another writer to finish
	// before failing with SQLITE_BUSY (see IsBusy); 0 means
	// DefaultBusyTimeout.
	BusyTimeout time.Duration
}

// OpenImportTarget opens the SQLite file at path for an importer, creating
// it when missing, and reports whether it created it. A single connection
// serialises writers (SQLite allows one at a time anyway).
//
// A new file is put in WAL mode so that readers are not blocked while an
// import runs. An existing file keeps its journal mode: switching a
// rollback-journal database to WAL rewrites its header, which would change a
// file whose import then fails, and WAL does not work on network shares.
func OpenImportTarget(ctx context.Context, path string, opts ImportTargetOptions) (db *sql.DB, created bool, err error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, false, fmt.Errorf("resolve %s: %w", path, err)
	}
	if created, err = createExclusive(abs); err != nil {
		return nil, false, fmt.Errorf("create %s: %w", path, err)
	}
	busy := opts.BusyTimeout
	if busy <= 0 {
		busy = DefaultBusyTimeout
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout("+strconv.FormatInt(busy.Milliseconds(), 10)+")")
	if created {
		q.Add("_pragma", "journal_mode(WAL)")
		q.Add("_pragma", "synchronous(NORMAL)")
	}
	dsn := (&url.URL{Scheme: "file", Path: abs, RawQuery: q.Encode()}).String()
	db, err = sql.Open(DriverName, dsn)
	if err != nil {
		return nil, created, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if err := checkSQLite(ctx, db); err != nil {
		db.Close()
		return nil, created, fmt.Errorf("open %s: %w", path, err)
	}
	if !created {
		// WAL needs no fsync per transaction for durability in order.
		var mode string
		if err := db.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err == nil && strings.EqualFold(mode, "wal") {
			_, _ = db.ExecContext(ctx, "PRAGMA synchronous = NORMAL")
		}
	}
	return db, created, nil
}

// createExclusive creates an empty file at abs (and its directory) when
// nothing is there, and reports whether it did. The exclusive create makes
// that true for one import only, even when several imports into the same
// new file start at once: only that one sets the journal mode, and only it
// may remove the file again after a failure.
func createExclusive(abs string) (bool, error) {
	if _, err := os.Lstat(abs); !errors.Is(err, fs.ErrNotExist) {
		return false, nil // there, or SQLite says why it cannot be opened
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return false, err
	}
	f, err := os.OpenFile(abs, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o644)
	switch {
	case errors.Is(err, fs.ErrExist):
		return false, nil // another import created it meanwhile
	case err != nil:
		return false, err
	}
	return true, f.Close()
}

// IsBusy reports whether err is SQLite's "database is locked"
// (SQLITE_BUSY): another connection, usually another import, is writing to
// the database.
func IsBusy(err error) bool {
	var se *sqlite.Error
	if errors.As(err, &se) {
		return se.Code()&0xff == sqliteBusy
	}
	return false
}

// RemoveIfEmpty deletes the database file at path, with its journal files,
// when it holds no table or view and no other connection has it open; it
// reports whether it did. Importers use it to leave nothing behind when an
// import into a file they created fails.
//
// Another import may have opened the same new file and not yet written
// its first table. A connection in WAL mode would go on writing into the
// deleted file without an error, so the file is first taken out of WAL
// mode, which SQLite refuses (SQLITE_BUSY) while any other connection has
// it open: then it stays. A connection that opens it after that writes in
// rollback-journal mode, where SQLite refuses to write to a file deleted
// while open (SQLITE_READONLY_DBMOVED): that import fails instead of
// reporting rows that are nowhere.
func RemoveIfEmpty(ctx context.Context, path string) (bool, error) {
	return removeIfEmptyThen(ctx, path, nil)
}

// removeIfEmptyThen is RemoveIfEmpty; beforeRemove, when not nil, runs
// after the checks, just before the files are removed (tests open the file
// there, as another import may).
func removeIfEmptyThen(ctx context.Context, path string, beforeRemove func()) (bool, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return false, err
	}
	if _, err := os.Stat(abs); err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return false, nil
		}
		return false, err
	}
	q := url.Values{}
	q.Set("mode", "rw") // never create it again
	q.Add("_pragma", "busy_timeout(0)")
	db, err := sql.Open(DriverName, (&url.URL{Scheme: "file", Path: abs, RawQuery: q.Encode()}).String())
	if err != nil {
		return false, err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Close()
	const countTables = "SELECT count(*) FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite!_%' ESCAPE '!'"
	var n int
	if err := conn.QueryRowContext(ctx, countTables).Scan(&n); err != nil {
		return false, err
	}
	if n > 0 {
		return false, nil
	}
	var mode string
	if err := conn.QueryRowContext(ctx, "PRAGMA journal_mode = DELETE").Scan(&mode); err != nil {
		if IsBusy(err) {
			return false, nil // another connection has it open
		}
		return false, err
	}
	if !strings.EqualFold(mode, "delete") {
		return false, nil // SQLite kept the mode: not ours alone
	}
	// The write lock: an import that has just started in the same file
	// holds it (or takes it first), and then the file is not removed.
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		return false, err
	}
	defer conn.ExecContext(context.WithoutCancel(ctx), "ROLLBACK") //nolint:errcheck // nothing was written
	if err := conn.QueryRowContext(ctx, countTables).Scan(&n); err != nil {
		return false, err
	}
	if n > 0 {
		return false, nil
	}
	if beforeRemove != nil {
		beforeRemove()
	}
	var firstErr error
	for _, suffix := range []string{"", "-journal", "-wal", "-shm"} {
		if err := os.Remove(abs + suffix); err != nil && !errors.Is(err, fs.ErrNotExist) && firstErr == nil {
			firstErr = err
		}
	}
	return firstErr == nil, firstErr
}

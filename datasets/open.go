package datasets

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"

	_ "modernc.org/sqlite" // registers the "sqlite" database/sql driver
)

// DriverName is the database/sql driver every database is opened with.
const DriverName = "sqlite"

// readOnlyDSN builds the DSN of a read-only connection: the file is opened
// with SQLITE_OPEN_READONLY (mode=ro), writes are refused even to the temp
// schema (query_only), and a busy writer elsewhere is waited for briefly.
func readOnlyDSN(path string, pragmas ...string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", path, err)
	}
	q := url.Values{}
	q.Set("mode", "ro")
	q.Add("_pragma", "query_only(1)")
	q.Add("_pragma", "busy_timeout(5000)")
	for _, p := range pragmas {
		q.Add("_pragma", p)
	}
	return (&url.URL{Scheme: "file", Path: abs, RawQuery: q.Encode()}).String(), nil
}

// readWriteDSN builds the DSN of a read-write connection used by importers:
// WAL journal so readers are not blocked, foreign keys on, a busy timeout.
func readWriteDSN(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("resolve %s: %w", path, err)
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(5000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "synchronous(NORMAL)")
	return (&url.URL{Scheme: "file", Path: abs, RawQuery: q.Encode()}).String(), nil
}

// ErrNoDatabase is returned when a database file that must exist does not.
var ErrNoDatabase = errors.New("database file not found")

// OpenReadOnly opens an existing SQLite file for reading only. It fails when
// the file is missing or is not a SQLite database, rather than creating an
// empty one.
func OpenReadOnly(ctx context.Context, path string) (*sql.DB, error) {
	return openReadOnly(ctx, path)
}

// OpenReadOnlyMapped is [OpenReadOnly] with up to mmapBytes of the file
// memory-mapped and a page cache of cacheKiB per connection, for a search
// index read at thousands of random places per query (the trial
// matcher's), where reading each page through a system call was a large
// part of the time.
func OpenReadOnlyMapped(ctx context.Context, path string, mmapBytes int64, cacheKiB int) (*sql.DB, error) {
	return openReadOnly(ctx, path, fmt.Sprintf("mmap_size(%d)", max(mmapBytes, 0)), fmt.Sprintf("cache_size(%d)", -max(cacheKiB, 0)))
}

func openReadOnly(ctx context.Context, path string, pragmas ...string) (*sql.DB, error) {
	if _, err := os.Stat(path); err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, fmt.Errorf("open %s: %w", path, ErrNoDatabase)
		}
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	dsn, err := readOnlyDSN(path, pragmas...)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open(DriverName, dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	if err := checkSQLite(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// OpenReadWrite opens (creating if needed) a SQLite file for the importers.
// A single connection serialises writers: SQLite allows one at a time anyway.
func OpenReadWrite(ctx context.Context, path string) (*sql.DB, error) {
	if dir := filepath.Dir(path); dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, fmt.Errorf("create directory for %s: %w", path, err)
		}
	}
	dsn, err := readWriteDSN(path)
	if err != nil {
		return nil, err
	}
	db, err := sql.Open(DriverName, dsn)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	db.SetMaxOpenConns(1)
	if err := checkSQLite(ctx, db); err != nil {
		db.Close()
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return db, nil
}

// checkSQLite reads the schema once, which fails for a file that is not a
// SQLite database ("file is not a database").
func checkSQLite(ctx context.Context, db *sql.DB) error {
	var n int
	if err := db.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&n); err != nil {
		return fmt.Errorf("not a readable SQLite database: %w", err)
	}
	return nil
}

// QuoteIdent quotes an SQLite identifier (table or column name) so that any
// name, including ones with spaces, quotes or keywords, is safe in SQL text.
func QuoteIdent(name string) string {
	out := make([]byte, 0, len(name)+2)
	out = append(out, '"')
	for i := 0; i < len(name); i++ {
		if name[i] == '"' {
			out = append(out, '"')
		}
		out = append(out, name[i])
	}
	return string(append(out, '"'))
}

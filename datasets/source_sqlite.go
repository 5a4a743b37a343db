package datasets

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
)

// ErrNotSQLite is returned (wrapped) when a file is not a SQLite database.
var ErrNotSQLite = errors.New("not a SQLite database")

// sqliteMagic starts every SQLite 3 database file.
const sqliteMagic = "SQLite format 3\x00"

// SQLiteTable is a user table of an existing SQLite database.
type SQLiteTable struct {
	// Name is the table name.
	Name string
	// Virtual is true for a virtual table (for example an FTS5 index); its
	// shadow tables are not listed.
	Virtual bool
	// Rows is the table's row count, -1 when it could not be counted (a
	// virtual table whose module this build lacks).
	Rows int64
}

// SQLiteSource describes an existing SQLite database file that can be used
// as a data source.
type SQLiteSource struct {
	// Path is the database file.
	Path string
	// Size is the file size in bytes.
	Size int64
	// Tables are the user tables, by name: SQLite's internal sqlite_*
	// tables and the shadow tables of FTS and other virtual tables excluded.
	Tables []SQLiteTable
	// Views are the names of the views, sorted.
	Views []string
}

// InspectSQLite checks that path is an existing SQLite database, opening it
// read-only (it is never modified), and lists its user tables with their
// row counts and its views. A missing file gives an error wrapping
// ErrNoDatabase; a directory or a file that is not a SQLite database gives
// one wrapping ErrNotSQLite.
func InspectSQLite(ctx context.Context, path string) (SQLiteSource, error) {
	src := SQLiteSource{Path: path}
	fail := func(err error) (SQLiteSource, error) {
		return SQLiteSource{}, fmt.Errorf("inspect %s: %w", path, err)
	}
	fi, err := os.Stat(path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return fail(fmt.Errorf("%w: %w", ErrNoDatabase, err))
	case err != nil:
		return fail(err)
	case fi.IsDir():
		return fail(fmt.Errorf("%w: it is a directory, expected a SQLite database file", ErrNotSQLite))
	}
	src.Size = fi.Size()
	if err := checkSQLiteHeader(path); err != nil {
		return fail(err)
	}
	db, err := OpenReadOnly(ctx, path)
	if err != nil {
		if msg := err.Error(); strings.Contains(msg, "file is not a database") || strings.Contains(msg, "malformed") {
			return SQLiteSource{}, fmt.Errorf("inspect: %w: %w", ErrNotSQLite, err)
		}
		return SQLiteSource{}, fmt.Errorf("inspect: %w", err)
	}
	defer db.Close()

	// PRAGMA table_list marks FTS and other virtual tables' shadow tables as
	// "shadow", SQLite's own tables by their sqlite_ prefix.
	rows, err := db.QueryContext(ctx, "SELECT name, type FROM pragma_table_list WHERE schema = 'main'")
	if err != nil {
		return fail(fmt.Errorf("list tables: %w", err))
	}
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			rows.Close()
			return fail(fmt.Errorf("list tables: %w", err))
		}
		switch {
		case strings.HasPrefix(strings.ToLower(name), "sqlite_"):
		case typ == "table" || typ == "virtual":
			src.Tables = append(src.Tables, SQLiteTable{Name: name, Virtual: typ == "virtual"})
		case typ == "view":
			src.Views = append(src.Views, name)
		}
	}
	if err := rows.Close(); err != nil {
		return fail(fmt.Errorf("list tables: %w", err))
	}
	if err := rows.Err(); err != nil {
		return fail(fmt.Errorf("list tables: %w", err))
	}
	slices.SortFunc(src.Tables, func(a, b SQLiteTable) int { return strings.Compare(a.Name, b.Name) })
	slices.Sort(src.Views)

	for i := range src.Tables {
		t := &src.Tables[i]
		err := db.QueryRowContext(ctx, "SELECT count(*) FROM main."+QuoteIdent(t.Name)).Scan(&t.Rows)
		if err != nil {
			if ctxErr := ctx.Err(); ctxErr != nil {
				return fail(ctxErr)
			}
			if t.Virtual {
				t.Rows = -1
				continue
			}
			return fail(fmt.Errorf("count rows of %s: %w", QuoteIdent(t.Name), err))
		}
	}
	return src, nil
}

// checkSQLiteHeader reads the first bytes of path: SQLite itself would
// treat an empty file as an empty database and report other files only
// when first queried.
func checkSQLiteHeader(path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	head := make([]byte, len(sqliteMagic))
	n, err := io.ReadFull(f, head)
	switch {
	case n == 0 && (err == io.EOF || err == nil):
		return fmt.Errorf("%w: the file is empty", ErrNotSQLite)
	case errors.Is(err, io.ErrUnexpectedEOF) || (err == nil && !bytes.Equal(head, []byte(sqliteMagic))):
		return fmt.Errorf("%w: the file does not start with the SQLite 3 header", ErrNotSQLite)
	case err != nil:
		return err
	}
	return nil
}

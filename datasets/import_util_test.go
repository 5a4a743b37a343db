package datasets

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// newImportDB opens a fresh read-write database in a temporary directory.
func newImportDB(t testing.TB) *sql.DB {
	t.Helper()
	db, err := OpenReadWrite(context.Background(), filepath.Join(t.TempDir(), "import.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// writeTestFile writes content to name inside dir and returns its path.
func writeTestFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// gzipBytes compresses content.
func gzipBytes(t testing.TB, content string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write([]byte(content)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// writeGzipFile writes content gzip-compressed to name inside dir.
func writeGzipFile(t testing.TB, dir, name, content string) string {
	t.Helper()
	return writeTestFile(t, dir, name, string(gzipBytes(t, content)))
}

// tableExists reports whether db has a table named name.
func tableExists(t testing.TB, db *sql.DB, name string) bool {
	t.Helper()
	var n int
	err := db.QueryRow("SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name = ? COLLATE NOCASE", name).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n > 0
}

// countRows returns the number of rows of table.
func countRows(t testing.TB, db *sql.DB, table string) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRow("SELECT count(*) FROM " + QuoteIdent(table)).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// columnTypes returns the declared types of table's columns, in order.
func columnTypes(t testing.TB, db *sql.DB, table string) []string {
	t.Helper()
	rows, err := db.Query("SELECT type FROM pragma_table_info(?) ORDER BY cid", table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var types []string
	for rows.Next() {
		var typ string
		if err := rows.Scan(&typ); err != nil {
			t.Fatal(err)
		}
		types = append(types, typ)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return types
}

// queryStrings runs query and returns each row's columns formatted as text,
// NULL as "NULL".
func queryStrings(t testing.TB, db *sql.DB, query string, args ...any) [][]string {
	t.Helper()
	rows, err := db.Query(query, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		t.Fatal(err)
	}
	var out [][]string
	for rows.Next() {
		vals := make([]sql.NullString, len(cols))
		ptrs := make([]any, len(cols))
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		row := make([]string, len(cols))
		for i, v := range vals {
			row[i] = "NULL"
			if v.Valid {
				row[i] = v.String
			}
		}
		out = append(out, row)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

// wantImportError checks that err is an *ImportError for the file named
// file, at line (0: any), whose message contains every part of want.
func wantImportError(t testing.TB, err error, file string, line int, want ...string) *ImportError {
	t.Helper()
	if err == nil {
		t.Fatalf("no error, want one about %s line %d", file, line)
	}
	var ie *ImportError
	if !errors.As(err, &ie) {
		t.Fatalf("error %q (%T) is not an *ImportError", err, err)
	}
	msg := err.Error()
	if !strings.Contains(msg, file) {
		t.Errorf("error %q does not name the file %s", msg, file)
	}
	if line > 0 {
		if ie.Line != line {
			t.Errorf("error %q: line %d, want %d", msg, ie.Line, line)
		}
		if !strings.Contains(msg, " line ") {
			t.Errorf("error %q does not give the line", msg)
		}
	}
	for _, w := range want {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not contain %q", msg, w)
		}
	}
	return ie
}

package pgtest

import (
	"bufio"
	"context"
	"database/sql"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinsight/clinsight/datasets"
)

// LoadSQLite copies every table of the SQLite database at path into a new
// schema of database db — the same tables served from PostgreSQL — and
// analyses it. Names are lower-cased (PostgreSQL's folding, so unquoted
// SQL reads both copies alike); declared types map to PostgreSQL's
// (INT… bigint, REAL/FLOAT/DOUBLE double precision, NUMERIC/DECIMAL
// numeric, TIMESTAMP/DATETIME timestamp, DATE date, others text); primary
// keys, unique indexes and foreign keys are declared as in SQLite where
// the data allow (a table whose rows do not fit its types is loaded as
// text, and said so in the test log). Virtual tables and their shadow
// tables are left out. It returns the rows loaded per table.
func (c *Cluster) LoadSQLite(t testing.TB, db, schema, path string) map[string]int64 {
	t.Helper()
	ctx := context.Background()
	src, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	conn := c.Super(t, db)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		t.Fatalf("create schema %s: %v", schema, err)
	}
	tables, err := sqliteTables(ctx, src)
	if err != nil {
		t.Fatalf("list the tables of %s: %v", path, err)
	}
	counts := map[string]int64{}
	for _, tb := range tables {
		n, err := loadSQLiteTable(ctx, conn, src, schema, tb, false)
		if err != nil {
			t.Logf("pgtest: %s does not fit its declared types (%v); loaded as text", tb.name, err)
			if _, derr := conn.Exec(ctx, "DROP TABLE IF EXISTS "+pgx.Identifier{schema, strings.ToLower(tb.name)}.Sanitize()); derr != nil {
				t.Fatal(derr)
			}
			if n, err = loadSQLiteTable(ctx, conn, src, schema, tb, true); err != nil {
				t.Fatalf("load %s: %v", tb.name, err)
			}
		}
		counts[strings.ToLower(tb.name)] = n
	}
	for _, fks := range []bool{false, true} { // unique keys first: foreign keys reference them
		for _, tb := range tables {
			for _, stmt := range tb.after(schema, fks) {
				if _, err := conn.Exec(ctx, stmt); err != nil {
					t.Logf("pgtest: %s: %v (left out)", stmt, err)
				}
			}
		}
	}
	if _, err := conn.Exec(ctx, "ANALYZE"); err != nil {
		t.Fatal(err)
	}
	return counts
}

// sqliteTable is a table of the SQLite database with its declarations.
type sqliteTable struct {
	name    string
	cols    []sqliteColumn
	pk      []string   // primary-key columns, in key order
	uniques [][]string // columns of each unique index
	fks     []sqliteFK
}

// sqliteFK is a foreign key: its columns, and the table and columns they
// reference.
type sqliteFK struct {
	from, to []string
	table    string
}

type sqliteColumn struct {
	name, declType string
	notNull        bool
}

// after returns the statements declaring the table's unique indexes, or
// its foreign keys (NOT VALID: declared as SQLite declares them, without
// checking rows SQLite never checked), run once every table is loaded.
func (tb sqliteTable) after(schema string, fks bool) []string {
	name := pgx.Identifier{schema, strings.ToLower(tb.name)}.Sanitize()
	var out []string
	if fks {
		for _, fk := range tb.fks {
			out = append(out, fmt.Sprintf("ALTER TABLE %s ADD FOREIGN KEY (%s) REFERENCES %s (%s) NOT VALID",
				name, identList(fk.from), pgx.Identifier{schema, strings.ToLower(fk.table)}.Sanitize(), identList(fk.to)))
		}
		return out
	}
	for i, u := range tb.uniques {
		out = append(out, fmt.Sprintf("CREATE UNIQUE INDEX %s ON %s (%s)",
			pgx.Identifier{fmt.Sprintf("%s_u%d", strings.ToLower(tb.name), i+1)}.Sanitize(), name, identList(u)))
	}
	return out
}

func identList(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = pgx.Identifier{strings.ToLower(n)}.Sanitize()
	}
	return strings.Join(q, ", ")
}

// sqliteTables reads the ordinary tables of a SQLite database and their
// declarations.
func sqliteTables(ctx context.Context, db *sql.DB) ([]sqliteTable, error) {
	rows, err := db.QueryContext(ctx, "SELECT name, coalesce(sql, '') FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY name")
	if err != nil {
		return nil, err
	}
	var names, virtual []string
	for rows.Next() {
		var name, ddl string
		if err := rows.Scan(&name, &ddl); err != nil {
			rows.Close()
			return nil, err
		}
		if strings.HasPrefix(strings.ToUpper(strings.TrimSpace(ddl)), "CREATE VIRTUAL") {
			virtual = append(virtual, name)
			continue
		}
		names = append(names, name)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	var out []sqliteTable
next:
	for _, name := range names {
		for _, v := range virtual {
			if strings.HasPrefix(name, v+"_") {
				continue next // a shadow table of a full-text index
			}
		}
		tb := sqliteTable{name: name}
		type pkCol struct {
			name string
			pos  int
		}
		var pks []pkCol
		err := scanRows(ctx, db, "SELECT name, type, \"notnull\", pk FROM pragma_table_info(?)", []any{name}, func(r *sql.Rows) error {
			var c sqliteColumn
			var pk int
			if err := r.Scan(&c.name, &c.declType, &c.notNull, &pk); err != nil {
				return err
			}
			tb.cols = append(tb.cols, c)
			if pk > 0 {
				pks = append(pks, pkCol{c.name, pk})
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
		sort.Slice(pks, func(i, j int) bool { return pks[i].pos < pks[j].pos })
		for _, p := range pks {
			tb.pk = append(tb.pk, p.name)
		}
		var idx []string
		err = scanRows(ctx, db, "SELECT name FROM pragma_index_list(?) WHERE \"unique\" AND NOT partial AND origin <> 'pk'", []any{name}, func(r *sql.Rows) error {
			var n string
			if err := r.Scan(&n); err != nil {
				return err
			}
			idx = append(idx, n)
			return nil
		})
		if err != nil {
			return nil, err
		}
		for _, ix := range idx {
			var cols []string
			err := scanRows(ctx, db, "SELECT coalesce(name, '') FROM pragma_index_info(?) ORDER BY seqno", []any{ix}, func(r *sql.Rows) error {
				var n string
				if err := r.Scan(&n); err != nil {
					return err
				}
				cols = append(cols, n)
				return nil
			})
			if err != nil {
				return nil, err
			}
			if len(cols) > 0 && !contains(cols, "") {
				tb.uniques = append(tb.uniques, cols)
			}
		}
		byID := map[int]int{} // foreign key id -> index in tb.fks
		err = scanRows(ctx, db, "SELECT id, \"from\", \"table\", coalesce(\"to\", '') FROM pragma_foreign_key_list(?) ORDER BY id, seq", []any{name}, func(r *sql.Rows) error {
			var id int
			var from, table, to string
			if err := r.Scan(&id, &from, &table, &to); err != nil {
				return err
			}
			if to == "" {
				return nil // references the primary key implicitly: left out
			}
			i, ok := byID[id]
			if !ok {
				i = len(tb.fks)
				byID[id] = i
				tb.fks = append(tb.fks, sqliteFK{table: table})
			}
			tb.fks[i].from = append(tb.fks[i].from, from)
			tb.fks[i].to = append(tb.fks[i].to, to)
			return nil
		})
		if err != nil {
			return nil, err
		}
		out = append(out, tb)
	}
	return out, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func scanRows(ctx context.Context, db *sql.DB, query string, args []any, fn func(*sql.Rows) error) error {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		if err := fn(rows); err != nil {
			return err
		}
	}
	return rows.Err()
}

// pgType maps a SQLite declared type to PostgreSQL's.
func pgType(decl string) string {
	u := strings.ToUpper(decl)
	switch {
	case strings.Contains(u, "INT"):
		return "bigint"
	case strings.Contains(u, "REAL"), strings.Contains(u, "FLOA"), strings.Contains(u, "DOUB"):
		return "double precision"
	case strings.Contains(u, "NUM"), strings.Contains(u, "DEC"):
		return "numeric"
	case strings.Contains(u, "TIMESTAMP"), strings.Contains(u, "DATETIME"):
		return "timestamp"
	case strings.HasPrefix(u, "DATE"):
		return "date"
	}
	return "text"
}

// loadSQLiteTable creates one table (all columns text when asText, else
// with mapped types and its primary key) and copies its rows with COPY
// FROM STDIN in text format.
func loadSQLiteTable(ctx context.Context, conn *pgx.Conn, src *sql.DB, schema string, tb sqliteTable, asText bool) (int64, error) {
	name := pgx.Identifier{schema, strings.ToLower(tb.name)}.Sanitize()
	defs := make([]string, len(tb.cols))
	names := make([]string, len(tb.cols))
	for i, c := range tb.cols {
		typ := "text"
		if !asText {
			typ = pgType(c.declType)
		}
		names[i] = c.name
		defs[i] = pgx.Identifier{strings.ToLower(c.name)}.Sanitize() + " " + typ
		if c.notNull && !asText {
			defs[i] += " NOT NULL"
		}
	}
	if len(tb.pk) > 0 && !asText {
		defs = append(defs, "PRIMARY KEY ("+identList(tb.pk)+")")
	}
	if _, err := conn.Exec(ctx, fmt.Sprintf("CREATE TABLE %s (%s)", name, strings.Join(defs, ", "))); err != nil {
		return 0, err
	}
	quoted := make([]string, len(names))
	for i, n := range names {
		quoted[i] = datasets.QuoteIdent(n)
	}
	rows, err := src.QueryContext(ctx, fmt.Sprintf("SELECT %s FROM %s", strings.Join(quoted, ", "), datasets.QuoteIdent(tb.name)))
	if err != nil {
		return 0, err
	}
	defer rows.Close()
	pr, pw := io.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		w := bufio.NewWriterSize(pw, 1<<16)
		vals := make([]any, len(names))
		dest := make([]any, len(names))
		for i := range vals {
			dest[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(dest...); err != nil {
				pw.CloseWithError(err)
				return
			}
			for i, v := range vals {
				if i > 0 {
					w.WriteByte('\t')
				}
				w.WriteString(copyText(v))
			}
			w.WriteByte('\n')
		}
		if err := rows.Err(); err != nil {
			pw.CloseWithError(err)
			return
		}
		pw.CloseWithError(w.Flush())
	}()
	cols := make([]string, len(names))
	for i, n := range names {
		cols[i] = pgx.Identifier{strings.ToLower(n)}.Sanitize()
	}
	tag, err := conn.PgConn().CopyFrom(ctx, pr, fmt.Sprintf("COPY %s (%s) FROM STDIN", name, strings.Join(cols, ", ")))
	pr.Close()
	<-done
	if err != nil {
		return 0, err
	}
	return tag.RowsAffected(), nil
}

// copyText renders a value in COPY's text format.
func copyText(v any) string {
	var s string
	switch x := v.(type) {
	case nil:
		return `\N`
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case bool:
		return strconv.FormatBool(x)
	case time.Time:
		return x.UTC().Format("2006-01-02 15:04:05.999999")
	case []byte:
		s = string(x)
	case string:
		s = x
	default:
		s = fmt.Sprint(x)
	}
	return strings.NewReplacer(`\`, `\\`, "\n", `\n`, "\r", `\r`, "\t", `\t`).Replace(s)
}

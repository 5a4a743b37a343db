package datasets

import (
	"context"
	"database/sql"
	"fmt"
	"strings"
)

// Scanner runs the statements Clinsight writes itself to analyse a data
// source's database — the cohort pipeline's key analysis and value index,
// concept look-ups — read-only, streaming the rows, in the engine's
// dialect. It is the small interface both engines implement for their
// own (trusted, bounded) SQL: a read-only SQLite connection (DBScanner)
// and the PostgreSQL engine (postgres.Engine.Scan, inside its read-only
// transactions with the engine's timeouts). Statements a model or a
// person wrote never go through a Scanner: they go through Engine.Query.
type Scanner interface {
	// Dialect says which SQL the database speaks.
	Dialect() Dialect
	// Scan runs one reading statement and calls fn with each row's values
	// (nil, int64, float64, string or []byte; times as ISO text). vals is
	// reused between rows. The statement bounds its rows itself (LIMIT);
	// an error from fn stops the scan and is returned.
	Scan(ctx context.Context, query string, fn func(vals []any) error) error
}

// DBScanner is a Scanner over a SQLite connection opened with
// OpenReadOnly.
type DBScanner struct{ DB *sql.DB }

var _ Scanner = DBScanner{}

// Dialect returns DialectSQLite.
func (s DBScanner) Dialect() Dialect { return DialectSQLite }

// Scan runs query on the connection and calls fn for each row.
func (s DBScanner) Scan(ctx context.Context, query string, fn func(vals []any) error) error {
	rows, err := s.DB.QueryContext(ctx, query)
	if err != nil {
		return err
	}
	defer rows.Close()
	cols, err := rows.Columns()
	if err != nil {
		return err
	}
	vals := make([]any, len(cols))
	dest := make([]any, len(cols))
	for i := range vals {
		dest[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		for i, v := range vals {
			switch x := v.(type) {
			case int:
				vals[i] = int64(x)
			case bool:
				vals[i] = int64(0)
				if x {
					vals[i] = int64(1)
				}
			}
		}
		if err := fn(vals); err != nil {
			return err
		}
	}
	return rows.Err()
}

// QualifiedName returns the name to write in SQL for a table of a catalog
// in a statement Clinsight writes itself, every part quoted (so that
// mixed-case names keep their case on PostgreSQL):
// "mimiciv_hosp"."patients" for a table of a server schema, "patients" for
// SQLite.
func QualifiedName(t *Table) string {
	if t.Schema == "" {
		return QuoteIdent(t.Name)
	}
	return QuoteIdent(t.Schema) + "." + QuoteIdent(strings.TrimPrefix(t.Name, t.Schema+"."))
}

// ScanInt64s runs a statement returning one row of integers (counts) and
// returns them; NULL reads as 0.
func ScanInt64s(ctx context.Context, s Scanner, query string) ([]int64, error) {
	var out []int64
	seen := false
	err := s.Scan(ctx, query, func(vals []any) error {
		if seen {
			return nil
		}
		seen = true
		out = make([]int64, len(vals))
		for i, v := range vals {
			switch x := v.(type) {
			case nil:
			case int64:
				out[i] = x
			case float64:
				out[i] = int64(x)
			default:
				return fmt.Errorf("column %d is %T, not an integer", i+1, v)
			}
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !seen {
		return nil, fmt.Errorf("the statement returned no row")
	}
	return out, nil
}

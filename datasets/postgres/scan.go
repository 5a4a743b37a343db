package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/clinsight/clinsight/datasets"
)

var _ datasets.Scanner = (*Engine)(nil)

// Scan runs one statement Clinsight wrote itself (the cohort pipeline's
// key analysis and value index, concept look-ups) and calls fn with each
// row, converted as datasets.Scanner says: integers as int64, floats and
// numerics as float64, times as ISO text, other values as their text. It
// runs in the engine's read-only transaction with its timeouts and search
// path, as every statement does; it skips the gate and the result caps,
// so it is not for statements someone else wrote (see Query).
func (e *Engine) Scan(ctx context.Context, query string, fn func(vals []any) error) error {
	ctx, cancel := context.WithTimeout(ctx, e.opts.Timeout+cancelGrace)
	defer cancel()
	err := e.withTx(ctx, true, func(conn *pgx.Conn) error {
		rows, err := conn.Query(ctx, query)
		if err != nil {
			return err
		}
		defer rows.Close()
		var vals []any
		for rows.Next() {
			raw, err := rows.Values()
			if err != nil {
				return err
			}
			if vals == nil {
				vals = make([]any, len(raw))
			}
			for i, v := range raw {
				vals[i] = scanValue(v)
			}
			if err := fn(vals); err != nil {
				return err
			}
		}
		return rows.Err()
	})
	if err != nil {
		return e.translate(ctx, query, err)
	}
	return nil
}

// scanValue converts a value pgx decoded to the types of datasets.Scanner.
func scanValue(v any) any {
	switch x := v.(type) {
	case nil, int64, float64, string, []byte:
		return x
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint32:
		return int64(x)
	case float32:
		return float64(x)
	case bool:
		if x {
			return int64(1)
		}
		return int64(0)
	case time.Time:
		if x.Hour() == 0 && x.Minute() == 0 && x.Second() == 0 && x.Nanosecond() == 0 {
			return x.Format(time.DateOnly)
		}
		return x.Format(time.DateTime)
	case pgtype.Numeric:
		if !x.Valid {
			return nil
		}
		f, err := x.Float64Value()
		if err == nil && f.Valid {
			return f.Float64
		}
	case fmt.Stringer:
		return x.String()
	}
	return fmt.Sprint(v)
}

// explainStatement plans a statement that passed the gate without running
// it: EXPLAIN in the transaction the caller opened. Planning finds what
// parsing does not (constants folded: a division by zero, an impossible
// cast of a literal). A position in its error is moved back onto the
// statement's own text.
func explainStatement(ctx context.Context, conn *pgx.Conn, text string) error {
	const prefix = "EXPLAIN (COSTS OFF) "
	// The extended protocol, as for every statement: one statement only.
	_, err := conn.PgConn().ExecParams(ctx, prefix+text, nil, nil, nil, nil).Close()
	if err != nil {
		return shiftPosition(err, len([]rune(prefix)))
	}
	return nil
}

// shiftPosition moves the position of a server error back by n characters
// (the text put in front of the statement); positions inside that text
// are dropped.
func shiftPosition(err error, n int) error {
	pe, ok := asPgError(err)
	if !ok || pe.Position == 0 {
		return err
	}
	cp := *pe
	if int(cp.Position) > n {
		cp.Position -= int32(n)
	} else {
		cp.Position = 0
	}
	return &cp
}

// asPgError finds the server error in err.
func asPgError(err error) (*pgconn.PgError, bool) {
	var pe *pgconn.PgError
	ok := errors.As(err, &pe)
	return pe, ok
}

package postgres

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// An export holds one of the pool's connections for as long as it runs
// (Stream), so with as many exports as connections under way every other
// statement, catalog read or export waits for one. acquire bounds that
// wait by the engine's time limit (and the caller's context), and says
// plainly why when it runs out: the statement never ran, so "narrow it"
// (the time limit's advice) would be wrong.

// busyError: every connection of the pool stayed in use for the whole
// wait. It unwraps to the context's error.
type busyError struct {
	conns  int32
	server string
	waited time.Duration
	err    error
}

func (b *busyError) Error() string {
	return fmt.Sprintf("all %d connections to the PostgreSQL server at %s are in use by other queries and exports of this data source, and none came free within %s; wait for an export to finish (or cancel one), then try again",
		b.conns, b.server, b.waited)
}

func (b *busyError) Unwrap() error { return b.err }

// acquire takes a connection from the pool, waiting at most the engine's
// time limit (or the context's deadline) while all are in use. Opening a
// new connection is bounded by the context alone, as before: a slow login
// is not a busy pool.
func (e *Engine) acquire(ctx context.Context) (*pgxpool.Conn, error) {
	start := time.Now()
	actx, cancel := context.WithTimeout(ctx, e.opts.Timeout)
	defer cancel()
	pc, err := e.pool.Acquire(actx)
	if err != nil && errors.Is(actx.Err(), context.DeadlineExceeded) {
		if st := e.pool.Stat(); st.AcquiredConns() >= st.MaxConns() {
			return nil, &busyError{conns: st.MaxConns(), server: e.describe, waited: time.Since(start).Round(10 * time.Millisecond), err: actx.Err()}
		}
		if ctx.Err() == nil {
			pc, err = e.pool.Acquire(ctx) // still connecting
		}
	}
	if err != nil {
		return nil, e.connectError(err)
	}
	return pc, nil
}

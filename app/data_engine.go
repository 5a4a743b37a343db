package app

import (
	"context"

	"github.com/clinsight/clinsight/datasets"
)

// engine returns the engine of a source under the given limits (zero
// fields: the workspace's) and what releases it: for PostgreSQL the
// source's one engine the workspace keeps open (one connection pool; the
// call's row cap and timeout applied per call), for SQLite a read-only
// runner over the file (datasets.SQLiteEngine), closed by release. Both
// are a datasets.Engine: one code path reads either.
func (d *Data) engine(ctx context.Context, src Source, limits datasets.RunnerOptions) (datasets.Engine, func(), error) {
	if src.Kind == SourcePostgres {
		eng, release, err := d.ws.postgresEngine(ctx, src, limits)
		if err != nil {
			return nil, nil, err
		}
		return eng, release, nil
	}
	path, err := d.ws.file(src)
	if err != nil {
		return nil, nil, err
	}
	opts := d.ws.RunnerOptions()
	if limits.Timeout > 0 {
		opts.Timeout = limits.Timeout
	}
	if limits.MaxRows > 0 {
		opts.MaxRows = limits.MaxRows
	}
	eng, err := datasets.NewSQLiteEngine(ctx, path, opts)
	if err != nil {
		return nil, nil, err
	}
	return eng, func() { eng.Close() }, nil
}

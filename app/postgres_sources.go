package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/postgres"
)

// maxOpenEngines bounds the PostgreSQL engines a workspace keeps open (one
// per source, each call's limits applied with Engine.WithLimits); past it
// a query opens an engine of its own and closes it after.
const maxOpenEngines = 16

// engineKey names an open engine: its source.
type engineKey struct {
	source string
}

// engines are the PostgreSQL engines a workspace keeps open, one per
// source (one connection pool), until the source is removed or replaced or the workspace
// closes.
type engines struct {
	mu     sync.Mutex
	open   map[engineKey]*postgres.Engine
	closed bool
}

// get returns the open engine for key, opening it with open when there is
// none. release is to be called when the caller is done: it closes an
// engine that was not kept.
func (e *engines) get(key engineKey, open func() (*postgres.Engine, error)) (eng *postgres.Engine, release func(), err error) {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil, nil, errors.New("the workspace is closed")
	}
	if eng, ok := e.open[key]; ok {
		e.mu.Unlock()
		return eng, func() {}, nil
	}
	e.mu.Unlock()
	// Connecting does not hold the lock (Describe and other sources need
	// it); two first uses of a source may both connect, and one keeps its
	// engine.
	eng, err = open()
	if err != nil {
		return nil, nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		eng.Close()
		return nil, nil, errors.New("the workspace is closed")
	}
	if kept, ok := e.open[key]; ok {
		eng.Close()
		return kept, func() {}, nil
	}
	if len(e.open) >= maxOpenEngines {
		return eng, func() { eng.Close() }, nil
	}
	if e.open == nil {
		e.open = map[engineKey]*postgres.Engine{}
	}
	e.open[key] = eng
	return eng, func() {}, nil
}

// drop closes the engines of a source (by name, any case).
func (e *engines) drop(name string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, eng := range e.open {
		if strings.EqualFold(k.source, name) {
			eng.Close()
			delete(e.open, k)
		}
	}
}

// closeAll closes every engine; later gets fail.
func (e *engines) closeAll() {
	e.mu.Lock()
	defer e.mu.Unlock()
	for k, eng := range e.open {
		eng.Close()
		delete(e.open, k)
	}
	e.closed = true
}

// postgresEngine returns the open engine of a PostgreSQL source under the
// given limits (zero fields: the workspace's): the source's one engine
// (one connection pool, opened under the workspace's limits) with the
// call's row cap and timeout.
func (ws *Workspace) postgresEngine(ctx context.Context, src Source, limits datasets.RunnerOptions) (*postgres.Engine, func(), error) {
	if src.Postgres == nil {
		return nil, nil, fmt.Errorf("data source %s has no PostgreSQL connection", src.Label())
	}
	opts := ws.Config().RunnerOptions()
	pg := *src.Postgres
	eng, release, err := ws.engines.get(engineKey{source: src.Name}, func() (*postgres.Engine, error) {
		eng, err := postgres.Open(ctx, pg, postgres.Options{Limits: opts, Logger: ws.logger})
		if err != nil {
			return nil, fmt.Errorf("connect to data source %s: %w", src.Label(), err)
		}
		return eng, nil
	})
	if err != nil {
		return nil, nil, err
	}
	return eng.WithLimits(limits), release, nil
}

// AddPostgres registers a database on a PostgreSQL server as a data
// source, read in place and read-only. The source is checked (it holds no
// password, its schema names are well formed) but not connected to: see
// TestSource.
func (ws *Workspace) AddPostgres(name string, pg postgres.Source) (Source, error) {
	if err := pg.Validate(); err != nil {
		return Source{}, fmt.Errorf("data source %s: %w", name, err)
	}
	desc := "PostgreSQL " + pg.Describe()
	if len(pg.Schemas) > 0 {
		desc += ", schemas " + strings.Join(pg.Schemas, ", ")
	}
	src := Source{Name: name, Kind: SourcePostgres, Postgres: &pg, Description: desc + ", read-only", Added: time.Now().UTC()}
	if err := ws.AddSource(src); err != nil {
		return Source{}, err
	}
	return src, nil
}

// TestSource connects to a PostgreSQL source and reports on the
// connection: server version, user, database, what the role could write
// (with a warning and the statements for a read-only role).
func (ws *Workspace) TestSource(ctx context.Context, src Source) (postgres.ConnectionReport, error) {
	if src.Kind != SourcePostgres || src.Postgres == nil {
		return postgres.ConnectionReport{}, fmt.Errorf("%s is not a PostgreSQL source", src.Label())
	}
	rep, err := postgres.CheckSource(ctx, *src.Postgres, postgres.Options{Limits: ws.Config().RunnerOptions(), Logger: ws.logger})
	if err != nil {
		return rep, fmt.Errorf("test data source %s: %w", src.Label(), err)
	}
	return rep, nil
}

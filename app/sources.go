package app

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/clinsight/clinsight/datasets"
)

// ErrNoSource is returned when a data source is needed and none was
// chosen. Front ends add how to choose one (the CLI its --db flag, the GUI
// its picker).
var ErrNoSource = errors.New("no data source chosen: choose a data source or a database file")

// MissingDataError is returned when a data source lacks what a pipeline
// needs (trials to match, reports to learn from). Front ends add how to
// import it.
type MissingDataError struct {
	// Source names the data source (or its file).
	Source string
	// What is missing, in words: "trials", "radiology reports".
	What string
}

// Error says what is missing and what to do, in words the GUI can show.
func (e *MissingDataError) Error() string {
	return fmt.Sprintf("%s holds no %s: import some into it first", e.Source, e.What)
}

// Resolve turns what a person named — a registered data source's name, or
// the path of a database file — into a Source. It is the one place that
// decision is made: the front ends call it at their edge (the CLI on its
// --db flag, the GUI on the source picked) and hand the Source to the
// services. The returned Source's Path is absolute; a file that is not
// registered gets a Source with no Name and no Kind (see Source.Label).
func (ws *Workspace) Resolve(nameOrPath string) (Source, error) {
	if strings.TrimSpace(nameOrPath) == "" {
		return Source{}, ErrNoSource
	}
	if s, ok := ws.Source(nameOrPath); ok {
		if s.Kind == SourcePostgres {
			return s, nil
		}
		s.Path = ws.SourcePath(s)
		return s, nil
	}
	abs, err := filepath.Abs(nameOrPath)
	if err != nil {
		return Source{}, fmt.Errorf("the database file %s: %w", nameOrPath, err)
	}
	if s, ok := ws.sourceByPath(abs); ok {
		s.Path = abs
		return s, nil
	}
	return Source{Path: abs}, nil
}

// UnknownSourceError is returned when what a person named to read from is
// neither a registered data source nor an existing database file. Its
// message names the registered sources; front ends add how to register
// one.
type UnknownSourceError struct {
	// Name is what was named; Path the file it would be.
	Name, Path string
	// Known names the registered data sources.
	Known []string
}

// Error names the data sources there are, in words the GUI can show.
func (e *UnknownSourceError) Error() string {
	msg := fmt.Sprintf("there is no data source named %q and no database file %s", e.Name, e.Path)
	if strings.ContainsAny(e.Name, `/\`) {
		msg = "there is no database file " + e.Path
	}
	if len(e.Known) == 0 {
		return msg + "; no data source is registered yet"
	}
	return msg + "; the data sources are: " + strings.Join(e.Known, ", ")
}

// ResolveExisting is Resolve for what is read, not created: a name that is
// neither a registered source nor an existing database file is an
// *UnknownSourceError, and a registered source whose file is gone says so
// (datasets.ErrNoDatabase). PostgreSQL sources are returned as they are.
func (ws *Workspace) ResolveExisting(nameOrPath string) (Source, error) {
	src, err := ws.Resolve(nameOrPath)
	if err != nil || src.Kind == SourcePostgres {
		return src, err
	}
	_, err = os.Stat(src.Path)
	switch {
	case err == nil:
		return src, nil
	case !errors.Is(err, os.ErrNotExist):
		return Source{}, fmt.Errorf("the database file %s: %w", src.Path, err)
	case src.Name != "":
		return Source{}, fmt.Errorf("the database file of the data source %q is gone (%s): %w", src.Name, src.Path, datasets.ErrNoDatabase)
	}
	var known []string
	for _, s := range ws.Config().Sources {
		known = append(known, s.Name)
	}
	return Source{}, &UnknownSourceError{Name: nameOrPath, Path: src.Path, Known: known}
}

// Sources lists the registered data sources, resolved: their paths are
// absolute.
func (ws *Workspace) Sources() []Source {
	srcs := ws.Config().Sources
	for i := range srcs {
		if srcs[i].Kind == SourcePostgres {
			continue
		}
		srcs[i].Path = ws.SourcePath(srcs[i])
	}
	return srcs
}

// file returns the database file of a source handed to a service; a
// Source that names no file (the zero Source) is ErrNoSource.
func (ws *Workspace) file(src Source) (string, error) {
	if src.Kind == SourcePostgres {
		return "", fmt.Errorf("%s is a PostgreSQL source: this works on SQLite sources only for now", src.Label())
	}
	if strings.TrimSpace(src.Path) == "" {
		return "", ErrNoSource
	}
	return ws.SourcePath(src), nil
}

// Label names a source for people: its name when it is registered, else
// its file.
func (s Source) Label() string {
	if s.Name != "" {
		return s.Name
	}
	return s.Path
}

// sourceByPath finds the registered source whose database is path.
func (ws *Workspace) sourceByPath(path string) (Source, bool) {
	for _, s := range ws.Config().Sources {
		if s.Kind == SourcePostgres {
			continue
		}
		if filepath.Clean(ws.SourcePath(s)) == filepath.Clean(path) {
			return s, true
		}
	}
	return Source{}, false
}

// Source returns the data source with the given name.
func (ws *Workspace) Source(name string) (Source, bool) {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	for _, s := range ws.config.Sources {
		if strings.EqualFold(s.Name, name) {
			return s, true
		}
	}
	return Source{}, false
}

// SourcePath returns the absolute path of a source's database file;
// workspace-owned sources are stored relative to the data directory.
func (ws *Workspace) SourcePath(s Source) string {
	if filepath.IsAbs(s.Path) {
		return s.Path
	}
	return filepath.Join(ws.DataDir(), s.Path)
}

// AddSource registers a data source, replacing one of the same name.
func (ws *Workspace) AddSource(s Source) error {
	if err := s.Validate(); err != nil {
		return err
	}
	defer ws.engines.drop(s.Name)
	return ws.UpdateConfig(func(c *Config) {
		c.Sources = slices.DeleteFunc(c.Sources, func(o Source) bool { return strings.EqualFold(o.Name, s.Name) })
		c.Sources = append(c.Sources, s)
	})
}

// RemoveSource unregisters a data source. The database file is not deleted.
func (ws *Workspace) RemoveSource(name string) error {
	if _, ok := ws.Source(name); !ok {
		return fmt.Errorf("no data source named %q", name)
	}
	defer ws.engines.drop(name)
	return ws.UpdateConfig(func(c *Config) {
		c.Sources = slices.DeleteFunc(c.Sources, func(o Source) bool { return strings.EqualFold(o.Name, name) })
	})
}

// holds opens a source's database read-only and reports what holds says
// of it; false when it cannot be opened or holds fails.
func (ws *Workspace) holds(ctx context.Context, src Source, holds func(context.Context, *sql.DB) (bool, error)) bool {
	path, err := ws.file(src)
	if err != nil {
		return false
	}
	conn, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		return false
	}
	defer conn.Close()
	ok, err := holds(ctx, conn)
	return err == nil && ok
}

// sourcesHolding names the registered sources for which holds is true.
func (ws *Workspace) sourcesHolding(ctx context.Context, holds func(context.Context, *sql.DB) (bool, error)) []string {
	var out []string
	for _, s := range ws.sourcesWith(ctx, holds) {
		out = append(out, s.Name)
	}
	return out
}

// sourcesWith lists the registered sources, resolved, for which holds is
// true.
func (ws *Workspace) sourcesWith(ctx context.Context, holds func(context.Context, *sql.DB) (bool, error)) []Source {
	var out []Source
	for _, s := range ws.Sources() {
		if ws.holds(ctx, s, holds) {
			out = append(out, s)
		}
	}
	return out
}

// RegisterSQLite registers an existing SQLite file as a data source, in
// place and read-only: Clinsight never writes to it. The name defaults to
// the file's base name.
func (ws *Workspace) RegisterSQLite(ctx context.Context, file, name string) (Source, error) {
	abs, err := filepath.Abs(file)
	if err != nil {
		return Source{}, fmt.Errorf("register %s: %w", file, err)
	}
	info, err := datasets.InspectSQLite(ctx, abs)
	if err != nil {
		return Source{}, err
	}
	if name == "" {
		name = strings.TrimSuffix(filepath.Base(abs), filepath.Ext(abs))
	}
	src := Source{
		Name:        name,
		Path:        abs,
		Kind:        SourceSQLite,
		Description: fmt.Sprintf("existing SQLite file, %d tables, read-only", len(info.Tables)),
		Added:       time.Now().UTC(),
	}
	if err := ws.AddSource(src); err != nil {
		return Source{}, err
	}
	return src, nil
}

// RegisterImported registers a database the importers wrote as a source.
func (ws *Workspace) RegisterImported(name, path, kind, description string) (Source, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return Source{}, err
	}
	if rel, err := filepath.Rel(ws.DataDir(), abs); err == nil && !strings.HasPrefix(rel, "..") {
		abs = rel // owned by the workspace: keep it relocatable
	}
	src := Source{Name: name, Path: abs, Kind: kind, Description: description, Added: time.Now().UTC()}
	if err := ws.AddSource(src); err != nil {
		return Source{}, err
	}
	return src, nil
}

package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/datasets"
)

// ReadOnlySourceError is returned when an import (or the demo) would write
// to a data source registered read-only: an existing SQLite file added in
// place, which Clinsight never changes.
type ReadOnlySourceError struct {
	// Source is the read-only data source's name.
	Source string
	// Path is its file.
	Path string
}

// Error says what happened and what to do, in words the GUI can show.
func (e *ReadOnlySourceError) Error() string {
	return fmt.Sprintf("the data source %s was added read-only (an existing SQLite file Clinsight must not change: %s); import into a new data source instead",
		strconv.Quote(e.Source), e.Path)
}

// DatabaseBusyError is returned when another import is writing to the
// database an import needs (SQLite's "database is locked").
type DatabaseBusyError struct {
	// DB names the database: `the data source "x"` or its file.
	DB string
	// Err is SQLite's error.
	Err error
}

// Error says what to do, in words the GUI can show.
func (e *DatabaseBusyError) Error() string {
	return fmt.Sprintf("another import is writing to %s; wait for it to finish or cancel it, then try again", e.DB)
}

// Unwrap returns SQLite's error.
func (e *DatabaseBusyError) Unwrap() error { return e.Err }

// withWritableDB resolves db (a data source name or a file path), opens it
// for writing, creating it when missing, and runs fn on it. Every importer
// (CSV, MIMIC-IV, trials, reports, literature) goes through it, from the
// GUI and the CLI alike, so its promises hold for all of them:
//
//   - a data source registered read-only is never opened for writing, under
//     any name or path of its file (*ReadOnlySourceError);
//   - when the import fails, a database file it created is removed again if
//     it holds no table, so nothing is left behind (an existing database is
//     left as the importer's transactions leave it: unchanged by a failed
//     transaction, its journal mode never switched);
//   - a database another import is writing to gives *DatabaseBusyError.
func withWritableDB[R any](ctx context.Context, ws *Workspace, db string, fn func(*sql.DB) (R, error)) (R, error) {
	src, err := ws.Resolve(db)
	if err != nil {
		var zero R
		return zero, err
	}
	return withWritableSource(ctx, ws, src, fn)
}

// withWritableSource is withWritableDB for a resolved source.
func withWritableSource[R any](ctx context.Context, ws *Workspace, src Source, fn func(*sql.DB) (R, error)) (R, error) {
	var zero R
	path, err := ws.file(src)
	if err != nil {
		return zero, err
	}
	if err := ws.checkWritable(path); err != nil {
		return zero, err
	}
	// Every import is recorded in the audit trail when it starts (an
	// import that cannot be recorded does not start) and when it ends.
	if src.Name == "" {
		if s, ok := ws.sourceByPath(path); ok {
			src.Name = s.Name
		}
	}
	if err := ws.Record(ctx, audit.Event{Action: audit.ActionImport, Source: src.Name, Details: map[string]any{"database": path, "status": "started"}}); err != nil {
		return zero, err
	}
	conn, created, err := datasets.OpenImportTarget(ctx, path, datasets.ImportTargetOptions{BusyTimeout: ws.importBusyTimeout})
	if err != nil {
		ws.removeFailedImport(path, created)
		err = ws.importError(path, err)
		ws.recordImportEnd(src, path, zero, err)
		return zero, err
	}
	res, err := fn(conn)
	if cerr := conn.Close(); cerr != nil && err == nil {
		err = fmt.Errorf("close %s: %w", path, cerr)
	}
	if err != nil {
		ws.removeFailedImport(path, created)
		err = ws.importError(path, err)
		ws.recordImportEnd(src, path, res, err)
		return res, err
	}
	if err := ws.recordImportEnd(src, path, res, nil); err != nil {
		return res, err
	}
	return res, nil
}

// recordImportEnd records how an import ended: its result (counts and
// names, as the importer reports them) or its error. The data stays
// imported when this record cannot be written (the start was recorded);
// the error says so.
func (ws *Workspace) recordImportEnd(src Source, path string, res any, failed error) error {
	d := map[string]any{"database": path, "status": "done"}
	if failed != nil {
		d["status"], d["error"] = "failed", failed.Error()
	} else if b, err := json.Marshal(res); err == nil {
		d["result"] = string(b)
	}
	// Recorded even when the import was cancelled: that is when the
	// record matters.
	if err := ws.Record(context.Background(), audit.Event{Action: audit.ActionImport, Source: src.Name, Details: d}); err != nil {
		ws.logger.Error("audit trail", "err", err)
		return fmt.Errorf("the data was imported, but the end of the import could not be recorded: %w", err)
	}
	return nil
}

// sqliteCompanions are the endings of the files SQLite keeps beside a
// database: its rollback journal, write-ahead log and shared-memory index.
var sqliteCompanions = [...]string{"-journal", "-wal", "-shm"}

// checkWritable refuses a path that is the file of a data source
// registered read-only (the same path, or the same file reached through a
// link), and one where SQLite keeps the journal of an existing database:
// a database written there would be taken for that journal, and damage or
// lock out the database beside it.
func (ws *Workspace) checkWritable(path string) error {
	for _, suffix := range sqliteCompanions {
		if db, ok := strings.CutSuffix(path, suffix); ok {
			if fi, err := os.Stat(db); err == nil && fi.Mode().IsRegular() {
				return fmt.Errorf("%s is where SQLite keeps the journal of the database %s, which a database written there would damage; choose another file name", path, db)
			}
		}
	}
	target, terr := os.Stat(path)
	for _, s := range ws.Config().Sources {
		if s.Kind != SourceSQLite {
			continue
		}
		sp := ws.SourcePath(s)
		same := filepath.Clean(sp) == filepath.Clean(path)
		if !same && terr == nil {
			if fi, err := os.Stat(sp); err == nil {
				same = os.SameFile(fi, target)
			}
		}
		if same {
			return &ReadOnlySourceError{Source: s.Name, Path: sp}
		}
	}
	return nil
}

// removeFailedImport removes a database file a failed import created when
// it holds no table.
func (ws *Workspace) removeFailedImport(path string, created bool) {
	if !created {
		return
	}
	removed, err := datasets.RemoveIfEmpty(context.Background(), path)
	switch {
	case err != nil:
		ws.logger.Warn("could not remove the empty database a failed import created", "path", path, "err", err)
	case removed:
		ws.logger.Info("removed the empty database a failed import created", "path", path)
	}
}

// importError turns SQLite's "database is locked" into a message that
// says what is going on.
func (ws *Workspace) importError(path string, err error) error {
	if datasets.IsBusy(err) {
		return &DatabaseBusyError{DB: ws.describeDB(path), Err: err}
	}
	return err
}

// describeDB names a database file for a message: `the data source "x"`
// when it is registered, else its path.
func (ws *Workspace) describeDB(path string) string {
	for _, s := range ws.Config().Sources {
		if filepath.Clean(ws.SourcePath(s)) == filepath.Clean(path) {
			return "the data source " + strconv.Quote(s.Name)
		}
	}
	return path
}

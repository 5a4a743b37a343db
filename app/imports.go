package app

import (
	"context"
	"errors"
	"path/filepath"

	"github.com/clinsight/clinsight/datasets"
)

// Workspace databases that imports from the desktop app write to.
const (
	// ImportedSourceName is the source holding CSV files imported in the app.
	ImportedSourceName = "imported"
	importedFile       = "imported.sqlite"
	// MIMICSourceName is the source holding a MIMIC-IV directory import.
	MIMICSourceName = "mimic-iv"
	mimicFile       = "mimic-iv.sqlite"
)

// BrowseTable returns the first rows of a table (at most limit; the
// workspace row cap when limit ≤ 0), through the read-only runner.
func (ws *Workspace) BrowseTable(ctx context.Context, db, table string, limit int) (*datasets.Result, error) {
	if table == "" {
		return nil, errors.New("no table selected")
	}
	opts := datasets.RunnerOptions{}
	if limit > 0 {
		opts.MaxRows = limit
	}
	return ws.Query(ctx, db, "SELECT * FROM "+datasets.QuoteIdent(table), opts)
}

// ImportCSVToWorkspace imports a CSV file into the workspace's "imported"
// database and registers it as a source. The table is named after the file
// unless opts.Table is set.
func (ws *Workspace) ImportCSVToWorkspace(ctx context.Context, file string, opts datasets.CSVOptions) (datasets.ImportResult, error) {
	path := filepath.Join(ws.DataDir(), importedFile)
	res, err := ws.ImportCSV(ctx, path, file, opts)
	if err != nil {
		return res, err
	}
	if _, ok := ws.Source(ImportedSourceName); !ok {
		if _, err := ws.RegisterImported(ImportedSourceName, path, SourceCSV, "CSV files imported in Clinsight"); err != nil {
			return res, err
		}
	}
	return res, nil
}

// ImportMIMICToWorkspace imports a MIMIC-IV directory into the workspace's
// "mimic-iv" database and registers it as a source.
func (ws *Workspace) ImportMIMICToWorkspace(ctx context.Context, dir string, opts datasets.MIMICOptions) (datasets.MIMICResult, error) {
	path := filepath.Join(ws.DataDir(), mimicFile)
	res, err := ws.ImportMIMIC(ctx, path, dir, opts)
	if len(res.Tables) > 0 {
		if _, ok := ws.Source(MIMICSourceName); !ok {
			desc := "MIMIC-IV imported from " + filepath.Base(filepath.Clean(dir))
			if _, rerr := ws.RegisterImported(MIMICSourceName, path, SourceMIMICIV, desc); rerr != nil && err == nil {
				err = rerr
			}
		}
	}
	return res, err
}

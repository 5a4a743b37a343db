package app

import (
	"context"
	"database/sql"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/app/omop"
	"github.com/clinsight/clinsight/datasets"
)

// ImportOMOPInto imports an OMOP CDM 5.4 folder of per-table CSV files
// (see datasets.ImportOMOP) into a source's database (created when
// missing).
func (d *Data) ImportOMOPInto(ctx context.Context, into Source, dir string, opts datasets.OMOPOptions) (datasets.OMOPResult, error) {
	if opts.Logger == nil {
		opts.Logger = d.ws.logger
	}
	return withWritableSource(ctx, d.ws, into, func(conn *sql.DB) (datasets.OMOPResult, error) {
		return datasets.ImportOMOP(ctx, conn, dir, opts)
	})
}

// conceptResolver returns the concept resolver of an OMOP CDM source (nil
// for other sources) and what closes it: a read-only connection of its
// own, for the vocabulary lookups.
func conceptResolver(ctx context.Context, path string, cat *datasets.Catalog) (cohort.ConceptResolver, func() error, error) {
	if !datasets.IsOMOP(cat) {
		return nil, func() error { return nil }, nil
	}
	db, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		return nil, nil, err
	}
	r, err := omop.NewResolver(ctx, db)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	return r, db.Close, nil
}

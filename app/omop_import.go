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

// SearchConcepts looks a term (a name, a lay term, an abbreviation or a
// code) up in the vocabulary of an OMOP CDM source: its best standard
// concepts with the persons each finds, at most limit; domain may be "".
func (d *Data) SearchConcepts(ctx context.Context, src Source, text, domain string, limit int) ([]ConceptHit, error) {
	if src.Kind == SourcePostgres {
		eng, release, err := d.ws.postgresEngine(ctx, src, datasets.RunnerOptions{})
		if err != nil {
			return nil, err
		}
		defer release()
		r, err := omop.NewResolverOn(ctx, eng)
		if err != nil {
			return nil, err
		}
		return r.SearchHits(ctx, omop.NewTerm(text, domain), limit, d.ws.minPersons(src))
	}
	path, err := d.ws.file(src)
	if err != nil {
		return nil, err
	}
	db, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	r, err := omop.NewResolver(ctx, db)
	if err != nil {
		return nil, err
	}
	// An aggregate-only source's counts under its minimum cell size are
	// hidden, as everywhere else.
	return r.SearchHits(ctx, omop.NewTerm(text, domain), limit, d.ws.minPersons(src))
}

// ConceptHit is a concept found by SearchConcepts.
type ConceptHit = omop.Hit

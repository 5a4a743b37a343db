package app

import (
	"context"

	"github.com/clinsight/clinsight/app/evidence"
)

// ExtractFieldsOf extracts the fields from the included studies ids (every
// included study when ids is empty; a study not included is an
// *evidence.NotIncludedError and nothing is extracted), as ExtractFields
// does: the command line's extraction of named studies of a saved review.
func (r *Review) ExtractFieldsOf(ctx context.Context, ids []string, progress func(done, total int)) error {
	return r.extract(ctx, progress, func(s *evidence.Session, ctx context.Context, progress func(done, total int)) error {
		s.Studies = ids
		return s.ExtractFields(ctx, progress)
	})
}

// ExtractResultsOf extracts outcome i's result of the included studies
// ids (every included study when ids is empty), as ExtractResults does.
func (r *Review) ExtractResultsOf(ctx context.Context, outcome int, ids []string, progress func(done, total int)) error {
	return r.extract(ctx, progress, func(s *evidence.Session, ctx context.Context, progress func(done, total int)) error {
		s.Studies = ids
		return s.ExtractResults(ctx, outcome, progress)
	})
}

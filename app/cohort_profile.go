package app

import (
	"context"
	"errors"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/progress"
)

// IndexWithoutProfile builds the retrieval index of a source as Clinsight
// would for a database it has no curated profile of: every table documented
// from its structure only (names split into words, general abbreviations
// written out, keys, joins and sampled values; datasets.CatalogOptions
// GeneratedDocsOnly), and no schema vocabulary. It measures how retrieval
// fares on an unknown database (clinsight eval retrieval --no-profile).
// Like Index, it replaces the source's stored table vectors, which the next
// Index embeds again.
func (c *Cohort) IndexWithoutProfile(ctx context.Context, src Source, onProgress progress.Func) (*cohort.Index, error) {
	if src.Kind == SourcePostgres {
		return nil, errors.New("retrieval without the profile is measured on SQLite data sources only")
	}
	return c.index(ctx, src, onProgress, datasets.CatalogOptions{GeneratedDocsOnly: true})
}

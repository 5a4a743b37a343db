package app

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
)

// maxContributionQueries bounds the aggregate calls whose individuals are
// counted one by one (when counting them all at once failed); the
// statistics of the others are suppressed.
const maxContributionQueries = 8

// cellIndividuals counts, for each cell of an aggregate result, the fewest
// individuals behind one of its aggregates (disclosure.PlanContributions):
// sum(CASE WHEN died …) in a group of 84 admissions comes from the few who
// died, not from the 84. individual is the expression that counted the
// rows' individuals ("" when none was found: records are counted). The
// statement runs again once, on the same engine with the same limits;
// when that fails (PostgreSQL compares no interval with 0), each aggregate
// is counted on its own, tested for NULL only when the comparison fails;
// an aggregate whose individuals cannot be counted makes its cells
// unknown, and their statistics are suppressed. nil means there is
// nothing to check.
func (d *Data) cellIndividuals(ctx context.Context, src Source, query, individual string, res *datasets.Result, kinds []disclosure.ColumnKind, limits datasets.RunnerOptions) [][]int64 {
	ncols := len(res.Columns)
	all, ok := disclosure.PlanContributions(query, individual, true, disclosure.AllCalls)
	if !ok || !all.Fits(ncols) {
		return nil
	}
	if all.Query != "" {
		if cells, ok := d.contributions(ctx, src, all, res, kinds, limits); ok {
			return cells
		}
	}
	out := make([][]int64, len(res.Rows))
	for i := range out {
		out[i] = make([]int64, ncols)
		for j := range out[i] {
			out[i][j] = math.MaxInt64
		}
	}
	unknown := false
	for call := range all.Calls() {
		var cells [][]int64
		counted := false
		for _, typed := range []bool{true, false} {
			p, ok := disclosure.PlanContributions(query, individual, typed, call)
			if !ok || call >= maxContributionQueries || ctx.Err() != nil {
				break
			}
			if cells, counted = d.contributions(ctx, src, p, res, kinds, limits); counted {
				break
			}
		}
		if !counted {
			unknown = true
			p, _ := disclosure.PlanContributions(query, individual, false, call)
			cells = make([][]int64, len(res.Rows))
			for i := range cells {
				cells[i] = p.UnknownCells(ncols)
			}
		}
		for i := range out {
			for j := range out[i] {
				out[i][j] = disclosure.Fewest(out[i][j], cells[i][j])
			}
		}
	}
	if unknown {
		d.ws.logger.Warn("suppression: the individuals behind some aggregates could not be counted; their statistics are suppressed", "source", src.Name)
	}
	return out
}

// contributions runs a contributions query and reads its counts per cell.
func (d *Data) contributions(ctx context.Context, src Source, p disclosure.Contributions, res *datasets.Result, kinds []disclosure.ColumnKind, limits datasets.RunnerOptions) ([][]int64, bool) {
	aug, err := d.query(ctx, src, p.Query, limits)
	if err != nil {
		return nil, false
	}
	extra, ok := alignExtra(res, aug, kinds, p.Added())
	if !ok {
		return nil, false
	}
	out := make([][]int64, len(res.Rows))
	for i := range res.Rows {
		out[i] = p.Cells(extra[i], len(res.Columns))
	}
	return out, true
}

// alignExtra reads the added columns of an augmented result (the last
// added ones), matching its rows to res by their key (grouping) columns:
// in order when they agree, by key otherwise.
func alignExtra(res, aug *datasets.Result, kinds []disclosure.ColumnKind, added int) ([][]any, bool) {
	n := len(res.Columns)
	if len(aug.Columns) != n+added || len(aug.Rows) != len(res.Rows) || len(kinds) != n {
		return nil, false
	}
	key := func(r []any) string {
		var b strings.Builder
		for j, k := range kinds {
			if k == disclosure.Key {
				fmt.Fprintf(&b, "%T:%v\x00", r[j], r[j])
			}
		}
		return b.String()
	}
	out := make([][]any, len(res.Rows))
	inOrder := true
	for i := range res.Rows {
		if key(res.Rows[i]) != key(aug.Rows[i]) {
			inOrder = false
			break
		}
		out[i] = aug.Rows[i][n:]
	}
	if inOrder {
		return out, true
	}
	byKey := map[string][]any{}
	for _, r := range aug.Rows {
		k := key(r)
		if _, dup := byKey[k]; dup {
			return nil, false
		}
		byKey[k] = r[n:]
	}
	for i, r := range res.Rows {
		x, ok := byKey[key(r)]
		if !ok {
			return nil, false
		}
		out[i] = x
	}
	return out, true
}

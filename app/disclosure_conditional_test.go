package app

import (
	"context"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
)

// conditionalSQL counts the demo's 10 women of 30 patients in one row of
// 30 individuals, in every disguise a count of a condition takes (the 20
// men beside the 30 patients too), beside aggregates of 11 or more people
// that must stay exact.
const conditionalSQL = `SELECT count(*) AS n,
 sum(CASE WHEN gender = 'F' THEN 1 ELSE 0 END) AS women,
 sum(gender = 'F') AS women2,
 count(*) FILTER (WHERE gender = 'F') AS women3,
 round(100.0 * avg(gender = 'F'), 1) AS pct_women,
 avg(gender = 'M') AS share_men,
 count(*) - count(CASE WHEN gender = 'M' THEN 1 END) AS women4,
 max(CASE WHEN gender = 'F' THEN anchor_age END) AS oldest_woman,
 sum(CASE WHEN gender = 'M' THEN 1 ELSE 0 END) AS men,
 avg(anchor_age) AS age
FROM patients`

// TestConditionalCountsSuppressed: a count of a condition met by fewer
// than 11 people, inside a row of 30, is hidden whatever its form (a sum
// of a CASE or of a comparison, count(*) FILTER, a percentage or a share
// of a 0/1 value, a difference of counts, the max of a CASE, the 20 men
// whose complement is the 10 women), on an aggregate-only source's screen
// and in a row-level source's suppressed export; the count of all and the
// mean age stay exact.
func TestConditionalCountsSuppressed(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	ref := rawQuery(t, ws, src, conditionalSQL)
	women := rawQuery(t, ws, src, "SELECT count(*) FROM patients WHERE gender = 'F'").Rows[0][0].(int64)
	if women < 1 || women >= disclosure.DefaultMinCell || ref.Rows[0][1] != women || ref.Rows[0][8].(int64) < disclosure.DefaultMinCell {
		t.Fatalf("the demo has %d women, row %v: the test needs 1 to 10 women and 11 or more men", women, ref.Rows[0])
	}
	hidden := []string{"women", "women2", "women3", "pct_women", "share_men", "women4", "oldest_woman", "men"}
	exact := []string{"n", "age"}
	// check compares a row shown or exported (cell text) with the reference.
	check := func(what string, cols []string, cell func(col int) string) {
		t.Helper()
		idx := map[string]int{}
		for j, c := range cols {
			idx[c] = j
		}
		for _, c := range hidden {
			if got := cell(idx[c]); got != "<11" {
				t.Errorf("%s: %s = %s, want <11", what, c, got)
			}
		}
		for _, c := range exact {
			got, err := strconv.ParseFloat(cell(idx[c]), 64)
			want, _ := ref.Rows[0][idx[c]].(float64)
			if n, ok := ref.Rows[0][idx[c]].(int64); ok {
				want = float64(n)
			}
			if err != nil || math.Abs(got-want) > 1e-9*math.Abs(want) {
				t.Errorf("%s: %s = %s, want %v", what, c, cell(idx[c]), want)
			}
		}
	}

	xlsx := filepath.Join(t.TempDir(), "conditional.xlsx")
	if _, err := ws.Data().ExportQuery(ctx, xlsx, src, conditionalSQL, datasets.RunnerOptions{}, export.Provenance{},
		ExportOptions{Source: src, Query: conditionalSQL}); err != nil {
		t.Fatal(err)
	}
	rows, _ := workbook(t, xlsx, "Results")
	check("row-level export", rows[0], func(j int) string { return rows[1][j] })

	setAccess(t, ws, &src, disclosure.AggregateOnly)
	got, err := ws.Data().QueryDisclosed(ctx, src, conditionalSQL, datasets.RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	check("aggregate-only query", got.Result.ColumnNames(), func(j int) string { return fmt.Sprint(got.Result.Rows[0][j]) })
}

// TestManyAggregatesCountedOneByOne: a select list with more aggregates
// than one augmented query counts is counted aggregate by aggregate; those
// beyond the bound are unknown and suppressed (never shown unchecked), and
// the first ones, of 30 people, are shown.
func TestManyAggregatesCountedOneByOne(t *testing.T) {
	ws, src := disclosureDemo(t)
	setAccess(t, ws, &src, disclosure.AggregateOnly)
	q := "SELECT count(*) AS n"
	for i := range 10 {
		q += fmt.Sprintf(", avg(anchor_age + %d) AS a%d", i, i)
	}
	q += ", sum(gender = 'F') AS women FROM patients"
	got, err := ws.Data().QueryDisclosed(context.Background(), src, q, datasets.RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	row := got.Result.Rows[0]
	if _, hidden := row[1].(disclosure.Suppressed); hidden {
		t.Errorf("the first mean age of 30 people is hidden: %v", row)
	}
	if _, hidden := row[len(row)-1].(disclosure.Suppressed); !hidden {
		t.Errorf("the count of women beyond the checked aggregates is shown: %v", row)
	}
}

package datasets

import (
	"context"
	"fmt"
	"testing"

	"github.com/clinsight/clinsight/internal/streamtest"
)

// TestRunnerColumnOrigins: Query and Stream report the table column each
// result column's values come from, through an alias, a subquery and a
// WITH clause, and none for an expression.
func TestRunnerColumnOrigins(t *testing.T) {
	r := newTestRunner(t, newFixtureDB(t), RunnerOptions{})
	ctx := context.Background()
	for _, tc := range []struct {
		query string
		want  []string // "table.column" per result column, "" for none
	}{
		{"SELECT subject_id, gender FROM patients", []string{"patients.subject_id", "patients.gender"}},
		{"SELECT subject_id AS a, p.dod AS b FROM patients p", []string{"patients.subject_id", "patients.dod"}},
		{"WITH t AS (SELECT subject_id AS a, dod AS b FROM patients) SELECT a, b FROM t",
			[]string{"patients.subject_id", "patients.dod"}},
		{"SELECT x FROM (SELECT hadm_id AS x FROM admissions)", []string{"admissions.hadm_id"}},
		{"SELECT subject_id + 0 AS a, count(*) AS n, 'x' AS c FROM patients GROUP BY 1", []string{"", "", ""}},
		{"WITH t AS (SELECT min(dod) AS m FROM patients) SELECT m FROM t", []string{""}},
	} {
		res, err := r.Query(ctx, tc.query)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		s, err := r.Stream(ctx, tc.query)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		streamed := s.Columns()
		streamtest.ReadAll(t, s)
		for _, cols := range [][]Column{res.Columns, streamed} {
			if len(cols) != len(tc.want) {
				t.Fatalf("%s: %d columns, want %d", tc.query, len(cols), len(tc.want))
			}
			for i, c := range cols {
				got := ""
				if c.OriginColumn != "" || c.OriginTable != "" {
					got = fmt.Sprintf("%s.%s", c.OriginTable, c.OriginColumn)
				}
				if got != tc.want[i] {
					t.Errorf("%s: column %d (%s) origin %q, want %q", tc.query, i, c.Name, got, tc.want[i])
				}
			}
		}
	}
}

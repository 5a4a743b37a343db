package postgres

import (
	"context"
	"testing"

	"github.com/clinsight/clinsight/datasets"
)

// TestQueryColumnOrigins: a PostgreSQL result reports the table column of
// each result column through an alias and a WITH clause, and none for an
// expression, as the SQLite runner does.
func TestQueryColumnOrigins(t *testing.T) {
	d := newTestDB(t)
	e := d.open(t, datasets.RunnerOptions{})
	for _, tc := range []struct {
		query string
		want  []string
	}{
		{"SELECT subject_id, gender FROM patients", []string{"patients.subject_id", "patients.gender"}},
		{"WITH t AS (SELECT subject_id AS a, dob AS b FROM patients) SELECT a, b FROM t", []string{"patients.subject_id", "patients.dob"}},
		{"SELECT subject_id + 0 AS a, count(*) AS n FROM patients GROUP BY 1", []string{".", "."}},
	} {
		res, err := e.Query(context.Background(), tc.query)
		if err != nil {
			t.Fatalf("%s: %v", tc.query, err)
		}
		for i, c := range res.Columns {
			if got := c.OriginTable + "." + c.OriginColumn; got != tc.want[i] {
				t.Errorf("%s: column %s origin %q, want %q", tc.query, c.Name, got, tc.want[i])
			}
		}
	}
}

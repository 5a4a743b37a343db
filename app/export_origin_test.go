package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
)

// TestExportRenamedIdentifiers: an identifier renamed by a WITH clause or
// an alias is still an identifier, recognised by the table column SQLite
// traces its values to: a streamed export (a WITH statement) and an
// in-memory one (a compound statement) refuse it unconfirmed naming the
// renamed columns, and confirmed, pseudonymise the renamed subject_id,
// shift the renamed dod and say so in Provenance.
func TestExportRenamedIdentifiers(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, query string
		streamed    bool
	}{
		{"with", "WITH t AS (SELECT subject_id AS a, dod AS b FROM patients) SELECT a, b FROM t ORDER BY a", true},
		{"compound", "SELECT subject_id AS a, dod AS b FROM patients WHERE gender = 'F' " +
			"UNION ALL SELECT subject_id, dod FROM patients WHERE gender <> 'F' ORDER BY 1", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res := rawQuery(t, ws, src, tc.query)
			_, err := ws.Data().ExportQuery(ctx, filepath.Join(dir, tc.name+"-refused.xlsx"), src, tc.query,
				datasets.RunnerOptions{}, export.Provenance{}, ExportOptions{Source: src, Query: tc.query})
			var pl *disclosure.PatientLevelError
			if !errors.As(err, &pl) || !strings.Contains(err.Error(), "a, b") {
				t.Fatalf("unconfirmed export of renamed identifiers: %v", err)
			}
			opts := ExportOptions{Source: src, Query: tc.query, PatientLevel: true, ShiftDates: true}
			check := func(path string) {
				t.Helper()
				rows, prov := workbook(t, path, "Results")
				for _, want := range []string{"Pseudonymised columns=a:", "Dates shifted=b:"} {
					if !strings.Contains(prov, want) {
						t.Errorf("provenance lacks %q:\n%s", want, prov)
					}
				}
				if len(rows) != len(res.Rows)+1 {
					t.Fatalf("%d rows written, want %d", len(rows)-1, len(res.Rows))
				}
				dates := 0
				for i, r := range res.Rows {
					got := rows[i+1]
					if got[0] == fmt.Sprint(r[0]) {
						t.Fatalf("row %d: raw subject_id %v exported", i, r[0])
					}
					if r[1] != nil {
						dates++
						if len(got) > 1 && got[1] == fmt.Sprint(r[1]) {
							t.Fatalf("row %d: raw dod %v exported", i, r[1])
						}
					}
				}
				if dates == 0 {
					t.Fatal("no date of death in the demo: the test checks no shift")
				}
			}
			qPath := filepath.Join(dir, tc.name+"-query.xlsx")
			qe, err := ws.Data().ExportQuery(ctx, qPath, src, tc.query, datasets.RunnerOptions{}, export.Provenance{}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if qe.Streamed != tc.streamed {
				t.Fatalf("streamed %v, want %v", qe.Streamed, tc.streamed)
			}
			check(qPath)
			mPath := filepath.Join(dir, tc.name+"-mem.xlsx")
			if _, err := ws.Data().Export(ctx, mPath, res, export.Provenance{Query: tc.query}, opts); err != nil {
				t.Fatal(err)
			}
			check(mPath)
		})
	}
}

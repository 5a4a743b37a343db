package app

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
)

// attackQueries look aggregate at their top level but disclose single
// patients' values or exact small counts on the demo (30 patients, 10
// women): each must be refused by an aggregate-only source.
var attackQueries = []string{
	// One row per patient: the other columns are that patient's values and
	// the number of rows per label is an exact count.
	"SELECT anchor_age, count(*) FROM patients GROUP BY subject_id",
	"SELECT gender, count(*) FROM patients GROUP BY subject_id",
	"SELECT hadm_id % 1000, count(*) FROM admissions GROUP BY hadm_id",
	"SELECT p.gender, count(*) FROM patients p GROUP BY p.subject_id / 1",
	// The identifier itself, transformed.
	"SELECT substr(subject_id, 1, 9) AS s, count(*) FROM patients GROUP BY s",
	// A scalar subquery's small count beside the row's large one.
	"SELECT (SELECT count(*) FROM patients WHERE gender = 'F') AS x, count(*) FROM patients",
	"SELECT count(*), (SELECT count(*) FROM patients WHERE gender = 'F') FROM patients",
	// Every value of a group listed.
	"SELECT gender, group_concat(anchor_age) FROM patients GROUP BY gender",
	"SELECT gender, json_group_array(anchor_age) AS n FROM patients GROUP BY gender",
	"SELECT json_group_array(anchor_age) FROM patients",
	"SELECT gender, n, cnt FROM (SELECT gender, group_concat(anchor_age) AS n, count(*) AS cnt FROM patients GROUP BY gender)",
	// The per-patient rows of a nested query shown as they are.
	"WITH c AS (SELECT anchor_age AS a, count(*) AS n FROM patients GROUP BY subject_id) SELECT a, n FROM c",
	"SELECT a, n FROM (SELECT anchor_age AS a, count(*) AS n FROM patients GROUP BY subject_id)",
}

// TestAggregateOnlyRefusesDisguisedRowLevelResults: statements whose
// outer SELECT aggregates but whose rows are single patients (GROUP BY an
// identifier), show an identifier through an expression, list every value
// of a group (group_concat), or carry a scalar subquery's small count are
// refused by an aggregate-only source on screen, for the model and in an
// export; before the fix they came back with the patients' values (and 10
// women counted exactly) under a count suppressed to <11.
func TestAggregateOnlyRefusesDisguisedRowLevelResults(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	setAccess(t, ws, &src, disclosure.AggregateOnly)
	for _, q := range attackQueries {
		t.Run(q, func(t *testing.T) {
			raw := rawQuery(t, ws, src, q)
			if len(raw.Rows) == 0 {
				t.Fatal("the attack returns nothing on the demo")
			}
			d, err := ws.Data().QueryDisclosed(ctx, src, q, datasets.RunnerOptions{})
			var agg *disclosure.AggregateOnlyError
			if !errors.As(err, &agg) {
				t.Fatalf("QueryDisclosed = %v rows, %v; want an aggregate-only refusal", rowsOf(d.Result), err)
			}
			if _, err := ws.discloseCohort(ctx, src, q, raw); !errors.As(err, &agg) {
				t.Errorf("the cohort pipeline's disclosure = %v; want an aggregate-only refusal", err)
			}
			path := filepath.Join(t.TempDir(), "x.xlsx")
			if _, err := ws.Data().Export(ctx, path, raw, export.Provenance{Query: q}, ExportOptions{Source: src, Query: q}); !errors.As(err, &agg) {
				t.Errorf("export = %v; want an aggregate-only refusal", err)
			}
		})
	}
}

// TestDisguisedRowLevelResultsNeedPatientLevelExport: from a row-level
// source the same statements export only as patient-level results (the
// confirmation asked for), and a model that may not see result rows hears
// the row count, not the values.
func TestDisguisedRowLevelResultsNeedPatientLevelExport(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	q := "SELECT gender, group_concat(anchor_age) AS ages FROM patients GROUP BY gender"
	raw := rawQuery(t, ws, src, q)
	var pl *disclosure.PatientLevelError
	if _, err := ws.Data().Export(ctx, filepath.Join(t.TempDir(), "x.xlsx"), raw, export.Provenance{Query: q}, ExportOptions{Source: src, Query: q}); !errors.As(err, &pl) {
		t.Errorf("export without confirmation = %v; want a patient-level refusal", err)
	}
	if err := ws.SetHostChoices(HostChoices{SendRows: false}); err != nil { // as for a remote host
		t.Fatal(err)
	}
	if ws.SendRowsToModel() {
		t.Fatal("result rows still go to the model")
	}
	out, err := ws.discloseCohort(ctx, src, q, raw)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range out.Explain.Rows {
		for _, v := range r {
			if s := fmt.Sprint(v); strings.Contains(s, ",") {
				t.Errorf("the model would hear the listed values %q", s)
			}
		}
	}
}

// TestAggregateOnlyKeepsPlainAggregates: the guard does not refuse what an
// aggregate-only source is for.
func TestAggregateOnlyKeepsPlainAggregates(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	setAccess(t, ws, &src, disclosure.AggregateOnly)
	for _, q := range []string{
		genderSQL,
		"SELECT gender, count(DISTINCT subject_id) AS patients FROM admissions a JOIN patients p USING (subject_id) GROUP BY gender",
		"SELECT CAST(count(*) AS TEXT) AS n FROM patients",
		"SELECT gender, avg(anchor_age) AS mean_age FROM patients GROUP BY gender",
		"SELECT n, count(*) FROM (SELECT subject_id, count(*) AS n FROM admissions GROUP BY subject_id) GROUP BY n",
	} {
		if _, err := ws.Data().QueryDisclosed(ctx, src, q, datasets.RunnerOptions{}); err != nil {
			t.Errorf("%s: %v", q, err)
		}
	}
}

func rowsOf(r *datasets.Result) any {
	if r == nil {
		return nil
	}
	return r.Rows
}

// TestTable1OfASmallCohortOnAnAggregateOnlySource: Table 1 of a cohort of
// fewer than k patients on an aggregate-only source shows no exact count
// of them: not in the overall N row (it was exempt from suppression), so
// the 4 patients over 85 of the demo are not counted on screen, in the CLI
// or in the workbook.
func TestTable1OfASmallCohortOnAnAggregateOnlySource(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	setAccess(t, ws, &src, disclosure.AggregateOnly)
	q := "SELECT subject_id FROM patients WHERE anchor_age > 85"
	raw := rawQuery(t, ws, src, q)
	n := len(raw.Rows)
	if n < 1 || n >= 11 {
		t.Fatalf("the demo has %d patients over 85; the test needs 1 to 10", n)
	}
	c := ws.Cohort()
	tb, err := c.Table1(ctx, src, q, cohort.Table1Options{})
	if err != nil {
		t.Fatal(err)
	}
	k := c.Table1MinCell(src)
	if k != 11 {
		t.Fatalf("Table1MinCell = %d", k)
	}
	header, rows := tb.Cells(k)
	exact := fmt.Sprint(n)
	for _, r := range append([][]string{header}, rows...) {
		for _, cell := range r[1:] {
			if cell == exact || strings.HasPrefix(cell, exact+" ") {
				t.Errorf("the table shows the exact count %s of a cohort of fewer than %d: row %q", cell, k, r)
			}
		}
	}
}

// TestTable1WorkbookOfASmallCohort: the Table 1 workbook (suppressed for
// every access level) said the cohort's exact N in its Provenance sheet.
func TestTable1WorkbookOfASmallCohort(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	q := "SELECT subject_id FROM patients WHERE subject_id IN (SELECT subject_id FROM patients ORDER BY subject_id LIMIT 3)"
	c := ws.Cohort()
	tb, err := c.Table1(ctx, src, q, cohort.Table1Options{})
	if err != nil {
		t.Fatal(err)
	}
	if tb.Patients != 3 {
		t.Fatalf("%d patients", tb.Patients)
	}
	path := filepath.Join(t.TempDir(), "t1.xlsx")
	if _, err := c.ExportTable1(ctx, path, src, q, tb); err != nil {
		t.Fatal(err)
	}
	rows, prov := workbook(t, path, "Table 1")
	if !strings.Contains(prov, "Patients=<11") || strings.Contains(prov, "Patients=3\n") {
		t.Errorf("provenance:\n%s", prov)
	}
	for _, r := range rows[1:] {
		for _, cell := range r[1:] {
			if cell == "3" || strings.HasPrefix(cell, "3 ") {
				t.Errorf("row %q shows the exact count", r)
			}
		}
	}
}

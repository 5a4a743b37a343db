package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
)

// disclosureDemo opens a workspace with the 30-patient demo (10 women, 20
// men: checked by the tests that rely on it).
func disclosureDemo(t *testing.T) (*Workspace, Source) {
	t.Helper()
	ws := openTemp(t)
	if _, err := ws.InitDemo(context.Background(), demo.Options{Seed: 7, Patients: 30}, false); err != nil {
		t.Fatal(err)
	}
	return ws, source(t, ws, DemoSourceName)
}

// rawQuery runs a reference query with no disclosure control.
func rawQuery(t *testing.T, ws *Workspace, src Source, q string) *datasets.Result {
	t.Helper()
	res, err := ws.Data().query(context.Background(), src, q, datasets.RunnerOptions{})
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return res
}

func setAccess(t *testing.T, ws *Workspace, src *Source, a disclosure.Access) {
	t.Helper()
	if err := ws.Data().SetPolicy(src.Name, disclosure.Policy{Access: a}); err != nil {
		t.Fatal(err)
	}
	*src = source(t, ws, src.Name)
}

// workbook reads a sheet's rows and the Provenance sheet as "key=value"
// lines.
func workbook(t *testing.T, path, sheet string) ([][]string, string) {
	t.Helper()
	wb, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	rows, err := wb.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	prov, _ := wb.GetRows("Provenance")
	var b strings.Builder
	for _, r := range prov {
		b.WriteString(strings.Join(r, "=") + "\n")
	}
	return rows, b.String()
}

const genderSQL = "SELECT gender, count(*) FROM patients GROUP BY gender ORDER BY gender"

// TestSmallCellExportBothAccessLevels: a grouped count with a group under
// 11 is exported with "<11" and the complementary cell, for both access
// levels; with aggregate-only it also comes back suppressed from Query,
// and Browse and patient-level queries are refused.
func TestSmallCellExportBothAccessLevels(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	raw := rawQuery(t, ws, src, genderSQL)
	if len(raw.Rows) != 2 || raw.Rows[0][0] != "F" || raw.Rows[0][1].(int64) >= 11 || raw.Rows[1][1].(int64) < 11 {
		t.Fatalf("the demo's genders changed: %v (the test needs one group under 11, one above)", raw.Rows)
	}
	if got := ws.Data().Policy(src); got.Access != disclosure.RowLevel || got.K() != 11 {
		t.Fatalf("the demo's default policy is %v", got)
	}
	for _, access := range []disclosure.Access{disclosure.RowLevel, disclosure.AggregateOnly} {
		t.Run(string(access), func(t *testing.T) {
			setAccess(t, ws, &src, access)
			shown, err := ws.Data().Query(ctx, src, genderSQL, datasets.RunnerOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if access == disclosure.RowLevel && shown.Rows[0][1] != raw.Rows[0][1] {
				t.Errorf("a row-level source's result is not exact: %v", shown.Rows)
			}
			if access == disclosure.AggregateOnly {
				if shown.Rows[0][1] != (disclosure.Suppressed{K: 11}) || shown.Rows[1][1] != (disclosure.Suppressed{K: 11}) {
					t.Errorf("aggregate-only Query shows %v", shown.Rows)
				}
				if raw.Rows[0][1] == shown.Rows[0][1] || raw.Rows[1][1] == shown.Rows[1][1] {
					t.Error("raw values in the shown result")
				}
				var agg *disclosure.AggregateOnlyError
				if _, err := ws.Data().Query(ctx, src, "SELECT subject_id, gender FROM patients", datasets.RunnerOptions{}); !errors.As(err, &agg) ||
					!strings.Contains(err.Error(), "aggregate-only: ask for counts or statistics") {
					t.Errorf("patient-level rows of an aggregate-only source: %v", err)
				}
				if _, err := ws.Data().Query(ctx, src, "SELECT subject_id, count(*) FROM admissions GROUP BY subject_id", datasets.RunnerOptions{}); !errors.As(err, &agg) {
					t.Errorf("counts per patient id of an aggregate-only source: %v", err)
				}
				if _, err := ws.Data().Query(ctx, src, "SELECT gender, group_concat(subject_id) AS ids FROM patients GROUP BY gender", datasets.RunnerOptions{}); !errors.As(err, &agg) {
					t.Errorf("identifiers listed by an aggregate of an aggregate-only source: %v", err)
				}
				if _, err := ws.Data().Browse(ctx, src, "patients", 10); !errors.As(err, &agg) {
					t.Errorf("Browse of an aggregate-only source: %v", err)
				}
				if _, err := ws.Data().Export(ctx, filepath.Join(t.TempDir(), "x.xlsx"), raw, export.Provenance{}, ExportOptions{Source: src, Query: genderSQL, Exact: true}); !errors.Is(err, ErrExactAggregateOnly) {
					t.Errorf("exact export of an aggregate-only source: %v", err)
				}
			}
			path := filepath.Join(t.TempDir(), "gender.xlsx")
			if _, err := ws.Data().Export(ctx, path, shown, export.Provenance{Query: genderSQL}, ExportOptions{Source: src, Query: genderSQL}); err != nil {
				t.Fatal(err)
			}
			rows, prov := workbook(t, path, "Results")
			if len(rows) != 3 || rows[1][1] != "<11" || rows[2][1] != "<11" {
				t.Errorf("exported rows %v, want both counts <11 (primary and complementary)", rows)
			}
			want := []string{"Small-cell suppression=minimum cell size 11: 2 cells suppressed (1 primary, 1 complementary); individuals counted by subject_id",
				"Individuals counted by=subject_id", "row 1, count(*) (primary); row 2, count(*) (complementary)", "Disclosure policy=" + string(access)}
			if access == disclosure.AggregateOnly { // exported from the suppressed result shown
				want[0] = "Small-cell suppression=minimum cell size 11: 2 cells suppressed (0 primary, 0 complementary, 2 already suppressed on screen)"
				want[2] = "row 1, count(*) (suppressed when shown); row 2, count(*) (suppressed when shown)"
			}
			for _, want := range want {
				if !strings.Contains(prov, want) {
					t.Errorf("provenance lacks %q:\n%s", want, prov)
				}
			}
			if strings.Contains(strings.Join(rows[1], " ")+strings.Join(rows[2], " "), fmt.Sprint(raw.Rows[0][1])) {
				t.Error("the raw count is in the workbook")
			}
		})
	}
	// Exact values on request, for a row-level source only.
	setAccess(t, ws, &src, disclosure.RowLevel)
	path := filepath.Join(t.TempDir(), "exact.xlsx")
	if _, err := ws.Data().Export(ctx, path, raw, export.Provenance{}, ExportOptions{Source: src, Query: genderSQL, Exact: true}); err != nil {
		t.Fatal(err)
	}
	rows, prov := workbook(t, path, "Results")
	if rows[1][1] != fmt.Sprint(raw.Rows[0][1]) || !strings.Contains(prov, "exact values exported at the user's request") {
		t.Errorf("exact export: %v\n%s", rows, prov)
	}
}

// TestSmallStatisticsAndExactlyK: a mean over 4 patients is suppressed, a
// count of exactly 11 is not (aggregate-only display).
func TestSmallStatisticsAndExactlyK(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	setAccess(t, ws, &src, disclosure.AggregateOnly)
	four := "SELECT avg(anchor_age) AS mean_age FROM patients WHERE subject_id IN (SELECT subject_id FROM patients ORDER BY subject_id LIMIT 4)"
	if raw := rawQuery(t, ws, src, four); raw.Rows[0][0] == nil {
		t.Fatal("no mean")
	}
	d, err := ws.Data().QueryDisclosed(ctx, src, four, datasets.RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Result.Rows[0][0] != (disclosure.Suppressed{K: 11}) || d.Report.IndividualColumn != "subject_id" {
		t.Errorf("mean of 4 patients: %v, report %+v", d.Result.Rows, d.Report)
	}
	eleven := "SELECT count(*) AS n, avg(anchor_age) FROM patients WHERE subject_id IN (SELECT subject_id FROM patients ORDER BY subject_id LIMIT 11)"
	raw := rawQuery(t, ws, src, eleven)
	d, err = ws.Data().QueryDisclosed(ctx, src, eleven, datasets.RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if d.Result.Rows[0][0] != int64(11) || d.Result.Rows[0][1] != raw.Rows[0][1] || len(d.Report.Cells) != 0 {
		t.Errorf("count of 11: %v, report %+v", d.Result.Rows, d.Report)
	}
	// 10 of them: suppressed.
	ten := strings.Replace(eleven, "LIMIT 11", "LIMIT 10", 1)
	if d, err = ws.Data().QueryDisclosed(ctx, src, ten, datasets.RunnerOptions{}); err != nil || d.Result.Rows[0][0] != (disclosure.Suppressed{K: 11}) {
		t.Errorf("count of 10: %v %v", d.Result, err)
	}
}

// TestIndividualsMatchReferenceQueries checks the augmented query's count
// of individuals per row against hand-written reference queries on the
// real SQLite engine.
func TestIndividualsMatchReferenceQueries(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	for _, tc := range []struct{ query, reference, column string }{
		{"SELECT admission_type, count(*) FROM admissions GROUP BY admission_type ORDER BY 2 DESC, 1",
			"SELECT admission_type, count(DISTINCT subject_id) FROM admissions GROUP BY admission_type", "subject_id"},
		// subject_id is ambiguous in the join: qualified with the first table.
		{"SELECT p.gender, count(*) AS admissions FROM admissions a JOIN patients p ON p.subject_id = a.subject_id GROUP BY p.gender",
			"SELECT p.gender, count(DISTINCT a.subject_id) FROM admissions a JOIN patients p ON p.subject_id = a.subject_id GROUP BY p.gender", "a.subject_id"},
		{"SELECT count(*) FROM labevents", "SELECT 'all', count(DISTINCT subject_id) FROM labevents", "subject_id"},
		{"SELECT avg(n) FROM (SELECT subject_id, count(*) AS n FROM admissions GROUP BY subject_id)",
			"SELECT 'all', count(DISTINCT subject_id) FROM admissions", "subject_id"},
		// IDC's table counts patients by PatientID.
		{"SELECT Modality, count(*) FROM dicom_all GROUP BY Modality",
			"SELECT Modality, count(DISTINCT PatientID) FROM dicom_all GROUP BY Modality", "PatientID"},
	} {
		t.Run(tc.query, func(t *testing.T) {
			res := rawQuery(t, ws, src, tc.query)
			sh := disclosure.Analyze(tc.query)
			kinds := disclosure.ColumnKinds(sh, res)
			info := ws.Data().individuals(ctx, src, tc.query, sh, res, kinds, datasets.RunnerOptions{})
			if info.Column != tc.column {
				t.Errorf("individuals counted by %q, want %q", info.Column, tc.column)
			}
			ref := map[string]int64{}
			for _, r := range rawQuery(t, ws, src, tc.reference).Rows {
				ref[fmt.Sprint(r[0])] = r[1].(int64)
			}
			if len(info.Counts) != len(res.Rows) || len(res.Rows) == 0 {
				t.Fatalf("%d counts for %d rows", len(info.Counts), len(res.Rows))
			}
			for i, r := range res.Rows {
				key := "all"
				if kinds[0] == disclosure.Key {
					key = fmt.Sprint(r[0])
				}
				if want, ok := ref[key]; !ok || info.Counts[i] != want {
					t.Errorf("row %v: %d individuals, reference %d", r, info.Counts[i], want)
				}
			}
		})
	}
	// No individual column visible: the row's count stands in.
	q := "SELECT category, count(*) FROM d_labitems GROUP BY category"
	res := rawQuery(t, ws, src, q)
	sh := disclosure.Analyze(q)
	info := ws.Data().individuals(ctx, src, q, sh, res, disclosure.ColumnKinds(sh, res), datasets.RunnerOptions{})
	if info.Column != "count(*) (the row's count)" || info.Counts[0] != res.Rows[0][1] {
		t.Errorf("fallback: %+v", info)
	}
}

// TestPatientLevelExport: refused without confirmation, naming the
// identifier columns; with it, identifiers are pseudonymised (the same
// patient has the same pseudonym within one export, another in the next),
// dates shifted per patient keeping intervals, and the Provenance sheet
// and the audit trail say so.
func TestPatientLevelExport(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	q := "SELECT a.subject_id, a.hadm_id, a.admittime, a.dischtime FROM admissions a ORDER BY a.subject_id, a.admittime"
	res := rawQuery(t, ws, src, q)
	path := filepath.Join(t.TempDir(), "rows.xlsx")
	_, err := ws.Data().Export(ctx, path, res, export.Provenance{Query: q}, ExportOptions{Source: src, Query: q})
	var pl *disclosure.PatientLevelError
	if !errors.As(err, &pl) || !strings.Contains(err.Error(), "identifier columns: subject_id, hadm_id") {
		t.Fatalf("unconfirmed patient-level export: %v", err)
	}
	if _, statErr := os.Stat(path); !os.IsNotExist(statErr) {
		t.Fatal("a refused export left a file")
	}
	export1 := func(name string) [][]string {
		p := filepath.Join(t.TempDir(), name)
		if _, err := ws.Data().Export(ctx, p, res, export.Provenance{Query: q}, ExportOptions{Source: src, Query: q, PatientLevel: true, ShiftDates: true}); err != nil {
			t.Fatal(err)
		}
		rows, prov := workbook(t, p, "Results")
		for _, want := range []string{"Patient-level export=confirmed by the user", "Pseudonymised columns=subject_id, hadm_id: each value replaced by HMAC-SHA256",
			"Dates shifted=admittime, dischtime: by a per-patient number of days"} {
			if !strings.Contains(prov, want) {
				t.Errorf("provenance lacks %q:\n%s", want, prov)
			}
		}
		return rows[1:]
	}
	a, b := export1("a.xlsx"), export1("b.xlsx")
	if len(a) != len(res.Rows) {
		t.Fatalf("%d rows exported of %d", len(a), len(res.Rows))
	}
	repeated := false
	for i, r := range res.Rows {
		raw := fmt.Sprint(r[0])
		if a[i][0] == raw || a[i][1] == fmt.Sprint(r[1]) || a[i][2] == r[2] {
			t.Fatalf("row %d not pseudonymised/shifted: %v", i, a[i])
		}
		if a[i][0] == b[i][0] {
			t.Errorf("row %d: the same pseudonym in two exports", i)
		}
		for j, s := range res.Rows {
			if same := fmt.Sprint(s[0]) == raw; same != (a[j][0] == a[i][0]) {
				t.Fatalf("rows %d and %d: pseudonyms do not follow patients", i, j)
			} else if same && i != j {
				repeated = true
				// Intervals within a patient are kept.
				if d1, d2 := interval(t, r[2], s[2]), interval(t, a[i][2], a[j][2]); d1 != d2 {
					t.Errorf("interval %v became %v", d1, d2)
				}
			}
		}
	}
	if !repeated {
		t.Fatal("no patient with two admissions: the test checks nothing")
	}
	recs, err := ws.Audit().Records(ctx, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1]
	if last.Action != audit.ActionExport || last.Details["patient_level"] != true || fmt.Sprint(last.Details["pseudonymised"]) != "[subject_id hadm_id]" || last.Details["sha256"] == "" {
		t.Errorf("audit record %+v", last)
	}
}

func interval(t *testing.T, a, b any) time.Duration {
	t.Helper()
	parse := func(v any) time.Time {
		x, err := time.Parse("2006-01-02 15:04:05", fmt.Sprint(v))
		if err != nil {
			t.Fatal(err)
		}
		return x
	}
	return parse(a).Sub(parse(b))
}

// TestExportNeedsItsAuditRecord: when the audit record cannot be written,
// the export does not happen.
func TestExportNeedsItsAuditRecord(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	res := rawQuery(t, ws, src, genderSQL)
	log := filepath.Join(ws.Dir(), audit.LogFile)
	if err := os.RemoveAll(log); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(log, 0o755); err != nil { // the trail cannot be appended to
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "g.xlsx")
	if _, err := ws.Data().Export(ctx, path, res, export.Provenance{}, ExportOptions{Source: src, Query: genderSQL}); err == nil {
		t.Fatal("an export without its audit record succeeded")
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 0 {
		t.Errorf("files left: %v", entries)
	}
}

// TestCohortDisclosure: the cohort pipeline's disclosure hook shows an
// aggregate-only source's result suppressed and explains it from the same;
// a row-level source's result is shown exact and explained from the
// suppressed aggregate (or only the row count) when rows may not be sent
// to the model host.
func TestCohortDisclosure(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	raw := rawQuery(t, ws, src, genderSQL)
	if err := ws.UpdateConfig(func(c *Config) { c.ModelHostPolicy.SendRows = new(bool) }); err != nil {
		t.Fatal(err)
	}
	d, err := ws.discloseCohort(ctx, src, genderSQL, raw)
	if err != nil {
		t.Fatal(err)
	}
	if d.Shown != raw || d.Explain.Rows[0][1] != (disclosure.Suppressed{K: 11}) || d.Info.Explained == nil || d.Info.Shown != nil {
		t.Errorf("row-level, rows not sent: shown %v explained %v", d.Shown.Rows, d.Explain.Rows)
	}
	rows := rawQuery(t, ws, src, "SELECT subject_id FROM patients")
	if d, err = ws.discloseCohort(ctx, src, "SELECT subject_id FROM patients", rows); err != nil || !d.Info.RowsWithheld ||
		len(d.Explain.Rows) != 1 || d.Explain.Rows[0][0] != int64(len(rows.Rows)) {
		t.Errorf("patient-level, rows not sent: %+v %v", d, err)
	}
	setAccess(t, ws, &src, disclosure.AggregateOnly)
	if d, err = ws.discloseCohort(ctx, src, genderSQL, raw); err != nil || d.Shown.Rows[0][1] != (disclosure.Suppressed{K: 11}) || d.Explain != d.Shown {
		t.Errorf("aggregate-only: %+v %v", d, err)
	}
	if _, err = ws.discloseCohort(ctx, src, "SELECT subject_id FROM patients", rows); err == nil {
		t.Error("aggregate-only: patient-level rows accepted")
	}
}

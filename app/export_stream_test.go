package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
)

// streamQuery is a patient-level statement of the demo: one row per
// admission, with identifiers, dates and plain columns.
const streamQuery = "SELECT a.subject_id, a.hadm_id, a.admittime, a.dischtime, a.admission_type FROM admissions a ORDER BY a.subject_id, a.admittime"

// TestStreamedExportEqualsInMemoryExport: the same statement exported
// through the cursor (ExportQuery) and from a result held in memory
// (Export) gives the same Results sheet, cell for cell; pseudonymised
// columns, whose key is new for each export, correspond one to one. An
// aggregate takes the in-memory path and is suppressed.
func TestStreamedExportEqualsInMemoryExport(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	dir := t.TempDir()
	for _, tc := range []struct {
		name, query string
		pseud       []int // pseudonymised columns
		streamed    bool
	}{
		{"patient-level", streamQuery, []int{0, 1}, true},
		{"no identifiers", "SELECT gender, anchor_age FROM patients ORDER BY anchor_age, gender", nil, true},
		{"aggregate", genderSQL, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := ExportOptions{Source: src, Query: tc.query, PatientLevel: true}
			memPath, strPath := filepath.Join(dir, tc.name+"-mem.xlsx"), filepath.Join(dir, tc.name+"-str.xlsx")
			res := rawQuery(t, ws, src, tc.query)
			if _, err := ws.Data().Export(ctx, memPath, res, export.Provenance{Query: tc.query}, opts); err != nil {
				t.Fatal(err)
			}
			qe, err := ws.Data().ExportQuery(ctx, strPath, src, tc.query, datasets.RunnerOptions{}, export.Provenance{}, opts)
			if err != nil {
				t.Fatal(err)
			}
			if qe.Streamed != tc.streamed || qe.Stats.Rows != int64(len(res.Rows)) || qe.Summary.Rows != int64(len(res.Rows)) {
				t.Fatalf("streamed %v, %d rows read, %d written; want streamed %v, %d rows", qe.Streamed, qe.Stats.Rows, qe.Summary.Rows, tc.streamed, len(res.Rows))
			}
			mem, _ := workbook(t, memPath, "Results")
			str, prov := workbook(t, strPath, "Results")
			if len(mem) != len(str) || len(mem) != len(res.Rows)+1 {
				t.Fatalf("%d rows in memory, %d streamed, %d in the result", len(mem)-1, len(str)-1, len(res.Rows))
			}
			maps := map[int]map[string]string{}
			for i := range mem {
				if len(mem[i]) != len(str[i]) {
					t.Fatalf("row %d: %v vs %v", i, mem[i], str[i])
				}
				for j := range mem[i] {
					if i > 0 && contains(tc.pseud, j) {
						m := maps[j]
						if m == nil {
							m = map[string]string{}
							maps[j] = m
						}
						if prev, ok := m[mem[i][j]]; ok && prev != str[i][j] {
							t.Fatalf("row %d column %d: pseudonyms do not correspond (%s → %s and %s)", i, j, mem[i][j], prev, str[i][j])
						}
						m[mem[i][j]] = str[i][j]
						continue
					}
					if mem[i][j] != str[i][j] {
						t.Errorf("row %d column %d: in memory %q, streamed %q", i, j, mem[i][j], str[i][j])
					}
				}
			}
			for j, m := range maps {
				seen := map[string]bool{}
				for _, v := range m {
					if seen[v] {
						t.Errorf("column %d: two values got one pseudonym", j)
					}
					seen[v] = true
				}
			}
			if !strings.Contains(prov, fmt.Sprintf("Rows=%d", len(res.Rows))) || !strings.Contains(prov, "Disclosure policy=") {
				t.Errorf("provenance lacks the rows or the policy:\n%s", prov)
			}
			if tc.name == "aggregate" && !strings.Contains(str[1][1]+str[2][1], "<11") {
				t.Errorf("aggregate not suppressed: %v", str)
			}
		})
	}
}

func contains(xs []int, x int) bool {
	for _, y := range xs {
		if x == y {
			return true
		}
	}
	return false
}

// TestStreamedExportPseudonymsAndAudit: a streamed patient-level export
// is refused until confirmed; confirmed, each patient keeps one pseudonym
// and their intervals within the export, another export gets other
// pseudonyms, and the audit trail holds the statement and the export with
// the file's SHA-256.
func TestStreamedExportPseudonymsAndAudit(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "refused.xlsx")
	_, err := ws.Data().ExportQuery(ctx, path, src, streamQuery, datasets.RunnerOptions{}, export.Provenance{}, ExportOptions{})
	var pl *disclosure.PatientLevelError
	if !errors.As(err, &pl) || !strings.Contains(err.Error(), "subject_id, hadm_id") {
		t.Fatalf("unconfirmed: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatal("a refused export left a file")
	}
	res := rawQuery(t, ws, src, streamQuery)
	exp := func(name string) ([][]string, string) {
		p := filepath.Join(dir, name)
		qe, err := ws.Data().ExportQuery(ctx, p, src, streamQuery, datasets.RunnerOptions{}, export.Provenance{},
			ExportOptions{PatientLevel: true, ShiftDates: true, Head: 3})
		if err != nil {
			t.Fatal(err)
		}
		if !qe.Streamed || len(qe.Head) != 3 || qe.Head[0][0] != res.Rows[0][0] {
			t.Fatalf("streamed %v, head %v; want the first 3 rows as read", qe.Streamed, qe.Head)
		}
		rows, prov := workbook(t, p, "Results")
		for _, want := range []string{"Patient-level export=confirmed by the user", "Pseudonymised columns=subject_id, hadm_id",
			"Dates shifted=admittime, dischtime: by a per-patient number of days"} {
			if !strings.Contains(prov, want) {
				t.Errorf("provenance lacks %q:\n%s", want, prov)
			}
		}
		return rows[1:], p
	}
	a, pathA := exp("a.xlsx")
	b, _ := exp("b.xlsx")
	repeated := false
	for i, r := range res.Rows {
		if a[i][0] == fmt.Sprint(r[0]) || a[i][2] == r[2] || a[i][4] != r[4] {
			t.Fatalf("row %d: %v from %v", i, a[i], r)
		}
		if a[i][0] == b[i][0] {
			t.Errorf("row %d: one pseudonym in two exports", i)
		}
		for j, s := range res.Rows {
			same := fmt.Sprint(s[0]) == fmt.Sprint(r[0])
			if same != (a[i][0] == a[j][0]) {
				t.Fatalf("rows %d and %d: pseudonyms do not follow patients", i, j)
			}
			if same && i != j {
				repeated = true
				if d1, d2 := interval(t, r[2], s[2]), interval(t, a[i][2], a[j][2]); d1 != d2 {
					t.Errorf("interval %v became %v", d1, d2)
				}
			}
		}
	}
	if !repeated {
		t.Fatal("no patient with two admissions: the test checks nothing")
	}
	data, err := os.ReadFile(pathA)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	recs, err := ws.Audit().Records(ctx, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var sqlRec, expRec *audit.Record
	for i := range recs {
		r := &recs[i]
		if r.Action == audit.ActionExport && r.Details["path"] == pathA {
			expRec = r
			if i > 0 && recs[i-1].Action == audit.ActionSQL {
				sqlRec = &recs[i-1]
			}
		}
	}
	if expRec == nil || expRec.Details["sha256"] != hex.EncodeToString(sum[:]) || expRec.Details["streamed"] != true ||
		fmt.Sprint(expRec.Details["pseudonymised"]) != "[subject_id hadm_id]" {
		t.Fatalf("export record %+v; want the file's sha256 %x", expRec, sum)
	}
	if sqlRec == nil || sqlRec.Details["sql"] != streamQuery || fmt.Sprint(sqlRec.Details["rows"]) != fmt.Sprint(len(res.Rows)) {
		t.Errorf("statement record before the export: %+v", sqlRec)
	}
}

// TestStreamedExportCancelLeavesNoFile: cancelling a streamed export part
// way leaves no file (nor a temporary one) and no export record.
func TestStreamedExportCancelLeavesNoFile(t *testing.T) {
	ws, src := disclosureDemo(t)
	dir := t.TempDir()
	path := filepath.Join(dir, "big.xlsx")
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	q := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 200000) SELECT x, 'row ' || x AS label FROM c"
	var cancelledAt int64
	_, err := ws.Data().ExportQuery(ctx, path, src, q, datasets.RunnerOptions{MaxRows: 1_000_000}, export.Provenance{},
		ExportOptions{PatientLevel: true, Progress: func(n int64) {
			if cancelledAt == 0 && n >= 20_000 {
				cancelledAt = n
				cancel()
			}
		}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled export: %v (cancelled at %d rows)", err, cancelledAt)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("files left: %v", entries)
	}
	recs, err := ws.Audit().Records(context.Background(), time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Action == audit.ActionExport && r.Details["path"] == path {
			t.Errorf("a cancelled export was recorded as written: %+v", r)
		}
	}
}

// TestStreamedExportCaps: the row cap ends a streamed export (said on the
// Provenance sheet); a value longer than the cell cap is cut by the
// runner, then to Excel's cell size.
func TestStreamedExportCaps(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	path := filepath.Join(t.TempDir(), "caps.xlsx")
	q := "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 50) SELECT x, CASE x WHEN 2 THEN printf('%02000000d', x) ELSE 'short' END AS v FROM c"
	qe, err := ws.Data().ExportQuery(ctx, path, src, q, datasets.RunnerOptions{MaxRows: 10}, export.Provenance{}, ExportOptions{PatientLevel: true})
	if err != nil {
		t.Fatal(err)
	}
	if !qe.Streamed || qe.Stats.Rows != 10 || !qe.Stats.Truncated || qe.Stats.CutCells != 1 {
		t.Fatalf("stats %+v; want 10 rows, truncated, 1 cut cell", qe.Stats)
	}
	rows, prov := workbook(t, path, "Results")
	if len(rows) != 11 {
		t.Fatalf("%d rows on the sheet, want 10 and the header", len(rows)-1)
	}
	if v := rows[2][1]; !strings.HasSuffix(v, strings.TrimSpace(export.TruncationMarker)) || len(v) > export.MaxCellChars+len(export.TruncationMarker) {
		t.Errorf("long cell of %d characters ending %q", len(v), v[max(0, len(v)-20):])
	}
	for _, want := range []string{"Rows=10", "Row cap=10", "more rows than the row cap", "longer than 1 MiB"} {
		if !strings.Contains(prov, want) {
			t.Errorf("provenance lacks %q:\n%s", want, prov)
		}
	}
}

// TestCohortExportStreamsPatientLevelRows: a confirmed patient-level
// cohort export reads its Cohort sheet from the database's cursor (all
// the statement's rows, though the answer holds three), pseudonymised per
// patient, with the other sheets and the audit record as before; an
// unconfirmed one is refused naming its identifiers.
func TestCohortExportStreamsPatientLevelRows(t *testing.T) {
	ctx := context.Background()
	ws, src := disclosureDemo(t)
	res := rawQuery(t, ws, src, streamQuery)
	held := *res
	held.Rows = res.Rows[:3]
	ans := &cohort.Answer{Question: "admissions by patient", SQL: streamQuery, Result: &held, Status: cohort.StatusAnswered}
	dir := t.TempDir()
	_, err := ws.Cohort().Export(ctx, filepath.Join(dir, "refused.xlsx"), ans, ExportOptions{Source: src})
	var pl *disclosure.PatientLevelError
	if !errors.As(err, &pl) {
		t.Fatalf("unconfirmed: %v", err)
	}
	path := filepath.Join(dir, "cohort.xlsx")
	sum, err := ws.Cohort().Export(ctx, path, ans, ExportOptions{Source: src, PatientLevel: true, Version: "t"})
	if err != nil {
		t.Fatal(err)
	}
	rows, prov := workbook(t, path, "Cohort")
	if len(rows) != len(res.Rows)+1 || sum.Sheets[0].Rows != int64(len(res.Rows)) {
		t.Fatalf("Cohort sheet: %d rows, want the statement's %d", len(rows)-1, len(res.Rows))
	}
	pseud := map[string]string{}
	for i, r := range res.Rows {
		got := rows[i+1]
		if got[4] != r[4] || got[0] == fmt.Sprint(r[0]) {
			t.Fatalf("row %d: %v from %v", i, got, r)
		}
		if p, ok := pseud[fmt.Sprint(r[0])]; ok && p != got[0] {
			t.Fatalf("row %d: patient %v has two pseudonyms", i, r[0])
		}
		pseud[fmt.Sprint(r[0])] = got[0]
	}
	for _, want := range []string{fmt.Sprintf("Rows=%d", len(res.Rows)), "Pseudonymised columns=subject_id, hadm_id", "Question=admissions by patient"} {
		if !strings.Contains(prov, want) {
			t.Errorf("provenance lacks %q:\n%s", want, prov)
		}
	}
	recs, err := ws.Audit().Records(ctx, time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	last := recs[len(recs)-1]
	if last.Action != audit.ActionExport || last.Details["path"] != path || last.Details["streamed"] != true || len(fmt.Sprint(last.Details["sha256"])) != 64 {
		t.Errorf("audit record %+v", last)
	}
}

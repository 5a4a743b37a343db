package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/postgres"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/pgtest"
	"github.com/clinsight/clinsight/internal/streamtest"
)

// pgExportSource is a row-level PostgreSQL source over a small table of
// admissions, read by a reader role.
func pgExportSource(t *testing.T, prefix string) (*Workspace, Source, *pgtest.Cluster, string) {
	t.Helper()
	c := pgtest.Shared(t)
	db := c.CreateDatabase(t, prefix)
	c.Exec(t, db, "CREATE TABLE admissions (subject_id int, hadm_id int PRIMARY KEY, admittime timestamp, admission_type text, los numeric, note text); "+
		"INSERT INTO admissions VALUES (10001, 20001, '2180-07-23 12:35:00', 'URGENT', 2.5, 'first'), "+
		"(10001, 20002, '2181-01-01 00:00:00', 'ELECTIVE', 10, NULL), (10002, 20003, '2182-03-04 05:06:07', 'EW EMER.', 0.25, 'ünïcode'), "+
		"(10003, 20004, '2183-11-30 23:59:59', NULL, NULL, 'last')")
	role := prefix + "_reader"
	env := strings.ToUpper(role) + "_PW"
	c.Reader(t, db, role, postgres.ReaderGrants(role, db, []string{"public"}), env)
	ws := openTemp(t)
	if _, err := ws.AddPostgres("pg", postgres.Source{DSN: c.URL(role, db), PasswordEnv: env}); err != nil {
		t.Fatal(err)
	}
	src := source(t, ws, "pg")
	setAccess(t, ws, &src, disclosure.RowLevel)
	return ws, src, c, db
}

// TestStreamedExportOnPostgres: a patient-level export from a PostgreSQL
// source streams, and its Results sheet equals the in-memory export's
// cell for cell (pseudonyms, whose key is new for each export,
// corresponding one to one); a write is refused before any row, leaving
// no file; an aggregate-only source still refuses a patient-level export
// and cannot stream; no transaction stays open.
func TestStreamedExportOnPostgres(t *testing.T) {
	ctx := context.Background()
	ws, src, c, db := pgExportSource(t, "appstream")
	if !ws.Data().CanStream(src) {
		t.Fatal("a row-level PostgreSQL source cannot stream")
	}
	dir := t.TempDir()
	q := "SELECT subject_id, hadm_id, admittime, admission_type, los, note FROM admissions ORDER BY hadm_id"
	opts := ExportOptions{Source: src, Query: q, PatientLevel: true}
	memPath, strPath := filepath.Join(dir, "mem.xlsx"), filepath.Join(dir, "str.xlsx")
	res := rawQuery(t, ws, src, q)
	if _, err := ws.Data().Export(ctx, memPath, res, export.Provenance{Query: q}, opts); err != nil {
		t.Fatal(err)
	}
	qe, err := ws.Data().ExportQuery(ctx, strPath, src, q, datasets.RunnerOptions{}, export.Provenance{}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if !qe.Streamed || qe.Stats.Rows != 4 || qe.Summary.Rows != 4 {
		t.Fatalf("streamed %v, %d rows read, %d written; want streamed, 4 rows", qe.Streamed, qe.Stats.Rows, qe.Summary.Rows)
	}
	mem, _ := workbook(t, memPath, "Results")
	str, prov := workbook(t, strPath, "Results")
	if len(mem) != 5 || len(str) != 5 {
		t.Fatalf("%d rows in memory, %d streamed", len(mem)-1, len(str)-1)
	}
	pseud := map[int]map[string]string{0: {}, 1: {}, 5: {}} // subject_id, hadm_id, note (free text)
	for i := range mem {
		if len(mem[i]) != len(str[i]) {
			t.Fatalf("row %d: %v vs %v", i, mem[i], str[i])
		}
		for j := range mem[i] {
			if m := pseud[j]; i > 0 && m != nil && mem[i][j] != "" {
				if prev, ok := m[mem[i][j]]; ok && prev != str[i][j] || str[i][j] == mem[i][j] {
					t.Errorf("row %d column %d: pseudonym %q for %q (before: %q)", i, j, str[i][j], mem[i][j], prev)
				}
				m[mem[i][j]] = str[i][j]
				continue
			}
			if mem[i][j] != str[i][j] {
				t.Errorf("row %d column %d: in memory %q, streamed %q", i, j, mem[i][j], str[i][j])
			}
		}
	}
	if !strings.Contains(prov, "Rows=4") || !strings.Contains(prov, "Pseudonymised columns=") {
		t.Errorf("provenance:\n%s", prov)
	}

	// A write: refused before any row, no file.
	bad := filepath.Join(dir, "write.xlsx")
	_, err = ws.Data().ExportQuery(ctx, bad, src, "DELETE FROM admissions", datasets.RunnerOptions{}, export.Provenance{}, ExportOptions{PatientLevel: true})
	var refused *datasets.RefusedError
	if !errors.As(err, &refused) {
		t.Errorf("write statement: %v (%T), want a refusal", err, err)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("a file for the refused statement: %v", err)
	}
	if n := len(rawQuery(t, ws, src, "SELECT * FROM admissions").Rows); n != 4 {
		t.Errorf("%d admissions after the refused write", n)
	}

	// Aggregate-only: refused, and no stream.
	setAccess(t, ws, &src, disclosure.AggregateOnly)
	if ws.Data().CanStream(src) {
		t.Error("an aggregate-only source can stream")
	}
	_, err = ws.Data().ExportQuery(ctx, filepath.Join(dir, "agg.xlsx"), src, q, datasets.RunnerOptions{}, export.Provenance{}, ExportOptions{PatientLevel: true})
	var ao *disclosure.AggregateOnlyError
	if !errors.As(err, &ao) {
		t.Errorf("patient-level export of an aggregate-only source: %v", err)
	}
	if n := c.OpenTransactions(t, db); n != 0 {
		t.Errorf("%d transactions open after the exports", n)
	}
}

// TestStreamedExportOnPostgresBoundedMemory exports 200,000 rows of a
// generate_series through the cursor to a workbook while sampling the
// heap: the heap stays bounded (the rows are never held), and a second
// export cancelled part way leaves no file and no open transaction, the
// source usable after it.
func TestStreamedExportOnPostgresBoundedMemory(t *testing.T) {
	if testing.Short() {
		t.Skip("exports 200,000 rows")
	}
	ctx := context.Background()
	ws, src, c, db := pgExportSource(t, "appstreambig")
	dir := t.TempDir()
	q := "SELECT g AS n, md5(g::text) AS label, g * 0.25 AS quarter FROM generate_series(1, 200000) g"
	limits := datasets.RunnerOptions{MaxRows: 500_000, Timeout: 2 * time.Minute}
	heap := streamtest.SampleHeap(10 * time.Millisecond)
	start := time.Now()
	qe, err := ws.Data().ExportQuery(ctx, filepath.Join(dir, "big.xlsx"), src, q, limits, export.Provenance{}, ExportOptions{PatientLevel: true})
	base, peak := heap.Stop()
	if err != nil {
		t.Fatal(err)
	}
	grew := int64(peak) - int64(base)
	t.Logf("200,000 rows exported from PostgreSQL in %s: heap in use %.1f MB before, peak %.1f MB (+%.1f MB)",
		time.Since(start).Round(time.Millisecond), float64(base)/1e6, float64(peak)/1e6, float64(grew)/1e6)
	if !qe.Streamed || qe.Stats.Rows != 200_000 || qe.Summary.Rows != 200_000 || qe.Stats.Truncated {
		t.Fatalf("streamed %v, %d rows read, %d written, truncated %v", qe.Streamed, qe.Stats.Rows, qe.Summary.Rows, qe.Stats.Truncated)
	}
	// The peak is excelize's in-memory chunk (16 MB before it spills to
	// a temporary file) and the garbage between collections: measured at
	// about +19 MB for 20,000 rows and +61 to +65 MB for 100,000, 200,000
	// and 400,000 rows alike (load 16-21), so it does not grow with the
	// rows; the stream itself holds one row (TestStreamBoundedMemory in
	// datasets/postgres: +3 MB for 200,000).
	if grew > 160<<20 {
		t.Errorf("the heap grew by %.1f MB exporting a stream", float64(grew)/1e6)
	}

	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	path := filepath.Join(dir, "cancelled.xlsx")
	_, err = ws.Data().ExportQuery(cctx, path, src, q, limits, export.Provenance{}, ExportOptions{PatientLevel: true, Progress: func(n int64) {
		if n >= 5_000 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled export: %v", err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("a file for the cancelled export: %v", err)
	}
	c.WaitNoTransaction(t, db)
	if n := len(rawQuery(t, ws, src, "SELECT * FROM admissions").Rows); n != 4 {
		t.Errorf("%d rows after the cancel", n)
	}
}

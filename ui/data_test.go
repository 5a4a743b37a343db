package ui

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2/test"
	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/demo"
)

// newTestWorkspace opens a temporary workspace with one registered SQLite
// source "site" holding patients (3 rows) and an empty notes table.
func newTestWorkspace(t *testing.T) *app.Workspace {
	t.Helper()
	ws, err := app.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	path := filepath.Join(t.TempDir(), "site.sqlite")
	db, err := sql.Open(datasets.DriverName, "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"CREATE TABLE patients (subject_id INTEGER PRIMARY KEY, gender TEXT, admitted TIMESTAMP)",
		"INSERT INTO patients VALUES (1,'F','2180-01-02 03:04:05'),(2,'M',NULL),(3,'F','2180-02-03 00:00:00')",
		"CREATE TABLE notes (subject_id INTEGER, text TEXT)",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	if _, err := ws.RegisterSQLite(context.Background(), path, "site"); err != nil {
		t.Fatal(err)
	}
	return ws
}

// waitOps waits until the screen has finished at least n asynchronous
// operations.
func waitOps(t *testing.T, s *DataScreen, n int) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	for s.finishedOps() < n {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %d operations (finished %d)", n, s.finishedOps())
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func tableNames(s *DataScreen) []string {
	var names []string
	for _, t := range s.tables {
		names = append(names, t.Name)
	}
	return names
}

func TestDataScreenListsBrowsesAndQueries(t *testing.T) {
	a := test.NewTempApp(t)
	ws := newTestWorkspace(t)
	if err := ws.UpdateConfig(func(c *app.Config) { c.Limits.MaxRows = 2 }); err != nil {
		t.Fatal(err)
	}
	mw := NewMainWindow(context.Background(), a, ws, "test")
	s := mw.Data
	waitOps(t, s, 2) // the catalog, then the first table browsed
	if got := strings.Join(tableNames(s), ","); got != "notes,patients" {
		t.Fatalf("tables = %s", got)
	}
	if s.browseStatus.Text != "notes: 0 rows" {
		t.Errorf("first table not shown: %q", s.browseStatus.Text)
	}

	s.tableList.Select(1)
	waitOps(t, s, 3)
	// Browse shows up to 1,000 rows whatever the SQL row cap.
	if s.browse.res == nil || len(s.browse.res.Rows) != 3 || s.browseStatus.Text != "patients: 3 rows" {
		t.Errorf("browse: status %q", s.browseStatus.Text)
	}

	s.editor.SetText("SELECT subject_id, gender, admitted FROM patients ORDER BY subject_id")
	test.Tap(s.runBtn)
	waitOps(t, s, 4)
	if !strings.Contains(s.resultStatus.Text, "2 rows") || !strings.Contains(s.resultStatus.Text, "Truncated") {
		t.Errorf("result status = %q, want 2 rows and the truncation notice", s.resultStatus.Text)
	}
	if s.exportBtn.Disabled() {
		t.Error("export disabled after a result")
	}
	if got := s.result.res.Rows[0][2]; got != "2180-01-02 03:04:05" {
		t.Errorf("timestamp cell = %#v", got)
	}

	out := filepath.Join(t.TempDir(), "result.xlsx")
	s.ExportResult(out)
	waitOps(t, s, 5)
	wb, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatalf("exported workbook: %v", err)
	}
	defer wb.Close()
	rows, _ := wb.GetRows("Results")
	if len(rows) != 3 || rows[1][0] != "1" || rows[2][1] != "M" || rows[1][2] != "2180-01-02 03:04:05" {
		t.Errorf("exported rows = %v", rows)
	}
	if names := wb.GetSheetList(); len(names) != 2 || names[1] != "Provenance" {
		t.Errorf("sheets = %v", names)
	}

	s.RunSQL("DELETE FROM patients")
	waitOps(t, s, 6)
	if !strings.Contains(s.resultStatus.Text, "query refused") || !s.exportBtn.Disabled() {
		t.Errorf("refused query: status %q", s.resultStatus.Text)
	}
}

func TestDataScreenImportCSV(t *testing.T) {
	a := test.NewTempApp(t)
	ws := newTestWorkspace(t)
	mw := NewMainWindow(context.Background(), a, ws, "test")
	s := mw.Data
	waitOps(t, s, 2)
	csvPath := filepath.Join(t.TempDir(), "vitals.csv")
	os.WriteFile(csvPath, []byte("subject_id,hr\n1,80\n2,95\n"), 0o644)
	s.ImportCSV(csvPath)
	waitOps(t, s, 3)
	src, ok := ws.Source(app.ImportedSourceName)
	if !ok {
		t.Fatal("imported source not registered")
	}
	res, err := ws.Query(context.Background(), src.Name, "SELECT sum(hr) FROM vitals", datasets.RunnerOptions{})
	if err != nil || res.Rows[0][0] != int64(175) {
		t.Errorf("imported data: %v %v", res, err)
	}
	if len(s.sources) != 2 {
		t.Errorf("sources after import = %d, want 2", len(s.sources))
	}
}

func TestDataScreenImportCancelLeavesNothing(t *testing.T) {
	a := test.NewTempApp(t)
	ws := newTestWorkspace(t)
	mw := NewMainWindow(context.Background(), a, ws, "test")
	s := mw.Data
	waitOps(t, s, 2)
	var b strings.Builder
	b.WriteString("id,value,label\n")
	for i := range 300_000 {
		fmt.Fprintf(&b, "%d,%d.5,label %d\n", i, i%97, i%13)
	}
	csvPath := filepath.Join(t.TempDir(), "big.csv")
	os.WriteFile(csvPath, []byte(b.String()), 0o644)
	task := s.ImportCSV(csvPath)
	task.cancel()
	waitOps(t, s, 3)
	if _, ok := ws.Source(app.ImportedSourceName); ok {
		t.Error("cancelled import registered a source")
	}
	if _, err := os.Stat(filepath.Join(ws.DataDir(), "imported.sqlite")); err == nil {
		info, _ := datasets.InspectSQLite(context.Background(), filepath.Join(ws.DataDir(), "imported.sqlite"))
		if len(info.Tables) > 0 {
			t.Errorf("cancelled import left tables: %v", info.Tables)
		}
	}
}

func TestFormatCount(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567", -5000: "-5,000"} {
		if got := formatCount(n); got != want {
			t.Errorf("formatCount(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestDataScreenOnDemoWorkspace(t *testing.T) {
	a := test.NewTempApp(t)
	ws, err := app.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	opts := demo.DefaultOptions()
	opts.Patients = 150
	if _, err := ws.InitDemo(context.Background(), opts, false); err != nil {
		t.Fatal(err)
	}
	if err := ws.UpdateConfig(func(c *app.Config) { c.Limits.MaxRows = 100 }); err != nil {
		t.Fatal(err)
	}
	mw := NewMainWindow(context.Background(), a, ws, "test")
	s := mw.Data
	waitOps(t, s, 2)
	got := strings.Join(tableNames(s), ",")
	for _, want := range []string{"admissions", "d_icd_diagnoses", "d_labitems", "diagnoses_icd", "dicom_all", "labevents", "patients", "prescriptions"} {
		if !strings.Contains(got, want) {
			t.Errorf("demo table %s not listed (%s)", want, got)
		}
	}
	s.RunSQL("SELECT subject_id, itemid, charttime, valuenum FROM labevents ORDER BY labevent_id")
	waitOps(t, s, 3)
	if !strings.Contains(s.resultStatus.Text, "100 rows") || !strings.Contains(s.resultStatus.Text, "Truncated") {
		t.Fatalf("status = %q", s.resultStatus.Text)
	}
	out := filepath.Join(t.TempDir(), "labs.xlsx")
	s.ExportResult(out)
	waitOps(t, s, 4)
	wb, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	rows, _ := wb.GetRows("Results")
	if len(rows) != 101 {
		t.Fatalf("workbook rows = %d, want 101 (header + 100)", len(rows))
	}
	for i, r := range s.lastResult.Rows {
		if rows[i+1][0] != fmt.Sprint(r[0]) || rows[i+1][2] != fmt.Sprint(r[2]) {
			t.Fatalf("row %d differs: workbook %v, result %v", i, rows[i+1], r)
		}
	}
}

package ui

import (
	"context"
	"database/sql"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

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

func tableNames(s *DataScreen) []string {
	var names []string
	for _, t := range s.tables {
		names = append(names, t.Name)
	}
	return names
}

func TestDataScreenListsBrowsesAndQueries(t *testing.T) {
	ws := newTestWorkspace(t)
	if err := ws.UpdateConfig(func(c *app.Config) { c.Limits.MaxRows = 2 }); err != nil {
		t.Fatal(err)
	}
	s := newTestMainWindow(t, ws).Data
	waitUntil(t, "the first table of the source", func() bool { return strings.HasSuffix(s.browseStatus.Text, " rows") })
	onUI(t, func(t testing.TB) {
		if got := strings.Join(tableNames(s), ","); got != "notes,patients" {
			t.Fatalf("tables = %s", got)
		}
		if s.browseStatus.Text != "notes: 0 rows" {
			t.Errorf("first table not shown: %q", s.browseStatus.Text)
		}
		s.tableList.Select(1)
	})
	waitUntil(t, "the second table", func() bool { return s.browseStatus.Text == "patients: 3 rows" })
	onUI(t, func(t testing.TB) {
		// Browse shows up to 1,000 rows whatever the SQL row cap.
		if s.browse.res == nil || len(s.browse.res.Rows) != 3 || s.browseStatus.Text != "patients: 3 rows" {
			t.Errorf("browse: status %q", s.browseStatus.Text)
		}
		s.editor.SetText("SELECT subject_id, gender, admitted FROM patients ORDER BY subject_id")
		test.Tap(s.runBtn)
	})
	waitUntil(t, "the query's result", func() bool { return strings.Contains(s.resultStatus.Text, " rows · ") })
	onUI(t, func(t testing.TB) {
		if !strings.Contains(s.resultStatus.Text, "2 rows") || !strings.Contains(s.resultStatus.Text, "Truncated") {
			t.Errorf("result status = %q, want 2 rows and the truncation notice", s.resultStatus.Text)
		}
		if s.exportBtn.Disabled() {
			t.Error("export disabled after a result")
		}
		if got := s.result.res.Rows[0][2]; got != "2180-01-02 03:04:05" {
			t.Errorf("timestamp cell = %#v", got)
		}
	})

	out := filepath.Join(t.TempDir(), "result.xlsx")
	onUI(t, func(testing.TB) { s.ExportResult(out) })
	confirmPatientLevelExport(t, s.window, false, "subject_id") // patient-level rows (export_confirm_test.go)
	waitUntil(t, "the export", func() bool { return strings.Contains(s.resultStatus.Text, "\nExported ") })
	wb, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatalf("exported workbook: %v", err)
	}
	defer wb.Close()
	rows, _ := wb.GetRows("Results")
	if len(rows) != 3 || len(rows[1][0]) != 16 || rows[1][0] == "1" || rows[2][1] != "M" || rows[1][2] != "2180-01-02 03:04:05" { // subject_id pseudonymised
		t.Errorf("exported rows = %v", rows)
	}
	if names := wb.GetSheetList(); len(names) != 2 || names[1] != "Provenance" {
		t.Errorf("sheets = %v", names)
	}

	onUI(t, func(testing.TB) { s.RunSQL("DELETE FROM patients") })
	waitUntil(t, "the refusal", func() bool { return strings.Contains(s.resultStatus.Text, "query refused") })
	onUI(t, func(t testing.TB) {
		if !s.exportBtn.Disabled() {
			t.Errorf("refused query: status %q", s.resultStatus.Text)
		}
	})
}

func TestDataScreenImportCSV(t *testing.T) {
	ws := newTestWorkspace(t)
	s := newTestMainWindow(t, ws).Data
	waitUntil(t, "the first table of the source", func() bool { return strings.HasSuffix(s.browseStatus.Text, " rows") })
	csvPath := filepath.Join(t.TempDir(), "vitals.csv")
	if err := os.WriteFile(csvPath, []byte("subject_id,hr\n1,80\n2,95\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	onUI(t, func(testing.TB) { s.ImportCSV(csvPath) })
	waitUntil(t, "the imported source to be listed", func() bool { return s.sourceList.Length() == 2 })
	src, ok := ws.Source(app.ImportedSourceName)
	if !ok {
		t.Fatal("imported source not registered")
	}
	res, err := ws.Data().Query(context.Background(), src, "SELECT sum(hr) FROM vitals", datasets.RunnerOptions{})
	if err != nil || res.Rows[0][0] != int64(175) {
		t.Errorf("imported data: %v %v", res, err)
	}
	onUI(t, func(t testing.TB) {
		if len(s.sources) != 2 {
			t.Errorf("sources after import = %d, want 2", len(s.sources))
		}
	})
}

func TestDataScreenImportCancelLeavesNothing(t *testing.T) {
	ws := newTestWorkspace(t)
	s := newTestMainWindow(t, ws).Data
	waitUntil(t, "the first table of the source", func() bool { return strings.HasSuffix(s.browseStatus.Text, " rows") })
	var b strings.Builder
	b.WriteString("id,value,label\n")
	for i := range 300_000 {
		fmt.Fprintf(&b, "%d,%d.5,label %d\n", i, i%97, i%13)
	}
	csvPath := filepath.Join(t.TempDir(), "big.csv")
	if err := os.WriteFile(csvPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	onUI(t, func(t testing.TB) {
		tk := s.ImportCSV(csvPath)
		if s.window.Canvas().Overlays().Top() == nil {
			t.Fatal("the import shows no progress dialog")
		}
		tk.cancel()
	})
	waitUntil(t, "the import's progress dialog to close", func() bool { return s.window.Canvas().Overlays().Top() == nil })
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
	ws := newEmptyWorkspace(t)
	opts := demo.DefaultOptions()
	opts.Patients = 150
	if _, err := ws.InitDemo(context.Background(), opts, false); err != nil {
		t.Fatal(err)
	}
	if err := ws.UpdateConfig(func(c *app.Config) { c.Limits.MaxRows = 100 }); err != nil {
		t.Fatal(err)
	}
	s := newTestMainWindow(t, ws).Data
	waitUntil(t, "the first table of the source", func() bool { return strings.HasSuffix(s.browseStatus.Text, " rows") })
	onUI(t, func(t testing.TB) {
		got := strings.Join(tableNames(s), ",")
		for _, want := range []string{"admissions", "d_icd_diagnoses", "d_labitems", "diagnoses_icd", "dicom_all", "labevents", "patients", "prescriptions"} {
			if !strings.Contains(got, want) {
				t.Errorf("demo table %s not listed (%s)", want, got)
			}
		}
		s.RunSQL("SELECT subject_id, itemid, charttime, valuenum FROM labevents ORDER BY labevent_id")
	})
	waitUntil(t, "the query's result", func() bool { return strings.Contains(s.resultStatus.Text, " rows · ") })
	onUI(t, func(t testing.TB) {
		if !strings.Contains(s.resultStatus.Text, "100 rows") || !strings.Contains(s.resultStatus.Text, "Truncated") {
			t.Fatalf("status = %q", s.resultStatus.Text)
		}
	})
	out := filepath.Join(t.TempDir(), "labs.xlsx")
	onUI(t, func(testing.TB) { s.ExportResult(out) })
	confirmPatientLevelExport(t, s.window, false, "subject_id") // patient-level rows (export_confirm_test.go)
	waitUntil(t, "the export", func() bool { return strings.Contains(s.resultStatus.Text, "\nExported ") })
	wb, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	rows, _ := wb.GetRows("Results")
	if len(rows) != 101 {
		t.Fatalf("workbook rows = %d, want 101 (header + 100)", len(rows))
	}
	onUI(t, func(t testing.TB) {
		for i, r := range s.lastResult.Rows {
			if rows[i+1][1] != fmt.Sprint(r[1]) || rows[i+1][2] != fmt.Sprint(r[2]) { // subject_id (column 0) pseudonymised
				t.Fatalf("row %d differs: workbook %v, result %v", i, rows[i+1], r)
			}
		}
	})
}

package datasets

import (
	"context"
	"crypto/sha256"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets/realdata"
)

func fileDigest(t *testing.T, path string) [32]byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return sha256.Sum256(b)
}

func TestInspectSQLite(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "source.db")
	db, err := OpenReadWrite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		"CREATE TABLE patients (subject_id INTEGER PRIMARY KEY, gender TEXT)",
		"INSERT INTO patients VALUES (1, 'F'), (2, 'M'), (3, 'F')",
		`CREATE TABLE "Lab Events" (itemid INTEGER)`,
		"CREATE TABLE empty (x)",
		"CREATE VIRTUAL TABLE notes USING fts5(body)",
		"INSERT INTO notes VALUES ('chest pain'), ('no acute distress')",
		"CREATE VIEW women AS SELECT * FROM patients WHERE gender = 'F'",
		"CREATE INDEX idx_gender ON patients (gender)",
		"ANALYZE", // creates sqlite_stat1, which must not be listed
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
	before := fileDigest(t, path)

	src, err := InspectSQLite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	want := []SQLiteTable{
		{Name: "Lab Events", Rows: 0},
		{Name: "empty", Rows: 0},
		{Name: "notes", Virtual: true, Rows: 2},
		{Name: "patients", Rows: 3},
	}
	if !reflect.DeepEqual(src.Tables, want) {
		t.Errorf("tables = %+v, want %+v", src.Tables, want)
	}
	if !reflect.DeepEqual(src.Views, []string{"women"}) {
		t.Errorf("views = %v", src.Views)
	}
	if fi, _ := os.Stat(path); src.Size != fi.Size() || src.Path != path {
		t.Errorf("path %q size %d, want %q %d", src.Path, src.Size, path, fi.Size())
	}
	if after := fileDigest(t, path); after != before {
		t.Error("inspecting modified the database file")
	}
}

func TestInspectSQLiteErrors(t *testing.T) {
	dir := t.TempDir()
	text := writeTestFile(t, dir, "notes.csv", "a,b\n1,2\n")
	empty := writeTestFile(t, dir, "empty.db", "")
	short := writeTestFile(t, dir, "short.db", "SQLite")
	fake := writeTestFile(t, dir, "fake.db", "SQLite format 3\x00"+strings.Repeat("\x00", 200))
	tests := []struct {
		name, path string
		is         error
		want       string
	}{
		{"missing file", filepath.Join(dir, "nope.db"), ErrNoDatabase, "not found"},
		{"directory", dir, ErrNotSQLite, "is a directory"},
		{"text file", text, ErrNotSQLite, "does not start with the SQLite 3 header"},
		{"empty file", empty, ErrNotSQLite, "empty"},
		{"short file", short, ErrNotSQLite, "header"},
		{"header but garbage", fake, ErrNotSQLite, "not a readable SQLite database"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := InspectSQLite(context.Background(), tt.path)
			if err == nil {
				t.Fatal("no error")
			}
			if tt.is != nil && !errors.Is(err, tt.is) {
				t.Errorf("error %q does not wrap %v", err, tt.is)
			}
			if !strings.Contains(err.Error(), tt.want) || !strings.Contains(err.Error(), filepath.Base(tt.path)) {
				t.Errorf("error %q does not name the file or does not contain %q", err, tt.want)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(dir, "nope.db")); !errors.Is(err, os.ErrNotExist) {
		t.Error("inspecting a missing file created it")
	}
}

// TestInspectSQLiteEHRSQL opens the EHRSQL MIMIC-IV demo database (skipped
// when absent), which sits in a read-only folder.
func TestInspectSQLiteEHRSQL(t *testing.T) {
	path := realdata.Path(t, "ehrsql-2024-mimic-iv-demo", "mimic_iv_demo.sqlite")
	src, err := InspectSQLite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]int64{}
	for _, tb := range src.Tables {
		rows[tb.Name] = tb.Rows
	}
	t.Logf("%d tables: %v", len(src.Tables), rows)
	// The task's preprocessed copy of the demo: a subset of the patients,
	// chartevents emptied.
	for _, table := range []string{"patients", "admissions", "labevents", "d_icd_diagnoses"} {
		if rows[table] <= 0 {
			t.Errorf("table %s: %d rows, want some", table, rows[table])
		}
	}
	if n, ok := rows["chartevents"]; !ok || n != 0 {
		t.Errorf("chartevents: %d rows (listed %v), want an empty table", n, ok)
	}
}

package datasets

import (
	"compress/gzip"
	"context"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/clinsight/clinsight/datasets/realdata"
	"github.com/clinsight/clinsight/internal/progress"
)

func TestParseMIMICSchema(t *testing.T) {
	schema, err := parseMIMICSchema(mimicIV22Schema)
	if err != nil {
		t.Fatal(err)
	}
	var hosp, icu int
	for _, tb := range schema {
		switch tb.module {
		case "hosp":
			hosp++
		case "icu":
			icu++
		default:
			t.Errorf("table %s: module %q", tb.name, tb.module)
		}
	}
	if hosp != 22 || icu != 9 {
		t.Errorf("%d hosp and %d icu tables, want 22 and 9 (MIMIC-IV v2.2)", hosp, icu)
	}
	typeOf := func(table, col string) string {
		for _, c := range schema[table].cols {
			if c.name == col {
				return c.sqliteType
			}
		}
		return "(missing)"
	}
	tests := []struct{ table, col, want string }{
		{"patients", "subject_id", "INTEGER"},
		{"patients", "anchor_age", "INTEGER"}, // SMALLINT
		{"patients", "gender", "TEXT"},        // CHAR(1)
		{"patients", "dod", "DATE"},
		{"admissions", "admittime", "TIMESTAMP"},
		{"admissions", "admit_provider_id", "TEXT"},
		{"labevents", "valuenum", "REAL"},       // DOUBLE PRECISION
		{"labevents", "charttime", "TIMESTAMP"}, // TIMESTAMP(0)
		{"labevents", "comments", "TEXT"},
		{"d_icd_diagnoses", "icd_code", "TEXT"},
		{"pharmacy", "basal_rate", "REAL"},
		{"emar_detail", "parent_field_ordinal", "TEXT"},
		{"icustays", "los", "REAL"}, // FLOAT
		{"chartevents", "caregiver_id", "INTEGER"},
		{"provider", "provider_id", "TEXT"},
	}
	for _, tt := range tests {
		if got := typeOf(tt.table, tt.col); got != tt.want {
			t.Errorf("%s.%s = %s, want %s", tt.table, tt.col, got, tt.want)
		}
	}
	for _, bad := range []string{
		"CREATE TABLE nomodule (\n  a INTEGER\n);\n",
		"CREATE TABLE hosp.x (\n  a MONEY\n);\n",
		"CREATE TABLE hosp.x (\n  a INTEGER\n",
		"  a INTEGER\n",
		"CREATE TABLE hosp.x (\n);\n",
	} {
		if _, err := parseMIMICSchema(bad); err == nil {
			t.Errorf("parseMIMICSchema(%q) gave no error", bad)
		}
	}
}

func TestSQLiteTypeFromPostgres(t *testing.T) {
	tests := map[string]string{
		"INTEGER": "INTEGER", "SMALLINT": "INTEGER", "bigint": "INTEGER",
		"NUMERIC(3, 2)": "REAL", "DOUBLE PRECISION": "REAL", "REAL": "REAL", "FLOAT": "REAL",
		"VARCHAR(255)": "TEXT", "CHAR(7)": "TEXT", "TEXT": "TEXT",
		"TIMESTAMP": "TIMESTAMP", "TIMESTAMP(3)": "TIMESTAMP", "DATE": "DATE",
	}
	for pg, want := range tests {
		if got, err := sqliteTypeFromPostgres(pg); err != nil || got != want {
			t.Errorf("sqliteTypeFromPostgres(%q) = %q, %v; want %q", pg, got, err, want)
		}
	}
	if _, err := sqliteTypeFromPostgres("JSONB"); err == nil {
		t.Error("JSONB accepted")
	}
}

// writeMIMICFixture writes a tiny MIMIC-IV directory: three known tables
// (gzip and plain), one table unknown to the schema, and a stray file.
func writeMIMICFixture(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	writeGzipFile(t, dir, "hosp/patients.csv.gz",
		"subject_id,gender,anchor_age,anchor_year,anchor_year_group,dod\n"+
			"10000032,F,52,2180,2014 - 2016,2180-09-09\n"+
			"10000048,M,23,2126,2008 - 2010,\n")
	writeTestFile(t, dir, "hosp/d_icd_diagnoses.csv",
		"icd_code,icd_version,long_title\n0010,9,\"Cholera due to vibrio cholerae\"\nA000,10,\"Cholera, unspecified\"\n")
	writeGzipFile(t, dir, "icu/icustays.csv.gz",
		"subject_id,hadm_id,stay_id,first_careunit,last_careunit,intime,outtime,los\n"+
			"10000032,29079034,39553978,Medical Intensive Care Unit (MICU),Medical Intensive Care Unit (MICU),2180-07-23 14:00:00,2180-07-23 23:50:47,0.4102662037037037\n")
	writeTestFile(t, dir, "icu/site_notes.csv", "stay_id,note_count\n39553978,3\n")
	writeTestFile(t, dir, "hosp/README.txt", "not a table\n")
	return dir
}

func TestImportMIMICFixture(t *testing.T) {
	dir := writeMIMICFixture(t)
	db := newImportDB(t)
	var total int64
	for _, f := range []string{"hosp/patients.csv.gz", "hosp/d_icd_diagnoses.csv", "icu/icustays.csv.gz", "icu/site_notes.csv"} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		total += fi.Size()
	}
	var last progress.Report
	res, err := ImportMIMIC(context.Background(), db, dir, MIMICOptions{Progress: func(p progress.Report) {
		if p.Total != total || p.Done < last.Done {
			t.Errorf("progress %+v after %+v: want monotonic, total %d", p, last, total)
		}
		last = p
	}})
	if err != nil {
		t.Fatal(err)
	}
	if last.Done != total {
		t.Errorf("final progress %d, want %d", last.Done, total)
	}
	var got []string
	for _, tb := range res.Tables {
		got = append(got, tb.Module+"/"+tb.Table)
	}
	want := []string{"hosp/d_icd_diagnoses", "hosp/patients", "icu/icustays", "icu/site_notes"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("tables = %v, want %v", got, want)
	}
	if res.Rows != 2+2+1+1 || res.Bytes != total {
		t.Errorf("rows %d bytes %d, want 6 and %d", res.Rows, res.Bytes, total)
	}
	if !slices.Contains(res.Missing, "hosp/labevents") || !slices.Contains(res.Missing, "icu/chartevents") ||
		slices.Contains(res.Missing, "hosp/patients") {
		t.Errorf("missing = %v", res.Missing)
	}

	wantTypes := map[string][]string{
		"patients":        {"INTEGER", "TEXT", "INTEGER", "INTEGER", "TEXT", "DATE"},
		"d_icd_diagnoses": {"TEXT", "INTEGER", "TEXT"},
		"icustays":        {"INTEGER", "INTEGER", "INTEGER", "TEXT", "TEXT", "TIMESTAMP", "TIMESTAMP", "REAL"},
		"site_notes":      {"INTEGER", "INTEGER"}, // unknown table: inferred
	}
	for table, want := range wantTypes {
		if got := columnTypes(t, db, table); !reflect.DeepEqual(got, want) {
			t.Errorf("%s types = %v, want %v", table, got, want)
		}
	}
	if got := queryStrings(t, db, "SELECT icd_code FROM d_icd_diagnoses ORDER BY 1"); !reflect.DeepEqual(got, [][]string{{"0010"}, {"A000"}}) {
		t.Errorf("icd codes = %q: leading zeros lost?", got)
	}
	idx := queryStrings(t, db, "SELECT name FROM sqlite_schema WHERE type = 'index' ORDER BY name")
	wantIdx := [][]string{
		{"idx_icustays_hadm_id"}, {"idx_icustays_stay_id"}, {"idx_icustays_subject_id"},
		{"idx_patients_subject_id"}, {"idx_site_notes_stay_id"},
	}
	if !reflect.DeepEqual(idx, wantIdx) {
		t.Errorf("indexes = %q, want %q", idx, wantIdx)
	}

	// A second import is refused table by table unless Replace is set.
	_, err = ImportMIMIC(context.Background(), db, dir, MIMICOptions{})
	if !errors.Is(err, ErrTableExists) {
		t.Errorf("re-import: error %v, want ErrTableExists", err)
	}
	if _, err := ImportMIMIC(context.Background(), db, dir, MIMICOptions{Replace: true}); err != nil {
		t.Errorf("re-import with Replace: %v", err)
	}
}

func TestImportMIMICLayout(t *testing.T) {
	root := t.TempDir()
	empty := filepath.Join(root, "empty")
	noCSV := filepath.Join(root, "nocsv")
	flat := filepath.Join(root, "flat")
	for _, d := range []string{empty, filepath.Join(noCSV, "hosp"), filepath.Join(noCSV, "icu")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeTestFile(t, noCSV, "hosp/notes.txt", "x")
	writeGzipFile(t, flat, "patients.csv.gz", "subject_id\n1\n")
	file := writeTestFile(t, root, "file.csv", "a\n1\n")
	dup := filepath.Join(root, "dup")
	writeTestFile(t, dup, "hosp/items.csv", "itemid\n1\n")
	writeTestFile(t, dup, "icu/items.csv.gz", string(gzipBytes(t, "itemid\n1\n")))

	tests := []struct {
		name, dir string
		notMIMIC  bool
		want      []string
	}{
		{"missing", filepath.Join(root, "nope"), false, []string{"not found"}},
		{"a file", file, true, []string{"is a file", "hosp/"}},
		{"no module folders", empty, true, []string{"no hosp/ or icu/ folder", "expected a folder holding hosp/ and/or icu/"}},
		{"no csv files", noCSV, true, []string{"has no .csv.gz or .csv files", "hosp"}},
		{"the hosp folder itself", flat, true, []string{"choose its parent"}},
		{"a table in both modules", dup, true, []string{"table items found in both hosp/ and icu/"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			db := newImportDB(t)
			res, err := ImportMIMIC(context.Background(), db, tt.dir, MIMICOptions{})
			if err == nil {
				t.Fatal("no error")
			}
			if tt.notMIMIC != errors.Is(err, ErrNotMIMIC) {
				t.Errorf("error %q: errors.Is(ErrNotMIMIC) = %v", err, !tt.notMIMIC)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if len(res.Tables) != 0 {
				t.Errorf("tables imported: %v", res.Tables)
			}
		})
	}
}

func TestImportMIMICFailure(t *testing.T) {
	dir := writeMIMICFixture(t)
	// patients (imported after d_icd_diagnoses) is damaged on line 3.
	writeGzipFile(t, dir, "hosp/patients.csv.gz",
		"subject_id,gender,anchor_age,anchor_year,anchor_year_group,dod\n10000032,F,52,2180,2014 - 2016,\n10000048,M\n")
	db := newImportDB(t)
	res, err := ImportMIMIC(context.Background(), db, dir, MIMICOptions{})
	wantImportError(t, err, "patients.csv.gz", 3, "MIMIC-IV hosp/patients", "expected 6 fields, found 2")
	if len(res.Tables) != 1 || res.Tables[0].Table != "d_icd_diagnoses" {
		t.Errorf("tables imported before the failure = %+v, want d_icd_diagnoses", res.Tables)
	}
	if !tableExists(t, db, "d_icd_diagnoses") || tableExists(t, db, "patients") || tableExists(t, db, "icustays") {
		t.Error("want d_icd_diagnoses kept, patients rolled back, icustays not started")
	}
}

func TestImportMIMICCancel(t *testing.T) {
	dir := writeMIMICFixture(t)
	writeGzipFile(t, dir, "hosp/labevents.csv.gz", bigCSV(30000))
	db := newImportDB(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	res, err := ImportMIMIC(ctx, db, dir, MIMICOptions{Progress: func(p progress.Report) {
		if p.Stage == "labevents" && p.Done > 0 {
			cancel()
		}
	}})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("error %v, want context.Canceled", err)
	}
	if tableExists(t, db, "labevents") || tableExists(t, db, "patients") {
		t.Error("cancelled table left behind, or import went on after the cancellation")
	}
	if len(res.Tables) != 1 || !tableExists(t, db, "d_icd_diagnoses") {
		t.Errorf("tables done before the cancellation = %+v", res.Tables)
	}
}

// countCSVRecords counts the data records of a (gzip) CSV file with
// encoding/csv, independently of the importer.
func countCSVRecords(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(f)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		r = zr
	}
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	var n int64
	for {
		_, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		n++
	}
	return n - 1 // header
}

// TestImportMIMICDemo is the acceptance test on the real MIMIC-IV demo
// (skipped when the data is absent): every table present is imported with
// as many rows as the file has CSV records.
func TestImportMIMICDemo(t *testing.T) {
	dir := realdata.Path(t, "mimic-iv-demo-2.2")
	db := newImportDB(t)
	var reports atomic.Int64
	start := time.Now()
	res, err := ImportMIMIC(context.Background(), db, dir, MIMICOptions{Progress: func(progress.Report) { reports.Add(1) }})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("imported %d tables, %d rows, %.1f MB in %v (%d progress reports)",
		len(res.Tables), res.Rows, float64(res.Bytes)/1e6, elapsed.Round(time.Millisecond), reports.Load())

	var files []string
	for _, m := range []string{"hosp", "icu"} {
		matches, err := filepath.Glob(filepath.Join(dir, m, "*.csv.gz"))
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, matches...)
	}
	if len(res.Tables) != len(files) {
		t.Errorf("%d tables imported, %d files present", len(res.Tables), len(files))
	}
	byTable := map[string]MIMICTable{}
	for _, tb := range res.Tables {
		byTable[tb.Table] = tb
	}
	for _, f := range files {
		table := TableNameFromFile(f)
		tb, ok := byTable[table]
		if !ok {
			t.Errorf("%s: not imported", f)
			continue
		}
		want := countCSVRecords(t, f)
		if tb.Rows != want || countRows(t, db, table) != want {
			t.Errorf("%s: %d rows imported (%d in table), encoding/csv counts %d", table, tb.Rows, countRows(t, db, table), want)
		}
		for _, c := range tb.Columns {
			if c.Inferred {
				t.Errorf("%s.%s: not in the v2.2 schema, type inferred as %s", table, c.Name, c.Type)
			}
			if c.Mismatches > 0 {
				t.Errorf("%s.%s: %d values do not fit %s", table, c.Name, c.Mismatches, c.Type)
			}
		}
	}
	for table, want := range map[string]int64{"patients": 100, "admissions": 275, "labevents": 107727, "prescriptions": 18087} {
		if got := byTable[table].Rows; got != want {
			t.Errorf("%s: %d rows, want %d", table, got, want)
		}
	}
	if !reflect.DeepEqual(res.Missing, []string{"icu/chartevents"}) {
		t.Errorf("missing = %v, want [icu/chartevents]", res.Missing)
	}
	// Spot checks of types and values against the data.
	got := queryStrings(t, db, "SELECT typeof(subject_id), typeof(valuenum), typeof(charttime) FROM labevents WHERE valuenum IS NOT NULL LIMIT 1")
	if !reflect.DeepEqual(got, [][]string{{"integer", "real", "text"}}) {
		t.Errorf("labevents storage classes = %q", got)
	}
	if n := countRows(t, db, "d_icd_diagnoses"); n == 0 {
		t.Error("d_icd_diagnoses empty")
	}
	var zeros int
	if err := db.QueryRow("SELECT count(*) FROM d_icd_diagnoses WHERE icd_code LIKE '0%'").Scan(&zeros); err != nil || zeros == 0 {
		t.Errorf("ICD codes with a leading zero: %d (%v), want some", zeros, err)
	}
	if elapsed > 30*time.Second {
		t.Errorf("import took %v, want well under 30 s", elapsed)
	}
}

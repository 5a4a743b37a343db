package cli

import (
	"bytes"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets"
)

// run executes the CLI in-process against buffers.
func run(t *testing.T, wsDir string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	f := &Factory{In: strings.NewReader(""), Out: &out, Err: &errb, Version: "test"}
	code = Run(context.Background(), f, append([]string{"--workspace", wsDir}, args...))
	return out.String(), errb.String(), code
}

// fixtureDB writes a small database and returns its path.
func fixtureDB(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "fixture.sqlite")
	db, err := sql.Open(datasets.DriverName, "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range []string{
		"CREATE TABLE patients (subject_id INTEGER PRIMARY KEY, gender TEXT, anchor_age INTEGER, dod DATE)",
		"INSERT INTO patients VALUES (1,'F',52,NULL),(2,'M',71,'2181-01-02'),(3,'F',33,NULL)",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func TestVersion(t *testing.T) {
	out, _, code := run(t, t.TempDir(), "version")
	if code != 0 || !strings.HasPrefix(out, "clinsight test (go") {
		t.Errorf("version: code %d, out %q", code, out)
	}
}

func TestNoSubcommandOpensGUI(t *testing.T) {
	dir := t.TempDir()
	var got *app.Workspace
	var out, errb bytes.Buffer
	var screen string
	f := &Factory{Out: &out, Err: &errb, RunGUI: func(_ context.Context, ws *app.Workspace, s string) error {
		got, screen = ws, s
		return nil
	}}
	if code := Run(context.Background(), f, []string{"--workspace", dir, "--screen", "settings"}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if got == nil || got.Dir() != dir || screen != "settings" {
		t.Errorf("GUI not opened on the workspace and screen: %v %q", got, screen)
	}
	// Without a GUI in the build, a clear error.
	_, stderr, code := run(t, dir)
	if code == 0 || !strings.Contains(stderr, "no desktop app") {
		t.Errorf("no GUI: code %d, stderr %q", code, stderr)
	}
}

func TestErrorsAreOneLine(t *testing.T) {
	for _, args := range [][]string{
		{"frobnicate"},
		{"sql", "SELECT 1"}, // missing --db
		{"sql", "--db", "/nonexistent/x.sqlite", "SELECT 1"},
		{"tables", "--db", "/nonexistent/x.sqlite"},
	} {
		_, stderr, code := run(t, t.TempDir(), args...)
		if code != 1 {
			t.Errorf("%v: exit %d, want 1", args, code)
		}
		if lines := strings.Count(strings.TrimSpace(stderr), "\n"); lines != 0 || !strings.HasPrefix(stderr, "clinsight: ") {
			t.Errorf("%v: stderr not one 'clinsight: ...' line: %q", args, stderr)
		}
	}
}

func TestSQLJSON(t *testing.T) {
	db := fixtureDB(t)
	out, _, code := run(t, t.TempDir(), "sql", "--db", db, "--json", "SELECT subject_id, gender, dod FROM patients ORDER BY subject_id")
	if code != 0 {
		t.Fatalf("exit %d", code)
	}
	want := `{"columns":["subject_id","gender","dod"],"rows":[[1,"F",null],[2,"M","2181-01-02"],[3,"F",null]],"truncated":false}` + "\n"
	if out != want {
		t.Errorf("got  %s\nwant %s", out, want)
	}
	out, _, _ = run(t, t.TempDir(), "sql", "--db", db, "--json", "--max-rows", "2", "SELECT * FROM patients")
	var res struct {
		Rows      [][]any `json:"rows"`
		Truncated bool    `json:"truncated"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || len(res.Rows) != 2 || !res.Truncated {
		t.Errorf("--max-rows 2: %s (%v)", out, err)
	}
	out, _, _ = run(t, t.TempDir(), "sql", "--db", db, "--json", "SELECT 1 WHERE 0")
	if !strings.Contains(out, `"rows":[]`) {
		t.Errorf("empty result: %s", out)
	}
}

func TestSQLText(t *testing.T) {
	db := fixtureDB(t)
	out, stderr, code := run(t, t.TempDir(), "sql", "--db", db, "SELECT gender, count(*) AS n FROM patients GROUP BY gender")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "gender") || !strings.Contains(out, "F       2") || !strings.Contains(stderr, "2 rows in") {
		t.Errorf("out %q stderr %q", out, stderr)
	}
}

func TestSQLRefusesWrites(t *testing.T) {
	db := fixtureDB(t)
	_, stderr, code := run(t, t.TempDir(), "sql", "--db", db, "DROP TABLE patients")
	if code != 1 || !strings.Contains(stderr, "query refused: DROP") {
		t.Errorf("code %d stderr %q", code, stderr)
	}
	_, stderr, code = run(t, t.TempDir(), "sql", "--db", db, "--timeout", "300ms",
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c) SELECT count(*) FROM c")
	if code != 1 || !strings.Contains(stderr, "stopped after 300ms") {
		t.Errorf("timeout: code %d stderr %q", code, stderr)
	}
}

func TestSQLExportXLSX(t *testing.T) {
	db := fixtureDB(t)
	out := filepath.Join(t.TempDir(), "cohort.xlsx")
	_, stderr, code := run(t, t.TempDir(), "sql", "--db", db, "--xlsx", out, "--patient-level", "SELECT subject_id, gender FROM patients ORDER BY 1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	wb, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	rows, err := wb.GetRows("Results")
	if err != nil || len(rows) != 4 || rows[0][0] != "subject_id" || rows[3][1] != "F" {
		t.Errorf("Results sheet: %v %v", rows, err)
	}
	prov, err := wb.GetRows("Provenance")
	if err != nil {
		t.Fatal(err)
	}
	text := ""
	for _, r := range prov {
		text += strings.Join(r, "=") + "\n"
	}
	for _, want := range []string{"Clinsight version=test", "Query=SELECT subject_id, gender FROM patients ORDER BY 1", db} {
		if !strings.Contains(text, want) {
			t.Errorf("Provenance lacks %q:\n%s", want, text)
		}
	}
}

func TestTables(t *testing.T) {
	ws := t.TempDir()
	out, _, code := run(t, ws, "tables")
	if code != 0 || !strings.Contains(out, "no data sources") {
		t.Errorf("no sources: %q", out)
	}
	db := fixtureDB(t)
	out, _, code = run(t, ws, "tables", "--db", db, "--json")
	if code != 0 || !strings.Contains(out, `"name":"patients"`) || !strings.Contains(out, `"rows":3`) || !strings.Contains(out, `"columns":4`) {
		t.Errorf("tables --json: %q", out)
	}
}

func TestImportCSVAndRegister(t *testing.T) {
	ws := t.TempDir()
	dir := t.TempDir()
	csvPath := filepath.Join(dir, "Lab Results.csv.gz")
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("subject_id,test,value\n1,creatinine,1.2\n2,creatinine,3.4\n3,glucose,\n"))
	zw.Close()
	if err := os.WriteFile(csvPath, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	db := filepath.Join(dir, "site.sqlite")
	out, stderr, code := run(t, ws, "import", "csv", csvPath, "--db", db, "--name", "site")
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "into table lab_results: 3 rows, 3 columns") || !strings.Contains(out, `registered as data source "site"`) {
		t.Errorf("import output: %q", out)
	}
	out, _, code = run(t, ws, "sql", "--db", "site", "--json", "SELECT typeof(subject_id), typeof(value), sum(value) FROM lab_results")
	if code != 0 || !strings.Contains(out, `[["integer","real",4.6]]`) {
		t.Errorf("query after import: %q", out)
	}
	// Importing again without --replace is refused; the table is intact.
	_, stderr, code = run(t, ws, "import", "csv", csvPath, "--db", "site")
	if code != 1 || !strings.Contains(stderr, "exists") {
		t.Errorf("re-import: code %d %q", code, stderr)
	}
	// A ragged file names file and line, and leaves no table.
	bad := filepath.Join(dir, "bad.csv")
	os.WriteFile(bad, []byte("a,b\n1,2\n3\n"), 0o644)
	_, stderr, code = run(t, ws, "import", "csv", bad, "--db", "site")
	if code != 1 || !strings.Contains(stderr, "bad.csv line 3") {
		t.Errorf("ragged: code %d %q", code, stderr)
	}
	out, _, _ = run(t, ws, "tables", "--db", "site")
	if strings.Contains(out, "bad") {
		t.Errorf("partial table left behind: %q", out)
	}
}

func TestImportMIMICWrongLayout(t *testing.T) {
	_, stderr, code := run(t, t.TempDir(), "import", "mimic-iv", t.TempDir(), "--db", filepath.Join(t.TempDir(), "m.sqlite"))
	if code != 1 || !strings.Contains(stderr, "hosp") {
		t.Errorf("code %d stderr %q", code, stderr)
	}
}

func TestImportSQLiteRegistersReadOnly(t *testing.T) {
	ws := t.TempDir()
	db := fixtureDB(t)
	out, stderr, code := run(t, ws, "import", "sqlite", db, "--name", "ehr")
	if code != 0 || !strings.Contains(out, `data source "ehr"`) {
		t.Fatalf("code %d out %q err %q", code, out, stderr)
	}
	out, _, _ = run(t, ws, "tables")
	if !strings.Contains(out, "ehr") || !strings.Contains(out, db) {
		t.Errorf("sources: %q", out)
	}
	_, stderr, code = run(t, ws, "import", "sqlite", filepath.Join(t.TempDir(), "missing.sqlite"))
	if code != 1 || !strings.Contains(stderr, "missing.sqlite") {
		t.Errorf("missing file: %d %q", code, stderr)
	}
}

func TestDemoInit(t *testing.T) {
	ws := t.TempDir()
	out, stderr, code := run(t, ws, "demo", "init", "--patients", "200")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "patients") || !strings.Contains(out, "dicom_all") {
		t.Errorf("summary: %q", out)
	}
	out, _, _ = run(t, ws, "sql", "--db", "demo", "--json", "SELECT count(*) FROM patients")
	if !strings.Contains(out, `[[200]]`) {
		t.Errorf("demo patients: %q", out)
	}
	out, _, _ = run(t, ws, "sql", "--db", "demo", "--json", "SELECT count(*) FROM radiology_reports")
	if !strings.Contains(out, `[[400]]`) {
		t.Errorf("demo radiology reports: %q", out)
	}
	for table, want := range map[string]string{"evidence_records": "[[300]]"} {
		out, _, _ = run(t, ws, "sql", "--db", "demo", "--json", "SELECT count(*) FROM "+table)
		if !strings.Contains(out, want) {
			t.Errorf("demo %s: %q, want %s", table, out, want)
		}
	}
	out, _, _ = run(t, ws, "tables", "--db", "demo")
	if !strings.Contains(out, "trials") {
		t.Errorf("demo has no trial tables: %q", out)
	}
	_, stderr, code = run(t, ws, "demo", "init")
	if code != 1 || !strings.Contains(stderr, "already exists") {
		t.Errorf("second init: %d %q", code, stderr)
	}
	if _, _, code = run(t, ws, "demo", "init", "--if-missing"); code != 0 {
		t.Errorf("--if-missing failed")
	}
}

func TestCorruptConfigWarning(t *testing.T) {
	ws := t.TempDir()
	os.WriteFile(filepath.Join(ws, "config.json"), []byte("{oops"), 0o644)
	_, stderr, code := run(t, ws, "tables")
	if code != 0 || !strings.Contains(stderr, "warning: The settings file was unreadable") {
		t.Errorf("code %d stderr %q", code, stderr)
	}
}

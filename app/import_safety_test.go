package app

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/app/impression"
	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/demo"
)

// importInputs are valid inputs for every importer, so that an import
// that fails does so because of where it writes, not what it reads.
type importInputs struct {
	csv, mimicDir, trials, reports, literature string
}

func writeInputs(t *testing.T) importInputs {
	t.Helper()
	dir := t.TempDir()
	in := importInputs{
		csv:        filepath.Join(dir, "extra.csv"),
		mimicDir:   filepath.Join(dir, "mimic"),
		trials:     filepath.Join(dir, "trials.jsonl"),
		reports:    filepath.Join(dir, "reports.csv"),
		literature: filepath.Join("evidence", "testdata", "sample.csv"),
	}
	files := map[string]string{
		in.csv: "a,b\n1,2\n3,4\n",
		filepath.Join(in.mimicDir, "hosp", "patients.csv"): "subject_id,gender,anchor_age,anchor_year,anchor_year_group,dod\n1,F,52,2150,2008 - 2010,\n",
		in.trials: `{"_id": "NCT00000001", "title": "A trial", "text": "Inclusion criteria: adults with asthma."}` + "\n",
	}
	var reports strings.Builder
	reports.WriteString("uid,findings,impression\n")
	for _, r := range impression.SyntheticReports(5, 1) {
		reports.WriteString(`"` + r.UID + `","` + r.Findings + `","` + r.Impression + "\"\n")
	}
	files[in.reports] = reports.String()
	for p, content := range files {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return in
}

// importer runs one importer of the workspace into db.
type importer struct {
	name string
	run  func(ctx context.Context, ws *Workspace, db string) error
}

func importers(in importInputs) []importer {
	return []importer{
		{"csv", func(ctx context.Context, ws *Workspace, db string) error {
			return into(ws, db, func(src Source) error {
				_, err := ws.Data().ImportCSVInto(ctx, src, in.csv, datasets.CSVOptions{})
				return err
			})
		}},
		{"mimic-iv", func(ctx context.Context, ws *Workspace, db string) error {
			return into(ws, db, func(src Source) error {
				_, err := ws.Data().ImportMIMICInto(ctx, src, in.mimicDir, datasets.MIMICOptions{})
				return err
			})
		}},
		{"trials", func(ctx context.Context, ws *Workspace, db string) error {
			return into(ws, db, func(src Source) error {
				_, err := ws.Trials().Import(ctx, src, []string{in.trials}, trials.ImportOptions{})
				return err
			})
		}},
		{"reports", func(ctx context.Context, ws *Workspace, db string) error {
			return into(ws, db, func(src Source) error {
				_, err := ws.Impressions().Import(ctx, src, in.reports, impression.ImportOptions{})
				return err
			})
		}},
		{"literature", func(ctx context.Context, ws *Workspace, db string) error {
			_, err := ws.ImportLiterature(ctx, db, []string{in.literature}, evidence.ImportOptions{}, nil)
			return err
		}},
	}
}

// into resolves db as a front end does and runs an import into it.
func into(ws *Workspace, db string, run func(Source) error) error {
	src, err := ws.Resolve(db)
	if err != nil {
		return err
	}
	return run(src)
}

// source resolves a source name or path, failing the test when it cannot.
func source(t testing.TB, ws *Workspace, nameOrPath string) Source {
	t.Helper()
	src, err := ws.Resolve(nameOrPath)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

// dbState is what must not change in a database Clinsight may not write:
// the file's bytes, its journal mode and the absence of journal files.
type dbState struct {
	hash    [32]byte
	journal string
	extra   []string
}

func stateOf(t *testing.T, path string) dbState {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	st := dbState{hash: sha256.Sum256(raw)}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + suffix); err == nil {
			st.extra = append(st.extra, filepath.Base(path+suffix))
		}
	}
	db, err := datasets.OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&st.journal); err != nil {
		t.Fatal(err)
	}
	return st
}

func (a dbState) equal(b dbState) bool {
	return a.hash == b.hash && a.journal == b.journal && strings.Join(a.extra, ",") == strings.Join(b.extra, ",")
}

// rollbackJournalDB writes a small SQLite file the way other tools do
// (rollback journal, not WAL).
func rollbackJournalDB(t *testing.T, path string) {
	t.Helper()
	db, err := sql.Open(datasets.DriverName, "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, s := range []string{
		"CREATE TABLE patients (subject_id INTEGER PRIMARY KEY, gender TEXT)",
		"INSERT INTO patients VALUES (1, 'F'), (2, 'M')",
	} {
		if _, err := db.Exec(s); err != nil {
			t.Fatal(err)
		}
	}
}

func TestReadOnlySourceIsNeverOpenedForWriting(t *testing.T) {
	ctx := context.Background()
	ws := openTemp(t)
	in := writeInputs(t)
	ro := filepath.Join(t.TempDir(), "ro.sqlite")
	rollbackJournalDB(t, ro)
	if _, err := ws.RegisterSQLite(ctx, ro, "rodemo"); err != nil {
		t.Fatal(err)
	}
	// The workspace's demo file registered in place under another name.
	if err := os.MkdirAll(ws.DataDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	rollbackJournalDB(t, ws.DemoPath())
	if _, err := ws.RegisterSQLite(ctx, ws.DemoPath(), "mydemo"); err != nil {
		t.Fatal(err)
	}
	before, demoBefore := stateOf(t, ro), stateOf(t, ws.DemoPath())
	link := filepath.Join(t.TempDir(), "link.sqlite")
	if err := os.Symlink(ro, link); err != nil {
		t.Fatal(err)
	}
	for _, imp := range importers(in) {
		for _, db := range []string{"rodemo", "RODEMO", ro, link} {
			err := imp.run(ctx, ws, db)
			var roErr *ReadOnlySourceError
			if !errors.As(err, &roErr) || roErr.Source != "rodemo" {
				t.Errorf("%s into %s: %v, want a ReadOnlySourceError for rodemo", imp.name, db, err)
				continue
			}
			msg := err.Error()
			for _, want := range []string{`data source "rodemo" was added read-only`, "must not change", "import into a new data source instead"} {
				if !strings.Contains(msg, want) {
					t.Errorf("%s: message %q lacks %q", imp.name, msg, want)
				}
			}
			if strings.Contains(msg, "--") {
				t.Errorf("%s: the message names a command-line flag, which the GUI cannot use: %q", imp.name, msg)
			}
		}
	}
	_, err := ws.InitDemo(ctx, demo.Options{Seed: 1, Patients: 20}, true)
	if !errors.As(err, new(*ReadOnlySourceError)) {
		t.Errorf("demo init over a read-only source: %v", err)
	}
	if after := stateOf(t, ro); !after.equal(before) {
		t.Errorf("the read-only source changed: %+v, was %+v", after, before)
	}
	if after := stateOf(t, ws.DemoPath()); !after.equal(demoBefore) {
		t.Errorf("the read-only demo file changed: %+v, was %+v", after, demoBefore)
	}
}

func TestFailedImportIntoNewDatabaseLeavesNoFile(t *testing.T) {
	ctx := context.Background()
	ws := openTemp(t)
	in := writeInputs(t)
	bad := t.TempDir()
	broken := importInputs{
		csv:        filepath.Join(bad, "ragged.csv"),
		mimicDir:   filepath.Join(bad, "no-such-mimic"),
		trials:     filepath.Join(bad, "bad.jsonl"),
		reports:    filepath.Join(bad, "no-report-columns.csv"),
		literature: filepath.Join(bad, "no-title.csv"),
	}
	for p, content := range map[string]string{
		broken.csv:        "a,b\n1,2\n3\n",
		broken.trials:     `{"_id": "NCT1", "text": "ok"}` + "\n" + `{"_id": "", "text": "no id"}` + "\n",
		broken.reports:    "foo,bar\n1,2\n",
		broken.literature: "foo,bar\n1,2\n",
	} {
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	_ = in
	for _, imp := range importers(broken) {
		// A new file, and one in the workspace as the GUI imports.
		for _, db := range []string{filepath.Join(t.TempDir(), "new.sqlite"), filepath.Join(ws.DataDir(), imp.name+".sqlite")} {
			if err := imp.run(ctx, ws, db); err == nil {
				t.Fatalf("%s: the broken input was imported", imp.name)
			}
			entries, _ := os.ReadDir(filepath.Dir(db))
			for _, e := range entries {
				if strings.HasPrefix(e.Name(), filepath.Base(db)) {
					t.Errorf("%s: a failed import left %s", imp.name, e.Name())
				}
			}
		}
	}
}

func TestFailedImportLeavesAnExistingDatabaseUnchanged(t *testing.T) {
	ctx := context.Background()
	ws := openTemp(t)
	bad := t.TempDir()
	broken := importInputs{
		csv:        filepath.Join(bad, "ragged.csv"),
		mimicDir:   filepath.Join(bad, "mimic"),
		trials:     filepath.Join(bad, "bad.jsonl"),
		reports:    filepath.Join(bad, "no-report-columns.csv"),
		literature: filepath.Join(bad, "no-title.csv"),
	}
	for p, content := range map[string]string{
		broken.csv: "a,b\n1,2\n3\n",
		filepath.Join(broken.mimicDir, "hosp", "patients.csv"): "subject_id,gender\n1,F\n2\n",
		broken.trials:     `{"_id": "NCT1", "text": "ok"}` + "\n" + `{"_id": "", "text": "no id"}` + "\n",
		broken.reports:    "foo,bar\n1,2\n",
		broken.literature: "foo,bar\n1,2\n",
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// One database another tool made (rollback journal), one an earlier
	// Clinsight import made (WAL).
	other := filepath.Join(t.TempDir(), "other.sqlite")
	rollbackJournalDB(t, other)
	ours := filepath.Join(t.TempDir(), "ours.sqlite")
	if _, err := ws.Data().ImportCSVInto(ctx, source(t, ws, ours), writeInputs(t).csv, datasets.CSVOptions{}); err != nil {
		t.Fatal(err)
	}
	for _, db := range []string{other, ours} {
		before := stateOf(t, db)
		for _, imp := range importers(broken) {
			if err := imp.run(ctx, ws, db); err == nil {
				t.Fatalf("%s: the broken input was imported", imp.name)
			}
			if after := stateOf(t, db); !after.equal(before) {
				t.Errorf("%s: a failed import changed %s: %+v, was %+v", imp.name, filepath.Base(db), after, before)
			}
		}
	}
}

func TestImportIntoALockedDatabaseSaysAnotherImportIsWriting(t *testing.T) {
	ctx := context.Background()
	ws := openTemp(t)
	ws.importBusyTimeout = 50 * time.Millisecond
	in := writeInputs(t)
	path := filepath.Join(ws.DataDir(), "shared.sqlite")
	if _, err := ws.RegisterImported("shared", path, SourceCSV, "test"); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Data().ImportCSVInto(ctx, source(t, ws, "shared"), writeInputs(t).csv, datasets.CSVOptions{Table: "first"}); err != nil {
		t.Fatal(err)
	}
	// Another import holds the write lock.
	holder, err := sql.Open(datasets.DriverName, "file:"+path)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	conn, err := holder.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "BEGIN IMMEDIATE"); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, "CREATE TABLE being_imported (x)"); err != nil {
		t.Fatal(err)
	}
	for _, imp := range importers(in) {
		err := imp.run(ctx, ws, "shared")
		var busy *DatabaseBusyError
		if !errors.As(err, &busy) {
			t.Errorf("%s into a locked database: %v, want a DatabaseBusyError", imp.name, err)
			continue
		}
		want := `another import is writing to the data source "shared"; wait for it to finish or cancel it`
		if !strings.Contains(err.Error(), want) {
			t.Errorf("%s: message %q lacks %q", imp.name, err, want)
		}
	}
	if _, err := conn.ExecContext(ctx, "ROLLBACK"); err != nil {
		t.Fatal(err)
	}
	conn.Close()
	// Once the other import is done, the same import works.
	for _, imp := range importers(in) {
		if err := imp.run(ctx, ws, "shared"); err != nil {
			t.Errorf("%s after the lock was released: %v", imp.name, err)
		}
	}
}

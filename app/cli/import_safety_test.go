package cli

import (
	"context"
	"crypto/sha256"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
)

// fileState is what a failed or refused import must not change: the
// database file's bytes, its journal mode and the absence of journal
// files.
func fileState(t *testing.T, path string) string {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	db, err := datasets.OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	st := []string{string(sum[:]), mode}
	for _, suffix := range []string{"-wal", "-shm", "-journal"} {
		if _, err := os.Stat(path + suffix); err == nil {
			st = append(st, suffix)
		}
	}
	return strings.Join(st, "|")
}

// importCommands are the import commands with valid inputs.
func importCommands(t *testing.T) map[string][]string {
	t.Helper()
	dir := t.TempDir()
	csv := filepath.Join(dir, "x.csv")
	mimic := filepath.Join(dir, "mimic")
	if err := os.WriteFile(csv, []byte("a,b\n1,2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(mimic, "hosp"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mimic, "hosp", "patients.csv"), []byte("subject_id,gender\n1,F\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string][]string{
		"csv":      {"import", "csv", csv},
		"mimic-iv": {"import", "mimic-iv", mimic},
		"trials":   {"trials", "import", syntheticTrialsFile(t, 3), "--no-embed"},
		"reports":  {"reports", "import", reportsCSV(t, 5)},
		"evidence": {"evidence", "import", "../evidence/testdata/sample.csv"},
	}
}

// brokenImportCommands are the import commands with inputs that fail.
func brokenImportCommands(t *testing.T) map[string][]string {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"ragged.csv":                 "a,b\n1,2\n3\n",
		"mimic/hosp/patients.csv":    "subject_id,gender\n1,F\n2\n",
		"bad.jsonl":                  `{"_id": "NCT1", "text": "ok"}` + "\n" + `{"_id": "", "text": "no id"}` + "\n",
		"no-report-columns.csv":      "foo,bar\n1,2\n",
		"no-title.csv":               "foo,bar\n1,2\n",
		"missing-mimic/.placeholder": "",
	}
	for name, content := range files {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	in := func(name string) string { return filepath.Join(dir, name) }
	return map[string][]string{
		"csv":                  {"import", "csv", in("ragged.csv")},
		"mimic-iv":             {"import", "mimic-iv", in("mimic")},
		"mimic-iv missing dir": {"import", "mimic-iv", in("no-such-dir")},
		"trials":               {"trials", "import", in("bad.jsonl")},
		"reports":              {"reports", "import", in("no-report-columns.csv")},
		"evidence":             {"evidence", "import", in("no-title.csv")},
	}
}

func TestCLIImportIntoReadOnlySourceIsRefused(t *testing.T) {
	ws := t.TempDir()
	ro := fixtureDB(t) // rollback journal, as other tools write it
	if _, stderr, code := run(t, ws, "import", "sqlite", ro, "--name", "rodemo"); code != 0 {
		t.Fatal(stderr)
	}
	before := fileState(t, ro)
	for name, args := range importCommands(t) {
		for _, db := range []string{"rodemo", ro} {
			_, stderr, code := run(t, ws, append(args, "--db", db)...)
			if code != 1 || !strings.Contains(stderr, `the data source "rodemo" was added read-only`) ||
				!strings.Contains(stderr, "import into a new data source instead (for example --db rodemo-imports.sqlite") {
				t.Errorf("%s --db %s: exit %d, stderr %q", name, db, code, stderr)
			}
		}
	}
	if after := fileState(t, ro); after != before {
		t.Error("the read-only source's file changed")
	}
	out, _, _ := run(t, ws, "tables", "--db", "rodemo")
	if strings.Contains(out, "x ") || !strings.Contains(out, "patients") {
		t.Errorf("tables of the read-only source:\n%s", out)
	}
}

func TestCLIFailedImportLeavesNoNewFile(t *testing.T) {
	ws := t.TempDir()
	for name, args := range brokenImportCommands(t) {
		db := filepath.Join(t.TempDir(), "new.sqlite")
		_, stderr, code := run(t, ws, append(args, "--db", db)...)
		if code != 1 {
			t.Errorf("%s: exit %d, stderr %q", name, code, stderr)
		}
		entries, _ := os.ReadDir(filepath.Dir(db))
		for _, e := range entries {
			t.Errorf("%s: the failed import left %s (%s)", name, e.Name(), strings.TrimSpace(stderr))
		}
	}
}

func TestCLIFailedImportLeavesExistingDatabaseUnchanged(t *testing.T) {
	ws := t.TempDir()
	// One database written by another tool, one by an earlier import.
	other := fixtureDB(t)
	ours := filepath.Join(t.TempDir(), "ours.sqlite")
	if _, stderr, code := run(t, ws, append(importCommands(t)["csv"], "--db", ours)...); code != 0 {
		t.Fatal(stderr)
	}
	for _, db := range []string{other, ours} {
		before := fileState(t, db)
		for name, args := range brokenImportCommands(t) {
			if _, stderr, code := run(t, ws, append(args, "--db", db)...); code != 1 {
				t.Errorf("%s: exit %d, stderr %q", name, code, stderr)
			}
			if after := fileState(t, db); after != before {
				t.Errorf("%s: the failed import changed %s", name, filepath.Base(db))
			}
		}
	}
}

func TestCLIDemoInitIfMissingAfterConfigResetKeepsUserTable(t *testing.T) {
	ws := t.TempDir()
	if _, stderr, code := run(t, ws, "demo", "init", "--patients", "30"); code != 0 {
		t.Fatal(stderr)
	}
	csv := filepath.Join(t.TempDir(), "my_cohort.csv")
	if err := os.WriteFile(csv, []byte("subject_id,note\n1,kept\n2,kept too\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, stderr, code := run(t, ws, "import", "csv", csv, "--db", "demo"); code != 0 {
		t.Fatal(stderr)
	}
	query := "SELECT group_concat(subject_id || ':' || note, ';') FROM my_cohort"
	want, stderr, code := run(t, ws, "sql", "--db", "demo", "--json", query)
	if code != 0 {
		t.Fatal(stderr)
	}
	if err := os.WriteFile(filepath.Join(ws, "config.json"), []byte("{corrupt"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = run(t, ws, "demo", "init", "--if-missing", "--patients", "30")
	if code != 0 || !strings.Contains(stderr, "registered again") || !strings.Contains(stderr, "tables imported into it are still there") {
		t.Fatalf("demo init --if-missing after the reset: exit %d, stderr %q", code, stderr)
	}
	got, stderr, code := run(t, ws, "sql", "--db", "demo", "--json", query)
	if code != 0 || got != want {
		t.Errorf("the user's table after demo init --if-missing: %q (%s), want %q", got, stderr, want)
	}
}

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets/postgres"
	"github.com/clinsight/clinsight/internal/pgtest"
)

// TestMain stops the throw-away PostgreSQL cluster the PostgreSQL tests
// share, if one was started.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// mimicOnPostgres loads the MIMIC-IV demo into a new database of the test
// cluster and creates a read-only role for it with ReaderGrants; it
// returns the database and the role's DSN, its password in $CLI_READER_PW.
func mimicOnPostgres(t *testing.T) (c *pgtest.Cluster, db, readerDSN string) {
	t.Helper()
	c = pgtest.Shared(t)
	db = c.CreateDatabase(t, "climimic")
	c.LoadMIMICDemo(t, db)
	const reader = "cli_reader"
	c.Reader(t, db, reader, postgres.ReaderGrants(reader, db, []string{"mimiciv_hosp", "mimiciv_icu"}), "CLI_READER_PW")
	return c, db, c.URL(reader, db)
}

// TestPostgresSource registers the MIMIC-IV demo on a PostgreSQL server as
// a data source, tests its connection, and reads it with tables, sql and
// sql --xlsx; a write is refused and the password is stored nowhere.
func TestPostgresSource(t *testing.T) {
	c, db, dsn := mimicOnPostgres(t)
	ws := t.TempDir()

	// A DSN with a password is refused, without echoing it.
	withPW := strings.Replace(dsn, "cli_reader@", "cli_reader:"+os.Getenv("CLI_READER_PW")+"@", 1)
	if withPW == dsn {
		t.Fatalf("could not put a password into %s", dsn)
	}
	_, stderr, code := run(t, ws, "sources", "add", "bad", "--postgres", withPW)
	if code == 0 || !strings.Contains(stderr, "password") || strings.Contains(stderr, os.Getenv("CLI_READER_PW")) {
		t.Errorf("DSN with a password: code %d, stderr %q", code, stderr)
	}

	out, stderr, code := run(t, ws, "sources", "add", "pg", "--postgres", dsn,
		"--schemas", "mimiciv_hosp,mimiciv_icu", "--password-env", "CLI_READER_PW")
	if code != 0 || !strings.Contains(out, `"pg"`) {
		t.Fatalf("sources add: code %d out %q err %q", code, out, stderr)
	}
	cfg, err := os.ReadFile(filepath.Join(ws, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(cfg), os.Getenv("CLI_READER_PW")) || !strings.Contains(string(cfg), "CLI_READER_PW") {
		t.Errorf("config.json:\n%s", cfg)
	}
	w, err := app.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	src, ok := w.Source("pg")
	w.Close()
	if !ok || src.Kind != app.SourcePostgres || src.Postgres == nil || src.Postgres.DSN != dsn ||
		strings.Join(src.Postgres.Schemas, ",") != "mimiciv_hosp,mimiciv_icu" || src.Postgres.PasswordEnv != "CLI_READER_PW" {
		t.Fatalf("source read back: %+v (postgres %+v)", src, src.Postgres)
	}

	out, stderr, code = run(t, ws, "sources", "test", "pg")
	if code != 0 {
		t.Fatalf("sources test: code %d err %q", code, stderr)
	}
	t.Logf("sources test pg:\n%s", out)
	for _, want := range []string{"PostgreSQL 15", "user:     cli_reader", "database: " + db, "writes:   none", "GRANT SELECT ON ALL TABLES IN SCHEMA"} {
		if !strings.Contains(out, want) {
			t.Errorf("sources test: no %q in\n%s", want, out)
		}
	}

	out, stderr, code = run(t, ws, "tables", "--db", "pg")
	if code != 0 {
		t.Fatalf("tables: code %d err %q", code, stderr)
	}
	for _, want := range []string{"patients", "admissions", "labevents", "icustays"} {
		if !strings.Contains(out, want) {
			t.Errorf("tables: no %s in\n%s", want, out)
		}
	}

	out, stderr, code = run(t, ws, "sql", "--db", "pg", "--json", "SELECT count(*) AS n FROM patients")
	if code != 0 || strings.TrimSpace(out) != `{"columns":["n"],"rows":[[100]],"truncated":false}` {
		t.Errorf("sql: code %d out %q err %q", code, out, stderr)
	}

	xlsx := filepath.Join(t.TempDir(), "stays.xlsx")
	_, stderr, code = run(t, ws, "sql", "--db", "pg", "--xlsx", xlsx, "--patient-level", // identifiers pseudonymised (issue 13)
		"SELECT subject_id, stay_id, los FROM mimiciv_icu.icustays ORDER BY stay_id")
	if code != 0 {
		t.Fatalf("sql --xlsx: code %d err %q", code, stderr)
	}
	wb, err := excelize.OpenFile(xlsx)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	rows, err := wb.GetRows("Results")
	if err != nil || len(rows) != 141 || rows[0][1] != "stay_id" {
		t.Errorf("Results sheet: %d rows (want header + 140), %v", len(rows), err)
	}
	prov, err := wb.GetRows("Provenance")
	if err != nil {
		t.Fatal(err)
	}
	var provText strings.Builder
	for _, r := range prov {
		provText.WriteString(strings.Join(r, " ") + "\n")
	}
	for _, want := range []string{"PostgreSQL 15", "database " + db, "user cli_reader", "mimiciv_hosp, mimiciv_icu"} {
		if !strings.Contains(provText.String(), want) {
			t.Errorf("provenance: no %q in\n%s", want, provText.String())
		}
	}
	if strings.Contains(provText.String(), os.Getenv("CLI_READER_PW")) {
		t.Errorf("provenance holds the password:\n%s", provText.String())
	}

	_, stderr, code = run(t, ws, "sql", "--db", "pg", "DELETE FROM mimiciv_hosp.patients")
	if code == 0 {
		t.Errorf("a DELETE ran: stderr %q", stderr)
	}
	var n int64
	if err := c.Super(t, db).QueryRow(t.Context(), "SELECT count(*) FROM mimiciv_hosp.patients").Scan(&n); err != nil || n != 100 {
		t.Errorf("patients after the refused DELETE: %d, %v", n, err)
	}

	out, stderr, code = run(t, ws, "sources", "remove", "pg")
	if code != 0 || !strings.Contains(out, "removed") {
		t.Errorf("sources remove: code %d out %q err %q", code, out, stderr)
	}
	if _, stderr, code = run(t, ws, "tables", "--db", "pg"); code == 0 {
		t.Errorf("tables on a removed source succeeded: %q", stderr)
	}
}

// TestPostgresSourceTestWarnsOfWrites: a source logged in as the superuser
// is tested with a warning, what it could write and the GRANT statements
// for a read-only role.
func TestPostgresSourceTestWarnsOfWrites(t *testing.T) {
	c := pgtest.Shared(t)
	db := c.CreateDatabase(t, "cliwrite")
	c.Exec(t, db, "CREATE TABLE notes (id int PRIMARY KEY, body text)")
	t.Setenv("CLI_SUPER_PW", c.SuperPassword)
	ws := t.TempDir()
	if _, stderr, code := run(t, ws, "sources", "add", "su", "--postgres", c.URL(pgtest.Superuser, db), "--password-env", "CLI_SUPER_PW"); code != 0 {
		t.Fatalf("sources add: %d %q", code, stderr)
	}
	out, stderr, code := run(t, ws, "sources", "test", "su")
	if code != 0 {
		t.Fatalf("sources test: %d %q", code, stderr)
	}
	for _, want := range []string{"user:     postgres", "writes:\n", "superuser", "warning: ", "CREATE ROLE", "GRANT SELECT ON ALL TABLES"} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, c.SuperPassword) {
		t.Errorf("the report shows the password:\n%s", out)
	}
}

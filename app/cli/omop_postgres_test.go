package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets/postgres"
	"github.com/clinsight/clinsight/datasets/realdata"
	"github.com/clinsight/clinsight/internal/pgtest"
)

// personsOf returns the count under the "persons" header of ask's output.
func personsOf(out string) string {
	_, after, ok := strings.Cut(out, "\npersons\n")
	if !ok {
		return ""
	}
	line, _, _ := strings.Cut(after, "\n")
	return strings.TrimSpace(line)
}

// TestOMOPOnPostgres registers Synthea27Nj served by PostgreSQL (a
// read-only role) as a data source: concepts finds a lay term's standard
// concept there, and ask answers a template-shaped question without a
// model, through the concept sets, with the count the same CDM imported
// into SQLite gives.
func TestOMOPOnPostgres(t *testing.T) {
	c := pgtest.Shared(t)
	db := c.CreateDatabase(t, "cliomop")
	c.LoadSynthea27Nj(t, db, "cdm")
	const reader = "cli_omop_reader"
	c.Reader(t, db, reader, postgres.ReaderGrants(reader, db, []string{"cdm"}), "CLI_OMOP_PW")
	ws := t.TempDir()
	if _, stderr, code := run(t, ws, "sources", "add", "pgomop", "--postgres", c.URL(reader, db), "--schemas", "cdm", "--password-env", "CLI_OMOP_PW"); code != 0 {
		t.Fatalf("sources add: %s", stderr)
	}
	lite := filepath.Join(t.TempDir(), "lite.db") // not in the package directory
	if _, stderr, code := run(t, ws, "import", "omop", realdata.Path(t, "omop-cdm-5.4", "synthea27nj"), "--db", lite); code != 0 {
		t.Fatalf("import omop: %s", stderr)
	}
	w, err := app.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.UpdateConfig(func(c *app.Config) { c.OllamaHost = "http://127.0.0.1:1" }); err != nil { // no model reachable
		t.Fatal(err)
	}
	w.Close()

	out, stderr, code := run(t, ws, "concepts", "--db", "pgomop", "high blood pressure")
	if code != 0 || !strings.Contains(out, "320128") {
		t.Fatalf("concepts on PostgreSQL: %d %q %q", code, out, stderr)
	}
	const q = "How many patients have hypertension and take lisinopril?"
	pg, stderr, code := run(t, ws, "ask", "--db", "pgomop", q)
	if code != 0 || !strings.Contains(pg, "without a model") || !strings.Contains(pg, "320128") || !strings.Contains(pg, "1308216") {
		t.Fatalf("ask on PostgreSQL: %d\n%s\n%s", code, pg, stderr)
	}
	liteOut, stderr, code := run(t, ws, "ask", "--db", lite, q)
	if code != 0 {
		t.Fatalf("ask on SQLite: %s", stderr)
	}
	if got, want := personsOf(pg), personsOf(liteOut); got == "" || got != want {
		t.Errorf("persons on PostgreSQL %q, on SQLite %q\n%s\n%s", got, want, pg, liteOut)
	}
}

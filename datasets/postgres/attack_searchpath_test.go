package postgres

import (
	"context"
	"strings"
	"testing"
)

// TestConnectionWarnsOfObjectsShadowingPostgreSQL: a role that may create
// objects in the schema Clinsight reads plants a function and an operator
// named like PostgreSQL's own, for the type of a column. The engine's
// search path is that schema, and PostgreSQL prefers the exact type match
// over pg_catalog's (the issue of CVE-2018-1058): Clinsight's queries, and
// the model's, then run the planted code as Clinsight's role and their
// answers change (measured below). Nothing in a query shows it, so Test
// connection must say so, naming the objects.
func TestConnectionWarnsOfObjectsShadowingPostgreSQL(t *testing.T) {
	d := newTestDB(t)
	ctx := context.Background()
	const role = "clinsight_reader_sp"
	d.c.Reader(t, d.name, role, ReaderGrants(role, d.name, []string{"clin"}), "CLINSIGHT_TEST_PG_READER_SP")
	src := Source{DSN: d.c.URL(role, d.name), Schemas: []string{"clin"}, PasswordEnv: "CLINSIGHT_TEST_PG_READER_SP"}
	clean, err := CheckSource(ctx, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if clean.Warning != "" || len(clean.Shadows) != 0 || len(clean.OthersCreate) != 0 {
		t.Fatalf("a clean schema: warning %q shadows %q others who may create %q", clean.Warning, clean.Shadows, clean.OthersCreate)
	}
	d.c.Exec(t, d.name, `CREATE ROLE intruder_sp; GRANT CREATE, USAGE ON SCHEMA clin TO intruder_sp; SET ROLE intruder_sp;
CREATE FUNCTION clin.lower(character varying) RETURNS text LANGUAGE sql AS $$ SELECT 'planted' $$;
CREATE FUNCTION clin.always_sp(character varying, character varying) RETURNS boolean LANGUAGE sql AS $$ SELECT true $$;
CREATE OPERATOR clin.= (LEFTARG = character varying, RIGHTARG = character varying, FUNCTION = clin.always_sp);
RESET ROLE`)
	t.Cleanup(func() { d.c.Exec(t, d.name, "DROP OWNED BY intruder_sp; DROP ROLE intruder_sp") })
	e, err := Open(ctx, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// The planted objects win over PostgreSQL's for varchar.
	res, err := e.Query(ctx, "SELECT lower(admission_type), (SELECT count(*) FROM admissions WHERE admission_type = 'NONE') FROM admissions LIMIT 1")
	if err != nil || res.Rows[0][0] != "planted" || res.Rows[0][1] != int64(3) {
		t.Logf("the planted objects did not take effect (%v, %v): PostgreSQL's resolution changed?", res, err)
	}
	rep, err := e.CheckConnection(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(rep.Shadows, "\n")
	for _, want := range []string{"clin.lower(character varying)", "operator clin.= (character varying, character varying)"} {
		if !strings.Contains(all, want) {
			t.Errorf("shadows lack %q: %q", want, rep.Shadows)
		}
	}
	if strings.Contains(all, "always_sp") {
		t.Errorf("shadows name a function that shadows nothing: %q", rep.Shadows)
	}
	if len(rep.OthersCreate) != 1 || rep.OthersCreate[0] != "clin: intruder_sp" {
		t.Errorf("others who may create = %q, want clin: intruder_sp", rep.OthersCreate)
	}
	if rep.CanWrite() {
		t.Errorf("the reader is said to write: %q", rep.Writes)
	}
	for _, want := range []string{"clin.lower(character varying)", "instead of PostgreSQL's own", "database administrator", "clin: intruder_sp", "revoke CREATE"} {
		if !strings.Contains(rep.Warning, want) {
			t.Errorf("warning lacks %q: %q", want, rep.Warning)
		}
	}
}

package postgres

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// fixtureSQL is a small clinical database: two tables with keys and
// comments, a view, a sequence, and dblink installed (for the attack tests).
const fixtureSQL = `
CREATE SCHEMA clin;
CREATE TABLE clin.patients (
  subject_id int PRIMARY KEY,
  gender text NOT NULL,
  anchor_age int,
  dob date,
  note text,
  photo bytea,
  score numeric,
  weight float8,
  alive boolean
);
COMMENT ON TABLE clin.patients IS 'One row per patient of the clinic.';
COMMENT ON COLUMN clin.patients.anchor_age IS 'Age in years at the anchor year.';
INSERT INTO clin.patients VALUES
  (1, 'F', 54, '2130-01-02', 'first', '\x0102ff', 1.5, 61.25, true),
  (2, 'M', 17, '2140-05-06', NULL, NULL, 12345.678, NULL, false),
  (3, 'F', 80, NULL, 'third', '\x', NULL, 70, NULL);
CREATE TABLE clin.admissions (
  hadm_id int PRIMARY KEY,
  subject_id int NOT NULL REFERENCES clin.patients(subject_id),
  admittime timestamp NOT NULL,
  admission_type varchar(40)
);
INSERT INTO clin.admissions VALUES
  (10, 1, '2180-07-23 12:35:00', 'URGENT'),
  (11, 1, '2181-01-01 00:00:00', 'ELECTIVE'),
  (12, 3, '2182-03-04 05:06:07', 'URGENT');
CREATE VIEW clin.adults AS SELECT subject_id, gender, anchor_age FROM clin.patients WHERE anchor_age >= 18;
CREATE SEQUENCE clin.ids;
SELECT nextval('clin.ids');
CREATE EXTENSION dblink;
`

// testDB is a database of the shared cluster with the fixture loaded.
type testDB struct {
	c    *pgtest.Cluster
	name string
}

func newTestDB(t testing.TB) testDB {
	t.Helper()
	c := pgtest.Shared(t)
	db := c.CreateDatabase(t, strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_")))
	c.Exec(t, db, fixtureSQL)
	return testDB{c: c, name: db}
}

// grantReader gives a role the read-only grants of ReaderGrants.
func (d testDB) grantReader(t testing.TB, role string) {
	t.Helper()
	d.c.Exec(t, d.name, "GRANT CONNECT ON DATABASE "+d.name+" TO "+role+
		"; GRANT USAGE ON SCHEMA clin TO "+role+"; GRANT SELECT ON ALL TABLES IN SCHEMA clin TO "+role)
}

// source returns a source for user on the test database, its password in
// an environment variable of the test.
func (d testDB) source(t testing.TB, user, password string, schemas ...string) Source {
	t.Helper()
	env := "CLINSIGHT_TEST_PG_" + strings.ToUpper(user)
	t.Setenv(env, password)
	return Source{DSN: d.c.URL(user, d.name), Schemas: schemas, PasswordEnv: env}
}

// open opens an engine as the superuser (the strongest role: every attack
// the gate must stop is available to it).
func (d testDB) open(t testing.TB, limits datasets.RunnerOptions) *Engine {
	t.Helper()
	e, err := Open(context.Background(), d.source(t, pgtest.Superuser, d.c.SuperPassword, "clin"), Options{Limits: limits})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// attackDir is a directory the server may write to, where the attack
// statements try to create files.
func (d testDB) attackDir(t testing.TB) string {
	t.Helper()
	dir := filepath.Join(d.c.Dir, "attack")
	if err := os.MkdirAll(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(dir, 0o777); err != nil {
		t.Fatal(err)
	}
	return dir
}

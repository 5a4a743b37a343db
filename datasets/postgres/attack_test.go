package postgres

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/clinsight/clinsight/datasets"
)

// dbState is everything an attack statement could change that the tests
// can see: table contents, the sequence, files in the attack directory,
// locks, replication slots, prepared transactions, large objects, roles,
// settings, the configuration load time and whether the victim session is
// alive.
type dbState struct {
	Tables       string
	Sequence     int64
	Files        []string
	Advisory     int
	Slots        int
	Prepared     int
	LargeObjects int
	Relations    int
	Roles        string
	WorkMem      string
	ConfLoaded   string
	StatsReset   string
	VictimAlive  bool
}

// attackEnv is a fixture database with a victim session and a directory
// the server could write to.
type attackEnv struct {
	d      testDB
	dir    string
	victim *pgx.Conn
	admin  *pgx.Conn
	pid    int
}

func newAttackEnv(t testing.TB) attackEnv {
	t.Helper()
	d := newTestDB(t)
	a := attackEnv{d: d, dir: d.attackDir(t)}
	a.victim = d.c.Super(t, d.name)
	a.admin = d.c.Super(t, d.name)
	if err := a.victim.QueryRow(context.Background(), "SELECT pg_backend_pid()").Scan(&a.pid); err != nil {
		t.Fatal(err)
	}
	return a
}

func (a attackEnv) state(t testing.TB) dbState {
	t.Helper()
	ctx := context.Background()
	conn := a.admin
	var s dbState
	err := conn.QueryRow(ctx, `SELECT
	  coalesce((SELECT md5(string_agg(p::text, '|' ORDER BY p.subject_id)) FROM clin.patients p), 'none') ||
	  coalesce((SELECT md5(string_agg(a::text, '|' ORDER BY a.hadm_id)) FROM clin.admissions a), 'none'),
	  (SELECT last_value FROM clin.ids),
	  (SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'),
	  (SELECT count(*) FROM pg_replication_slots),
	  (SELECT count(*) FROM pg_prepared_xacts),
	  (SELECT count(*) FROM pg_largeobject_metadata),
	  (SELECT count(*) FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname NOT LIKE 'pg\_%' AND n.nspname <> 'information_schema'),
	  (SELECT string_agg(rolname, ',' ORDER BY rolname) FROM pg_roles),
	  current_setting('work_mem'),
	  pg_conf_load_time()::text,
	  coalesce((SELECT stats_reset::text FROM pg_stat_database WHERE datname = current_database()), '')`).
		Scan(&s.Tables, &s.Sequence, &s.Advisory, &s.Slots, &s.Prepared, &s.LargeObjects, &s.Relations, &s.Roles, &s.WorkMem, &s.ConfLoaded, &s.StatsReset)
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(a.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		s.Files = append(s.Files, e.Name())
	}
	s.VictimAlive = a.victim.Ping(ctx) == nil
	return s
}

func (a attackEnv) dump(t testing.TB) string {
	t.Helper()
	out, err := a.d.c.PgDump(context.Background(), a.d.name, "--data-only")
	if err != nil {
		t.Fatal(err)
	}
	// pg_dump brackets its output with \restrict and \unrestrict and a
	// random key: leave those lines out.
	h := sha256.New()
	for _, line := range strings.SplitAfter(string(out), "\n") {
		if !strings.HasPrefix(line, "\\restrict ") && !strings.HasPrefix(line, "\\unrestrict ") {
			h.Write([]byte(line))
		}
	}
	return hex.EncodeToString(h.Sum(nil))
}

// attackCorpus is the hostile corpus of the SQLite runner translated to
// PostgreSQL, and more: writes, DDL, COPY, DO, CALL, several statements,
// dblink, large objects, server files, settings, sequences, row and table
// locks, notifications, advisory locks, data-modifying CTEs, signals to
// other sessions, replication slots, prepared transactions, SQL run from
// text, and the spellings that try to slip a refused name past the gate.
// %[1]s is the attack directory, %[2]d the victim's pid, %[3]s a dblink
// connection string with the superuser's password.
var attackCorpus = []string{
	"INSERT INTO clin.patients VALUES (9, 'F')",
	"UPDATE clin.patients SET gender = 'X'",
	"DELETE FROM clin.admissions",
	"MERGE INTO clin.patients p USING (SELECT 1 AS id) s ON p.subject_id = s.id WHEN MATCHED THEN DELETE",
	"TRUNCATE clin.admissions",
	"DROP TABLE clin.admissions",
	"CREATE TABLE clin.x (i int)",
	"ALTER TABLE clin.patients ADD COLUMN x int",
	"CREATE TEMP TABLE tt AS SELECT 1",
	"SELECT * INTO clin.copy FROM clin.patients",
	"GRANT ALL ON clin.patients TO PUBLIC",
	"CREATE ROLE evil SUPERUSER LOGIN",
	"ALTER SYSTEM SET work_mem = '1MB'",
	"COMMENT ON TABLE clin.patients IS 'changed'",
	"COPY clin.patients TO '%[1]s/copy.csv'",
	"COPY (SELECT 1) TO PROGRAM 'touch %[1]s/program'",
	"COPY clin.patients FROM PROGRAM 'echo 9,F'",
	"DO $$BEGIN DELETE FROM clin.admissions; END$$",
	"DO $$BEGIN PERFORM pg_advisory_lock(7); END$$",
	"CALL clin.nothing()",
	"SELECT 1; DELETE FROM clin.admissions",
	"SELECT 1; SELECT 2",
	"SELECT dblink_exec('%[3]s', 'DELETE FROM clin.admissions')",
	"SELECT * FROM dblink('%[3]s', 'DELETE FROM clin.admissions RETURNING 1') AS t(i int)",
	"SELECT dblink_connect('keep', '%[3]s')",
	"SELECT lo_export(lo_from_bytea(0, 'x'), '%[1]s/lo')",
	"SELECT lo_import('/etc/hostname')",
	"SELECT lo_create(0)",
	"SELECT pg_read_file('/etc/hostname')",
	"SELECT pg_read_binary_file('/etc/hostname')",
	"SELECT pg_ls_dir('.')",
	"SELECT pg_stat_file('postgresql.conf')",
	"SELECT set_config('work_mem', '1MB', false)",
	"SELECT set_config('transaction_read_only', 'off', false)",
	"SELECT nextval('clin.ids')",
	"SELECT setval('clin.ids', 1000)",
	"SELECT * FROM clin.patients FOR UPDATE",
	"SELECT * FROM clin.patients FOR NO KEY UPDATE",
	"SELECT * FROM clin.patients FOR SHARE",
	"SELECT * FROM clin.patients FOR KEY SHARE",
	"LOCK TABLE clin.patients",
	"LOCK TABLE clin.patients IN ACCESS SHARE MODE",
	"NOTIFY chan",
	"SELECT pg_notify('chan', 'x')",
	"LISTEN chan",
	"SELECT pg_advisory_lock(42)",
	"SELECT pg_try_advisory_lock(43)",
	"SELECT pg_advisory_xact_lock(44)",
	"SELECT pg_advisory_lock_shared(45)",
	"WITH d AS (DELETE FROM clin.admissions RETURNING *) SELECT * FROM d",
	"WITH u AS (UPDATE clin.patients SET gender = 'X' RETURNING *) SELECT count(*) FROM u",
	"WITH i AS (INSERT INTO clin.patients VALUES (8, 'M') RETURNING 1) SELECT * FROM i",
	"SELECT pg_terminate_backend(%[2]d)",
	"SELECT pg_cancel_backend(%[2]d)",
	`SELECT "pg_terminate_backend"(%[2]d)`,
	"SELECT pg_catalog.PG_TERMINATE_BACKEND(%[2]d)",
	"SELECT pg_terminate_backend/**/(%[2]d)",
	`SELECT U&"pg_terminate_backend"(%[2]d)`,
	`SELECT U&"\0070g_terminate_backend"(%[2]d)`,
	"SELECT E'\\'' AS a, pg_terminate_backend(%[2]d) -- '",
	"SELECT $q$ $q$, pg_advisory_lock(46)",
	"SELECT 'a' AS x, pg_terminate_backend(%[2]d) FROM (SELECT 1) AS \"pg_terminate_backend\"",
	"SELECT query_to_xml('SELECT pg_terminate_backend(%[2]d)', true, true, '')",
	"SELECT query_to_xml('DELETE FROM clin.admissions RETURNING 1', true, true, '')",
	"SELECT ts_stat('SELECT to_tsvector(pg_terminate_backend(%[2]d)::text)')",
	"PREPARE TRANSACTION 'kept'",
	"SET search_path = public",
	"SET SESSION AUTHORIZATION DEFAULT",
	"SET TRANSACTION READ WRITE",
	"RESET ALL",
	"DISCARD ALL",
	"BEGIN",
	"COMMIT",
	"ROLLBACK",
	"EXPLAIN ANALYZE DELETE FROM clin.admissions",
	"EXPLAIN ANALYZE WITH d AS (DELETE FROM clin.admissions RETURNING *) SELECT * FROM d",
	"SELECT pg_create_physical_replication_slot('slot1')",
	"SELECT pg_reload_conf()",
	"SELECT pg_switch_wal()",
	"SELECT pg_stat_reset()",
	"SELECT pg_logical_emit_message(false, 'x', 'y')",
	"SELECT txid_current()",
	"SELECT pg_import_system_collations('pg_catalog')",
	"CHECKPOINT",
	"VACUUM clin.patients",
	"ANALYZE clin.patients",
	"CLUSTER clin.patients",
	"REINDEX TABLE clin.patients",
	"REFRESH MATERIALIZED VIEW clin.adults",
	"DECLARE c CURSOR WITH HOLD FOR SELECT 1",
	"PREPARE p AS SELECT 1",
	"EXECUTE p",
	"LOAD 'dblink'",
	"SELECT * FROM clin.patients WHERE subject_id = $1",
	"SELECT 1 /* unterminated",
	"SELECT 'unterminated",
	"SELECT 1\x00; DELETE FROM clin.admissions",
}

// TestAttackCorpusIsRefused runs every statement of the corpus as the
// superuser and checks each is refused, by the gate or by the server, and
// that nothing changed: the tables, the sequence, the files the server
// could write, locks, slots, prepared transactions, large objects, roles,
// settings, the victim session; and the pg_dump --data-only checksum.
func TestAttackCorpusIsRefused(t *testing.T) {
	a := newAttackEnv(t)
	e := a.d.open(t, datasets.RunnerOptions{})
	dsn := fmt.Sprintf("host=%s port=5432 dbname=%s user=postgres password=%s", a.d.c.SocketDir, a.d.name, a.d.c.SuperPassword)
	before := a.state(t)
	dumpBefore := a.dump(t)
	if len(attackCorpus) < 40 {
		t.Fatalf("corpus of %d statements, want at least 40", len(attackCorpus))
	}
	byGate, byServer := 0, 0
	for _, tmpl := range attackCorpus {
		q := tmpl
		if strings.Contains(tmpl, "%[") {
			q = fmt.Sprintf(tmpl, a.dir, a.pid, dsn)
		}
		res, err := e.Query(context.Background(), q)
		if err == nil {
			t.Errorf("%q ran: %v", q, res.Rows)
		}
		var refused *datasets.RefusedError
		var qe *datasets.QueryError
		switch {
		case errors.As(err, &refused):
			byGate++
		case errors.As(err, &qe):
			byServer++
		}
		if strings.Contains(fmt.Sprint(err), a.d.c.SuperPassword) {
			t.Errorf("%q: the error shows the password: %v", q, err)
		}
		if after := a.state(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("%q changed the database:\nbefore %+v\nafter  %+v", q, before, after)
			before = after
		}
		if err := e.Check(context.Background(), q); err == nil {
			t.Errorf("Check passed %q", q)
		}
	}
	if dumpAfter := a.dump(t); dumpAfter != dumpBefore {
		t.Errorf("pg_dump --data-only checksum changed: %s -> %s", dumpBefore, dumpAfter)
	}
	t.Logf("%d statements refused: %d by the gate, %d by the server", len(attackCorpus), byGate, byServer)
	// The engine still works and its session kept its settings.
	res, err := e.Query(context.Background(), "SELECT current_setting('work_mem'), current_setting('search_path')")
	if err != nil || res.Rows[0][0] != before.WorkMem || res.Rows[0][1] != "clin" {
		t.Errorf("settings after the corpus: %v, %v", res, err)
	}
}

// TestServerRefusesWhatTheGateLetsThrough shows that the refusals which
// reach the server are the server's: statements the gate passes (they are
// queries) that write are stopped by the READ ONLY transaction.
func TestServerRefusesWhatTheGateLetsThrough(t *testing.T) {
	a := newAttackEnv(t)
	e := a.d.open(t, datasets.RunnerOptions{})
	for _, q := range []string{
		// A function that writes, defined by the site: out of the gate's
		// sight, stopped by the transaction mode.
		"SELECT clin.sneaky()",
		"SELECT * FROM clin.patients p, LATERAL (SELECT clin.sneaky()) s",
	} {
		a.d.c.Exec(t, a.d.name, `CREATE OR REPLACE FUNCTION clin.sneaky() RETURNS int LANGUAGE sql AS 'DELETE FROM clin.admissions RETURNING 1'`)
		before := a.state(t)
		_, err := e.Query(context.Background(), q)
		var refused *datasets.RefusedError
		if !errors.As(err, &refused) || !strings.Contains(err.Error(), "read-only transaction") {
			t.Errorf("%q: err = %v, want the server's read-only refusal", q, err)
		}
		if after := a.state(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("%q changed the database", q)
		}
	}
	// The extended protocol takes one statement: the server itself
	// refuses a second, whatever a gate says.
	conn := a.d.c.Super(t, a.d.name)
	if _, err := conn.PgConn().Prepare(context.Background(), "", "SELECT 1; DELETE FROM clin.admissions", nil); err == nil ||
		!strings.Contains(err.Error(), "cannot insert multiple commands into a prepared statement") {
		t.Errorf("Prepare of two statements: %v", err)
	}
}

// TestServerAllowsWhatTheGateRefuses documents why the gate exists: on
// PostgreSQL 15 a superuser's READ ONLY transaction, rolled back, still
// writes server files, runs programs, keeps advisory locks, writes
// through dblink, keeps a prepared transaction and a replication slot, and
// terminates other sessions.
func TestServerAllowsWhatTheGateRefuses(t *testing.T) {
	a := newAttackEnv(t)
	ctx := context.Background()
	dsn := fmt.Sprintf("host=%s port=5432 dbname=%s user=postgres password=%s", a.d.c.SocketDir, a.d.name, a.d.c.SuperPassword)
	conn := a.d.c.Super(t, a.d.name)
	readOnly := func(q string) {
		t.Helper()
		if _, err := conn.Exec(ctx, "BEGIN READ ONLY"); err != nil {
			t.Fatal(err)
		}
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Errorf("%q in a read-only transaction: %v", q, err)
		}
		_, _ = conn.Exec(ctx, "ROLLBACK")
	}
	readOnly(fmt.Sprintf("COPY (SELECT 1) TO PROGRAM 'touch %s/program'", a.dir))
	readOnly(fmt.Sprintf("COPY clin.patients TO '%s/copy.csv'", a.dir))
	readOnly("SELECT pg_advisory_lock(42)")
	readOnly(fmt.Sprintf("SELECT dblink_exec('%s', 'DELETE FROM clin.admissions')", dsn))
	readOnly("SELECT pg_create_physical_replication_slot('slot1')")
	readOnly(fmt.Sprintf("SELECT pg_terminate_backend(%d)", a.pid))
	s := a.state(t)
	sort.Strings(s.Files)
	if strings.Join(s.Files, ",") != "copy.csv,program" {
		t.Errorf("files = %v, want copy.csv and program", s.Files)
	}
	if s.Advisory != 1 || s.Slots != 1 || s.VictimAlive {
		t.Errorf("advisory %d slots %d victim alive %v; want 1, 1, false", s.Advisory, s.Slots, s.VictimAlive)
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM clin.admissions").Scan(&n); err != nil || n != 0 {
		t.Errorf("admissions after dblink_exec = %d, %v; want 0", n, err)
	}
	_, _ = conn.Exec(ctx, "SELECT pg_drop_replication_slot('slot1')")
	for _, f := range []string{"program", "copy.csv"} {
		os.Remove(filepath.Join(a.dir, f))
	}
}

// TestServerRefusesWritesWithoutTheGate runs the writing statements of the
// corpus past the gate, straight into the engine's read-only transaction:
// the server refuses each, and nothing changes. The gate is not the only
// wall against writes.
func TestServerRefusesWritesWithoutTheGate(t *testing.T) {
	a := newAttackEnv(t)
	e := a.d.open(t, datasets.RunnerOptions{})
	before := a.state(t)
	dumpBefore := a.dump(t)
	for _, q := range []string{
		"INSERT INTO clin.patients VALUES (9, 'F')",
		"UPDATE clin.patients SET gender = 'X'",
		"DELETE FROM clin.admissions",
		"MERGE INTO clin.patients p USING (SELECT 1 AS id) s ON p.subject_id = s.id WHEN MATCHED THEN DELETE",
		"TRUNCATE clin.admissions",
		"DROP TABLE clin.admissions",
		"CREATE TABLE clin.x (i int)",
		"CREATE TEMP TABLE tt AS SELECT 1",
		"ALTER TABLE clin.patients ADD COLUMN x int",
		"SELECT * INTO clin.copy FROM clin.patients",
		"GRANT ALL ON clin.patients TO PUBLIC",
		"COMMENT ON TABLE clin.patients IS 'changed'",
		"CREATE ROLE evil SUPERUSER LOGIN",
		"SELECT nextval('clin.ids')",
		"SELECT setval('clin.ids', 1000)",
		"SELECT * FROM clin.patients FOR UPDATE",
		"SELECT * FROM clin.patients FOR SHARE",
		"WITH d AS (DELETE FROM clin.admissions RETURNING *) SELECT * FROM d",
		"EXPLAIN ANALYZE DELETE FROM clin.admissions",
		"SELECT set_config('transaction_read_only', 'off', false)",
		"DO $$BEGIN DELETE FROM clin.admissions; END$$",
		"SELECT query_to_xml('DELETE FROM clin.admissions RETURNING 1', true, true, '')",
		"SELECT lo_create(0)",
		"SELECT 1; DELETE FROM clin.admissions",
	} {
		isQuery := strings.HasPrefix(q, "SELECT") || strings.HasPrefix(q, "WITH")
		_, err := e.run(context.Background(), checkedStatement{text: q, query: isQuery})
		if err == nil && q != "SELECT lo_create(0)" {
			t.Errorf("the server ran %q", q)
		}
		if after := a.state(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("%q changed the database:\nbefore %+v\nafter  %+v", q, before, after)
			before = after
		}
	}
	if dumpAfter := a.dump(t); dumpAfter != dumpBefore {
		t.Errorf("pg_dump --data-only checksum changed")
	}
}

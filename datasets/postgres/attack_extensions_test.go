package postgres

import (
	"context"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinsight/clinsight/datasets"
)

// extensionSQL installs, in the data's own schema (so their names resolve
// unqualified), contrib extensions of PostgreSQL 15 whose functions act
// beyond a read inside a READ ONLY transaction: tablefunc (crosstab,
// connectby) and xml2 (xpath_table) run SQL given as text, and xml2's
// through SPI_exec, several statements and COPY included; pg_surgery
// changes rows in place; pg_prewarm writes a file into the data directory
// and starts background workers. The BRIN index is for the index
// functions that rewrite index pages.
const extensionSQL = `CREATE EXTENSION tablefunc SCHEMA clin;
CREATE EXTENSION xml2 SCHEMA clin;
CREATE EXTENSION pg_surgery SCHEMA clin;
CREATE EXTENSION pg_prewarm SCHEMA clin;
CREATE EXTENSION amcheck SCHEMA clin;
CREATE INDEX admissions_brin ON clin.admissions USING brin (admittime);`

// extensionCorpus are statements the gate must refuse: each, measured
// before the gate knew its names, ran on the server with the effect
// noted. %[1]s is the attack directory, %[2]d the victim's pid.
var extensionCorpus = []string{
	// Terminated the victim session.
	"SELECT * FROM crosstab('SELECT pg_terminate_backend(%[2]d)::text, ''a''::text, ''b''::text') AS t(r text, c text)",
	// Kept an advisory lock on the pooled connection after the query.
	"SELECT * FROM crosstab('SELECT pg_advisory_lock(77)::text, ''a''::text, ''b''::text') AS t(r text, c text)",
	// Returned the contents of a server file.
	"SELECT * FROM crosstab('SELECT pg_read_file(''/etc/hostname''), ''a''::text, ''b''::text') AS t(r text, c text)",
	"SELECT * FROM clin.crosstab3('SELECT pg_advisory_lock(78)::text, ''a''::text, ''b''::text')",
	"SELECT * FROM connectby('(SELECT subject_id FROM clin.patients WHERE pg_advisory_lock(79) IS NOT NULL) AS p', 'subject_id', 'subject_id', '1', 0) AS t(k int, p int, l int)",
	// Ran COPY ... TO PROGRAM: the file appeared (the call then failed).
	"SELECT * FROM xpath_table('subject_id', '''<a>1</a>''', 'clin.patients', '/a', 'true; COPY (SELECT 1) TO PROGRAM ''touch %[1]s/xpath''') AS t(id int, v text)",
	"SELECT * FROM xpath_table('subject_id', '''<a>1</a>''', 'clin.patients', '/a', 'pg_advisory_lock(80) IS NOT NULL') AS t(id int, v text)",
	// Deleted patient 1 in a read-only transaction.
	"SELECT heap_force_kill('clin.patients'::regclass, ARRAY['(0,1)']::tid[])",
	"SELECT heap_force_freeze('clin.patients'::regclass, ARRAY['(0,2)']::tid[])",
	// Rewrote the BRIN index's summary.
	"SELECT brin_desummarize_range('clin.admissions_brin', 0)",
	"SELECT brin_summarize_range('clin.admissions_brin', 0)",
	"SELECT brin_summarize_new_values('clin.admissions_brin')",
	"SELECT gin_clean_pending_list('clin.admissions_brin')",
	// Wrote autoprewarm.blocks into the data directory.
	"SELECT autoprewarm_dump_now()",
	"SELECT autoprewarm_start_worker()",
	// Took a ShareLock on the table (writers wait) for the whole check.
	"SELECT bt_index_parent_check('clin.patients_pkey')",
	// Fixed the session's random numbers for every later query on the
	// pooled connection (setseed is not undone by ROLLBACK).
	"SELECT setseed(0.25)",
	// Read the server's configuration files, as pg_read_file would.
	"SELECT * FROM pg_hba_file_rules",
	"SELECT * FROM pg_ident_file_mappings",
	"SELECT * FROM pg_show_all_file_settings()",
	"SELECT * FROM pg_logdir_ls() AS t(a timestamp, b text)",
}

// extState is what the extension corpus could change beyond attackEnv's
// state: the prewarm file in the data directory and the BRIN summary.
func (a attackEnv) extState(t testing.TB) string {
	t.Helper()
	var prewarm bool
	var unsummarized int64
	if err := a.admin.QueryRow(context.Background(), `SELECT (pg_stat_file('autoprewarm.blocks', true)).size IS NOT NULL`).Scan(&prewarm); err != nil {
		t.Fatal(err)
	}
	// brin_summarize_new_values counts (and summarizes) the ranges left
	// unsummarized: 0 unless a statement desummarized one.
	if err := a.admin.QueryRow(context.Background(), `SELECT brin_summarize_new_values('clin.admissions_brin')`).Scan(&unsummarized); err != nil {
		t.Fatal(err)
	}
	return fmt.Sprintf("prewarm file %v, unsummarized BRIN ranges %d", prewarm, unsummarized)
}

// TestExtensionFunctionsAreRefused runs, as the superuser, statements
// calling functions of contrib extensions that run SQL given as text,
// change rows or indexes in place, write server files, lock tables or
// change the session: each must be refused before it reaches the server,
// and nothing may change (tables, files, locks, the victim session, the
// BRIN summary, the prewarm file, the session's random numbers).
func TestExtensionFunctionsAreRefused(t *testing.T) {
	a := newAttackEnv(t)
	a.d.c.Exec(t, a.d.name, extensionSQL)
	e := a.d.open(t, datasets.RunnerOptions{})
	ctx := context.Background()
	before, extBefore := a.state(t), a.extState(t)
	for _, tmpl := range extensionCorpus {
		q := tmpl
		if strings.Contains(tmpl, "%[") {
			q = fmt.Sprintf(tmpl, a.dir, a.pid)
		}
		_, err := e.Query(ctx, q)
		var refused *datasets.RefusedError
		if !errors.As(err, &refused) {
			t.Errorf("%q: err = %v, want a refusal by the gate", q, err)
		}
		if err := e.Check(ctx, q); !errors.As(err, &refused) {
			t.Errorf("Check(%q) = %v, want a refusal", q, err)
		}
		if after := a.state(t); fmt.Sprint(after) != fmt.Sprint(before) {
			t.Errorf("%q changed the database:\nbefore %+v\nafter  %+v", q, before, after)
			before = after
		}
		if after := a.extState(t); after != extBefore {
			t.Errorf("%q changed the server: %s, was %s", q, after, extBefore)
			extBefore = after
		}
	}
	// The session's random numbers are not those setseed(0.25) fixes.
	var seeded float64
	if err := a.admin.QueryRow(ctx, "SELECT setseed(0.25), random()").Scan(new(string), &seeded); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		res, err := e.Query(ctx, "SELECT random()")
		if err != nil {
			t.Fatal(err)
		}
		if res.Rows[0][0] == seeded {
			t.Errorf("random() on the engine = %v, the value setseed(0.25) fixes: the seed outlived its query", seeded)
		}
	}
}

// TestReaderRoleCannotRunSQLTextThroughExtensions shows that the read-only
// role of ReaderGrants is no wall against crosstab: EXECUTE on it is
// granted to PUBLIC, and the SQL it runs may take an advisory lock that
// outlives the query or terminate the sessions of the same role (other
// Clinsight users sharing it). The gate must refuse it.
func TestReaderRoleCannotRunSQLTextThroughExtensions(t *testing.T) {
	d := newTestDB(t)
	d.c.Exec(t, d.name, extensionSQL)
	ctx := context.Background()
	const role = "clinsight_reader_ext"
	d.c.Reader(t, d.name, role, ReaderGrants(role, d.name, []string{"clin"}), "CLINSIGHT_TEST_PG_READER_EXT")
	src := Source{DSN: d.c.URL(role, d.name), Schemas: []string{"clin"}, PasswordEnv: "CLINSIGHT_TEST_PG_READER_EXT"}
	e, err := Open(ctx, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	cfg, err := pgx.ParseConfig(d.c.DSN(role, d.name))
	if err != nil {
		t.Fatal(err)
	}
	cfg.Password = os.Getenv(src.PasswordEnv)
	victim, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer victim.Close(ctx)
	admin := d.c.Super(t, d.name)
	for _, q := range []string{
		"SELECT * FROM crosstab('SELECT pg_advisory_lock(81)::text, ''a''::text, ''b''::text') AS t(r text, c text)",
		"SELECT * FROM crosstab('SELECT pg_terminate_backend(pid)::text, ''a''::text, ''b''::text FROM pg_stat_activity WHERE usename = current_user AND pid <> pg_backend_pid()') AS t(r text, c text)",
	} {
		_, err := e.Query(ctx, q)
		var refused *datasets.RefusedError
		if !errors.As(err, &refused) {
			t.Errorf("%q as %s: err = %v, want a refusal by the gate", q, role, err)
		}
	}
	var locks int
	if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").Scan(&locks); err != nil {
		t.Fatal(err)
	}
	if locks != 0 {
		t.Errorf("%d advisory locks held after the queries, want 0", locks)
	}
	if err := victim.Ping(ctx); err != nil {
		t.Errorf("the other session of %s was terminated: %v", role, err)
	}
}

// TestSessionAdvisoryLocksEndWithTheQuery: a function defined on the
// server is out of the gate's sight, and taking a session advisory lock
// needs no privilege, so even the read-only role of ReaderGrants can take
// one through it. Such a lock must not outlive the query on the pooled
// connection (where it would block other users until the connection is
// closed), whether the statement succeeded or failed after taking it.
func TestSessionAdvisoryLocksEndWithTheQuery(t *testing.T) {
	d := newTestDB(t)
	d.c.Exec(t, d.name, `CREATE FUNCTION clin.take_lock(k bigint) RETURNS int LANGUAGE sql AS 'SELECT 1 FROM (SELECT pg_advisory_lock(k)) AS l'`)
	ctx := context.Background()
	const role = "clinsight_reader_lock"
	d.c.Reader(t, d.name, role, ReaderGrants(role, d.name, []string{"clin"}), "CLINSIGHT_TEST_PG_READER_LOCK")
	e, err := Open(ctx, Source{DSN: d.c.URL(role, d.name), Schemas: []string{"clin"}, PasswordEnv: "CLINSIGHT_TEST_PG_READER_LOCK"}, Options{MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	admin := d.c.Super(t, d.name)
	held := func() int {
		t.Helper()
		var n int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if res, err := e.Query(ctx, "SELECT take_lock(11)"); err != nil || res.Rows[0][0] != int64(1) {
		t.Fatalf("SELECT take_lock(11): %v, %v", res, err)
	}
	if n := held(); n != 0 {
		t.Errorf("%d advisory locks held after the query, want 0", n)
	}
	if _, err := e.Query(ctx, "SELECT take_lock(12) / 0"); err == nil {
		t.Fatal("division by zero ran")
	}
	if n := held(); n != 0 {
		t.Errorf("%d advisory locks held after the failed query, want 0", n)
	}
	s, err := e.Stream(ctx, "SELECT take_lock(13) FROM patients")
	if err != nil {
		t.Fatal(err)
	}
	for s.Next() {
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if n := held(); n != 0 {
		t.Errorf("%d advisory locks held after the export, want 0", n)
	}
	// The engine's one connection was kept, and works.
	if res, err := e.Query(ctx, "SELECT count(*) FROM patients"); err != nil || res.Rows[0][0] != int64(3) {
		t.Errorf("after: %v, %v", res, err)
	}
}

// TestOtherSessionsQueriesAreRefused: every Clinsight user of a site
// shares the read-only role of ReaderGrants, and PostgreSQL shows a role
// the text of its own sessions' queries in pg_stat_activity. A query
// there would show one clinician what another is asking, literals (a
// patient's identifier) included: beyond the data either chose. The gate
// refuses the views and functions that show other sessions' queries.
func TestOtherSessionsQueriesAreRefused(t *testing.T) {
	d := newTestDB(t)
	ctx := context.Background()
	const role = "clinsight_reader_act"
	d.c.Reader(t, d.name, role, ReaderGrants(role, d.name, []string{"clin"}), "CLINSIGHT_TEST_PG_READER_ACT")
	src := Source{DSN: d.c.URL(role, d.name), Schemas: []string{"clin"}, PasswordEnv: "CLINSIGHT_TEST_PG_READER_ACT"}
	alice, err := Open(ctx, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer alice.Close()
	bob, err := Open(ctx, src, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer bob.Close()
	// Alice's query runs until Bob has looked (or 20 s).
	done := make(chan error, 1)
	go func() {
		_, err := alice.Query(ctx, "SELECT count(*) FROM patients WHERE note <> 'MRN-4711' AND pg_sleep(20) IS NOT NULL")
		done <- err
	}()
	admin := d.c.Super(t, d.name)
	for deadline := time.Now().Add(20 * time.Second); ; {
		var n int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE query LIKE '%MRN-4711%' AND pid <> pg_backend_pid()").Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("Alice's query never showed in pg_stat_activity")
		}
		runtime.Gosched()
	}
	for _, q := range []string{
		"SELECT query FROM pg_stat_activity WHERE query LIKE '%MRN%'",
		"SELECT query FROM pg_catalog.pg_stat_get_activity(NULL) WHERE query LIKE '%MRN%'",
		"SELECT query FROM pg_stat_statements",
	} {
		res, err := bob.Query(ctx, q)
		var refused *datasets.RefusedError
		if !errors.As(err, &refused) {
			t.Errorf("%q: rows %v, err %v; want a refusal", q, res, err)
		}
	}
	var pid int
	_ = admin.QueryRow(ctx, "SELECT pid FROM pg_stat_activity WHERE query LIKE '%MRN-4711%' AND pid <> pg_backend_pid()").Scan(&pid)
	if pid != 0 {
		_, _ = admin.Exec(ctx, "SELECT pg_cancel_backend($1)", pid)
	}
	<-done
}

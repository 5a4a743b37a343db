package ui

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/test"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/datasets/postgres"
	"github.com/clinsight/clinsight/internal/pgtest"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// TestMain stops the PostgreSQL test cluster a test of this package started.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// uiPostgresRole is the read-only role the Postgres UI tests connect as.
const uiPostgresRole = "ui_pg_reader"

// postgresDemoWorkspace returns a workspace whose one data source, "pgdemo",
// is a small demo (30 patients) loaded into a database of the test cluster
// (schema demo) and read through a read-only role, with the cluster.
func postgresDemoWorkspace(t *testing.T) (*app.Workspace, *pgtest.Cluster, string) {
	t.Helper()
	c := pgtest.Shared(t)
	file := filepath.Join(t.TempDir(), "demo.sqlite")
	opts := demo.DefaultOptions()
	opts.Patients = 30
	if _, err := demo.Generate(context.Background(), file, opts); err != nil {
		t.Fatal(err)
	}
	db := c.CreateDatabase(t, "uipg")
	c.LoadSQLite(t, db, "demo", file)
	c.Exec(t, db, postgres.ReaderGrants(uiPostgresRole, db, []string{"demo"}))
	c.Exec(t, db, "ALTER ROLE "+uiPostgresRole+" PASSWORD 'ui-secret'")
	t.Cleanup(func() {
		c.Exec(t, db, "DROP OWNED BY "+uiPostgresRole)
		c.Exec(t, "postgres", "DROP ROLE "+uiPostgresRole)
	})
	t.Setenv("UI_PG_PW", "ui-secret")
	ws := newEmptyWorkspace(t)
	if _, err := ws.AddPostgres("pgdemo", postgres.Source{DSN: c.URL(uiPostgresRole, db), Schemas: []string{"demo"}, PasswordEnv: "UI_PG_PW"}); err != nil {
		t.Fatal(err)
	}
	return ws, c, db
}

// pgSource returns the workspace's source called name.
func pgSource(t *testing.T, ws *app.Workspace, name string) app.Source {
	t.Helper()
	for _, src := range ws.Data().Sources() {
		if src.Name == name {
			return src
		}
	}
	t.Fatalf("no data source %q", name)
	return app.Source{}
}

// TestDataScreenOnPostgres lists a PostgreSQL source on the Data screen,
// browses a table, runs a statement, and cancels a runaway statement with
// the screen's Cancel: the screen says so, and the server no longer runs it.
func TestDataScreenOnPostgres(t *testing.T) {
	ws, c, db := postgresDemoWorkspace(t)
	ctx := context.Background()
	src := pgSource(t, ws, "pgdemo")
	s := newTestMainWindow(t, ws).Data

	waitUntil(t, "a table of the PostgreSQL source", func() bool { return strings.HasSuffix(s.browseStatus.Text, " rows") })
	patients := -1
	onUI(t, func(t testing.TB) {
		if len(s.sources) != 1 || s.sources[0].Name != "pgdemo" || s.sources[0].Kind != app.SourcePostgres {
			t.Fatalf("sources %+v", s.sources)
		}
		if !strings.Contains(s.sourceInfo.Text, "PostgreSQL") || strings.Contains(s.sourceInfo.Text, "ui-secret") {
			t.Errorf("source info %q", s.sourceInfo.Text)
		}
		for i, tb := range s.tables {
			if tb.Name == "patients" || strings.HasSuffix(tb.Name, ".patients") {
				patients = i
			}
		}
		if patients < 0 {
			t.Fatalf("no patients table in %q", tableNames(s))
		}
		s.tableList.Select(patients)
	})
	waitUntil(t, "the patients table", func() bool { return strings.Contains(s.browseStatus.Text, "patients: 30 rows") })
	onUI(t, func(t testing.TB) {
		if s.browse.res == nil || len(s.browse.res.Rows) != 30 {
			t.Errorf("browse: status %q", s.browseStatus.Text)
		}
	})

	const count = "SELECT gender, count(*) AS n FROM demo.patients GROUP BY gender ORDER BY gender"
	want, err := ws.Data().Query(ctx, src, count, datasets.RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	onUI(t, func(t testing.TB) {
		s.editor.SetText(count)
		test.Tap(s.runBtn)
	})
	waitUntil(t, "the statement's result", func() bool { return strings.Contains(s.resultStatus.Text, " rows · ") })
	onUI(t, func(t testing.TB) {
		if s.result.res == nil || !reflect.DeepEqual(s.result.res.Rows, want.Rows) {
			t.Errorf("result %q: rows %v, want %v", s.resultStatus.Text, pgRows(s.result.res), want.Rows)
		}
	})

	const runaway = "SELECT count(*) FROM generate_series(1, 1e12)"
	onUI(t, func(t testing.TB) {
		s.editor.SetText(runaway)
		test.Tap(s.runBtn)
	})
	super := c.Super(t, db)
	// running counts the server's backends of the reader role running the
	// runaway statement (the superuser's own query is left out).
	running := func() int {
		var n int
		if err := super.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE usename = $1 AND state = 'active' AND query LIKE '%generate_series(1, 1e12)%' AND pid <> pg_backend_pid()`,
			uiPostgresRole).Scan(&n); err != nil {
			t.Fatalf("pg_stat_activity: %v", err)
		}
		return n
	}
	pollUntil(t, time.Now().Add(waitTimeout), "the runaway statement on the server", func() bool { return running() > 0 })
	onUI(t, func(t testing.TB) {
		if s.cancelBtn.Disabled() {
			t.Fatal("Cancel is disabled while the statement runs")
		}
		test.Tap(s.cancelBtn)
	})
	deadline := time.Now().Add(30 * time.Second)
	pollUntil(t, deadline, "the screen to report the cancellation", func() bool {
		var ok bool
		fyne.DoAndWait(func() { ok = s.resultStatus.Text == "Cancelled." })
		return ok
	})
	pollUntil(t, deadline, "the server to stop the statement", func() bool { return running() == 0 })
	onUI(t, func(t testing.TB) {
		if !s.cancelBtn.Disabled() || s.runBtn.Disabled() || !s.exportBtn.Disabled() {
			t.Errorf("after Cancel: Cancel enabled %v, Run disabled %v, Export disabled %v",
				!s.cancelBtn.Disabled(), s.runBtn.Disabled(), s.exportBtn.Disabled())
		}
	})
}

// TestCohortScreenOnPostgresRepairsWithTheServersError asks a question on
// the PostgreSQL source from the Cohort screen with scripted replies
// through the real client: the first statement names a column that does
// not exist, the second request carries PostgreSQL's error, and the answer
// shown equals the reference query's.
func TestCohortScreenOnPostgresRepairsWithTheServersError(t *testing.T) {
	srv := ollamatest.New(t, ollamatest.Model{Name: "chat-model"})
	ws, _, _ := postgresDemoWorkspace(t)
	if err := ws.UpdateConfig(func(c *app.Config) {
		c.OllamaHost = srv.URL
		c.Models = app.Models{SQL: "chat-model", Chat: "chat-model"}
	}); err != nil {
		t.Fatal(err)
	}
	src := pgSource(t, ws, "pgdemo")
	const wrong = "SELECT COUNT(DISTINCT subject_id) AS n FROM demo.patients WHERE anchor_ages > 65"
	const right = "SELECT COUNT(DISTINCT subject_id) AS n FROM demo.patients WHERE anchor_age > 65"
	want, err := ws.Data().Query(context.Background(), src, right, datasets.RunnerOptions{})
	if err != nil {
		t.Fatal(err)
	}
	srv.QueueChat(
		cohortReply(wrong),
		ollamatest.ChatReply{Content: "```sql\n" + right + "\n```"},
		ollamatest.ChatReply{Content: "Some patients are older than 65."},
	)
	s := newTestMainWindow(t, ws).Cohort
	waitUntil(t, "the PostgreSQL source on the Cohort screen", func() bool { return strings.HasPrefix(s.status.Text, "pgdemo: ") })
	onUI(t, func(t testing.TB) {
		s.question.SetText("How many patients are older than 65?")
		test.Tap(s.askBtn)
	})
	waitUntil(t, "the answer", func() bool {
		return strings.Contains(s.status.Text, " attempt(s) · ") || strings.HasPrefix(s.status.Text, "Stopped") || strings.HasPrefix(s.status.Text, "Error")
	})
	onUI(t, func(t testing.TB) {
		if !strings.Contains(s.status.Text, "2 attempt(s)") {
			t.Errorf("status %q", s.status.Text)
		}
		if s.sqlEntry.Text != right {
			t.Errorf("SQL box %q, want %q", s.sqlEntry.Text, right)
		}
		if s.result.res == nil || !reflect.DeepEqual(s.result.res.Rows, want.Rows) {
			t.Errorf("result shown %v, want %v", pgRows(s.result.res), want.Rows)
		}
	})
	reqs := srv.ChatRequests()
	if len(reqs) < 2 {
		t.Fatalf("%d chat requests, want the repair request", len(reqs))
	}
	repair := reqs[1].Messages[len(reqs[1].Messages)-1].Content
	for _, s := range []string{`column "anchor_ages" does not exist`, "LINE 1: " + wrong} {
		if !strings.Contains(repair, s) {
			t.Errorf("repair request lacks %q:\n%s", s, repair)
		}
	}
}

// pollUntil waits, on the test's goroutine, until cond holds, failing the
// test at deadline.
func pollUntil(t *testing.T, deadline time.Time, what string, cond func() bool) {
	t.Helper()
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("still waiting for %s at the deadline", what)
		}
		time.Sleep(20 * time.Millisecond) // the polling interval

	}
}

func pgRows(res *datasets.Result) any {
	if res == nil {
		return nil
	}
	return res.Rows
}

package app

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/postgres"
	"github.com/clinsight/clinsight/internal/pgtest"
)

// TestMain stops the throw-away PostgreSQL cluster the PostgreSQL tests
// share, if one was started.
func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// backends counts the server sessions of a role.
func backends(t *testing.T, c *pgtest.Cluster, role string) int {
	t.Helper()
	var n int
	if err := c.Super(t, "postgres").QueryRow(context.Background(),
		"SELECT count(*) FROM pg_stat_activity WHERE usename = $1", role).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// waitBackends waits until the role has want sessions on the server.
func waitBackends(t *testing.T, c *pgtest.Cluster, role string, want int) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		n := backends(t, c, role)
		if n == want {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s has %d sessions on the server, want %d", role, n, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestPostgresEngineLifetime: a PostgreSQL source's engine is opened on
// first use, kept open across queries, and closed when the source is
// removed or the workspace closes; a write is refused through the Data
// service; config validation refuses a DSN with a password.
func TestPostgresEngineLifetime(t *testing.T) {
	c := pgtest.Shared(t)
	db := c.CreateDatabase(t, "applife")
	c.Exec(t, db, "CREATE TABLE notes (id int PRIMARY KEY, body text); INSERT INTO notes VALUES (1, 'a'), (2, 'b')")
	const role = "app_life_reader"
	c.Reader(t, db, role, postgres.ReaderGrants(role, db, []string{"public"}), "APP_LIFE_PW")
	ctx := context.Background()

	ws := openTemp(t)
	if _, err := ws.AddPostgres("bad", postgres.Source{DSN: "postgres://x:pw@localhost/db"}); !errors.Is(err, postgres.ErrPasswordInDSN) {
		t.Errorf("DSN with a password: %v", err)
	}
	if _, err := ws.AddPostgres("notes", postgres.Source{DSN: c.URL(role, db), PasswordEnv: "APP_LIFE_PW"}); err != nil {
		t.Fatal(err)
	}
	src, err := ws.Resolve("notes")
	if err != nil || src.Kind != SourcePostgres || src.Path != "" {
		t.Fatalf("resolve: %+v, %v", src, err)
	}
	data := ws.Data()
	for range 3 {
		res, err := data.Query(ctx, src, "SELECT count(*) FROM notes", datasets.RunnerOptions{})
		if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != int64(2) {
			t.Fatalf("query: %v, %v", res, err)
		}
	}
	if res, err := data.Browse(ctx, src, "notes", 1); err != nil || len(res.Rows) != 1 || !res.Truncated {
		t.Errorf("browse: %v, %v", res, err)
	}
	if n := backends(t, c, role); n < 1 {
		t.Errorf("no session of %s while the source is in use", role)
	}
	if d := data.Describe(src); !strings.Contains(d, "user "+role) || !strings.Contains(d, "database "+db) || strings.Contains(d, os.Getenv("APP_LIFE_PW")) {
		t.Errorf("describe: %q", d)
	}
	var refused *datasets.RefusedError
	if _, err := data.Query(ctx, src, "DELETE FROM notes", datasets.RunnerOptions{}); !errors.As(err, &refused) {
		t.Errorf("DELETE: %v", err)
	}
	if err := data.Remove("notes"); err != nil {
		t.Fatal(err)
	}
	waitBackends(t, c, role, 0)

	if _, err := ws.AddPostgres("notes", postgres.Source{DSN: c.URL(role, db), PasswordEnv: "APP_LIFE_PW"}); err != nil {
		t.Fatal(err)
	}
	if _, err := data.Catalog(ctx, src, false); err != nil {
		t.Fatal(err)
	}
	if n := backends(t, c, role); n < 1 {
		t.Errorf("no session of %s after Catalog", role)
	}
	ws.Close()
	waitBackends(t, c, role, 0)
	if _, err := data.Query(ctx, src, "SELECT 1", datasets.RunnerOptions{}); err == nil {
		t.Error("a query ran on a closed workspace")
	}
}

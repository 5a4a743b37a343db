package app

import (
	"context"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/postgres"
	"github.com/clinsight/clinsight/internal/pgtest"
)

// TestPostgresSourceHasOnePool: a query under the workspace's limits, a
// query with its own row cap and a browse of 1 row all go through the
// source's one engine (one connection pool), each under its own row cap.
func TestPostgresSourceHasOnePool(t *testing.T) {
	c := pgtest.Shared(t)
	db := c.CreateDatabase(t, "apppool")
	c.Exec(t, db, "CREATE TABLE notes (id int PRIMARY KEY, body text); INSERT INTO notes SELECT g, 'n' || g FROM generate_series(1, 50) g")
	const role = "app_pool_reader"
	c.Reader(t, db, role, postgres.ReaderGrants(role, db, []string{"public"}), "APP_POOL_PW")
	ctx := context.Background()
	ws := openTemp(t)
	if _, err := ws.AddPostgres("notes", postgres.Source{DSN: c.URL(role, db), PasswordEnv: "APP_POOL_PW"}); err != nil {
		t.Fatal(err)
	}
	src := source(t, ws, "notes")
	data := ws.Data()
	if res, err := data.Query(ctx, src, "SELECT id FROM notes", datasets.RunnerOptions{}); err != nil || len(res.Rows) != 50 || res.Truncated {
		t.Fatalf("query: %v, %v", res, err)
	}
	if res, err := data.Query(ctx, src, "SELECT id FROM notes", datasets.RunnerOptions{MaxRows: 7}); err != nil || len(res.Rows) != 7 || !res.Truncated {
		t.Fatalf("query with 7 rows: %v, %v", res, err)
	}
	if res, err := data.Browse(ctx, src, "notes", 1); err != nil || len(res.Rows) != 1 || !res.Truncated {
		t.Fatalf("browse: %v, %v", res, err)
	}
	if res, err := data.Query(ctx, src, "SELECT id FROM notes", datasets.RunnerOptions{}); err != nil || len(res.Rows) != 50 {
		t.Fatalf("query after the browse: %v, %v", res, err)
	}
	ws.engines.mu.Lock()
	n := len(ws.engines.open)
	ws.engines.mu.Unlock()
	if n != 1 {
		t.Errorf("%d engines open for one source, want 1", n)
	}
}

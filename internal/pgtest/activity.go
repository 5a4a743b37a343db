package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// engineApp is the application_name Clinsight's PostgreSQL engine gives its
// sessions (datasets/postgres), which tells them from the tests' own.
const engineApp = "clinsight"

// OpenTransactions counts Clinsight's sessions on database db that hold a
// transaction open or run a statement, as the superuser sees them in
// pg_stat_activity.
func (c *Cluster) OpenTransactions(t testing.TB, db string) int {
	t.Helper()
	return openTransactions(t, c.Super(t, db), db)
}

func openTransactions(t testing.TB, super *pgx.Conn, db string) int {
	t.Helper()
	var n int
	err := super.QueryRow(context.Background(),
		"SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND application_name = $2 AND pid <> pg_backend_pid() AND (xact_start IS NOT NULL OR state <> 'idle')",
		db, engineApp).Scan(&n)
	if err != nil {
		t.Fatalf("pg_stat_activity of %s: %v", db, err)
	}
	return n
}

// WaitNoTransaction waits until none of Clinsight's sessions on database
// db holds a transaction open (OpenTransactions is 0), failing the test
// if some still do after 15 seconds: a stream or an export that ended,
// was closed or was cancelled must leave none.
func (c *Cluster) WaitNoTransaction(t testing.TB, db string) {
	t.Helper()
	super := c.Super(t, db)
	deadline := time.Now().Add(15 * time.Second)
	for openTransactions(t, super, db) > 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d transactions of Clinsight still open on %s", openTransactions(t, super, db), db)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

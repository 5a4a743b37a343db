package pgtest

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) { os.Exit(Main(m)) }

// TestStartStop starts a cluster of its own, checks it serves only a Unix
// socket and needs a password, and that Stop shuts it down and removes it.
func TestStartStop(t *testing.T) {
	if _, err := FindBin(); err != nil {
		Shared(t) // skips, or fails in CI
	}
	ctx := context.Background()
	c, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(c.Version, "15") {
		t.Logf("server version %s (the tests target 15)", c.Version)
	}
	if _, err := os.Stat(filepath.Join(c.SocketDir, ".s.PGSQL.5432")); err != nil {
		t.Errorf("no socket: %v", err)
	}
	conn, err := c.Connect(ctx, Superuser, c.SuperPassword, "postgres")
	if err != nil {
		t.Fatal(err)
	}
	var listen string
	if err := conn.QueryRow(ctx, "SHOW listen_addresses").Scan(&listen); err != nil || listen != "" {
		t.Errorf("listen_addresses = %q, %v; want '' (no TCP)", listen, err)
	}
	conn.Close(ctx)
	if _, err := c.Connect(ctx, Superuser, "wrong", "postgres"); err == nil {
		t.Error("a wrong password was accepted")
	}
	if !c.Running(ctx) {
		t.Fatal("pg_ctl status: not running")
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(c.Dir); !os.IsNotExist(err) {
		t.Errorf("cluster directory still there after Stop: %v", err)
	}
}

// TestSharedCreatesDatabases checks the shared cluster hands out distinct
// databases.
func TestSharedCreatesDatabases(t *testing.T) {
	c := Shared(t)
	a, b := c.CreateDatabase(t, "a"), c.CreateDatabase(t, "a")
	if a == b {
		t.Fatalf("same database twice: %s", a)
	}
	c.Exec(t, a, "CREATE TABLE x(i int); INSERT INTO x VALUES (1)")
	var n int
	if err := c.Super(t, a).QueryRow(context.Background(), "SELECT count(*) FROM x").Scan(&n); err != nil || n != 1 {
		t.Fatalf("count = %d, %v", n, err)
	}
}

// TestStartStopsOrphans checks a cluster left running by a dead test
// process is stopped and removed by the next Start.
func TestStartStopsOrphans(t *testing.T) {
	if _, err := FindBin(); err != nil {
		Shared(t)
	}
	ctx := context.Background()
	orphan, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if orphan.Running(ctx) {
			orphan.Stop()
		}
	})
	// Pretend its owner died: pid 2^22+1 is above Linux's pid_max default.
	if err := os.WriteFile(filepath.Join(orphan.Dir, ownerFile), []byte("4194305"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Stop()
	if _, err := os.Stat(orphan.Dir); !os.IsNotExist(err) {
		t.Errorf("the orphan's directory is still there: %v", err)
	}
	if _, err := orphan.Connect(ctx, Superuser, orphan.SuperPassword, "postgres"); err == nil {
		t.Error("the orphan still accepts connections")
	}
}

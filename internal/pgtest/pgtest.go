// Package pgtest starts a throw-away PostgreSQL server for tests: a cluster
// made with initdb in a temporary directory, listening on a Unix socket in
// that directory only (no TCP), stopped and deleted when the tests end.
//
// One cluster serves a whole test binary (one package's tests): tests call
// Shared(t), and the package's TestMain calls Main so the cluster is stopped
// after the last test:
//
//	func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }
//
//	func TestX(t *testing.T) {
//		c := pgtest.Shared(t)
//		db := c.CreateDatabase(t, "x")
//		...
//	}
//
// The server comes from Debian's postgresql package (PostgreSQL 15:
// /usr/lib/postgresql/15/bin, or $PGTEST_BIN). When the tests run as root,
// initdb and the server run as the postgres user (runuser), as PostgreSQL
// refuses to run as root. Every role authenticates with a password
// (scram-sha-256), so tests exercise the password paths a site uses.
//
// When the server is not installed the tests are skipped with a message
// saying how to install it, except in CI ($CI true), where that is a
// failure: a green CI run must mean the PostgreSQL tests ran.
package pgtest

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// EnvBin names the environment variable that overrides the directory of
// initdb, pg_ctl and postgres.
const EnvBin = "PGTEST_BIN"

// Superuser is the name of the cluster's superuser.
const Superuser = "postgres"

// Port is the port number of the cluster's Unix socket (its file is
// SocketDir/.s.PGSQL.5432); nothing listens on TCP.
const Port = 5432

// InstallHint says how to get the server.
const InstallHint = "install Debian's PostgreSQL server: apt-get install -y postgresql"

// Cluster is a running throw-away PostgreSQL server.
type Cluster struct {
	// Dir is the temporary directory holding the data directory, the
	// socket and the server log; it is deleted by Stop.
	Dir string
	// SocketDir is the directory of the server's Unix socket.
	SocketDir string
	// Version is the server's version string, for example "15.14 (Debian 15.14-0+deb12u1)".
	Version string
	// SuperPassword is the superuser's password.
	SuperPassword string

	bin     string
	runAs   string // "postgres" when running as root, else ""
	dataDir string
	logFile string

	mu      sync.Mutex
	dbCount int
}

// FindBin returns the directory holding initdb, pg_ctl and postgres:
// $PGTEST_BIN, else the newest /usr/lib/postgresql/*/bin.
func FindBin() (string, error) {
	if d := os.Getenv(EnvBin); d != "" {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err != nil {
			return "", fmt.Errorf("$%s=%s has no initdb: %w", EnvBin, d, err)
		}
		return d, nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", fmt.Errorf("no PostgreSQL server found in /usr/lib/postgresql/*/bin: %s", InstallHint)
}

// versionOf reads the major version from /usr/lib/postgresql/N/bin.
func versionOf(dir string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(dir)))
	return n
}

// Start creates and starts a cluster in a new temporary directory. Stop it
// with Stop.
func Start(ctx context.Context) (*Cluster, error) {
	bin, err := FindBin()
	if err != nil {
		return nil, err
	}
	c := &Cluster{bin: bin}
	if os.Geteuid() == 0 {
		c.runAs = Superuser
	}
	stopOrphans(ctx, bin, c.runAs)
	if c.Dir, err = os.MkdirTemp("", "pgtest-"); err != nil {
		return nil, fmt.Errorf("create the cluster directory: %w", err)
	}
	// The test process owns the cluster: a later Start stops the cluster
	// if this process died without stopping it (a test binary killed on
	// timeout).
	if err := os.WriteFile(filepath.Join(c.Dir, ownerFile), []byte(strconv.Itoa(os.Getpid())), 0o644); err != nil {
		return nil, err
	}
	ok := false
	defer func() {
		if !ok {
			os.RemoveAll(c.Dir)
		}
	}()
	c.SocketDir = filepath.Join(c.Dir, "sock")
	c.dataDir = filepath.Join(c.Dir, "data")
	c.logFile = filepath.Join(c.Dir, "server.log")
	if err := os.Mkdir(c.SocketDir, 0o700); err != nil {
		return nil, err
	}
	c.SuperPassword = randomHex(12)
	pwFile := filepath.Join(c.Dir, "pw")
	if err := os.WriteFile(pwFile, []byte(c.SuperPassword+"\n"), 0o600); err != nil {
		return nil, err
	}
	if c.runAs != "" {
		if err := chownTree(c.Dir, c.runAs); err != nil {
			return nil, err
		}
	}
	if out, err := c.run(ctx, "initdb", "-D", c.dataDir, "-U", Superuser, "--pwfile", pwFile,
		"--auth", "scram-sha-256", "-E", "UTF8", "--locale", "C.UTF-8", "--no-sync"); err != nil {
		return nil, fmt.Errorf("initdb: %w\n%s", err, out)
	}
	os.Remove(pwFile)
	conf := strings.Join([]string{
		"listen_addresses = ''",
		"unix_socket_directories = '" + c.SocketDir + "'",
		"port = " + strconv.Itoa(Port),
		"fsync = off",
		"synchronous_commit = off",
		"full_page_writes = off",
		"max_connections = 60",
		"shared_buffers = 32MB",
		"max_prepared_transactions = 2",
		"log_min_messages = warning",
		"",
	}, "\n")
	f, err := os.OpenFile(filepath.Join(c.dataDir, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("configure the cluster: %w", err)
	}
	if _, err := f.WriteString(conf); err != nil {
		f.Close()
		return nil, fmt.Errorf("configure the cluster: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("configure the cluster: %w", err)
	}
	if out, err := c.run(ctx, "pg_ctl", "-D", c.dataDir, "-l", c.logFile, "-w", "-t", "60", "start"); err != nil {
		log, _ := os.ReadFile(c.logFile)
		return nil, fmt.Errorf("pg_ctl start: %w\n%s\n%s", err, out, log)
	}
	ok = true
	conn, err := c.Connect(ctx, Superuser, c.SuperPassword, "postgres")
	if err != nil {
		c.Stop()
		return nil, err
	}
	defer conn.Close(ctx)
	if err := conn.QueryRow(ctx, "SHOW server_version").Scan(&c.Version); err != nil {
		c.Stop()
		return nil, fmt.Errorf("read the server version: %w", err)
	}
	return c, nil
}

// ownerFile holds the pid of the process that started a cluster.
const ownerFile = "owner.pid"

// stopOrphans stops and deletes the clusters of earlier test processes
// that died without stopping them.
func stopOrphans(ctx context.Context, bin, runAs string) {
	dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), "pgtest-*"))
	for _, dir := range dirs {
		b, err := os.ReadFile(filepath.Join(dir, ownerFile))
		if err != nil {
			continue
		}
		pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
		if err != nil || pid <= 0 || processAlive(pid) {
			continue
		}
		orphan := &Cluster{Dir: dir, bin: bin, runAs: runAs, dataDir: filepath.Join(dir, "data")}
		if _, err := os.Stat(filepath.Join(orphan.dataDir, "postmaster.pid")); err == nil {
			_, _ = orphan.run(ctx, "pg_ctl", "-D", orphan.dataDir, "-m", "immediate", "-w", "stop")
		}
		os.RemoveAll(dir)
	}
}

// processAlive reports whether a process with this pid exists.
func processAlive(pid int) bool {
	_, err := os.Stat(filepath.Join("/proc", strconv.Itoa(pid)))
	return err == nil
}

// Stop stops the server (pg_ctl stop -m fast) and deletes its directory.
func (c *Cluster) Stop() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := c.run(ctx, "pg_ctl", "-D", c.dataDir, "-m", "fast", "-w", "stop")
	if err != nil {
		err = fmt.Errorf("pg_ctl stop: %w\n%s", err, out)
	}
	return errors.Join(err, os.RemoveAll(c.Dir))
}

// Running reports whether the server answers (pg_ctl status).
func (c *Cluster) Running(ctx context.Context) bool {
	_, err := c.run(ctx, "pg_ctl", "-D", c.dataDir, "status")
	return err == nil
}

// ServerLog returns the server's log so far.
func (c *Cluster) ServerLog() string {
	b, _ := os.ReadFile(c.logFile)
	return string(b)
}

// DSN returns a key/value connection string for a user and database over
// the cluster's socket, without a password.
func (c *Cluster) DSN(user, db string) string {
	return fmt.Sprintf("host=%s port=%d user=%s dbname=%s sslmode=disable", c.SocketDir, Port, user, db)
}

// URL returns a postgres:// connection URL for a user and database over the
// cluster's socket, without a password.
func (c *Cluster) URL(user, db string) string {
	return fmt.Sprintf("postgres://%s@/%s?host=%s&port=%d&sslmode=disable", user, db, c.SocketDir, Port)
}

// Connect opens a connection as user with password to database db.
func (c *Cluster) Connect(ctx context.Context, user, password, db string) (*pgx.Conn, error) {
	cfg, err := pgx.ParseConfig(c.DSN(user, db))
	if err != nil {
		return nil, err
	}
	cfg.Password = password
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect as %s to %s: %w", user, db, err)
	}
	return conn, nil
}

// Super opens a superuser connection to database db, closed at the end of
// the test.
func (c *Cluster) Super(t testing.TB, db string) *pgx.Conn {
	t.Helper()
	conn, err := c.Connect(context.Background(), Superuser, c.SuperPassword, db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// Exec runs SQL (one or more statements, simple protocol) as the
// superuser in database db, failing the test on error.
func (c *Cluster) Exec(t testing.TB, db, sql string) {
	t.Helper()
	conn := c.Super(t, db)
	if _, err := conn.Exec(context.Background(), sql, pgx.QueryExecModeSimpleProtocol); err != nil {
		t.Fatalf("exec in %s: %v\n%s", db, err, sql)
	}
}

// CreateDatabase creates a new, empty database whose name starts with
// prefix, and drops it at the end of the test.
func (c *Cluster) CreateDatabase(t testing.TB, prefix string) string {
	t.Helper()
	c.mu.Lock()
	c.dbCount++
	name := fmt.Sprintf("%s_%d", strings.ToLower(prefix), c.dbCount)
	c.mu.Unlock()
	c.Exec(t, "postgres", "CREATE DATABASE "+pgx.Identifier{name}.Sanitize())
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := c.Connect(ctx, Superuser, c.SuperPassword, "postgres")
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		_, _ = conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
	})
	return name
}

// CreateRole creates a login role with a random password (returned) that
// is dropped at the end of the test. attrs are extra role attributes, for
// example "SUPERUSER".
func (c *Cluster) CreateRole(t testing.TB, name string, attrs ...string) string {
	t.Helper()
	pw := randomHex(12)
	c.Exec(t, "postgres", fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD '%s' %s",
		pgx.Identifier{name}.Sanitize(), pw, strings.Join(attrs, " ")))
	t.Cleanup(func() {
		ctx := context.Background()
		conn, err := c.Connect(ctx, Superuser, c.SuperPassword, "postgres")
		if err != nil {
			return
		}
		defer conn.Close(ctx)
		var dbs []string
		rows, err := conn.Query(ctx, "SELECT datname FROM pg_database WHERE datallowconn")
		if err == nil {
			dbs, _ = pgx.CollectRows(rows, pgx.RowTo[string])
		}
		for _, db := range dbs { // objects and grants of the role, in every database
			if dc, err := c.Connect(ctx, Superuser, c.SuperPassword, db); err == nil {
				_, _ = dc.Exec(ctx, "DROP OWNED BY "+pgx.Identifier{name}.Sanitize())
				dc.Close(ctx)
			}
		}
		_, _ = conn.Exec(ctx, "DROP ROLE IF EXISTS "+pgx.Identifier{name}.Sanitize())
	})
	return pw
}

// Reader runs grants in db (the SQL that creates the login role role and
// lets it read, postgres.ReaderGrants), gives the role a random password,
// sets the environment variable env to it for the test (a source's
// PasswordEnv) and drops the role and what it owns when the test ends. It
// returns the role's URL for db, which holds no password.
func (c *Cluster) Reader(t testing.TB, db, role, grants, env string) string {
	t.Helper()
	c.Exec(t, db, grants)
	pw := randomHex(12)
	ident := pgx.Identifier{role}.Sanitize()
	c.Exec(t, db, "ALTER ROLE "+ident+" PASSWORD '"+pw+"'")
	t.Cleanup(func() {
		c.Exec(t, db, "DROP OWNED BY "+ident)
		c.Exec(t, "postgres", "DROP ROLE "+ident)
	})
	t.Setenv(env, pw)
	return c.URL(role, db)
}

// PgDump runs pg_dump as the superuser on database db with extra
// arguments (for example "--data-only") and returns its output.
func (c *Cluster) PgDump(ctx context.Context, db string, args ...string) ([]byte, error) {
	args = append([]string{"-h", c.SocketDir, "-p", strconv.Itoa(Port), "-U", Superuser, "-w", "-d", db}, args...)
	out, errOut, err := c.runEnv(ctx, []string{"PGPASSWORD=" + c.SuperPassword}, "pg_dump", args...)
	if err != nil {
		return nil, fmt.Errorf("pg_dump: %w\n%s", err, errOut)
	}
	return out, nil
}

// run runs one of the server's programs, as the postgres user when the
// tests run as root.
func (c *Cluster) run(ctx context.Context, prog string, args ...string) ([]byte, error) {
	out, errOut, err := c.runEnv(ctx, nil, prog, args...)
	return append(out, errOut...), err
}

// runEnv is run with extra environment variables; it returns the
// program's standard output and standard error apart.
func (c *Cluster) runEnv(ctx context.Context, env []string, prog string, args ...string) (stdout, stderr []byte, err error) {
	path := filepath.Join(c.bin, prog)
	var cmd *exec.Cmd
	if c.runAs != "" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", c.runAs, "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.Dir = c.Dir
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err = cmd.Run()
	return out.Bytes(), errOut.Bytes(), err
}

// chownTree gives a directory tree to a user.
func chownTree(dir, name string) error {
	u, err := user.Lookup(name)
	if err != nil {
		return fmt.Errorf("look up the %s user (%s): %w", name, InstallHint, err)
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		return os.Lchown(p, uid, gid)
	})
}

// randomHex returns 2n random hexadecimal characters.
func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// shared is the cluster of this test binary, started by the first Shared.
var shared struct {
	once    sync.Once
	cluster *Cluster
	err     error
}

// Shared returns the test binary's cluster, starting it on first use. When
// no server is installed it skips the test, or fails it in CI.
func Shared(t testing.TB) *Cluster {
	t.Helper()
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		shared.cluster, shared.err = Start(ctx)
	})
	if shared.err != nil {
		if _, binErr := FindBin(); binErr != nil && !realdata.InCI() {
			t.Skipf("PostgreSQL tests skipped: %v", shared.err)
		}
		t.Fatalf("start a PostgreSQL test cluster: %v", shared.err)
	}
	return shared.cluster
}

// Main runs the tests of m and then stops the shared cluster if one was
// started. Call it from TestMain.
func Main(m *testing.M) int {
	code := m.Run()
	if c := shared.cluster; c != nil {
		if err := c.Stop(); err != nil {
			fmt.Fprintln(os.Stderr, "pgtest:", err)
			if code == 0 {
				code = 1
			}
		}
	}
	return code
}

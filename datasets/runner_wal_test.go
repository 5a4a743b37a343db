package datasets

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// walAttacks are statements aimed at a WAL database: checkpointing the WAL
// into the file, leaving WAL mode (which rewrites the header), truncating
// or resizing the WAL, and the same through pragma_* functions. Each must
// be refused.
var walAttacks = []string{
	"PRAGMA wal_checkpoint",
	"PRAGMA wal_checkpoint(TRUNCATE)",
	"PRAGMA main.wal_checkpoint(RESTART)",
	"PRAGMA journal_mode = DELETE",
	"PRAGMA journal_mode",
	"PRAGMA journal_size_limit = 0",
	"PRAGMA wal_autocheckpoint = 1",
	"PRAGMA locking_mode = EXCLUSIVE",
	"PRAGMA shrink_memory",
	"PRAGMA optimize",
	"PRAGMA incremental_vacuum",
	"SELECT * FROM pragma_wal_checkpoint",
	"SELECT * FROM pragma_wal_checkpoint('TRUNCATE')",
	"SELECT * FROM pragma_journal_mode('delete')",
	"SELECT * FROM pragma_optimize",
	"SELECT * FROM pragma_locking_mode('exclusive')",
	"VACUUM",
	"VACUUM INTO 'copy.sqlite'",
	"ATTACH 'other.sqlite' AS o",
	"SELECT * FROM patients; PRAGMA wal_checkpoint",
	"WITH x AS (SELECT 1) DELETE FROM patients",
	"INSERT INTO patients(subject_id) VALUES (99) RETURNING subject_id",
	"DELETE FROM patients RETURNING *",
}

// dirFiles maps each file of dir to its size and checksum.
func dirFiles(t testing.TB, dir string) map[string]string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := map[string]string{}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(dir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = fmt.Sprintf("%d bytes %x", len(b), sha256.Sum256(b))
	}
	return files
}

func fileNames(files map[string]string) string {
	var names []string
	for n := range files {
		names = append(names, n)
	}
	sort.Strings(names)
	return strings.Join(names, ", ")
}

// TestRunnerLeavesWALDatabaseUntouched runs the attacks, and reads, on the
// kind of database Clinsight's importers make (WAL mode) in two states:
// closed cleanly, and with committed rows still only in its -wal file (a
// writer that stopped without a checkpoint). The database file and the
// -wal file must keep every byte, the reads must see the rows of the WAL,
// and the only files that may appear beside the database are SQLite's
// -shm and an empty -wal, which any reader of a WAL database creates.
func TestRunnerLeavesWALDatabaseUntouched(t *testing.T) {
	ctx := context.Background()
	for _, withFrames := range []bool{false, true} {
		t.Run(fmt.Sprintf("frames in the WAL %v", withFrames), func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "data.sqlite")
			db, err := sql.Open(DriverName, "file:"+path+"?_pragma=journal_mode(WAL)&_pragma=wal_autocheckpoint(0)")
			if err != nil {
				t.Fatal(err)
			}
			db.SetMaxOpenConns(1)
			for _, s := range []string{"CREATE TABLE patients (subject_id INTEGER PRIMARY KEY, gender TEXT)",
				"INSERT INTO patients VALUES (1, 'F'), (2, 'M')", "PRAGMA wal_checkpoint(TRUNCATE)"} {
				if _, err := db.Exec(s); err != nil {
					t.Fatal(err)
				}
			}
			want := int64(2)
			if withFrames {
				// Copy the files while the writer holds uncheckpointed rows:
				// what a crash leaves behind.
				if _, err := db.Exec("INSERT INTO patients VALUES (3, 'F')"); err != nil {
					t.Fatal(err)
				}
				want = 3
				crashed := t.TempDir()
				for _, suffix := range []string{"", "-wal"} {
					b, err := os.ReadFile(path + suffix)
					if err != nil {
						t.Fatal(err)
					}
					if err := os.WriteFile(filepath.Join(crashed, "data.sqlite"+suffix), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				dir, path = crashed, filepath.Join(crashed, "data.sqlite")
			}
			db.Close()
			before := dirFiles(t, dir)
			r := newTestRunner(t, path, RunnerOptions{})
			for _, q := range walAttacks {
				var refused *RefusedError
				if _, err := r.Query(ctx, q); !errors.As(err, &refused) {
					t.Errorf("%q: %v, want a refusal", q, err)
				}
			}
			res, err := r.Query(ctx, "SELECT count(*) FROM patients")
			if err != nil || res.Rows[0][0] != want {
				t.Fatalf("count after the attacks: %v, %v; want %d", res, err, want)
			}
			r.Close()
			after := dirFiles(t, dir)
			for name, sum := range before {
				if after[name] != sum {
					t.Errorf("%s changed: %s, was %s", name, after[name], sum)
				}
			}
			for name, sum := range after {
				if _, ok := before[name]; ok {
					continue
				}
				switch {
				case name == "data.sqlite-shm":
				case name == "data.sqlite-wal" && strings.HasPrefix(sum, "0 bytes"):
				default:
					t.Errorf("%s appeared (%s); files now: %s", name, sum, fileNames(after))
				}
			}
		})
	}
}

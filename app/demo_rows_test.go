package app

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/demo"
)

// TestRecreatedDemoKeepsRowsTheUserAdded: rows the user imported into the
// demo's own tables (literature imported into the demo source goes into
// its articles table) are user data too. When an outdated demo is
// replaced by `demo init --if-missing` (as `make run` does after an
// upgrade) or recreated with --force, the earlier database holding them
// is kept aside and registered, not deleted because its table names are
// all the demo's.
func TestRecreatedDemoKeepsRowsTheUserAdded(t *testing.T) {
	ctx := context.Background()
	for _, force := range []bool{false, true} {
		ws := openTemp(t)
		opts := demo.Options{Seed: 7, Patients: 30}
		if _, err := ws.InitDemo(ctx, opts, false); err != nil {
			t.Fatal(err)
		}
		lit := filepath.Join(t.TempDir(), "mine.csv")
		if err := os.WriteFile(lit, []byte("title,abstract,year\nMy own unpublished cohort study,Abstract the user typed,2024\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ws.ImportLiterature(ctx, DemoSourceName, []string{lit}, evidence.ImportOptions{}, nil); err != nil {
			t.Fatal(err)
		}
		if !fileHolds(t, ws.DemoPath(), "My own unpublished cohort study") {
			t.Fatal("the user's article is not in the demo after the import")
		}
		if !force {
			db, _, err := datasets.OpenImportTarget(ctx, ws.DemoPath(), datasets.ImportTargetOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := db.Exec("UPDATE clinsight_metadata SET value = '1' WHERE key = ?", demoLayoutKey); err != nil {
				t.Fatal(err)
			}
			db.Close()
		}
		var res DemoResult
		if force {
			var err error
			if res, err = ws.InitDemo(ctx, opts, true); err != nil {
				t.Fatal(err)
			}
		} else {
			res = initDemoIfMissing(t, ws, opts)
		}
		kept, ok := ws.Source(keptDemoSource)
		if !ok {
			t.Fatalf("force=%v: the earlier demo holding the user's article was not kept; notices %q", force, res.Notices)
		}
		if !fileHolds(t, ws.SourcePath(kept), "My own unpublished cohort study") {
			t.Errorf("force=%v: the kept database lacks the user's article", force)
		}
		if len(res.Notices) != 1 || !strings.Contains(res.Notices[0], ws.SourcePath(kept)) || !strings.Contains(res.Notices[0], "Nothing was deleted") {
			t.Errorf("force=%v: notices %q do not say where the user's rows went", force, res.Notices)
		}
		// A demo nobody added to is replaced without keeping a copy.
		before, _ := filepath.Glob(filepath.Join(ws.DataDir(), "*"))
		res, err := ws.InitDemo(ctx, opts, true)
		if err != nil || len(res.Notices) != 0 {
			t.Fatalf("force=%v: recreating an untouched demo: %v, notices %q", force, err, res.Notices)
		}
		if after, _ := filepath.Glob(filepath.Join(ws.DataDir(), "*")); strings.Join(after, "\n") != strings.Join(before, "\n") {
			t.Errorf("force=%v: data folder changed from %q to %q", force, before, after)
		}
	}
}

// fileHolds reports whether any table of the database at path has a text
// value equal to want.
func fileHolds(t *testing.T, path, want string) bool {
	t.Helper()
	names, err := tableNames(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.Contains(tableDump(t, path, n), want) {
			return true
		}
	}
	return false
}

package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/demo"
)

// tableDump returns every row of a table of a database file, in order.
func tableDump(t *testing.T, path, table string) string {
	t.Helper()
	db, err := datasets.OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.Query("SELECT * FROM " + datasets.QuoteIdent(table) + " ORDER BY 1")
	if err != nil {
		t.Fatalf("table %s of %s: %v", table, path, err)
	}
	defer rows.Close()
	cols, _ := rows.Columns()
	var b strings.Builder
	vals := make([]any, len(cols))
	ptrs := make([]any, len(cols))
	for i := range vals {
		ptrs[i] = &vals[i]
	}
	for rows.Next() {
		if err := rows.Scan(ptrs...); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintln(&b, vals...)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// resetConfig corrupts config.json and opens the workspace again, as after
// a crash that damaged the settings: the sources are forgotten.
func resetConfig(t *testing.T, ws *Workspace) *Workspace {
	t.Helper()
	dir := ws.Dir()
	ws.Close()
	if err := os.WriteFile(filepath.Join(dir, configFile), []byte("{not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	ws2, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws2.Close() })
	if _, ok := ws2.Source(DemoSourceName); ok || ws2.HasDemo() {
		t.Fatal("the demo is still registered after the reset")
	}
	return ws2
}

// initDemoIfMissing does what `clinsight demo init --if-missing` does.
func initDemoIfMissing(t *testing.T, ws *Workspace, opts demo.Options) DemoResult {
	t.Helper()
	if ws.HasDemo() {
		return DemoResult{}
	}
	res, err := ws.InitDemo(context.Background(), opts, false)
	if err != nil {
		t.Fatalf("demo init --if-missing: %v", err)
	}
	return res
}

// importUserTable imports a CSV into the demo source as the user's own table.
func importUserTable(t *testing.T, ws *Workspace) string {
	t.Helper()
	csv := filepath.Join(t.TempDir(), "my_cohort.csv")
	if err := os.WriteFile(csv, []byte("subject_id,note\n1,first\n2,second\n3,third\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Data().ImportCSVInto(context.Background(), source(t, ws, DemoSourceName), csv, datasets.CSVOptions{}); err != nil {
		t.Fatal(err)
	}
	return tableDump(t, ws.DemoPath(), "my_cohort")
}

func TestDemoInitAfterConfigResetKeepsUserTables(t *testing.T) {
	ctx := context.Background()
	ws := openTemp(t)
	opts := demo.Options{Seed: 7, Patients: 30}
	if _, err := ws.InitDemo(ctx, opts, false); err != nil {
		t.Fatal(err)
	}
	want := importUserTable(t, ws)
	patients := tableDump(t, ws.DemoPath(), "patients")

	ws = resetConfig(t, ws)
	res := initDemoIfMissing(t, ws, opts)
	if got := tableDump(t, ws.DemoPath(), "my_cohort"); got != want {
		t.Errorf("the user's table changed: %q, want %q", got, want)
	}
	if got := tableDump(t, ws.DemoPath(), "patients"); got != patients {
		t.Error("the demo tables changed")
	}
	if !res.Reused || len(res.Notices) != 1 || !strings.Contains(res.Notices[0], "registered again") || !strings.Contains(res.Notices[0], "nothing was generated or deleted") {
		t.Errorf("result %+v does not say the demo was registered again as it is", res)
	}
	if !ws.HasDemo() {
		t.Error("the demo is not registered again")
	}
}

func TestRecreatedDemoKeepsUserTablesAside(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		outdated bool // a demo of an older build
		force    bool
	}{{"outdated demo, --if-missing", true, false}, {"--force", false, true}} {
		t.Run(tc.name, func(t *testing.T) {
			ws := openTemp(t)
			opts := demo.Options{Seed: 7, Patients: 30}
			if _, err := ws.InitDemo(ctx, opts, false); err != nil {
				t.Fatal(err)
			}
			want := importUserTable(t, ws)
			if tc.outdated {
				db, _, err := datasets.OpenImportTarget(ctx, ws.DemoPath(), datasets.ImportTargetOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if _, err := db.Exec("UPDATE clinsight_metadata SET value = '1' WHERE key = ?", demoLayoutKey); err != nil {
					t.Fatal(err)
				}
				db.Close()
				ws = resetConfig(t, ws)
			}
			var res DemoResult
			if tc.force {
				var err error
				if res, err = ws.InitDemo(ctx, opts, true); err != nil {
					t.Fatal(err)
				}
			} else {
				res = initDemoIfMissing(t, ws, opts)
			}
			if res.Reused || !ws.HasDemo() {
				t.Fatalf("the demo was not recreated: %+v", res)
			}
			kept, ok := ws.Source(keptDemoSource)
			if !ok {
				t.Fatalf("the earlier demo with the user's table is not registered; sources %+v", ws.Config().Sources)
			}
			keptPath := ws.SourcePath(kept)
			if got := tableDump(t, keptPath, "my_cohort"); got != want {
				t.Errorf("the user's table in the kept database: %q, want %q", got, want)
			}
			if len(res.Notices) != 1 || !strings.Contains(res.Notices[0], "my_cohort") || !strings.Contains(res.Notices[0], keptPath) ||
				!strings.Contains(res.Notices[0], "Nothing was deleted") {
				t.Errorf("notices %q do not say where the user's table went", res.Notices)
			}
			// The new demo has only generated tables; recreating it again
			// deletes nothing of the user's and keeps nothing more.
			before, _ := filepath.Glob(filepath.Join(ws.DataDir(), "*"))
			res, err := ws.InitDemo(ctx, opts, true)
			if err != nil || len(res.Notices) != 0 {
				t.Fatalf("recreating a demo without user tables: %v, notices %q", err, res.Notices)
			}
			if after, _ := filepath.Glob(filepath.Join(ws.DataDir(), "*")); strings.Join(after, "\n") != strings.Join(before, "\n") {
				t.Errorf("data folder changed from %q to %q", before, after)
			}
		})
	}
}

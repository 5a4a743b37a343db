package app

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/app/impression"
	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/internal/atomicfile"
)

// DemoSourceName is the name of the demo data source.
const DemoSourceName = "demo"

// demoFile is the demo database's file name in the data directory.
const demoFile = "demo.sqlite"

// DemoPath returns where the demo database lives in this workspace.
func (ws *Workspace) DemoPath() string { return filepath.Join(ws.DataDir(), demoFile) }

// HasDemo reports whether the demo database exists, is registered and was
// made by this build's demo layout.
//
// A demo made by an older build, without the tables of pipelines added since
// (its recorded layout differs from demoLayout), does not count: InitDemo
// recreates it.
func (ws *Workspace) HasDemo() bool {
	if _, registered := ws.Source(DemoSourceName); !registered {
		return false
	}
	ctx := context.Background()
	db, err := datasets.OpenReadOnly(ctx, ws.DemoPath())
	if err != nil {
		return false
	}
	defer db.Close()
	var layout string
	err = db.QueryRowContext(ctx, "SELECT value FROM clinsight_metadata WHERE key = ?", demoLayoutKey).Scan(&layout)
	return err == nil && layout == demoLayout
}

// demoLayout versions what InitDemo puts into the demo database; raise it
// when a pipeline adds demo tables, so existing demos are recreated.
const (
	demoLayout    = "4"
	demoLayoutKey = "clinsight_demo_layout"
)

// ErrDemoExists is returned by InitDemo when the demo is already there.
var ErrDemoExists = errors.New("the demo data already exists; recreate it to start over")

// DemoResult tells what InitDemo did.
type DemoResult struct {
	// Summary describes the generated demo (only Path when Reused).
	demo.Summary
	// Reused is set when the demo database of this build was already in
	// place but not registered (after the settings were reset): it was
	// registered again as it is, not generated.
	Reused bool
	// Notices tell the user what happened to data found in the way.
	Notices []string
}

// keptDemoSource names the data source an earlier demo database that held
// the user's tables is registered as when the demo is recreated.
const keptDemoSource = "demo-kept"

// InitDemo generates the synthetic demo database (never real patient data)
// and registers it as the "demo" source. An existing demo is kept unless
// force is set.
//
// It never deletes a database that holds tables Clinsight did not generate:
//
//   - a demo database of this build that is in place but not registered (the
//     settings were reset) is registered again as it is, with whatever the
//     user imported into it (DemoResult.Reused);
//   - an earlier demo database that is replaced (an older layout, or force)
//     is first moved aside; when it holds tables or views the new demo does
//     not have, or its tables hold other numbers of rows than were
//     generated (literature, trials or reports imported into the demo
//     source), it is kept under a new name and registered as its own data
//     source, and a notice says so. Otherwise, holding only what Clinsight
//     generated, it is deleted.
func (ws *Workspace) InitDemo(ctx context.Context, opts demo.Options, force bool) (DemoResult, error) {
	if ws.HasDemo() && !force {
		return DemoResult{}, ErrDemoExists
	}
	path := ws.DemoPath()
	if err := ws.checkWritable(path); err != nil {
		return DemoResult{}, err
	}
	_, statErr := os.Lstat(path)
	exists := statErr == nil
	if exists && !force && demoLayoutOf(ctx, path) == demoLayout {
		return ws.reregisterDemo(ctx, path)
	}
	var aside string
	if exists {
		var err error
		if aside, err = ws.moveDemoAside(ctx, path); err != nil {
			return DemoResult{}, fmt.Errorf("create demo data: the existing demo database %s could not be moved aside, so it was left as it was: %w", path, err)
		}
	}
	sum, err := ws.generateDemo(ctx, opts)
	if err != nil {
		if aside != "" {
			if rerr := restoreAside(aside, path); rerr != nil {
				ws.logger.Error("could not put the earlier demo database back", "kept_as", aside, "err", rerr)
				err = fmt.Errorf("%w (the earlier demo database is kept as %s)", err, aside)
			}
		}
		return DemoResult{}, fmt.Errorf("create demo data: %w", err)
	}
	res := DemoResult{Summary: sum}
	if aside != "" {
		notice, err := ws.keepOrDropOldDemo(ctx, aside, path)
		if err != nil {
			return res, err
		}
		if notice != "" {
			res.Notices = append(res.Notices, notice)
		}
	}
	if _, err := ws.registerDemo(ctx); err != nil {
		return res, err
	}
	if err := ws.initDemoOMOP(ctx, true); err != nil { // the demo as an OMOP CDM (app/demo_omop.go)
		return res, err
	}
	ws.logger.Info("demo data created", "path", path, "elapsed", sum.Elapsed)
	return res, nil
}

// registerDemo registers the demo database and adds the demo review.
func (ws *Workspace) registerDemo(ctx context.Context) (Source, error) {
	src, err := ws.RegisterImported(DemoSourceName, ws.DemoPath(), SourceDemo,
		"synthetic demo data (MIMIC-IV-shaped hospital tables and imaging metadata); no real patients")
	if err != nil {
		return Source{}, err
	}
	if err := ws.addDemoReview(ctx); err != nil {
		return Source{}, fmt.Errorf("create demo data: %w", err)
	}
	return src, nil
}

// reregisterDemo registers a complete demo database found in place.
func (ws *Workspace) reregisterDemo(ctx context.Context, path string) (DemoResult, error) {
	if _, err := ws.registerDemo(ctx); err != nil {
		return DemoResult{}, err
	}
	ws.logger.Info("demo data found in place and registered again", "path", path)
	return DemoResult{
		Summary: demo.Summary{Path: path},
		Reused:  true,
		Notices: []string{fmt.Sprintf("The demo data was already in %s and was registered again as the data source %q, as it is: nothing was generated or deleted, and tables imported into it are still there.", path, DemoSourceName)},
	}, nil
}

// demoLayoutOf returns the demo layout recorded in a database ("" when it
// has none or cannot be read).
func demoLayoutOf(ctx context.Context, path string) string {
	db, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		return ""
	}
	defer db.Close()
	var layout string
	if err := db.QueryRowContext(ctx, "SELECT value FROM clinsight_metadata WHERE key = ?", demoLayoutKey).Scan(&layout); err != nil {
		return ""
	}
	return layout
}

// generateDemo writes a new demo database at the (free) demo path; on an
// error nothing is left there.
func (ws *Workspace) generateDemo(ctx context.Context, opts demo.Options) (demo.Summary, error) {
	path := ws.DemoPath()
	opts.Overwrite = false // the path was made free: never replace a file that appeared meanwhile
	sum, err := demo.Generate(ctx, path, opts)
	if err != nil {
		return demo.Summary{}, err
	}
	if err := ws.addPipelineDemoData(ctx, opts.Seed); err != nil {
		removeDBFiles(ws, path)
		return demo.Summary{}, err
	}
	return sum, nil
}

// addPipelineDemoData adds each pipeline's synthetic demo tables (radiology
// reports, literature, trials and patients) to the demo database.
func (ws *Workspace) addPipelineDemoData(ctx context.Context, seed uint64) error {
	_, err := withWritableSource(ctx, ws, Source{Path: ws.DemoPath()}, func(db *sql.DB) (struct{}, error) {
		// The demo is the workspace's own file: WAL lets the app read it
		// while something is imported into it.
		if _, err := db.ExecContext(ctx, "PRAGMA journal_mode = WAL"); err != nil {
			return struct{}{}, err
		}
		if err := impression.DemoData(ctx, db, seed); err != nil {
			return struct{}{}, fmt.Errorf("demo radiology reports: %w", err)
		}
		if err := evidence.DemoData(ctx, db, seed); err != nil {
			return struct{}{}, fmt.Errorf("demo literature: %w", err)
		}
		if err := trials.DemoData(ctx, db, seed); err != nil {
			return struct{}{}, fmt.Errorf("demo trials: %w", err)
		}
		if _, err := db.ExecContext(ctx, "INSERT OR REPLACE INTO clinsight_metadata (key, value) VALUES (?, ?)", demoLayoutKey, demoLayout); err != nil {
			return struct{}{}, fmt.Errorf("record the demo layout: %w", err)
		}
		counts, err := rowCounts(ctx, db)
		if err != nil {
			return struct{}{}, fmt.Errorf("record the demo's row counts: %w", err)
		}
		raw, err := json.Marshal(counts)
		if err != nil {
			return struct{}{}, err
		}
		if _, err := db.ExecContext(ctx, "INSERT OR REPLACE INTO clinsight_metadata (key, value) VALUES (?, ?)", demoRowsKey, string(raw)); err != nil {
			return struct{}{}, fmt.Errorf("record the demo's row counts: %w", err)
		}
		return struct{}{}, nil
	})
	return err
}

// moveDemoAside moves the demo database out of the way under a name no
// other file has (demo-kept-YYYYMMDD-HHMMSS.sqlite), after folding its
// write-ahead log into it, and returns the new path.
func (ws *Workspace) moveDemoAside(ctx context.Context, path string) (string, error) {
	if _, err := os.Stat(path + "-wal"); err == nil {
		db, _, err := datasets.OpenImportTarget(ctx, path, datasets.ImportTargetOptions{BusyTimeout: ws.importBusyTimeout})
		if err != nil {
			return "", ws.importError(path, err)
		}
		_, err = db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)")
		if cerr := db.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return "", ws.importError(path, err)
		}
	}
	stamp := time.Now().Format("20060102-150405")
	ext := filepath.Ext(path)
	base := strings.TrimSuffix(filepath.Base(path), ext) + "-kept-" + stamp
	aside, err := atomicfile.MoveAside(path, func(n int) string {
		if n == 0 {
			return base + ext
		}
		return base + "-" + strconv.Itoa(n+1) + ext
	})
	if err != nil {
		return "", err
	}
	// A log another process still has open goes with its database; the
	// shared-memory index is rebuilt from it.
	if _, err := os.Stat(path + "-wal"); err == nil {
		if err := os.Link(path+"-wal", aside+"-wal"); err != nil {
			return aside, fmt.Errorf("moving the write-ahead log of %s: %w", path, err)
		}
		_ = os.Remove(path + "-wal")
	}
	_ = os.Remove(path + "-shm")
	return aside, nil
}

// restoreAside puts a database moved aside back at path, which must be
// free.
func restoreAside(aside, path string) error {
	if err := os.Link(aside, path); err != nil {
		return err
	}
	_ = os.Remove(aside)
	if _, err := os.Stat(aside + "-wal"); err == nil {
		if err := os.Link(aside+"-wal", path+"-wal"); err == nil {
			_ = os.Remove(aside + "-wal")
		}
	}
	return nil
}

// keepOrDropOldDemo deletes the earlier demo database moved aside when it
// holds nothing the new demo does not have; otherwise it keeps it,
// registers it as a data source and returns a notice saying so.
func (ws *Workspace) keepOrDropOldDemo(ctx context.Context, aside, path string) (string, error) {
	extra, err := extraTables(ctx, aside, path)
	if err != nil {
		ws.logger.Warn("earlier demo database unreadable, kept", "kept_as", aside, "err", err)
		return fmt.Sprintf("The file that was in the demo's place (%s) could not be read as a database; it was kept as %s and new demo data was created.", filepath.Base(path), aside), nil
	}
	if len(extra) == 0 {
		changed, err := changedDemoTables(ctx, aside)
		if err != nil {
			ws.logger.Warn("earlier demo database unreadable, kept", "kept_as", aside, "err", err)
			return fmt.Sprintf("The earlier demo database (%s) could not be checked for data added to it; it was kept as %s and new demo data was created.", filepath.Base(path), aside), nil
		}
		if len(changed) == 0 {
			removeDBFiles(ws, aside)
			return "", nil
		}
		extra = changed
	}
	name := keptDemoSource
	for n := 2; ; n++ {
		if _, taken := ws.Source(name); !taken {
			break
		}
		name = keptDemoSource + "-" + strconv.Itoa(n)
	}
	if _, err := ws.RegisterImported(name, aside, SourceCSV, "the earlier demo database, kept because it holds data Clinsight did not create: "+strings.Join(extra, ", ")); err != nil {
		return "", fmt.Errorf("the earlier demo database is kept as %s, but could not be registered: %w", aside, err)
	}
	ws.logger.Warn("earlier demo database held user tables; kept and registered", "kept_as", aside, "source", name, "tables", extra)
	return fmt.Sprintf("The earlier demo database also held data Clinsight did not create (%s). Nothing was deleted: it was kept as %s and registered as the data source %q, and new demo data was created. Import your own data into a data source of its own rather than into the demo.",
		strings.Join(extra, ", "), aside, name), nil
}

// demoRowsKey records in clinsight_metadata the rows each table of the demo
// had when it was generated (JSON: table name to count), so that rows added
// later, such as literature imported into the demo source, are recognised
// as the user's.
const demoRowsKey = "clinsight_demo_rows"

// rowCounts counts the rows of every table and view of a database but
// clinsight_metadata (which holds the counts).
func rowCounts(ctx context.Context, db *sql.DB) (map[string]int64, error) {
	rows, err := db.QueryContext(ctx, "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite!_%' ESCAPE '!' AND name <> 'clinsight_metadata'")
	if err != nil {
		return nil, err
	}
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			rows.Close()
			return nil, err
		}
		names = append(names, n)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	counts := make(map[string]int64, len(names))
	for _, n := range names {
		var c int64
		if err := db.QueryRowContext(ctx, "SELECT count(*) FROM "+datasets.QuoteIdent(n)).Scan(&c); err != nil {
			return nil, fmt.Errorf("count the rows of %s: %w", n, err)
		}
		counts[n] = c
	}
	return counts, nil
}

// changedDemoTables lists the tables of a demo database whose row count
// differs from the one recorded when it was generated (described as
// "rows added to X"). A demo without that record (made by an earlier
// version) cannot be told apart from one the user added to, and counts as
// changed.
func changedDemoTables(ctx context.Context, path string) ([]string, error) {
	db, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	var raw string
	err = db.QueryRowContext(ctx, "SELECT value FROM clinsight_metadata WHERE key = ?", demoRowsKey).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return []string{"rows that may have been added to its tables (it has no record of what was generated)"}, nil
	}
	if err != nil {
		return nil, err
	}
	var want map[string]int64
	if err := json.Unmarshal([]byte(raw), &want); err != nil {
		return nil, fmt.Errorf("the demo's row record: %w", err)
	}
	have, err := rowCounts(ctx, db)
	if err != nil {
		return nil, err
	}
	var changed []string
	for n, c := range have {
		if w, ok := want[n]; !ok || w != c {
			changed = append(changed, "rows added to "+n)
		}
	}
	slices.Sort(changed)
	return changed, nil
}

// extraTables lists the tables and views of the database at oldPath that
// the one at newPath does not have.
func extraTables(ctx context.Context, oldPath, newPath string) ([]string, error) {
	have, err := tableNames(ctx, newPath)
	if err != nil {
		return nil, err
	}
	old, err := tableNames(ctx, oldPath)
	if err != nil {
		return nil, err
	}
	var extra []string
	for _, n := range old {
		if !slices.Contains(have, n) {
			extra = append(extra, n)
		}
	}
	return extra, nil
}

// tableNames lists a database's tables and views (SQLite's own excluded).
func tableNames(ctx context.Context, path string) ([]string, error) {
	db, err := datasets.OpenReadOnly(ctx, path)
	if err != nil {
		return nil, err
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT name FROM sqlite_schema WHERE type IN ('table', 'view') AND name NOT LIKE 'sqlite!_%' ESCAPE '!' ORDER BY name")
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var names []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		names = append(names, n)
	}
	return names, rows.Err()
}

// removeDBFiles deletes a database file the workspace generated and its
// journal files.
func removeDBFiles(ws *Workspace, path string) {
	for _, p := range []string{path, path + "-journal", path + "-wal", path + "-shm"} {
		if err := os.Remove(p); err != nil && !errors.Is(err, os.ErrNotExist) {
			ws.logger.Warn("could not remove a database file", "path", p, "err", err)
		}
	}
}

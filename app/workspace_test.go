package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/demo"
)

func openTemp(t *testing.T) *Workspace {
	t.Helper()
	ws, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	return ws
}

func TestResolveDir(t *testing.T) {
	t.Setenv(EnvWorkspace, "")
	t.Setenv("XDG_CONFIG_HOME", "/tmp/xdg-test")
	if got, _ := ResolveDir("/explicit"); got != "/explicit" {
		t.Errorf("flag: got %s", got)
	}
	t.Setenv(EnvWorkspace, "/from-env")
	if got, _ := ResolveDir(""); got != "/from-env" {
		t.Errorf("env: got %s", got)
	}
	if got, _ := ResolveDir("/explicit"); got != "/explicit" {
		t.Errorf("flag beats env: got %s", got)
	}
	t.Setenv(EnvWorkspace, "")
	if got, _ := ResolveDir(""); got != "/tmp/xdg-test/Clinsight" {
		t.Errorf("default: got %s", got)
	}
}

func TestOpenCreatesLayoutAndDefaults(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "")
	ws := openTemp(t)
	for _, d := range []string{ws.DataDir(), ws.VectorsDir(), filepath.Dir(ws.LogPath())} {
		if fi, err := os.Stat(d); err != nil || !fi.IsDir() {
			t.Errorf("%s not created: %v", d, err)
		}
	}
	if _, err := os.Stat(filepath.Join(ws.Dir(), "config.json")); err != nil {
		t.Fatalf("config not written: %v", err)
	}
	cfg := ws.Config()
	if cfg.OllamaHost != DefaultOllamaHost || cfg.Limits.MaxRows != 50_000 || time.Duration(cfg.Limits.QueryTimeout) != 30*time.Second {
		t.Errorf("defaults: %+v", cfg)
	}
	if len(ws.Warnings()) != 0 {
		t.Errorf("warnings on a fresh workspace: %v", ws.Warnings())
	}
	// Reopening reads the same settings back.
	ws.Close()
	again, err := Open(ws.Dir())
	if err != nil {
		t.Fatal(err)
	}
	defer again.Close()
	if again.Config().OllamaHost != cfg.OllamaHost {
		t.Error("settings not persisted")
	}
}

// TestOllamaHostNotSavedAtCreation: a workspace created while OLLAMA_HOST
// is set saves the default host; the variable applies to the processes
// that set it (see TestOllamaHostFromEnvironmentWins).
func TestOllamaHostNotSavedAtCreation(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "127.0.0.1:9999")
	ws := openTemp(t)
	raw, err := os.ReadFile(filepath.Join(ws.Dir(), "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "9999") || ws.Config().OllamaHost != DefaultOllamaHost {
		t.Errorf("OLLAMA_HOST was saved: %s", raw)
	}
	if h, err := ws.ModelHost(); err != nil || h.URL != "http://127.0.0.1:9999" || h.Source != HostFromEnvironment {
		t.Errorf("ModelHost = %+v, %v", h, err)
	}
}

func TestCorruptConfigIsKeptAsideAndReplaced(t *testing.T) {
	for name, content := range map[string]string{
		"not json":      "{this is not json",
		"invalid value": `{"ollama_host": "ftp://x", "limits": {"query_timeout": "30s", "max_rows": 10}}`,
		"bad duration":  `{"ollama_host": "http://127.0.0.1:11434", "limits": {"query_timeout": "soon", "max_rows": 10}}`,
		"empty":         "",
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(content), 0o644); err != nil {
				t.Fatal(err)
			}
			ws, err := Open(dir)
			if err != nil {
				t.Fatalf("Open: %v", err)
			}
			defer ws.Close()
			if len(ws.Warnings()) != 1 || !strings.Contains(ws.Warnings()[0], "default settings were restored") {
				t.Errorf("warnings = %v", ws.Warnings())
			}
			backups, _ := filepath.Glob(filepath.Join(dir, "config.json.corrupt-*"))
			if len(backups) != 1 {
				t.Fatalf("backup not kept: %v", backups)
			}
			if got, _ := os.ReadFile(backups[0]); string(got) != content {
				t.Errorf("backup content changed")
			}
			if err := ws.Config().Validate(); err != nil {
				t.Errorf("replacement config invalid: %v", err)
			}
		})
	}
}

func TestOldConfigGetsNewDefaults(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "config.json"), []byte(`{"ollama_host": "http://10.1.2.3:11434"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	ws, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	cfg := ws.Config()
	if cfg.OllamaHost != "http://10.1.2.3:11434" || cfg.Limits.MaxRows != 50_000 || cfg.Models.SQL == "" {
		t.Errorf("config = %+v", cfg)
	}
	if len(ws.Warnings()) != 0 {
		t.Errorf("unexpected warnings %v", ws.Warnings())
	}
}

func TestSourcesAndUpdateConfig(t *testing.T) {
	ws := openTemp(t)
	if err := ws.AddSource(Source{Name: "ehr", Path: "/data/ehr.sqlite", Kind: SourceSQLite}); err != nil {
		t.Fatal(err)
	}
	if err := ws.AddSource(Source{Name: "local", Path: "local.sqlite", Kind: SourceCSV}); err != nil {
		t.Fatal(err)
	}
	if s, _ := ws.Resolve("EHR"); s.Path != "/data/ehr.sqlite" || s.Name != "ehr" || s.Label() != "ehr" {
		t.Errorf("source by name (case-insensitive): %+v", s)
	}
	if s, _ := ws.Resolve("local"); s.Path != filepath.Join(ws.DataDir(), "local.sqlite") || s.Kind != SourceCSV {
		t.Errorf("relative source path: %+v", s)
	}
	if s, _ := ws.Resolve(filepath.Join(ws.DataDir(), "local.sqlite")); s.Name != "local" {
		t.Errorf("the file of a registered source is that source: %+v", s)
	}
	if s, _ := ws.Resolve("some/file.db"); !filepath.IsAbs(s.Path) || s.Name != "" || s.Label() != s.Path {
		t.Errorf("file path not made absolute: %+v", s)
	}
	if _, err := ws.Resolve(" "); !errors.Is(err, ErrNoSource) {
		t.Errorf("no source: %v", err)
	}
	for _, s := range ws.Sources() {
		if !filepath.IsAbs(s.Path) {
			t.Errorf("listed source not resolved: %+v", s)
		}
	}
	if got := ws.Config().Sources; got[1].Path != "local.sqlite" {
		t.Errorf("resolving changed the settings: %+v", got)
	}
	for _, bad := range []Source{{Name: "", Path: "x", Kind: SourceCSV}, {Name: "a/b", Path: "x", Kind: SourceCSV}, {Name: "x", Path: "", Kind: SourceCSV}, {Name: "x", Path: "p", Kind: "nope"}} {
		if err := ws.AddSource(bad); err == nil {
			t.Errorf("invalid source %+v accepted", bad)
		}
	}
	if err := ws.UpdateConfig(func(c *Config) { c.Limits.MaxRows = -1 }); err == nil {
		t.Error("invalid update accepted")
	}
	if ws.Config().Limits.MaxRows != 50_000 {
		t.Error("failed update changed the config")
	}
	if err := ws.RemoveSource("ehr"); err != nil {
		t.Fatal(err)
	}
	if err := ws.RemoveSource("ehr"); err == nil {
		t.Error("removing a missing source succeeded")
	}
	if got := len(ws.Config().Sources); got != 1 {
		t.Errorf("%d sources left, want 1", got)
	}
}

func TestInitDemoRecreatesAnOutdatedDemo(t *testing.T) {
	ctx := context.Background()
	ws := openTemp(t)
	opts := demo.DefaultOptions()
	opts.Patients = 50
	if _, err := ws.InitDemo(ctx, opts, false); err != nil {
		t.Fatal(err)
	}
	if !ws.HasDemo() {
		t.Fatal("demo not found after InitDemo")
	}
	// The demo comes with a review project, its search already run.
	p, err := ws.LoadReviewProject(evidence.DemoProjectName)
	if err != nil {
		t.Fatalf("the demo review project: %v", err)
	}
	if p.Search == nil || len(p.Search.IDs) == 0 || p.Search.Total < int64(len(p.Search.IDs)) || len(p.Criteria) == 0 {
		t.Fatalf("demo review project: search %+v, %d criteria", p.Search, len(p.Criteria))
	}
	// The user's work on it survives the demo being recreated.
	if err := p.Decide(p.Search.IDs[0], true, ""); err != nil {
		t.Fatal(err)
	}
	if err := ws.SaveReviewProject(p); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.InitDemo(ctx, opts, false); !errors.Is(err, ErrDemoExists) {
		t.Fatalf("second InitDemo: %v, want ErrDemoExists", err)
	}
	// A demo from an older build records another layout: it is recreated.
	db, err := datasets.OpenReadWrite(ctx, ws.DemoPath())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec("UPDATE clinsight_metadata SET value = '1' WHERE key = ?", demoLayoutKey); err != nil {
		t.Fatal(err)
	}
	db.Close()
	if ws.HasDemo() {
		t.Fatal("an outdated demo counts as present")
	}
	if _, err := ws.InitDemo(ctx, opts, false); err != nil {
		t.Fatalf("recreate the outdated demo: %v", err)
	}
	if !ws.HasDemo() {
		t.Error("recreated demo not found")
	}
	if p, err := ws.LoadReviewProject(evidence.DemoProjectName); err != nil || len(p.Decisions) != 1 {
		t.Errorf("after recreating the demo, the demo review lost the user's decision: %v", err)
	}
}

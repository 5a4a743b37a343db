package app

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/datasets"
)

var reviewPICO = evidence.PICO{Population: "patients with hepatocellular carcinoma", Intervention: "microwave ablation"}

func TestReviewProjectsSaveLoadList(t *testing.T) {
	ws := openTemp(t)
	if names, err := ws.ReviewProjects(); err != nil || names == nil || len(names) != 0 {
		t.Fatalf("no projects yet: %v, %v", names, err)
	}
	a := evidence.NewProject("HCC ablation", "literature", reviewPICO)
	a.Query = `"hepatocellular carcinoma" AND "microwave ablation"`
	a.Criteria = []evidence.Criterion{{Text: "Hepatocellular carcinoma", Weight: 1}}
	created := a.Updated
	time.Sleep(2 * time.Millisecond)
	if err := ws.SaveReviewProject(a); err != nil {
		t.Fatal(err)
	}
	if !a.Updated.After(created) {
		t.Errorf("Updated not stamped: %v", a.Updated)
	}
	b := evidence.NewProject("AML CAR-T", "literature", evidence.PICO{Intervention: "CAR-T"})
	if err := ws.SaveReviewProject(b); err != nil {
		t.Fatal(err)
	}
	if names, err := ws.ReviewProjects(); err != nil || !slices.Equal(names, []string{"AML CAR-T", "HCC ablation"}) {
		t.Errorf("list %v, %v (want the last saved first)", names, err)
	}
	// Saved again: first in the list.
	a.Decisions["pmid:1"] = evidence.Decision{Reason: "wrong population", At: time.Now().UTC()}
	if err := ws.SaveReviewProject(a); err != nil {
		t.Fatal(err)
	}
	if names, _ := ws.ReviewProjects(); !slices.Equal(names, []string{"HCC ablation", "AML CAR-T"}) {
		t.Errorf("list after saving again %v", names)
	}
	got, err := ws.LoadReviewProject("HCC ablation")
	if err != nil {
		t.Fatal(err)
	}
	want, _ := json.Marshal(a)
	if g, _ := json.Marshal(got); string(g) != string(want) {
		t.Errorf("loaded\n%s\nsaved\n%s", g, want)
	}
	// One file per project, written atomically (no temporary files left).
	entries, _ := os.ReadDir(ws.ReviewsDir())
	var files []string
	for _, e := range entries {
		files = append(files, e.Name())
	}
	if !slices.Equal(files, []string{"AML CAR-T.json", "HCC ablation.json"}) {
		t.Errorf("files %v", files)
	}

	// Refused: an invalid project (the file keeps the last good version),
	// another project of the same name, a name that cannot name a file.
	a.Decisions["pmid:2"] = evidence.Decision{}
	if err := ws.SaveReviewProject(a); err == nil || !strings.Contains(err.Error(), "exclusion of pmid:2 has no reason") {
		t.Errorf("invalid project saved: %v", err)
	}
	if again, err := ws.LoadReviewProject("HCC ablation"); err != nil || len(again.Decisions) != 1 {
		t.Errorf("the file changed: %v", err)
	}
	other := evidence.NewProject("HCC ablation", "other.sqlite", reviewPICO)
	other.Created = other.Created.Add(time.Second)
	if err := ws.SaveReviewProject(other); err == nil || !strings.Contains(err.Error(), `a review project named "HCC ablation" already exists`) {
		t.Errorf("same name: %v", err)
	}
	if err := ws.SaveReviewProject(evidence.NewProject("../escape", "x", reviewPICO)); err == nil {
		t.Error("a name with a path was saved")
	}
	if _, err := ws.LoadReviewProject("missing"); err == nil || !strings.Contains(err.Error(), `no review project named "missing"`) {
		t.Errorf("missing: %v", err)
	}
}

func TestCorruptReviewProjectIsKeptAside(t *testing.T) {
	ws := openTemp(t)
	if err := os.MkdirAll(ws.ReviewsDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws.ReviewsDir(), "broken.json")
	if err := os.WriteFile(path, []byte(`{"version":1,"name":"broken",`), 0o644); err != nil {
		t.Fatal(err)
	}
	if names, _ := ws.ReviewProjects(); !slices.Equal(names, []string{"broken"}) {
		t.Errorf("list %v: an unreadable project must still be listed", names)
	}
	// Saving over it is refused: it was never read.
	if err := ws.SaveReviewProject(evidence.NewProject("broken", "lit", reviewPICO)); err == nil || !strings.Contains(err.Error(), "not saving over") {
		t.Errorf("saved over an unreadable file: %v", err)
	}
	_, err := ws.LoadReviewProject("broken")
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "broken.json.corrupt-") {
		t.Fatalf("err = %v", err)
	}
	backups, _ := filepath.Glob(path + ".corrupt-*")
	if len(backups) != 1 {
		t.Fatalf("backups %v", backups)
	}
	if raw, _ := os.ReadFile(backups[0]); string(raw) != `{"version":1,"name":"broken",` {
		t.Errorf("backup holds %q", raw)
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the unreadable file is still in place: %v", err)
	}
	// The name is free again.
	if err := ws.SaveReviewProject(evidence.NewProject("broken", "lit", reviewPICO)); err != nil {
		t.Errorf("saving a new project of that name: %v", err)
	}

	// A project of a newer Clinsight is refused but left alone.
	newer := filepath.Join(ws.ReviewsDir(), "future.json")
	content := `{"version":99,"name":"future","hologram":true}`
	if err := os.WriteFile(newer, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.LoadReviewProject("future"); !errors.Is(err, evidence.ErrNewerProject) || !strings.Contains(err.Error(), newer) || !strings.Contains(err.Error(), "update Clinsight") {
		t.Errorf("newer: %v", err)
	}
	if err := ws.SaveReviewProject(evidence.NewProject("future", "lit", reviewPICO)); err == nil {
		t.Error("saved over a newer project")
	}
	if raw, _ := os.ReadFile(newer); string(raw) != content {
		t.Errorf("the newer project was changed: %s", raw)
	}
}

func TestOpenSession(t *testing.T) {
	ctx := context.Background()
	ws := literatureWorkspace(t)
	p := evidence.NewProject("demo", "lit", reviewPICO)
	p.Query = `"microwave ablation"`
	s, err := ws.openSession(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if s.Project != p || s.Model != "" || s.Chat == nil || s.Logger != ws.Logger() || s.Concurrency < 1 {
		t.Errorf("session %+v", s)
	}
	// Without a chat model the model steps say so; the search works.
	if err := s.SuggestCriteria(ctx); !errors.Is(err, evidence.ErrNoChatModel) {
		t.Errorf("no chat model: %v", err)
	}
	if _, err := s.Search(ctx, 5); err != nil || len(p.Search.IDs) != 5 {
		t.Fatalf("search: %v", err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Search(ctx, 5); err == nil {
		t.Error("search after Close")
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}

	// The configured chat model is used.
	if err := ws.UpdateConfig(func(c *Config) { c.Models.Chat = "llama3.1:8b" }); err != nil {
		t.Fatal(err)
	}
	s, err = ws.openSession(ctx, p)
	if err != nil || s.Model != "llama3.1:8b" {
		t.Fatalf("model %q, %v", s.Model, err)
	}
	s.Close()

	// A missing database, or one without a corpus: clear errors.
	p.Source = filepath.Join(t.TempDir(), "none.sqlite")
	if _, err := ws.openSession(ctx, p); err == nil || !strings.Contains(err.Error(), "none.sqlite") {
		t.Errorf("missing database: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.sqlite")
	edb, err := datasets.OpenReadWrite(ctx, empty)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := edb.ExecContext(ctx, `CREATE TABLE t (x)`); err != nil {
		t.Fatal(err)
	}
	edb.Close()
	p.Source = empty
	if _, err := ws.openSession(ctx, p); !errors.Is(err, evidence.ErrNoCorpus) {
		t.Errorf("no corpus: %v", err)
	}
}

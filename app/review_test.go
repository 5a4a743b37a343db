package app

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/datasets"
)

// literatureWorkspace opens a workspace with a source "lit" holding the
// demo literature and no chat model.
func literatureWorkspace(t *testing.T) *Workspace {
	t.Helper()
	ws := openTemp(t)
	writeDemoLiterature(t, filepath.Join(ws.DataDir(), "lit.sqlite"), 3)
	if err := ws.AddSource(Source{Name: "lit", Path: "lit.sqlite", Kind: SourceSQLite, Added: time.Now()}); err != nil {
		t.Fatal(err)
	}
	if err := ws.UpdateConfig(func(c *Config) { c.Models.Chat = "" }); err != nil {
		t.Fatal(err)
	}
	return ws
}

// writeDemoLiterature writes the demo literature (evidence.DemoData with
// seed) into a new SQLite database at path.
func writeDemoLiterature(t *testing.T, path string, seed uint64) {
	t.Helper()
	db, err := datasets.OpenReadWrite(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := evidence.DemoData(context.Background(), db, seed); err != nil {
		t.Fatal(err)
	}
}

// searchedReview creates a review of the demo literature (a workspace of
// literatureWorkspace, reviewPICO) named name and searches it with query,
// keeping the best limit candidates (0: every match).
func searchedReview(t *testing.T, ws *Workspace, name, query string, limit int) *Review {
	t.Helper()
	ri, err := ws.Reviews().Create(name, "lit", reviewPICO)
	if err != nil {
		t.Fatal(err)
	}
	r := ri.(*Review)
	r.Update(func(p *evidence.Project) { p.Query = query })
	if _, err := r.Search(context.Background(), limit); err != nil {
		t.Fatal(err)
	}
	return r
}

// savedProject waits (with a deadline) until the saved project satisfies
// ok, and returns it.
func savedProject(t *testing.T, ws *Workspace, name, what string, ok func(*evidence.Project) bool) *evidence.Project {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		p, err := ws.LoadReviewProject(name)
		if err == nil && ok(p) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for the saved project to show %s (%v)", what, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestReviewStepsEditsAndSaves(t *testing.T) {
	ctx := context.Background()
	ws := literatureWorkspace(t)
	rs := ws.Reviews()

	// Refusals speak of the product, not of command-line flags.
	if _, err := rs.Create("no source", "", reviewPICO); err == nil || !strings.Contains(err.Error(), "choose the literature source") || strings.Contains(err.Error(), "--") {
		t.Errorf("no source: %v", err)
	}
	ri, err := rs.Create("HCC", "lit", reviewPICO)
	if err != nil {
		t.Fatal(err)
	}
	r := ri.(*Review)
	defer r.Close()
	if _, err := rs.Create("HCC", "lit", reviewPICO); err == nil || !strings.Contains(err.Error(), `"HCC" exists`) {
		t.Errorf("second project of the same name: %v", err)
	}
	if names, _ := rs.Projects(); !slices.Equal(names, []string{"HCC"}) {
		t.Errorf("projects %v", names)
	}
	var mu sync.Mutex
	var statuses []SaveStatus
	r.OnSave(func(s SaveStatus) { mu.Lock(); statuses = append(statuses, s); mu.Unlock() })

	// A step: the search, saved a moment later.
	if _, err := r.Search(ctx, 5); err == nil || !strings.Contains(err.Error(), "no search query") {
		t.Errorf("search without a query: %v", err)
	}
	r.Update(func(p *evidence.Project) { p.Query = `"microwave ablation"` })
	res, err := r.Search(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	ids := r.Project().Search.IDs
	if len(ids) != 5 || !slices.Equal(ids, res.IDs()) {
		t.Fatalf("candidates %v, search %v", ids, res.IDs())
	}
	savedProject(t, ws, "HCC", "the search", func(p *evidence.Project) bool { return p.Search != nil && slices.Equal(p.Search.IDs, ids) })

	// A model step without a chat model fails and changes nothing.
	before := r.Project()
	if err := r.SuggestCriteria(ctx); !errors.Is(err, evidence.ErrNoChatModel) || r.Project() != before {
		t.Errorf("criteria without a model: %v", err)
	}

	// Decisions and corrections, saved as they come.
	if err := r.Decide(ids[0], false, " "); err == nil {
		t.Error("an exclusion without a reason")
	}
	if err := r.Decide(ids[0], true, ""); err != nil {
		t.Fatal(err)
	}
	if v := r.EditValue(ids[0], "patients", "999"); !v.Edited || v.Unsupported {
		t.Errorf("a value checked before the study's text was read: %+v", v)
	}
	if _, err := r.StudyText(ctx, ids[0]); err != nil {
		t.Fatal(err)
	}
	if _, ok := r.CachedText(ids[0]); !ok {
		t.Error("the text read is not kept")
	}
	if v := r.EditValue(ids[0], "patients", "999"); !v.Unsupported {
		t.Errorf("a number in no chunk, checked against the text: %+v", v)
	}
	if err := r.EditGroup(ids[0], 0, "treatment", []string{"1", "", "", "", ""}); err == nil {
		t.Error("a correction of a result never extracted")
	}
	if err := r.Save(); err != nil {
		t.Fatal(err)
	}
	saved := savedProject(t, ws, "HCC", "the decision", func(p *evidence.Project) bool { return p.Decisions[ids[0]].Include })
	if v, _ := saved.FieldValueOf(ids[0], "patients"); v.Value != "999" || !v.Unsupported {
		t.Errorf("saved value %+v", v)
	}
	mu.Lock()
	last := statuses[len(statuses)-1]
	mu.Unlock()
	if last.Pending || last.Err != nil || last.Saved.IsZero() {
		t.Errorf("last save status %+v", last)
	}

	// Reopened, the project is as it was left; after Close a change is
	// saved at once.
	r2, err := rs.Open("HCC")
	if err != nil || !r2.Project().Decisions[ids[0]].Include {
		t.Fatalf("reopened: %v", err)
	}
	if err := r2.Close(); err != nil {
		t.Fatal(err)
	}
	r2.Undecide(ids[0])
	if p, err := ws.LoadReviewProject("HCC"); err != nil || len(p.Decisions) != 0 {
		t.Errorf("a change after Close is not saved at once: %v %+v", err, p.Decisions)
	}

	// A scratch review (the command line's) is never saved.
	sc := rs.Scratch(evidence.NewProject("scratch", "lit", reviewPICO), ReviewOptions{Concurrency: 2})
	sc.Update(func(p *evidence.Project) { p.Query = "ablation" })
	if _, err := sc.Search(ctx, 3); err != nil || len(sc.Project().Search.IDs) != 3 {
		t.Fatalf("scratch search: %v", err)
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(ws.ReviewsDir(), "scratch.json")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a scratch review was saved: %v", err)
	}

	// A review over a missing source says so.
	bad := rs.Scratch(evidence.NewProject("bad", "", reviewPICO), ReviewOptions{})
	bad.Update(func(p *evidence.Project) { p.Query = "ablation" })
	if _, err := bad.Search(ctx, 3); err == nil || !strings.Contains(err.Error(), "no literature source") {
		t.Errorf("no source: %v", err)
	}
}

package app

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/datasets"
)

// TestReviewSourceResolvedByTheWorkspacesRule: a review's literature
// source is resolved by Workspace.ResolveExisting, the rule the front ends
// use at their edge: a registered source by name or by its file's path
// (the same Source), an unknown name an *UnknownSourceError that names the
// registered sources in the product's words (no command-line flag), a
// registered source whose file is gone ErrNoDatabase.
func TestReviewSourceResolvedByTheWorkspacesRule(t *testing.T) {
	ctx := context.Background()
	ws := openTemp(t)
	db := filepath.Join(t.TempDir(), "lit.sqlite")
	writeDemoLiterature(t, db, 1)
	if _, err := ws.RegisterSQLite(ctx, db, "lit"); err != nil {
		t.Fatal(err)
	}
	byName, err1 := ws.ResolveExisting("lit")
	byPath, err2 := ws.ResolveExisting(db)
	if err1 != nil || err2 != nil || byName.Name != "lit" || byPath.Name != "lit" || byName.Path != db || byPath.Path != db {
		t.Errorf("by name %+v (%v), by path %+v (%v)", byName, err1, byPath, err2)
	}

	n := 0
	search := func(source string) error {
		n++
		r, err := ws.Reviews().Create(fmt.Sprintf("review %d", n), source, evidence.PICO{Population: "hepatocellular carcinoma", Intervention: "ablation"})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		r.Update(func(p *evidence.Project) { p.Query = "ablation" })
		_, err = r.Search(ctx, 10)
		return err
	}
	if err := search("lit"); err != nil {
		t.Errorf("a review on a registered source: %v", err)
	}
	err := search("litt")
	var unknown *UnknownSourceError
	if !errors.As(err, &unknown) || !slices.Equal(unknown.Known, []string{"lit"}) ||
		!strings.Contains(err.Error(), `opening the literature of review review 2: there is no data source named "litt" and no database file `) ||
		!strings.HasSuffix(err.Error(), "; the data sources are: lit") || strings.Contains(err.Error(), "--") {
		t.Errorf("a review on an unknown source: %v", err)
	}
	if err := os.Remove(db); err != nil {
		t.Fatal(err)
	}
	if err := search("lit"); !errors.Is(err, datasets.ErrNoDatabase) || !strings.Contains(err.Error(), `the database file of the data source "lit" is gone`) {
		t.Errorf("a registered source whose file is gone: %v", err)
	}
	if _, err := ws.ResolveExisting(""); !errors.Is(err, ErrNoSource) {
		t.Errorf("nothing named: %v", err)
	}
}

package omop

import (
	"context"
	"database/sql"
	"path/filepath"
	"sync"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/datasets/realdata"
)

// synthea holds the Synthea27Nj OMOP CDM imported once per test binary.
var synthea struct {
	once sync.Once
	path string
	err  error
}

// syntheaDB imports ../shared/data/omop-cdm-5.4/synthea27nj (real data
// beside the project; the test fails in CI without it) into a temporary
// database once and opens it read-only.
func syntheaDB(t *testing.T) *sql.DB {
	t.Helper()
	dir := realdata.Path(t, "omop-cdm-5.4", "synthea27nj")
	synthea.once.Do(func() {
		tmp, err := tempDir()
		if err != nil {
			synthea.err = err
			return
		}
		synthea.path = filepath.Join(tmp, "synthea27nj.sqlite")
		ctx := context.Background()
		db, err := datasets.OpenReadWrite(ctx, synthea.path)
		if err != nil {
			synthea.err = err
			return
		}
		defer db.Close()
		_, synthea.err = datasets.ImportOMOP(ctx, db, dir, datasets.OMOPOptions{})
	})
	if synthea.err != nil {
		t.Fatal(synthea.err)
	}
	db, err := datasets.OpenReadOnly(context.Background(), synthea.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// resolver returns a resolver over db.
func resolver(t *testing.T, db *sql.DB) *Resolver {
	t.Helper()
	r, err := NewResolver(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// demoOMOP holds the demo OMOP source generated once per test binary.
var demoOMOP struct {
	once sync.Once
	path string
	err  error
}

// demoDB generates the demo population (600 patients) and its OMOP source
// once and opens the latter read-only.
func demoDB(t *testing.T) *sql.DB {
	t.Helper()
	demoOMOP.once.Do(func() {
		tmp, err := tempDir()
		if err != nil {
			demoOMOP.err = err
			return
		}
		ctx := context.Background()
		from := filepath.Join(tmp, "demo.db")
		if _, err := demo.Generate(ctx, from, demo.Options{Seed: demo.DefaultSeed, Patients: 600}); err != nil {
			demoOMOP.err = err
			return
		}
		demoOMOP.path = filepath.Join(tmp, "demo-omop.db")
		_, demoOMOP.err = demo.GenerateOMOP(ctx, from, demoOMOP.path, demo.OMOPOptions{})
	})
	if demoOMOP.err != nil {
		t.Fatal(demoOMOP.err)
	}
	db, err := datasets.OpenReadOnly(context.Background(), demoOMOP.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

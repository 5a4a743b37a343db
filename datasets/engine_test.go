package datasets

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestSQLiteEngine checks the SQLite runner behind the Engine interface:
// the same results, refusals and catalog as through Runner and ReadCatalog.
func TestSQLiteEngine(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "e.sqlite")
	db, err := OpenReadWrite(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.ExecContext(ctx, "CREATE TABLE patients(subject_id INTEGER PRIMARY KEY, gender TEXT); INSERT INTO patients VALUES (1, 'F'), (2, 'M')"); err != nil {
		t.Fatal(err)
	}
	db.Close()
	var e Engine
	se, err := NewSQLiteEngine(ctx, path, RunnerOptions{MaxRows: 1})
	if err != nil {
		t.Fatal(err)
	}
	e = se
	defer e.Close()
	if e.Dialect() != DialectSQLite || e.Describe() != "SQLite database "+path || e.Options().MaxRows != 1 {
		t.Errorf("dialect %q describe %q options %+v", e.Dialect(), e.Describe(), e.Options())
	}
	res, err := e.Query(ctx, "SELECT gender FROM patients ORDER BY subject_id")
	if err != nil || len(res.Rows) != 1 || res.Rows[0][0] != "F" || res.TruncatedBy != CapRows {
		t.Fatalf("query: %+v, %v", res, err)
	}
	var refused *RefusedError
	if _, err := e.Query(ctx, "DELETE FROM patients"); !errors.As(err, &refused) {
		t.Errorf("DELETE: %v", err)
	}
	if err := e.Check(ctx, "SELECT nope FROM patients"); err == nil {
		t.Error("Check passed an unknown column")
	}
	cat, err := e.Catalog(ctx, CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if tab, ok := cat.Table("patients"); !ok || tab.RowCount != 2 || tab.Doc.Description == "" {
		t.Errorf("catalog: %+v", cat.Tables)
	}
	if (RunnerOptions{}).WithDefaults() != (RunnerOptions{Timeout: DefaultTimeout, MaxRows: DefaultMaxRows, MaxCellBytes: DefaultMaxCellBytes, MaxResultBytes: DefaultMaxResultBytes}) {
		t.Error("WithDefaults")
	}
}

// TestSchemaQualifiedTables checks a table with a schema (a PostgreSQL
// source) is written schema-qualified in the generator's text and found by
// either name.
func TestSchemaQualifiedTables(t *testing.T) {
	cat := &Catalog{Tables: []Table{
		{Name: "patients", Schema: "mimiciv_hosp", Kind: KindTable, RowCount: 100, Columns: []TableColumn{{Name: "subject_id", Type: "integer", PrimaryKey: 1}}},
		{Name: "icu.order", Schema: "icu", Kind: KindTable, RowCount: -1, Columns: []TableColumn{{Name: "x", Type: "text"}}},
		{Name: "plain", Kind: KindTable, RowCount: -1},
	}}
	for name, want := range map[string]string{"patients": "patients", "MIMICIV_HOSP.patients": "patients", "icu.order": "icu.order", "plain": "plain"} {
		if tab, ok := cat.Table(name); !ok || tab.Name != want {
			t.Errorf("Table(%q) = %v, %v", name, tab, ok)
		}
	}
	if _, ok := cat.Table("other.patients"); ok {
		t.Error("found a table under another schema")
	}
	if got := cat.Tables[0].SQLName() + " " + cat.Tables[1].SQLName() + " " + cat.Tables[2].SQLName(); got != `mimiciv_hosp.patients icu."order" plain` {
		t.Errorf("SQL names = %s", got)
	}
	if text := cat.Text("patients"); !strings.Contains(text, "CREATE TABLE mimiciv_hosp.patients (") {
		t.Errorf("text:\n%s", text)
	}
}

package postgres

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets"
)

func TestCatalog(t *testing.T) {
	d := newTestDB(t)
	d.c.Exec(t, d.name, `CREATE SCHEMA other;
CREATE TABLE other.patients (id int);
CREATE TABLE other.notes (id int PRIMARY KEY, subject_id int REFERENCES clin.patients, kind text);
INSERT INTO other.notes SELECT g, 1 + g % 3, CASE WHEN g % 2 = 0 THEN 'discharge' ELSE 'radiology' END FROM generate_series(1, 200000) g;
CREATE TABLE other.hidden (secret text);
ANALYZE;`)
	e := d.open(t, datasets.RunnerOptions{})
	ctx := context.Background()
	cat, err := e.Catalog(ctx, datasets.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tab := range cat.Tables {
		names = append(names, tab.Name)
	}
	if got := strings.Join(names, ","); got != "admissions,adults,patients" {
		t.Fatalf("tables of clin = %s", got)
	}
	p, _ := cat.Table("patients")
	if p.Schema != "clin" || p.Kind != datasets.KindTable || p.RowCount != 3 || p.RowCountEstimated {
		t.Errorf("patients: schema %q kind %q rows %d estimated %v", p.Schema, p.Kind, p.RowCount, p.RowCountEstimated)
	}
	if !strings.HasPrefix(p.Doc.Description, "One row per patient of the clinic.") {
		t.Errorf("the table comment is not the description: %q", p.Doc.Description)
	}
	age, _ := p.Column("anchor_age")
	id, _ := p.Column("subject_id")
	gender, _ := p.Column("gender")
	if age.Doc != "Age in years at the anchor year." || age.Type != "integer" || id.PrimaryKey != 1 || !gender.NotNull {
		t.Errorf("columns: %+v", p.Columns)
	}
	if !slices.Equal(gender.Samples, []string{"F", "M"}) {
		t.Errorf("gender samples = %v", gender.Samples)
	}
	a, _ := cat.Table("admissions")
	if len(a.ForeignKeys) != 1 || a.ForeignKeys[0].RefTable != "patients" || a.ForeignKeys[0].RefColumns[0] != "subject_id" {
		t.Errorf("admissions keys: %+v", a.ForeignKeys)
	}
	if typ, _ := a.Column("admission_type"); typ.Type != "character varying(40)" || !slices.Equal(typ.Samples, []string{"ELECTIVE", "URGENT"}) {
		t.Errorf("admission_type: %+v", typ)
	}
	if v, _ := cat.Table("adults"); v.Kind != datasets.KindView || v.RowCount != -1 {
		t.Errorf("view: %+v", v)
	}
	if text := cat.Text("admissions"); !strings.Contains(text, "CREATE TABLE clin.admissions (") {
		t.Errorf("text:\n%s", text)
	}

	// Two schemas: a name in both is qualified; a large table is
	// estimated and sampled; an unreadable table is left out.
	role := "reader_" + d.name
	pw := d.c.CreateRole(t, role)
	d.grantReader(t, role)
	d.c.Exec(t, d.name, "GRANT USAGE ON SCHEMA other TO "+role+"; GRANT SELECT ON other.patients, other.notes TO "+role)
	e2, err := Open(ctx, d.source(t, role, pw, "clin", "other"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer e2.Close()
	cat, err = e2.Catalog(ctx, datasets.CatalogOptions{SampleScanRows: 10_000})
	if err != nil {
		t.Fatal(err)
	}
	names = nil
	for _, tab := range cat.Tables {
		names = append(names, tab.Name)
	}
	if got := strings.Join(names, ","); got != "admissions,adults,clin.patients,notes,other.patients" {
		t.Fatalf("tables of clin, other = %s", got)
	}
	n, _ := cat.Table("notes")
	if !n.RowCountEstimated || n.RowCount < 150_000 || n.RowCount > 250_000 {
		t.Errorf("notes: rows %d estimated %v", n.RowCount, n.RowCountEstimated)
	}
	if kind, _ := n.Column("kind"); !slices.Equal(kind.Samples, []string{"discharge", "radiology"}) || !kind.SamplesPartial {
		t.Errorf("notes.kind: %+v", kind)
	}
	if len(n.ForeignKeys) != 1 || n.ForeignKeys[0].RefTable != "clin.patients" {
		t.Errorf("notes keys: %+v", n.ForeignKeys)
	}
	if exact, err := e2.CountRows(ctx, "other.notes"); err != nil || exact != 200_000 {
		t.Errorf("CountRows = %d, %v", exact, err)
	}
	if _, err := e2.CountRows(ctx, "pg_catalog.pg_class"); err == nil {
		t.Error("CountRows outside the schemas")
	}
}

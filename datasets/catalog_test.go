package datasets

import (
	"bufio"
	"compress/gzip"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/datasets/realdata"
	"github.com/clinsight/clinsight/internal/progress"
)

// newCatalogTestDB creates a database in a temporary folder from the given
// statements and returns it open read-write.
func newCatalogTestDB(t *testing.T, stmts ...string) *sql.DB {
	t.Helper()
	ctx := context.Background()
	db, err := OpenReadWrite(ctx, filepath.Join(t.TempDir(), "catalog.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	for _, s := range stmts {
		if _, err := db.ExecContext(ctx, s); err != nil {
			t.Fatalf("%s: %v", s, err)
		}
	}
	return db
}

// introspectionSchema is a small database exercising what ReadCatalog reads:
// declared types, NOT NULL, defaults, single and composite primary keys,
// implicit and composite foreign keys, a view, an FTS5 table (whose shadow
// tables must not appear) and text columns of low and high cardinality.
var introspectionSchema = []string{
	`CREATE TABLE patients (id INTEGER PRIMARY KEY, sex TEXT NOT NULL DEFAULT 'U', name VARCHAR(40))`,
	`CREATE TABLE visits (patient_id INTEGER NOT NULL REFERENCES patients, visit_no INTEGER, ward TEXT, note,
		PRIMARY KEY (patient_id, visit_no))`,
	`CREATE TABLE labs (lab_id INTEGER PRIMARY KEY, patient_id INTEGER, visit_no INTEGER, code CHAR(8), value REAL,
		FOREIGN KEY (patient_id, visit_no) REFERENCES visits (patient_id, visit_no))`,
	`CREATE TABLE codes (code TEXT PRIMARY KEY, label TEXT) WITHOUT ROWID`,
	`INSERT INTO codes VALUES ('I10', 'hypertension'), ('E11', 'type 2 diabetes'), ('J18', 'pneumonia')`,
	`CREATE VIEW female AS SELECT id, name FROM patients WHERE sex = 'F'`,
	`CREATE VIRTUAL TABLE notes_fts USING fts5(body)`,
	`INSERT INTO notes_fts (body) VALUES ('chest pain'), ('shortness of breath')`,
	`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50)
	 INSERT INTO patients (id, sex, name) SELECT i, CASE i % 2 WHEN 0 THEN 'F' ELSE 'M' END, 'name ' || i FROM n`,
	`INSERT INTO visits SELECT id, 1, CASE id % 3 WHEN 0 THEN 'icu' WHEN 1 THEN 'medicine' ELSE 'surgery' END,
		CASE WHEN id % 5 = 0 THEN 'follow-up' ELSE 7 END FROM patients`,
	`INSERT INTO labs (patient_id, visit_no, code, value) SELECT id, 1, 'L' || id, id * 1.5 FROM patients`,
}

func TestCatalogIntrospection(t *testing.T) {
	db := newCatalogTestDB(t, introspectionSchema...)
	var reports int
	cat, err := ReadCatalog(context.Background(), db, CatalogOptions{Progress: func(progress.Report) { reports++ }})
	if err != nil {
		t.Fatal(err)
	}

	var names []string
	for _, tb := range cat.Tables {
		names = append(names, tb.Name+":"+string(tb.Kind))
	}
	wantNames := []string{"codes:table", "female:view", "labs:table", "notes_fts:virtual", "patients:table", "visits:table"}
	if !reflect.DeepEqual(names, wantNames) {
		t.Fatalf("tables = %v, want %v (FTS5 shadow tables and sqlite_* skipped)", names, wantNames)
	}
	if reports != len(wantNames)+1 {
		t.Errorf("progress reports = %d, want %d", reports, len(wantNames)+1)
	}
	if cat.Profile != "" || len(cat.Profiles) != 0 {
		t.Errorf("profile = %q %v, want none for an unknown schema", cat.Profile, cat.Profiles)
	}

	type col struct {
		typ      string
		notNull  bool
		dflt     string
		pk       int
		samples  []string
		partial  bool
		docWords string
	}
	tests := []struct {
		table    string
		rows     int64
		cols     map[string]col
		fks      []ForeignKey
		joinPart string // a substring one of the generated joins must contain
	}{
		{
			table: "patients", rows: 50,
			cols: map[string]col{
				"id":   {typ: "INTEGER", pk: 1, docWords: "identifier; primary key"},
				"sex":  {typ: "TEXT", notNull: true, dflt: "'U'", samples: []string{"F", "M"}, docWords: "sex"},
				"name": {typ: "VARCHAR(40)", docWords: "name"}, // 50 distinct values: above the threshold
			},
			joinPart: "patients.id = visits.patient_id",
		},
		{
			table: "visits", rows: 50,
			cols: map[string]col{
				"patient_id": {typ: "INTEGER", notNull: true, pk: 1, docWords: "patient identifier; primary key; references patients.id"},
				"visit_no":   {typ: "INTEGER", pk: 2, docWords: "visit no; primary key"},
				"ward":       {typ: "TEXT", samples: []string{"icu", "medicine", "surgery"}, docWords: "ward"},
				"note":       {typ: "", samples: []string{"follow-up"}, docWords: "note"}, // untyped: only its text values
			},
			fks:      []ForeignKey{{Columns: []string{"patient_id"}, RefTable: "patients", RefColumns: []string{"id"}}},
			joinPart: "visits.patient_id = labs.patient_id AND visits.visit_no = labs.visit_no",
		},
		{
			table: "labs", rows: 50,
			cols: map[string]col{
				"lab_id":     {typ: "INTEGER", pk: 1, docWords: "laboratory identifier; primary key"},
				"patient_id": {typ: "INTEGER", docWords: "patient identifier; references visits.patient_id"},
				"visit_no":   {typ: "INTEGER", docWords: "visit no; references visits.visit_no"},
				"code":       {typ: "CHAR(8)", docWords: "code"},
				"value":      {typ: "REAL", docWords: "value"}, // not text: never sampled
			},
			fks: []ForeignKey{{Columns: []string{"patient_id", "visit_no"}, RefTable: "visits", RefColumns: []string{"patient_id", "visit_no"}}},
		},
		{
			table: "codes", rows: 3, // WITHOUT ROWID
			cols: map[string]col{
				"code":  {typ: "TEXT", notNull: true, pk: 1, samples: []string{"E11", "I10", "J18"}, docWords: "code; primary key"},
				"label": {typ: "TEXT", samples: []string{"hypertension", "pneumonia", "type 2 diabetes"}, docWords: "label"},
			},
		},
		{
			table: "female", rows: -1, // views are not counted by default
			cols: map[string]col{"id": {typ: "INTEGER", docWords: "identifier"}, "name": {typ: "VARCHAR(40)", docWords: "name"}},
		},
		{
			table: "notes_fts", rows: 2,
			cols: map[string]col{"body": {docWords: "body"}}, // virtual: not sampled
		},
	}
	for _, tt := range tests {
		t.Run(tt.table, func(t *testing.T) {
			tb, ok := cat.Table(strings.ToUpper(tt.table)) // lookup is case-insensitive
			if !ok {
				t.Fatalf("table %s missing", tt.table)
			}
			if tb.RowCount != tt.rows {
				t.Errorf("RowCount = %d, want %d", tb.RowCount, tt.rows)
			}
			if len(tb.Columns) != len(tt.cols) {
				t.Errorf("%d columns, want %d: %+v", len(tb.Columns), len(tt.cols), tb.Columns)
			}
			for name, want := range tt.cols {
				c, ok := tb.Column(name)
				if !ok {
					t.Errorf("column %s missing", name)
					continue
				}
				got := col{c.Type, c.NotNull, c.Default, c.PrimaryKey, c.Samples, c.SamplesPartial, c.Doc}
				if !reflect.DeepEqual(got, want) {
					t.Errorf("column %s = %+v, want %+v", name, got, want)
				}
			}
			if !reflect.DeepEqual(tb.ForeignKeys, tt.fks) {
				t.Errorf("ForeignKeys = %+v, want %+v", tb.ForeignKeys, tt.fks)
			}
			if tb.Doc.Source != GeneratedDocSource || tb.Doc.Description == "" {
				t.Errorf("Doc = %+v, want a generated description", tb.Doc)
			}
			if tt.joinPart != "" && !strings.Contains(strings.Join(tb.Doc.Joins, "\n"), tt.joinPart) {
				t.Errorf("Joins = %q, want one containing %q", tb.Doc.Joins, tt.joinPart)
			}
		})
	}
}

func TestCatalogOptions(t *testing.T) {
	db := newCatalogTestDB(t, introspectionSchema...)
	ctx := context.Background()
	samples := func(cat *Catalog, table, column string) ([]string, bool) {
		tb, _ := cat.Table(table)
		c, _ := tb.Column(column)
		return c.Samples, c.SamplesPartial
	}
	tests := []struct {
		name        string
		opts        CatalogOptions
		wantWard    []string
		wantPartial bool
		wantSex     []string
		viewRows    int64
	}{
		{"defaults", CatalogOptions{}, []string{"icu", "medicine", "surgery"}, false, []string{"F", "M"}, -1},
		{"threshold 2", CatalogOptions{MaxDistinct: 2}, nil, false, []string{"F", "M"}, -1},
		{"sampling off", CatalogOptions{MaxDistinct: -1}, nil, false, nil, -1},
		{"scan cap", CatalogOptions{SampleScanRows: 10}, []string{"icu", "medicine", "surgery"}, true, []string{"F", "M"}, -1},
		{"view stats", CatalogOptions{ViewStats: true}, []string{"icu", "medicine", "surgery"}, false, []string{"F", "M"}, 25},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat, err := ReadCatalog(ctx, db, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			if got, partial := samples(cat, "visits", "ward"); !reflect.DeepEqual(got, tt.wantWard) || partial != tt.wantPartial {
				t.Errorf("ward samples = %v partial=%v, want %v partial=%v", got, partial, tt.wantWard, tt.wantPartial)
			}
			if got, _ := samples(cat, "patients", "sex"); !reflect.DeepEqual(got, tt.wantSex) {
				t.Errorf("sex samples = %v, want %v", got, tt.wantSex)
			}
			if v, _ := cat.Table("female"); v.RowCount != tt.viewRows {
				t.Errorf("view rows = %d, want %d", v.RowCount, tt.viewRows)
			}
		})
	}

	t.Run("estimated row counts", func(t *testing.T) {
		cat, err := ReadCatalog(ctx, db, CatalogOptions{ExactCountRows: 10})
		if err != nil {
			t.Fatal(err)
		}
		for _, want := range []struct {
			table     string
			rows      int64
			estimated bool
		}{{"patients", 50, false}, {"visits", 50, true}, {"codes", 3, false}, {"notes_fts", 2, false}} {
			tb, _ := cat.Table(want.table)
			if tb.RowCount != want.rows || tb.RowCountEstimated != want.estimated {
				t.Errorf("%s: RowCount %d estimated %v, want %d %v", want.table, tb.RowCount, tb.RowCountEstimated, want.rows, want.estimated)
			}
		}
		if tb, _ := cat.Table("visits"); !strings.Contains(tb.Document(), "Table visits, about 50 rows.") {
			t.Errorf("Document() should say the count is an estimate:\n%s", tb.Document())
		}
	})

	t.Run("sparse integer primary key counted exactly", func(t *testing.T) {
		db := newCatalogTestDB(t, `CREATE TABLE p (subject_id INTEGER PRIMARY KEY, x TEXT)`,
			`INSERT INTO p VALUES (10000032, 'a'), (19999987, 'b'), (12985165, 'c')`)
		cat, err := ReadCatalog(ctx, db, CatalogOptions{ExactCountRows: 10})
		if err != nil {
			t.Fatal(err)
		}
		if tb, _ := cat.Table("p"); tb.RowCount != 3 || tb.RowCountEstimated {
			t.Errorf("RowCount %d estimated %v, want exactly 3", tb.RowCount, tb.RowCountEstimated)
		}
	})

	t.Run("broken view skipped", func(t *testing.T) {
		db := newCatalogTestDB(t, `CREATE TABLE a (x TEXT)`, `CREATE VIEW v AS SELECT x FROM a`, `DROP TABLE a`, `CREATE TABLE b (y TEXT)`)
		cat, err := ReadCatalog(ctx, db, CatalogOptions{ViewStats: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(cat.Tables) != 1 || cat.Tables[0].Name != "b" || len(cat.Skipped) != 1 || !strings.HasPrefix(cat.Skipped[0], "v: ") {
			t.Errorf("tables %+v, skipped %q; want b read and v skipped", cat.Tables, cat.Skipped)
		}
	})

	t.Run("cancelled", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := ReadCatalog(cctx, db, CatalogOptions{}); !errors.Is(err, context.Canceled) {
			t.Errorf("err = %v, want context.Canceled", err)
		}
		cctx, cancel = context.WithCancel(ctx)
		defer cancel()
		mid := CatalogOptions{Progress: func(p progress.Report) {
			if p.Done == 2 {
				cancel()
			}
		}}
		if _, err := ReadCatalog(cctx, db, mid); !errors.Is(err, context.Canceled) {
			t.Errorf("cancelled while reading: err = %v, want context.Canceled", err)
		}
	})
}

func TestCatalogSamplingStages(t *testing.T) {
	// 6,000 rows: more than the probe reads, so the shared scan decides.
	db := newCatalogTestDB(t,
		`CREATE TABLE events (id INTEGER PRIMARY KEY, status TEXT, unit TEXT, note TEXT, code TEXT)`,
		`WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 6000)
		 INSERT INTO events SELECT i,
			CASE WHEN i = 5800 THEN 'late' WHEN i % 2 = 0 THEN 'done' ELSE 'open' END, -- 3 values, one after the probe
			CASE WHEN i <= 5000 THEN 'mg' ELSE 'unit ' || i END,                       -- few in the probe, many later
			NULL,                                                                    -- no text at all
			'c' || i                                                                 -- many from the start
		 FROM n`)
	tests := []struct {
		name    string
		opts    CatalogOptions
		status  []string
		partial bool
	}{
		{"whole table", CatalogOptions{}, []string{"done", "late", "open"}, false},
		{"first 5500 rows", CatalogOptions{SampleScanRows: 5500}, []string{"done", "open"}, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat, err := ReadCatalog(context.Background(), db, tt.opts)
			if err != nil {
				t.Fatal(err)
			}
			tb, _ := cat.Table("events")
			st, _ := tb.Column("status")
			if !reflect.DeepEqual(st.Samples, tt.status) || st.SamplesPartial != tt.partial {
				t.Errorf("status samples %v partial=%v, want %v partial=%v", st.Samples, st.SamplesPartial, tt.status, tt.partial)
			}
			for _, name := range []string{"unit", "note", "code"} {
				if c, _ := tb.Column(name); c.Samples != nil {
					t.Errorf("%s samples = %v, want none", name, c.Samples)
				}
			}
		})
	}
}

func TestCatalogTextAndDocument(t *testing.T) {
	db := newCatalogTestDB(t, introspectionSchema...)
	cat, err := ReadCatalog(context.Background(), db, CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	tb, _ := cat.Table("visits")
	doc := tb.Document()
	if doc != tb.Document() {
		t.Error("Document is not deterministic")
	}
	for _, want := range []string{
		"Table visits, 50 rows.",
		"- patient_id (patient id) INTEGER: patient identifier; primary key; references patients.id",
		"- ward TEXT: ward Values: icu, medicine, surgery.",
		"Joins:\n- visits.patient_id = patients.id\n",
	} {
		if !strings.Contains(doc, want) {
			t.Errorf("Document() lacks %q:\n%s", want, doc)
		}
	}

	text := cat.Text("VISITS", "no_such_table", "visits", "labs")
	want := `-- visits (50 rows): Table "visits" with 4 columns and 50 rows. One row per patient_id, visit_no. References patients. No curated documentation: described from the database schema.
CREATE TABLE visits (
  patient_id INTEGER NOT NULL, -- patient identifier; primary key; references patients.id
  visit_no INTEGER, -- visit no; primary key
  ward TEXT, -- ward Values: 'icu', 'medicine', 'surgery'.
  note, -- note Values: 'follow-up'.
  PRIMARY KEY (patient_id, visit_no)
);
-- Joins: visits.patient_id = patients.id; visits.patient_id = labs.patient_id AND visits.visit_no = labs.visit_no
`
	if !strings.HasPrefix(text, want) {
		t.Errorf("Text() =\n%s\nwant prefix\n%s", text, want)
	}
	if strings.Count(text, "CREATE TABLE") != 2 || !strings.Contains(text, "CREATE TABLE labs (\n  lab_id INTEGER PRIMARY KEY, -- laboratory identifier; primary key\n") {
		t.Errorf("Text() should describe visits then labs once each:\n%s", text)
	}
	all := cat.Text()
	for _, w := range []string{"CREATE VIEW female (", "CREATE VIRTUAL TABLE notes_fts (", "sex TEXT NOT NULL DEFAULT 'U', -- sex Values: 'F', 'M'."} {
		if !strings.Contains(all, w) {
			t.Errorf("Text() lacks %q:\n%s", w, all)
		}
	}
}

func TestCatalogNameWords(t *testing.T) {
	tests := map[string]string{
		"d_labitems":            "d labitems",
		"SOPInstanceUID":        "sop instance uid",
		"PatientAge":            "patient age",
		"collection_cancerType": "collection cancer type",
		"ORIGINALAMOUNT":        "originalamount",
		"hadm_id":               "hadm id",
		"Lab Results-2024":      "lab results 2024",
		"icd10Code":             "icd10 code",
	}
	for in, want := range tests {
		if got := docNameWords(in); got != want {
			t.Errorf("docNameWords(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCatalogJoinTables(t *testing.T) {
	tests := map[string][]string{
		"diagnoses_icd.icd_code = d_icd_diagnoses.icd_code AND diagnoses_icd.icd_version = d_icd_diagnoses.icd_version": {"diagnoses_icd", "d_icd_diagnoses"},
		"patients.subject_id = <any event table>.subject_id":                                                            {"patients"},
		"cost.event_id = labevents.row_id AND cost.event_type = 'labevents'":                                            {"cost", "labevents"},
		"dicom_all.PatientID: patient key; group by collection_id":                                                      {"dicom_all"},
		"SOPClassUID '1.2.840.10008.5.1.4.1.1.2'":                                                                       nil,
	}
	for in, want := range tests {
		if got := docJoinTables(in); !reflect.DeepEqual(got, want) {
			t.Errorf("docJoinTables(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestCatalogDocsValid(t *testing.T) {
	docs, err := loadSchemaDocs()
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"clinsight": 1, "ehrsql-2024-mimic-iv": 17, "idc-dicom-all": 1, "mimic-iv-2.2": 31, "omop-cdm-5.4": 39}
	got := map[string]int{}
	for _, d := range docs {
		got[d.Profile] = len(d.Tables)
		if d.Title == "" || d.Source == "" {
			t.Errorf("%s: title and source required", d.file)
		}
		for name, td := range d.Tables {
			if n := len(td.Examples); n < 3 || n > 6 {
				t.Errorf("%s %s: %d examples, want 3-6", d.Profile, name, n)
			}
			if len(td.Synonyms) == 0 || len(td.Joins) == 0 {
				t.Errorf("%s %s: synonyms and joins required", d.Profile, name)
			}
		}
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("profiles and table counts = %v, want %v", got, want)
	}
	if _, err := parseSchemaDoc([]byte("profile: x\nmin_tables: 1\ntables:\n  t:\n    description: d\n    colums: {a: b}\n")); err == nil {
		t.Error("a misspelt key must be an error")
	}
	if _, err := parseSchemaDoc([]byte("profile: x\nmin_tables: 1\ntables:\n  t:\n    description: d\n    columns: {a: ''}\n")); err == nil {
		t.Error("an empty column meaning must be an error")
	}
}

// checkCurated asserts that every table of cat is documented by profile's
// curated docs, that those docs document exactly the columns the table has
// (no more, no fewer), and that the profile documents no table missing from
// the database except those in absent.
func checkCurated(t *testing.T, cat *Catalog, profile string, absent ...string) {
	t.Helper()
	docs, err := loadSchemaDocs()
	if err != nil {
		t.Fatal(err)
	}
	var sd *schemaDoc
	for i := range docs {
		if docs[i].Profile == profile {
			sd = &docs[i]
		}
	}
	if sd == nil {
		t.Fatalf("no profile %s", profile)
	}
	if cat.Profile != profile {
		t.Errorf("Profile = %q, want %q", cat.Profile, profile)
	}
	ncols := 0
	for _, tb := range cat.Tables {
		if tb.Doc.Source != profile {
			t.Errorf("%s: doc source %q, want %q", tb.Name, tb.Doc.Source, profile)
			continue
		}
		if tb.Doc.Description == "" || len(tb.Doc.Examples) == 0 || len(tb.Doc.Synonyms) == 0 {
			t.Errorf("%s: incomplete doc %+v", tb.Name, tb.Doc)
		}
		td, _ := sd.table(tb.Name)
		have := map[string]bool{}
		for _, c := range tb.Columns {
			have[strings.ToLower(c.Name)] = true
			if _, ok := td.column(c.Name); !ok {
				t.Errorf("%s.%s exists in the database but has no curated meaning", tb.Name, c.Name)
			}
			ncols++
		}
		for c := range td.Columns {
			if !have[strings.ToLower(c)] {
				t.Errorf("%s.%s is documented but does not exist in the database", tb.Name, c)
			}
		}
	}
	for name := range sd.Tables {
		if _, ok := cat.Table(name); !ok && !contains(absent, name) {
			t.Errorf("documented table %s does not exist in the database", name)
		}
	}
	t.Logf("profile %s: %d tables, %d columns documented", profile, len(cat.Tables), ncols)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// ehrsqlCatalog reads the catalog of the EHRSQL 2024 database, skipping when
// the shared data is absent.
func ehrsqlCatalog(t *testing.T, opts CatalogOptions) *Catalog {
	t.Helper()
	path := realdata.Path(t, "ehrsql-2024-mimic-iv-demo", "mimic_iv_demo.sqlite")
	ctx := context.Background()
	db, err := OpenReadOnly(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	start := time.Now()
	cat, err := ReadCatalog(ctx, db, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("ReadCatalog on %s: %d tables in %v", filepath.Base(path), len(cat.Tables), time.Since(start))
	return cat
}

func TestCatalogEHRSQLProfile(t *testing.T) {
	cat := ehrsqlCatalog(t, CatalogOptions{})
	if len(cat.Tables) != 17 {
		t.Errorf("%d tables, want 17", len(cat.Tables))
	}
	checkCurated(t, cat, "ehrsql-2024-mimic-iv")
	if len(cat.Profiles) != 1 {
		t.Errorf("Profiles = %+v, want only EHRSQL", cat.Profiles)
	}
	adm, _ := cat.Table("admissions")
	ins, _ := adm.Column("insurance")
	if !reflect.DeepEqual(ins.Samples, []string{"medicaid", "medicare", "other"}) {
		t.Errorf("admissions.insurance samples = %v", ins.Samples)
	}
	text := cat.Text("labevents", "d_labitems")
	for _, w := range []string{"2100-12-31 23:59:00", "CREATE TABLE labevents (", "itemid INT NOT NULL, -- Lab test identifier"} {
		if !strings.Contains(text, w) {
			t.Errorf("Text lacks %q:\n%s", w, text)
		}
	}
	if testing.Verbose() {
		t.Logf("Text(labevents, d_labitems):\n%s", text)
		lab, _ := cat.Table("labevents")
		t.Logf("labevents Document():\n%s", lab.Document())
	}
}

// mimicChartevents is the header of icu/chartevents.csv.gz in MIMIC-IV v2.2,
// the one file the public demo lacks.
const mimicChartevents = "subject_id,hadm_id,stay_id,caregiver_id,charttime,storetime,itemid,value,valuenum,valueuom,warning"

// mimicHeaderCatalog builds a database of empty tables named and shaped
// after the MIMIC-IV demo files' header lines and reads its catalog.
func mimicHeaderCatalog(t *testing.T, opts CatalogOptions) *Catalog {
	t.Helper()
	dir := realdata.Path(t, "mimic-iv-demo-2.2")
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.csv.gz"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no MIMIC-IV files in %s: %v", dir, err)
	}
	headers := map[string]string{"chartevents": mimicChartevents}
	for _, f := range files {
		headers[strings.TrimSuffix(filepath.Base(f), ".csv.gz")] = readGzipFirstLine(t, f)
	}
	var stmts []string
	for name, h := range headers {
		cols := strings.Split(h, ",")
		for i, c := range cols {
			cols[i] = QuoteIdent(c)
		}
		stmts = append(stmts, fmt.Sprintf("CREATE TABLE %s (%s)", QuoteIdent(name), strings.Join(cols, ", ")))
	}
	sort.Strings(stmts)
	db := newCatalogTestDB(t, stmts...)
	cat, err := ReadCatalog(context.Background(), db, opts)
	if err != nil {
		t.Fatal(err)
	}
	return cat
}

func readGzipFirstLine(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	line, err := bufio.NewReader(zr).ReadString('\n')
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return strings.TrimRight(line, "\r\n")
}

func TestCatalogMIMICProfile(t *testing.T) {
	cat := mimicHeaderCatalog(t, CatalogOptions{})
	if len(cat.Tables) != 31 {
		t.Errorf("%d tables, want 31", len(cat.Tables))
	}
	checkCurated(t, cat, "mimic-iv-2.2")
}

func TestCatalogProfileDetection(t *testing.T) {
	officialHosp := []string{
		`CREATE TABLE patients (subject_id INTEGER, gender TEXT, anchor_age INTEGER, anchor_year INTEGER, anchor_year_group TEXT, dod DATE)`,
		`CREATE TABLE admissions (subject_id INTEGER, hadm_id INTEGER, admittime TIMESTAMP, dischtime TIMESTAMP, deathtime TIMESTAMP,
			admission_type TEXT, insurance TEXT, language TEXT, marital_status TEXT, race TEXT, hospital_expire_flag INTEGER)`,
		`CREATE TABLE diagnoses_icd (subject_id INTEGER, hadm_id INTEGER, seq_num INTEGER, icd_code TEXT, icd_version INTEGER)`,
	}
	ehrsql := []string{
		`CREATE TABLE patients (row_id INT, subject_id INT, gender VARCHAR(5), dob TIMESTAMP(0), dod TIMESTAMP(0))`,
		`CREATE TABLE admissions (row_id INT, subject_id INT, hadm_id INT, admittime TIMESTAMP(0), dischtime TIMESTAMP(0),
			admission_type VARCHAR(50), admission_location VARCHAR(50), discharge_location VARCHAR(50), insurance VARCHAR(255),
			language VARCHAR(10), marital_status VARCHAR(50), age INT)`,
		`CREATE TABLE cost (row_id INT, subject_id INT, hadm_id INT, event_type VARCHAR(20), event_id INT, chargetime TIMESTAMP(0), cost DOUBLE PRECISION)`,
	}
	dicom := `CREATE TABLE dicom_all (collection_id TEXT, PatientID TEXT, PatientSex TEXT, PatientAge TEXT, Modality TEXT,
		BodyPartExamined TEXT, StudyDescription TEXT, SeriesDescription TEXT, SequenceName TEXT, Manufacturer TEXT,
		ManufacturerModelName TEXT, StationName TEXT, instance_size INTEGER, collection_cancerType TEXT, StudyInstanceUID TEXT,
		SeriesInstanceUID TEXT, SOPInstanceUID TEXT, StudyDate TEXT, SliceThickness REAL)`
	lookalike := []string{
		`CREATE TABLE patients (id INTEGER PRIMARY KEY, name TEXT, sex TEXT)`,
		`CREATE TABLE admissions (id INTEGER PRIMARY KEY, patient_id INTEGER REFERENCES patients, admitted TEXT)`,
		`CREATE TABLE diagnoses_icd (id INTEGER PRIMARY KEY, code TEXT, admission_id INTEGER)`,
	}
	tests := []struct {
		name     string
		stmts    []string
		profile  string
		profiles []string
		sources  map[string]string // table -> Doc.Source
	}{
		{"official MIMIC-IV hosp", officialHosp, "mimic-iv-2.2", []string{"mimic-iv-2.2"},
			map[string]string{"patients": "mimic-iv-2.2", "admissions": "mimic-iv-2.2"}},
		{"EHRSQL tables", ehrsql, "ehrsql-2024-mimic-iv", []string{"ehrsql-2024-mimic-iv"},
			map[string]string{"patients": "ehrsql-2024-mimic-iv", "cost": "ehrsql-2024-mimic-iv"}},
		{"demo: MIMIC hosp, imaging, metadata and an unknown table",
			append(append([]string{}, officialHosp...), dicom,
				`CREATE TABLE clinsight_metadata (key TEXT PRIMARY KEY, value TEXT)`,
				`CREATE TABLE site_notes (note_id INTEGER PRIMARY KEY, subject_id INTEGER, body TEXT)`),
			"mimic-iv-2.2", []string{"mimic-iv-2.2", "clinsight", "idc-dicom-all"},
			map[string]string{"dicom_all": "idc-dicom-all", "diagnoses_icd": "mimic-iv-2.2",
				"clinsight_metadata": "clinsight", "site_notes": GeneratedDocSource}},
		{"same names, other columns", lookalike, "", nil,
			map[string]string{"patients": GeneratedDocSource, "admissions": GeneratedDocSource}},
		{"too few MIMIC tables", officialHosp[:2], "", nil,
			map[string]string{"patients": GeneratedDocSource}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cat, err := ReadCatalog(context.Background(), newCatalogTestDB(t, tt.stmts...), CatalogOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var profiles []string
			for _, p := range cat.Profiles {
				profiles = append(profiles, p.Name)
			}
			if cat.Profile != tt.profile || !reflect.DeepEqual(profiles, tt.profiles) {
				t.Errorf("Profile = %q, Profiles = %v; want %q, %v", cat.Profile, profiles, tt.profile, tt.profiles)
			}
			for table, src := range tt.sources {
				tb, ok := cat.Table(table)
				if !ok {
					t.Fatalf("no table %s", table)
				}
				if tb.Doc.Source != src {
					t.Errorf("%s: Doc.Source = %q, want %q", table, tb.Doc.Source, src)
				}
				for _, c := range tb.Columns {
					if c.Doc == "" {
						t.Errorf("%s.%s has no meaning", table, c.Name)
					}
				}
			}
		})
	}
}

// lexicalRanker ranks table documents for a question by TF-IDF cosine
// similarity over lower-case word tokens: a deliberately simple stand-in for
// the pipeline's embedding retrieval, so that a pass says the documents
// themselves carry the clinician's vocabulary.
type lexicalRanker struct {
	names []string
	vecs  []map[string]float64
	idf   map[string]float64
}

var catalogTokenRE = regexp.MustCompile(`[a-z0-9]+`)

func catalogTokens(s string) []string {
	stop := map[string]bool{"the": true, "a": true, "an": true, "of": true, "in": true, "on": true, "to": true, "for": true,
		"and": true, "or": true, "was": true, "were": true, "is": true, "did": true, "do": true, "does": true, "what": true,
		"which": true, "how": true, "many": true, "much": true, "with": true, "by": true, "at": true, "from": true, "this": true,
		"that": true, "be": true, "as": true, "it": true, "its": true, "their": true, "they": true, "had": true, "has": true,
		"have": true, "any": true, "all": true, "per": true, "when": true, "who": true, "e": true, "g": true}
	var out []string
	for _, w := range catalogTokenRE.FindAllString(strings.ToLower(s), -1) {
		if stop[w] {
			continue
		}
		if len(w) > 4 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") {
			w = w[:len(w)-1]
		}
		out = append(out, w)
	}
	return out
}

func newLexicalRanker(cat *Catalog) *lexicalRanker {
	r := &lexicalRanker{idf: map[string]float64{}}
	df := map[string]int{}
	var tfs []map[string]float64
	for _, tb := range cat.Tables {
		tf := map[string]float64{}
		for _, w := range catalogTokens(tb.Document()) {
			tf[w]++
		}
		for w := range tf {
			df[w]++
		}
		r.names = append(r.names, tb.Name)
		tfs = append(tfs, tf)
	}
	n := float64(len(tfs))
	for w, d := range df {
		r.idf[w] = math.Log((n+1)/(float64(d)+1)) + 1
	}
	for _, tf := range tfs {
		v := map[string]float64{}
		norm := 0.0
		for w, f := range tf {
			v[w] = (1 + math.Log(f)) * r.idf[w]
			norm += v[w] * v[w]
		}
		for w := range v {
			v[w] /= math.Sqrt(norm)
		}
		r.vecs = append(r.vecs, v)
	}
	return r
}

// rank returns the table names, most similar to the question first.
func (r *lexicalRanker) rank(question string) []string {
	q := map[string]float64{}
	for _, w := range catalogTokens(question) {
		q[w] += r.idf[w] // unknown words weigh 0
	}
	scores := make([]float64, len(r.names))
	for i, v := range r.vecs {
		for w, x := range q {
			scores[i] += x * v[w]
		}
	}
	idx := make([]int, len(r.names))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	out := make([]string, len(idx))
	for i, j := range idx {
		out[i] = r.names[j]
	}
	return out
}

func TestCatalogRetrieval(t *testing.T) {
	// Questions written for this test in clinicians' words (none from the
	// EHRSQL or Text2Cohort sets); each needs the expected table.
	tests := []struct {
		catalog  string
		question string
		want     string
	}{
		{"ehrsql", "Which patients suffered a heart attack last year?", "d_icd_diagnoses"},
		{"ehrsql", "average hemoglobin blood test result for women over 70", "labevents"},
		{"ehrsql", "list every medication the patient was put on during the stay", "prescriptions"},
		{"ehrsql", "how long did her stay in intensive care last", "icustays"},
		{"ehrsql", "how many people in the cohort have died", "patients"},
		{"ehrsql", "total charges billed for the hospitalization", "cost"},
		{"ehrsql", "urine output measured after the operation", "outputevents"},
		{"ehrsql", "IV fluid intake in intensive care yesterday", "inputevents"},
		{"ehrsql", "what bug grew in the blood culture", "microbiologyevents"},
		{"ehrsql", "which ward was he moved to after the emergency department", "transfers"},
		{"ehrsql", "married patients on Medicaid", "admissions"},
		{"ehrsql", "highest pulse and temperature recorded at the bedside", "chartevents"},
		{"ehrsql", "what operation did the surgeons perform", "procedures_icd"},
		{"mimic", "latest BMI and weight at a clinic visit", "omr"},
		{"mimic", "APR severity of illness of the admission", "drgcodes"},
		{"mimic", "how many hours was the patient on the ventilator in the ICU", "procedureevents"},
		{"mimic", "doses of heparin actually administered at the bedside", "emar"},
		{"mimic", "patients with a do not resuscitate code status", "poe_detail"},
		{"mimic", "E. coli isolates resistant to ciprofloxacin", "microbiologyevents"},
		{"mimic", "which clinical team was caring for the patient, cardiology or surgery", "services"},
		{"mimic", "creatinine above 2 on any blood test", "labevents"},
	}
	// The same ranker over documentation generated from the bare schema is
	// the control: the curated text, not the table names, must do the work.
	rankers := map[string]*lexicalRanker{
		"ehrsql":           newLexicalRanker(ehrsqlCatalog(t, CatalogOptions{})),
		"mimic":            newLexicalRanker(mimicHeaderCatalog(t, CatalogOptions{})),
		"ehrsql/generated": newLexicalRanker(ehrsqlCatalog(t, CatalogOptions{GeneratedDocsOnly: true})),
		"mimic/generated":  newLexicalRanker(mimicHeaderCatalog(t, CatalogOptions{GeneratedDocsOnly: true})),
	}
	top3 := func(ranked []string, want string) (int, bool) {
		for i, n := range ranked {
			if n == want {
				return i + 1, i < 3
			}
		}
		return 0, false
	}
	controlHits := 0
	for _, tt := range tests {
		t.Run(tt.catalog+"/"+tt.question, func(t *testing.T) {
			ranked := rankers[tt.catalog].rank(tt.question)
			pos, ok := top3(ranked, tt.want)
			if !ok {
				t.Errorf("%s ranks %d, want top 3: %v", tt.want, pos, ranked[:5])
			} else {
				t.Logf("%s ranks %d: %v", tt.want, pos, ranked[:3])
			}
			if _, ok := top3(rankers[tt.catalog+"/generated"].rank(tt.question), tt.want); ok {
				controlHits++
			}
		})
	}
	t.Logf("control: generated docs put the expected table in the top 3 for %d of %d questions", controlHits, len(tests))
	if controlHits > len(tests)/2 {
		t.Errorf("control hits %d of %d: the questions are too easy to test the curated docs", controlHits, len(tests))
	}
}

// TestCatalogExamplesNotFromEHRSQL guards against evaluation leakage: no
// curated example question may be a near copy of an EHRSQL valid question.
func TestCatalogExamplesNotFromEHRSQL(t *testing.T) {
	path := realdata.Path(t, "ehrsql-2024-mimic-iv-demo", "valid", "data.json")
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var valid struct {
		Data []struct {
			Question string `json:"question"`
		} `json:"data"`
	}
	if err := json.Unmarshal(raw, &valid); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if len(valid.Data) == 0 {
		t.Fatalf("%s: no questions", path)
	}
	set := func(s string) map[string]bool {
		m := map[string]bool{}
		for _, w := range catalogTokenRE.FindAllString(strings.ToLower(s), -1) {
			m[w] = true
		}
		return m
	}
	jaccard := func(a, b map[string]bool) float64 {
		inter := 0
		for w := range a {
			if b[w] {
				inter++
			}
		}
		return float64(inter) / float64(len(a)+len(b)-inter)
	}
	var qs []map[string]bool
	for _, d := range valid.Data {
		qs = append(qs, set(d.Question))
	}
	docs, err := loadSchemaDocs()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		for name, td := range d.Tables {
			for _, ex := range td.Examples {
				e := set(ex)
				for i, q := range qs {
					if j := jaccard(e, q); j > 0.5 {
						t.Errorf("%s %s example %q is too close (%.2f) to EHRSQL valid question %q", d.Profile, name, ex, j, valid.Data[i].Question)
					}
				}
			}
		}
	}
}

func BenchmarkReadCatalogEHRSQL(b *testing.B) {
	path := realdata.Path(b, "ehrsql-2024-mimic-iv-demo", "mimic_iv_demo.sqlite")
	ctx := context.Background()
	db, err := OpenReadOnly(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	for b.Loop() {
		if _, err := ReadCatalog(ctx, db, CatalogOptions{}); err != nil {
			b.Fatal(err)
		}
	}
}

package datasets

import (
	"context"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// csvRecords counts the data records of a CSV file with encoding/csv,
// independently of the importer.
func csvRecords(t *testing.T, path string) int64 {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	var n int64
	for {
		_, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		n++
	}
	return n - 1 // header
}

// TestImportOMOPSynthea27Nj imports the Synthea27Nj OMOP CDM 5.4 instance
// (real data beside the project) and checks every table's row count against
// the CSV, the declared types, the indexes, the concept search index and
// that the catalog recognises the database and documents every CDM table
// from the official specification.
func TestImportOMOPSynthea27Nj(t *testing.T) {
	dir := realdata.Path(t, "omop-cdm-5.4", "synthea27nj")
	ctx := context.Background()
	db := newImportDB(t)
	res, err := ImportOMOP(ctx, db, dir, OMOPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	files := 0
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".csv") {
			continue
		}
		files++
		table := strings.ToLower(strings.TrimSuffix(e.Name(), ".csv"))
		want := csvRecords(t, filepath.Join(dir, e.Name()))
		var got int64
		if err := db.QueryRow("SELECT count(*) FROM " + QuoteIdent(table)).Scan(&got); err != nil {
			t.Errorf("%s: %v", table, err)
			continue
		}
		if got != want {
			t.Errorf("%s: %d rows, the CSV has %d", table, got, want)
		}
	}
	if len(res.Tables) != files {
		t.Errorf("%d tables imported, %d CSV files", len(res.Tables), files)
	}
	t.Logf("imported %d tables, %d rows; missing %v; skipped %v; %d concept names indexed in %s",
		len(res.Tables), res.Rows, res.Missing, res.Skipped, res.Concepts, res.Duration)
	if res.Rows < 290_000 {
		t.Errorf("%d rows imported, want the ~294k of Synthea27Nj", res.Rows)
	}
	for _, m := range res.Missing {
		var n int
		if err := db.QueryRow("SELECT count(*) FROM " + QuoteIdent(m)).Scan(&n); err != nil || n != 0 {
			t.Errorf("missing table %s: not created empty (%d rows, %v)", m, n, err)
		}
	}
	if res.Concepts != 2294 {
		t.Errorf("%d concept names indexed, want the 2,294 concepts", res.Concepts)
	}

	// Types from the DDL: integers stored as integers, dates and
	// datetimes as ISO text, floats as reals.
	for _, tc := range []struct{ q, want string }{
		{"SELECT DISTINCT typeof(person_id) FROM person", "integer"},
		{"SELECT DISTINCT typeof(condition_concept_id) FROM condition_occurrence", "integer"},
		{"SELECT DISTINCT typeof(condition_start_date) FROM condition_occurrence", "text"},
		{"SELECT DISTINCT typeof(birth_datetime) FROM person", "text"},
		{"SELECT DISTINCT typeof(value_as_number) FROM measurement WHERE value_as_number IS NOT NULL", "real"},
		{"SELECT type FROM pragma_table_info('drug_exposure') WHERE name = 'drug_exposure_start_datetime'", "DATETIME"},
		{"SELECT type FROM pragma_table_info('concept') WHERE name = 'concept_name'", "VARCHAR(255)"},
		{"SELECT condition_start_date || '' FROM condition_occurrence WHERE condition_occurrence_id = 1", "2002-10-15"},
	} {
		var got string
		if err := db.QueryRow(tc.q).Scan(&got); err != nil || got != tc.want {
			t.Errorf("%s = %q (%v), want %q", tc.q, got, err, tc.want)
		}
	}
	for _, idx := range []string{"idx_condition_occurrence_person_id", "idx_condition_occurrence_condition_concept_id",
		"idx_condition_occurrence_condition_start_date", "idx_drug_exposure_drug_concept_id", "idx_concept_concept_code",
		"idx_concept_relationship_concept_id_1", "idx_measurement_measurement_date"} {
		var n int
		if err := db.QueryRow("SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name = ?", idx).Scan(&n); err != nil || n != 1 {
			t.Errorf("index %s missing (%v)", idx, err)
		}
	}
	var hits int
	if err := db.QueryRow("SELECT count(*) FROM " + OMOPConceptIndex + " WHERE " + OMOPConceptIndex + " MATCH 'diabetes'").Scan(&hits); err != nil || hits == 0 {
		t.Errorf("concept index: %d hits for diabetes (%v)", hits, err)
	}

	cat, err := ReadCatalog(ctx, db, CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if cat.Profile != OMOPProfile || !IsOMOP(cat) {
		t.Fatalf("profile %q, IsOMOP %v; want %s", cat.Profile, IsOMOP(cat), OMOPProfile)
	}
	for _, name := range omopTableNames() {
		tb, ok := cat.Table(name)
		if !ok {
			t.Errorf("CDM table %s not in the catalog", name)
			continue
		}
		if tb.Doc.Source != OMOPProfile || tb.Doc.Description == "" {
			t.Errorf("CDM table %s documented by %q", name, tb.Doc.Source)
		}
		for _, c := range tb.Columns {
			if c.Doc == "" {
				t.Errorf("%s.%s undocumented", name, c.Name)
			}
		}
	}
	person, _ := cat.Table("person")
	for col, want := range map[string]string{"person_source_value": DisclosureIdentifier, "year_of_birth": DisclosureQuasiIdentifier, "person_id": ""} {
		if c, ok := person.Column(col); !ok || c.Disclosure != want {
			t.Errorf("person.%s disclosure %q, want %q", col, c.Disclosure, want)
		}
	}
}

// TestImportOMOPFolder checks the folder handling on a small hand-made
// instance: case-insensitive names, a tab-separated Athena vocabulary file
// with upper-case headers, other files skipped, missing tables created
// empty, and errors naming the file and line.
func TestImportOMOPFolder(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	writeTestFile(t, dir, "Person.csv", "person_id,gender_concept_id,year_of_birth,race_concept_id,ethnicity_concept_id\n1,8507,1950,0,0\n2,8532,1980,0,0\n")
	writeTestFile(t, dir, "concept.csv", "CONCEPT_ID\tCONCEPT_NAME\tDOMAIN_ID\tVOCABULARY_ID\tCONCEPT_CLASS_ID\tSTANDARD_CONCEPT\tCONCEPT_CODE\tVALID_START_DATE\tVALID_END_DATE\tINVALID_REASON\n"+
		"201826\tType 2 diabetes mellitus\tCondition\tSNOMED\tClinical Finding\tS\t44054006\t1970-01-01\t2099-12-31\t\n"+
		"45552366\tPatient's \"sugar\" diabetes\tCondition\tICD10CM\t4-char billing code\t\tE11.9\t1970-01-01\t2099-12-31\t\n")
	writeTestFile(t, dir, "README.txt", "not a table")
	writeTestFile(t, dir, "my_extra.csv", "a,b\n1,2\n")
	db := newImportDB(t)
	res, err := ImportOMOP(ctx, db, dir, OMOPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tables) != 2 || res.Tables[0].Table != "person" || res.Tables[1].Table != "concept" {
		t.Fatalf("tables %+v", res.Tables)
	}
	if strings.Join(res.Skipped, ",") != "README.txt,my_extra.csv" {
		t.Errorf("skipped %v", res.Skipped)
	}
	if len(res.Missing) != len(omopTableNames())-2 {
		t.Errorf("missing %d tables, want %d", len(res.Missing), len(omopTableNames())-2)
	}
	var name string
	if err := db.QueryRow("SELECT concept_name FROM concept WHERE concept_code = 'E11.9'").Scan(&name); err != nil || name != `Patient's "sugar" diabetes` {
		t.Errorf("tab-separated concept: %q, %v", name, err)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM condition_occurrence").Scan(&n); err != nil {
		t.Errorf("missing table not created: %v", err)
	}
	if res.Concepts != 2 {
		t.Errorf("%d concepts indexed, want 2", res.Concepts)
	}

	// Re-importing without Replace fails on the first existing table.
	_, err = ImportOMOP(ctx, db, dir, OMOPOptions{})
	if !errors.Is(err, ErrTableExists) {
		t.Errorf("re-import: %v, want ErrTableExists", err)
	}
	if _, err := ImportOMOP(ctx, db, dir, OMOPOptions{Replace: true}); err != nil {
		t.Errorf("re-import with Replace: %v", err)
	}

	// A broken record names the file and its line.
	bad := t.TempDir()
	writeTestFile(t, bad, "PERSON.csv", "person_id,gender_concept_id,year_of_birth\n1,8507,1950\n2,8532\n")
	_, err = ImportOMOP(ctx, newImportDB(t), bad, OMOPOptions{})
	var ie *ImportError
	if !errors.As(err, &ie) || ie.Line != 3 || !strings.Contains(err.Error(), "PERSON.csv line 3") {
		t.Errorf("broken record: %v", err)
	}

	// No CDM file at all.
	if _, err := ImportOMOP(ctx, newImportDB(t), t.TempDir(), OMOPOptions{}); !errors.Is(err, ErrNotOMOP) {
		t.Errorf("empty folder: %v, want ErrNotOMOP", err)
	}

	// Cancelled before it starts.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := ImportOMOP(cctx, newImportDB(t), dir, OMOPOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestRecordBound checks that a record longer than the bound (a lost
// closing quote) fails with the line where it starts, and that quoted line
// breaks and doubled quotes do not confuse the count.
func TestRecordBound(t *testing.T) {
	dir := t.TempDir()
	ok := "person_id,note_text\n1,\"two\nlines, \"\"quoted\"\"\"\n2,short\n"
	path := writeTestFile(t, dir, "ok.csv", ok)
	db := newImportDB(t)
	if _, err := ImportCSV(context.Background(), db, path, CSVOptions{maxRecordBytes: 40}); err != nil {
		t.Fatalf("records within the bound: %v", err)
	}
	broken := "person_id,note_text\n1,fine\n2,\"no closing quote\n" + strings.Repeat("more text\n", 20)
	path = writeTestFile(t, dir, "broken.csv", broken)
	_, err := ImportCSV(context.Background(), db, path, CSVOptions{maxRecordBytes: 64})
	var tl *RecordTooLongError
	if !errors.As(err, &tl) || tl.Line != 3 {
		t.Fatalf("unbounded record: %v, want a RecordTooLongError at line 3", err)
	}
	if !strings.Contains(err.Error(), "broken.csv") {
		t.Errorf("error does not name the file: %v", err)
	}
}

// omopTableNames returns the tables of the OMOP CDM 5.4, in the order of
// the official DDL.
func omopTableNames() []string {
	out := make([]string, len(omopCDM54Tables))
	for i, t := range omopCDM54Tables {
		out[i] = t.name
	}
	return out
}

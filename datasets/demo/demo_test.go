package demo

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/progress"
)

// sharedDir holds the default database, generated once for all tests.
var sharedDir string

var (
	defaultOnce sync.Once
	defaultPath string
	defaultSum  Summary
	defaultErr  error
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "clinsight-demo-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	sharedDir = dir
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// defaultDB returns a read-only handle on the database of DefaultOptions,
// generating it on first use.
func defaultDB(t testing.TB) (*sql.DB, Summary) {
	t.Helper()
	defaultOnce.Do(func() {
		defaultPath = filepath.Join(sharedDir, "default.db")
		defaultSum, defaultErr = Generate(context.Background(), defaultPath, DefaultOptions())
	})
	if defaultErr != nil {
		t.Fatalf("generate default database: %v", defaultErr)
	}
	return openRO(t, defaultPath), defaultSum
}

// openRO opens a database read-only for the duration of the test.
func openRO(t testing.TB, path string) *sql.DB {
	t.Helper()
	db, err := datasets.OpenReadOnly(context.Background(), path)
	if err != nil {
		t.Fatalf("open %s: %v", path, err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}

// scalar runs a query returning one value.
func scalar[T any](t *testing.T, db *sql.DB, q string, args ...any) T {
	t.Helper()
	var v T
	if err := db.QueryRow(q, args...).Scan(&v); err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	return v
}

// floats runs a query returning one numeric column.
func floats(t *testing.T, db *sql.DB, q string, args ...any) []float64 {
	t.Helper()
	rows, err := db.Query(q, args...)
	if err != nil {
		t.Fatalf("%s: %v", q, err)
	}
	defer rows.Close()
	var out []float64
	for rows.Next() {
		var v float64
		if err := rows.Scan(&v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	return s[len(s)/2]
}

// dirEntries lists the names in dir.
func dirEntries(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

func TestGenerateDefault(t *testing.T) {
	db, sum := defaultDB(t)
	t.Logf("generated in %s:\n%s", sum.Elapsed.Round(time.Millisecond), sum)
	if fi, err := os.Stat(sum.Path); err == nil {
		t.Logf("file size %.1f MB", float64(fi.Size())/1e6)
	}
	want := []string{tableMetadata, tableICDDiagnoses, tableLabItems, tablePatients, tableAdmissions,
		tableDiagnoses, tableLabEvents, tablePrescriptions, tableDicomAll}
	var got []string
	for _, tc := range sum.Tables {
		got = append(got, tc.Name)
		n := scalar[int64](t, db, "SELECT count(*) FROM "+datasets.QuoteIdent(tc.Name))
		if n != tc.Rows {
			t.Errorf("%s: summary says %d rows, table has %d", tc.Name, tc.Rows, n)
		}
	}
	if !slices.Equal(got, want) {
		t.Errorf("summary tables = %v, want %v", got, want)
	}
	if n := sum.Rows(tablePatients); n != DefaultPatients {
		t.Errorf("patients = %d, want %d", n, DefaultPatients)
	}
	for table, min := range map[string]int64{tableAdmissions: 4000, tableDiagnoses: 20000, tableLabEvents: 100000,
		tablePrescriptions: 20000, tableDicomAll: 100000, tableICDDiagnoses: 300, tableLabItems: 40} {
		if n := sum.Rows(table); n < min {
			t.Errorf("%s has %d rows, want at least %d", table, n, min)
		}
	}
	if sum.Rows("nope") != -1 {
		t.Error("Rows of an unknown table should be -1")
	}
	// The published file is a plain rollback-journal database, not WAL.
	if mode := scalar[string](t, db, "PRAGMA journal_mode"); mode == "wal" {
		t.Errorf("journal_mode = %s", mode)
	}
	if names := dirEntries(t, sharedDir); slices.ContainsFunc(names, func(n string) bool { return strings.Contains(n, ".tmp-") }) {
		t.Errorf("temporary files left: %v", names)
	}
}

func TestMetadata(t *testing.T) {
	db, _ := defaultDB(t)
	want := map[string]string{
		"collection_start": CollectionStart,
		"collection_end":   CollectionEnd,
		"generator":        Generator,
		"version":          Version,
		"seed":             fmt.Sprint(DefaultSeed),
		"patients":         fmt.Sprint(DefaultPatients),
		"synthetic":        "true",
	}
	for k, v := range want {
		if got := scalar[string](t, db, "SELECT value FROM clinsight_metadata WHERE key = ?", k); got != v {
			t.Errorf("metadata %s = %q, want %q", k, got, v)
		}
	}
}

// tableChecksums hashes every table's rows, ordered by all columns.
func tableChecksums(t *testing.T, path string) map[string]string {
	t.Helper()
	db := openRO(t, path)
	out := map[string]string{}
	for _, tc := range tableColumns {
		var order []string
		for i := 1; i <= tc.cols; i++ {
			order = append(order, fmt.Sprint(i))
		}
		rows, err := db.Query("SELECT * FROM " + datasets.QuoteIdent(tc.name) + " ORDER BY " + strings.Join(order, ", "))
		if err != nil {
			t.Fatal(err)
		}
		h := sha256.New()
		vals := make([]any, tc.cols)
		ptrs := make([]any, tc.cols)
		for i := range vals {
			ptrs[i] = &vals[i]
		}
		for rows.Next() {
			if err := rows.Scan(ptrs...); err != nil {
				t.Fatal(err)
			}
			for _, v := range vals {
				fmt.Fprintf(h, "%T:%v\x1f", v, v)
			}
			h.Write([]byte{'\x1e'})
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		rows.Close()
		out[tc.name] = hex.EncodeToString(h.Sum(nil))
	}
	return out
}

func TestDeterministic(t *testing.T) {
	dir := t.TempDir()
	gen := func(name string, seed uint64) map[string]string {
		path := filepath.Join(dir, name)
		if _, err := Generate(context.Background(), path, Options{Seed: seed, Patients: 250}); err != nil {
			t.Fatal(err)
		}
		return tableChecksums(t, path)
	}
	a, b, c := gen("a.db", 7), gen("b.db", 7), gen("c.db", 8)
	for table, sum := range a {
		if b[table] != sum {
			t.Errorf("%s differs between two runs with the same seed", table)
		}
	}
	for _, table := range []string{tablePatients, tableAdmissions, tableDiagnoses, tableLabEvents, tablePrescriptions, tableDicomAll} {
		if c[table] == a[table] {
			t.Errorf("%s is identical for seeds 7 and 8", table)
		}
	}
	for _, table := range []string{tableICDDiagnoses, tableLabItems} {
		if c[table] != a[table] {
			t.Errorf("dictionary %s depends on the seed", table)
		}
	}
}

func TestCancelLeavesNothing(t *testing.T) {
	for _, stage := range []string{"before", "reference", "clinical", "imaging", "indexes"} {
		t.Run(stage, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, "demo.db")
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			if stage == "before" {
				cancel()
			}
			opts := Options{Seed: 1, Patients: 300, Progress: func(p progress.Report) {
				if p.Stage == stage && (p.Done > 0 || stage == "indexes" || stage == "reference") {
					cancel()
				}
			}}
			_, err := Generate(ctx, path, opts)
			if !errors.Is(err, context.Canceled) {
				t.Fatalf("Generate after cancel at %s: err = %v, want context.Canceled", stage, err)
			}
			if names := dirEntries(t, dir); len(names) != 0 {
				t.Errorf("files left after cancel: %v", names)
			}
		})
	}
}

func TestRefusesExistingFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "demo.db")
	if err := os.WriteFile(path, []byte("keep me"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err := Generate(context.Background(), path, Options{Seed: 1, Patients: 20})
	if !errors.Is(err, ErrExists) {
		t.Fatalf("err = %v, want ErrExists", err)
	}
	if b, _ := os.ReadFile(path); string(b) != "keep me" {
		t.Errorf("existing file changed to %q", b)
	}
	if names := dirEntries(t, dir); len(names) != 1 {
		t.Errorf("files after refusal: %v", names)
	}
	sum, err := Generate(context.Background(), path, Options{Seed: 1, Patients: 20, Overwrite: true})
	if err != nil {
		t.Fatalf("with Overwrite: %v", err)
	}
	db := openRO(t, path)
	if n := scalar[int64](t, db, "SELECT count(*) FROM patients"); n != 20 || sum.Rows(tablePatients) != 20 {
		t.Errorf("patients = %d (summary %d), want 20", n, sum.Rows(tablePatients))
	}
	if names := dirEntries(t, dir); len(names) != 1 {
		t.Errorf("files after overwrite: %v", names)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm()&0o044 == 0 {
		t.Errorf("published file mode %v is private", fi.Mode())
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := DefaultOptions().Validate(); err != nil {
		t.Errorf("DefaultOptions: %v", err)
	}
	if o := DefaultOptions(); o.Seed != DefaultSeed || o.Patients != DefaultPatients || o.Overwrite {
		t.Errorf("DefaultOptions = %+v", o)
	}
	dir := t.TempDir()
	for _, n := range []int{0, -1, MaxPatients + 1} {
		o := Options{Patients: n}
		if err := o.Validate(); err == nil {
			t.Errorf("Patients %d accepted", n)
		}
		if _, err := Generate(context.Background(), filepath.Join(dir, "x.db"), o); err == nil {
			t.Errorf("Generate with Patients %d succeeded", n)
		}
	}
	if _, err := Generate(context.Background(), "", DefaultOptions()); err == nil {
		t.Error("empty path accepted")
	}
	if names := dirEntries(t, dir); len(names) != 0 {
		t.Errorf("files left: %v", names)
	}
}

func TestSmallestDatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "one.db")
	sum, err := Generate(context.Background(), path, Options{Seed: 3, Patients: 1})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rows(tablePatients) != 1 || sum.Rows(tableAdmissions) < 1 || sum.Rows(tableDicomAll) < 1 {
		t.Errorf("summary %v", sum)
	}
}

func TestHospitalPlausibility(t *testing.T) {
	db, _ := defaultDB(t)
	zero := []struct{ name, q string }{
		{"foreign keys", "SELECT count(*) FROM pragma_foreign_key_check"},
		{"diagnosis codes missing from d_icd_diagnoses", `SELECT count(*) FROM diagnoses_icd x
			WHERE NOT EXISTS (SELECT 1 FROM d_icd_diagnoses d WHERE d.icd_code = x.icd_code AND d.icd_version = x.icd_version)`},
		{"lab items missing from d_labitems", "SELECT count(*) FROM labevents WHERE itemid NOT IN (SELECT itemid FROM d_labitems)"},
		{"discharge not after admission", "SELECT count(*) FROM admissions WHERE dischtime <= admittime"},
		{"ED out before registration", "SELECT count(*) FROM admissions WHERE edouttime <= edregtime OR (edregtime IS NULL) <> (edouttime IS NULL)"},
		{"deathtime outside the stay or without the flag", `SELECT count(*) FROM admissions
			WHERE (deathtime IS NOT NULL) <> (hospital_expire_flag = 1) OR deathtime < admittime OR deathtime > dischtime`},
		{"died but discharge_location is not DIED", "SELECT count(*) FROM admissions WHERE hospital_expire_flag = 1 AND discharge_location <> 'DIED'"},
		{"admissions after an in-hospital death", `SELECT count(*) FROM admissions a JOIN admissions d ON d.subject_id = a.subject_id
			WHERE d.hospital_expire_flag = 1 AND a.admittime > d.deathtime`},
		{"in-hospital death without matching dod", `SELECT count(*) FROM admissions a JOIN patients p USING (subject_id)
			WHERE a.hospital_expire_flag = 1 AND p.dod IS NOT date(a.deathtime)`},
		{"dod before the last admission", `SELECT count(*) FROM patients p
			WHERE dod < (SELECT date(max(admittime)) FROM admissions a WHERE a.subject_id = p.subject_id)`},
		{"patients without admissions", "SELECT count(*) FROM patients WHERE subject_id NOT IN (SELECT subject_id FROM admissions)"},
		{"times outside the collection period", `SELECT count(*) FROM admissions, (SELECT
				(SELECT value FROM clinsight_metadata WHERE key = 'collection_start') AS s,
				(SELECT value FROM clinsight_metadata WHERE key = 'collection_end') AS e)
			WHERE admittime < s OR date(dischtime) > e OR date(edregtime) < s`},
		{"dod after the collection period", "SELECT count(*) FROM patients WHERE dod > (SELECT value FROM clinsight_metadata WHERE key = 'collection_end')"},
		{"lab results outside their admission", `SELECT count(*) FROM labevents l JOIN admissions a USING (hadm_id)
			WHERE l.charttime < a.admittime OR l.charttime > a.dischtime OR l.storetime < l.charttime
			OR date(l.storetime) > (SELECT value FROM clinsight_metadata WHERE key = 'collection_end')`},
		{"prescriptions outside their admission", `SELECT count(*) FROM prescriptions p JOIN admissions a USING (hadm_id)
			WHERE p.starttime < a.admittime OR p.stoptime > a.dischtime OR p.stoptime <= p.starttime`},
		{"lab row and admission of different patients", "SELECT count(*) FROM labevents l JOIN admissions a USING (hadm_id) WHERE l.subject_id <> a.subject_id"},
		{"ICD-9 after or ICD-10 before 2015-10-01", `SELECT count(*) FROM diagnoses_icd x JOIN admissions a USING (hadm_id)
			WHERE (x.icd_version = 9) <> (a.admittime < '2015-10-01')`},
		{"C61 (prostate cancer) for non-male patients", `SELECT count(*) FROM diagnoses_icd x JOIN patients p USING (subject_id)
			WHERE x.icd_code IN ('C61', '185', 'N400', 'N401', '60000', '60001') AND p.gender <> 'M'`},
		{"ovarian cancer for non-female patients", `SELECT count(*) FROM diagnoses_icd x JOIN patients p USING (subject_id)
			WHERE x.icd_code IN ('C569', '1830') AND p.gender <> 'F'`},
		{"abnormal flag not matching the reference range", `SELECT count(*) FROM labevents
			WHERE (flag = 'abnormal') <> (valuenum < ref_range_lower OR (ref_range_upper IS NOT NULL AND valuenum > ref_range_upper))`},
		{"diagnosis lists outside 3-15 or with gaps", `SELECT count(*) FROM (SELECT hadm_id, count(*) n, max(seq_num) m, count(DISTINCT icd_code) d
			FROM diagnoses_icd GROUP BY hadm_id) WHERE n < 3 OR n > 15 OR m <> n OR d <> n`},
		{"admissions without diagnoses", "SELECT count(*) FROM admissions WHERE hadm_id NOT IN (SELECT hadm_id FROM diagnoses_icd)"},
		{"patients with more than 5 admissions", "SELECT count(*) FROM (SELECT subject_id FROM admissions GROUP BY subject_id HAVING count(*) > 5)"},
		{"anchor_age outside 18-91", "SELECT count(*) FROM patients WHERE anchor_age < 18 OR anchor_age > 91 OR (anchor_age > 89 AND anchor_age <> 91)"},
		{"bad categories", `SELECT count(*) FROM admissions WHERE insurance NOT IN ('Medicare', 'Medicaid', 'Other')
			OR language NOT IN ('ENGLISH', '?') OR admission_type NOT IN ('AMBULATORY OBSERVATION', 'DIRECT EMER.',
			'DIRECT OBSERVATION', 'ELECTIVE', 'EU OBSERVATION', 'EW EMER.', 'OBSERVATION ADMIT',
			'SURGICAL SAME DAY ADMISSION', 'URGENT')`},
		{"malformed timestamps", `SELECT count(*) FROM admissions WHERE admittime NOT GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9] [0-9][0-9]:[0-9][0-9]:[0-9][0-9]'
			OR datetime(admittime) IS NOT admittime`},
		{"malformed dates", "SELECT count(*) FROM patients WHERE dod IS NOT NULL AND date(dod) IS NOT dod"},
	}
	for _, c := range zero {
		if n := scalar[int64](t, db, c.q); n != 0 {
			t.Errorf("%s: %d rows", c.name, n)
		}
	}

	mortality := scalar[float64](t, db, "SELECT avg(hospital_expire_flag) FROM admissions")
	t.Logf("in-hospital mortality %.2f%%", 100*mortality)
	if mortality < 0.02 || mortality > 0.05 {
		t.Errorf("in-hospital mortality %.3f outside [0.02, 0.05]", mortality)
	}
	old := scalar[float64](t, db, `SELECT avg(hospital_expire_flag) FROM admissions a JOIN patients p USING (subject_id) WHERE p.anchor_age >= 75`)
	young := scalar[float64](t, db, `SELECT avg(hospital_expire_flag) FROM admissions a JOIN patients p USING (subject_id) WHERE p.anchor_age < 50`)
	if old <= 2*young {
		t.Errorf("mortality of patients 75+ (%.3f) not well above under-50s (%.3f)", old, young)
	}
	sepsis := scalar[float64](t, db, `SELECT avg(hospital_expire_flag) FROM admissions WHERE hadm_id IN
		(SELECT hadm_id FROM diagnoses_icd WHERE icd_code IN ('A419', 'A4151', 'A4101', 'A4102', '0389') AND seq_num = 1)`)
	if sepsis <= 2*mortality {
		t.Errorf("sepsis mortality %.3f not well above overall %.3f", sepsis, mortality)
	}
	los := median(floats(t, db, "SELECT julianday(dischtime) - julianday(admittime) FROM admissions"))
	if los < 1.5 || los > 6 {
		t.Errorf("median length of stay %.1f days", los)
	}
	female := scalar[float64](t, db, `SELECT avg(p.gender = 'F') FROM diagnoses_icd x JOIN patients p USING (subject_id) WHERE x.icd_code LIKE 'C50%'`)
	if female < 0.9 {
		t.Errorf("share of women among breast cancer diagnoses %.2f", female)
	}
}

func TestLabsFollowDiagnoses(t *testing.T) {
	db, _ := defaultDB(t)
	cases := []struct {
		name   string
		itemid int
		cohort string // diagnoses_icd condition selecting the cohort
		admit  bool   // compare within admissions rather than patients
		higher bool
		factor float64
	}{
		{"creatinine with CKD (N18x)", 50912, "icd_code LIKE 'N18%'", false, true, 1.5},
		{"creatinine with AKI", 50912, "icd_code IN ('N179', 'N170')", true, true, 1.3},
		{"HbA1c with diabetes", 50852, "icd_code LIKE 'E10%' OR icd_code LIKE 'E11%'", false, true, 1.2},
		{"glucose with diabetes", 50931, "icd_code LIKE 'E10%' OR icd_code LIKE 'E11%'", false, true, 1.3},
		{"hemoglobin with anemia", 51222, "icd_code IN ('D649', 'D62', 'D631', 'D630', 'D509', 'D6481')", true, false, 1.1},
		{"troponin with myocardial infarction", 51003, "icd_code IN ('I214', 'I2109', 'I2119', 'I213')", true, true, 5},
		{"NTproBNP with heart failure", 50963, "icd_code LIKE 'I50%'", true, true, 2},
		{"lactate with sepsis", 50813, "icd_code IN ('A419', 'A4151', 'A4101', 'A4102')", true, true, 1.5},
		{"WBC with sepsis", 51301, "icd_code IN ('A419', 'A4151', 'A4101', 'A4102')", true, true, 1.3},
	}
	for _, c := range cases {
		key := "subject_id"
		if c.admit {
			key = "hadm_id"
		}
		sub := "SELECT " + key + " FROM diagnoses_icd WHERE " + c.cohort
		in := median(floats(t, db, "SELECT valuenum FROM labevents WHERE itemid = ? AND "+key+" IN ("+sub+")", c.itemid))
		out := median(floats(t, db, "SELECT valuenum FROM labevents WHERE itemid = ? AND "+key+" NOT IN ("+sub+")", c.itemid))
		t.Logf("%s: median %.3g vs %.3g", c.name, in, out)
		if c.higher && in <= c.factor*out || !c.higher && in*c.factor >= out {
			t.Errorf("%s: median %.3g vs %.3g for the rest", c.name, in, out)
		}
	}
}

func TestPrescriptionsFollowDiagnoses(t *testing.T) {
	db, _ := defaultDB(t)
	cases := []struct {
		drug, cohort string
	}{
		{"MetFORMIN%", "icd_code LIKE 'E11%' OR icd_code = '25000' OR icd_code LIKE '2504%'"},
		{"Levothyroxine%", "icd_code IN ('E039', '2449')"},
		{"Apixaban", "icd_code IN ('I4891', 'I480', 'I481', 'I482', 'I4892', '42731', '42732', 'Z86718', 'V1251', 'I82409', 'I82401', 'I2699', '45340', '41519')"},
		{"Carbidopa-Levodopa%", "icd_code IN ('G20', '3320')"},
	}
	for _, c := range cases {
		outside := scalar[int64](t, db, `SELECT count(*) FROM prescriptions WHERE drug LIKE ? AND subject_id NOT IN
			(SELECT subject_id FROM diagnoses_icd WHERE `+c.cohort+`)`, c.drug)
		inside := scalar[int64](t, db, `SELECT count(*) FROM prescriptions WHERE drug LIKE ? AND subject_id IN
			(SELECT subject_id FROM diagnoses_icd WHERE `+c.cohort+`)`, c.drug)
		if inside == 0 || outside*20 > inside {
			t.Errorf("%s: %d orders for the cohort, %d for others", c.drug, inside, outside)
		}
	}
	if n := scalar[int64](t, db, "SELECT count(DISTINCT drug) FROM prescriptions"); n < 60 {
		t.Errorf("only %d distinct drugs", n)
	}
}

func TestImagingPlausibility(t *testing.T) {
	db, _ := defaultDB(t)
	zero := []struct{ name, q string }{
		{"SequenceName outside MR", "SELECT count(*) FROM dicom_all WHERE SequenceName IS NOT NULL AND Modality <> 'MR'"},
		{"MR without SequenceName", "SELECT count(*) FROM dicom_all WHERE Modality = 'MR' AND SequenceName IS NULL"},
		{"unknown modality", "SELECT count(*) FROM dicom_all WHERE Modality NOT IN ('CT', 'MR', 'PT', 'CR', 'DX', 'MG', 'US', 'SM', 'SEG', 'RTSTRUCT')"},
		{"bad sex", "SELECT count(*) FROM dicom_all WHERE PatientSex NOT IN ('M', 'F', 'O')"},
		{"bad age string", "SELECT count(*) FROM dicom_all WHERE PatientAge IS NOT NULL AND PatientAge NOT GLOB '[0-9][0-9][0-9][YM]'"},
		{"duplicate SOPInstanceUID", "SELECT count(*) - count(DISTINCT SOPInstanceUID) FROM dicom_all"},
		{"series in two studies", "SELECT count(*) FROM (SELECT SeriesInstanceUID FROM dicom_all GROUP BY 1 HAVING count(DISTINCT StudyInstanceUID) > 1)"},
		{"study of two patients", "SELECT count(*) FROM (SELECT StudyInstanceUID FROM dicom_all GROUP BY 1 HAVING count(DISTINCT PatientID) > 1)"},
		{"patient with two sexes", "SELECT count(*) FROM (SELECT PatientID FROM dicom_all GROUP BY collection_id, PatientID HAVING count(DISTINCT PatientSex) > 1)"},
		{"bad UIDs", `SELECT count(*) FROM dicom_all WHERE length(SOPInstanceUID) > 64 OR length(StudyInstanceUID) > 64
			OR SOPInstanceUID NOT LIKE '1.2.826.0.1.3680043.8.498.%' OR SOPInstanceUID GLOB '*[^0-9.]*'`},
		{"non-positive instance_size", "SELECT count(*) FROM dicom_all WHERE instance_size <= 0"},
		{"women in prostatex", "SELECT count(*) FROM dicom_all WHERE collection_id = 'prostatex' AND PatientSex <> 'M'"},
		{"MR sequence with the wrong body part", "SELECT count(*) FROM dicom_all WHERE collection_id = 'prostatex' AND BodyPartExamined <> 'PROSTATE'"},
		{"bad StudyDate", "SELECT count(*) FROM dicom_all WHERE date(StudyDate) IS NOT StudyDate"},
	}
	for _, c := range zero {
		if n := scalar[int64](t, db, c.q); n != 0 {
			t.Errorf("%s: %d", c.name, n)
		}
	}
	if n := scalar[int64](t, db, "SELECT count(DISTINCT collection_id) FROM dicom_all"); n != int64(len(collections())) {
		t.Errorf("%d collections, want %d", n, len(collections()))
	}
}

func TestCuratedCodes(t *testing.T) {
	seen := map[string]bool{}
	icd9 := map[string]bool{}
	valid := regexp.MustCompile(`^[A-Z0-9]{3,7}$`)
	for _, list := range [][]diagCode{icd10Codes, icd9Codes} {
		for _, c := range list {
			key := fmt.Sprintf("%s/%d", c.code, c.version)
			if seen[key] {
				t.Errorf("duplicate code %s", key)
			}
			seen[key] = true
			if strings.TrimSpace(c.title) == "" || c.title != strings.TrimSpace(c.title) {
				t.Errorf("%s: bad title %q", key, c.title)
			}
			if !valid.MatchString(c.code) {
				t.Errorf("%s: code must be stored without dot, upper case", key)
			}
			if c.version == 9 {
				icd9[c.code] = true
			}
		}
	}
	for _, c := range icd10Codes {
		if c.version != 10 {
			t.Errorf("%s in the ICD-10 list has version %d", c.code, c.version)
		}
		if c.code[0] >= '0' && c.code[0] <= '9' {
			t.Errorf("%s does not look like an ICD-10-CM code", c.code)
		}
	}
	for _, c := range icd9Codes {
		if c.version != 9 || c.icd9 != "" {
			t.Errorf("ICD-9 entry %s: version %d, equivalent %q", c.code, c.version, c.icd9)
		}
	}
	for _, c := range icd10Codes {
		if c.icd9 != "" && !icd9[c.icd9] {
			t.Errorf("%s maps to ICD-9 %s, which is not in the list", c.code, c.icd9)
		}
	}
	if len(icd10Codes) < 150 {
		t.Errorf("%d ICD-10 codes, want at least 150", len(icd10Codes))
	}
	// The codes the product relies on.
	for _, code := range strings.Fields(`E119 E1165 E1122 E109 I10 I110 I130 I5021 I5022 I5023 I5031 I5032 I5033 I509
		I214 I2109 I2119 I213 I4891 I480 I481 I482 N183 N184 N185 N186 N179 A419 A4151 R6520 R6521 J189 J181 J159
		J449 J441 J45909 I639 I634 C349 C3490 C509 C50911 C61 C189 C20 C250 C220 C649 C679 C719 C910 C920 C833 C851
		E6601 E669 E785 E7800 E039 F329 F339 F419 F1010 F1020 F1120 F0390 G309 G20 G40909 D649 D62 K922 K7460 K7030
		K859 N390 I82409 I2699 U071 S72001A M810 M069 M329 B20 B182 G4733 K219 L89159 R410 F05 E876 E871`) {
		if !seen[code+"/10"] {
			t.Errorf("ICD-10 %s missing", code)
		}
	}
	for _, code := range strings.Fields("4019 25000 41401 42731 5849 0389") {
		if !seen[code+"/9"] {
			t.Errorf("ICD-9 %s missing", code)
		}
	}
	// Every code the generator can emit is in the dictionary.
	used := slices.Clone(incidentalCodes)
	for _, c := range cancers {
		used = append(used, c.codes...)
	}
	for _, code := range used {
		if !seen[code+"/10"] {
			t.Errorf("generator code %s missing from the dictionary", code)
		}
	}
}

func TestReferenceTables(t *testing.T) {
	ids := map[int]bool{}
	for i, it := range labItems {
		if it.itemid == 0 || it.label == "" || it.fluid == "" || it.category == "" {
			t.Errorf("lab %d incomplete: %+v", i, it)
		}
		if ids[it.itemid] {
			t.Errorf("duplicate itemid %d", it.itemid)
		}
		ids[it.itemid] = true
		if it.hi > 0 && it.hi <= it.lo || it.hiF > 0 && it.hiF <= it.loF {
			t.Errorf("%s: bad reference range", it.label)
		}
	}
	for i, d := range drugs {
		if d.drug == "" || d.route == "" || d.dose == "" || d.doseUnit == "" || d.formularyCD == "" {
			t.Errorf("drug %d incomplete: %+v", i, d)
		}
	}
	cols := map[string]bool{}
	for _, c := range collections() {
		if cols[c.id] {
			t.Errorf("duplicate collection %s", c.id)
		}
		cols[c.id] = true
		for _, st := range c.studyTypes {
			for _, s := range st.series {
				if sopClass(s.modality) == "" {
					t.Errorf("%s: unknown modality %s", c.id, s.modality)
				}
				if (s.modality == "MR") != (s.seq != [3]string{}) {
					t.Errorf("%s %s: sequence names must be set for MR only", c.id, s.desc)
				}
			}
		}
	}
}

func BenchmarkGenerate(b *testing.B) {
	dir := b.TempDir()
	opts := DefaultOptions()
	opts.Overwrite = true
	var total time.Duration
	for i := 0; i < b.N; i++ {
		sum, err := Generate(context.Background(), filepath.Join(dir, "bench.db"), opts)
		if err != nil {
			b.Fatal(err)
		}
		total += sum.Elapsed
	}
	b.ReportMetric(total.Seconds()/float64(b.N), "s/generate")
}

package demo

import (
	"context"
	"encoding/csv"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/realdata"
)

// smallOMOP generates a 300-patient demo and its OMOP source in dir.
func smallOMOP(t *testing.T, dir string) (from, to string, sum Summary) {
	t.Helper()
	ctx := context.Background()
	from = filepath.Join(dir, "demo.db")
	if _, err := Generate(ctx, from, Options{Seed: 7, Patients: 300}); err != nil {
		t.Fatal(err)
	}
	to = filepath.Join(dir, "omop.db")
	sum, err := GenerateOMOP(ctx, from, to, OMOPOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return from, to, sum
}

// TestGenerateOMOP checks the demo OMOP source against the demo database
// it comes from: one person per patient, one visit per admission, one
// condition per diagnosis (mapped ones with their SNOMED concept), one drug
// exposure per order, the catalog recognising an OMOP CDM, and ICD codes
// reaching their standard concepts through 'Maps to'.
func TestGenerateOMOP(t *testing.T) {
	from, to, sum := smallOMOP(t, t.TempDir())
	src := openRO(t, from)
	db := openRO(t, to)
	for _, tc := range []struct{ omop, demo string }{
		{"SELECT count(*) FROM person", "SELECT count(*) FROM patients"},
		{"SELECT count(*) FROM visit_occurrence", "SELECT count(*) FROM admissions"},
		{"SELECT count(*) FROM condition_occurrence", "SELECT count(*) FROM diagnoses_icd"},
		{"SELECT count(*) FROM drug_exposure", "SELECT count(*) FROM prescriptions"},
		{"SELECT count(*) FROM death", "SELECT count(*) FROM patients WHERE dod IS NOT NULL"},
		{"SELECT count(*) FROM person WHERE gender_concept_id = 8532", "SELECT count(*) FROM patients WHERE gender = 'F'"},
		// Type 2 diabetes: E11.x / 250.x0 codes whose concept is T2DM or a
		// descendant of it.
		{"SELECT count(DISTINCT person_id) FROM condition_occurrence WHERE condition_concept_id IN (SELECT descendant_concept_id FROM concept_ancestor WHERE ancestor_concept_id = 201826)",
			"SELECT count(DISTINCT subject_id) FROM diagnoses_icd WHERE icd_code IN ('E119','E1165','E11649','E1169','E1110','E1151','E1140','E1142') OR (icd_version = 9 AND icd_code IN ('25000','25010','25080','25070','25060'))"},
		{"SELECT count(DISTINCT person_id) FROM drug_exposure WHERE drug_concept_id IN (SELECT descendant_concept_id FROM concept_ancestor WHERE ancestor_concept_id = 1503297)",
			"SELECT count(DISTINCT subject_id) FROM prescriptions WHERE formulary_drug_cd = 'METF500'"},
	} {
		a := scalar[int64](t, db, tc.omop)
		b := scalar[int64](t, src, tc.demo)
		if a != b || a == 0 {
			t.Errorf("%s = %d, demo %s = %d", tc.omop, a, tc.demo, b)
		}
	}
	if n := sum.Rows("person"); n != 300 {
		t.Errorf("summary: %d persons", n)
	}
	// Mapped diagnoses carry a standard concept; unmapped ones 0 and their
	// source code.
	mapped := scalar[float64](t, db, "SELECT avg(condition_concept_id <> 0) FROM condition_occurrence")
	if mapped < 0.5 {
		t.Errorf("only %.0f%% of the diagnoses are mapped", 100*mapped)
	}
	bad := scalar[int64](t, db, `SELECT count(*) FROM condition_occurrence co JOIN concept c ON c.concept_id = co.condition_concept_id
		WHERE coalesce(c.standard_concept, '') <> 'S' OR c.domain_id <> 'Condition'`)
	if bad != 0 {
		t.Errorf("%d condition rows with a non-standard or non-condition concept", bad)
	}
	var std int64
	if err := db.QueryRow(`SELECT cr.concept_id_2 FROM concept c JOIN concept_relationship cr ON cr.concept_id_1 = c.concept_id
		WHERE c.vocabulary_id = 'ICD10CM' AND c.concept_code = 'E11.9' AND cr.relationship_id = 'Maps to'`).Scan(&std); err != nil || std != 201826 {
		t.Errorf("E11.9 maps to %d (%v), want 201826", std, err)
	}

	cat, err := datasets.ReadCatalog(context.Background(), db, datasets.CatalogOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !datasets.IsOMOP(cat) || cat.Profile != datasets.OMOPProfile {
		t.Errorf("catalog profile %q, IsOMOP %v", cat.Profile, datasets.IsOMOP(cat))
	}
	if _, ok := cat.Table("clinsight_metadata"); !ok {
		t.Error("no clinsight_metadata")
	}

	// The output exists once; a second run is refused.
	if _, err := GenerateOMOP(context.Background(), from, to, OMOPOptions{}); !errors.Is(err, ErrExists) {
		t.Errorf("second run: %v, want ErrExists", err)
	}
}

// TestGenerateOMOPCancel checks that a cancelled generation leaves no file.
func TestGenerateOMOPCancel(t *testing.T) {
	dir := t.TempDir()
	from := filepath.Join(dir, "demo.db")
	if _, err := Generate(context.Background(), from, Options{Seed: 1, Patients: 20}); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	to := filepath.Join(dir, "omop.db")
	if _, err := GenerateOMOP(ctx, from, to, OMOPOptions{}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if names := dirEntries(t, dir); len(names) != 1 {
		t.Errorf("files left: %v", names)
	}
}

// TestOMOPDemoConceptsMatchSynthea checks that every demo concept whose id
// is not local (below 2,000,000,000) and that OHDSI's Synthea27Nj
// vocabulary also holds has OMOP's name, vocabulary and code there (real
// data beside the project).
func TestOMOPDemoConceptsMatchSynthea(t *testing.T) {
	path := realdata.Path(t, "omop-cdm-5.4", "synthea27nj", "CONCEPT.csv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	ref := map[int64][]string{}
	for {
		rec, err := r.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		id, err := strconv.ParseInt(rec[0], 10, 64)
		if err != nil {
			continue // header
		}
		ref[id] = rec
	}
	var all []demoConcept
	for _, c := range demoConditions() {
		all = append(all, c)
	}
	for _, ing := range demoIngredients() {
		all = append(all, ing.concept)
	}
	for _, c := range demoLabs() {
		all = append(all, c)
	}
	all = append(all, demoFixedConcepts...)
	checked := 0
	for _, c := range all {
		if c.id >= omopLocal {
			continue
		}
		rec, ok := ref[c.id]
		if !ok {
			continue
		}
		checked++
		if rec[1] != c.name || rec[3] != c.vocab || rec[6] != c.code {
			t.Errorf("concept %d: demo %q/%s/%s, OMOP %q/%s/%s", c.id, c.name, c.vocab, c.code, rec[1], rec[3], rec[6])
		}
	}
	t.Logf("%d demo concepts checked against Synthea27Nj", checked)
	if checked < 40 {
		t.Errorf("only %d demo concepts found in Synthea27Nj", checked)
	}
}

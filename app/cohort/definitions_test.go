package cohort

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestCriteriaFromACTEChain(t *testing.T) {
	sql := `WITH base AS (SELECT subject_id FROM patients WHERE anchor_age >= 18),
  "with diabetes" AS (SELECT subject_id FROM base WHERE subject_id IN (SELECT subject_id FROM diagnoses_icd WHERE icd_code LIKE 'E11%')),
  on_metformin AS (SELECT subject_id FROM "with diabetes" WHERE subject_id IN (SELECT subject_id FROM prescriptions WHERE drug = 'a ( b'))
SELECT * FROM on_metformin`
	if got, want := Criteria(&Answer{SQL: sql}), []string{"base", "with diabetes", "on_metformin"}; !slices.Equal(got, want) {
		t.Errorf("criteria %q, want %q", got, want)
	}
	if got := Criteria(&Answer{SQL: "SELECT 1"}); got != nil {
		t.Errorf("criteria of a plain statement %q", got)
	}
}

func TestDefinitionStoreRoundTripAndDamage(t *testing.T) {
	ctx := context.Background()
	r := openTable1Runner(t)
	counts, err := CountCohort(ctx, r, table1Cohort, "demo")
	if err != nil {
		t.Fatal(err)
	}
	want := refCount(t, r, refColumn{"SELECT DISTINCT subject_id FROM (" + strings.TrimSuffix(table1Cohort, ";") + ")"}, "SELECT COUNT(*) FROM ref")
	if counts.Patients != want || counts.PatientColumn != "subject_id" || counts.Rows <= counts.Patients {
		t.Fatalf("counts %+v, want %d patients", counts, want)
	}
	now := time.Date(2026, 11, 26, 4, 0, 0, 0, time.UTC)
	d, err := NewDefinition(&Answer{Question: "Patients over 40 on any drug?", SQL: table1Cohort}, "", DefinitionSource{Name: "demo", Kind: "demo"}, counts, now)
	if err != nil {
		t.Fatal(err)
	}
	if d.ID != "patients-over-40-on-any-drug-20261126-040000" {
		t.Errorf("id %q", d.ID)
	}
	store := DefinitionStore{Dir: filepath.Join(t.TempDir(), "cohorts")}
	if err := store.Save(d); err != nil {
		t.Fatal(err)
	}
	got, err := store.Load(d.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.SQL != d.SQL || got.Counts != d.Counts || !got.Created.Equal(d.Created) {
		t.Errorf("loaded %+v, saved %+v", got, d)
	}
	// A damaged file is reported by List and left as it is.
	bad := filepath.Join(store.Dir, "broken-1.json")
	if err := os.WriteFile(bad, []byte(`{"format": "clinsight-cohort-definition", "vers`), 0o644); err != nil {
		t.Fatal(err)
	}
	defs, problems, err := store.List()
	if err != nil || len(defs) != 1 || len(problems) != 1 || !strings.Contains(problems[0].Error(), "damaged") {
		t.Errorf("list: %d definitions, problems %v, err %v", len(defs), problems, err)
	}
	if b, _ := os.ReadFile(bad); !strings.HasSuffix(string(b), `"vers`) {
		t.Error("the damaged file was changed")
	}
	for _, in := range []string{"", "[]", `{"format":"x"}`, strings.Repeat(" ", MaxDefinitionBytes+1)} {
		if _, err := ParseDefinition(strings.NewReader(in)); err == nil {
			t.Errorf("ParseDefinition(%.20q) accepted", in)
		}
	}
	if _, err := store.Load("../x"); err == nil {
		t.Error("a path as an id was accepted")
	}
	if id := store.FreeID(d.ID); id != d.ID+"-2" {
		t.Errorf("free id %q", id)
	}
}

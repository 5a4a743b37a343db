package prescreen

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/demo"
)

// TestOMOPSummariesEqualMIMIC: the demo as an OMOP CDM (the same
// patients, person_id = subject_id) gives the same summaries as its
// MIMIC-IV-shaped tables: sex, age, date of death and the latest lab
// values with their units and times.
func TestOMOPSummariesEqualMIMIC(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "omop.sqlite")
	if _, err := demo.GenerateOMOP(ctx, testDemoPath, path, demo.OMOPOptions{}); err != nil {
		t.Fatal(err)
	}
	o, err := datasets.NewRunner(ctx, path, datasets.RunnerOptions{MaxRows: 100_000})
	if err != nil {
		t.Fatal(err)
	}
	defer o.Close()
	oc, err := ReadCohort(ctx, o, ReadOptions{Query: "SELECT person_id FROM person", PatientColumn: "person_id", MaxPatients: 30})
	if err != nil {
		t.Fatal(err)
	}
	if oc.Schema != "OMOP CDM" {
		t.Fatalf("schema %s", oc.Schema)
	}
	mc, err := ReadCohort(ctx, demoRunner(t), ReadOptions{Query: "SELECT subject_id FROM patients", PatientColumn: "subject_id", MaxPatients: 30})
	if err != nil {
		t.Fatal(err)
	}
	if len(oc.Summaries) != len(mc.Summaries) {
		t.Fatalf("%d OMOP patients, %d MIMIC", len(oc.Summaries), len(mc.Summaries))
	}
	labs := 0
	for i, m := range mc.Summaries {
		s := oc.Summaries[i]
		if s.ID != m.ID || s.Sex != m.Sex || s.Age != m.Age || s.HasAge != m.HasAge || s.Deceased != m.Deceased || dateOf(s.Died) != dateOf(m.Died) {
			t.Errorf("patient %s: OMOP %s %v %v %q, MIMIC %s %v %v %q", m.ID, s.Sex, s.Age, s.Deceased, s.Died, m.Sex, m.Age, m.Deceased, m.Died)
		}
		for _, key := range []string{"creatinine", "hba1c", "platelets", "hemoglobin", "potassium"} {
			mv, mok := m.Labs[key]
			ov, ook := s.Labs[key]
			if mok != ook || mok && (mv.Value != ov.Value || mv.Unit != ov.Unit || mv.Time != ov.Time) {
				t.Errorf("patient %s %s: OMOP %+v (%v), MIMIC %+v (%v)", m.ID, key, ov, ook, mv, mok)
			}
			if mok {
				labs++
			}
		}
		if (len(m.Medications) > 0) != (len(s.Medications) > 0) || (len(m.Diagnoses) > 0) != (len(s.Diagnoses) > 0) {
			t.Errorf("patient %s: OMOP %d diagnoses %d medications, MIMIC %d %d", m.ID, len(s.Diagnoses), len(s.Medications), len(m.Diagnoses), len(m.Medications))
		}
	}
	if labs == 0 {
		t.Error("no lab value compared")
	}
}

package prescreen

import (
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/trials"
)

func patient(age float64, sex trials.Sex, labs ...LabValue) *Summary {
	s := &Summary{ID: "1", Age: age, HasAge: age > 0, Sex: sex, RefDate: "2180-03-01 10:00:00", Labs: map[string]LabValue{}}
	for _, l := range labs {
		s.Labs[l.Analyte] = l
	}
	return s
}

func lab(key string, v float64, unit string) LabValue {
	return LabValue{Analyte: key, Value: v, Unit: unit, Time: "2180-03-02 08:00:00"}
}

// evalOne evaluates one criterion of a trial without age or sex limits.
func evalOne(t *testing.T, kind trials.CriterionKind, text string, s *Summary, el *trials.Eligibility) CriterionResult {
	t.Helper()
	tr := &trials.Trial{ID: "NCT1", Sex: trials.SexAll}
	if kind == trials.Inclusion {
		tr.Inclusion = []string{text}
	} else {
		tr.Exclusion = []string{text}
	}
	rs := Evaluate(tr, s, el)
	if len(rs) != 1 {
		t.Fatalf("%q: %d results, want 1: %+v", text, len(rs), rs)
	}
	return rs[0]
}

func TestEvaluateLabAndAgeCriteria(t *testing.T) {
	cr21 := patient(64, trials.SexMale, lab("creatinine", 2.1, "mg/dL"))
	cr09 := patient(64, trials.SexMale, lab("creatinine", 0.9, "mg/dL"))
	none := patient(64, trials.SexMale)
	cases := []struct {
		name   string
		kind   trials.CriterionKind
		text   string
		s      *Summary
		want   Status
		reason string // a part of the reason
	}{
		{"creatinine 2.1 fails < 1.5", trials.Inclusion, "Creatinine < 1.5 mg/dL", cr21, NotEligible, "Creatinine 2.1 mg/dL on 2180-03-02 does not meet Creatinine < 1.5 mg/dL"},
		{"creatinine 0.9 meets < 1.5", trials.Inclusion, "creatinine < 1.5", cr09, Eligible, "Creatinine 0.9 mg/dL on 2180-03-02 meets"},
		{"no creatinine is unknown", trials.Inclusion, "Creatinine < 1.5 mg/dL", none, Unknown, "no value recorded"},
		{"µmol/L criterion, mg/dL value", trials.Inclusion, "Serum creatinine < 133 µmol/L", cr21, NotEligible, "= 185.68 µmol/L"},
		{"µmol/L value, mg/dL criterion", trials.Inclusion, "Creatinine < 1.5 mg/dL", patient(50, trials.SexFemale, lab("creatinine", 80, "µmol/L")), Eligible, "80 µmol/L"},
		{"unit that cannot be reconciled", trials.Inclusion, "Creatinine < 1.5 mg/dL", patient(50, trials.SexFemale, lab("creatinine", 80, "mg/L")), Unknown, "cannot be reconciled"},
		{"HbA1c in range", trials.Inclusion, "HbA1c between 7 and 10%", patient(50, trials.SexFemale, lab("hba1c", 8.1, "%")), Eligible, "HbA1c 8.1% on 2180-03-02 meets HbA1c 7–10%"},
		{"HbA1c above range", trials.Inclusion, "HbA1c between 7 and 10%", patient(50, trials.SexFemale, lab("hba1c", 10.4, "%")), NotEligible, ""},
		{"HbA1c mmol/mol criterion", trials.Inclusion, "HbA1c of 53 to 86 mmol/mol", patient(50, trials.SexFemale, lab("hba1c", 8.1, "%")), Eligible, "mmol/mol"},
		{"no HbA1c", trials.Inclusion, "HbA1c between 7 and 10%", none, Unknown, ""},
		{"age out of range", trials.Inclusion, "Age 18–75", patient(80, trials.SexMale), NotEligible, "age 80 at 2180-03-01 does not meet Age 18–75"},
		{"age in range", trials.Inclusion, "Aged 18 to 80 years", patient(80, trials.SexMale), Eligible, ""},
		{"no age", trials.Inclusion, "Age 18–75", patient(0, trials.SexMale), Unknown, "not recorded"},
		{"eGFR from creatinine, exclusion met", trials.Exclusion, "eGFR below 30 mL/min/1.73 m2", patient(70, trials.SexMale, lab("creatinine", 3.0, "mg/dL")), NotEligible, "CKD-EPI 2021 from creatinine 3 mg/dL"},
		{"eGFR ≥ 60 fails", trials.Inclusion, "eGFR ≥ 60", cr21, NotEligible, "eGFR 35 mL/min/1.73 m² on 2180-03-02 (CKD-EPI 2021"}, // 142 × (2.1/0.9)^−1.2 × 0.9938^64 = 34.50,
		{"eGFR measured wins", trials.Inclusion, "eGFR ≥ 60", patient(70, trials.SexMale, lab("creatinine", 3.0, "mg/dL"), lab("egfr", 65, "mL/min/1.73 m2")), Eligible, "eGFR 65"},
		{"exclusion not met", trials.Exclusion, "Serum creatinine > 1.5 mg/dL", cr09, Eligible, ""},
		{"exclusion without the value", trials.Exclusion, "Serum creatinine > 1.5 mg/dL", none, Unknown, ""},
		{"partial criterion met is unknown", trials.Inclusion, "Type 2 diabetes with HbA1c between 7 and 10%", patient(50, trials.SexFemale, lab("hba1c", 8.1, "%")), Unknown, "not assessed"},
		{"partial criterion failed", trials.Inclusion, "Type 2 diabetes with HbA1c between 7 and 10%", patient(50, trials.SexFemale, lab("hba1c", 12, "%")), NotEligible, ""},
		{"× ULN", trials.Inclusion, "ALT ≤ 3 x ULN", patient(50, trials.SexFemale, LabValue{Analyte: "alt", Value: 150, Unit: "IU/L", ULN: 40, Time: "2180-03-02"}), NotEligible, "3.75 × ULN"},
		{"× ULN without a limit", trials.Inclusion, "ALT ≤ 3 x ULN", patient(50, trials.SexFemale, lab("alt", 150, "IU/L")), Unknown, "no upper limit"},
		{"no check", trials.Inclusion, "Signed informed consent", none, Unknown, "not assessed"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := evalOne(t, c.kind, c.text, c.s, nil)
			if r.Status != c.want {
				t.Errorf("%q: %s (%s), want %s", c.text, r.Status, r.Reason, c.want)
			}
			if !strings.Contains(r.Reason, c.reason) {
				t.Errorf("%q: reason %q does not say %q", c.text, r.Reason, c.reason)
			}
		})
	}
}

func TestEvaluateWithTheModel(t *testing.T) {
	verdict := func(kind trials.CriterionKind, v trials.Verdict) *trials.Eligibility {
		return &trials.Eligibility{Verdicts: []trials.CriterionVerdict{{Criterion: trials.Criterion{Kind: kind, Index: 1}, Verdict: v, Explanation: "from the notes"}}}
	}
	hba := patient(50, trials.SexFemale, lab("hba1c", 8.1, "%"))
	// The model decides the rest of a partial criterion.
	if r := evalOne(t, trials.Inclusion, "Type 2 diabetes with HbA1c between 7 and 10%", hba, verdict(trials.Inclusion, trials.Included)); r.Status != Eligible || r.Basis != BasisBoth {
		t.Errorf("partial criterion met, model included: %s by %s", r.Status, r.Basis)
	}
	// A missing value stays unknown whatever the model says it is...
	if r := evalOne(t, trials.Inclusion, "Creatinine < 1.5 mg/dL", patient(50, trials.SexFemale), verdict(trials.Inclusion, trials.Included)); r.Status != Unknown {
		t.Errorf("missing value, model included: %s, want unknown", r.Status)
	}
	// ... and the structured value wins over the model.
	if r := evalOne(t, trials.Inclusion, "Creatinine < 1.5 mg/dL", patient(50, trials.SexFemale, lab("creatinine", 2.1, "mg/dL")), verdict(trials.Inclusion, trials.Included)); r.Status != NotEligible || r.Basis != BasisStructured {
		t.Errorf("creatinine 2.1, model included: %s by %s, want not eligible by structured values", r.Status, r.Basis)
	}
	// A criterion without a structured check takes the model's verdict.
	if r := evalOne(t, trials.Exclusion, "Pregnancy or breastfeeding", hba, verdict(trials.Exclusion, trials.NotExcluded)); r.Status != Eligible || r.Basis != BasisModel {
		t.Errorf("model not excluded: %s by %s", r.Status, r.Basis)
	}
}

func TestEvaluateRecordAndOverall(t *testing.T) {
	tr := &trials.Trial{ID: "NCT2", Sex: trials.SexFemale, MinAge: 18, MaxAge: 65, Inclusion: []string{"Diagnosis of osteoporosis"}, Exclusion: []string{"Creatinine > 2 mg/dL"}}
	man := patient(70, trials.SexMale, lab("creatinine", 1.0, "mg/dL"))
	rs := Evaluate(tr, man, nil)
	if Overall(rs) != NotEligible {
		t.Fatalf("a man of 70 for a trial of women 18-65: %s (%+v)", Overall(rs), rs)
	}
	var sex, age bool
	for _, r := range rs {
		sex = sex || r.Kind == RecordKind && strings.HasPrefix(r.Text, "Sex") && r.Status == NotEligible
		age = age || r.Kind == RecordKind && strings.HasPrefix(r.Text, "Age") && r.Status == NotEligible
	}
	if !sex || !age {
		t.Errorf("sex and age limits of the record not both failed: %+v", rs)
	}
	woman := patient(40, trials.SexFemale, lab("creatinine", 1.0, "mg/dL"))
	if got := Overall(Evaluate(tr, woman, nil)); got != Unknown {
		t.Errorf("a woman of 40: %s, want unknown (the diagnosis is not checked)", got)
	}
	dead := patient(40, trials.SexFemale, lab("creatinine", 1.0, "mg/dL"))
	dead.Deceased, dead.Died = true, "2181-01-01"
	if got := Overall(Evaluate(tr, dead, nil)); got != NotEligible {
		t.Errorf("a patient with a date of death: %s", got)
	}
}

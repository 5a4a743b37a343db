package prescreen

import (
	"testing"
)

func TestReadCriterion(t *testing.T) {
	cases := []struct {
		text    string
		want    []string // Check.String() of each check
		partial bool
		anyOf   bool
	}{
		{"Creatinine < 1.5 mg/dL", []string{"Creatinine < 1.5 mg/dL"}, false, false},
		{"creatinine < 1.5", []string{"Creatinine < 1.5"}, false, false},
		{"Serum creatinine less than 133 µmol/L", []string{"Creatinine < 133 µmol/L"}, false, false},
		{"HbA1c between 7 and 10%", []string{"HbA1c 7–10%"}, false, false},
		{"HbA1c 7.0%-10.0% at screening", []string{"HbA1c 7–10%"}, false, false},
		{"Glycated hemoglobin (HbA1c) ≥ 7% and ≤ 10%", []string{"HbA1c ≥ 7%", "HbA1c ≤ 10%"}, false, false},
		{"HbA1c of 53 to 86 mmol/mol", []string{"HbA1c 53–86 mmol/mol"}, false, false},
		{"Age 18–75", []string{"Age 18–75"}, false, false},
		{"Aged 18 to 80 years", []string{"Age 18–80 years"}, false, false},
		{"Aged 18 years or older", []string{"Age ≥ 18 years"}, false, false},
		{"Aged up to 17 years", []string{"Age ≤ 17 years"}, false, false},
		{"Children aged 6 months to 17 years", []string{"Age 0.5–17 years"}, true, false},
		{"Men or women 40 years of age or older", []string{"Age ≥ 40 years"}, false, false},
		{"≥ 18 years of age", []string{"Age ≥ 18 years"}, false, false},
		{"eGFR ≥ 60", []string{"eGFR ≥ 60"}, false, false},
		{"eGFR below 30 mL/min/1.73 m2", []string{"eGFR < 30 mL/min/1.73 m²"}, false, false},
		{"Estimated glomerular filtration rate (CKD-EPI) of at least 45 mL/min/1.73m²", []string{"eGFR ≥ 45 mL/min/1.73 m²"}, false, false},
		{"Severe renal impairment (eGFR < 30 mL/min/1.73 m2)", []string{"eGFR < 30 mL/min/1.73 m²"}, false, false},
		{"Type 2 diabetes with HbA1c between 7 and 10%", []string{"HbA1c 7–10%"}, true, false},
		{"ALT or AST > 3 x ULN", []string{"AST > 3 × ULN"}, true, false},
		{"ALT > 3 × ULN or AST > 3 × ULN", []string{"ALT > 3 × ULN", "AST > 3 × ULN"}, false, true},
		{"Platelet count ≥ 100,000/mm3", []string{"Platelets ≥ 100000 /mm3"}, false, false},
		{"Creatinine clearance < 30 mL/min", nil, false, false},
		{"Hemoglobin A1c > 10%", []string{"HbA1c > 10%"}, false, false},
		{"Hemoglobin < 9 g/dL", []string{"Hemoglobin < 9 g/dL"}, false, false},
		{"Diagnosis of type 2 diabetes mellitus", nil, false, false},
		{"Signed informed consent", nil, false, false},
		{"Uncontrolled hypertension", nil, false, false},
		{"Serum potassium > 5.5 mmol/L", []string{"Potassium > 5.5 mmol/L"}, false, false},
		// The demo trials' lab criteria.
		{"Total bilirubin ≤ 1.5 x ULN", []string{"Total bilirubin ≤ 1.5 × ULN"}, false, false},
		{"INR > 1.7", []string{"INR > 1.7"}, false, false},
		{"TSH > 4.5 mIU/L", []string{"TSH > 4.5 mIU/L"}, false, false},
		{"LDL cholesterol ≥ 70 mg/dL", []string{"LDL cholesterol ≥ 70 mg/dL"}, false, false},
		{"Lactate ≥ 2 mmol/L", []string{"Lactate ≥ 2 mmol/L"}, false, false},
		{"Hemoglobin between 8 and 11 g/dL", []string{"Hemoglobin 8–11 g/dL"}, false, false},
		{"eGFR between 25 and 75 mL/min/1.73 m2", []string{"eGFR 25–75 mL/min/1.73 m²"}, false, false},
		{"Platelet count ≥ 100 x 10^9/L", []string{"Platelets ≥ 100 ×10⁹/L"}, false, false},
		{"Serum creatinine ≥ 221 µmol/L", []string{"Creatinine ≥ 221 µmol/L"}, false, false},
	}
	for _, c := range cases {
		r := ReadCriterion(c.text)
		var got []string
		for _, ch := range r.Checks {
			got = append(got, ch.String())
		}
		if len(got) != len(c.want) {
			t.Errorf("%q: checks %q, want %q", c.text, got, c.want)
			continue
		}
		for i := range got {
			if got[i] != c.want[i] {
				t.Errorf("%q: check %d is %q, want %q", c.text, i, got[i], c.want[i])
			}
		}
		if len(got) > 0 && (r.Partial != c.partial || r.Any != c.anyOf) {
			t.Errorf("%q: partial %v any %v, want %v %v", c.text, r.Partial, r.Any, c.partial, c.anyOf)
		}
	}
}

// FuzzReadCriterion: any criterion text reads without panicking, into
// well-formed checks.
func FuzzReadCriterion(f *testing.F) {
	for _, s := range []string{"Creatinine < 1.5 mg/dL", "HbA1c between 7 and 10%", "Age 18–75", "eGFR ≥ 60", "ALT > 3 × ULN or AST > 3 × ULN",
		"Platelet count ≥ 100,000/mm3", "(((", "≥≥ 1,,5 mg/dL between and", "aged 6 months to 17 years"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		r := ReadCriterion(text)
		for _, c := range r.Checks {
			switch c.Op {
			case OpLT, OpLE, OpGT, OpGE:
			case OpBetween:
				if c.Lo > c.Hi {
					t.Fatalf("%q: between %v and %v", text, c.Lo, c.Hi)
				}
			default:
				t.Fatalf("%q: op %q", text, c.Op)
			}
			if c.Analyte != AgeKey && analyteByKey(c.Analyte) == nil {
				t.Fatalf("%q: analyte %q", text, c.Analyte)
			}
			_ = c.String()
		}
	})
}

package prescreen

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/clinsight/clinsight/app/trials"
)

// Bounds of a patient summary.
const (
	// MaxDiagnoses and MaxMedications bound what a summary lists per
	// patient (the most recent first).
	MaxDiagnoses   = 30
	MaxMedications = 30
	// narrativeDiagnoses and narrativeMedications bound what the
	// narrative the ranking reads names.
	narrativeDiagnoses   = 20
	narrativeMedications = 15
)

// Summary is the structured summary of one patient, read from the source.
type Summary struct {
	// ID is the patient's identifier in the source (subject_id,
	// person_id), as text.
	ID string `json:"id"`
	// Age in years at the reference date (the latest admission or
	// visit); HasAge is false when the source records none.
	Age    float64 `json:"age,omitempty"`
	HasAge bool    `json:"has_age"`
	// AgeCapped is set when the source records ages above 89 as one value
	// (MIMIC-IV's 91): the true age is not known.
	AgeCapped bool `json:"age_capped,omitempty"`
	// Sex is female, male or unknown.
	Sex trials.Sex `json:"sex"`
	// RefDate is the date ages and "active" refer to: the start of the
	// latest admission or visit ("" when none).
	RefDate string `json:"ref_date,omitempty"`
	// Deceased is set when the source records a date of death (Died).
	Deceased bool   `json:"deceased,omitempty"`
	Died     string `json:"died,omitempty"`
	// Diagnoses, most recent first, at most MaxDiagnoses.
	Diagnoses []Diagnosis `json:"diagnoses,omitempty"`
	// Medications, most recent first, at most MaxMedications.
	Medications []Medication `json:"medications,omitempty"`
	// Labs holds the latest value of each analyte the source records for
	// the patient, by analyte key.
	Labs map[string]LabValue `json:"labs,omitempty"`
}

// Diagnosis is one diagnosis of a patient.
type Diagnosis struct {
	Code  string `json:"code"`
	Title string `json:"title,omitempty"`
	// Date is when it was last recorded.
	Date string `json:"date,omitempty"`
	// Active is set when it was recorded at the latest admission (MIMIC)
	// or has no end date (OMOP).
	Active bool `json:"active"`
}

// Text is the title, or the code when there is none.
func (d Diagnosis) Text() string {
	if d.Title != "" {
		return d.Title
	}
	return d.Code
}

// Medication is one drug a patient was given.
type Medication struct {
	Drug string `json:"drug"`
	// Date is the latest start.
	Date string `json:"date,omitempty"`
	// Active is set when it was given at the latest admission.
	Active bool `json:"active"`
}

// LabValue is a patient's latest value of an analyte.
type LabValue struct {
	// Analyte is the analyte's key; Label the source's name of the test.
	Analyte string `json:"analyte"`
	Label   string `json:"label,omitempty"`
	// Value and Unit as recorded.
	Value float64 `json:"value"`
	Unit  string  `json:"unit,omitempty"`
	// Time is when it was taken, as the source writes it.
	Time string `json:"time,omitempty"`
	// ULN is the upper limit of the reference range recorded with it (0
	// when none).
	ULN float64 `json:"uln,omitempty"`
	// Derived says how a value not measured was computed (eGFR from
	// creatinine).
	Derived string `json:"derived,omitempty"`
}

// Date is the day of the value's time.
func (v LabValue) Date() string { return dateOf(v.Time) }

// Text writes the value: "Creatinine 2.1 mg/dL on 2180-03-02".
func (v LabValue) Text() string {
	name := v.Analyte
	if a := analyteByKey(v.Analyte); a != nil {
		name = a.Name
	}
	s := name + " " + strconv.FormatFloat(v.Value, 'f', -1, 64)
	if v.Unit == "%" {
		s += "%"
	} else if v.Unit != "" {
		s += " " + v.Unit
	}
	if d := v.Date(); d != "" {
		s += " on " + d
	}
	if v.Derived != "" {
		s += " (" + v.Derived + ")"
	}
	return s
}

// dateOf cuts a date-time to its date.
func dateOf(t string) string {
	t = strings.TrimSpace(t)
	if len(t) >= 10 && t[4] == '-' && t[7] == '-' {
		return t[:10]
	}
	return t
}

// Lab returns the patient's value of an analyte: the latest measured one,
// or for eGFR one computed from creatinine, age and sex (CKD-EPI 2021).
func (s *Summary) Lab(key string) (LabValue, bool) {
	if v, ok := s.Labs[key]; ok {
		return v, true
	}
	if key == "egfr" {
		return s.derivedEGFR()
	}
	return LabValue{}, false
}

// derivedEGFR computes eGFR by the race-free CKD-EPI 2021 creatinine
// equation: 142 × min(Scr/κ, 1)^α × max(Scr/κ, 1)^−1.200 × 0.9938^age
// (× 1.012 for women), κ 0.7 (women) or 0.9 (men), α −0.241 or −0.302.
func (s *Summary) derivedEGFR() (LabValue, bool) {
	cr, ok := s.Labs["creatinine"]
	if !ok || !s.HasAge || s.AgeCapped || s.Age < 18 || (s.Sex != trials.SexFemale && s.Sex != trials.SexMale) {
		return LabValue{}, false
	}
	a := analyteByKey("creatinine")
	scr, ok := a.convert(cr.Value, cr.Unit)
	if !ok || scr <= 0 {
		return LabValue{}, false
	}
	k, alpha, f := 0.9, -0.302, 1.0
	if s.Sex == trials.SexFemale {
		k, alpha, f = 0.7, -0.241, 1.012
	}
	r := scr / k
	e := 142 * math.Pow(math.Min(r, 1), alpha) * math.Pow(math.Max(r, 1), -1.200) * math.Pow(0.9938, s.Age) * f
	return LabValue{Analyte: "egfr", Value: roundTo(e, 0), Unit: "mL/min/1.73 m²", Time: cr.Time,
		Derived: fmt.Sprintf("CKD-EPI 2021 from creatinine %s %s, age %s, %s", num(cr.Value), cr.Unit, num(s.Age), s.Sex)}, true
}

// Narrative describes the patient in the words the trial ranking reads:
// age and sex, active and earlier diagnoses, medications and the latest
// lab values (bounded).
func (s *Summary) Narrative() string {
	var b strings.Builder
	b.WriteString("A")
	if s.HasAge {
		fmt.Fprintf(&b, " %d-year-old", int(s.Age))
	}
	switch s.Sex {
	case trials.SexFemale:
		b.WriteString(" woman")
	case trials.SexMale:
		b.WriteString(" man")
	default:
		b.WriteString(" patient")
	}
	b.WriteString(".")
	var active, past []string
	for _, d := range s.Diagnoses {
		if len(active)+len(past) == narrativeDiagnoses {
			break
		}
		if d.Active {
			active = append(active, d.Text())
		} else {
			past = append(past, d.Text())
		}
	}
	if len(active) > 0 {
		b.WriteString(" Diagnoses: " + strings.Join(active, "; ") + ".")
	}
	if len(past) > 0 {
		b.WriteString(" History of " + strings.Join(past, "; ") + ".")
	}
	var meds []string
	for _, m := range s.Medications {
		if len(meds) == narrativeMedications {
			break
		}
		meds = append(meds, m.Drug)
	}
	if len(meds) > 0 {
		b.WriteString(" Medications: " + strings.Join(meds, "; ") + ".")
	}
	var labs []string
	for _, a := range Analytes() {
		if v, ok := s.Lab(a.Key); ok {
			labs = append(labs, v.Text())
		}
	}
	if len(labs) > 0 {
		b.WriteString(" Latest labs: " + strings.Join(labs, "; ") + ".")
	}
	return b.String()
}

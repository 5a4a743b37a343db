package prescreen

import (
	"math"
	"strings"
	"sync"
)

// Analyte is a lab test that criteria name and sources record: its names
// in criteria text, the labels sources give it, its conventional unit and
// how the other units it is reported in convert to that one.
type Analyte struct {
	// Key identifies it ("creatinine").
	Key string
	// Name is how it is shown ("Creatinine").
	Name string
	// Unit is the conventional unit values are compared in ("mg/dL").
	Unit string
	// names are the words criteria use, lower case, longest first within
	// the analyte (matched on word boundaries).
	names []string
	// notFollowedBy are words that make a name mean another test
	// ("creatinine clearance").
	notFollowedBy []string
	// labels match source lab labels (d_labitems.label, OMOP concept
	// names), lower case: exact, or a prefix when it ends in "*".
	labels []string
	// units convert a value in a unit (normalised, see normUnit) to Unit.
	units map[string]conversion
	// plausible is the range of values in Unit seen in people, used to
	// tell which unit a number written without one is in.
	plausible [2]float64
}

// conversion maps a value in one unit to the conventional unit: v*Scale +
// Offset.
type conversion struct{ Scale, Offset float64 }

func (c conversion) apply(v float64) float64 { return v*c.Scale + c.Offset }

// inverse maps a value in the conventional unit back.
func (c conversion) inverse(v float64) float64 { return (v - c.Offset) / c.Scale }

func same() conversion           { return conversion{Scale: 1} }
func scale(f float64) conversion { return conversion{Scale: f} }

// countUnits are the units of blood cell counts: 10^9/L = 10^3/µL = K/µL.
func countUnits() map[string]conversion {
	return map[string]conversion{
		"k/ul": same(), "x109/l": same(),
		"/ul": scale(0.001), "/mm3": scale(0.001), "cells/ul": scale(0.001), "cells/mm3": scale(0.001),
	}
}

// Analytes are the lab tests whose criteria are checked from structured
// values. Conversions: creatinine 1 mg/dL = 88.42 µmol/L; HbA1c IFCC
// mmol/mol = 10.929 × (NGSP % − 2.15); glucose 1 mmol/L = 18.016 mg/dL;
// bilirubin 1 mg/dL = 17.1 µmol/L; lactate 1 mmol/L = 9.01 mg/dL; LDL cholesterol 1 mmol/L = 38.67
// mg/dL; triglycerides 1 mmol/L = 88.57 mg/dL; hemoglobin 1 mmol/L =
// 1.611 g/dL. They are built on first use, not at program start.
var Analytes = sync.OnceValue(func() []*Analyte {
	return []*Analyte{
		{Key: "creatinine", Name: "Creatinine", Unit: "mg/dL",
			names: []string{"serum creatinine", "plasma creatinine", "creatinine", "s-creatinine", "scr"}, notFollowedBy: []string{"clearance", "kinase", "ratio"},
			labels: []string{"creatinine", "creatinine, serum", "creatinine [mass/volume] in serum or plasma*", "creatinine [moles/volume] in serum or plasma*", "creatinine [mass/volume] in blood*"},
			units:  map[string]conversion{"mg/dl": same(), "umol/l": scale(1 / 88.42)}, plausible: [2]float64{0.1, 25}},
		{Key: "hba1c", Name: "HbA1c", Unit: "%",
			names:  []string{"glycated hemoglobin", "glycated haemoglobin", "glycosylated hemoglobin", "glycosylated haemoglobin", "hemoglobin a1c", "haemoglobin a1c", "hb a1c", "hba1c", "hba 1c", "a1c"},
			labels: []string{"% hemoglobin a1c", "hemoglobin a1c", "hba1c", "hemoglobin a1c/hemoglobin.total in blood*"},
			units:  map[string]conversion{"%": same(), "percent": same(), "mmol/mol": {Scale: 1 / 10.929, Offset: 2.15}}, plausible: [2]float64{3, 20}},
		{Key: "egfr", Name: "eGFR", Unit: "mL/min/1.73 m²",
			names:  []string{"estimated glomerular filtration rate", "glomerular filtration rate", "estimated gfr", "egfr", "gfr"},
			labels: []string{"egfr", "estimated gfr (mdrd equation)", "estimated gfr", "glomerular filtration rate/1.73 sq m.predicted*"},
			units:  map[string]conversion{"ml/min/1.73m2": same(), "ml/min": same()}, plausible: [2]float64{1, 200}},
		{Key: "glucose", Name: "Glucose", Unit: "mg/dL",
			names:  []string{"fasting plasma glucose", "fasting blood glucose", "fasting glucose", "plasma glucose", "blood glucose", "glucose", "fpg"},
			labels: []string{"glucose", "glucose [mass/volume] in serum or plasma*", "glucose [mass/volume] in blood*"},
			units:  map[string]conversion{"mg/dl": same(), "mmol/l": scale(18.016)}, plausible: [2]float64{20, 1500}},
		{Key: "hemoglobin", Name: "Hemoglobin", Unit: "g/dL",
			names: []string{"hemoglobin", "haemoglobin", "hgb", "hb"}, notFollowedBy: []string{"a1c", "a 1c", "1c"},
			labels: []string{"hemoglobin", "hemoglobin [mass/volume] in blood*"},
			units:  map[string]conversion{"g/dl": same(), "g/l": scale(0.1), "mmol/l": scale(1.611)}, plausible: [2]float64{2, 25}},
		{Key: "platelets", Name: "Platelets", Unit: "×10⁹/L",
			names:  []string{"platelet count", "platelets", "plt"},
			labels: []string{"platelet count", "platelets", "platelets [#/volume] in blood*"},
			units:  countUnits(), plausible: [2]float64{1, 2000}},
		{Key: "wbc", Name: "White blood cells", Unit: "×10⁹/L",
			names:  []string{"white blood cell count", "white blood cells", "white cell count", "leukocyte count", "leukocytes", "wbc"},
			labels: []string{"white blood cells", "wbc count", "leukocytes [#/volume] in blood*"},
			units:  countUnits(), plausible: [2]float64{0.1, 500}},
		{Key: "potassium", Name: "Potassium", Unit: "mmol/L",
			names:  []string{"serum potassium", "potassium"},
			labels: []string{"potassium", "potassium, whole blood", "potassium [moles/volume] in serum or plasma*", "potassium [moles/volume] in blood*"},
			units:  map[string]conversion{"mmol/l": same(), "meq/l": same()}, plausible: [2]float64{1, 10}},
		{Key: "sodium", Name: "Sodium", Unit: "mmol/L",
			names:  []string{"serum sodium", "sodium"},
			labels: []string{"sodium", "sodium, whole blood", "sodium [moles/volume] in serum or plasma*", "sodium [moles/volume] in blood*"},
			units:  map[string]conversion{"mmol/l": same(), "meq/l": same()}, plausible: [2]float64{90, 200}},
		{Key: "alt", Name: "ALT", Unit: "U/L",
			names:  []string{"alanine aminotransferase", "alanine transaminase", "sgpt", "alt"},
			labels: []string{"alanine aminotransferase (alt)", "alt", "alanine aminotransferase [enzymatic activity/volume] in serum or plasma*"},
			units:  map[string]conversion{"u/l": same(), "iu/l": same()}, plausible: [2]float64{1, 20000}},
		{Key: "ast", Name: "AST", Unit: "U/L",
			names:  []string{"aspartate aminotransferase", "aspartate transaminase", "sgot", "ast"},
			labels: []string{"asparate aminotransferase (ast)", "aspartate aminotransferase (ast)", "ast", "aspartate aminotransferase [enzymatic activity/volume] in serum or plasma*"},
			units:  map[string]conversion{"u/l": same(), "iu/l": same()}, plausible: [2]float64{1, 20000}},
		{Key: "bilirubin", Name: "Total bilirubin", Unit: "mg/dL",
			names: []string{"total bilirubin", "serum bilirubin", "bilirubin"}, notFollowedBy: []string{"direct", "indirect"},
			labels: []string{"bilirubin, total", "total bilirubin", "bilirubin.total [mass/volume] in serum or plasma*", "bilirubin.total [moles/volume] in serum or plasma*"},
			units:  map[string]conversion{"mg/dl": same(), "umol/l": scale(1 / 17.1)}, plausible: [2]float64{0.05, 50}},
		{Key: "albumin", Name: "Albumin", Unit: "g/dL",
			names:  []string{"serum albumin", "albumin"},
			labels: []string{"albumin", "albumin [mass/volume] in serum or plasma*"},
			units:  map[string]conversion{"g/dl": same(), "g/l": scale(0.1)}, plausible: [2]float64{0.5, 7}},
		{Key: "lactate", Name: "Lactate", Unit: "mmol/L",
			names:  []string{"serum lactate", "blood lactate", "lactic acid", "lactate"},
			labels: []string{"lactate", "lactate [moles/volume] in blood*", "lactate [moles/volume] in serum or plasma*"},
			units:  map[string]conversion{"mmol/l": same(), "meq/l": same(), "mg/dl": scale(1 / 9.01)}, plausible: [2]float64{0.1, 30}},
		{Key: "inr", Name: "INR", Unit: "",
			names:  []string{"international normalized ratio", "international normalised ratio", "inr"},
			labels: []string{"inr(pt)", "inr", "inr in platelet poor plasma by coagulation assay*"},
			units:  map[string]conversion{"": same(), "ratio": same()}, plausible: [2]float64{0.5, 15}},
		{Key: "ldl", Name: "LDL cholesterol", Unit: "mg/dL",
			names:  []string{"low-density lipoprotein cholesterol", "ldl cholesterol", "ldl-cholesterol", "ldl-c", "ldl"},
			labels: []string{"cholesterol, ldl, calculated", "cholesterol, ldl, measured", "cholesterol in ldl [mass/volume] in serum or plasma*"},
			units:  map[string]conversion{"mg/dl": same(), "mmol/l": scale(38.67)}, plausible: [2]float64{10, 500}},
		{Key: "triglycerides", Name: "Triglycerides", Unit: "mg/dL",
			names:  []string{"triglycerides", "triglyceride"},
			labels: []string{"triglycerides", "triglyceride [mass/volume] in serum or plasma*"},
			units:  map[string]conversion{"mg/dl": same(), "mmol/l": scale(88.57)}, plausible: [2]float64{10, 5000}},
		{Key: "tsh", Name: "TSH", Unit: "mIU/L",
			names:  []string{"thyroid stimulating hormone", "thyroid-stimulating hormone", "thyrotropin", "tsh"},
			labels: []string{"thyroid stimulating hormone", "tsh", "thyrotropin [units/volume] in serum or plasma*"},
			units:  map[string]conversion{"miu/l": same(), "uiu/ml": same(), "mu/l": same()}, plausible: [2]float64{0.001, 200}},
	}
})

// analyteByKey finds an analyte.
func analyteByKey(key string) *Analyte {
	for _, a := range Analytes() {
		if a.Key == key {
			return a
		}
	}
	return nil
}

// MatchLabel returns the analyte a source's lab label (d_labitems.label,
// an OMOP concept name) records, or nil. fluid, when the source has it,
// must be blood ("" when unknown).
func MatchLabel(label, fluid string) *Analyte {
	l := strings.ToLower(strings.TrimSpace(label))
	if f := strings.ToLower(strings.TrimSpace(fluid)); f != "" && f != "blood" {
		return nil
	}
	for _, a := range Analytes() {
		for _, p := range a.labels {
			if pre, ok := strings.CutSuffix(p, "*"); ok {
				if strings.HasPrefix(l, pre) {
					return a
				}
			} else if l == p {
				return a
			}
		}
	}
	return nil
}

// normUnit writes a unit the way the conversion tables do: lower case, no
// spaces, µ and μ as u, ² as 2, × and * as x, no ^, and the spellings of
// one unit as one ("10^9/L", "x10E9/L", "G/L" of cells: "x109/l").
func normUnit(u string) string {
	u = strings.ToLower(strings.TrimSpace(u))
	if n, ok := omopUnits[u]; ok {
		return n
	}
	u = strings.NewReplacer("µ", "u", "μ", "u", "²", "2", "³", "3", "⁹", "9", "×", "x", "*", "x", "^", "", " ", "",
		"micromol", "umol", "mcmol", "umol", "percent", "%", "units/l", "u/l", "10e9", "109", "10e3", "103").Replace(u)
	switch u {
	case "109/l", "x109/l", "giga/l":
		return "x109/l"
	case "k/ul", "x103/ul", "103/ul", "thou/ul", "k/mm3", "x103/mm3", "103/mm3", "/nl":
		return "k/ul"
	case "ml/min/1.73m2", "ml/min/1.73sqm", "ml/min/1.73", "ml/min/1.73msq":
		return "ml/min/1.73m2"
	case "{ratio}", "ratio", "(ratio)":
		return "ratio"
	}
	return u
}

// omopUnits are the names of OMOP (UCUM) unit concepts.
var omopUnits = map[string]string{
	"milligram per deciliter": "mg/dl", "percent": "%", "micromole per liter": "umol/l", "millimole per liter": "mmol/l",
	"gram per deciliter": "g/dl", "gram per liter": "g/l", "thousand per microliter": "k/ul", "billion per liter": "x109/l",
	"milliliter per minute per 1.73 square meter": "ml/min/1.73m2", "unit per liter": "u/l", "international unit per liter": "iu/l",
	"millimole per mole": "mmol/mol", "milliequivalent per liter": "meq/l", "milli-international unit per liter": "miu/l",
	"micro-international unit per milliliter": "uiu/ml", "per microliter": "/ul", "no value": "",
}

// convert returns v (in unit) in the analyte's conventional unit; false
// when the unit is not one the analyte is reported in.
func (a *Analyte) convert(v float64, unit string) (float64, bool) {
	c, ok := a.units[normUnit(unit)]
	if !ok {
		return 0, false
	}
	return c.apply(v), true
}

// guessUnit returns the one unit in which a number written without one is
// plausible ("" and false when none or several are).
func (a *Analyte) guessUnit(v float64) (string, bool) {
	found, n := "", 0
	seen := map[conversion]bool{}
	for u, c := range a.units {
		if seen[c] {
			continue // synonyms of one unit
		}
		seen[c] = true
		x := c.apply(v)
		if x >= a.plausible[0] && x <= a.plausible[1] {
			found, n = u, n+1
		}
	}
	return found, n == 1
}

// roundTo rounds for display.
func roundTo(v float64, decimals int) float64 {
	p := math.Pow(10, float64(decimals))
	return math.Round(v*p) / p
}

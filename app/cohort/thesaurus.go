package cohort

import (
	"strings"

	"github.com/clinsight/clinsight/internal/textsearch"
)

// thesaurus maps words of everyday and clinical English to the terms that
// schemas and their documentation use, for query expansion: a question
// about a "treatment" is about a procedure, one about what a patient
// "weighs" is about a weight. It holds general vocabulary, not the words of
// any evaluation set.
var thesaurus = map[string]string{
	"treatment":  "procedure",
	"treatments": "procedures",
	"therapy":    "procedure",
	"operation":  "procedure surgery",
	"operations": "procedures surgery",
	"operated":   "procedure surgery",
	"surgeries":  "procedures surgery",
	"underwent":  "procedure",
	"undergo":    "procedure",
	"undergone":  "procedure",
	"weigh":      "weight",
	"weighs":     "weight",
	"weighed":    "weight",
	"medicine":   "medication drug",
	"medicines":  "medications drugs",
	"meds":       "medications drugs",
	"pill":       "drug",
	"pills":      "drugs",
	"prescribe":  "prescription drug",
	// Word families that plural stripping (see stem) does not join with
	// the names of the prescriptions and diagnoses tables.
	"prescribed":   "prescription",
	"prescription": "prescribed",
	"diagnosis":    "diagnoses",
	"bill":         "cost charge",
	"billed":       "cost charge",
	"pay":          "cost",
	"paid":         "cost",
	"price":        "cost",
	"expensive":    "cost",
	"cheap":        "cost",
	"spent":        "cost",
	"died":         "death",
	"dies":         "death",
	"deceased":     "death",
	"mortality":    "death",
	"survival":     "death",
	"survive":      "death",
	"survived":     "death",
	"born":         "birth",
	"birthday":     "birth",
	"old":          "age",
	"older":        "age",
	"younger":      "age",
	"elderly":      "age",
	"hospitalized": "admission",
	"hospitalised": "admission",
	"admitted":     "admission",
	"inpatient":    "admission",
	"discharged":   "discharge",
	"culture":      "microbiology",
	"cultures":     "microbiology",
	"organism":     "microbiology",
	"bacteria":     "microbiology organism",
	"infection":    "microbiology",
	"vitals":       "vital signs",
	"pulse":        "heart rate",
	"bp":           "blood pressure",
	"spo2":         "oxygen saturation",
	"temp":         "temperature",
	"drip":         "input infusion",
	"infused":      "input infusion",
	"intake":       "input",
	"urine":        "output",
	"drain":        "output",
	"lab":          "laboratory test",
	"labs":         "laboratory tests",
	"bloodwork":    "laboratory test",
	"ward":         "transfer careunit",
	"unit":         "careunit",
	"icu":          "icu stay",
	"intensive":    "icu",
}

// expand returns the question followed by the thesaurus terms of its words.
func expand(question string) string {
	var extra []string
	for _, w := range textsearch.Words(question) {
		if t, ok := thesaurus[w]; ok {
			extra = append(extra, t)
		}
	}
	if len(extra) == 0 {
		return question
	}
	return question + " (" + strings.Join(extra, ", ") + ")"
}

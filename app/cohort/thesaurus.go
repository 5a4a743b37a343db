package cohort

import (
	"strings"
	"sync"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/textsearch"
)

// thesaurus maps words of everyday and clinical English to the general
// medical terms that clinical databases and their documentation use, for
// query expansion: a question about a "treatment" is about a procedure, one
// about what a patient "weighs" is about a weight. It is general medical
// vocabulary, true of any clinical schema: no entry names a table or a
// column of one schema. The words a schema uses for its own tables (EHRSQL's
// "ward" for transfers.careunit, "bill" for its cost table) are in that
// schema's profile (the tables' vocabulary in datasets/docs/*.yaml), applied
// only to databases that use the profile. The entries were chosen on the
// dev half of the EHRSQL valid questions (RetrievalHalf).
var thesaurus = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"treatment":   "procedure",
		"treatments":  "procedures",
		"therapy":     "procedure",
		"operation":   "procedure surgery",
		"operations":  "procedures surgery",
		"operated":    "procedure surgery",
		"surgeries":   "procedures surgery",
		"underwent":   "procedure",
		"undergo":     "procedure",
		"undergone":   "procedure",
		"weigh":       "weight",
		"weighs":      "weight",
		"weighed":     "weight",
		"medicine":    "medication drug",
		"medicines":   "medications drugs",
		"meds":        "medications drugs",
		"pill":        "drug",
		"pills":       "drugs",
		"prescribe":   "prescription drug",
		"medication":  "drug prescription",
		"medications": "drugs prescriptions",
		"diagnosed":   "diagnosis",
		// Word families that plural stripping (see stem) does not join.
		"prescribed":   "prescription",
		"prescription": "prescribed",
		"diagnosis":    "diagnoses",
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
		"lab":          "laboratory test",
		"labs":         "laboratory tests",
		"bloodwork":    "laboratory test",
	}
})

// vocabulary is the query expansion of one index: the general thesaurus and
// the vocabulary of the curated profiles its tables use.
type vocabulary map[string]string

// newVocabulary merges the thesaurus with the vocabulary of the catalog's
// curated table docs; a word both define expands to both.
func newVocabulary(cat *datasets.Catalog) vocabulary {
	v := vocabulary{}
	for w, t := range thesaurus() {
		v[w] = t
	}
	for _, t := range cat.Tables {
		for w, terms := range t.Doc.Vocabulary {
			if prev, ok := v[w]; ok && !strings.Contains(" "+prev+" ", " "+terms+" ") {
				terms = prev + " " + terms
			}
			v[w] = terms
		}
	}
	return v
}

// expand returns the question followed by the vocabulary's terms for its
// words.
func (v vocabulary) expand(question string) string {
	var extra []string
	for _, w := range textsearch.Words(question) {
		if t, ok := v[w]; ok {
			extra = append(extra, t)
		}
	}
	if len(extra) == 0 {
		return question
	}
	return question + " (" + strings.Join(extra, ", ") + ")"
}

package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/app/omop"
)

func TestWriteConceptSets(t *testing.T) {
	src := omop.Concept{ID: 2001000000, Name: "Type 2 diabetes mellitus without complications", Vocabulary: "ICD10CM", Code: "E11.9"}
	ans := &cohort.Answer{ConceptsFrom: cohort.ConceptsFromExtractor,
		ConceptSets: []omop.ConceptSet{{Name: "e11.9", Domain: "Condition", Descendants: 4, Persons: 93,
			Items: []omop.SetItem{{Concept: omop.Concept{ID: 201826, Name: "Type 2 diabetes mellitus", Vocabulary: "SNOMED", Code: "44054006"}, IncludeDescendants: true, MappedFrom: &src}}}},
		UnresolvedTerms: []omop.Term{{Text: "flibbertigibbet"}},
	}
	var b bytes.Buffer
	writeConceptSets(&b, ans)
	for _, want := range []string{"terms from the extractor", "201826 Type 2 diabetes mellitus [SNOMED 44054006] (mapped from ICD10CM E11.9) + 4 descendants; 93 patients", `No concept found for: "flibbertigibbet"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, b.String())
		}
	}
	b.Reset()
	writeConceptSets(&b, &cohort.Answer{})
	if b.Len() != 0 {
		t.Errorf("non-OMOP answer printed %q", b.String())
	}
}

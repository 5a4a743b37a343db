package omop

import (
	"encoding/json"
	"fmt"
)

// atlasConcept is a concept as ATLAS (OHDSI WebAPI) writes it in a concept
// set expression.
type atlasConcept struct {
	ConceptClassID         string `json:"CONCEPT_CLASS_ID"`
	ConceptCode            string `json:"CONCEPT_CODE"`
	ConceptID              int64  `json:"CONCEPT_ID"`
	ConceptName            string `json:"CONCEPT_NAME"`
	DomainID               string `json:"DOMAIN_ID"`
	InvalidReason          string `json:"INVALID_REASON"`
	InvalidReasonCaption   string `json:"INVALID_REASON_CAPTION"`
	StandardConcept        string `json:"STANDARD_CONCEPT"`
	StandardConceptCaption string `json:"STANDARD_CONCEPT_CAPTION"`
	VocabularyID           string `json:"VOCABULARY_ID"`
}

// atlasItem is one item of a concept set expression.
type atlasItem struct {
	Concept            atlasConcept `json:"concept"`
	IsExcluded         bool         `json:"isExcluded"`
	IncludeDescendants bool         `json:"includeDescendants"`
	IncludeMapped      bool         `json:"includeMapped"`
}

// ATLASExpression is a concept set expression as ATLAS imports it
// (Concept Sets → Import → Concept Set Expression).
type ATLASExpression struct {
	Items []atlasItem `json:"items"`
}

// ATLASConceptSet is one named concept set, as the ConceptSets array of an
// ATLAS cohort definition holds it.
type ATLASConceptSet struct {
	ID         int             `json:"id"`
	Name       string          `json:"name"`
	Expression ATLASExpression `json:"expression"`
}

// Expression returns the set's items as an ATLAS concept set expression.
func (s *ConceptSet) Expression() ATLASExpression {
	e := ATLASExpression{Items: []atlasItem{}}
	for _, it := range s.Items {
		e.Items = append(e.Items, atlasItem{
			Concept:            toATLAS(it.Concept),
			IsExcluded:         it.Excluded,
			IncludeDescendants: it.IncludeDescendants,
		})
	}
	return e
}

// toATLAS converts a concept, with ATLAS's captions.
func toATLAS(c Concept) atlasConcept {
	a := atlasConcept{
		ConceptClassID: c.Class, ConceptCode: c.Code, ConceptID: c.ID, ConceptName: c.Name,
		DomainID: c.Domain, VocabularyID: c.Vocabulary,
		InvalidReason: "V", InvalidReasonCaption: "Valid",
		StandardConcept: c.Standard, StandardConceptCaption: "Non-Standard",
	}
	switch c.InvalidReason {
	case "":
	case "U":
		a.InvalidReason, a.InvalidReasonCaption = "U", "Invalid"
	default:
		a.InvalidReason, a.InvalidReasonCaption = c.InvalidReason, "Invalid"
	}
	switch c.Standard {
	case "S":
		a.StandardConceptCaption = "Standard"
	case "C":
		a.StandardConceptCaption = "Classification"
	default:
		a.StandardConcept = "N"
	}
	return a
}

// ATLASJSON renders concept sets as the ConceptSets array of an ATLAS
// cohort definition (ids 0, 1, ... in order), indented: the file an OHDSI
// analyst pastes into ATLAS, one set's "expression" at a time into a
// concept set's import, or the whole array into a cohort definition.
func ATLASJSON(sets []ConceptSet) ([]byte, error) {
	out := make([]ATLASConceptSet, len(sets))
	for i := range sets {
		out[i] = ATLASConceptSet{ID: i, Name: sets[i].Name, Expression: sets[i].Expression()}
	}
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("concept sets as ATLAS JSON: %w", err)
	}
	return b, nil
}

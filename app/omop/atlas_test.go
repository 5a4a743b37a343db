package omop

import (
	"encoding/json"
	"testing"
)

func TestATLASJSON(t *testing.T) {
	sets := []ConceptSet{{
		Name: "type 2 diabetes",
		Items: []SetItem{
			{Concept: Concept{ID: 201826, Name: "Type 2 diabetes mellitus", Domain: "Condition", Vocabulary: "SNOMED", Class: "Clinical Finding", Standard: "S", Code: "44054006"}, IncludeDescendants: true},
			{Concept: Concept{ID: 192279, Name: "Disorder of kidney due to diabetes mellitus", Domain: "Condition", Vocabulary: "SNOMED", Class: "Clinical Finding", Standard: "S", Code: "127013003"}, Excluded: true},
		},
	}, {
		Name:  "metformin",
		Items: []SetItem{{Concept: Concept{ID: 1503297, Name: "metformin", Domain: "Drug", Vocabulary: "RxNorm", Class: "Ingredient", Standard: "S", Code: "6809"}, IncludeDescendants: true}},
	}}
	b, err := ATLASJSON(sets)
	if err != nil {
		t.Fatal(err)
	}
	// Read back generically, as ATLAS would, by its field names.
	var got []struct {
		ID         int    `json:"id"`
		Name       string `json:"name"`
		Expression struct {
			Items []struct {
				Concept            map[string]any `json:"concept"`
				IsExcluded         bool           `json:"isExcluded"`
				IncludeDescendants bool           `json:"includeDescendants"`
				IncludeMapped      *bool          `json:"includeMapped"`
			} `json:"items"`
		} `json:"expression"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[1].ID != 1 || got[1].Name != "metformin" || len(got[0].Expression.Items) != 2 {
		t.Fatalf("%s", b)
	}
	it := got[0].Expression.Items[0]
	if it.Concept["CONCEPT_ID"] != float64(201826) || it.Concept["STANDARD_CONCEPT_CAPTION"] != "Standard" ||
		it.Concept["INVALID_REASON"] != "V" || it.Concept["VOCABULARY_ID"] != "SNOMED" || it.Concept["CONCEPT_CODE"] != "44054006" ||
		!it.IncludeDescendants || it.IsExcluded || it.IncludeMapped == nil {
		t.Errorf("item 0: %+v", it)
	}
	if !got[0].Expression.Items[1].IsExcluded {
		t.Error("excluded item not marked")
	}
}

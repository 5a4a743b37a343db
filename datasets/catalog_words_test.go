package datasets

import (
	"strings"
	"testing"
)

// TestNameWords checks how identifiers of databases without curated
// documentation are read: split into known words (general words, not one
// schema's) and general abbreviations written out, while words that are
// not known stay whole.
func TestNameWords(t *testing.T) {
	cat := &Catalog{Tables: []Table{{Name: "t", Columns: []TableColumn{{Name: "unit", Samples: []string{"Coronary Care Unit (CCU)"}}}}}}
	lx := newNameLexicon(cat)
	for _, c := range []struct{ name, words, expanded string }{
		{"labevents", "lab events", "laboratory events"},
		{"valueuom", "value uom", "value unit of measure"},
		{"first_careunit", "first care unit", "first care unit"},
		{"admittime", "admit time", "admission time"},
		{"totalamountuom", "total amount uom", "total amount unit of measure"},
		{"linksto", "links to", "links to"},
		{"spec_type_desc", "spec type desc", "specimen type description"},
		{"PatientBirthDate", "patient birth date", "patient birth date"},
		{"visit_occurrence", "visit occurrence", "visit occurrence"},
		{"bloodpressure", "blood pressure", "blood pressure"},
		{"encounterid", "encounter id", "encounter identifier"},
		// Unknown words stay whole; no fragment under three letters is
		// split off ("label" is not "lab" + "el").
		{"label", "label", "label"},
		{"hadm_id", "hadm id", "hadm identifier"},
		{"female", "female", "female"},
	} {
		split := lx.words(c.name)
		full, _ := expandAbbreviations(split)
		if got := strings.Join(split, " "); got != c.words {
			t.Errorf("words(%q) = %q, want %q", c.name, got, c.words)
		}
		if got := strings.Join(full, " "); got != c.expanded {
			t.Errorf("expanded(%q) = %q, want %q", c.name, got, c.expanded)
		}
	}
	// A sampled value that is an identifier of the catalog is no known
	// word: "inputevents" in a column naming tables does not keep the
	// table "inputevents" whole.
	cat = &Catalog{Tables: []Table{
		{Name: "inputevents"},
		{Name: "items", Columns: []TableColumn{{Name: "linksto", Samples: []string{"inputevents"}}}},
	}}
	if got := strings.Join(newNameLexicon(cat).words("inputevents"), " "); got != "input events" {
		t.Errorf("words(inputevents) = %q, want %q", got, "input events")
	}
}

// TestProfileVocabulary checks the vocabulary field of a profile: one
// lower-case word to its terms, carried into the table's documentation.
func TestProfileVocabulary(t *testing.T) {
	const head = "profile: x\nmin_tables: 1\ntables:\n  t:\n    description: d\n    columns: {a: b}\n"
	for _, bad := range []string{"    vocabulary: {Ward: unit}\n", "    vocabulary: {two words: unit}\n", "    vocabulary: {ward: ' '}\n"} {
		if _, err := parseSchemaDoc([]byte(head + bad)); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	d, err := parseSchemaDoc([]byte(head + "    vocabulary: {ward: transfer unit}\n"))
	if err != nil {
		t.Fatal(err)
	}
	cat := &Catalog{Tables: []Table{{Name: "t", Columns: []TableColumn{{Name: "a"}}}}}
	applyDocs(cat, []schemaDoc{d})
	if got := cat.Tables[0].Doc.Vocabulary["ward"]; got != "transfer unit" {
		t.Errorf("vocabulary of t = %v", cat.Tables[0].Doc.Vocabulary)
	}
	docs, err := loadSchemaDocs()
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range docs {
		if d.Profile == "ehrsql-2024-mimic-iv" {
			if got := d.Tables["transfers"].Vocabulary["ward"]; got != "transfer careunit" {
				t.Errorf("EHRSQL transfers vocabulary: ward = %q", got)
			}
		}
	}
}

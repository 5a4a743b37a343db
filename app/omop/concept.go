package omop

import (
	"slices"
	"strconv"
	"strings"
)

// Concept is one row of the OMOP concept table.
type Concept struct {
	// ID is concept_id.
	ID int64 `json:"concept_id"`
	// Name is concept_name.
	Name string `json:"concept_name"`
	// Domain is domain_id (Condition, Drug, Measurement, ...).
	Domain string `json:"domain_id"`
	// Vocabulary is vocabulary_id (SNOMED, RxNorm, LOINC, ICD10CM, ...).
	Vocabulary string `json:"vocabulary_id"`
	// Class is concept_class_id (Clinical Finding, Ingredient, ...).
	Class string `json:"concept_class_id"`
	// Standard is standard_concept: "S" standard, "C" classification, ""
	// non-standard.
	Standard string `json:"standard_concept"`
	// Code is concept_code in its vocabulary (44054006, E11.9, 6809).
	Code string `json:"concept_code"`
	// InvalidReason is invalid_reason: "" valid, "D" deleted, "U" updated.
	InvalidReason string `json:"invalid_reason"`
}

// IsStandard reports whether the concept is a valid standard concept, the
// kind event tables hold in their *_concept_id columns.
func (c Concept) IsStandard() bool { return c.Standard == "S" && c.InvalidReason == "" }

// Candidate is a concept found for a term, with its score.
type Candidate struct {
	Concept
	// Score orders candidates (higher is better); about 0-1.3.
	Score float64
	// Match is how well the matched text fits the term, before the domain
	// and standard-concept adjustments: 1 for the same words, 1.1 for a
	// code.
	Match float64
	// Via says how it was found: "code", "name", "synonym", and for a
	// concept reached through 'Maps to', "maps to".
	Via string
	// Matched is the name, synonym or code that matched.
	Matched string
	// MappedFrom is the non-standard concept the term matched, which maps
	// to this standard concept; nil when the term matched it directly.
	MappedFrom *Concept
}

// Term is a clinical term of a question to resolve.
type Term struct {
	// Text is the term as written in the question ("T2DM", "sugar
	// diabetes", "E11.9").
	Text string `json:"text"`
	// Search are the texts looked up: Text itself and, for an
	// abbreviation or a lay term, its clinical expansions.
	Search []string `json:"search,omitempty"`
	// Domain is the OMOP domain the term is expected in ("Condition",
	// "Drug", "Measurement", "Procedure", "Observation"), "" when unknown.
	Domain string `json:"domain,omitempty"`
	// Code is true when Text is a code to look up directly.
	Code bool `json:"code,omitempty"`
}

// SetItem is one concept of a concept set, as ATLAS's concept-set
// expression holds it.
type SetItem struct {
	Concept
	// IncludeDescendants adds the concept's descendants to the set.
	IncludeDescendants bool
	// Excluded removes the concept (and its descendants when
	// IncludeDescendants) from the set.
	Excluded bool
	// MappedFrom is the non-standard concept the term matched; nil when
	// none.
	MappedFrom *Concept
}

// ConceptSet is a resolved term: named concepts that together define one
// clinical idea in one domain.
type ConceptSet struct {
	// Name names the set in generated SQL and exports ("type 2 diabetes").
	Name string
	// Term is the question's term the set resolves.
	Term Term
	// Domain is the set's OMOP domain (of its first item).
	Domain string
	// Items are the concepts chosen for the set.
	Items []SetItem
	// Alternatives are the next-best candidates, for the user to add.
	Alternatives []Candidate
	// IDs are every concept id the set stands for (items and their
	// descendants, less the excluded ones), sorted: what SQL filters on.
	IDs []int64
	// Descendants is how many of IDs are descendants added to the items.
	Descendants int
	// DescendantSource says where descendants came from:
	// "concept_ancestor", "concept_relationship 'Subsumes'" (when
	// concept_ancestor is empty), or "" when none were found.
	DescendantSource string
	// Persons is the number of distinct persons with an event of any of
	// IDs in the domain's event table; PersonsDirect counts the items
	// alone (without descendants). -1 when the domain has no event table.
	Persons, PersonsDirect int64
	// PersonsUnder, when positive, says Persons and PersonsDirect are
	// hidden (-1) because fewer than PersonsUnder persons have an event:
	// the small-cell suppression of an aggregate-only data source.
	PersonsUnder int `json:",omitempty"`

	// itemMatch is the Match of the first item when resolved.
	itemMatch float64
}

// Concepts returns the set's included items.
func (s *ConceptSet) Concepts() []Concept {
	var out []Concept
	for _, it := range s.Items {
		if !it.Excluded {
			out = append(out, it.Concept)
		}
	}
	return out
}

// Remove excludes the concept with the given id from the set's items
// (call Resolver.Refresh to recompute IDs and counts); false when it is
// not an item.
func (s *ConceptSet) Remove(id int64) bool {
	n := len(s.Items)
	s.Items = slices.DeleteFunc(s.Items, func(it SetItem) bool { return it.ID == id })
	return len(s.Items) != n
}

// Add adds a concept to the set's items with its descendants (call
// Resolver.Refresh to recompute IDs and counts); false when it is already
// an item.
func (s *ConceptSet) Add(c Concept) bool {
	for _, it := range s.Items {
		if it.ID == c.ID {
			return false
		}
	}
	s.Items = append(s.Items, SetItem{Concept: c, IncludeDescendants: true})
	return true
}

// domainTable is the event table and concept column of a domain.
type domainTable struct {
	table, column, date string
}

// domainTables maps OMOP domains to the event table holding them.
var domainTables = map[string]domainTable{
	"Condition":   {"condition_occurrence", "condition_concept_id", "condition_start_date"},
	"Drug":        {"drug_exposure", "drug_concept_id", "drug_exposure_start_date"},
	"Procedure":   {"procedure_occurrence", "procedure_concept_id", "procedure_date"},
	"Measurement": {"measurement", "measurement_concept_id", "measurement_date"},
	"Observation": {"observation", "observation_concept_id", "observation_date"},
	"Device":      {"device_exposure", "device_concept_id", "device_exposure_start_date"},
	"Visit":       {"visit_occurrence", "visit_concept_id", "visit_start_date"},
}

// EventTable returns the event table, concept column and date column of
// an OMOP domain, and whether the domain has one.
func EventTable(domain string) (table, column, date string, ok bool) {
	dt, ok := domainTables[domain]
	return dt.table, dt.column, dt.date, ok
}

// normalizeDomain returns the canonical spelling of a domain name ("drug"
// gives "Drug"), "" for an unknown one.
func normalizeDomain(d string) string {
	for k := range domainTables {
		if strings.EqualFold(k, strings.TrimSpace(d)) {
			return k
		}
	}
	return ""
}

// HideSmallPersons hides the person counts of the sets that count fewer
// than k persons (but some): Persons and PersonsDirect become -1 and
// PersonsUnder k. A count of the items alone under k is hidden with the
// set's, since it bounds it. k ≤ 0 hides nothing.
func HideSmallPersons(sets []ConceptSet, k int) {
	if k <= 0 {
		return
	}
	for i := range sets {
		s := &sets[i]
		if SmallCount(s.Persons, k) || SmallCount(s.PersonsDirect, k) {
			s.Persons, s.PersonsDirect, s.PersonsUnder = -1, -1, k
		}
	}
}

// SmallCount reports whether a person count n is one small-cell
// suppression hides under a minimum cell size k: some persons, fewer than
// k (k ≤ 0 hides nothing).
func SmallCount(n int64, k int) bool { return k > 0 && n > 0 && n < int64(k) }

// Hit is a concept found by a search, with the persons it finds.
type Hit struct {
	Candidate
	// Persons is the number of persons with an event of the concept or
	// one of its descendants; -1 when its domain has no event table or
	// when it is hidden (PersonsUnder).
	Persons int64
	// PersonsUnder, when positive, says Persons is hidden because fewer
	// than PersonsUnder persons have an event of the concept (an
	// aggregate-only source's minimum cell size).
	PersonsUnder int
}

// PersonsText writes a person count as the front ends show it: "<k" when
// hidden by small-cell suppression (under > 0), "-" when not counted
// (n < 0), else the number.
func PersonsText(n int64, under int) string {
	switch {
	case under > 0:
		return "<" + strconv.Itoa(under)
	case n < 0:
		return "-"
	}
	return strconv.FormatInt(n, 10)
}

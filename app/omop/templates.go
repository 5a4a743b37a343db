package omop

import (
	"fmt"
	"strings"

	"github.com/clinsight/clinsight/internal/lazyre"
	"github.com/clinsight/clinsight/internal/textsearch"
)

// TemplateKind names an LLM-free query shape.
type TemplateKind string

// The template shapes. Every shape counts distinct persons who have an
// event of each concept set (the sets combined with AND); the first set's
// first event is the entry event the age is taken at.
const (
	// TemplateCount: how many persons have X (and Y ...).
	TemplateCount TemplateKind = "count"
	// TemplateByGender: the same count per gender.
	TemplateByGender TemplateKind = "count by gender"
	// TemplateByAgeBand: the same count per 10-year age band at the entry
	// event.
	TemplateByAgeBand TemplateKind = "count by age band"
)

// maxInlineIDs is how many concept ids a template writes as a literal
// list; larger sets built from concept_ancestor are written as a subquery
// over it.
const maxInlineIDs = 1000

// Template is a question answered without a model.
type Template struct {
	// Kind is the query shape.
	Kind TemplateKind
	// Sets are the concept sets combined (AND), in the question's order.
	Sets []ConceptSet
	// SQL is the query: concept ids only, never names.
	SQL string
}

// Words that make a question more than a template can say: other
// conditions (time, values, negation, alternatives) or other outputs.
var (
	countStart    = lazyre.New(`(?i)^\s*(how many|number of|count|what is the number of|total number of)\b`)
	notTemplate   = textsearch.NewWordSet(`or not without no never except excluding before after since until during between within older younger above below over under more less than greater at least most first last average mean median percentage proportion rate ratio died death dead alive per each list show which who`)
	genderWords   = lazyre.New(`(?i)\b(by|per|and their|split by|broken down by|across)\s+(gender|sex)\b|\bmale(s)? (and|vs\.?|versus) female(s)?\b|\bmen (and|vs\.?|versus) women\b`)
	ageBandWords  = lazyre.New(`(?i)\b(by|per|split by|broken down by|across)\s+(age( band| group)?s?)\b|\bage (bands?|groups?)\b`)
	numberPattern = lazyre.New(`\b[0-9]+\b`)
)

// MatchTemplate decides whether a question has a template shape: it asks
// for a count of persons, every clinical term of it resolved to a concept
// set, nothing else constrains it (no dates, values, negation or
// alternatives) and any grouping is by gender or by age band. reason says
// why not when ok is false.
func MatchTemplate(question string, sets []ConceptSet, unresolved []Term) (t Template, ok bool, reason string) {
	if !countStart().MatchString(question) {
		return t, false, "the question does not ask for a number of patients"
	}
	if len(unresolved) > 0 {
		names := make([]string, len(unresolved))
		for i, u := range unresolved {
			names[i] = fmt.Sprintf("%q", u.Text)
		}
		return t, false, "no concept was found for " + strings.Join(names, ", ")
	}
	if len(sets) == 0 {
		return t, false, "the question names no clinical concept"
	}
	for _, s := range sets {
		if _, ok := domainTables[s.Domain]; !ok || len(s.IDs) == 0 {
			return t, false, fmt.Sprintf("the concept set %q has no event table to count in (domain %q)", s.Name, s.Domain)
		}
	}
	kind := TemplateCount
	rest := question
	switch {
	case genderWords().MatchString(question):
		kind = TemplateByGender
		rest = genderWords().ReplaceAllString(rest, " ")
	case ageBandWords().MatchString(question):
		kind = TemplateByAgeBand
		rest = ageBandWords().ReplaceAllString(rest, " ")
	}
	// Words of the terms are theirs; what is left must not constrain.
	for _, s := range sets {
		rest = strings.ReplaceAll(strings.ToLower(rest), strings.ToLower(s.Term.Text), " ")
	}
	for _, w := range textsearch.Words(rest) {
		if notTemplate.Has(w) {
			return t, false, fmt.Sprintf("%q asks for more than a count of patients with the concepts", w)
		}
	}
	if numberPattern().MatchString(rest) {
		return t, false, "the question holds a number (a date, an age or a value) that the templates do not handle"
	}
	return Template{Kind: kind, Sets: sets, SQL: TemplateSQL(kind, sets)}, true, ""
}

// conceptFilter renders "column IN (...)" for a set, with a comment naming
// the set's concepts.
func conceptFilter(column string, s ConceptSet) string {
	if len(s.IDs) > maxInlineIDs && s.DescendantSource == "concept_ancestor" {
		var items []int64
		for _, it := range s.Items {
			if !it.Excluded {
				items = append(items, it.ID)
			}
		}
		return fmt.Sprintf("%s IN (SELECT descendant_concept_id FROM concept_ancestor WHERE ancestor_concept_id IN (%s))", column, idList(items))
	}
	return fmt.Sprintf("%s IN (%s)", column, idList(s.IDs))
}

// setComment describes a concept set in an SQL comment.
func setComment(s ConceptSet) string {
	var parts []string
	for _, it := range s.Items {
		if it.Excluded {
			parts = append(parts, fmt.Sprintf("not %d", it.ID))
			continue
		}
		parts = append(parts, fmt.Sprintf("%d %s", it.ID, sanitizeComment(it.Name)))
	}
	desc := ""
	if s.Descendants > 0 {
		desc = fmt.Sprintf(" (+%d descendants)", s.Descendants)
	}
	return fmt.Sprintf("-- concept set %q (%s): %s%s", sanitizeComment(s.Name), s.Domain, strings.Join(parts, "; "), desc)
}

// sanitizeComment keeps text safe inside a line comment.
func sanitizeComment(s string) string {
	s = strings.NewReplacer("\n", " ", "\r", " ").Replace(s)
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return s
}

// TemplateSQL writes the query of a template shape over concept sets.
func TemplateSQL(kind TemplateKind, sets []ConceptSet) string {
	var b strings.Builder
	for _, s := range sets {
		b.WriteString(setComment(s))
		b.WriteString("\n")
	}
	// The cohort: persons with an event of every set; entry = the first
	// event of the first set.
	first := domainTables[sets[0].Domain]
	b.WriteString("WITH cohort AS (\n")
	fmt.Fprintf(&b, "  SELECT person_id, MIN(%s) AS entry_date FROM %s WHERE %s GROUP BY person_id\n", first.date, first.table, conceptFilter(first.column, sets[0]))
	b.WriteString(")")
	switch kind {
	case TemplateByGender:
		b.WriteString("\nSELECT COALESCE(g.concept_name, CASE p.gender_concept_id WHEN 8507 THEN 'MALE' WHEN 8532 THEN 'FEMALE' ELSE 'Unknown' END) AS gender,\n")
		b.WriteString("       COUNT(DISTINCT c.person_id) AS persons\n")
		b.WriteString("FROM cohort c JOIN person p ON p.person_id = c.person_id\n")
		b.WriteString("LEFT JOIN concept g ON g.concept_id = p.gender_concept_id\n")
		writeOtherSets(&b, sets)
		b.WriteString("GROUP BY gender ORDER BY persons DESC, gender")
	case TemplateByAgeBand:
		b.WriteString("\nSELECT ((a.age / 10) * 10) || '-' || ((a.age / 10) * 10 + 9) AS age_band, COUNT(DISTINCT a.person_id) AS persons\n")
		b.WriteString("FROM (SELECT c.person_id, CAST(substr(CAST(c.entry_date AS TEXT), 1, 4) AS INTEGER) - p.year_of_birth AS age\n")
		b.WriteString("      FROM cohort c JOIN person p ON p.person_id = c.person_id\n")
		writeOtherSetsIndent(&b, sets, "      ")
		b.WriteString(") a\nGROUP BY a.age / 10 ORDER BY a.age / 10")
	default:
		b.WriteString("\nSELECT COUNT(DISTINCT c.person_id) AS persons\nFROM cohort c\n")
		writeOtherSets(&b, sets)
	}
	return strings.TrimRight(b.String(), "\n")
}

// writeOtherSets adds the conditions of the sets after the first.
func writeOtherSets(b *strings.Builder, sets []ConceptSet) { writeOtherSetsIndent(b, sets, "") }

func writeOtherSetsIndent(b *strings.Builder, sets []ConceptSet, indent string) {
	for i, s := range sets[1:] {
		dt := domainTables[s.Domain]
		kw := "WHERE"
		if i > 0 {
			kw = "  AND"
		}
		fmt.Fprintf(b, "%s%s c.person_id IN (SELECT person_id FROM %s WHERE %s)\n", indent, kw, dt.table, conceptFilter(dt.column, s))
	}
}

package trials

import (
	"fmt"
	"strings"
)

// maxWhyTerms bounds the concepts a "why this trial" line names per field.
const maxWhyTerms = 4

// Why says in plain words why a trial was ranked for a patient: which of
// the patient's concepts its conditions and interventions name (or, when
// neither does, its title and summary), and whether the patient's age and
// sex fit its limits. E.g. "Conditions: type 2 diabetes; interventions:
// metformin; age 58 fits 18–75 years; sex fits (all)."
func Why(q *Query, t *Trial) string {
	if q == nil || t == nil {
		return ""
	}
	var parts []string
	cond := matchedConcepts(q, t.Conditions, t.MeSH, t.Keywords)
	if len(cond) > 0 {
		parts = append(parts, "conditions: "+strings.Join(cond, ", "))
	}
	interv := matchedConcepts(q, t.Interventions)
	if len(interv) > 0 {
		parts = append(parts, "interventions: "+strings.Join(interv, ", "))
	}
	if len(cond) == 0 && len(interv) == 0 {
		if text := matchedConcepts(q, []string{t.Title, t.Summary}); len(text) > 0 {
			parts = append(parts, "mentions "+strings.Join(text, ", "))
		} else {
			parts = append(parts, "related words in the description")
		}
	}
	switch {
	case !q.HasAge:
		parts = append(parts, "age not stated")
	case t.AgeAllowed(q.Age):
		parts = append(parts, fmt.Sprintf("age %s fits (%s)", fmtYears(q.Age), t.AgeLimits()))
	default:
		parts = append(parts, fmt.Sprintf("age %s outside %s", fmtYears(q.Age), t.AgeLimits()))
	}
	switch {
	case q.Sex == SexUnknown:
	case t.SexAllowed(q.Sex):
		parts = append(parts, "sex fits")
	default:
		parts = append(parts, "enrols "+string(t.Sex)+" only")
	}
	s := strings.Join(parts, "; ")
	return strings.ToUpper(s[:1]) + s[1:] + "."
}

// matchedConcepts lists the patient's searched concepts (heaviest first)
// that occur as whole words in one of the fields.
func matchedConcepts(q *Query, fields ...[]string) []string {
	var hay []string
	for _, f := range fields {
		for _, s := range f {
			if s != "" {
				hay = append(hay, " "+normalizeWords(s)+" ")
			}
		}
	}
	var out []string
	for _, c := range q.Concepts {
		if c.Negated || c.Weight <= 0 || len(out) == maxWhyTerms {
			continue
		}
		needle := " " + normalizeWords(c.Text) + " "
		if strings.TrimSpace(needle) == "" {
			continue
		}
		for _, h := range hay {
			if strings.Contains(h, needle) {
				out = append(out, c.Text)
				break
			}
		}
	}
	return out
}

// normalizeWords lower-cases s and keeps letters and digits, one space
// between words.
func normalizeWords(s string) string {
	return strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r > 0x7f)
	}), " ")
}

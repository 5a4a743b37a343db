package cli

import (
	"fmt"
	"io"
	"strings"

	"github.com/clinsight/clinsight/app/cohort"
)

// writeConceptSets prints the concept sets of an answer on an OMOP source:
// each set's concepts (id, name, vocabulary and code), its descendants and
// the persons it finds; then the terms no concept was found for.
func writeConceptSets(w io.Writer, ans *cohort.Answer) {
	if len(ans.ConceptSets) == 0 && len(ans.UnresolvedTerms) == 0 {
		return
	}
	if len(ans.ConceptSets) > 0 {
		fmt.Fprintf(w, "\nConcept sets (terms from the %s):\n", ans.ConceptsFrom)
	}
	for _, s := range ans.ConceptSets {
		var items []string
		for _, it := range s.Items {
			text := fmt.Sprintf("%d %s [%s %s]", it.ID, it.Name, it.Vocabulary, it.Code)
			if it.Excluded {
				text = "not " + text
			}
			if it.MappedFrom != nil {
				text += fmt.Sprintf(" (mapped from %s %s)", it.MappedFrom.Vocabulary, it.MappedFrom.Code)
			}
			items = append(items, text)
		}
		line := fmt.Sprintf("  %s (%s): %s", s.Name, s.Domain, strings.Join(items, "; "))
		if s.Descendants > 0 {
			line += fmt.Sprintf(" + %d descendants", s.Descendants)
		}
		switch {
		case s.PersonsUnder > 0:
			line += fmt.Sprintf("; <%d patients", s.PersonsUnder)
		case s.Persons >= 0:
			line += fmt.Sprintf("; %d patients", s.Persons)
		}
		fmt.Fprintln(w, line)
	}
	if len(ans.UnresolvedTerms) > 0 {
		var ts []string
		for _, t := range ans.UnresolvedTerms {
			ts = append(ts, fmt.Sprintf("%q", t.Text))
		}
		fmt.Fprintf(w, "No concept found for: %s\n", strings.Join(ts, ", "))
	}
}

package evidence

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// NotIncludedError is returned when an extraction is asked for studies
// (Session.Studies) that are not included in the review.
type NotIncludedError struct {
	// IDs are the studies asked for that are not included; Included the
	// review's included studies.
	IDs, Included []string
}

// maxListedStudies bounds the studies an error message names.
const maxListedStudies = 20

// Error names the studies that are not included and the included ones.
func (e *NotIncludedError) Error() string {
	return fmt.Sprintf("evidence: %s not included in the review; the included studies are: %s", listIDs(e.IDs), listIDs(e.Included))
}

// listIDs names at most maxListedStudies IDs, saying how many there are.
func listIDs(ids []string) string {
	if len(ids) <= maxListedStudies {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s, … (%d in all)", strings.Join(ids[:maxListedStudies], ", "), len(ids))
}

// extractionStudies returns the studies an extraction step works on: the
// included studies, or those of s.Studies, each of which must be
// included (else a *NotIncludedError).
func (s *Session) extractionStudies() ([]string, error) {
	included := s.Project.Included()
	if len(included) == 0 {
		return nil, errors.New("evidence: no study is included yet: include studies in the Screen step first")
	}
	if len(s.Studies) == 0 {
		return included, nil
	}
	var missing []string
	for _, id := range s.Studies {
		if !slices.Contains(included, id) {
			missing = append(missing, id)
		}
	}
	if len(missing) > 0 {
		return nil, &NotIncludedError{IDs: missing, Included: included}
	}
	return slices.Clone(s.Studies), nil
}

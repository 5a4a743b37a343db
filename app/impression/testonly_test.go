package impression

import "strings"

// Mentions returns the mentions LabelText found, in text order, for
// explaining a label vector.
func Mentions(text string) []Mention {
	_, ms := labelText(text, true)
	return ms
}

// ParseObservation finds an observation by CheXpert name or column name,
// ignoring case.
func ParseObservation(s string) (Observation, bool) {
	for i := range NumObservations {
		if strings.EqualFold(s, observationNames[i]) || strings.EqualFold(s, observationColumns[i]) {
			return Observation(i), true
		}
	}
	return 0, false
}

package evidence

import (
	"errors"
	"slices"
	"testing"
)

// TestExtractionStudies: the extraction steps work on every included
// study, or on the named ones, each of which must be included.
func TestExtractionStudies(t *testing.T) {
	p := NewProject("p", "lit", PICO{})
	p.Search = &SearchRun{IDs: []string{"a", "b", "c"}}
	p.Decisions = map[string]Decision{"a": {Include: true}, "b": {Include: false}, "c": {Include: true}}
	s := &Session{Project: p}
	if got, err := s.extractionStudies(); err != nil || !slices.Equal(got, []string{"a", "c"}) {
		t.Errorf("every included study: %v, %v", got, err)
	}
	s.Studies = []string{"c"}
	if got, err := s.extractionStudies(); err != nil || !slices.Equal(got, []string{"c"}) {
		t.Errorf("named: %v, %v", got, err)
	}
	s.Studies = []string{"c", "b", "z"}
	_, err := s.extractionStudies()
	var ni *NotIncludedError
	if !errors.As(err, &ni) || !slices.Equal(ni.IDs, []string{"b", "z"}) || err.Error() != "evidence: b, z not included in the review; the included studies are: a, c" {
		t.Errorf("not included: %v", err)
	}
	p.Decisions = nil
	if _, err := s.extractionStudies(); err == nil || errors.As(err, &ni) {
		t.Errorf("none included: %v", err)
	}
}

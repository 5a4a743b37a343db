package trials

import (
	"errors"
	"fmt"
	"strings"
)

// Sex is the sex a trial enrols, or a patient's sex.
type Sex string

// The values of [Sex]. A trial that does not restrict sex has SexAll; a
// patient whose sex is not known has SexUnknown.
const (
	SexAll     Sex = "all"
	SexFemale  Sex = "female"
	SexMale    Sex = "male"
	SexUnknown Sex = ""
)

// ParseSex normalises the ways records and patients state sex: "Female",
// "F", "women", "Both", "All", "" ... Unrecognised text gives SexUnknown.
func ParseSex(s string) Sex {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "f", "female", "females", "woman", "women", "girl", "girls":
		return SexFemale
	case "m", "male", "males", "man", "men", "boy", "boys":
		return SexMale
	case "all", "both", "any", "either", "male and female", "female and male", "males and females", "all genders":
		return SexAll
	}
	return SexUnknown
}

// CriterionKind says whether a criterion includes or excludes.
type CriterionKind string

// The kinds of criteria.
const (
	Inclusion CriterionKind = "inclusion"
	Exclusion CriterionKind = "exclusion"
)

// Criterion is one eligibility criterion of a trial.
type Criterion struct {
	// Kind is Inclusion or Exclusion.
	Kind CriterionKind `json:"kind"`
	// Index is the criterion's position within its kind, from 1.
	Index int `json:"index"`
	// Text is the criterion, without its bullet or number.
	Text string `json:"text"`
}

// Trial is a clinical trial record as Clinsight stores it: the fields the
// ranking reads, normalised from any of the supported formats.
type Trial struct {
	// ID is the registry identifier (NCT number). Required.
	ID string `json:"id"`
	// Title is the brief title.
	Title string `json:"title,omitempty"`
	// Conditions are the studied conditions, one per item.
	Conditions []string `json:"conditions,omitempty"`
	// Interventions are the intervention names, one per item.
	Interventions []string `json:"interventions,omitempty"`
	// Keywords are the record's keywords.
	Keywords []string `json:"keywords,omitempty"`
	// MeSH are the MeSH terms of the condition and intervention browse
	// sections.
	MeSH []string `json:"mesh,omitempty"`
	// Summary is the brief summary.
	Summary string `json:"summary,omitempty"`
	// Description is the detailed description (or, for corpora that only
	// carry free text, that text).
	Description string `json:"description,omitempty"`
	// Inclusion and Exclusion are the eligibility criteria, one per item,
	// split from the record's eligibility text.
	Inclusion []string `json:"inclusion,omitempty"`
	Exclusion []string `json:"exclusion,omitempty"`
	// Sex is the sex the trial enrols (SexAll when unrestricted or unknown).
	Sex Sex `json:"sex"`
	// MinAge and MaxAge are the age limits in years; 0 means no limit.
	MinAge float64 `json:"min_age,omitempty"`
	MaxAge float64 `json:"max_age,omitempty"`
	// DemographicsInferred is true when Sex and the ages were read from
	// the criteria or description text because the record has no
	// structured fields for them.
	DemographicsInferred bool `json:"demographics_inferred,omitempty"`
	// Status is the overall recruitment status ("Recruiting", "Completed", ...).
	Status string `json:"status,omitempty"`
	// Phase is the trial phase as written in the record.
	Phase string `json:"phase,omitempty"`
	// Source is the file (and archive member) the record came from.
	Source string `json:"source,omitempty"`
}

// maxIDBytes bounds a trial identifier (an NCT number has 11 characters,
// those of other registries a few dozen).
const maxIDBytes = 100

// Validate checks a trial before it is stored.
func (t *Trial) Validate() error {
	var problems []string
	if strings.TrimSpace(t.ID) == "" {
		problems = append(problems, "it has no identifier")
	} else if len(t.ID) > maxIDBytes {
		problems = append(problems, fmt.Sprintf("its identifier is longer than %d characters", maxIDBytes))
	}
	if t.Title == "" && t.Summary == "" && t.Description == "" && len(t.Conditions) == 0 {
		problems = append(problems, "it has no title, summary, description or condition")
	}
	if t.MinAge < 0 || t.MaxAge < 0 || (t.MaxAge > 0 && t.MinAge > t.MaxAge) {
		problems = append(problems, fmt.Sprintf("its age limits are inconsistent (%g to %g years)", t.MinAge, t.MaxAge))
	}
	switch t.Sex {
	case SexAll, SexFemale, SexMale:
	default:
		problems = append(problems, fmt.Sprintf("its sex %q is not all, female or male", t.Sex))
	}
	if len(problems) > 0 {
		return errors.New(strings.Join(problems, "; "))
	}
	return nil
}

// Criteria returns the trial's criteria, inclusion first, numbered from 1
// within each kind.
func (t *Trial) Criteria() []Criterion {
	out := make([]Criterion, 0, len(t.Inclusion)+len(t.Exclusion))
	for i, c := range t.Inclusion {
		out = append(out, Criterion{Kind: Inclusion, Index: i + 1, Text: c})
	}
	for i, c := range t.Exclusion {
		out = append(out, Criterion{Kind: Exclusion, Index: i + 1, Text: c})
	}
	return out
}

// Recruiting reports whether the status says the trial recruits or will.
func (t *Trial) Recruiting() bool {
	s := strings.ToLower(t.Status)
	return strings.Contains(s, "recruiting") && !strings.Contains(s, "not recruiting") ||
		strings.Contains(s, "not yet recruiting") || strings.Contains(s, "enrolling by invitation")
}

// AgeLimits describes the age limits for people: "18–65 years", "≥ 18
// years", "any age".
func (t *Trial) AgeLimits() string {
	switch {
	case t.MinAge > 0 && t.MaxAge > 0:
		return fmt.Sprintf("%s–%s years", fmtYears(t.MinAge), fmtYears(t.MaxAge))
	case t.MinAge > 0:
		return fmt.Sprintf("≥ %s years", fmtYears(t.MinAge))
	case t.MaxAge > 0:
		return fmt.Sprintf("≤ %s years", fmtYears(t.MaxAge))
	}
	return "any age"
}

func fmtYears(y float64) string {
	if y == float64(int(y)) {
		return fmt.Sprint(int(y))
	}
	return fmt.Sprintf("%.2g", y)
}

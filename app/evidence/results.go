package evidence

// Measure is the shape of a study's result for an outcome.
type Measure string

// The result shapes.
const (
	// TwoGroups: events and totals in a treatment and a control group (for
	// OR, RR, RD).
	TwoGroups Measure = "two-groups"
	// SingleArm: events and total in one group (response or toxicity rates:
	// PR, PLO, PFT).
	SingleArm Measure = "single-arm"
	// MeansSDs: mean, SD and size in a treatment and a control group (MD,
	// SMD).
	MeansSDs Measure = "means"
	// RatioCI: a reported effect (HR, OR, RR) with its 95% confidence
	// interval (generic inverse variance on the log scale).
	RatioCI Measure = "ratio"
)

// ResultSpec says which result to extract from every included study.
type ResultSpec struct {
	// Outcome is the outcome in plain words ("overall response rate").
	Outcome string `json:"outcome"`
	// Cohort defines the groups ("patients treated with microwave ablation
	// (treatment) vs radiofrequency ablation (control)").
	Cohort string `json:"cohort"`
	// Measure is the shape of the result.
	Measure Measure `json:"measure"`
}

// Number is an extracted number with the chunks it was read from.
type Number struct {
	// Value is the number.
	Value float64 `json:"value"`
	// Sources are the chunk numbers it was read from.
	Sources []int `json:"sources,omitempty"`
	// Unsupported flags a number that occurs in none of its cited chunks.
	Unsupported bool `json:"unsupported,omitempty"`
}

// ResultGroup is one group of a study with its numbers for the outcome;
// a nil number was not reported.
type ResultGroup struct {
	// Name is the group as the study names it.
	Name string `json:"name"`
	// Role is "treatment", "control" or "" (another group, not analysed).
	Role string `json:"role,omitempty"`
	// N is the group's size.
	N *Number `json:"n,omitempty"`
	// Events is the number with the outcome (TwoGroups, SingleArm).
	Events *Number `json:"events,omitempty"`
	// Percent is the percentage with the outcome, when the study reports a
	// percentage instead of a count.
	Percent *Number `json:"percent,omitempty"`
	// Mean and SD describe a continuous outcome (MeansSDs).
	Mean *Number `json:"mean,omitempty"`
	SD   *Number `json:"sd,omitempty"`
}

// Effect is a reported effect estimate with its confidence interval.
type Effect struct {
	// Kind is "HR", "OR", "RR" or another ratio's name.
	Kind string `json:"kind"`
	// Est, Lower and Upper are the estimate and its 95% CI.
	Est   Number `json:"est"`
	Lower Number `json:"lower"`
	Upper Number `json:"upper"`
}

// ResultExtraction is the result of one study for the review's ResultSpec,
// as the model read it (typed JSON) and the user corrected it.
type ResultExtraction struct {
	// StudyID is the record's ID.
	StudyID string `json:"study_id"`
	// Groups are the groups found, with their numbers.
	Groups []ResultGroup `json:"groups"`
	// Effect is a reported effect estimate (RatioCI), nil when none.
	Effect *Effect `json:"effect,omitempty"`
	// Edited marks a result the user changed; a new model run keeps it.
	Edited bool `json:"edited,omitempty"`
}

// StandardRow is a study's result in the standardized table, computed in
// Go from a ResultExtraction (no model-written code runs): the input of
// the meta-analysis. Only the fields of its Measure are set.
type StandardRow struct {
	// StudyID is the record's ID; Label names the study in the table and
	// the forest plot ("Smith 2019").
	StudyID string `json:"study_id"`
	Label   string `json:"label"`
	// Measure is the row's shape.
	Measure Measure `json:"measure"`
	// Events1 of Total1 in the treatment (or single) group; Events2 of
	// Total2 in the control group (TwoGroups, SingleArm).
	Events1 float64 `json:"events1,omitempty"`
	Total1  float64 `json:"total1,omitempty"`
	Events2 float64 `json:"events2,omitempty"`
	Total2  float64 `json:"total2,omitempty"`
	// Mean1, SD1, Mean2, SD2 (with Total1, Total2 as sizes) for MeansSDs.
	Mean1 float64 `json:"mean1,omitempty"`
	SD1   float64 `json:"sd1,omitempty"`
	Mean2 float64 `json:"mean2,omitempty"`
	SD2   float64 `json:"sd2,omitempty"`
	// EffectKind, Est, Lower, Upper for RatioCI.
	EffectKind string  `json:"effect_kind,omitempty"`
	Est        float64 `json:"est,omitempty"`
	Lower      float64 `json:"lower,omitempty"`
	Upper      float64 `json:"upper,omitempty"`
	// Derivations say how values were computed ("events1 = 45% of 80 = 36").
	Derivations []string `json:"derivations,omitempty"`
	// Sources are the chunk numbers every number was read from.
	Sources []int `json:"sources,omitempty"`
}

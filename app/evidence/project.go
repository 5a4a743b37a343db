package evidence

import "time"

// ProjectVersion is the version of the saved project format.
const ProjectVersion = 1

// Steps of a review project, in order.
const (
	StepPICO    = "PICO"
	StepSearch  = "Search"
	StepScreen  = "Screen"
	StepExtract = "Extract"
	StepResults = "Results"
	StepMeta    = "Meta-analysis"
)

// Project is a review project: every step's inputs, the model's outputs and
// the user's edits and decisions, saved as JSON in the workspace so that a
// review can be resumed. Nothing in it is final until the user accepts it.
type Project struct {
	// Version is ProjectVersion.
	Version int `json:"version"`
	// Name names the project (and its file).
	Name string `json:"name"`
	// Source is the data source (name or path) holding the corpus.
	Source string `json:"source"`
	// Created and Updated are when the project was created and last saved.
	Created time.Time `json:"created"`
	Updated time.Time `json:"updated"`

	// PICO is the review question.
	PICO PICO `json:"pico"`

	// Terms are the search terms (generated, then edited by the user).
	Terms SearchTerms `json:"terms"`
	// Query is the boolean query (from Terms or written by the user).
	Query string `json:"query"`
	// Search is the last search run, nil before one.
	Search *SearchRun `json:"search,omitempty"`

	// Criteria are the eligibility criteria (generated, then edited).
	Criteria []Criterion `json:"criteria"`
	// Screening holds the screening of the candidates, best first.
	Screening []ScreenedStudy `json:"screening"`
	// Decisions are the user's decisions by record ID.
	Decisions map[string]Decision `json:"decisions"`

	// Fields are the fields to extract from included studies.
	Fields []FieldSpec `json:"fields"`
	// Extractions are the extracted fields by record ID.
	Extractions map[string][]FieldValue `json:"extractions"`

	// Result says which result to extract.
	Result ResultSpec `json:"result"`
	// Results are the extracted results by record ID.
	Results map[string]ResultExtraction `json:"results"`

	// Meta are the meta-analysis settings.
	Meta MetaSettings `json:"meta"`
}

// SearchRun is a boolean search as run: the query, its FTS5 form, the
// number of records found and the IDs of the candidates kept for screening.
type SearchRun struct {
	Query string    `json:"query"`
	FTS5  string    `json:"fts5"`
	Total int64     `json:"total"`
	IDs   []string  `json:"ids"`
	At    time.Time `json:"at"`
}

// ScreenedStudy is one candidate's screening by the model.
type ScreenedStudy struct {
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	Year     int       `json:"year,omitempty"`
	Verdicts []Verdict `json:"verdicts,omitempty"`
	// Score is Score(Verdicts, Criteria).
	Score float64 `json:"score"`
	// Error is why the study could not be screened, "" when it was.
	Error string `json:"error,omitempty"`
}

// Decision is the user's decision on a study.
type Decision struct {
	// Include is true for an included study, false for an excluded one.
	Include bool `json:"include"`
	// Reason is why (required for an exclusion; shown in PRISMA).
	Reason string `json:"reason,omitempty"`
	// At is when the decision was made.
	At time.Time `json:"at"`
}

// MetaSettings are the meta-analysis choices of a project.
type MetaSettings struct {
	// Measure is the effect measure's metafor name (OR, RR, RD, PR, PLO,
	// PFT, MD, SMD, GEN.RATIO); empty picks one that suits Result.Measure.
	Measure string `json:"measure,omitempty"`
	// Method is the pooling method (REML, DL, EE, MH); empty means REML.
	Method string `json:"method,omitempty"`
	// KnappHartung selects Knapp–Hartung inference.
	KnappHartung bool `json:"knapp_hartung,omitempty"`
}

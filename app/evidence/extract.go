package evidence

import "github.com/clinsight/clinsight/localllm"

// NotPresent is the value of a field that the study's text does not report
// (TrialMind's "NP").
const NotPresent = "NP"

// MaxSources is the most chunks a value may cite.
const MaxSources = 3

// FieldSpec is a field the user wants extracted from every included study,
// described in plain language.
type FieldSpec struct {
	// Name is a short name ("median age", "number randomised").
	Name string `json:"name"`
	// Description says what to extract, in the user's words.
	Description string `json:"description"`
}

// FieldValue is one extracted field of one study.
type FieldValue struct {
	// Name is the field's name (FieldSpec.Name).
	Name string `json:"name"`
	// Value is the value as text, NotPresent when the text does not report it.
	Value string `json:"value"`
	// Sources are the numbers of the chunks (StudyText.Chunks) the value
	// was read from, at most MaxSources.
	Sources []int `json:"sources,omitempty"`
	// Unsupported flags a value with a number that occurs in none of its
	// cited chunks (or a value other than NotPresent that cites none).
	Unsupported bool `json:"unsupported,omitempty"`
	// Edited marks a value the user changed; a new model run keeps it.
	Edited bool `json:"edited,omitempty"`
}

// Extractor extracts fields and results from study texts with a chat
// model. It is safe for concurrent use.
type Extractor struct {
	// Chat is the model client.
	Chat localllm.Chatter
	// Model is the chat model's name.
	Model string
	// Options are the model options.
	Options localllm.Options
}

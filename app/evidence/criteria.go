package evidence

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"

	"github.com/clinsight/clinsight/localllm"
)

// Kinds of eligibility criteria.
const (
	// TitleCriterion can be judged from a study's title alone.
	TitleCriterion = "title"
	// ContentCriterion needs the abstract (or the full text).
	ContentCriterion = "content"
)

// Criterion is one eligibility criterion of a review. The user edits the
// list: its text, its weight in the screening score, and whether it counts.
type Criterion struct {
	// Text is the criterion, a statement a study meets or not.
	Text string `json:"text"`
	// Kind is TitleCriterion, ContentCriterion or "" (not said).
	Kind string `json:"kind,omitempty"`
	// Weight is the criterion's weight in the screening score (≥ 0; 1 when
	// a criteria file leaves it out).
	Weight float64 `json:"weight"`
	// Disabled switches the criterion off: it is still screened, so it can
	// be switched back on without asking the model again, but does not
	// count in the score.
	Disabled bool `json:"disabled,omitempty"`
}

// CriteriaSet is the model's reply to the criteria prompt.
type CriteriaSet struct {
	// Analysis is the model's analysis of the PICO question.
	Analysis string `json:"analysis"`
	// Title are the criteria judged from the title.
	Title []string `json:"title_criteria"`
	// Content are the criteria that need the abstract.
	Content []string `json:"content_criteria"`
}

// criteriaSchema is the schema of CriteriaSet.
var criteriaSchema = sync.OnceValue(func() *localllm.Schema {
	return localllm.MustParseSchema(`{"type":"object","properties":{
	"analysis":{"type":"string"},
	"title_criteria":{"type":"array","items":{"type":"string"}},
	"content_criteria":{"type":"array","items":{"type":"string"}}},
	"required":["analysis","title_criteria","content_criteria"]}`)
})

// Criteria returns the set's criteria, title criteria first, each with
// weight 1; blank and repeated texts are dropped.
func (s CriteriaSet) Criteria() []Criterion {
	var out []Criterion
	seen := map[string]bool{}
	for _, l := range []struct {
		kind  string
		texts []string
	}{{TitleCriterion, s.Title}, {ContentCriterion, s.Content}} {
		for _, t := range l.texts {
			t = cleanSpace(t)
			if t == "" || seen[strings.ToLower(t)] {
				continue
			}
			seen[strings.ToLower(t)] = true
			out = append(out, Criterion{Text: t, Kind: l.kind, Weight: 1})
		}
	}
	return out
}

// GenerateCriteria asks the model for eligibility criteria from a PICO
// (TrialMind's design: an analysis, then title criteria and content
// criteria) in one JSON reply. The caller shows the criteria for editing.
// A reply without any criterion is an error.
func GenerateCriteria(ctx context.Context, chat localllm.Chatter, model string, p PICO, opts localllm.Options) (CriteriaSet, error) {
	if err := p.Validate(); err != nil {
		return CriteriaSet{}, fmt.Errorf("evidence: eligibility criteria: %w", err)
	}
	msgs, err := promptMessages("criteria", p)
	if err != nil {
		return CriteriaSet{}, err
	}
	var set CriteriaSet
	if _, err := chat.ChatJSON(ctx, localllm.ChatRequest{Model: model, Messages: msgs, Options: opts}, criteriaSchema(), &set); err != nil {
		return CriteriaSet{}, fmt.Errorf("evidence: generating eligibility criteria: %w", err)
	}
	if len(set.Criteria()) == 0 {
		return CriteriaSet{}, fmt.Errorf("evidence: model %s gave no eligibility criteria; write them yourself or try again", model)
	}
	return set, nil
}

// ParseCriteria reads a criteria file: a JSON list whose items are either
// strings (the criterion's text) or objects {"text", "kind", "weight",
// "disabled"}; a missing weight is 1. It refuses an empty list, blank
// texts, unknown kinds and negative or non-finite weights.
func ParseCriteria(data []byte) ([]Criterion, error) {
	var items []json.RawMessage
	if err := json.Unmarshal(data, &items); err != nil {
		return nil, fmt.Errorf("the criteria must be a JSON list of texts or {\"text\",\"weight\",\"disabled\"} objects: %w", err)
	}
	if len(items) == 0 {
		return nil, errors.New("the criteria list is empty")
	}
	out := make([]Criterion, 0, len(items))
	for i, raw := range items {
		var c Criterion
		if t := bytes.TrimSpace(raw); len(t) > 0 && t[0] == '"' {
			if err := json.Unmarshal(raw, &c.Text); err != nil {
				return nil, fmt.Errorf("criterion %d: %w", i+1, err)
			}
			c.Weight = 1
		} else {
			var o struct {
				Text     string   `json:"text"`
				Kind     string   `json:"kind"`
				Weight   *float64 `json:"weight"`
				Disabled bool     `json:"disabled"`
			}
			dec := json.NewDecoder(bytes.NewReader(raw))
			dec.DisallowUnknownFields()
			if err := dec.Decode(&o); err != nil {
				return nil, fmt.Errorf("criterion %d: %w", i+1, err)
			}
			c = Criterion{Text: o.Text, Kind: o.Kind, Weight: 1, Disabled: o.Disabled}
			if o.Weight != nil {
				c.Weight = *o.Weight
			}
		}
		c.Text = cleanSpace(c.Text)
		if err := c.validate(); err != nil {
			return nil, fmt.Errorf("criterion %d: %w", i+1, err)
		}
		out = append(out, c)
	}
	return out, nil
}

// validate checks one criterion.
func (c Criterion) validate() error {
	if strings.TrimSpace(c.Text) == "" {
		return errors.New("the criterion has no text")
	}
	switch c.Kind {
	case "", TitleCriterion, ContentCriterion:
	default:
		return fmt.Errorf("kind %q is not %q or %q", c.Kind, TitleCriterion, ContentCriterion)
	}
	if c.Weight < 0 || math.IsNaN(c.Weight) || math.IsInf(c.Weight, 0) {
		return fmt.Errorf("weight %v must be a finite number ≥ 0", c.Weight)
	}
	return nil
}

// ValidateCriteria checks a list of criteria before screening.
func ValidateCriteria(cs []Criterion) error {
	if len(cs) == 0 {
		return errors.New("evidence: there are no eligibility criteria")
	}
	for i, c := range cs {
		if err := c.validate(); err != nil {
			return fmt.Errorf("evidence: criterion %d: %w", i+1, err)
		}
	}
	return nil
}

// ParseWeight reads a criterion's weight as the user typed it: a finite
// number ≥ 0.
func ParseWeight(text string) (float64, error) {
	v, err := strconv.ParseFloat(strings.TrimSpace(text), 64)
	if err != nil || v < 0 || math.IsNaN(v) || math.IsInf(v, 0) {
		return 0, errors.New("a weight is a number ≥ 0")
	}
	return v, nil
}

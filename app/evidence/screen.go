package evidence

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/clinsight/clinsight/localllm"
)

// Verdict is a screening verdict on one criterion.
type Verdict string

// The verdicts.
const (
	// Yes: the text shows that the study meets the criterion.
	Yes Verdict = "YES"
	// No: the text shows that the study does not meet it.
	No Verdict = "NO"
	// Uncertain: the text does not say.
	Uncertain Verdict = "UNCERTAIN"
)

// value is the verdict's contribution to the score.
func (v Verdict) value() float64 {
	switch v {
	case Yes:
		return 1
	case No:
		return -1
	}
	return 0
}

// screenSchema is the schema of a screening reply.
var screenSchema = sync.OnceValue(func() *localllm.Schema {
	return localllm.MustParseSchema(`{"type":"object","properties":{
	"verdicts":{"type":"array","items":{"type":"string","enum":["YES","NO","UNCERTAIN"]}}},
	"required":["verdicts"]}`)
})

// countRetryMessage asks the model again after a wrong number of verdicts.
const countRetryMessage = "Your reply has %d verdicts, but there are %d criteria. " +
	"Reply again with exactly %d verdicts (YES, NO or UNCERTAIN), one per criterion, in the order of the criteria."

// VerdictCountError is a screening reply with the wrong number of verdicts,
// still wrong after one retry.
type VerdictCountError struct {
	// Model is the model that answered.
	Model string
	// Want is the number of criteria; Got the number of verdicts.
	Want, Got int
}

// Error says what was expected.
func (e *VerdictCountError) Error() string {
	return fmt.Sprintf("model %s gave %d verdicts for %d criteria, also when asked again for exactly %d; try again, or choose a larger model in Settings",
		e.Model, e.Got, e.Want, e.Want)
}

// Screener screens studies against eligibility criteria with a chat model.
// It is safe for concurrent use once set up (ScreenAll uses it so).
type Screener struct {
	// Chat is the model client.
	Chat localllm.Chatter
	// Model is the chat model's name.
	Model string
	// PICO is the review question, shown to the model.
	PICO PICO
	// Criteria are the eligibility criteria; every one is screened, even a
	// disabled one (Score leaves it out), so that switching it on needs no
	// new call.
	Criteria []Criterion
	// Options are the model options.
	Options localllm.Options
}

// maxAbstractChars clips the study text in the screening prompt.
const maxAbstractChars = 6000

// Screen asks the model for one verdict per criterion on the record, in
// one JSON reply. A reply with the wrong number of verdicts is retried
// once with a message saying how many are expected, then rejected with a
// *VerdictCountError.
func (s *Screener) Screen(ctx context.Context, r *Record) ([]Verdict, error) {
	if err := ValidateCriteria(s.Criteria); err != nil {
		return nil, err
	}
	want := len(s.Criteria)
	msgs, err := promptMessages("screen", struct {
		PICO            PICO
		Criteria        []Criterion
		Title, Abstract string
	}{s.PICO, s.Criteria, cleanSpace(r.Title), clipRunes(r.Abstract(), maxAbstractChars)})
	if err != nil {
		return nil, err
	}
	req := localllm.ChatRequest{Model: s.Model, Messages: msgs, Options: s.Options}
	var got int
	for attempt := 0; attempt < 2; attempt++ {
		var reply struct {
			Verdicts []Verdict `json:"verdicts"`
		}
		res, err := s.Chat.ChatJSON(ctx, req, screenSchema(), &reply)
		if err != nil {
			return nil, fmt.Errorf("evidence: screening %s: %w", r.ID, err)
		}
		got = len(reply.Verdicts)
		if got == want {
			return reply.Verdicts, nil
		}
		req.Messages = append(append([]localllm.Message(nil), req.Messages...),
			localllm.Message{Role: localllm.RoleAssistant, Content: res.Content},
			localllm.Message{Role: localllm.RoleUser, Content: fmt.Sprintf(countRetryMessage, got, want, want)})
	}
	return nil, fmt.Errorf("evidence: screening %s: %w", r.ID, &VerdictCountError{Model: s.Model, Want: want, Got: got})
}

// Score aggregates verdicts into a screening score: the weighted mean of
// YES = 1, UNCERTAIN = 0, NO = −1 over the enabled criteria, in [−1, 1]; 0
// when no enabled criterion has a positive weight. verdicts and criteria
// are matched by position; missing verdicts count as UNCERTAIN.
func Score(verdicts []Verdict, criteria []Criterion) float64 {
	var sum, wsum float64
	for i, c := range criteria {
		if c.Disabled || c.Weight <= 0 {
			continue
		}
		v := Uncertain
		if i < len(verdicts) {
			v = verdicts[i]
		}
		sum += c.Weight * v.value()
		wsum += c.Weight
	}
	if wsum == 0 {
		return 0
	}
	return sum / wsum
}

// StudyResult is the screening of one study.
type StudyResult struct {
	// Index is the study's position in the input.
	Index int
	// Record is the study.
	Record Record
	// Verdicts are the verdicts per criterion (nil when Err is set).
	Verdicts []Verdict
	// Score is Score(Verdicts, criteria).
	Score float64
	// Err is why the study could not be screened (the model failed, the
	// reply was wrong, the run was cancelled).
	Err error
}

// ScreenOptions tunes ScreenAll.
type ScreenOptions struct {
	// Concurrency bounds the model calls in flight; ≤ 0 means 1.
	Concurrency int
	// Progress, if not nil, is called after each study with the number
	// done and the total (from several goroutines, one call at a time).
	Progress func(done, total int)
}

// ScreenAll screens the records in parallel, at most opts.Concurrency
// model calls at a time, and returns one result per record in input order.
// A study whose screening fails has its Err set and leaves the others
// intact. When ctx is cancelled, no new call starts, the calls in flight
// are cancelled, the studies not screened get ctx's error, and ScreenAll
// returns the results with ctx's error.
func (s *Screener) ScreenAll(ctx context.Context, records []Record, opts ScreenOptions) ([]StudyResult, error) {
	if err := ValidateCriteria(s.Criteria); err != nil {
		return nil, err
	}
	results := make([]StudyResult, len(records))
	started := make([]bool, len(records))
	for i := range records {
		results[i] = StudyResult{Index: i, Record: records[i]}
	}
	errs := ForEach(ctx, len(records), opts.Concurrency, opts.Progress, func(ctx context.Context, i int) error {
		started[i] = true
		res := &results[i]
		var err error
		if res.Verdicts, err = s.Screen(ctx, &res.Record); err == nil {
			res.Score = Score(res.Verdicts, s.Criteria)
		}
		return err
	})
	for i, err := range errs {
		if err != nil && !started[i] { // cancelled before its call
			err = fmt.Errorf("evidence: screening %s: %w", records[i].ID, err)
		}
		results[i].Err = err
	}
	return results, ctx.Err()
}

// Failed returns the errors of the studies that could not be screened,
// joined (nil when all were).
func Failed(results []StudyResult) error {
	var errs []error
	for _, r := range results {
		if r.Err != nil {
			errs = append(errs, r.Err)
		}
	}
	return errors.Join(errs...)
}

package evidence

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/clinsight/clinsight/app/meta"
)

// MaxOutcomes bounds the number of outcomes of a review.
const MaxOutcomes = 20

// outcomesVersion is the project format version that adds several
// outcomes and arm choices: a project using either is saved with it, so
// that an older Clinsight refuses it rather than dropping them.
const outcomesVersion = 3

// Outcome is one outcome of a review: which result to extract, the
// results extracted, the arms chosen for multi-arm studies, and the
// meta-analysis settings. The first outcome is embedded in Project (its
// fields are saved at the top level, as before several outcomes existed);
// the others are Project.OtherOutcomes.
type Outcome struct {
	// Result says which result to extract.
	Result ResultSpec `json:"result"`
	// Results are the extracted results by record ID.
	Results map[string]ResultExtraction `json:"results"`
	// ResultsWith records, by record ID, a fingerprint of the Result spec a
	// study's result was extracted with (see Project.ExtractedWith).
	ResultsWith map[string]string `json:"results_with,omitempty"`
	// Meta are the meta-analysis settings.
	Meta MetaSettings `json:"meta"`
	// Arms are the user's arm choices for multi-arm studies, by record ID
	// (arms.go).
	Arms map[string]ArmChoice `json:"arms,omitempty"`
}

// Name is the outcome's name (its Result.Outcome, white space collapsed),
// or "outcome" when it has none yet.
func (o *Outcome) Name() string {
	if n := cleanSpace(o.Result.Outcome); n != "" {
		return n
	}
	return "outcome"
}

// NumOutcomes returns the number of outcomes of the review (at least 1).
func (p *Project) NumOutcomes() int { return 1 + len(p.OtherOutcomes) }

// OutcomeAt returns outcome i (0 is the first; messages number outcomes
// from 1), nil when out of range.
// The pointer is valid until an outcome is added or removed.
func (p *Project) OutcomeAt(i int) *Outcome {
	switch {
	case i == 0:
		return &p.Outcome
	case i > 0 && i <= len(p.OtherOutcomes):
		return &p.OtherOutcomes[i-1]
	}
	return nil
}

// outcome returns outcome i, or an error naming the outcomes there are.
func (p *Project) outcome(i int) (*Outcome, error) {
	if o := p.OutcomeAt(i); o != nil {
		return o, nil
	}
	return nil, fmt.Errorf("the review has no outcome %d; its outcomes are %s", i+1, p.outcomeList())
}

// outcomeList names the outcomes for messages, numbered from 1 as people
// count them: `1 "overall survival", 2 "toxicity"`.
func (p *Project) outcomeList() string {
	names := make([]string, p.NumOutcomes())
	for i := range names {
		names[i] = fmt.Sprintf("%d %q", i+1, p.OutcomeAt(i).Name())
	}
	return strings.Join(names, ", ")
}

// OutcomeNames returns the outcomes' names (Outcome.Name), in order.
func (p *Project) OutcomeNames() []string {
	out := make([]string, p.NumOutcomes())
	for i := range out {
		out[i] = p.OutcomeAt(i).Name()
	}
	return out
}

// empty reports an outcome with nothing in it yet (a new project's).
func (o *Outcome) empty() bool {
	return cleanSpace(o.Result.Outcome) == "" && o.Result.Measure == "" && len(o.Results) == 0 && len(o.Arms) == 0
}

// AddOutcome adds an outcome to extract (a valid spec; an outcome name
// the review already has is refused) and returns its index. A review
// whose only outcome is still empty gets it as its first outcome.
func (p *Project) AddOutcome(spec ResultSpec) (int, error) {
	spec.Outcome, spec.Cohort = cleanSpace(spec.Outcome), cleanSpace(spec.Cohort)
	if err := spec.Validate(); err != nil {
		return 0, err
	}
	if p.NumOutcomes() == 1 && p.Outcome.empty() {
		p.SetResult(spec)
		return 0, nil
	}
	for i := range p.NumOutcomes() {
		if strings.EqualFold(cleanSpace(p.OutcomeAt(i).Result.Outcome), spec.Outcome) {
			return 0, fmt.Errorf("the review already has the outcome %q (outcome %d): give the new one another name", spec.Outcome, i+1)
		}
	}
	if p.NumOutcomes() >= MaxOutcomes {
		return 0, fmt.Errorf("a review has at most %d outcomes", MaxOutcomes)
	}
	p.OtherOutcomes = append(p.OtherOutcomes, Outcome{Result: spec, Results: map[string]ResultExtraction{}})
	p.useOutcomesFormat()
	return p.NumOutcomes() - 1, nil
}

// RemoveOutcome removes outcome i with its results and arm choices; the
// review's last outcome cannot be removed (removing the first moves the
// next one up).
func (p *Project) RemoveOutcome(i int) error {
	if _, err := p.outcome(i); err != nil {
		return err
	}
	if p.NumOutcomes() == 1 {
		return errors.New("the review's only outcome cannot be removed: change it instead")
	}
	if i == 0 {
		p.Outcome = p.OtherOutcomes[0]
		p.OtherOutcomes = slices.Delete(p.OtherOutcomes, 0, 1)
	} else {
		p.OtherOutcomes = slices.Delete(p.OtherOutcomes, i-1, i)
	}
	if len(p.OtherOutcomes) == 0 {
		p.OtherOutcomes = nil
	}
	return nil
}

// useOutcomesFormat marks a project that uses several outcomes or arm
// choices with the format version that has them.
func (p *Project) useOutcomesFormat() {
	if p.Version < outcomesVersion {
		p.Version = outcomesVersion
	}
}

// validateOutcomes checks the outcomes of a project read or saved: at most
// MaxOutcomes, and a name for each outcome beyond the first, used once.
func (p *Project) validateOutcomes() error {
	if p.NumOutcomes() > MaxOutcomes {
		return fmt.Errorf("the review has %d outcomes; at most %d are allowed", p.NumOutcomes(), MaxOutcomes)
	}
	seen := map[string]int{}
	for i := range p.NumOutcomes() {
		name := strings.ToLower(cleanSpace(p.OutcomeAt(i).Result.Outcome))
		if name == "" {
			if i > 0 {
				return fmt.Errorf("outcome %d has no name", i+1)
			}
			continue
		}
		if j, ok := seen[name]; ok {
			return fmt.Errorf("outcomes %d and %d are both %q", j+1, i+1, p.OutcomeAt(i).Name())
		}
		seen[name] = i
	}
	return nil
}

// StandardTableFor standardizes the extracted results of outcome i for the
// included studies, as StandardTable does for the first outcome; a study
// whose result has more groups than the outcome's shape compares and no
// arm choice (ArmsNeeded) is left out and named in problems. An unknown
// outcome gives no rows and one problem.
func (p *Project) StandardTableFor(i int) (rows []StandardRow, problems []string) {
	o, err := p.outcome(i)
	if err != nil {
		return nil, []string{err.Error()}
	}
	included := p.Included()
	labels := p.uniqueLabels(included)
	for _, id := range included {
		row, err := p.standardRowIn(o, id, labels[id])
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: %s", labels[id], problemText(err)))
			continue
		}
		rows = append(rows, row)
	}
	return rows, problems
}

// StandardRowFor standardizes a study's result for outcome i (see
// StandardRow).
func (p *Project) StandardRowFor(i int, id string) (StandardRow, error) {
	o, err := p.outcome(i)
	if err != nil {
		return StandardRow{StudyID: id, Label: p.Label(id)}, err
	}
	label, ok := p.uniqueLabels(p.Included())[id]
	if !ok {
		label = p.Label(id)
	}
	return p.standardRowIn(o, id, label)
}

func (p *Project) standardRowIn(o *Outcome, id, label string) (StandardRow, error) {
	r, ok := o.Results[id]
	if !ok {
		return StandardRow{StudyID: id, Label: label}, errors.New("no result extracted yet")
	}
	if with, known := o.ResultsWith[id]; known && specsFingerprint(with) != fingerprint(o.Result) {
		what := "extracted"
		if r.Edited {
			what = "corrected"
		}
		return StandardRow{StudyID: id, Label: label}, fmt.Errorf("the result was %s for an earlier outcome, cohort or shape; run Extract results again, or correct it for the current one", what)
	}
	var choice *ArmChoice
	if c, ok := o.Arms[id]; ok {
		choice = &c
	}
	return Standardize(r, o.Result, label, choice)
}

// MetaOptionsFor returns the meta-analysis options of outcome i (see
// MetaOptions).
func (p *Project) MetaOptionsFor(i int) (meta.Options, error) {
	o, err := p.outcome(i)
	if err != nil {
		return meta.Options{}, err
	}
	return o.metaOptions()
}

func (o *Outcome) metaOptions() (meta.Options, error) {
	var opts meta.Options
	if o.Meta.Measure != "" {
		m, err := meta.ParseMeasure(o.Meta.Measure)
		if err != nil {
			return opts, err
		}
		opts.Measure = m
	} else {
		if o.Result.Measure == "" {
			return opts, errors.New("choose the shape of the result to extract (or an effect measure) before the meta-analysis")
		}
		opts.Measure = DefaultMeasure(o.Result.Measure)
	}
	if o.Meta.Method != "" {
		m, err := meta.ParseMethod(o.Meta.Method)
		if err != nil {
			return opts, err
		}
		opts.Method = m
	}
	if o.Meta.KnappHartung {
		opts.Test = meta.TestKnHa
	}
	return opts, nil
}

// AnalyzeOutcome runs the meta-analysis of outcome i's standardized table
// (StandardTableFor; studies it leaves out, such as multi-arm studies
// without an arm choice, are not analysed) with the outcome's Meta
// settings. It returns the studies analysed with the result.
func (p *Project) AnalyzeOutcome(i int) (studies []meta.Study, res meta.Result, err error) {
	o, err := p.outcome(i)
	if err != nil {
		return nil, meta.Result{}, fmt.Errorf("evidence: meta-analysis: %w", err)
	}
	what := "meta-analysis"
	if p.NumOutcomes() > 1 {
		what = fmt.Sprintf("meta-analysis of %q", o.Name())
	}
	opts, err := o.metaOptions()
	if err != nil {
		return nil, meta.Result{}, fmt.Errorf("evidence: %s: %w", what, err)
	}
	rows, problems := p.StandardTableFor(i)
	if len(rows) == 0 {
		msg := "no included study has a standardized result yet"
		if len(problems) > 0 {
			msg += ": " + strings.Join(problems, "; ")
		}
		return nil, meta.Result{}, fmt.Errorf("evidence: %s: %s", what, msg)
	}
	studies = make([]meta.Study, len(rows))
	for i, r := range rows {
		studies[i] = r.MetaStudy()
	}
	res, err = meta.Analyze(studies, opts)
	if err != nil {
		return studies, meta.Result{}, fmt.Errorf("evidence: %s: %w", what, err)
	}
	return studies, res, nil
}

// CorrectResult stores the user's correction of a study's result for the
// outcome: marked Edited (a new extraction keeps it) and recorded as made
// for the current Result spec, so that a later change of the outcome,
// cohort or shape makes it stale like an extracted result.
func (o *Outcome) CorrectResult(id string, r ResultExtraction) {
	r.StudyID, r.Edited = id, true
	if o.Results == nil {
		o.Results = map[string]ResultExtraction{}
	}
	if o.ResultsWith == nil {
		o.ResultsWith = map[string]string{}
	}
	_, text, _ := strings.Cut(o.ResultsWith[id], "@")
	o.Results[id] = r
	o.ResultsWith[id] = fingerprint(o.Result) + "@" + text
}

// SetResult sets the result to extract. When its shape changes, the
// meta-analysis measure goes back to the new shape's default, and a
// pooling method that does not suit it to the default.
func (o *Outcome) SetResult(spec ResultSpec) {
	shapeChanged := spec.Measure != o.Result.Measure
	o.Result = spec
	if !shapeChanged {
		return
	}
	o.Meta.Measure = ""
	if spec.Measure == "" || !slices.Contains(meta.MethodsFor(DefaultMeasure(spec.Measure)), meta.Method(o.Meta.Method)) {
		o.Meta.Method = ""
	}
}

// SetMeta sets the meta-analysis choices: a method that does not pool the
// measure (meta.MethodsFor) falls back to the default, and Knapp–Hartung
// inference is off for Mantel–Haenszel and Peto pooling (which have none).
func (o *Outcome) SetMeta(m MetaSettings) {
	if ms := meta.Measure(m.Measure); ms != "" && !slices.Contains(meta.MethodsFor(ms), meta.Method(m.Method)) {
		m.Method = ""
	}
	if m.Method == string(meta.MH) || m.Method == string(meta.PETO) {
		m.KnappHartung = false
	}
	o.Meta = m
}

// StudiesWithResults returns how many included studies have a result for
// outcome i.
func (p *Project) StudiesWithResults(i int) int {
	o := p.OutcomeAt(i)
	if o == nil {
		return 0
	}
	n := 0
	for range p.includedResults(o) {
		n++
	}
	return n
}

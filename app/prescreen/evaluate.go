package prescreen

import (
	"fmt"
	"strings"

	"github.com/clinsight/clinsight/app/trials"
)

// Status is what a criterion, or a trial as a whole, says of a patient.
type Status string

// The statuses. For a criterion, Eligible means it does not stand in the
// way (an inclusion criterion met, an exclusion criterion not met).
const (
	Eligible    Status = "eligible"
	NotEligible Status = "not eligible"
	Unknown     Status = "unknown"
)

// Truth is the outcome of a comparison.
type Truth string

// Outcomes of a comparison.
const (
	True  Truth = "true"
	False Truth = "false"
	// Undecided: the value is missing or its unit cannot be reconciled.
	Undecided Truth = "unknown"
)

// RecordKind is the CriterionResult.Kind of the checks that come from the
// trial's record (its age limits and sex) and the patient's (alive).
const RecordKind trials.CriterionKind = "trial record"

// Bases of a criterion's status.
const (
	BasisStructured = "structured values"
	BasisModel      = "model"
	BasisBoth       = "structured values and model"
	BasisNone       = "not checked"
)

// CheckResult is one comparison checked against a patient's value.
type CheckResult struct {
	Check   Check `json:"check"`
	Outcome Truth `json:"outcome"`
	// Value is the value it was checked against (nil when missing).
	Value *LabValue `json:"value,omitempty"`
	// Reason says what was compared, citing the value and its date, or
	// why it could not be.
	Reason string `json:"reason"`
}

// CriterionResult is one criterion of a trial for one patient.
type CriterionResult struct {
	Kind  trials.CriterionKind `json:"kind"`
	Index int                  `json:"index"`
	Text  string               `json:"text"`
	// Status is the criterion's verdict and Basis what it rests on.
	Status Status `json:"status"`
	Basis  string `json:"basis"`
	// Checks are its comparisons checked against structured values.
	Checks []CheckResult `json:"checks,omitempty"`
	// Partial is set when the criterion says more than its comparisons.
	Partial bool `json:"partial,omitempty"`
	// Model is the model's verdict ("" without one) and its explanation.
	Model            trials.Verdict `json:"model,omitempty"`
	ModelExplanation string         `json:"model_explanation,omitempty"`
	// Reason sums up why, for people.
	Reason string `json:"reason"`
}

// Evaluate checks a trial's criteria for a patient: the structured checks
// (age and sex limits of the record, a date of death, and the lab-value
// and age comparisons read from each criterion), and, where el (the
// model's assessment, may be nil) has a verdict, the model's for the rest.
// A comparison whose value is missing is unknown, never met.
func Evaluate(t *trials.Trial, s *Summary, el *trials.Eligibility) []CriterionResult {
	verdicts := map[[2]any]trials.CriterionVerdict{}
	if el != nil && el.Error == "" {
		for _, v := range el.Verdicts {
			verdicts[[2]any{v.Kind, v.Index}] = v
		}
	}
	var out []CriterionResult
	if s.Deceased {
		out = append(out, CriterionResult{Kind: RecordKind, Text: "The patient is alive", Status: NotEligible, Basis: BasisStructured,
			Reason: "the source records a date of death (" + dateOf(s.Died) + ")"})
	}
	if t.Sex == trials.SexFemale || t.Sex == trials.SexMale {
		r := CriterionResult{Kind: RecordKind, Text: "Sex: " + string(t.Sex), Basis: BasisStructured}
		switch {
		case s.Sex == trials.SexUnknown || s.Sex == trials.SexAll:
			r.Status, r.Reason = Unknown, "the patient's sex is not recorded"
		case s.Sex == t.Sex:
			r.Status, r.Reason = Eligible, "the patient is "+string(s.Sex)
		default:
			r.Status, r.Reason = NotEligible, "the patient is "+string(s.Sex)
		}
		out = append(out, r)
	}
	crit := t.Criteria()
	readings := make([]Reading, len(crit))
	textAge := false
	for i, c := range crit {
		readings[i] = ReadCriterion(c.Text)
		textAge = textAge || c.Kind == trials.Inclusion && hasAge(readings[i].Checks)
	}
	if !textAge && (t.MinAge > 0 || t.MaxAge > 0) {
		ch := Check{Analyte: AgeKey, Unit: "years", Text: "age limits of the trial record"}
		switch {
		case t.MinAge > 0 && t.MaxAge > 0:
			ch.Op, ch.Lo, ch.Hi = OpBetween, t.MinAge, t.MaxAge
		case t.MinAge > 0:
			ch.Op, ch.Value = OpGE, t.MinAge
		default:
			ch.Op, ch.Value = OpLE, t.MaxAge
		}
		cr := checkValue(ch, s)
		r := CriterionResult{Kind: RecordKind, Text: "Age: " + t.AgeLimits(), Basis: BasisStructured, Checks: []CheckResult{cr}, Reason: cr.Reason}
		r.Status = map[Truth]Status{True: Eligible, False: NotEligible, Undecided: Unknown}[cr.Outcome]
		out = append(out, r)
	}
	for i, c := range crit {
		v, hasVerdict := verdicts[[2]any{c.Kind, c.Index}]
		out = append(out, evaluateCriterion(c, readings[i], s, v, hasVerdict))
	}
	return out
}

// evaluateCriterion combines a criterion's structured checks with the
// model's verdict (when hasVerdict).
func evaluateCriterion(c trials.Criterion, rd Reading, s *Summary, v trials.CriterionVerdict, hasVerdict bool) CriterionResult {
	r := CriterionResult{Kind: c.Kind, Index: c.Index, Text: c.Text, Partial: rd.Partial}
	model := Unknown
	if hasVerdict && v.Verdict != trials.VerdictMissing {
		r.Model, r.ModelExplanation = v.Verdict, v.Explanation
		switch v.Verdict {
		case trials.Included, trials.NotExcluded:
			model = Eligible
		case trials.NotIncluded, trials.Excluded:
			model = NotEligible
		}
	}
	if len(rd.Checks) == 0 {
		r.Status = model
		switch {
		case r.Model != "":
			r.Basis, r.Reason = BasisModel, "model: "+string(r.Model)
			if v.Explanation != "" {
				r.Reason += " (" + v.Explanation + ")"
			}
		default:
			r.Basis, r.Reason = BasisNone, "no structured check applies; not assessed"
		}
		return r
	}
	// The comparisons: all must hold, or any with "or".
	truth := True
	if rd.Any {
		truth = False
	}
	var reasons []string
	for _, ch := range rd.Checks {
		cr := checkValue(ch, s)
		r.Checks = append(r.Checks, cr)
		reasons = append(reasons, cr.Reason)
		truth = combine(truth, cr.Outcome, rd.Any)
	}
	r.Reason = strings.Join(reasons, "; ")
	r.Basis = BasisStructured
	// What the comparisons holding or not means for the criterion.
	decisive := truth
	if rd.Partial {
		// The comparisons decide only by failing when the rest of the
		// criterion is joined with "and"; with "or", never alone.
		if truth == True || orRe().MatchString(strings.ToLower(c.Text)) {
			decisive = Undecided
		}
	}
	meets := func(t Truth) Status { // inclusion: holding is eligible
		if c.Kind == trials.Exclusion {
			t = map[Truth]Truth{True: False, False: True, Undecided: Undecided}[t]
		}
		return map[Truth]Status{True: Eligible, False: NotEligible, Undecided: Unknown}[t]
	}
	r.Status = meets(decisive)
	switch {
	case r.Status != Unknown:
	case truth == Undecided:
		// A missing value is unknown, never eligible; the model may only
		// rule the patient out.
		if model == NotEligible {
			r.Status, r.Basis = NotEligible, BasisModel
			r.Reason += "; model: " + string(r.Model)
		}
	case r.Model != "":
		r.Status, r.Basis = model, BasisBoth
		r.Reason += "; the rest of the criterion, model: " + string(r.Model)
	default:
		r.Reason += "; the rest of the criterion is not assessed"
	}
	return r
}

// combine folds one outcome into a conjunction (or a disjunction when
// anyOf) of three-valued outcomes.
func combine(acc, t Truth, anyOf bool) Truth {
	if anyOf {
		switch {
		case acc == True || t == True:
			return True
		case acc == Undecided || t == Undecided:
			return Undecided
		}
		return False
	}
	switch {
	case acc == False || t == False:
		return False
	case acc == Undecided || t == Undecided:
		return Undecided
	}
	return True
}

// checkValue checks one comparison against the patient's structured
// value, converting units.
func checkValue(ch Check, s *Summary) CheckResult {
	cr := CheckResult{Check: ch, Outcome: Undecided}
	if ch.Analyte == AgeKey {
		return checkAge(ch, s)
	}
	a := analyteByKey(ch.Analyte)
	v, ok := s.Lab(ch.Analyte)
	if !ok || a == nil {
		cr.Reason = fmt.Sprintf("%s: no value recorded (%s unknown)", ch.String(), ch.Name())
		return cr
	}
	cr.Value = &v
	if ch.ULN {
		if v.ULN <= 0 {
			cr.Reason = fmt.Sprintf("%s: %s has no upper limit of normal recorded", ch.String(), v.Text())
			return cr
		}
		x := v.Value / v.ULN
		cr.Outcome = truthOf(ch.holds(x))
		cr.Reason = fmt.Sprintf("%s (%s × ULN %s) %s %s", v.Text(), num(roundTo(x, 2)), num(v.ULN), verb(cr.Outcome), ch.String())
		return cr
	}
	vunit := v.Unit
	if _, known := a.units[normUnit(vunit)]; !known || (vunit == "" && a.Unit != "") {
		g, ok := a.guessUnit(v.Value)
		if vunit != "" || !ok {
			cr.Reason = fmt.Sprintf("%s: the unit of %s cannot be reconciled with the criterion's", ch.String(), v.Text())
			return cr
		}
		vunit = g
	}
	x, _ := a.convert(v.Value, vunit)
	cunit := ch.Unit
	if cunit == "" && a.Unit != "" {
		g, ok := a.guessUnit(ch.thresholds()[0])
		for _, t := range ch.thresholds()[1:] {
			g2, ok2 := a.guessUnit(t)
			ok = ok && ok2 && a.units[g2] == a.units[g]
		}
		if !ok {
			cr.Reason = fmt.Sprintf("%s: the criterion states no unit and its number fits more than one (or none)", ch.String())
			return cr
		}
		cunit = g
	}
	conv, known := a.units[normUnit(cunit)]
	if !known {
		cr.Reason = fmt.Sprintf("%s: the unit %s cannot be reconciled with %s", ch.String(), ch.Unit, v.Text())
		return cr
	}
	canon := ch.withThresholds(conv.apply)
	cr.Outcome = truthOf(canon.holds(x))
	shown := v.Text()
	if normUnit(vunit) != normUnit(cunit) && a.units[normUnit(vunit)] != conv {
		// Show the value in the criterion's unit too.
		shown += fmt.Sprintf(" = %s %s", num(roundTo(conv.inverse(x), 2)), displayUnit(cunit))
	}
	cr.Reason = fmt.Sprintf("%s %s %s", shown, verb(cr.Outcome), ch.String())
	return cr
}

// checkAge checks an age comparison.
func checkAge(ch Check, s *Summary) CheckResult {
	cr := CheckResult{Check: ch, Outcome: Undecided}
	if !s.HasAge {
		cr.Reason = fmt.Sprintf("%s: the patient's age is not recorded", ch.String())
		return cr
	}
	c := ch
	if strings.HasPrefix(ch.Unit, "month") {
		c = ch.withThresholds(func(m float64) float64 { return m / 12 })
	}
	v := LabValue{Analyte: AgeKey, Value: s.Age, Unit: "years", Time: s.RefDate}
	cr.Value = &v
	at := ""
	if s.RefDate != "" {
		at = " at " + dateOf(s.RefDate)
	}
	if s.AgeCapped && !(c.Op == OpGE || c.Op == OpGT) {
		cr.Reason = fmt.Sprintf("%s: the source records ages above 89 as %s, so the age is not known", ch.String(), num(s.Age))
		return cr
	}
	cr.Outcome = truthOf(c.holds(s.Age))
	cr.Reason = fmt.Sprintf("age %s%s %s %s", num(s.Age), at, verb(cr.Outcome), ch.String())
	return cr
}

func truthOf(b bool) Truth {
	if b {
		return True
	}
	return False
}

func verb(t Truth) string {
	if t == True {
		return "meets"
	}
	return "does not meet"
}

// Overall sums up a trial's criteria: not eligible when any criterion
// rules the patient out, eligible when every one is met, else unknown
// (the patient might qualify).
func Overall(rs []CriterionResult) Status {
	all := len(rs) > 0
	for _, r := range rs {
		switch r.Status {
		case NotEligible:
			return NotEligible
		case Unknown:
			all = false
		}
	}
	if all {
		return Eligible
	}
	return Unknown
}

package impression

import (
	"fmt"
	"strings"
)

// SignificantObservations are the findings an impression must not leave
// out: when the labeler marks one positive in the FINDINGS, an impression
// that does not mention it (or rules it out) contradicts them.
var SignificantObservations = [...]Observation{PleuralEffusion, Pneumothorax, Consolidation, Edema, Cardiomegaly, Fracture}

// ContradictionKind says how an impression contradicts its findings.
type ContradictionKind uint8

// The kinds of contradiction.
const (
	// CallsNormal: the impression calls the study normal (the labeler gives
	// it No Finding) while the findings have a positive observation (other
	// than a support device).
	CallsNormal ContradictionKind = iota + 1
	// Omits: a significant observation positive in the findings is not
	// mentioned by the impression.
	Omits
	// RulesOut: a significant observation positive in the findings is
	// negated by the impression.
	RulesOut
	// Unsupported: the impression states a significant observation that
	// the findings rule out.
	Unsupported
)

// String names the kind ("calls normal").
func (k ContradictionKind) String() string {
	switch k {
	case CallsNormal:
		return "calls normal"
	case Omits:
		return "omits"
	case RulesOut:
		return "rules out"
	case Unsupported:
		return "unsupported"
	}
	return fmt.Sprintf("ContradictionKind(%d)", int(k))
}

// Contradiction is one way an impression contradicts its findings.
type Contradiction struct {
	Kind ContradictionKind
	// Observations are the observations concerned: the findings' positive
	// ones for CallsNormal, the one omitted, ruled out or unsupported
	// otherwise.
	Observations []Observation
}

// String says it for a clinician: "calls the study normal, but the
// findings report Cardiomegaly, Atelectasis".
func (c Contradiction) String() string {
	names := make([]string, len(c.Observations))
	for i, o := range c.Observations {
		names[i] = o.String()
	}
	list := strings.Join(names, ", ")
	switch c.Kind {
	case CallsNormal:
		return "calls the study normal, but the findings report " + list
	case Omits:
		return "does not mention " + list + ", present in the findings"
	case RulesOut:
		return "rules out " + list + ", present in the findings"
	case Unsupported:
		return "reports " + list + ", which the findings rule out"
	}
	return c.Kind.String() + " " + list
}

// Contradictions lists how an impression contradicts findings labelled
// findingLabels (LabelText of the findings alone), by the observation
// labeler: an impression labelled No Finding while the findings have a
// positive observation other than a support device; a significant
// observation (SignificantObservations) positive in the findings that the
// impression does not mention or rules out; a significant observation the
// impression states while the findings rule it out. Uncertain labels are
// neither positive nor negative here: "possible small effusion" mentions
// an effusion, and a finding called borderline need not be in the
// impression. None (nil) means consistent.
func Contradictions(findingLabels Labels, impression string) []Contradiction {
	return contradictions(findingLabels, LabelText(impression))
}

// contradictions is Contradictions on the impression's labels.
func contradictions(f, imp Labels) []Contradiction {
	var out []Contradiction
	callsNormal := false
	if imp[NoFinding] == Positive {
		var pos []Observation
		for o := range NumObservations {
			if ob := Observation(o); ob != NoFinding && ob != SupportDevices && f[o] == Positive {
				pos = append(pos, ob)
			}
		}
		if len(pos) > 0 {
			out = append(out, Contradiction{Kind: CallsNormal, Observations: pos})
			callsNormal = true
		}
	}
	for _, o := range SignificantObservations {
		switch {
		case f[o] == Positive && imp[o] == Blank && !callsNormal: // already named
			out = append(out, Contradiction{Kind: Omits, Observations: []Observation{o}})
		case f[o] == Positive && imp[o] == Negative:
			out = append(out, Contradiction{Kind: RulesOut, Observations: []Observation{o}})
		case f[o] == Negative && imp[o] == Positive:
			out = append(out, Contradiction{Kind: Unsupported, Observations: []Observation{o}})
		}
	}
	return out
}

// DescribeContradictions joins the contradictions into one sentence for
// the user ("" when there are none): "The impression calls the study
// normal, but the findings report Cardiomegaly; it does not mention
// Pleural Effusion, present in the findings."
func DescribeContradictions(cs []Contradiction) string {
	if len(cs) == 0 {
		return ""
	}
	parts := make([]string, len(cs))
	for i, c := range cs {
		parts[i] = c.String()
	}
	return "The impression " + strings.Join(parts, "; it ") + "."
}

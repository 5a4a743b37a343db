package ui

import (
	"fmt"

	"github.com/clinsight/clinsight/app/meta"
)

// metaLayout is one layout of study table the screen reads: which kind of
// data, which columns can be mapped and which measures apply.
type metaLayout struct {
	label    string
	kind     meta.Kind
	fields   []string // metafor's field names, besides "study"
	measures []meta.Measure
}

// metaLayouts lists the table layouts offered, the first being the default.
func metaLayouts() []metaLayout {
	return []metaLayout{
		{"2x2 counts: events and totals (ai, n1i, ci, n2i)", meta.Binary, []string{"ai", "n1i", "ci", "n2i"}, []meta.Measure{meta.OR, meta.RR, meta.RD}},
		{"2x2 counts: events and non-events (ai, bi, ci, di)", meta.Binary, []string{"ai", "bi", "ci", "di"}, []meta.Measure{meta.OR, meta.RR, meta.RD}},
		{"Means, SDs and group sizes", meta.Continuous, []string{"m1i", "sd1i", "n1i", "m2i", "sd2i", "n2i"}, []meta.Measure{meta.MD, meta.SMD}},
		{"Reported estimate with its CI", meta.Generic, []string{"est", "ci_lb", "ci_ub"}, []meta.Measure{meta.GENRatio, meta.GEN}},
		{"Single-arm: events and total (xi, ni)", meta.Proportion, []string{"xi", "ni"}, []meta.Measure{meta.PFT, meta.PLO, meta.PR}},
	}
}

// metaFieldHelp explains a column field in the mapping form.
func metaFieldHelp(field string) string {
	switch field {
	case "study":
		return "Study label"
	case "ai":
		return "Events, group 1"
	case "bi":
		return "Non-events, group 1"
	case "n1i":
		return "Total, group 1"
	case "ci":
		return "Events, group 2"
	case "di":
		return "Non-events, group 2"
	case "n2i":
		return "Total, group 2"
	case "m1i":
		return "Mean, group 1"
	case "sd1i":
		return "SD, group 1"
	case "m2i":
		return "Mean, group 2"
	case "sd2i":
		return "SD, group 2"
	case "est":
		return "Estimate"
	case "ci_lb":
		return "CI lower limit"
	case "ci_ub":
		return "CI upper limit"
	}
	return field
}

// modelChoice labels a pooling method for the model list.
func modelChoice(m meta.Method) string {
	if m.IsRandom() {
		return fmt.Sprintf("%s — random effects (%s)", m, m.Label())
	}
	return fmt.Sprintf("%s — common effect (%s)", m, m.Label())
}

// measureChoice labels a measure for the measure list.
func measureChoice(m meta.Measure) string { return fmt.Sprintf("%s — %s", m, m.Label()) }

package evidence

import (
	"slices"
	"strconv"
	"strings"
)

// StandardColumn is a value column of the standardized table (between the
// study and its derivations, chunks and checks): the one definition the
// desktop app, the command line and the workbook show.
type StandardColumn struct {
	// Header is the column's title.
	Header string
	// Value is a row's value: a float64, or a string (nil when empty).
	Value func(StandardRow) any
}

// Text is a row's value as text: numbers as written, without trailing
// zeros.
func (c StandardColumn) Text(r StandardRow) string {
	switch v := c.Value(r).(type) {
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case string:
		return v
	}
	return ""
}

// StandardColumns are the value columns of the standardized table for a
// result shape (all of them, the group sizes once, when the shape is not
// set).
func StandardColumns(m Measure) []StandardColumn {
	f := func(get func(StandardRow) float64) func(StandardRow) any {
		return func(r StandardRow) any { return get(r) }
	}
	two := []StandardColumn{
		{"Events (treatment)", f(func(r StandardRow) float64 { return r.Events1 })},
		{"Total (treatment)", f(func(r StandardRow) float64 { return r.Total1 })},
		{"Events (control)", f(func(r StandardRow) float64 { return r.Events2 })},
		{"Total (control)", f(func(r StandardRow) float64 { return r.Total2 })},
	}
	single := []StandardColumn{
		{"Events", f(func(r StandardRow) float64 { return r.Events1 })},
		{"Total", f(func(r StandardRow) float64 { return r.Total1 })},
	}
	means := []StandardColumn{
		{"Mean (treatment)", f(func(r StandardRow) float64 { return r.Mean1 })},
		{"SD (treatment)", f(func(r StandardRow) float64 { return r.SD1 })},
		{"N (treatment)", f(func(r StandardRow) float64 { return r.Total1 })},
		{"Mean (control)", f(func(r StandardRow) float64 { return r.Mean2 })},
		{"SD (control)", f(func(r StandardRow) float64 { return r.SD2 })},
		{"N (control)", f(func(r StandardRow) float64 { return r.Total2 })},
	}
	ratio := []StandardColumn{
		{"Effect", func(r StandardRow) any {
			if r.EffectKind == "" {
				return nil
			}
			return r.EffectKind
		}},
		{"Estimate", f(func(r StandardRow) float64 { return r.Est })},
		{"95% CI lower", f(func(r StandardRow) float64 { return r.Lower })},
		{"95% CI upper", f(func(r StandardRow) float64 { return r.Upper })},
	}
	switch m {
	case TwoGroups:
		return two
	case SingleArm:
		return single
	case MeansSDs:
		return means
	case RatioCI:
		return ratio
	}
	all := slices.Clone(two)
	for _, c := range means {
		if !strings.HasPrefix(c.Header, "N (") {
			all = append(all, c)
		}
	}
	return append(all, ratio...)
}

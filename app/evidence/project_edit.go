package evidence

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
)

// Clone returns a deep copy of the project (through its saved form), for
// work on another goroutine or a step that may fail.
func (p *Project) Clone() (*Project, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("copying the review project: %w", err)
	}
	var cp Project
	if err := json.Unmarshal(b, &cp); err != nil {
		return nil, fmt.Errorf("copying the review project: %w", err)
	}
	return &cp, nil
}

// ExclusionReasons are the usual reasons to exclude a study (the user may
// give another).
var ExclusionReasons = []string{
	"Wrong population", "Wrong intervention", "Wrong comparator", "Wrong outcome",
	"Wrong study design", "Not a primary study", "Duplicate report", "No usable data",
}

// ExclusionReasonsFor returns the reasons to offer when excluding a study:
// first the criteria its screening answered NO ("Does not meet: ..."),
// then ExclusionReasons, then the other reasons given in this review.
func (p *Project) ExclusionReasonsFor(id string) []string {
	reasons := slices.Clone(ExclusionReasons)
	for _, st := range p.Screening {
		if st.ID != id {
			continue
		}
		for i, v := range st.Verdicts {
			if v == No && i < len(p.Criteria) {
				reasons = append([]string{"Does not meet: " + p.Criteria[i].Text}, reasons...)
			}
		}
		break
	}
	for _, id := range slices.Sorted(maps.Keys(p.Decisions)) {
		if d := p.Decisions[id]; !d.Include && !slices.Contains(reasons, d.Reason) {
			reasons = append(reasons, d.Reason)
		}
	}
	return reasons
}

// FieldValueOf returns the value of a field of a study, and false when
// none was extracted or typed.
func (p *Project) FieldValueOf(id, name string) (FieldValue, bool) {
	for _, v := range p.Extractions[id] {
		if v.Name == name {
			return v, true
		}
	}
	return FieldValue{Name: name}, false
}

// EditValue records the user's value of a field of a study, marked Edited
// (a new extraction keeps it), and checks it against the chunks it cites
// in t, the study's text (Supported): a value with a number that is in
// none of them is flagged Unsupported. With t nil the flag is left as it
// was. It returns the value as stored.
func (p *Project) EditValue(id, name, text string, t *StudyText) FieldValue {
	if p.Extractions == nil {
		p.Extractions = map[string][]FieldValue{}
	}
	vals := slices.Clone(p.Extractions[id])
	i := slices.IndexFunc(vals, func(v FieldValue) bool { return v.Name == name })
	if i < 0 {
		vals = append(vals, FieldValue{Name: name})
		i = len(vals) - 1
	}
	v := &vals[i]
	v.Value, v.Edited = text, true
	if t != nil {
		v.Unsupported = text != NotPresent && strings.TrimSpace(text) != "" && !Supported(text, *t, v.Sources)
	}
	p.Extractions[id] = vals
	return *v
}

// GroupNumbers names the numbers of a result group, in the order EditGroup
// takes them; EffectNumbers those of a reported effect.
var (
	GroupNumbers  = []string{"N", "Events", "Percent", "Mean", "SD"}
	EffectNumbers = []string{"Estimate", "CI lower", "CI upper"}
)

// Roles are the roles a result group may have ("" is another group, not
// analysed).
var Roles = []string{"treatment", "control", ""}

// EditGroup corrects the numbers of a study's result group from the
// user's text (GroupNumbers; blank for not reported), with its role; group
// -1 is the reported effect (EffectNumbers, all three required). A number
// the user changed keeps the chunks its old value cited and is checked
// against them in t, the study's text (with t nil it keeps its old flag);
// an unchanged one keeps its flag. The correction is stored as
// CorrectResult does. It edits the first outcome's result; EditGroupFor
// edits any outcome's.
func (p *Project) EditGroup(id string, group int, role string, values []string, t *StudyText) error {
	return p.EditGroupFor(0, id, group, role, values, t)
}

// EditGroupFor corrects a study's result for outcome i, as EditGroup does.
func (p *Project) EditGroupFor(i int, id string, group int, role string, values []string, t *StudyText) error {
	o, err := p.outcome(i)
	if err != nil {
		return err
	}
	old, ok := o.Results[id]
	if !ok {
		if p.NumOutcomes() > 1 {
			return fmt.Errorf("no result extracted for %s for %q", p.Label(id), o.Name())
		}
		return fmt.Errorf("no result extracted for %s", p.Label(id))
	}
	r := cloneResult(old)
	parse := func(name, text string, prev *Number) (*Number, error) {
		text = strings.TrimSpace(text)
		if text == "" {
			return nil, nil
		}
		v, err := strconv.ParseFloat(text, 64)
		if err != nil {
			return nil, fmt.Errorf("%s: %q is not a number", name, text)
		}
		n := &Number{Value: v}
		if prev != nil {
			n.Sources, n.Unsupported = slices.Clone(prev.Sources), prev.Unsupported
			if prev.Value == v {
				return n, nil
			}
		}
		if t != nil {
			n.Unsupported = !Supported(text, *t, n.Sources)
		}
		return n, nil
	}
	if group < 0 {
		if r.Effect == nil || len(values) != len(EffectNumbers) {
			return fmt.Errorf("%s has no reported effect", p.Label(id))
		}
		for i, dst := range []*Number{&r.Effect.Est, &r.Effect.Lower, &r.Effect.Upper} {
			n, err := parse(EffectNumbers[i], values[i], dst)
			if err != nil {
				return err
			}
			if n == nil {
				return errors.New("the estimate and both limits of a reported effect are needed")
			}
			*dst = *n
		}
	} else {
		if group >= len(r.Groups) || len(values) != len(GroupNumbers) {
			return fmt.Errorf("%s has no group %d", p.Label(id), group+1)
		}
		if !slices.Contains(Roles, role) {
			return fmt.Errorf("a group's role is treatment, control or none, not %q", role)
		}
		g := &r.Groups[group]
		g.Role = role
		for i, dst := range []**Number{&g.N, &g.Events, &g.Percent, &g.Mean, &g.SD} {
			n, err := parse(GroupNumbers[i], values[i], *dst)
			if err != nil {
				return err
			}
			*dst = n
		}
	}
	o.CorrectResult(id, r)
	return nil
}

// cloneResult copies a result so that editing it leaves the original
// (shared with earlier copies of the project) as it was.
func cloneResult(r ResultExtraction) ResultExtraction {
	cp := func(n *Number) *Number {
		if n == nil {
			return nil
		}
		c := *n
		c.Sources = slices.Clone(n.Sources)
		return &c
	}
	out := r
	out.Groups = make([]ResultGroup, len(r.Groups))
	for i, g := range r.Groups {
		out.Groups[i] = ResultGroup{Name: g.Name, Role: g.Role, N: cp(g.N), Events: cp(g.Events), Percent: cp(g.Percent), Mean: cp(g.Mean), SD: cp(g.SD)}
	}
	if r.Effect != nil {
		e := *r.Effect
		e.Est.Sources, e.Lower.Sources, e.Upper.Sources = slices.Clone(e.Est.Sources), slices.Clone(e.Lower.Sources), slices.Clone(e.Upper.Sources)
		out.Effect = &e
	}
	return out
}

// ResultRow is a row of the table of extracted results: one group of an
// included study's result, or its reported effect.
type ResultRow struct {
	// StudyID is the study; Group the group's index in its result, -1
	// for the reported effect.
	StudyID string
	Group   int
	// Name and Role are the group's ("" for the effect).
	Name, Role string
	// Numbers are the group's numbers in the order of GroupNumbers, or the
	// effect's in the order of EffectNumbers; nil is not reported.
	Numbers []*Number
	// EffectKind is the reported effect's kind ("HR", ...), "" for a group.
	EffectKind string
	// Sources are the chunks its numbers cite, in order, each once.
	Sources []int
	// Unsupported reports that a number is in none of its cited chunks.
	Unsupported bool
	// Edited reports that the user corrected the study's result.
	Edited bool
}

// ResultRows returns the rows of the table of extracted results: the
// groups, then the reported effect, of each included study with a result,
// in the order of Included, for the first outcome (ResultRowsFor: any
// outcome).
func (p *Project) ResultRows() []ResultRow { return p.ResultRowsFor(0) }

// ResultRowsFor returns the rows of the table of extracted results of
// outcome i (nil for an unknown outcome).
func (p *Project) ResultRowsFor(i int) []ResultRow {
	o := p.OutcomeAt(i)
	if o == nil {
		return nil
	}
	var out []ResultRow
	for id, r := range p.includedResults(o) {
		for g, gr := range r.Groups {
			out = append(out, newResultRow(id, g, gr.Name, gr.Role, "", r.Edited, []*Number{gr.N, gr.Events, gr.Percent, gr.Mean, gr.SD}))
		}
		if e := r.Effect; e != nil {
			out = append(out, newResultRow(id, -1, "", "", e.Kind, r.Edited, []*Number{&e.Est, &e.Lower, &e.Upper}))
		}
	}
	return out
}

func newResultRow(id string, group int, name, role, kind string, edited bool, nums []*Number) ResultRow {
	row := ResultRow{StudyID: id, Group: group, Name: name, Role: role, EffectKind: kind, Edited: edited, Numbers: nums}
	for _, n := range nums {
		if n == nil {
			continue
		}
		row.Unsupported = row.Unsupported || n.Unsupported
		for _, c := range n.Sources {
			if !slices.Contains(row.Sources, c) {
				row.Sources = append(row.Sources, c)
			}
		}
	}
	slices.Sort(row.Sources)
	return row
}

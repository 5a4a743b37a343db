package evidence

import (
	"fmt"
	"iter"
	"math"
	"slices"
	"strings"
)

// ArmChoice is the user's choice of the groups that form a study's
// comparison for one outcome, by group name; several groups on one side
// are combined (Cochrane Handbook 6.5.2.10: events and N summed; means and
// SDs by its formula, CombineMeans).
type ArmChoice struct {
	Treatment []string `json:"treatment"`
	Control   []string `json:"control,omitempty"` // empty for a single-arm result
}

// Combined reports whether a side combines several groups.
func (c ArmChoice) Combined() bool { return len(c.Treatment) > 1 || len(c.Control) > 1 }

// String describes the choice: `treatment "A" + "B" (combined) vs control "C"`.
func (c ArmChoice) String() string {
	side := func(role string, names []string) string {
		q := make([]string, len(names))
		for i, n := range names {
			q[i] = fmt.Sprintf("%q", n)
		}
		s := role + " " + strings.Join(q, " + ")
		if len(names) > 1 {
			s += " (combined)"
		}
		return s
	}
	if len(c.Control) == 0 {
		return side(RoleTreatment, c.Treatment)
	}
	return side(RoleTreatment, c.Treatment) + " vs " + side(RoleControl, c.Control)
}

// GroupsCompared is the number of groups a result shape compares: 2 for
// two groups and means, 1 for a single arm, 0 for a reported ratio (whose
// groups are not analysed).
func GroupsCompared(m Measure) int {
	switch m {
	case TwoGroups, MeansSDs:
		return 2
	case SingleArm:
		return 1
	}
	return 0
}

// needsArmChoice reports whether a result has more groups than the shape
// compares, so that it is standardized only with the user's arm choice.
func needsArmChoice(r ResultExtraction, m Measure) bool {
	n := GroupsCompared(m)
	return n > 0 && len(r.Groups) > n
}

// groupNames lists a result's groups for messages: `"A", "B", "C"`.
func groupNames(r ResultExtraction) string {
	q := make([]string, len(r.Groups))
	for i, g := range r.Groups {
		q[i] = fmt.Sprintf("%q", g.Name)
	}
	return strings.Join(q, ", ")
}

// armChoiceNeeded is the problem of a multi-arm study without an arm choice.
func armChoiceNeeded(r ResultExtraction) string {
	names := make([]string, len(r.Groups))
	for i, g := range r.Groups {
		names[i] = g.Name
	}
	return fmt.Sprintf("the study has %d groups (%s): choose the groups that form the comparison, or combine groups",
		len(r.Groups), strings.Join(names, ", "))
}

// SetArms records the user's arm choice for a study's result in outcome i:
// the groups (by name, as the study's extracted result names them) that
// form the treatment side and, for two groups and means, the control side;
// several groups on a side are combined. Names must be groups of the
// result, each used once; a reported ratio needs no choice.
func (p *Project) SetArms(i int, id string, c ArmChoice) error {
	o, err := p.outcome(i)
	if err != nil {
		return err
	}
	r, ok := o.Results[id]
	if !ok {
		return fmt.Errorf("%s has no result extracted for %q yet", p.Label(id), o.Name())
	}
	need := GroupsCompared(o.Result.Measure)
	if need == 0 {
		return fmt.Errorf("%q is %s: its groups are not compared, so no arm choice is needed", o.Name(), o.Result.Measure.Label())
	}
	clean := func(names []string) []string {
		var out []string
		for _, n := range names {
			if n = cleanSpace(n); n != "" {
				out = append(out, n)
			}
		}
		return out
	}
	c = ArmChoice{Treatment: clean(c.Treatment), Control: clean(c.Control)}
	switch {
	case len(c.Treatment) == 0:
		return fmt.Errorf("choose at least one treatment group of %s (its groups: %s)", p.Label(id), groupNames(r))
	case need == 2 && len(c.Control) == 0:
		return fmt.Errorf("choose at least one control group of %s (its groups: %s)", p.Label(id), groupNames(r))
	case need == 1 && len(c.Control) > 0:
		return fmt.Errorf("%q is %s: choose the treatment group(s) only", o.Name(), o.Result.Measure.Label())
	}
	seen := map[string]bool{}
	for _, n := range slices.Concat(c.Treatment, c.Control) {
		if !slices.ContainsFunc(r.Groups, func(g ResultGroup) bool { return g.Name == n }) {
			return fmt.Errorf("%s has no group %q; its groups are %s", p.Label(id), n, groupNames(r))
		}
		if seen[n] {
			return fmt.Errorf("the group %q of %s is chosen twice: a group is on one side only", n, p.Label(id))
		}
		seen[n] = true
	}
	if o.Arms == nil {
		o.Arms = map[string]ArmChoice{}
	}
	o.Arms[id] = c
	p.useOutcomesFormat()
	return nil
}

// ClearArms removes the arm choice of a study in outcome i (nothing when
// there is none).
func (p *Project) ClearArms(i int, id string) {
	if o := p.OutcomeAt(i); o != nil {
		delete(o.Arms, id)
		if len(o.Arms) == 0 {
			o.Arms = nil
		}
	}
}

// ArmsNeeded returns the included studies (in the order of Included) whose
// result for outcome i has more groups than the outcome's shape compares
// and no arm choice: they are left out of its table and meta-analysis
// until the user chooses.
func (p *Project) ArmsNeeded(i int) []string {
	o := p.OutcomeAt(i)
	if o == nil {
		return nil
	}
	var out []string
	for id, r := range p.includedResults(o) {
		if _, chosen := o.Arms[id]; !chosen && needsArmChoice(r, o.Result.Measure) {
			out = append(out, id)
		}
	}
	return out
}

// includedResults yields the included studies that have a result for
// outcome o, with the result, in the order of Included.
func (p *Project) includedResults(o *Outcome) iter.Seq2[string, ResultExtraction] {
	return func(yield func(string, ResultExtraction) bool) {
		for _, id := range p.Included() {
			if r, ok := o.Results[id]; ok && !yield(id, r) {
				return
			}
		}
	}
}

// resolveArms returns the groups of each side of a choice, or the problems
// of a choice that no longer fits the result (a group renamed or removed
// since, a group on both sides, a side missing).
func resolveArms(r ResultExtraction, c ArmChoice, need int) (t, ctl []*ResultGroup, problems []string) {
	find := func(names []string) []*ResultGroup {
		var out []*ResultGroup
		for _, n := range names {
			i := slices.IndexFunc(r.Groups, func(g ResultGroup) bool { return g.Name == n })
			if i < 0 {
				problems = append(problems, fmt.Sprintf("the arm choice names the group %q, which the study's result does not have (its groups: %s): choose the groups again", n, groupNames(r)))
				continue
			}
			out = append(out, &r.Groups[i])
		}
		return out
	}
	t, ctl = find(c.Treatment), find(c.Control)
	for _, n := range c.Treatment {
		if slices.Contains(c.Control, n) {
			problems = append(problems, fmt.Sprintf("the group %q is chosen as both treatment and control", n))
		}
	}
	switch {
	case len(c.Treatment) == 0:
		problems = append(problems, "the arm choice has no treatment group: choose the groups again")
	case need == 2 && len(c.Control) == 0:
		problems = append(problems, "the arm choice has no control group: choose the groups again")
	case need == 1 && len(c.Control) > 0:
		problems = append(problems, "the arm choice has control groups, but the result is of one group: choose the groups again")
	}
	return t, ctl, problems
}

// CombineMeans combines two groups' sizes, means and SDs into one group by
// the Cochrane Handbook's formula (Table 6.5.a): N = N1+N2,
// M = (N1·M1 + N2·M2)/N, SD = sqrt(((N1−1)SD1² + (N2−1)SD2² +
// N1·N2/N·(M1² + M2² − 2·M1·M2)) / (N−1)). More groups are combined by
// applying it to the first two, then the result and the next.
func CombineMeans(n1, m1, sd1, n2, m2, sd2 float64) (n, m, sd float64) {
	n = n1 + n2
	m = (n1*m1 + n2*m2) / n
	sd = math.Sqrt(((n1-1)*sd1*sd1 + (n2-1)*sd2*sd2 + n1*n2/n*(m1*m1+m2*m2-2*m1*m2)) / (n - 1))
	return n, m, sd
}

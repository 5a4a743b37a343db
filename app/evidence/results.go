package evidence

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/clinsight/clinsight/app/meta"
	"github.com/clinsight/clinsight/localllm"
)

// Measure is the shape of a study's result for an outcome.
type Measure string

// The result shapes.
const (
	// TwoGroups: events and totals in a treatment and a control group (for
	// OR, RR, RD).
	TwoGroups Measure = "two-groups"
	// SingleArm: events and total in one group (response or toxicity rates:
	// PR, PLO, PFT).
	SingleArm Measure = "single-arm"
	// MeansSDs: mean, SD and size in a treatment and a control group (MD,
	// SMD).
	MeansSDs Measure = "means"
	// RatioCI: a reported effect (HR, OR, RR) with its 95% confidence
	// interval (generic inverse variance on the log scale).
	RatioCI Measure = "ratio"
)

// ResultSpec says which result to extract from every included study.
type ResultSpec struct {
	// Outcome is the outcome in plain words ("overall response rate").
	Outcome string `json:"outcome"`
	// Cohort defines the groups ("patients treated with microwave ablation
	// (treatment) vs radiofrequency ablation (control)").
	Cohort string `json:"cohort"`
	// Measure is the shape of the result.
	Measure Measure `json:"measure"`
}

// Number is an extracted number with the chunks it was read from.
type Number struct {
	// Value is the number.
	Value float64 `json:"value"`
	// Sources are the chunk numbers it was read from.
	Sources []int `json:"sources,omitempty"`
	// Unsupported flags a number that occurs in none of its cited chunks.
	Unsupported bool `json:"unsupported,omitempty"`
}

// ResultGroup is one group of a study with its numbers for the outcome;
// a nil number was not reported.
type ResultGroup struct {
	// Name is the group as the study names it.
	Name string `json:"name"`
	// Role is "treatment", "control" or "" (another group, not analysed).
	Role string `json:"role,omitempty"`
	// N is the group's size.
	N *Number `json:"n,omitempty"`
	// Events is the number with the outcome (TwoGroups, SingleArm).
	Events *Number `json:"events,omitempty"`
	// Percent is the percentage with the outcome, when the study reports a
	// percentage instead of a count.
	Percent *Number `json:"percent,omitempty"`
	// Mean and SD describe a continuous outcome (MeansSDs).
	Mean *Number `json:"mean,omitempty"`
	SD   *Number `json:"sd,omitempty"`
}

// Effect is a reported effect estimate with its confidence interval.
type Effect struct {
	// Kind is "HR", "OR", "RR" or another ratio's name.
	Kind string `json:"kind"`
	// Est, Lower and Upper are the estimate and its 95% CI.
	Est   Number `json:"est"`
	Lower Number `json:"lower"`
	Upper Number `json:"upper"`
}

// ResultExtraction is the result of one study for the review's ResultSpec,
// as the model read it (typed JSON) and the user corrected it.
type ResultExtraction struct {
	// StudyID is the record's ID.
	StudyID string `json:"study_id"`
	// Groups are the groups found, with their numbers.
	Groups []ResultGroup `json:"groups"`
	// Effect is a reported effect estimate (RatioCI), nil when none.
	Effect *Effect `json:"effect,omitempty"`
	// Edited marks a result the user changed; a new model run keeps it.
	Edited bool `json:"edited,omitempty"`
}

// StandardRow is a study's result in the standardized table, computed in
// Go from a ResultExtraction (no model-written code runs): the input of
// the meta-analysis. Only the fields of its Measure are set.
type StandardRow struct {
	// StudyID is the record's ID; Label names the study in the table and
	// the forest plot ("Smith 2019").
	StudyID string `json:"study_id"`
	Label   string `json:"label"`
	// Measure is the row's shape.
	Measure Measure `json:"measure"`
	// Events1 of Total1 in the treatment (or single) group; Events2 of
	// Total2 in the control group (TwoGroups, SingleArm).
	Events1 float64 `json:"events1,omitempty"`
	Total1  float64 `json:"total1,omitempty"`
	Events2 float64 `json:"events2,omitempty"`
	Total2  float64 `json:"total2,omitempty"`
	// Mean1, SD1, Mean2, SD2 (with Total1, Total2 as sizes) for MeansSDs.
	Mean1 float64 `json:"mean1,omitempty"`
	SD1   float64 `json:"sd1,omitempty"`
	Mean2 float64 `json:"mean2,omitempty"`
	SD2   float64 `json:"sd2,omitempty"`
	// EffectKind, Est, Lower, Upper for RatioCI.
	EffectKind string  `json:"effect_kind,omitempty"`
	Est        float64 `json:"est,omitempty"`
	Lower      float64 `json:"lower,omitempty"`
	Upper      float64 `json:"upper,omitempty"`
	// Derivations say how values were computed ("events1 = 45% of 80 = 36").
	Derivations []string `json:"derivations,omitempty"`
	// Sources are the chunk numbers every number was read from.
	Sources []int `json:"sources,omitempty"`
	// Unsupported names the values not found in their cited chunks
	// ("events1 12"), to be checked by the user.
	Unsupported []string `json:"unsupported,omitempty"`
}

// Validate checks that m is one of the result shapes.
func (m Measure) Validate() error {
	switch m {
	case TwoGroups, SingleArm, MeansSDs, RatioCI:
		return nil
	}
	return fmt.Errorf("evidence: unknown result shape %q: use %q (events and totals in two groups), %q (events and total in one group), %q (means and SDs) or %q (a ratio with its 95%% CI)",
		string(m), TwoGroups, SingleArm, MeansSDs, RatioCI)
}

// Label describes the shape in words.
func (m Measure) Label() string {
	switch m {
	case TwoGroups:
		return "events and totals in two groups"
	case SingleArm:
		return "events and total in one group"
	case MeansSDs:
		return "means and SDs in two groups"
	case RatioCI:
		return "a ratio with its 95% CI"
	}
	return string(m)
}

// Validate checks the spec: an outcome and a known measure.
func (s ResultSpec) Validate() error {
	if cleanSpace(s.Outcome) == "" {
		return errors.New("evidence: the result has no outcome; say which outcome to extract (\"overall response rate\")")
	}
	return s.Measure.Validate()
}

// Roles of result groups.
const (
	// RoleTreatment is the experimental (or single) group.
	RoleTreatment = "treatment"
	// RoleControl is the comparison group.
	RoleControl = "control"
)

// numberSchema is a number with its sources, or null.
const numberSchema = `{"type":["object","null"],"properties":{"value":{"type":"number"},"sources":{"type":"array","items":{"type":"integer"}}},"required":["value","sources"]}`

// resultSchemas are the schemas of a result reply, by measure: the groups
// with the numbers of the measure, and for RatioCI the reported effect
// (parsed on first use, not at program start).
var resultSchemas = sync.OnceValue(func() map[Measure]*localllm.Schema {
	group := func(nums ...string) string {
		props := []string{`"name":{"type":"string"}`, `"role":{"type":"string","enum":["treatment","control","other"]}`}
		req := []string{`"name"`, `"role"`}
		for _, n := range nums {
			props = append(props, fmt.Sprintf("%q:%s", n, numberSchema))
			req = append(req, strconv.Quote(n))
		}
		return fmt.Sprintf(`{"type":"object","properties":{%s},"required":[%s]}`, strings.Join(props, ","), strings.Join(req, ","))
	}
	reply := func(group string, effect bool) *localllm.Schema {
		if !effect {
			return localllm.MustParseSchema(fmt.Sprintf(`{"type":"object","properties":{"groups":{"type":"array","items":%s}},"required":["groups"]}`, group))
		}
		return localllm.MustParseSchema(fmt.Sprintf(`{"type":"object","properties":{"groups":{"type":"array","items":%s},
			"effect":{"type":["object","null"],"properties":{"kind":{"type":"string"},"est":{"type":"number"},"lower":{"type":"number"},"upper":{"type":"number"},
			"sources":{"type":"array","items":{"type":"integer"}}},"required":["kind","est","lower","upper","sources"]}},"required":["groups","effect"]}`, group))
	}
	counts := reply(group("n", "events", "percent"), false)
	return map[Measure]*localllm.Schema{
		TwoGroups: counts,
		SingleArm: counts,
		MeansSDs:  reply(group("n", "mean", "sd"), false),
		RatioCI:   reply(group("n"), true),
	}
})

// numberReply is a number of a result reply.
type numberReply struct {
	Value   float64 `json:"value"`
	Sources []int   `json:"sources"`
}

// resultReply is a result reply.
type resultReply struct {
	Groups []struct {
		Name    string       `json:"name"`
		Role    string       `json:"role"`
		N       *numberReply `json:"n"`
		Events  *numberReply `json:"events"`
		Percent *numberReply `json:"percent"`
		Mean    *numberReply `json:"mean"`
		SD      *numberReply `json:"sd"`
	} `json:"groups"`
	Effect *struct {
		Kind    string  `json:"kind"`
		Est     float64 `json:"est"`
		Lower   float64 `json:"lower"`
		Upper   float64 `json:"upper"`
		Sources []int   `json:"sources"`
	} `json:"effect"`
}

// ExtractResult asks the model for the study's result for spec in one
// typed JSON reply: the groups (name, role by the cohort definition, N and
// the numbers of spec.Measure), and for RatioCI the reported effect with its
// CI, every number with up to MaxSources source passages. The model only
// copies numbers; Standardize computes the table row in Go. A reply citing
// passages that were not shown, or too many, is retried once with a
// message naming them, then rejected with a *SourceError. Every number is
// checked against its cited passages and flagged Unsupported when it is
// not found there (or cites none).
func (e *Extractor) ExtractResult(ctx context.Context, t StudyText, spec ResultSpec) (ResultExtraction, error) {
	if err := spec.Validate(); err != nil {
		return ResultExtraction{}, err
	}
	if len(t.Chunks) == 0 {
		return ResultExtraction{}, fmt.Errorf("evidence: extracting the result of %s: the study has no text", t.ID)
	}
	view := selectChunks(t, spec.Outcome+" "+spec.Cohort, e.budget())
	msgs, err := promptMessages("results", struct {
		textView
		Outcome, Cohort, Measure string
		MaxSources               int
	}{view, cleanSpace(spec.Outcome), cleanSpace(spec.Cohort), string(spec.Measure), MaxSources})
	if err != nil {
		return ResultExtraction{}, err
	}
	req := localllm.ChatRequest{Model: e.Model, Messages: msgs, Options: e.Options}
	var problems []sourceProblem
	for attempt := 0; attempt < 2; attempt++ {
		var reply resultReply
		res, err := e.Chat.ChatJSON(ctx, req, resultSchemas()[spec.Measure], &reply)
		if err != nil {
			return ResultExtraction{}, fmt.Errorf("evidence: extracting the result of %s: %w", t.ID, err)
		}
		problems = problems[:0]
		number := func(what string, n *numberReply) *Number {
			if n == nil {
				return nil
			}
			src, p := checkSources(what, n.Sources, view.shown)
			if p != nil {
				problems = append(problems, *p)
			}
			return &Number{Value: n.Value, Sources: src}
		}
		out := ResultExtraction{StudyID: t.ID, Groups: []ResultGroup{}}
		for i, g := range reply.Groups {
			name := cleanSpace(g.Name)
			if name == "" {
				name = fmt.Sprintf("group %d", i+1)
			}
			role := ""
			if g.Role == RoleTreatment || g.Role == RoleControl {
				role = g.Role
			}
			what := func(n string) string { return fmt.Sprintf("group %q %s", name, n) }
			out.Groups = append(out.Groups, ResultGroup{Name: name, Role: role,
				N: number(what("n"), g.N), Events: number(what("events"), g.Events), Percent: number(what("percent"), g.Percent),
				Mean: number(what("mean"), g.Mean), SD: number(what("sd"), g.SD)})
		}
		if ef := reply.Effect; ef != nil {
			src, p := checkSources("the effect", ef.Sources, view.shown)
			if p != nil {
				problems = append(problems, *p)
			}
			out.Effect = &Effect{Kind: strings.ToUpper(cleanSpace(ef.Kind)),
				Est:   Number{Value: ef.Est, Sources: src},
				Lower: Number{Value: ef.Lower, Sources: slices.Clone(src)},
				Upper: Number{Value: ef.Upper, Sources: slices.Clone(src)}}
		}
		if len(problems) == 0 {
			return CheckResult(out, t), nil
		}
		req.Messages = append(append([]localllm.Message(nil), req.Messages...),
			localllm.Message{Role: localllm.RoleAssistant, Content: res.Content},
			localllm.Message{Role: localllm.RoleUser, Content: sourceRetry(problems, view.valid)})
	}
	return ResultExtraction{}, fmt.Errorf("evidence: extracting the result of %s: %w", t.ID, sourceErr(t.ID, e.Model, problems[0], view.valid))
}

// CheckResult returns r with every number's Unsupported flag recomputed
// against the study's text: set when the number cites no chunk or occurs
// in none of its cited chunks (compared as in Supported). Call it after
// the user edits a number or its sources. r is not modified.
func CheckResult(r ResultExtraction, t StudyText) ResultExtraction {
	check := func(n *Number) *Number {
		if n == nil {
			return nil
		}
		c := *n
		c.Sources = slices.Clone(n.Sources)
		c.Unsupported = len(c.Sources) == 0 || !numberSupported(c.Value, t, c.Sources)
		return &c
	}
	out := r
	out.Groups = make([]ResultGroup, len(r.Groups))
	for i, g := range r.Groups {
		out.Groups[i] = ResultGroup{Name: g.Name, Role: g.Role, N: check(g.N), Events: check(g.Events),
			Percent: check(g.Percent), Mean: check(g.Mean), SD: check(g.SD)}
	}
	if r.Effect != nil {
		ef := Effect{Kind: r.Effect.Kind, Est: *check(&r.Effect.Est), Lower: *check(&r.Effect.Lower), Upper: *check(&r.Effect.Upper)}
		out.Effect = &ef
	}
	return out
}

// numberSupported reports whether v (its magnitude) occurs among the
// numbers of the cited chunks.
func numberSupported(v float64, t StudyText, sources []int) bool {
	return Supported(canonNumber(v), t, sources)
}

// MergeResult merges a new model run (fresh) into a study's earlier result
// (old): old is kept when the user Edited it, else fresh is taken.
func MergeResult(old, fresh ResultExtraction) ResultExtraction {
	if old.Edited {
		return old
	}
	return fresh
}

// RowError is a study whose result cannot be standardized: values missing
// or impossible. Problems name the group and the value.
type RowError struct {
	// StudyID and Label name the study.
	StudyID, Label string
	// Problems say what is wrong, one each.
	Problems []string
}

// Error names the study and lists the problems.
func (e *RowError) Error() string {
	name := e.Label
	if e.StudyID != "" && e.StudyID != e.Label {
		name += " (" + e.StudyID + ")"
	}
	return "evidence: " + name + ": " + strings.Join(e.Problems, "; ")
}

// arm is a group chosen for a side of the table.
type arm struct {
	g    *ResultGroup
	side string // "treatment" or "control" (or "single")
}

// describe names the arm's group for messages: `the treatment group ("MWA")`.
func (a arm) describe() string {
	return fmt.Sprintf("the %s group (%q)", a.side, a.g.Name)
}

// Standardize computes a study's row of the standardized table from
// its extracted result, in Go (no model-written code runs):
//   - TwoGroups: events and totals of the treatment and control groups;
//     events are derived as percent × N, rounded, when only a percentage
//     is reported (recorded in Derivations);
//   - SingleArm: events and total of the group;
//   - MeansSDs: means, SDs and sizes of the two groups;
//   - RatioCI: the reported ratio with its CI.
//
// A result with more groups than the shape compares (3 or more for two
// groups and means, 2 or more for a single arm) is standardized only with
// the user's arm choice: without one it gives a *RowError asking for it,
// never a row from the first groups. With a choice, its groups are used;
// several groups on one side are combined (Cochrane Handbook 6.5.2.10:
// events and N summed; means and SDs by CombineMeans), as Derivations
// say. Without a choice, a result of two groups takes the groups with the
// treatment and control roles; when a role is missing, the remaining
// groups are taken in their order, and Derivations say so. Values are
// validated (N ≥ 1, 0 ≤ events ≤ N, SD > 0 with N ≥ 2, 0 < lower < est <
// upper); problems give a *RowError naming the study, the group and the
// value, with the row holding what could be computed. label names the
// study ("" means its ID).
func Standardize(r ResultExtraction, spec ResultSpec, label string, choice *ArmChoice) (StandardRow, error) {
	if label = cleanSpace(label); label == "" {
		label = r.StudyID
	}
	row := StandardRow{StudyID: r.StudyID, Label: label, Measure: spec.Measure}
	if err := spec.Measure.Validate(); err != nil {
		return row, err
	}
	var problems []string
	problem := func(format string, args ...any) { problems = append(problems, fmt.Sprintf(format, args...)) }
	sources := map[int]bool{}
	use := func(what string, n *Number) {
		for _, s := range n.Sources {
			sources[s] = true
		}
		if n.Unsupported {
			row.Unsupported = append(row.Unsupported, fmt.Sprintf("%s %s", what, fmtNum(n.Value)))
		}
	}
	// size returns an arm's N, checked.
	size := func(a arm, key string, atLeast float64) (float64, bool) {
		if a.g.N == nil {
			problem("%s has no number of participants (N)", a.describe())
			return 0, false
		}
		use(key, a.g.N)
		n := a.g.N.Value
		switch {
		case n < 1:
			problem("%s has N = %s; a group needs at least 1 participant", a.describe(), fmtNum(n))
			return n, false
		case n != math.Trunc(n):
			problem("%s has N = %s, which is not a whole number of participants", a.describe(), fmtNum(n))
			return n, false
		case n < atLeast:
			problem("%s has N = %s; a standard deviation needs at least %s participants", a.describe(), fmtNum(n), fmtNum(atLeast))
			return n, false
		}
		return n, true
	}
	// events returns an arm's events, from the count or percent × N.
	events := func(a arm, key string, n float64, nOK bool) float64 {
		g := a.g
		var ev float64
		switch {
		case g.Events != nil:
			use(key, g.Events)
			ev = g.Events.Value
		case g.Percent != nil && g.N != nil:
			use(strings.Replace(key, "events", "percent", 1), g.Percent)
			p := g.Percent.Value
			if p < 0 || p > 100 {
				problem("%s has %s%% with the outcome; a percentage is between 0 and 100", a.describe(), fmtNum(p))
				return 0
			}
			// p·n/100, cleaned of floating-point noise so that exact halves
			// round up (0.7% of 500 = 3.5 → 4, not 3.4999… → 3).
			exact := math.Round(p*n*1e7) / 1e9
			ev = math.Round(exact)
			d := fmt.Sprintf("%s = %s%% of %s = %s", key, fmtNum(p), fmtNum(n), fmtNum(ev))
			if math.Abs(exact-ev) > 1e-9 {
				d += fmt.Sprintf(" (%s rounded)", strconv.FormatFloat(exact, 'f', 2, 64))
			}
			row.Derivations = append(row.Derivations, d)
		case g.Percent != nil:
			use(strings.Replace(key, "events", "percent", 1), g.Percent)
			problem("%s has %s%% with the outcome but no N to count the events from", a.describe(), fmtNum(g.Percent.Value))
			return 0
		default:
			problem("%s has neither a number of events nor a percentage with the outcome", a.describe())
			return 0
		}
		switch {
		case ev < 0:
			problem("%s has %s events; events cannot be negative", a.describe(), fmtNum(ev))
		case ev != math.Trunc(ev):
			problem("%s has %s events, which is not a whole number", a.describe(), fmtNum(ev))
		case nOK && ev > n:
			problem("%s has %s events but only %s participants", a.describe(), fmtNum(ev), fmtNum(n))
		}
		return ev
	}
	// meanSD returns an arm's mean and SD, checked.
	meanSD := func(a arm, key string) (m, sd float64) {
		if a.g.Mean == nil {
			problem("%s has no mean", a.describe())
		} else {
			use("mean"+key, a.g.Mean)
			m = a.g.Mean.Value
		}
		if a.g.SD == nil {
			problem("%s has no standard deviation (SD)", a.describe())
		} else {
			use("sd"+key, a.g.SD)
			if sd = a.g.SD.Value; sd <= 0 {
				problem("%s has SD = %s; a standard deviation must be greater than 0", a.describe(), fmtNum(sd))
			}
		}
		return m, sd
	}

	// counts returns a side's total and events: its group's, or its
	// groups' summed.
	counts := func(groups []*ResultGroup, side, idx string) (n, ev float64) {
		if len(groups) == 1 {
			a := arm{groups[0], side}
			n, ok := size(a, "total"+idx, 1)
			return n, events(a, "events"+idx, n, ok)
		}
		var ns, evs []string
		for _, g := range groups {
			a := arm{g, side}
			key := fmt.Sprintf(" (%s)", g.Name)
			gn, ok := size(a, "total"+idx+key, 1)
			gev := events(a, "events"+idx+key, gn, ok)
			n, ev = n+gn, ev+gev
			ns, evs = append(ns, fmtNum(gn)), append(evs, fmtNum(gev))
		}
		row.Derivations = append(row.Derivations, fmt.Sprintf("%s groups %s combined (Cochrane Handbook 6.5.2.10, events and totals summed): events%s = %s = %s, total%s = %s = %s",
			side, quotedNames(groups), idx, strings.Join(evs, " + "), fmtNum(ev), idx, strings.Join(ns, " + "), fmtNum(n)))
		return n, ev
	}
	// means returns a side's size, mean and SD: its group's, or its groups'
	// combined by the Cochrane formula (CombineMeans).
	means := func(groups []*ResultGroup, side, idx string) (n, m, sd float64) {
		if len(groups) == 1 {
			a := arm{groups[0], side}
			n, _ = size(a, "total"+idx, 2)
			m, sd = meanSD(a, idx)
			return n, m, sd
		}
		before := len(problems)
		var ns, ms, sds []float64
		for _, g := range groups {
			a := arm{g, side}
			key := fmt.Sprintf(" (%s)", g.Name)
			gn, _ := size(a, "total"+idx+key, 2)
			gm, gsd := meanSD(a, idx+key)
			ns, ms, sds = append(ns, gn), append(ms, gm), append(sds, gsd)
		}
		if len(problems) > before {
			return 0, 0, 0 // a group's values are missing or impossible
		}
		n, m, sd = ns[0], ms[0], sds[0]
		terms := []string{fmt.Sprintf("%s×%s", fmtNum(ns[0]), fmtNum(ms[0]))}
		for k := 1; k < len(groups); k++ {
			n, m, sd = CombineMeans(n, m, sd, ns[k], ms[k], sds[k])
			terms = append(terms, fmt.Sprintf("%s×%s", fmtNum(ns[k]), fmtNum(ms[k])))
		}
		sizes := make([]string, len(ns))
		for k, v := range ns {
			sizes[k] = fmtNum(v)
		}
		pairwise := ""
		if len(groups) > 2 {
			pairwise = ", applied pairwise"
		}
		row.Derivations = append(row.Derivations, fmt.Sprintf("%s groups %s combined (Cochrane Handbook Table 6.5.a%s): total%s = %s = %s, mean%s = (%s)/%s = %s, sd%s = %s",
			side, quotedNames(groups), pairwise, idx, strings.Join(sizes, " + "), fmtNum(n), idx, strings.Join(terms, " + "), fmtNum(n), fmtSig(m), idx, fmtSig(sd)))
		return n, m, sd
	}
	// chosen returns the groups of the user's arm choice, or nil with the
	// problems when it does not fit the result.
	chosen := func(need int) (t, c []*ResultGroup) {
		t, c, probs := resolveArms(r, *choice, need)
		if len(probs) > 0 {
			problems = append(problems, probs...)
			return nil, nil
		}
		row.Derivations = append(row.Derivations, "groups chosen by the user: "+choice.String())
		return t, c
	}

	switch spec.Measure {
	case TwoGroups, MeansSDs:
		var ts, cs []*ResultGroup
		switch {
		case choice != nil:
			ts, cs = chosen(2)
		case needsArmChoice(r, spec.Measure):
			problem("%s", armChoiceNeeded(r))
		default:
			t, c, notes := pickArms(r.Groups)
			row.Derivations = append(row.Derivations, notes...)
			if t == nil || c == nil {
				problem("a treatment and a control group are needed, but the study has %d %s", len(r.Groups), pluralWord(len(r.Groups), "group", "groups"))
				break
			}
			ts, cs = []*ResultGroup{t}, []*ResultGroup{c}
		}
		if len(ts) == 0 || len(cs) == 0 {
			break
		}
		switch {
		case spec.Measure == TwoGroups && len(ts) == 1 && len(cs) == 1:
			ta, ca := arm{ts[0], RoleTreatment}, arm{cs[0], RoleControl}
			n1, ok1 := size(ta, "total1", 1)
			n2, ok2 := size(ca, "total2", 1)
			row.Total1, row.Total2 = n1, n2
			row.Events1 = events(ta, "events1", n1, ok1)
			row.Events2 = events(ca, "events2", n2, ok2)
		case spec.Measure == TwoGroups:
			row.Total1, row.Events1 = counts(ts, RoleTreatment, "1")
			row.Total2, row.Events2 = counts(cs, RoleControl, "2")
		default:
			row.Total1, row.Mean1, row.SD1 = means(ts, RoleTreatment, "1")
			row.Total2, row.Mean2, row.SD2 = means(cs, RoleControl, "2")
		}
	case SingleArm:
		var gs []*ResultGroup
		side := RoleTreatment
		switch {
		case choice != nil:
			gs, _ = chosen(1)
		case needsArmChoice(r, spec.Measure):
			problem("%s", armChoiceNeeded(r))
		case len(r.Groups) == 0:
			problem("the study has no group with the outcome")
		default:
			gs = []*ResultGroup{&r.Groups[0]}
			if r.Groups[0].Role != RoleTreatment {
				side = "single"
			}
		}
		if len(gs) > 0 {
			row.Total1, row.Events1 = counts(gs, side, "1")
		}
	case RatioCI:
		ef := r.Effect
		if ef == nil {
			problem("the study reports no ratio with a confidence interval for the outcome")
			break
		}
		row.EffectKind = ef.Kind
		if row.EffectKind == "" {
			row.EffectKind = "ratio"
		}
		use("est", &ef.Est)
		use("lower", &ef.Lower)
		use("upper", &ef.Upper)
		row.Est, row.Lower, row.Upper = ef.Est.Value, ef.Lower.Value, ef.Upper.Value
		switch {
		case row.Est <= 0 || row.Lower <= 0 || row.Upper <= 0:
			problem("the %s %s [%s, %s] has a value at or below 0; a ratio and its limits must be above 0", row.EffectKind,
				fmtNum(row.Est), fmtNum(row.Lower), fmtNum(row.Upper))
		case !(row.Lower < row.Upper):
			problem("the lower limit %s of the %s is not below the upper limit %s", fmtNum(row.Lower), row.EffectKind, fmtNum(row.Upper))
		case row.Est < row.Lower || row.Est > row.Upper:
			problem("the %s %s lies outside its confidence interval [%s, %s]", row.EffectKind, fmtNum(row.Est), fmtNum(row.Lower), fmtNum(row.Upper))
		}
	}
	row.Sources = slices.Sorted(maps.Keys(sources))
	if len(problems) > 0 {
		return row, &RowError{StudyID: r.StudyID, Label: label, Problems: problems}
	}
	return row, nil
}

// pickArms chooses the treatment and control groups: the first with each
// role; a missing role is filled with the first remaining group, in order,
// and the notes say so.
func pickArms(groups []ResultGroup) (t, c *ResultGroup, notes []string) {
	count := map[string]int{}
	for i := range groups {
		g := &groups[i]
		count[g.Role]++
		switch {
		case g.Role == RoleTreatment && t == nil:
			t = g
		case g.Role == RoleControl && c == nil:
			c = g
		}
	}
	for _, role := range []string{RoleTreatment, RoleControl} {
		if count[role] > 1 {
			first := t
			if role == RoleControl {
				first = c
			}
			notes = append(notes, fmt.Sprintf("%d groups are marked as %s; the first (%q) is used", count[role], role, first.Name))
		}
	}
	fill := func(role string) *ResultGroup {
		for i := range groups {
			g := &groups[i]
			if g != t && g != c && g.Role != RoleTreatment && g.Role != RoleControl {
				notes = append(notes, fmt.Sprintf("no group is marked as %s: group %d (%q) is taken, by its order", role, i+1, g.Name))
				return g
			}
		}
		return nil
	}
	if t == nil {
		t = fill(RoleTreatment)
	}
	if c == nil {
		c = fill(RoleControl)
	}
	return t, c, notes
}

// quotedNames names groups for derivations: `"A" + "B"`.
func quotedNames(groups []*ResultGroup) string {
	q := make([]string, len(groups))
	for i, g := range groups {
		q[i] = strconv.Quote(g.Name)
	}
	return strings.Join(q, " + ")
}

// fmtSig writes a computed number with 6 significant digits.
func fmtSig(v float64) string { return strconv.FormatFloat(v, 'g', 6, 64) }

// pluralWord picks the singular or plural form for n.
func pluralWord(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// fmtNum writes a number without trailing zeros.
func fmtNum(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }

// MetaStudy returns the row as a study of the meta-analysis engine, with
// the Kind of its Measure: Binary (TwoGroups), Proportion (SingleArm),
// Continuous (MeansSDs) or Generic (RatioCI, the estimate and CI on their
// natural scale, for meta.GENRatio).
func (r StandardRow) MetaStudy() meta.Study {
	s := meta.Study{Label: r.Label}
	if s.Label == "" {
		s.Label = r.StudyID
	}
	switch r.Measure {
	case TwoGroups:
		s.Kind, s.AI, s.N1I, s.CI, s.N2I = meta.Binary, r.Events1, r.Total1, r.Events2, r.Total2
	case SingleArm:
		s.Kind, s.XI, s.NI = meta.Proportion, r.Events1, r.Total1
	case MeansSDs:
		s.Kind = meta.Continuous
		s.M1I, s.SD1I, s.N1I = r.Mean1, r.SD1, r.Total1
		s.M2I, s.SD2I, s.N2I = r.Mean2, r.SD2, r.Total2
	case RatioCI:
		s.Kind, s.Est, s.LB, s.UB = meta.Generic, r.Est, r.Lower, r.Upper
	}
	return s
}

// DefaultMeasure is the effect measure a result shape is pooled with unless
// the user picks another: the risk ratio for two groups, the raw proportion
// for one group, the mean difference for means, the generic ratio (log
// scale) for a reported ratio; "" for an unknown shape.
func DefaultMeasure(m Measure) meta.Measure {
	if ms := MeasuresFor(m); len(ms) > 0 {
		return ms[0]
	}
	return ""
}

// MeasuresFor lists the effect measures a result shape can be pooled with,
// the default first: RR, OR, RD for two groups; PR, PLO, PFT for one group;
// MD, SMD for means; GEN.RATIO for a reported ratio.
func MeasuresFor(m Measure) []meta.Measure {
	switch m {
	case TwoGroups:
		return []meta.Measure{meta.RR, meta.OR, meta.RD}
	case SingleArm:
		return []meta.Measure{meta.PR, meta.PLO, meta.PFT}
	case MeansSDs:
		return []meta.Measure{meta.MD, meta.SMD}
	case RatioCI:
		return []meta.Measure{meta.GENRatio}
	}
	return nil
}

package cohort

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/progress"
)

// Attrition (issue 19 item 1): how many patients remain after each
// criterion of a cohort written as a chain (see ParseChain), counted on the
// database through the pipeline's read-only runner, without the model; the
// user may switch criteria off and count again.

// Attrition is the attrition table of a cohort.
type Attrition struct {
	// PatientColumn is the column whose distinct values are counted
	// (subject_id, person_id, PatientID).
	PatientColumn string `json:"patient_column,omitempty"`
	// Steps are the steps in order, base population first.
	Steps []AttritionStep `json:"steps"`
	// Off are the steps switched off (numbers from 1), ascending.
	Off []int `json:"off,omitempty"`
	// SQL is the cohort's statement with those steps left out (the answer's
	// statement when none is).
	SQL string `json:"sql"`
	// MinCell, when at least 2, says that counts from 1 to MinCell−1 are
	// shown as "<MinCell" and that a count or difference that the figures
	// shown around it would give away is hidden as "—" (an aggregate-only
	// source, or an export; see hideSmallDifferences).
	MinCell int `json:"min_cell,omitempty"`
	// Error says why the patients could not be counted ("" when they were).
	Error string `json:"error,omitempty"`
}

// AttritionStep is one row of the attrition table.
type AttritionStep struct {
	ChainStep
	// On is false for a criterion switched off (not counted).
	On bool `json:"on"`
	// Patients are the distinct patients after the step; Removed those it
	// removed from the step before it that is on (the base population
	// removes none).
	Patients Count `json:"patients"`
	Removed  Count `json:"removed"`
	// PercentOfBase is Patients as a percentage of the base population;
	// nil when the step is off or its count or the base's is hidden.
	PercentOfBase *float64 `json:"percent_of_base,omitempty"`
}

// Count is a number of patients as it may be shown.
type Count struct {
	// N is the count; -1 when not counted (a step switched off, or
	// counting failed); 0 when Below or Withheld hides it.
	N int64
	// Below, when at least 2, says that the count is from 1 to Below−1 and
	// is hidden (N is 0).
	Below int
	// Withheld says that the count is hidden, whatever its size, because
	// with the counts shown beside it it would give away a difference
	// smaller than the minimum cell size (see hideSmallDifferences).
	Withheld bool
}

// WithheldText is how a withheld count reads in tables, workbooks and
// JSON.
const WithheldText = "—"

// Hidden reports whether the count is hidden under a minimum cell size.
func (c Count) Hidden() bool { return c.Below >= 2 || c.Withheld }

// String renders the count: "412", "<11", "—" when withheld (see
// WithheldText) or when not counted.
func (c Count) String() string {
	switch {
	case c.Withheld:
		return WithheldText
	case c.Below >= 2:
		return "<" + strconv.Itoa(c.Below)
	case c.N < 0:
		return "—"
	}
	return strconv.FormatInt(c.N, 10)
}

// Cell returns the count as a workbook cell: the number, a
// disclosure.Suppressed, WithheldText, or nil when not counted.
func (c Count) Cell() any {
	switch {
	case c.Withheld:
		return WithheldText
	case c.Below >= 2:
		return disclosure.Suppressed{K: c.Below}
	case c.N < 0:
		return nil
	}
	return c.N
}

// MarshalJSON writes the number, "<k" or "—" when hidden, or null when
// not counted.
func (c Count) MarshalJSON() ([]byte, error) {
	switch {
	case c.Hidden():
		return []byte(`"` + c.String() + `"`), nil // "<k" as written, as disclosure.Suppressed, or "—"
	case c.N < 0:
		return []byte("null"), nil
	}
	return strconv.AppendInt(nil, c.N, 10), nil
}

// UnmarshalJSON reads what MarshalJSON writes.
func (c *Count) UnmarshalJSON(b []byte) error {
	var v any
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	switch x := v.(type) {
	case nil:
		*c = Count{N: -1}
	case float64:
		*c = Count{N: int64(x)}
	case string:
		if x == WithheldText {
			*c = Count{Withheld: true}
			return nil
		}
		k, err := strconv.Atoi(x[min(1, len(x)):])
		if len(x) < 2 || x[0] != '<' || err != nil {
			return fmt.Errorf("a patient count reads %q", x)
		}
		*c = Count{Below: k}
	default:
		return fmt.Errorf("a patient count reads %s", b)
	}
	return nil
}

// Under returns the table as a source that shows counts only from k on
// may show it (see hideSmallDifferences): every count from 1 to k−1 reads
// "<k", a count or a number removed that the counts shown beside it would
// give away reads "—", and the percentage of a hidden count is left out.
// k < 2 returns a unchanged; a table already under a larger k keeps it.
func (a *Attrition) Under(k int) *Attrition {
	if a == nil || k < 2 || a.MinCell >= k {
		return a
	}
	out := *a
	out.MinCell = k
	out.Steps = slices.Clone(a.Steps)
	hideSmallDifferences(out.Steps, k)
	return &out
}

// hideSmallDifferences hides, in place, the counts of steps that a source
// showing counts only from k on must not show. Hiding each count from 1
// to k−1 on its own is not enough: the counts before and after a step are
// nested sets of patients, so two counts shown exactly (60 and 59) give
// away their difference (one patient removed, who can be named by a
// criterion written for the purpose), and so does a shown count beside a
// shown number removed. So, walking the steps that are on in order:
//
//   - a count from 1 to k−1 reads "<k" (primary suppression);
//   - a count that differs by 1 to k−1 from any count already shown (the
//     last shown is the anchor of the next step) is withheld ("—"), with
//     its number removed and its percentage;
//   - any other count (0, or differing by 0 or at least k) is shown, and
//     its number removed (the difference from the step before it that is
//     on) only when that step's count is shown too, else it is withheld.
//
// No two figures shown then differ by 1 to k−1, and no number removed
// shown is from 1 to k−1. Counts already hidden (a table under a smaller
// k) stay hidden and are no anchor. Percentages are left out for hidden
// counts, and for every step when the base population's count is hidden.
// Steps switched off and counts not counted (N −1) are left as they are.
func hideSmallDifferences(steps []AttritionStep, k int) {
	var shown []int64 // the counts shown so far
	near := func(n int64) bool {
		for _, m := range shown {
			if d := max(n-m, m-n); d >= 1 && d < int64(k) {
				return true
			}
		}
		return false
	}
	prevShown, first := false, true
	for i := range steps {
		s := &steps[i]
		if !s.On {
			continue
		}
		base := first
		first = false
		p := s.Patients
		counted := p.Hidden() || p.N >= 0
		visible := !p.Hidden() && p.N >= 0 && (p.N == 0 || p.N >= int64(k)) && !near(p.N)
		switch {
		case visible:
			shown = append(shown, p.N)
			if !base && !prevShown && !s.Removed.Hidden() && s.Removed.N >= 0 {
				s.Removed = Count{Withheld: true}
			}
		case !counted:
			// Not counted (the table's Error says why): nothing to hide.
		default:
			if !p.Hidden() {
				if p.N >= 1 && p.N < int64(k) {
					s.Patients = Count{Below: k}
				} else {
					s.Patients = Count{Withheld: true}
				}
			}
			if !base && (s.Removed.Hidden() || s.Removed.N >= 0) {
				s.Removed = Count{Withheld: true}
			}
			s.PercentOfBase = nil
		}
		prevShown = visible
	}
	if len(steps) > 0 && steps[0].Patients.Hidden() {
		for i := range steps {
			steps[i].PercentOfBase = nil
		}
	}
}

// Final returns the last step that is on (the cohort), or nil.
func (a *Attrition) Final() *AttritionStep {
	if a == nil {
		return nil
	}
	for i := len(a.Steps) - 1; i >= 0; i-- {
		if a.Steps[i].On {
			return &a.Steps[i]
		}
	}
	return nil
}

// Cells renders the table for people: the header and one row per step
// (step, criterion, patients remaining, removed, % of base).
func (a *Attrition) Cells() (header []string, rows [][]string) {
	header = []string{"Step", "Criterion", "Patients remaining", "Removed", "% of base"}
	for _, s := range a.Steps {
		step := strconv.Itoa(s.Number)
		if s.Number == 0 {
			step = "Base"
		}
		crit := s.Criterion
		if !s.On {
			rows = append(rows, []string{step, crit, "switched off", "", ""})
			continue
		}
		removed := s.Removed.String()
		if s.Number == 0 {
			removed = ""
		}
		pct := ""
		if s.PercentOfBase != nil {
			pct = strconv.FormatFloat(*s.PercentOfBase, 'f', 1, 64) + "%"
		}
		rows = append(rows, []string{step, crit, s.Patients.String(), removed, pct})
	}
	return header, rows
}

// ComputeAttrition counts the distinct patients after each step of the
// chain sql with the steps of off switched off (numbers from 1), reading
// the database through q. The patient column is found in each step's
// columns among those of profile (the source's kind; see
// disclosure.IndividualColumns). Counts from 1 to minCell−1 read "<k"
// when minCell is at least 2. The error is ErrNoChain (wrapped) when sql
// is not a chain, the database's when a step cannot be counted, or ctx's.
func ComputeAttrition(ctx context.Context, q Querier, sql, profile string, off []int, minCell int, onProgress progress.Func) (*Attrition, error) {
	c, err := ParseChain(sql)
	if err != nil {
		return nil, err
	}
	set, err := c.checkOff(off)
	if err != nil {
		return nil, err
	}
	a := &Attrition{}
	for n := range set {
		a.Off = append(a.Off, n)
	}
	slices.Sort(a.Off)
	if a.SQL, err = c.Without(a.Off); err != nil {
		return nil, err
	}
	steps := c.Steps()
	total := int64(len(steps) - len(a.Off))
	done := int64(0)
	prev := int64(-1)
	for i, cs := range steps {
		st := AttritionStep{ChainStep: cs, On: !set[i], Patients: Count{N: -1}, Removed: Count{N: -1}}
		if st.On {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
			onProgress.Send(progress.Report{Stage: fmt.Sprintf("Counting the patients after step %d of %d (%s)", i, len(steps)-1, cs.Criterion),
				Done: done, Total: total, Unit: "steps"})
			n, col, err := countStep(ctx, q, c, i, set, profile)
			if err != nil {
				return nil, fmt.Errorf("count the patients after step %d (%s): %w", i, cs.Name, err)
			}
			if a.PatientColumn == "" {
				a.PatientColumn = col
			}
			st.Patients = Count{N: n}
			if prev >= 0 {
				st.Removed = Count{N: prev - n}
			} else {
				st.Removed = Count{N: 0}
			}
			prev = n
			done++
		}
		a.Steps = append(a.Steps, st)
	}
	if base := a.Steps[0].Patients.N; base > 0 {
		for i := range a.Steps {
			if s := &a.Steps[i]; s.On {
				p := 100 * float64(s.Patients.N) / float64(base)
				s.PercentOfBase = &p
			}
		}
	}
	onProgress.Send(progress.Report{Stage: "Counted", Done: total, Total: total, Unit: "steps"})
	return a.Under(minCell), nil
}

// countStep counts the distinct patients of step s: its patient column is
// found from its result's columns (no rows read), then counted.
func countStep(ctx context.Context, q Querier, c *Chain, s int, off map[int]bool, profile string) (int64, string, error) {
	res, err := q.Query(ctx, c.stepQuery(s, off, "*")+" LIMIT 0")
	if err != nil {
		return 0, "", err
	}
	col := PatientColumn(res.ColumnNames(), profile)
	if col == "" {
		return 0, "", fmt.Errorf("the step's result has no column that identifies patients (%s)", joinOr(disclosure.IndividualColumns(profile)))
	}
	res, err = q.Query(ctx, c.stepQuery(s, off, "COUNT(DISTINCT "+datasets.QuoteIdent(col)+")"))
	if err != nil {
		return 0, "", err
	}
	if len(res.Rows) != 1 || len(res.Rows[0]) != 1 {
		return 0, "", errors.New("no count came back")
	}
	n, ok := datasets.Number(res.Rows[0][0])
	if !ok {
		return 0, "", fmt.Errorf("the count reads %v", res.Rows[0][0])
	}
	return int64(n), col, nil
}

// joinOr joins names as "a, b or c".
func joinOr(names []string) string {
	switch len(names) {
	case 0:
		return ""
	case 1:
		return names[0]
	}
	out := ""
	for i, n := range names {
		switch {
		case i == 0:
		case i == len(names)-1:
			out += " or "
		default:
			out += ", "
		}
		out += n
	}
	return out
}

// Attrition counts the patients after each step of an answer's chain of
// criteria with the steps of off switched off (numbers from 1), through
// the pipeline's read-only runner and under its minimum cell size; no
// model is asked. The error is ErrNoChain (wrapped) when the answer's
// statement is not a chain.
func (p *Pipeline) Attrition(ctx context.Context, ans *Answer, off []int, onProgress progress.Func) (*Attrition, error) {
	if ans == nil || ans.SQL == "" {
		return nil, errors.New("there is no cohort statement to count: ask a question first")
	}
	return ComputeAttrition(ctx, p.cfg.Runner, ans.SQL, p.cfg.Profile, off, p.cfg.MinPersons, onProgress)
}

// attrition adds the attrition table to an answer whose statement is a
// chain of criteria (nothing for other statements). A count that fails is
// recorded in the table's Error; the error returned is ctx's only.
func (p *Pipeline) attrition(ctx context.Context, ans *Answer, timed func(string, func())) error {
	c, err := ParseChain(ans.SQL)
	if err != nil {
		ans.Attrition = nil
		return nil
	}
	var a *Attrition
	timed("attrition", func() {
		a, err = ComputeAttrition(ctx, p.cfg.Runner, ans.SQL, p.cfg.Profile, nil, p.cfg.MinPersons, nil)
	})
	if err != nil {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		p.log.Warn("attrition not counted", "err", err)
		a = &Attrition{SQL: ans.SQL, Error: errorText(err)}
		for _, s := range c.Steps() {
			a.Steps = append(a.Steps, AttritionStep{ChainStep: s, On: true, Patients: Count{N: -1}, Removed: Count{N: -1}})
		}
	}
	ans.Attrition = a
	return nil
}

// AttritionSheet is the workbook sheet of an attrition table: one row per
// step (step, criterion, on, patients remaining, removed, % of base, the
// step's SQL). Hidden counts are written as disclosure.Suppressed ("<k").
func AttritionSheet(a *Attrition) export.Table {
	rows := make([][]any, len(a.Steps))
	for i, s := range a.Steps {
		var pct, removed any
		if s.PercentOfBase != nil {
			pct = math.Round(*s.PercentOfBase*10) / 10
		}
		if s.Number > 0 {
			removed = s.Removed.Cell()
		}
		on := "yes"
		if !s.On {
			on = "switched off"
		}
		rows[i] = []any{int64(s.Number), s.Criterion, on, s.Patients.Cell(), removed, pct, s.SQL}
	}
	return export.Table{Name: "Attrition", Columns: []string{"step", "criterion", "on", "patients remaining", "removed", "% of base", "sql"}, Rows: rowsOf(rows)}
}

// Summary describes the table in one line for provenance: the column
// counted, the steps switched off, the minimum cell size, or the error.
func (a *Attrition) Summary() string {
	if a.Error != "" {
		return fmt.Sprintf("%d steps, not counted: %s", len(a.Steps), a.Error)
	}
	s := fmt.Sprintf("%d steps (base population and %d criteria), distinct %s counted after each", len(a.Steps), len(a.Steps)-1, a.PatientColumn)
	if len(a.Off) > 0 {
		s += fmt.Sprintf("; switched off: %s", joinOr(intStrings(a.Off)))
	}
	if note := a.HiddenNote(); note != "" {
		s += "; " + note
	}
	return s
}

// HiddenNote says, in words for the people reading the table, how its
// hidden counts read; "" when no minimum cell size applies.
func (a *Attrition) HiddenNote() string {
	if a == nil || a.MinCell < 2 {
		return ""
	}
	note := fmt.Sprintf("counts below %d are shown as <%d", a.MinCell, a.MinCell)
	for _, s := range a.Steps {
		if s.Patients.Withheld || s.Removed.Withheld {
			return note + fmt.Sprintf(", and a count that the counts beside it would give away (a difference below %d) as %s", a.MinCell, WithheldText)
		}
	}
	return note
}

func intStrings(v []int) []string {
	out := make([]string, len(v))
	for i, n := range v {
		out[i] = strconv.Itoa(n)
	}
	return out
}

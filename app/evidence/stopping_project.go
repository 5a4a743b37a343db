package evidence

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// This file applies the stopping rules (stopping.go) to a review project:
// the progress curve of its decisions, the reviewer's choice of rule, the
// random sample the recall test screens, and the rule's record for PRISMA
// and the workbook (issue 17 item 2).

// Stopping is the stopping rule a review uses, saved with the project.
type Stopping struct {
	// Consecutive, when positive, is the number of irrelevant records in a
	// row after which the reviewer stops (the consecutive-irrelevant rule).
	Consecutive int `json:"consecutive,omitempty"`
	// Sample, when drawn, is the recall test's random sample of the
	// records left undecided.
	Sample *RecallSample `json:"sample,omitempty"`
}

// RecallSample is a simple random sample of the undecided candidates, drawn
// for the recall test (RecallTest): every sampled record must be screened.
type RecallSample struct {
	IDs []string `json:"ids"`
	// Remaining is the number of undecided candidates it was drawn from;
	// FoundBefore the number of included records then.
	Remaining   int       `json:"remaining"`
	FoundBefore int       `json:"found_before"`
	Drawn       time.Time `json:"drawn"`
}

// The recall test's target and confidence: the reviewer may claim a recall
// of at least StopTargetRecall with StopConfidence.
const (
	StopTargetRecall = 0.95
	StopConfidence   = 0.95
)

// Assumptions of the rules, shown to the reviewer and recorded.
const (
	ConsecutiveAssumption = "Assumes the ranking puts relevant records first, so that a run of irrelevant ones means few remain; it gives no recall guarantee."
	RecallTestAssumption  = "Assumes the sample is drawn at random from all the records left unscreened and that every sampled record is screened (Callaghan & Müller-Hansen 2020, hypergeometric test)."
)

// maxRecallSample bounds the recall test's sample.
const maxRecallSample = 100_000

// decisionOrder returns the decisions on the current candidates in the
// order they were made.
func (p *Project) decisionOrder() []Decision {
	var out []Decision
	if p.Search == nil {
		return nil
	}
	for _, id := range p.Search.IDs {
		if d, ok := p.Decisions[id]; ok {
			out = append(out, d)
		}
	}
	slices.SortStableFunc(out, func(a, b Decision) int { return a.At.Compare(b.At) })
	return out
}

// ScreeningCurve returns the progress of the screening: found[k] is the
// number of records included among the first k+1 decisions, in the order
// they were made.
func (p *Project) ScreeningCurve() []int {
	ds := p.decisionOrder()
	out := make([]int, len(ds))
	n := 0
	for k, d := range ds {
		if d.Include {
			n++
		}
		out[k] = n
	}
	return out
}

// SetConsecutiveRule sets the number of irrelevant records in a row after
// which screening stops (0 switches the rule off).
func (p *Project) SetConsecutiveRule(n int) error {
	if n < 0 || n > 100_000 {
		return fmt.Errorf("the number of irrelevant records in a row must be between 0 and 100,000, not %d", n)
	}
	p.Stopping.Consecutive = n
	return nil
}

// DrawRecallSample draws the recall test's sample: n records at random
// (from rng) among the undecided candidates. It replaces a sample drawn
// before.
func (p *Project) DrawRecallSample(n int, rng *rand.Rand) error {
	if n < 1 || n > maxRecallSample {
		return fmt.Errorf("the sample size must be between 1 and %d, not %d", maxRecallSample, n)
	}
	if p.Search == nil {
		return errors.New("run a search first: the sample is drawn from its undecided records")
	}
	var undecided []string
	found := 0
	for _, id := range p.Search.IDs {
		d, ok := p.Decisions[id]
		switch {
		case !ok:
			undecided = append(undecided, id)
		case d.Include:
			found++
		}
	}
	if n > len(undecided) {
		return fmt.Errorf("only %d records are undecided: a sample of %d cannot be drawn (screen them all instead)", len(undecided), n)
	}
	perm := rng.Perm(len(undecided))[:n]
	ids := make([]string, n)
	for i, k := range perm {
		ids[i] = undecided[k]
	}
	p.Stopping.Sample = &RecallSample{IDs: ids, Remaining: len(undecided), FoundBefore: found, Drawn: time.Now().UTC()}
	return nil
}

// DropRecallSample removes the recall test's sample.
func (p *Project) DropRecallSample() { p.Stopping.Sample = nil }

// SampleToScreen returns the sample's records not decided yet, in the
// sample's order.
func (p *Project) SampleToScreen() []string {
	s := p.Stopping.Sample
	if s == nil {
		return nil
	}
	var out []string
	for _, id := range s.IDs {
		if _, ok := p.Decisions[id]; !ok && p.IsCandidate(id) {
			out = append(out, id)
		}
	}
	return out
}

// StoppingStatus is where the stopping rules stand.
type StoppingStatus struct {
	// Screened and Found count the decisions and the included records.
	Screened, Found int
	// Run is the number of exclusions in a row at the end of the
	// decisions.
	Run int
	// Consecutive is the rule's N (0: off); ConsecutiveMet whether Run
	// reached it.
	Consecutive    int
	ConsecutiveMet bool
	// Sample is the recall test's sample (nil: none); SampleScreened and
	// FoundInSample count its decided and included records.
	Sample                        *RecallSample
	SampleScreened, FoundInSample int
	// When the whole sample is screened: the test's p-value for H0 recall
	// < StopTargetRecall, the recall reached with StopConfidence, and
	// whether screening may stop (p < 1 − StopConfidence).
	SampleDone  bool
	PValue      float64
	RecallLower float64
	RecallMet   bool
}

// StoppingStatus returns where the stopping rules stand.
func (p *Project) StoppingStatus() StoppingStatus {
	st := StoppingStatus{Consecutive: p.Stopping.Consecutive, Sample: p.Stopping.Sample}
	ds := p.decisionOrder()
	st.Screened = len(ds)
	for _, d := range ds {
		if d.Include {
			st.Found++
			st.Run = 0
		} else {
			st.Run++
		}
	}
	st.ConsecutiveMet = st.Consecutive > 0 && st.Run >= st.Consecutive
	if s := st.Sample; s != nil {
		for _, id := range s.IDs {
			if d, ok := p.Decisions[id]; ok {
				st.SampleScreened++
				if d.Include {
					st.FoundInSample++
				}
			}
		}
		st.SampleDone = st.SampleScreened == len(s.IDs)
		if st.SampleDone {
			t := RecallTest{FoundBefore: s.FoundBefore, Remaining: s.Remaining, Sample: len(s.IDs), FoundInSample: st.FoundInSample}
			var err1, err2 error
			st.PValue, err1 = t.PValue(StopTargetRecall)
			st.RecallLower, err2 = t.RecallLowerBound(StopConfidence)
			st.RecallMet = err1 == nil && err2 == nil && st.PValue < 1-StopConfidence
		}
	}
	return st
}

// Summary describes the rules in use and their estimate in one paragraph,
// "" when no rule is in use: the record of PRISMA and the workbook.
func (st StoppingStatus) Summary() string {
	var parts []string
	if st.Consecutive > 0 {
		s := fmt.Sprintf("Consecutive irrelevant records: stop after %d in a row; the last %d decisions were exclusions", st.Consecutive, st.Run)
		if st.ConsecutiveMet {
			s += " (rule met)"
		}
		parts = append(parts, s+". "+ConsecutiveAssumption)
	}
	if s := st.Sample; s != nil {
		t := fmt.Sprintf("Recall test: a random sample of %d of the %d records left after %d were included", len(s.IDs), s.Remaining, s.FoundBefore)
		if st.SampleDone {
			t += fmt.Sprintf("; %d relevant in the sample; recall at least %.1f%% with %.0f%% confidence (p = %.3g for recall below %.0f%%)",
				st.FoundInSample, 100*st.RecallLower, 100*StopConfidence, st.PValue, 100*StopTargetRecall)
			if st.RecallMet {
				t += " (rule met)"
			}
		} else {
			t += fmt.Sprintf("; %d of the sample screened so far", st.SampleScreened)
		}
		parts = append(parts, t+". "+RecallTestAssumption)
	}
	return strings.Join(parts, " ")
}

// stoppingRows are the Stopping rule sheet's rows.
func (st StoppingStatus) rows() [][]any {
	rs := [][]any{
		{"Records screened (decided)", st.Screened},
		{"Relevant records found", st.Found},
		{"Exclusions in a row at the end", st.Run},
	}
	if st.Consecutive > 0 {
		rs = append(rs,
			[]any{"Consecutive irrelevant rule: N", st.Consecutive},
			[]any{"Consecutive irrelevant rule met", yesNo(st.ConsecutiveMet)},
			[]any{"Consecutive irrelevant rule: assumption", ConsecutiveAssumption})
	}
	if s := st.Sample; s != nil {
		rs = append(rs,
			[]any{"Recall test: records left when the sample was drawn", s.Remaining},
			[]any{"Recall test: relevant found before the sample", s.FoundBefore},
			[]any{"Recall test: sample size", len(s.IDs)},
			[]any{"Recall test: sample drawn", s.Drawn.Format(time.RFC3339)},
			[]any{"Recall test: sample screened", st.SampleScreened},
			[]any{"Recall test: relevant in the sample", st.FoundInSample})
		if st.SampleDone {
			rs = append(rs,
				[]any{fmt.Sprintf("Recall test: recall reached with %.0f%% confidence (lower bound)", 100*StopConfidence), st.RecallLower},
				[]any{fmt.Sprintf("Recall test: p-value for recall below %.0f%%", 100*StopTargetRecall), st.PValue},
				[]any{"Recall test met", yesNo(st.RecallMet)})
		}
		rs = append(rs, []any{"Recall test: assumption", RecallTestAssumption})
	}
	return rs
}

func yesNo(b bool) string {
	if b {
		return "yes"
	}
	return "no"
}

// inUse reports whether a stopping rule is in use.
func (s Stopping) inUse() bool { return s.Consecutive > 0 || s.Sample != nil }

// curvePoints returns the curve as (screened, found) pairs, thinned to at
// most maxPts points (the last kept) so drawing it costs a bounded time.
func curvePoints(found []int, maxPts int) [][2]int {
	n := len(found)
	step := max(1, (n+maxPts-1)/max(maxPts, 1))
	pts := [][2]int{{0, 0}}
	for k := step - 1; k < n; k += step {
		pts = append(pts, [2]int{k + 1, found[k]})
	}
	if n > 0 && pts[len(pts)-1][0] != n {
		pts = append(pts, [2]int{n, found[n-1]})
	}
	return pts
}

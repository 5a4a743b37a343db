package ui

// The Screen step's learning and stopping: decisions move to the next
// study, the active learner re-ranks the undecided ones in the background,
// and the stopping rules' curve and status are shown (split from
// evidence_screening.go, which keeps the criteria, the table and the study).

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app/evidence"
)

// decideAndNext records the decision on a study and, when it was the
// selected one, selects the next row (the most likely relevant of the
// undecided ones below it).
func (v *screeningView) decideAndNext(id string, include bool, reason string) {
	if p := v.s.project(); p == nil {
		return
	} else if _, had := v.ownDecision(p, id); had {
		v.Decide(id, include, reason) // a change of mind: stay on it
		return
	}
	v.Decide(id, include, reason)
	p := v.s.project()
	if p == nil || id != v.selected {
		return
	}
	if _, ok := v.ownDecision(p, id); !ok {
		return // refused
	}
	if i := slices.Index(v.rows, id); i >= 0 && i+1 < len(v.rows) {
		v.table.Select(widget.TableCellID{Row: i + 1, Col: 3})
	}
}

// bigReview is the number of candidates from which the Screen step says
// that the first ranking takes a while (building the learner's features
// takes about 3 s of processor time per 10,000 records:
// BenchmarkScreenLearnerBuild).
const bigReview = 5000

// requestRank has the review rank the undecided studies again off the UI
// goroutine; the ranking applies when it ends.
func (v *screeningView) requestRank() {
	r := v.s.review
	if r == nil || len(v.rows) == 0 {
		return
	}
	if v.rankBusy {
		v.rankAgain = true
		return
	}
	v.rankBusy = true
	gen := v.rankGen
	if v.ranking == nil && len(v.rows) >= bigReview {
		// The first ranking reads and indexes every candidate's text.
		v.learnStatus.SetText(fmt.Sprintf("Reading the %d candidates' titles and abstracts to rank them; with this many, the first ranking takes a while (screening can start meanwhile).", len(v.rows)))
	}
	go func() {
		rk, err := r.Rank(v.s.ctx)
		fyne.Do(func() {
			v.rankBusy = false
			if r != v.s.review {
				v.rankAgain = false
				return
			}
			if gen != v.rankGen {
				v.requestRank() // ranked an older state of the project
				return
			}
			if err != nil {
				v.s.logger.Warn("evidence screen: ranking", "err", err)
				v.learnStatus.SetText("The studies could not be ranked by your decisions: " + err.Error())
			} else {
				v.applyRanking(rk)
			}
			if v.rankAgain {
				v.rankAgain = false
				v.requestRank()
			}
		})
	}()
}

// applyRanking re-orders the rows below the selected one (all rows when
// none is selected) by the ranking, and shows what ranked them.
func (v *screeningView) applyRanking(rk *evidence.Ranking) {
	v.ranking = rk
	keep := 0
	if v.selected != "" {
		keep = slices.Index(v.rows, v.selected) + 1
	}
	v.rows = evidence.MergeOrder(v.rows, keep, rk.Order)
	v.table.Refresh()
	v.learnStatus.SetText(fmt.Sprintf("%d undecided studies ranked by %s, from %d decisions, in %d ms.",
		len(rk.Order), rk.Model, rk.Decisions, rk.Took.Milliseconds()))
	if v.selected != "" {
		v.ShowStudy(v.selected)
	}
}

// sameMembers reports whether a and b hold the same IDs (each once).
func sameMembers(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	in := make(map[string]bool, len(a))
	for _, id := range a {
		in[id] = true
	}
	for _, id := range b {
		if !in[id] {
			return false
		}
	}
	return true
}

// parseCount parses a whole number ≥ 0 ("" is 0).
func parseCount(t string) (int, error) {
	t = strings.TrimSpace(t)
	if t == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(t)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%q is not a whole number", t)
	}
	return n, nil
}

// setConsecutive sets the consecutive-irrelevant rule as the user types.
func (v *screeningView) setConsecutive(t string) {
	n, err := parseCount(t)
	if err != nil || v.s.updating || v.s.review == nil {
		return
	}
	if err := v.s.review.SetStoppingRule(n); err != nil {
		v.stopStatus.SetText(err.Error())
		return
	}
	v.s.changed()
	v.showPRISMA(v.s.project())
}

// DrawSample draws the recall test's random sample of the undecided
// studies; the ranking then puts it first.
func (v *screeningView) DrawSample() {
	n, err := parseCount(v.sampleEntry.Text)
	if err != nil || v.s.review == nil {
		return
	}
	if err := v.s.review.DrawRecallSample(n); err != nil {
		showError(v.s.window, err)
		return
	}
	v.s.changed()
	v.decisionsChanged()
}

// showStopping shows where the stopping rules stand.
func (v *screeningView) showStopping(p *evidence.Project) {
	st := p.StoppingStatus()
	if n, err := parseCount(v.consecutiveEntry.Text); err != nil || n != p.Stopping.Consecutive {
		text := ""
		if p.Stopping.Consecutive > 0 {
			text = strconv.Itoa(p.Stopping.Consecutive)
		}
		v.consecutiveEntry.SetText(text)
	}
	lines := []string{fmt.Sprintf("%d relevant found in %d decided; the last %d were irrelevant.", st.Found, st.Screened, st.Run)}
	if st.ConsecutiveMet {
		lines = append(lines, fmt.Sprintf("The consecutive rule is met (%d irrelevant in a row): you may stop.", st.Consecutive))
	}
	if s := st.Sample; s != nil {
		if st.SampleDone {
			verdict := "not shown: keep screening in the ranked order, then draw a new sample"
			if st.RecallMet {
				verdict = "shown: you may stop"
			}
			lines = append(lines, fmt.Sprintf("Recall test: %d relevant in the sample of %d; recall is at least %.1f%% with %.0f%% confidence; recall of %.0f%% is %s.",
				st.FoundInSample, len(s.IDs), 100*st.RecallLower, 100*evidence.StopConfidence, 100*evidence.StopTargetRecall, verdict))
		} else {
			lines = append(lines, fmt.Sprintf("Recall test: screen the random sample first (listed at the top): %d of %d done.", st.SampleScreened, len(s.IDs)))
		}
	}
	v.stopStatus.SetText(strings.Join(lines, " "))
}

package ui

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/internal/progress"
)

// searchView is the Search step: the terms, the boolean query, and the
// candidates the search keeps.
type searchView struct {
	s       *EvidenceScreen
	content fyne.CanvasObject

	terms      [4]*widget.Entry // conditions, treatments, comparators, outcomes
	joinComp   *widget.Check
	joinOut    *widget.Check
	buildBtn   *widget.Button
	query      *widget.Entry
	queryErr   *widget.Label
	limitSel   *widget.Select
	searchBtn  *widget.Button
	status     *widget.Label
	candidates *widget.Table
}

func newSearchView(s *EvidenceScreen) *searchView {
	v := &searchView{s: s}
	labels := []string{"Condition terms", "Treatment terms", "Comparison terms", "Outcome terms"}
	places := []string{"one term per line, e.g.\nhepatocellular carcinoma\nHCC", "one term per line (the intervention), e.g.\nmicrowave ablation\nMWA", "optional (the comparator), e.g.\nradiofrequency ablation\nRFA\njoined only when switched on below", "optional; joined only when switched on below"}
	form := widget.NewForm()
	for i := range v.terms {
		e := widget.NewMultiLineEntry()
		e.SetMinRowsVisible(3)
		e.SetPlaceHolder(places[i])
		e.OnChanged = func(string) { v.termsChanged() }
		v.terms[i] = e
		form.Append(labels[i], e)
	}
	v.joinComp = widget.NewCheck("Require the comparison terms too (off by default, as the Cochrane Handbook advises: comparators are often not named in the abstract)", func(bool) { v.termsChanged() })
	form.Append("", v.joinComp)
	v.joinOut = widget.NewCheck("Require the outcome terms too (off by default, as the Cochrane Handbook advises: outcomes are often not in the abstract)", func(bool) { v.termsChanged() })
	form.Append("", v.joinOut)
	v.buildBtn = widget.NewButtonWithIcon("Build the query from the terms", theme.MoveDownIcon(), v.BuildQuery)
	v.query = widget.NewMultiLineEntry()
	v.query.Wrapping = fyne.TextWrapWord
	v.query.SetMinRowsVisible(3)
	v.query.SetPlaceHolder(`PubMed syntax: (hepatocellular carcinoma OR HCC) AND "microwave ablation"[tiab] NOT review[pt]`)
	v.query.OnChanged = func(string) { v.queryChanged() }
	v.queryErr = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	v.queryErr.Importance = widget.DangerImportance
	v.queryErr.Hide()
	limits := make([]string, len(evidence.SearchLimits))
	for i, n := range evidence.SearchLimits {
		limits[i] = limitLabel(n)
	}
	v.limitSel = widget.NewSelect(limits, nil)
	v.limitSel.SetSelected(limitLabel(evidence.DefaultSearchLimit))
	v.searchBtn = widget.NewButtonWithIcon("Search", theme.SearchIcon(), v.Search)
	v.searchBtn.Importance = widget.HighImportance
	v.status = widget.NewLabel("")
	v.status.Wrapping = fyne.TextWrapWord
	v.candidates = newTextTable([]tableColumn{{"#", 50}, {"Study", 150}, {"Year", 55}, {"Title", 420}},
		func() int {
			if p := s.project(); p != nil && p.Search != nil {
				return len(p.Search.IDs)
			}
			return 0
		}, v.candidateCell)

	left := container.NewVBox(
		form,
		container.NewHBox(v.buildBtn),
		bold("Query"),
		v.query,
		v.queryErr,
		container.NewHBox(widget.NewLabel("Candidates to screen:"), v.limitSel, v.searchBtn),
		v.status,
	)
	split := container.NewHSplit(container.NewScroll(left),
		container.NewBorder(bold("Candidates (best match first)"), nil, nil, nil, v.candidates))
	split.Offset = 0.45
	v.content = split
	return v
}

// show fills the terms and the query and shows the last search.
func (v *searchView) show(p *evidence.Project) {
	v.joinComp.SetChecked(p.Terms.JoinComparators)
	v.joinOut.SetChecked(p.Terms.JoinOutcomes)
	for i, l := range [][]string{p.Terms.Conditions, p.Terms.Treatments, p.Terms.Comparators, p.Terms.Outcomes} {
		v.terms[i].SetText(strings.Join(l, "\n"))
	}
	v.query.SetText(p.Query)
	v.showQueryError(p.Query)
	if p.Search == nil {
		v.status.SetText("No search run yet.")
	} else {
		v.status.SetText(searchStatus(p.Search))
	}
	v.candidates.Refresh()
	v.candidates.ScrollToTop()
}

// termLines splits an entry's text into terms, one per line.
func termLines(text string) []string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func (v *searchView) termsChanged() {
	t := v.terms
	v.s.edit(func(p *evidence.Project) {
		p.Terms = evidence.SearchTerms{Conditions: termLines(t[0].Text), Treatments: termLines(t[1].Text), Comparators: termLines(t[2].Text), Outcomes: termLines(t[3].Text),
			JoinComparators: v.joinComp.Checked, JoinOutcomes: v.joinOut.Checked}
	})
}

// BuildQuery writes the boolean query of the terms: each role's terms
// joined by OR, the roles by AND (the comparison and the outcome only when
// the user requires them).
func (v *searchView) BuildQuery() {
	p := v.s.project()
	if p == nil {
		return
	}
	q, err := p.Terms.Query()
	if err != nil {
		v.queryErr.SetText(err.Error())
		v.queryErr.Show()
		return
	}
	v.query.SetText(q) // saved through queryChanged
}

func (v *searchView) queryChanged() {
	text := v.query.Text
	if v.s.edit(func(p *evidence.Project) { p.Query = text }) {
		v.showQueryError(text)
	}
}

// showQueryError shows where a query is malformed, with a caret under the
// position; it reports whether it is.
func (v *searchView) showQueryError(q string) bool {
	if strings.TrimSpace(q) == "" {
		v.queryErr.Hide()
		return false
	}
	_, err := evidence.ParseQuery(q)
	var qe *evidence.QueryError
	switch {
	case err == nil:
		v.queryErr.Hide()
		return false
	case errors.As(err, &qe):
		v.queryErr.SetText(qe.Error() + "\n" + qe.Pointer())
	default:
		v.queryErr.SetText(err.Error())
	}
	v.queryErr.Show()
	return true
}

// Search runs the query over the corpus and keeps the best candidates.
func (v *searchView) Search() {
	p := v.s.project()
	if p == nil {
		return
	}
	if strings.TrimSpace(p.Query) == "" {
		v.s.setNotice("Write a query, or build one from the terms, before searching.")
		return
	}
	if v.showQueryError(p.Query) {
		return
	}
	limit := evidence.DefaultSearchLimit
	for _, n := range evidence.SearchLimits {
		if limitLabel(n) == v.limitSel.Selected {
			limit = n
		}
	}
	source := p.Source
	v.s.runStep("Searching the literature", func(ctx context.Context, r app.Reviewer, report progress.Func) error {
		report(progress.Report{Stage: "Searching " + source})
		_, err := r.Search(ctx, limit)
		return err
	}, nil)
}

// candidateCell is the text of a candidates table cell.
func (v *searchView) candidateCell(row, col int) string {
	p := v.s.project()
	if p == nil || p.Search == nil || row >= len(p.Search.IDs) {
		return ""
	}
	id := p.Search.IDs[row]
	info := p.Studies[id]
	switch col {
	case 0:
		return strconv.Itoa(row + 1)
	case 1:
		return p.Label(id)
	case 2:
		if info.Year > 0 {
			return strconv.Itoa(info.Year)
		}
		return ""
	case 3:
		if info.Title == "" {
			return id
		}
		return info.Title
	}
	return ""
}

// limitLabel names a search limit in the Search step's choice: every
// match, or the number of best matches kept.
func limitLabel(n int) string {
	if n <= 0 {
		return "every match"
	}
	return strconv.Itoa(n)
}

// searchStatus says what the last search found and kept.
func searchStatus(s *evidence.SearchRun) string {
	at := s.At.Local().Format("2 Jan 15:04")
	dups := ""
	if n := len(s.DuplicateOf); n > 0 {
		dups = fmt.Sprintf(" (%d duplicates removed)", n)
	}
	kept := len(s.IDs)
	if int64(kept+len(s.DuplicateOf)) >= s.Total {
		return fmt.Sprintf("%d records match%s (searched %s): all %d are candidates for screening, the most relevant to the question first.", s.Total, dups, at, kept)
	}
	return fmt.Sprintf("%d records match%s (searched %s); the best %d by relevance to the question are the candidates for screening.", s.Total, dups, at, kept)
}

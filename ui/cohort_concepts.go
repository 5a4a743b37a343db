package ui

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/app/omop"
)

// The Cohort screen's "Concept sets" tab (issue 15), for OMOP CDM sources:
// the concept sets the question's clinical terms resolved to (each concept
// with its id, vocabulary and code, and the persons the set finds in this
// database under the source's disclosure policy), the terms no concept was
// found for, how the answer was reached (the model, or a template without
// one), and the cohort's readable definition. A concept is removed with
// its button and one is added by search; either edit answers the question
// again with the edited sets. The tab appears when an answer has concept
// sets.

// conceptSearchLimit is how many concepts a search shows.
const conceptSearchLimit = 8

// newConceptSet is the target choice that starts a concept set of its own.
const newConceptSet = "a new concept set"

// conceptRow is one line of the concept-set list: a set's header (item
// < 0) or one of its items.
type conceptRow struct {
	set, item int
}

// cohortConcepts holds the tab's widgets and state (UI goroutine only).
type cohortConcepts struct {
	s   *CohortScreen
	tab *container.TabItem

	how        *widget.Label
	unresolved *widget.Label
	definition *widget.Label
	list       *widget.List
	search     *widget.Entry
	searchBtn  *widget.Button
	target     *widget.Select
	hitList    *widget.List
	status     *widget.Label
	content    fyne.CanvasObject

	req  cohort.Request    // the request of the answer shown
	ans  *cohort.Answer    // the answer shown (nil while one is coming)
	sets []omop.ConceptSet // its concept sets
	rows []conceptRow
	hits []omop.Hit
}

// newCohortConcepts builds the tab; it is added to the screen's tabs when
// an answer has concept sets.
func newCohortConcepts(s *CohortScreen) *cohortConcepts {
	x := &cohortConcepts{s: s}
	wrap := func(l *widget.Label) *widget.Label { l.Wrapping = fyne.TextWrapWord; return l }
	x.how = wrap(widget.NewLabel(""))
	x.unresolved = wrap(widget.NewLabel(""))
	x.definition = wrap(widget.NewLabel(""))
	x.status = wrap(widget.NewLabel("Remove a concept with its button, or search the vocabulary to add one: the question is answered again with the edited sets."))
	x.list = widget.NewList(
		func() int { return len(x.rows) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("concept")
			l.Truncation = fyne.TextTruncateEllipsis
			b := widget.NewButtonWithIcon("", theme.DeleteIcon(), nil)
			return container.NewBorder(nil, nil, nil, b, l)
		},
		func(id widget.ListItemID, o fyne.CanvasObject) {
			c := o.(*fyne.Container)
			l, b := c.Objects[0].(*widget.Label), c.Objects[1].(*widget.Button)
			text, remove := x.rowText(id)
			l.SetText(text)
			l.TextStyle = fyne.TextStyle{Bold: x.rows[id].item < 0}
			l.Refresh()
			if remove == 0 {
				b.Hide()
				return
			}
			b.OnTapped = func() { x.Remove(remove) }
			b.Show()
		},
	)
	x.search = widget.NewEntry()
	x.search.SetPlaceHolder("Search the vocabulary: a name, an abbreviation or a code")
	x.search.OnSubmitted = func(text string) { x.Search(text) }
	x.searchBtn = widget.NewButtonWithIcon("Search", theme.SearchIcon(), func() { x.Search(x.search.Text) })
	x.target = widget.NewSelect(nil, nil)
	x.target.PlaceHolder = "(concept set)"
	x.hitList = widget.NewList(
		func() int { return len(x.hits) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("concept")
			l.Truncation = fyne.TextTruncateEllipsis
			b := widget.NewButtonWithIcon("Add", theme.ContentAddIcon(), nil)
			return container.NewBorder(nil, nil, nil, b, l)
		},
		func(id widget.ListItemID, o fyne.CanvasObject) {
			c := o.(*fyne.Container)
			h := x.hits[id]
			c.Objects[0].(*widget.Label).SetText(fmt.Sprintf("%d  %s · %s · %s %s · %s persons", h.ID, h.Name, h.Domain, h.Vocabulary, h.Code,
				omop.PersonsText(h.Persons, h.PersonsUnder)))
			c.Objects[1].(*widget.Button).OnTapped = func() { x.Add(h) }
		},
	)
	searchBar := container.NewBorder(nil, nil, nil, container.NewHBox(widget.NewLabel("add to"), x.target, x.searchBtn), x.search)
	info := container.NewVBox(x.how, x.unresolved, x.definition)
	lists := container.NewVSplit(x.list, container.NewBorder(container.NewVBox(searchBar, x.status), nil, nil, nil, x.hitList))
	lists.Offset = 0.6
	x.content = container.NewBorder(info, nil, nil, nil, lists)
	x.tab = container.NewTabItem("Concept sets", x.content)
	return x
}

// asked records the request being answered (its question and history
// are asked again after an edit).
func (x *cohortConcepts) asked(req cohort.Request) {
	x.req = req
	x.ans = nil
	x.hits = nil
	x.hitList.Refresh()
}

// showSets shows the concept sets resolved while a question is answered.
func (x *cohortConcepts) showSets(sets []omop.ConceptSet) {
	x.setSets(sets)
	x.how.SetText("Concept sets found; the question is being answered…")
	x.unresolved.SetText("")
	x.definition.SetText(definitionText(sets))
	x.showTab(true)
}

// showAnswer shows the concept sets of a finished answer, or hides the
// tab when it has none (not an OMOP source, or stopped before them).
func (x *cohortConcepts) showAnswer(ans *cohort.Answer) {
	x.ans = ans
	if ans == nil || (len(ans.ConceptSets) == 0 && ans.ConceptsFrom == "") {
		x.setSets(nil)
		x.showTab(false)
		return
	}
	x.setSets(ans.ConceptSets)
	x.how.SetText(howAnswered(ans))
	x.unresolved.SetText(unresolvedText(ans.UnresolvedTerms))
	x.definition.SetText(definitionText(ans.ConceptSets))
	x.showTab(true)
}

// setSets replaces the listed sets and the choice of set to add to.
func (x *cohortConcepts) setSets(sets []omop.ConceptSet) {
	x.sets = slices.Clone(sets)
	x.rows = x.rows[:0]
	names := make([]string, 0, len(sets)+1)
	for i, s := range x.sets {
		x.rows = append(x.rows, conceptRow{set: i, item: -1})
		for j := range s.Items {
			x.rows = append(x.rows, conceptRow{set: i, item: j})
		}
		names = append(names, s.Name)
	}
	x.list.Refresh()
	names = append(names, newConceptSet)
	sel := x.target.Selected
	x.target.SetOptions(names)
	if !slices.Contains(names, sel) {
		x.target.SetSelectedIndex(0)
	}
}

// showTab adds or removes the tab.
func (x *cohortConcepts) showTab(on bool) {
	tabs := x.s.tabs
	has := slices.Contains(tabs.Items, x.tab)
	switch {
	case on && !has:
		tabs.Append(x.tab)
	case !on && has:
		tabs.Remove(x.tab)
	}
}

// rowText describes a row of the list, and the concept its Remove button
// removes (0: no button).
func (x *cohortConcepts) rowText(id int) (string, int64) {
	r := x.rows[id]
	s := x.sets[r.set]
	if r.item < 0 {
		text := fmt.Sprintf("%s · %s · %s persons", s.Name, nonEmpty(s.Domain, "no domain"), omop.PersonsText(s.Persons, s.PersonsUnder))
		if s.Descendants > 0 {
			text += fmt.Sprintf(" (%s with the concepts alone; %d descendant concepts from %s)",
				omop.PersonsText(s.PersonsDirect, s.PersonsUnder), s.Descendants, s.DescendantSource)
		}
		return text, 0
	}
	it := s.Items[r.item]
	text := fmt.Sprintf("    %d  %s · %s %s", it.ID, it.Name, it.Vocabulary, it.Code)
	switch {
	case it.Excluded:
		return "    not " + strings.TrimSpace(text) + " (removed)", 0
	case it.IncludeDescendants:
		text += " · with descendants"
	}
	if it.MappedFrom != nil {
		text += fmt.Sprintf(" · from %s %s", it.MappedFrom.Vocabulary, it.MappedFrom.Code)
	}
	return text, it.ID
}

// nonEmpty returns s, or alt when s is empty.
func nonEmpty(s, alt string) string {
	if s == "" {
		return alt
	}
	return s
}

// howAnswered says plainly where the terms came from and who wrote the
// SQL: the model, or a template without a model.
func howAnswered(ans *cohort.Answer) string {
	terms := ""
	switch ans.ConceptsFrom {
	case cohort.ConceptsFromModel:
		terms = "The model picked the clinical terms; Clinsight looked them up in the vocabulary."
	case cohort.ConceptsFromExtractor:
		terms = "Clinsight picked the clinical terms itself, without a model, and looked them up in the vocabulary."
	case cohort.ConceptsFromUser:
		terms = "These are the concept sets as you edited them."
	}
	sql := ""
	switch {
	case ans.Template != "":
		sql = fmt.Sprintf("Answered without a model: Clinsight wrote the SQL from its template %q.", ans.Template)
	case ans.Status == cohort.StatusAnswered:
		sql = "The model wrote the SQL, filtering on these concept ids."
	default:
		sql = "Not answered: " + ans.Message
	}
	return terms + " " + sql
}

// unresolvedText lists the terms no concept was found for.
func unresolvedText(terms []omop.Term) string {
	if len(terms) == 0 {
		return "Every clinical term of the question was found in the vocabulary."
	}
	names := make([]string, len(terms))
	for i, t := range terms {
		names[i] = fmt.Sprintf("%q", t.Text)
	}
	return "Not found in the vocabulary (not part of the cohort): " + strings.Join(names, ", ") + "."
}

// definitionText writes the cohort's readable definition: its entry event
// and inclusion criteria.
func definitionText(sets []omop.ConceptSet) string {
	crit := cohort.DefinitionCriteria(sets)
	if len(crit) == 0 {
		return "Cohort definition: no concept set, so no entry event."
	}
	var b strings.Builder
	b.WriteString("Cohort definition — entry event: " + crit[0].Text + ".")
	if len(crit) > 1 {
		b.WriteString(" Inclusion criteria:")
		for i, c := range crit[1:] {
			fmt.Fprintf(&b, " %d. %s.", i+1, c.Text)
		}
	}
	return b.String()
}

// idle reports whether nothing is being answered or edited, and says so
// when something is.
func (x *cohortConcepts) idle() bool {
	if x.s.cancel != nil || x.ans == nil {
		x.status.SetText("Wait for the question to be answered first.")
		return false
	}
	return true
}

// Remove removes a concept from the answer's sets (a descendant is
// excluded) and answers the question again with the edited sets.
func (x *cohortConcepts) Remove(id int64) {
	if !x.idle() {
		return
	}
	sets := x.sets
	x.edit(fmt.Sprintf("Removing concept %d…", id), func(ctx context.Context, p app.CohortSession) ([]omop.ConceptSet, error) {
		return p.ExcludeConcepts(ctx, sets, []int64{id})
	})
}

// Add adds a concept found by search to the chosen set (or to a set of its
// own) and answers the question again with the edited sets.
func (x *cohortConcepts) Add(h omop.Hit) {
	if !x.idle() {
		return
	}
	sets := slices.Clone(x.sets)
	i := slices.IndexFunc(sets, func(s omop.ConceptSet) bool { return s.Name == x.target.Selected })
	if i < 0 {
		name := strings.TrimSpace(x.search.Text)
		if name == "" {
			name = h.Name
		}
		sets = append(sets, omop.ConceptSet{Name: name, Term: omop.NewTerm(name, h.Domain)})
		i = len(sets) - 1
	}
	sets[i].Items = slices.Clone(sets[i].Items)
	x.edit(fmt.Sprintf("Adding %s to %q…", h.Name, sets[i].Name), func(ctx context.Context, p app.CohortSession) ([]omop.ConceptSet, error) {
		err := p.AddConcept(ctx, &sets[i], h.ID)
		return sets, err
	})
}

// edit computes edited sets off the UI goroutine, then asks the question
// again with them.
func (x *cohortConcepts) edit(msg string, change func(context.Context, app.CohortSession) ([]omop.ConceptSet, error)) {
	s := x.s
	req := x.req
	s.withPipeline(func(p app.CohortSession) {
		ctx, cancel := context.WithCancel(s.ctx)
		s.cancel = cancel
		s.busy(true, msg)
		x.status.SetText(msg)
		go func() {
			sets, err := change(ctx, p)
			cancel()
			fyne.Do(func() {
				s.cancel = nil
				s.busy(false, "")
				if err != nil {
					x.status.SetText("Could not edit the concept sets: " + err.Error())
					s.status.SetText(x.status.Text)
					return
				}
				x.status.SetText("Answering again with the edited concept sets…")
				s.askRequest(p, cohort.Request{Question: req.Question, History: req.History, ConceptSets: sets})
			})
		}()
	})
}

// Search looks a term up in the source's vocabulary, off the UI
// goroutine, and lists the concepts found with the persons each finds.
func (x *cohortConcepts) Search(text string) {
	text = strings.TrimSpace(text)
	if text == "" {
		x.status.SetText("Type a term or a code to search for.")
		return
	}
	x.searchBtn.Disable()
	x.status.SetText("Searching the vocabulary for " + text + "…")
	x.s.withPipeline(func(p app.CohortSession) {
		go func() {
			hits, err := p.SearchConcepts(x.s.ctx, text, "", conceptSearchLimit)
			fyne.Do(func() {
				x.searchBtn.Enable()
				if err != nil {
					x.status.SetText("Could not search the vocabulary: " + err.Error())
					return
				}
				x.hits = hits
				x.hitList.Refresh()
				if len(hits) == 0 {
					x.status.SetText(fmt.Sprintf("No standard concept found for %q.", text))
					return
				}
				x.status.SetText(fmt.Sprintf("%d concepts found for %q: Add puts one in the chosen concept set and answers again.", len(hits), text))
			})
		}()
	})
}

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
	definition *widget.Label
	table      *widget.Table
	search     *widget.Entry
	searchBtn  *widget.Button
	target     *widget.Select
	hitTable   *widget.Table
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
	x.definition = wrap(widget.NewLabel(""))
	x.status = wrap(widget.NewLabel("Remove a concept with its bin button, or search the vocabulary to add one: the question is answered again with the edited sets."))
	x.table = newConceptTable(conceptColumns, func() int { return len(x.rows) },
		func(row, col int) string { return x.cell(row, col) },
		func(row int) (fyne.Resource, func()) {
			if id := x.removable(row); id != 0 {
				return theme.DeleteIcon(), func() { x.Remove(id) }
			}
			return nil, nil
		})
	x.search = widget.NewEntry()
	x.search.SetPlaceHolder("Search the vocabulary: a name, an abbreviation or a code")
	x.search.OnSubmitted = func(text string) { x.Search(text) }
	x.searchBtn = widget.NewButtonWithIcon("Search", theme.SearchIcon(), func() { x.Search(x.search.Text) })
	x.target = widget.NewSelect(nil, nil)
	x.target.PlaceHolder = "(concept set)"
	x.hitTable = newConceptTable(hitColumns, func() int { return len(x.hits) },
		func(row, col int) string { return hitCell(x.hits[row], col) },
		func(row int) (fyne.Resource, func()) {
			h := x.hits[row]
			return theme.ContentAddIcon(), func() { x.Add(h) }
		})
	searchBar := container.NewBorder(nil, nil, nil, container.NewHBox(widget.NewLabel("add to"), x.target, x.searchBtn), x.search)
	info := container.NewVBox(x.how, x.definition)
	lists := container.NewVSplit(x.table, container.NewBorder(container.NewVBox(searchBar, x.status), nil, nil, nil, x.hitTable))
	lists.Offset = 0.5
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
	x.hitTable.Refresh()
}

// showSets shows the concept sets resolved while a question is answered.
func (x *cohortConcepts) showSets(sets []omop.ConceptSet) {
	x.setSets(sets)
	x.how.SetText("Concept sets found; the question is being answered…")
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
	x.how.SetText(howAnswered(ans) + "\n" + unresolvedText(ans.UnresolvedTerms))
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
	x.table.Refresh()
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

// The columns of the concept-set table and of the search hits; the last
// column of each holds the row's button.
var (
	conceptColumns = []tableColumn{{"Concept set / concept", 205}, {"Persons", 75}, {"Concept id", 125}, {"Vocabulary", 90}, {"Code", 90}, {"", 44}}
	hitColumns     = []tableColumn{{"Concept", 180}, {"Persons", 75}, {"Concept id", 105}, {"Domain", 80}, {"Vocabulary", 90}, {"Code", 70}, {"", 44}}
)

// cell is the text of a cell of the concept-set table: a set's row names
// it with its domain and persons, an item's row the concept.
func (x *cohortConcepts) cell(row, col int) string {
	r := x.rows[row]
	s := x.sets[r.set]
	if r.item < 0 {
		switch col {
		case 0:
			return fmt.Sprintf("%s (%s)", s.Name, nonEmpty(s.Domain, "no domain"))
		case 1:
			return omop.PersonsText(s.Persons, s.PersonsUnder)
		case 2:
			if s.Descendants > 0 {
				return fmt.Sprintf("+%d descendants", s.Descendants)
			}
		}
		return ""
	}
	it := s.Items[r.item]
	switch col {
	case 0:
		if it.Excluded {
			return "    not " + it.Name + " (removed)"
		}
		return "    " + it.Name
	case 2:
		return fmt.Sprint(it.ID)
	case 3:
		return it.Vocabulary
	case 4:
		if it.MappedFrom != nil {
			return fmt.Sprintf("%s (from %s %s)", it.Code, it.MappedFrom.Vocabulary, it.MappedFrom.Code)
		}
		return it.Code
	}
	return ""
}

// removable returns the concept a row's Remove button removes, 0 for none
// (a set's row, a concept already removed).
func (x *cohortConcepts) removable(row int) int64 {
	r := x.rows[row]
	if r.item < 0 {
		return 0
	}
	it := x.sets[r.set].Items[r.item]
	if it.Excluded {
		return 0
	}
	return it.ID
}

// hitCell is the text of a cell of the search hits.
func hitCell(h omop.Hit, col int) string {
	switch col {
	case 0:
		return h.Name
	case 1:
		return omop.PersonsText(h.Persons, h.PersonsUnder)
	case 2:
		return fmt.Sprint(h.ID)
	case 3:
		return h.Domain
	case 4:
		return h.Vocabulary
	case 5:
		return h.Code
	}
	return ""
}

// newConceptTable builds a table of text like newTextTable whose last
// column holds each row's button (button returns its icon and action;
// nil for none).
func newConceptTable(cols []tableColumn, rows func() int, cell func(row, col int) string, button func(row int) (fyne.Resource, func())) *widget.Table {
	last := len(cols) - 1
	t := widget.NewTable(
		func() (int, int) { return rows(), len(cols) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("")
			l.Truncation = fyne.TextTruncateEllipsis
			b := widget.NewButtonWithIcon("", theme.DeleteIcon(), nil)
			b.Importance = widget.LowImportance
			return container.NewStack(l, b)
		},
		func(id widget.TableCellID, o fyne.CanvasObject) {
			c := o.(*fyne.Container)
			l, b := c.Objects[0].(*widget.Label), c.Objects[1].(*widget.Button)
			if id.Row >= rows() {
				l.SetText("")
				b.Hide()
				return
			}
			if id.Col != last {
				b.Hide()
				l.Show()
				l.SetText(cell(id.Row, id.Col))
				return
			}
			l.Hide()
			icon, tap := button(id.Row)
			if icon == nil {
				b.Hide()
				return
			}
			b.SetIcon(icon)
			b.OnTapped = tap
			b.Show()
		},
	)
	setColumns(t, cols)
	return t
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
				x.hitTable.Refresh()
				if len(hits) == 0 {
					x.status.SetText(fmt.Sprintf("No standard concept found for %q.", text))
					return
				}
				x.status.SetText(fmt.Sprintf("%d concepts found for %q: + adds one to the chosen concept set and answers again.", len(hits), text))
			})
		}()
	})
}

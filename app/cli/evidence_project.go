package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
)

// The evidence steps of the command line run on a review, through the one
// review service (app.Review), so they cannot drift from the desktop app:
// without --project on a scratch review of the --db literature that is
// never saved; with --project NAME on the saved review project, whose
// PICO, query and criteria they use unless a flag overrides one (the
// override is saved in the review, with the step's result).

// literatureSource resolves --db once, at the edge, to the data source
// whose literature a scratch review reads (app.Workspace.ResolveExisting:
// the same rule as every service), adding the command line's hint to an
// unknown name.
func literatureSource(ws *app.Workspace, db string) (app.Source, error) {
	src, err := ws.ResolveExisting(db)
	var unknown *app.UnknownSourceError
	switch {
	case errors.As(err, &unknown):
		return src, fmt.Errorf("%w (see 'clinsight sources'; import literature with 'clinsight evidence import FILE --db NAME')", err)
	case errors.Is(err, app.ErrNoSource):
		return src, fmt.Errorf("%w (pass --db with a data source name or a database file)", err)
	}
	return src, err
}

// sourceRef is how a review project refers to a resolved source: its name
// when it is registered, else its database file's absolute path (what
// Workspace.Resolve turns back into the same Source).
func sourceRef(src app.Source) string { return src.Label() }

// Where an input of a step on a saved review came from.
const (
	fromReview = "review" // saved in the review project
	fromModel  = "model"  // written by the chat model in this run
)

// projectRun is a step run on a saved review project (--project).
type projectRun struct {
	r app.Reviewer
	// inputs says where each input (pico, query, criteria) came from:
	// fromReview, a flag ("--query"), or fromModel.
	inputs map[string]string
	// undo restores the inputs the flags overrode, in reverse order;
	// ran reports that a step of this run has changed the review.
	undo []func(p *evidence.Project)
	ran  bool
}

// stepDone records that a step of the run changed the review: the
// overrides stay, whatever happens next.
func (pr *projectRun) stepDone() {
	if pr != nil {
		pr.ran = true
	}
}

// stepFailed restores the inputs the flags overrode when the run's first
// step failed, so that a run that changed nothing leaves the review as it
// was; it returns err.
func (pr *projectRun) stepFailed(err error) error {
	if pr == nil || pr.ran || len(pr.undo) == 0 {
		return err
	}
	undo := pr.undo
	pr.undo = nil
	pr.r.Update(func(p *evidence.Project) {
		for i := len(undo) - 1; i >= 0; i-- {
			undo[i](p)
		}
	})
	return err
}

// openProjectRun opens the saved review project named name for a step;
// db, when given, must name the review's own literature (a review keeps
// its source: the step does not move it). Close the review when done
// (closeReview), which saves it.
func openProjectRun(f *Factory, ws *app.Workspace, name, db string, opts app.ReviewOptions) (*projectRun, error) {
	r, err := openSavedReviewWith(f, name, opts)
	if err != nil {
		return nil, err
	}
	if strings.TrimSpace(db) != "" {
		if err := sameLiterature(ws, r.Project(), db); err != nil {
			_ = r.Close()
			return nil, err
		}
	}
	return &projectRun{r: r, inputs: map[string]string{}}, nil
}

// openSavedReviewWith opens the saved review project named name with the
// given options; an unknown name lists the saved reviews.
func openSavedReviewWith(f *Factory, name string, opts app.ReviewOptions) (app.Reviewer, error) {
	if strings.TrimSpace(name) == "" {
		return nil, errors.New("name the saved review project with --project NAME")
	}
	ws, err := f.Workspace()
	if err != nil {
		return nil, err
	}
	r, err := ws.Reviews().OpenWith(name, opts)
	if err != nil {
		names, _ := ws.Reviews().Projects()
		if len(names) > 0 {
			return nil, fmt.Errorf("%w (saved reviews: %s)", err, strings.Join(names, ", "))
		}
		return nil, err
	}
	return r, nil
}

// sameLiterature checks that db names the review's literature source.
func sameLiterature(ws *app.Workspace, p *evidence.Project, db string) error {
	given, err := literatureSource(ws, db)
	if err != nil {
		return err
	}
	own, err := ws.Resolve(p.Source)
	if err != nil || !sameSource(own, given) {
		return fmt.Errorf("review %s searches the literature of %s, not %s: leave --db out to use the review's source (a saved review keeps its source)", p.Name, p.Source, db)
	}
	return nil
}

// sameSource reports whether two resolved sources are the same one.
func sameSource(a, b app.Source) bool {
	if a.Name != "" || b.Name != "" {
		return strings.EqualFold(a.Name, b.Name)
	}
	return a.Path == b.Path
}

// setPICO overrides the review's PICO with the one given by flag.
func (pr *projectRun) setPICO(q evidence.PICO, flag string) {
	old := pr.r.Project().PICO
	pr.undo = append(pr.undo, func(p *evidence.Project) { p.PICO = old })
	pr.r.Update(func(p *evidence.Project) { p.PICO = q })
	pr.inputs["pico"] = flag
}

// setQuery overrides the review's query with the one given by flag.
func (pr *projectRun) setQuery(q, flag string) {
	old := pr.r.Project().Query
	pr.undo = append(pr.undo, func(p *evidence.Project) { p.Query = old })
	pr.r.Update(func(p *evidence.Project) { p.Query = q })
	pr.inputs["query"] = flag
}

// setCriteria overrides the review's criteria with those given by flag.
func (pr *projectRun) setCriteria(c []evidence.Criterion, flag string) {
	old := slices.Clone(pr.r.Project().Criteria)
	pr.undo = append(pr.undo, func(p *evidence.Project) { p.Criteria = old })
	pr.r.Update(func(p *evidence.Project) { p.Criteria = c })
	pr.inputs["criteria"] = flag
}

// from records that the inputs not overridden came from the review.
func (pr *projectRun) from(inputs ...string) {
	for _, in := range inputs {
		if _, ok := pr.inputs[in]; !ok {
			pr.inputs[in] = fromReview
		}
	}
}

// projectJSON says, in --json output, on which saved review a step ran and
// where its inputs came from.
type projectJSON struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	// Inputs maps pico, query and criteria to "review" (saved in it), the
	// flag that overrode it, or "model" (written by the chat model).
	Inputs map[string]string `json:"inputs"`
	// Searched reports whether this run searched (else the step used the
	// review's saved candidates); Candidates is how many the review has.
	Searched   bool `json:"searched"`
	Candidates int  `json:"candidates"`
}

// json describes the run for --json output.
func (pr *projectRun) json(searched bool) *projectJSON {
	p := pr.r.Project()
	n := 0
	if p.Search != nil {
		n = len(p.Search.IDs)
	}
	return &projectJSON{Name: p.Name, Source: p.Source, Inputs: pr.inputs, Searched: searched, Candidates: n}
}

// note says, for the text output, where the inputs came from and that
// the result is saved in the review.
func (pj *projectJSON) note() string {
	groups := map[string][]string{}
	var order []string
	for _, in := range []string{"pico", "query", "criteria"} {
		from, ok := pj.Inputs[in]
		if !ok {
			continue
		}
		if _, seen := groups[from]; !seen {
			order = append(order, from)
		}
		name := in
		if in == "pico" {
			name = "PICO"
		}
		groups[from] = append(groups[from], name)
	}
	var parts []string
	for _, from := range order {
		what := andList(groups[from])
		switch from {
		case fromReview:
			parts = append(parts, what+" from the review")
		case fromModel:
			parts = append(parts, what+" written by the model")
		default:
			parts = append(parts, what+" from "+from)
		}
	}
	step := "the screening"
	if !pj.Searched {
		step = "the screening of its saved candidates"
	}
	if _, screened := pj.Inputs["criteria"]; !screened {
		step = "the search"
	} else if pj.Searched {
		step = "the search and the screening"
	}
	return fmt.Sprintf("Saved in review %q (%d candidates; %s): %s.", pj.Name, pj.Candidates, step, strings.Join(parts, "; "))
}

// andList joins words as a sentence does: "a", "a and b", "a, b and c".
func andList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " and " + words[len(words)-1]
}

// candidateList names some of a review's candidates for an error message:
// the first n, and how many there are.
func candidateList(p *evidence.Project, n int) string {
	ids := p.Candidates()
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s, … (%d in all)", strings.Join(slices.Clip(ids[:n]), ", "), len(ids))
}

package cli

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/app/meta"
)

// extractOnProject are the flags of "evidence extract --project".
type extractOnProject struct {
	project, db, idsFile, fieldsPath, resultPath, measure string
	ids                                                   []string
	outcome, concurrency                                  int
	outcomeGiven, asJSON, meta                            bool
}

// extractProjectJSON says, in --json output, on which saved review
// "evidence extract --project" ran and where its inputs came from.
type extractProjectJSON struct {
	Name   string `json:"name"`
	Source string `json:"source"`
	// Outcome is the outcome's number (from 1) and OutcomeName its name.
	Outcome     int    `json:"outcome"`
	OutcomeName string `json:"outcome_name"`
	// Inputs maps fields and result to "review" (saved in it) or the
	// flag that replaced it (the replacement is saved).
	Inputs map[string]string `json:"inputs"`
	// Included is the number of included studies of the review.
	Included int `json:"included"`
}

// note says, for the text output, that the extraction is saved in the
// review and where its inputs came from.
func (pj *extractProjectJSON) note() string {
	var parts []string
	for _, in := range []string{"fields", "result"} {
		from, ok := pj.Inputs[in]
		if !ok {
			continue
		}
		what := "the fields"
		if in == "result" {
			what = "the result spec"
		}
		if from == fromReview {
			parts = append(parts, what+" from the review")
		} else {
			parts = append(parts, what+" from "+from+" (saved in the review)")
		}
	}
	return fmt.Sprintf("Saved in review %q (outcome %d %q, %d included studies): %s.", pj.Name, pj.Outcome, pj.OutcomeName, pj.Included, strings.Join(parts, "; "))
}

// runExtractOnProject extracts the fields and the outcome's result of a
// saved review's included studies through the review service, which
// saves them.
func runExtractOnProject(cmd *cobra.Command, f *Factory, o extractOnProject) (err error) {
	ctx := cmd.Context()
	if o.concurrency < 1 {
		return fmt.Errorf("--concurrency must be at least 1, not %d", o.concurrency)
	}
	if o.fieldsPath != "" && o.resultPath != "" {
		return errors.New("give --fields FILE.json or --result FILE.json, not both (leave both out to extract the review's fields and its outcome's result)")
	}
	if o.meta && o.fieldsPath != "" {
		return errors.New("--meta pools a result: use it with --result, or leave --fields out")
	}
	var ids []string
	if len(o.ids) > 0 || o.idsFile != "" {
		if ids, err = readExtractIDs(o.ids, o.idsFile); err != nil {
			return err
		}
	}
	var fields []evidence.FieldSpec
	var spec *evidence.ResultSpec
	if o.fieldsPath != "" {
		if fields, err = readFieldsFile(o.fieldsPath); err != nil {
			return err
		}
	}
	if o.resultPath != "" {
		s, err := readResultFile(o.resultPath)
		if err != nil {
			return err
		}
		spec = &s
	}
	ws, err := f.Workspace()
	if err != nil {
		return err
	}
	out := extractJSON{Studies: []extractStudyJSON{}}
	if out.Model, _, err = chatModel(ws, ""); err != nil {
		return err
	}
	pr, err := openProjectRun(f, ws, o.project, o.db, app.ReviewOptions{Concurrency: o.concurrency})
	if err != nil {
		return err
	}
	defer closeReview(pr.r, &err)
	rv, ok := pr.r.(*app.Review)
	if !ok {
		return fmt.Errorf("review %s cannot extract named studies", o.project)
	}
	p := rv.Project()
	i, err := outcomeFlag(p, o.outcome, o.outcomeGiven)
	if err != nil {
		return err
	}
	included := p.Included()
	if len(included) == 0 {
		return fmt.Errorf("review %s has no included study yet: screen it first (clinsight evidence screen --project %s, evidence decide)", p.Name, shellQuote(p.Name))
	}
	if missing := notIn(ids, included); len(missing) > 0 {
		return fmt.Errorf("%s not included in review %s; its included studies are: %s", strings.Join(missing, ", "), p.Name, listFirst(included, 20))
	}
	if ids == nil {
		ids = included
	}

	// What to extract: what a flag gives, else what the review defines.
	withFields := fields != nil || (spec == nil && !o.meta && len(p.Fields) > 0)
	withResult := spec != nil || (fields == nil && p.OutcomeAt(i).Result.Validate() == nil)
	if !withFields && !withResult {
		return fmt.Errorf("review %s has no fields and outcome %d %q has no result spec to extract: give --fields FILE.json or --result FILE.json", p.Name, i+1, p.OutcomeAt(i).Name())
	}
	if o.meta && !withResult {
		return fmt.Errorf("--meta pools a result: outcome %d %q of review %s has no result spec; give --result FILE.json", i+1, p.OutcomeAt(i).Name(), p.Name)
	}
	var metaMeasure meta.Measure
	if o.meta && o.measure != "" {
		s := p.OutcomeAt(i).Result
		if spec != nil {
			s = *spec
		}
		if metaMeasure, err = extractMetaMeasure(s, o.measure); err != nil {
			return err
		}
	}
	if fields != nil {
		pr.setFields(fields, "--fields")
	}
	if spec != nil {
		pr.setResult(i, *spec, "--result")
	}
	if withFields {
		pr.from("fields")
		out.Fields = rv.Project().Fields
	}
	if withResult {
		pr.from("result")
		s := rv.Project().OutcomeAt(i).Result
		out.Result = &s
	}

	pp, report := studiesProgress(f.Err, o.asJSON, "extracting")
	var failed *evidence.StudyErrors
	runStep := func(step func() error) error {
		err := step()
		var studyErrs *evidence.StudyErrors
		switch {
		case err == nil:
			pr.stepDone()
		case errors.As(err, &studyErrs):
			pr.stepDone()
			if failed == nil {
				failed = &evidence.StudyErrors{Errs: map[string]error{}}
			}
			for id, e := range studyErrs.Errs {
				if failed.Errs[id] == nil {
					failed.Errs[id] = e
				}
			}
		default:
			return pr.stepFailed(fmt.Errorf("extraction stopped: %w", err))
		}
		return nil
	}
	if withFields {
		err = runStep(func() error { return rv.ExtractFieldsOf(ctx, ids, report) })
	}
	if err == nil && withResult {
		err = runStep(func() error { return rv.ExtractResultsOf(ctx, i, ids, report) })
	}
	pp.Done()
	if err != nil {
		return err
	}
	if metaMeasure != "" {
		rv.Update(func(p *evidence.Project) { p.OutcomeAt(i).Meta.Measure = string(metaMeasure) })
	}
	out.Studies = extractedStudies(rv, ids, i, withFields, withResult, failed)
	var metaNote string
	if o.meta {
		if rows, _ := rv.Project().StandardTableFor(i); len(rows) == 0 {
			metaNote = "no study has a complete row: nothing to pool"
		} else if res, err := rv.Analyze(i); err != nil {
			metaNote = "the meta-analysis failed: " + meta.ErrorMessage(err)
		} else {
			out.Meta = &res
		}
	}
	p = rv.Project()
	out.Project = &extractProjectJSON{Name: p.Name, Source: p.Source, Outcome: i + 1, OutcomeName: p.OutcomeAt(i).Name(),
		Inputs: pr.inputs, Included: len(p.Included())}
	return finishExtraction(f, out, metaNote, o.asJSON)
}

// setFields replaces the review's fields with those given by flag.
func (pr *projectRun) setFields(fields []evidence.FieldSpec, flag string) {
	old := slices.Clone(pr.r.Project().Fields)
	pr.undo = append(pr.undo, func(p *evidence.Project) { p.Fields = old })
	pr.r.Update(func(p *evidence.Project) { p.Fields = fields })
	pr.inputs["fields"] = flag
}

// setResult replaces outcome i's result spec with the one given by flag.
func (pr *projectRun) setResult(i int, spec evidence.ResultSpec, flag string) {
	old := pr.r.Project().OutcomeAt(i).Result
	pr.undo = append(pr.undo, func(p *evidence.Project) { p.OutcomeAt(i).Result = old })
	pr.r.Update(func(p *evidence.Project) { p.OutcomeAt(i).Result = spec })
	pr.inputs["result"] = flag
}

// notIn returns the ids that are not in set, in order.
func notIn(ids, set []string) []string {
	var out []string
	for _, id := range ids {
		if !slices.Contains(set, id) {
			out = append(out, id)
		}
	}
	return out
}

// listFirst names the first n ids, and how many there are.
func listFirst(ids []string, n int) string {
	if len(ids) <= n {
		return strings.Join(ids, ", ")
	}
	return fmt.Sprintf("%s, … (%d in all)", strings.Join(ids[:n], ", "), len(ids))
}

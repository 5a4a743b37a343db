package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
)

// screenStudyJSON is one study in "evidence screen --json".
type screenStudyJSON struct {
	Rank     int                `json:"rank"`
	ID       string             `json:"id"`
	PMID     string             `json:"pmid,omitempty"`
	Title    string             `json:"title"`
	Score    *float64           `json:"score,omitempty"`
	Verdicts []evidence.Verdict `json:"verdicts,omitempty"`
	Error    string             `json:"error,omitempty"`
}

// screenJSON is the --json shape of "evidence screen".
type screenJSON struct {
	Query    string               `json:"query"`
	Total    int64                `json:"total"`
	Model    string               `json:"model"`
	Criteria []evidence.Criterion `json:"criteria"`
	Studies  []screenStudyJSON    `json:"studies"`
	// Project is the saved review screened (--project), nil for none.
	Project *projectJSON `json:"project,omitempty"`
}

func newEvidenceScreenCmd(f *Factory) *cobra.Command {
	var (
		db, project, picoPath, query, criteriaPath string
		limit, concurrency                         int
		asJSON                                     bool
	)
	cmd := &cobra.Command{
		Use:   "screen (--db DB --pico FILE.json --query \"...\" | --project NAME) [--criteria FILE.json] [--limit N] [--concurrency 4] [--json]",
		Short: "Screen the studies a boolean search finds against eligibility criteria with the chat model",
		Long: `Runs the boolean query over the corpus and keeps the best --limit studies as
"evidence search --pico" shows them (duplicates removed, ranked by
relevance to the PICO), then asks the workspace's chat model (Settings, models.chat) for one verdict per
eligibility criterion and study: YES, NO or UNCERTAIN (the text does not say).
A reply with the wrong number of verdicts is asked again once, then reported
as that study's error; the other studies are kept. At most --concurrency
calls run at once.

Studies are ranked by their score: the weighted mean of YES = 1,
UNCERTAIN = 0, NO = -1 over the enabled criteria, in [-1, 1].

The criteria file is a JSON list of texts or of objects {"text", "kind"
(title|content), "weight" (default 1), "disabled"}. Without --criteria the
model writes the criteria from the PICO (shown, to be edited and given back
with --criteria).

With --project NAME the screening runs on a saved review project: its PICO,
query, candidates and criteria are used unless --pico, --query or
--criteria override them (the output says which; the model writes criteria
only when the review has none). The review's saved candidates are screened
as they are, unless it has not searched yet or --query, --pico or --limit
is given, which search again first. Only what is missing is screened
(candidates not screened yet or that failed; every one when the criteria's
texts changed), and the screening is saved in the review.`,
		Example: `  clinsight evidence screen --db literature.sqlite --pico pico.json --query '(microwave OR radiofrequency) AND ablation' --limit 50
  clinsight evidence screen --db literature.sqlite --pico pico.json --query 'ablation AND liver' --criteria criteria.json --json
  clinsight evidence screen --project "MWA vs RFA"`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) (err error) {
			ctx := cmd.Context()
			if concurrency < 1 {
				return fmt.Errorf("--concurrency must be at least 1, not %d", concurrency)
			}
			if project == "" {
				switch {
				case strings.TrimSpace(query) == "":
					return errors.New("give the boolean query of the studies to screen with --query")
				case strings.TrimSpace(db) == "":
					return errors.New(nameLiteratureOrProject)
				case picoPath == "":
					return errors.New("give the review question with --pico FILE.json, or screen a saved review with --project NAME")
				}
			}
			pico, err := readPICOFlag(picoPath)
			if err != nil {
				return err
			}
			var criteria []evidence.Criterion
			if criteriaPath != "" {
				b, err := os.ReadFile(criteriaPath)
				if err != nil {
					return fmt.Errorf("reading the criteria: %w", err)
				}
				if criteria, err = evidence.ParseCriteria(b); err != nil {
					return fmt.Errorf("%s: %w", criteriaPath, err)
				}
			}
			if strings.TrimSpace(query) != "" {
				if err := checkQuery(f, query, asJSON); err != nil {
					return err
				}
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			model, _, err := chatModel(ws, "")
			if err != nil {
				return err
			}
			var r app.Reviewer
			var run *projectRun
			search := true
			if project != "" {
				if run, err = openProjectRun(f, ws, project, db, app.ReviewOptions{Concurrency: concurrency}); err != nil {
					return err
				}
				defer closeReview(run.r, &err)
				r = run.r
				if pico != nil {
					run.setPICO(*pico, "--pico")
				}
				if strings.TrimSpace(query) != "" {
					run.setQuery(query, "--query")
				}
				if criteria != nil {
					run.setCriteria(criteria, "--criteria")
				}
				run.from("pico", "query")
				p := r.Project()
				// The saved candidates are screened unless the search's
				// inputs changed, or the review has not searched yet.
				search = p.Search == nil || pico != nil || strings.TrimSpace(query) != "" || cmd.Flags().Changed("limit")
				if search && strings.TrimSpace(p.Query) == "" {
					return fmt.Errorf("review %s has no search query yet: give one with --query", project)
				}
				if !cmd.Flags().Changed("limit") {
					limit = 0 // as many candidates as the desktop app keeps
				}
				if len(p.Criteria) > 0 {
					criteria = p.Criteria
					run.from("criteria")
				}
			} else {
				src, err := literatureSource(ws, db)
				if err != nil {
					return err
				}
				p := evidence.NewProject("screen", sourceRef(src), *pico)
				p.Query, p.Criteria = query, criteria
				r = ws.Reviews().Scratch(p, app.ReviewOptions{Concurrency: concurrency})
			}
			var searched string
			var total int64
			if search {
				res, err := r.Search(ctx, limit)
				if err != nil {
					return corpusHint(run.stepFailed(err), r.Project().Source)
				}
				run.stepDone()
				searched, total = res.Query, res.Total
			} else {
				searched, total = r.Project().Search.Query, r.Project().Search.Total
			}
			if criteria == nil {
				if err := r.SuggestCriteria(ctx); err != nil {
					return run.stepFailed(err)
				}
				run.stepDone()
				if run != nil {
					run.inputs["criteria"] = fromModel
				}
			}
			pp, report := studiesProgress(f.Err, asJSON, "screening")
			err = r.Screen(ctx, report)
			pp.Done()
			var studyErrs *evidence.StudyErrors
			if err != nil && !errors.As(err, &studyErrs) {
				return run.stepFailed(err)
			}
			p := r.Project()
			out := screenJSON{Query: searched, Total: total, Model: model, Criteria: p.Criteria, Studies: []screenStudyJSON{}}
			for _, st := range p.Screening {
				if !p.IsCandidate(st.ID) {
					continue // screened for an earlier search of the review
				}
				sj := screenStudyJSON{Rank: len(out.Studies) + 1, ID: st.ID, PMID: p.Studies[st.ID].PMID, Title: st.Title, Verdicts: st.Verdicts, Error: st.Error}
				if st.Error == "" {
					score := st.Score
					sj.Score = &score
				}
				out.Studies = append(out.Studies, sj)
			}
			if run != nil {
				out.Project = run.json(search)
			}
			if err := printScreening(f, out, asJSON); err != nil {
				return err
			}
			if studyErrs != nil {
				return fmt.Errorf("%d of %d studies could not be screened (see their errors above)", len(studyErrs.IDs), studyErrs.Total)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database file or data source name holding the corpus (with --project: the review's own source)")
	cmd.Flags().StringVar(&project, "project", "", "screen the saved review project NAME: its PICO, query, candidates and criteria unless flags override them; the screening is saved in it")
	cmd.Flags().StringVar(&picoPath, "pico", "", "PICO JSON file ({\"P\":...,\"I\":...,\"C\":...,\"O\":...})")
	cmd.Flags().StringVar(&query, "query", "", "PubMed-style boolean query selecting the studies to screen")
	cmd.Flags().StringVar(&criteriaPath, "criteria", "", "eligibility criteria JSON file (default: written by the model from the PICO)")
	cmd.Flags().IntVar(&limit, "limit", 20, "screen at most this many of the best matches (0 = every match, at most 100,000; with --project: candidates kept, default as in the desktop app)")
	cmd.Flags().IntVar(&concurrency, "concurrency", 4, "model calls in flight at most")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the criteria and the studies with their score and verdicts as JSON")
	return cmd
}

// printScreening prints the screening as JSON or as the criteria and a
// table of the studies, best first.
func printScreening(f *Factory, out screenJSON, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(f.Out)
		enc.SetEscapeHTML(false)
		return enc.Encode(out)
	}
	fmt.Fprintf(f.Out, "%s\n%d records match; %d screened by %s\n\nCriteria (weight):\n", out.Query, out.Total, len(out.Studies), out.Model)
	for i, c := range out.Criteria {
		off := ""
		if c.Disabled {
			off = ", off"
		}
		kind := ""
		if c.Kind != "" {
			kind = c.Kind + ", "
		}
		fmt.Fprintf(f.Out, "  C%d. %s (%s%g%s)\n", i+1, c.Text, kind, c.Weight, off)
	}
	fmt.Fprintln(f.Out)
	tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tPMID\tScore\tVerdicts\tTitle")
	for _, s := range out.Studies {
		id := s.PMID
		if id == "" {
			id = s.ID
		}
		score, verdicts := "-", "error: "+s.Error
		if s.Score != nil {
			score = fmt.Sprintf("%+.2f", *s.Score)
			parts := make([]string, len(s.Verdicts))
			for i, v := range s.Verdicts {
				parts[i] = fmt.Sprintf("C%d=%s", i+1, v)
			}
			verdicts = strings.Join(parts, " ")
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\n", s.Rank, id, score, verdicts, clipTitle(s.Title, 80))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if out.Project != nil {
		_, err := fmt.Fprintln(f.Out, out.Project.note())
		return err
	}
	return nil
}

package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
)

// The commands on a saved review project (--project NAME, as the desktop
// app saved it): its reviewers and their agreement, the exchange of a
// reviewer's decisions as a file, the conflicts and the PRISMA counts of
// both screening stages (issue 17 items 4 and 5). Each opens the review
// through the review service, as the desktop app does, and saves it when
// it changed.

// newEvidenceTeamCmds returns the commands on saved reviews.
func newEvidenceTeamCmds(f *Factory) []*cobra.Command {
	return []*cobra.Command{newEvidenceReviewersCmd(f), newEvidenceDecisionsCmd(f), newEvidenceConflictsCmd(f), newEvidencePRISMACmd(f)}
}

// withSavedReview opens the saved review project named name, runs do on it
// and then saves and closes it (closeReview), returning do's error and
// the error of saving. Every --project command that works on one saved
// review goes through it.
func withSavedReview(f *Factory, name string, do func(r app.Reviewer) error) (err error) {
	r, err := openSavedReviewWith(f, name, app.ReviewOptions{}) // evidence_project.go
	if err != nil {
		return err
	}
	defer closeReview(r, &err)
	return do(r)
}

// closeReview saves and closes a review; a failed save is reported beside
// the command's own error, not hidden by it (a step that failed for some
// studies kept the others' work, which the save then did not write).
func closeReview(r app.Reviewer, err *error) {
	if cerr := r.Close(); cerr != nil {
		*err = errors.Join(*err, fmt.Errorf("saving the review: %w", cerr))
	}
}

// stageAgreementJSON is a stage's agreement in --json output.
type stageAgreementJSON struct {
	Stage         evidence.Stage `json:"stage"`
	Records       int            `json:"records"`
	BothInclude   int            `json:"both_include"`
	BothExclude   int            `json:"both_exclude"`
	OnlyFirst     int            `json:"only_first"`
	OnlySecond    int            `json:"only_second"`
	Raw           *float64       `json:"raw_agreement,omitempty"`
	Kappa         *float64       `json:"kappa,omitempty"`
	Conflicts     int            `json:"conflicts"`
	OpenConflicts int            `json:"open_conflicts"`
}

// reviewersJSON is the --json shape of "evidence reviewers".
type reviewersJSON struct {
	Project   string               `json:"project"`
	Reviewers []reviewerJSON       `json:"reviewers"`
	Agreement []stageAgreementJSON `json:"agreement"`
}

type reviewerJSON struct {
	Name          string `json:"name"`
	TitleAbstract int    `json:"title_abstract_decisions"`
	FullText      int    `json:"full_text_decisions"`
}

func newEvidenceReviewersCmd(f *Factory) *cobra.Command {
	var project string
	var add, remove []string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "reviewers --project NAME [--add NAME]... [--remove NAME]... [--json]",
		Short: "Name a saved review's reviewers and show their agreement (raw and Cohen's kappa per stage)",
		Long: `Two reviewers may screen a review independently, each blind to the other's
decisions until both have decided a record. The first reviewer named takes
over the decisions made so far. Records they decide differently are
conflicts, resolved with "clinsight evidence conflicts" or in the desktop
app. Shows each reviewer's decisions per stage and, for two, the 2×2 table,
the raw agreement and Cohen's kappa of each stage.`,
		Example: `  clinsight evidence reviewers --project "MWA vs RFA" --add Ana --add Ben
  clinsight evidence reviewers --project "MWA vs RFA" --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withSavedReview(f, project, func(r app.Reviewer) error {
				for _, n := range add {
					if err := r.AddReviewer(n); err != nil {
						return err
					}
				}
				for _, n := range remove {
					if err := r.RemoveReviewer(n); err != nil {
						return err
					}
				}
				p := r.Project()
				out := reviewersJSON{Project: p.Name, Reviewers: []reviewerJSON{}, Agreement: []stageAgreementJSON{}}
				for _, rv := range p.Reviewers {
					out.Reviewers = append(out.Reviewers, reviewerJSON{Name: rv.Name, TitleAbstract: len(rv.Decisions), FullText: len(rv.FullText)})
				}
				for _, st := range evidence.Stages {
					ag, err := p.Agreement(st)
					if err != nil {
						break
					}
					aj := stageAgreementJSON{Stage: st, Records: ag.Records, BothInclude: ag.BothInclude, BothExclude: ag.BothExclude,
						OnlyFirst: ag.OnlyFirst, OnlySecond: ag.OnlySecond, Conflicts: len(p.Conflicts(st)), OpenConflicts: p.OpenConflicts(st)}
					if ag.Records > 0 {
						aj.Raw, aj.Kappa = &ag.Raw, &ag.Kappa
					}
					out.Agreement = append(out.Agreement, aj)
				}
				if asJSON {
					enc := json.NewEncoder(f.Out)
					enc.SetEscapeHTML(false)
					return enc.Encode(out)
				}
				if len(out.Reviewers) == 0 {
					_, err := fmt.Fprintf(f.Out, "%s has no named reviewers: one reviewer screens it (name two with --add NAME).\n", p.Name)
					return err
				}
				tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
				fmt.Fprintln(tw, "Reviewer\tTitle/abstract decisions\tFull-text decisions")
				for _, rv := range out.Reviewers {
					fmt.Fprintf(tw, "%s\t%d\t%d\n", rv.Name, rv.TitleAbstract, rv.FullText)
				}
				if err := tw.Flush(); err != nil {
					return err
				}
				for _, a := range out.Agreement {
					if a.Records == 0 {
						fmt.Fprintf(f.Out, "%s: no record decided by both yet\n", a.Stage.Label())
						continue
					}
					fmt.Fprintf(f.Out, "%s: %d records decided by both (both include %d, both exclude %d, only %s includes %d, only %s includes %d); raw agreement %.3f, Cohen's kappa %.3f; %d conflicts, %d open\n",
						a.Stage.Label(), a.Records, a.BothInclude, a.BothExclude, p.Reviewers[0].Name, a.OnlyFirst, p.Reviewers[1].Name, a.OnlySecond, *a.Raw, *a.Kappa, a.Conflicts, a.OpenConflicts)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "the saved review project (as named in the desktop app)")
	cmd.Flags().StringArrayVar(&add, "add", nil, "name a reviewer (at most two)")
	cmd.Flags().StringArrayVar(&remove, "remove", nil, "remove a reviewer who has made no decision")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the reviewers and the agreement per stage as JSON")
	_ = cmd.MarkFlagRequired("project")
	return cmd
}

func newEvidenceDecisionsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "decisions",
		Short: "Exchange a reviewer's screening decisions with the other reviewer as a file",
		Long: `Two reviewers who screen a review on their own computers exchange their
decisions as small JSON files: each exports their own decisions (only theirs,
so screening stays blind), the other imports them. Decisions are merged by
record ID and stage; a newer decision replaces the reviewer's older one, and
the records the reviewers decided differently are listed as conflicts.`,
	}
	var project, reviewer, out string
	export := &cobra.Command{
		Use:     "export --project NAME --reviewer NAME --out FILE.json",
		Short:   "Write a reviewer's own decisions on a saved review to a file",
		Example: `  clinsight evidence decisions export --project "MWA vs RFA" --reviewer Ana --out ana.json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withSavedReview(f, project, func(r app.Reviewer) error {
				if err := r.ExportDecisions(out, reviewer); err != nil {
					if r.Project().HasReviewers() {
						return err
					}
					return fmt.Errorf("%w (clinsight evidence reviewers --project %q --add NAME)", err, project)
				}
				n := 0
				if d, err := r.Project().ExportDecisions(reviewer); err == nil {
					n = len(d.Decisions)
				}
				_, err := fmt.Fprintf(f.Out, "wrote %d decisions of %s to %s\n", n, reviewer, out)
				return err
			})
		},
	}
	export.Flags().StringVar(&project, "project", "", "the saved review project")
	export.Flags().StringVar(&reviewer, "reviewer", "", "the reviewer whose decisions are written")
	export.Flags().StringVar(&out, "out", "", "the file to write (JSON)")
	for _, fl := range []string{"project", "reviewer", "out"} {
		_ = export.MarkFlagRequired(fl)
	}

	var importProject string
	var asJSON bool
	imp := &cobra.Command{
		Use:     "import FILE.json --project NAME [--json]",
		Short:   "Merge the other reviewer's decisions file into a saved review",
		Example: `  clinsight evidence decisions import ben.json --project "MWA vs RFA"`,
		Args:    cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return withSavedReview(f, importProject, func(r app.Reviewer) error {
				rep, err := r.ImportDecisions(args[0])
				if err != nil {
					if !r.Project().HasReviewers() && r.Project().Decisions != nil && len(r.Project().Decisions) > 0 {
						return fmt.Errorf("%w (clinsight evidence reviewers --project %q --add YOUR-NAME)", err, importProject)
					}
					return err
				}
				if asJSON {
					enc := json.NewEncoder(f.Out)
					enc.SetEscapeHTML(false)
					return enc.Encode(rep)
				}
				_, err = fmt.Fprintln(f.Out, rep.Summary())
				return err
			})
		},
	}
	imp.Flags().StringVar(&importProject, "project", "", "the saved review project")
	imp.Flags().BoolVar(&asJSON, "json", false, "print what the merge did as JSON")
	_ = imp.MarkFlagRequired("project")
	cmd.AddCommand(export, imp)
	return cmd
}

// conflictJSON is one conflict in "evidence conflicts --json".
type conflictJSON struct {
	Stage      evidence.Stage       `json:"stage"`
	ID         string               `json:"id"`
	Study      string               `json:"study"`
	Decisions  map[string]string    `json:"decisions"`
	Resolution *evidence.Resolution `json:"resolution,omitempty"`
}

func newEvidenceConflictsCmd(f *Factory) *cobra.Command {
	var project, stageName, id, exclude, note, by string
	var include, asJSON bool
	cmd := &cobra.Command{
		Use:   "conflicts --project NAME [--json] | --project NAME --id ID (--include | --exclude REASON) --note TEXT [--stage full-text] [--by NAME]",
		Short: "List the records the reviewers decided differently, or resolve one",
		Long: `Lists the conflicts of both screening stages with each reviewer's decision and
the resolution, when resolved. With --id, resolves that record's conflict:
the review goes on with --include or --exclude REASON, and --note says how
the conflict was resolved (discussed, a third reviewer decided, ...).`,
		Example: `  clinsight evidence conflicts --project "MWA vs RFA"
  clinsight evidence conflicts --project "MWA vs RFA" --id pmid:123 --exclude "Wrong population" --note "discussed" --by Cy`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withSavedReview(f, project, func(r app.Reviewer) error {
				if id != "" {
					stage, err := evidence.ParseStage(stageName)
					if err != nil {
						return err
					}
					if include == (exclude != "") {
						return errors.New("resolve with --include or with --exclude REASON")
					}
					if err := r.Resolve(stage, id, include, exclude, note, by); err != nil {
						return err
					}
				}
				p := r.Project()
				names := p.ReviewerNames()
				var list []conflictJSON
				for _, st := range evidence.Stages {
					for _, c := range p.Conflicts(st) {
						cj := conflictJSON{Stage: st, ID: c.ID, Study: p.Label(c.ID), Decisions: map[string]string{}, Resolution: c.Resolution}
						for i, d := range c.Decisions {
							cj.Decisions[names[i]] = decisionWord(d)
						}
						list = append(list, cj)
					}
				}
				if asJSON {
					if list == nil {
						list = []conflictJSON{}
					}
					enc := json.NewEncoder(f.Out)
					enc.SetEscapeHTML(false)
					return enc.Encode(list)
				}
				if len(list) == 0 {
					_, err := fmt.Fprintln(f.Out, "no conflicts: the reviewers have not decided any record differently")
					return err
				}
				tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
				fmt.Fprintf(tw, "Stage\tRecord\tStudy\t%s\tStatus\n", strings.Join(names, "\t"))
				for _, c := range list {
					var ds []string
					for _, n := range names {
						ds = append(ds, c.Decisions[n])
					}
					status := "open"
					if c.Resolution != nil {
						status = "resolved: " + decisionWord(c.Resolution.Decision) + " (" + c.Resolution.Note + ")"
					}
					fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", c.Stage.Label(), c.ID, clipTitle(c.Study, 40), strings.Join(ds, "\t"), status)
				}
				return tw.Flush()
			})
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "the saved review project")
	cmd.Flags().StringVar(&stageName, "stage", string(evidence.StageTitleAbstract), "the stage of the conflict to resolve: title-abstract or full-text")
	cmd.Flags().StringVar(&id, "id", "", "resolve the conflict on this record")
	cmd.Flags().BoolVar(&include, "include", false, "resolve as included")
	cmd.Flags().StringVar(&exclude, "exclude", "", "resolve as excluded, for this reason")
	cmd.Flags().StringVar(&note, "note", "", "how the conflict was resolved")
	cmd.Flags().StringVar(&by, "by", "", "who resolved it")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the conflicts as JSON")
	_ = cmd.MarkFlagRequired("project")
	return cmd
}

// decisionWord is a decision as a table says it.
func decisionWord(d evidence.Decision) string {
	if d.Include {
		return "include"
	}
	return "exclude: " + d.Reason
}

func newEvidencePRISMACmd(f *Factory) *cobra.Command {
	var project, png string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "prisma --project NAME [--json] [--png OUT.png]",
		Short: "Print the PRISMA 2020 counts of a saved review (both screening stages) and draw its flow diagram",
		Example: `  clinsight evidence prisma --project "MWA vs RFA"
  clinsight evidence prisma --project "MWA vs RFA" --png prisma.png --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withSavedReview(f, project, func(r app.Reviewer) error {
				c := r.Project().PRISMA()
				if png != "" {
					fh, err := os.Create(png)
					if err != nil {
						return fmt.Errorf("writing the PRISMA diagram: %w", err)
					}
					werr := evidence.WritePRISMADiagram(fh, c)
					if cerr := fh.Close(); werr == nil {
						werr = cerr
					}
					if werr != nil {
						os.Remove(png)
						return werr
					}
				}
				if asJSON {
					enc := json.NewEncoder(f.Out)
					enc.SetEscapeHTML(false)
					return enc.Encode(c)
				}
				tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
				line := func(item string, n int) { fmt.Fprintf(tw, "%s\t%d\n", item, n) }
				line("Records identified", c.Identified)
				line("Duplicates removed", c.Duplicates)
				line("Records not yet screened", c.NotScreened)
				line("Records screened", c.Screened)
				line("Records excluded", c.Excluded)
				line("Records awaiting a decision", c.Undecided)
				if c.Conflicts > 0 {
					line("  of which conflicts between reviewers", c.Conflicts)
				}
				if c.FullTextStage {
					line("Reports sought for retrieval", c.Sought)
					line("Reports not retrieved", c.NotRetrieved)
					line("Reports assessed for eligibility", c.Assessed)
					line("Reports excluded", c.ReportsExcluded)
					for _, reason := range slices.Sorted(maps.Keys(c.ReportReasons)) {
						line("  "+reason, c.ReportReasons[reason])
					}
					line("Reports awaiting assessment", c.AwaitingFullText)
				}
				line("Studies included in review", c.Included)
				if err := tw.Flush(); err != nil {
					return err
				}
				if c.StoppingBrief != "" {
					fmt.Fprintf(f.Out, "Stopping rule: %s\n", c.StoppingBrief)
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "the saved review project")
	cmd.Flags().StringVar(&png, "png", "", "also draw the PRISMA 2020 flow diagram to this PNG file")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the counts as JSON")
	_ = cmd.MarkFlagRequired("project")
	return cmd
}

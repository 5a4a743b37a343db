package cli

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/internal/inputfile"
)

// "evidence decide": a screening decision on a saved review, made through
// the review service as the desktop app's Screen step makes it
// (Reviewer.DecideStage / UndecideStage, as the named reviewer when the
// review has reviewers), so the desktop app, "evidence prisma" and the
// workbook see it.

// Bounds of an --ids-file.
const (
	maxIDsFileBytes = 8 << 20
	maxIDsPerRun    = 100_000
)

// decisionJSON is one record in "evidence decide --json".
type decisionJSON struct {
	ID    string `json:"id"`
	Study string `json:"study"`
	// Decision is "include", "exclude", "not retrieved" or "undone";
	// Reason the reason to exclude, or why the full text was not retrieved.
	Decision string `json:"decision"`
	Reason   string `json:"reason,omitempty"`
	// Had is the decision replaced or undone ("" for none).
	Had string `json:"had,omitempty"`
	// Conflict reports that the reviewers now disagree on the record.
	Conflict bool `json:"conflict,omitempty"`
}

// decideJSON is the --json shape of "evidence decide".
type decideJSON struct {
	Project  string         `json:"project"`
	Stage    evidence.Stage `json:"stage"`
	Reviewer string         `json:"reviewer,omitempty"`
	Records  []decisionJSON `json:"records"`
	// Decided, Included and Excluded count the reviewer's (or the
	// review's) decisions at the stage afterwards, of Candidates records.
	Decided    int `json:"decided"`
	Included   int `json:"included"`
	Excluded   int `json:"excluded"`
	Candidates int `json:"candidates"`
	// NotRetrieved counts the reports marked not retrieved (full text).
	NotRetrieved int `json:"not_retrieved,omitempty"`
	// OpenConflicts counts the stage's open conflicts between reviewers.
	OpenConflicts int `json:"open_conflicts,omitempty"`
	// FullTextStageOn reports that this run switched the full-text stage on.
	FullTextStageOn bool `json:"full_text_stage_switched_on,omitempty"`
}

func newEvidenceDecideCmd(f *Factory) *cobra.Command {
	var project, reviewer, stageName, exclude, idsFile, notRetrieved string
	var ids []string
	var include, undo, asJSON bool
	cmd := &cobra.Command{
		Use:   "decide --project NAME (--id ID... | --ids-file FILE) (--include | --exclude REASON | --not-retrieved NOTE | --undo) [--reviewer NAME] [--stage full-text] [--json]",
		Short: "Include or exclude records of a saved review at title and abstract or at full text (the desktop app's Screen step)",
		Long: `Records a screening decision on candidates of a saved review project, as the
desktop app's Screen step does: include, exclude for a reason (any text; the
usual reasons are listed when none is given), or --undo a decision. The
desktop app, "evidence prisma" and the review workbook count it.

A review with named reviewers ("evidence reviewers") is decided by each of
them: say who decides with --reviewer; each reviewer's decisions stay blind
to the other's, and records they decide differently become conflicts
("evidence conflicts").

--stage full-text decides the reports included at title and abstract on
their full text (switching the review's full-text stage on if it is off).
--not-retrieved NOTE marks a report whose full text could not be obtained
(PRISMA counts it as not retrieved); --undo at full text clears the mark.

A record is named by its ID as "evidence search --json" lists it (pmid:…,
demo:…) or by its PMID. --ids-file reads many: one per line (a CSV's first
column; blank lines and lines starting with # are skipped). All the records
are checked before any is decided: one that cannot be decided leaves the
review unchanged.`,
		Example: `  clinsight evidence decide --project "MWA vs RFA" --id pmid:90000001 --include
  clinsight evidence decide --project "MWA vs RFA" --id 90000002 --exclude "Wrong population" --reviewer Ana
  clinsight evidence decide --project "MWA vs RFA" --ids-file excluded.txt --exclude "Not a primary study"
  clinsight evidence decide --project "MWA vs RFA" --id pmid:90000001 --stage full-text --exclude "Wrong outcome"
  clinsight evidence decide --project "MWA vs RFA" --id pmid:90000003 --not-retrieved "no access"
  clinsight evidence decide --project "MWA vs RFA" --id pmid:90000001 --undo`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			excluding, marking := cmd.Flags().Changed("exclude"), cmd.Flags().Changed("not-retrieved")
			if n := btoi(include) + btoi(excluding) + btoi(undo) + btoi(marking); n != 1 {
				return errors.New("say the decision: --include, --exclude REASON, --not-retrieved NOTE or --undo (one of them)")
			}
			stage, err := evidence.ParseStage(stageName)
			if err != nil {
				return err
			}
			if marking {
				if cmd.Flags().Changed("stage") && stage != evidence.StageFullText {
					return errors.New("--not-retrieved marks a report at full text: leave --stage out, or give --stage full-text")
				}
				stage = evidence.StageFullText
				if strings.TrimSpace(notRetrieved) == "" {
					return errors.New("say why the full text could not be obtained with --not-retrieved NOTE (no access, not found, ...)")
				}
			}
			if idsFile != "" {
				more, err := readIDsFile(idsFile)
				if err != nil {
					return err
				}
				ids = append(ids, more...)
			}
			if len(ids) == 0 {
				return errors.New("name the records to decide with --id ID (repeatable) or --ids-file FILE")
			}
			if len(ids) > maxIDsPerRun {
				return fmt.Errorf("%d records at once is more than the %d one run decides: split the list", len(ids), maxIDsPerRun)
			}
			return withSavedReview(f, project, func(r app.Reviewer) (err error) {
				p := r.Project()
				if !marking || reviewer != "" { // a report not retrieved is the review's, not a reviewer's
					if reviewer, err = decidingReviewer(p, reviewer); err != nil {
						return err
					}
				}
				if err := r.SetScreener(reviewer); err != nil {
					return err
				}
				for i, id := range ids {
					if ids[i], err = candidateID(p, id); err != nil {
						return err
					}
				}
				if excluding && strings.TrimSpace(exclude) == "" {
					one := "" // the reasons offered for one record start with the criteria it does not meet
					if len(ids) == 1 {
						one = ids[0]
					}
					reasons := p.ExclusionReasonsFor(one)
					if stage == evidence.StageFullText {
						reasons = p.FullTextReasonsFor()
					}
					return fmt.Errorf("give the reason to exclude with --exclude REASON, any text; the usual ones: %s", strings.Join(reasons, "; "))
				}
				out := decideJSON{Project: p.Name, Stage: stage, Reviewer: reviewer, Records: []decisionJSON{}}
				// Check every record on a copy first, by the review's own rules,
				// so that one that cannot be decided leaves the review as it was.
				trial, err := p.Clone()
				if err != nil {
					return err
				}
				switchOn := stage == evidence.StageFullText && !p.FullTextStage && !undo
				if switchOn {
					trial.SetFullTextStage(true)
				}
				before := p.DecisionsOf(reviewer, stage)
				// --undo at full text of a report marked not retrieved (and not
				// decided) clears the mark.
				unmark := func(id string) bool {
					_, decided := before[id]
					_, marked := p.NotRetrieved[id]
					return undo && stage == evidence.StageFullText && marked && !decided
				}
				for _, id := range ids {
					var derr error
					switch {
					case unmark(id):
						derr = trial.SetNotRetrieved(id, "")
					case undo:
						derr = trial.UndecideAs(reviewer, stage, id)
					case marking:
						derr = trial.SetNotRetrieved(id, notRetrieved)
					default:
						derr = trial.DecideAs(reviewer, stage, id, include, exclude)
					}
					if derr != nil {
						if len(ids) > 1 {
							return fmt.Errorf("nothing was decided: %s: %w", id, derr)
						}
						return derr
					}
				}
				if switchOn {
					r.Update(func(p *evidence.Project) { p.SetFullTextStage(true) })
					out.FullTextStageOn = true
				}
				for _, id := range ids {
					rec := decisionJSON{ID: id, Study: p.Label(id)}
					if d, ok := before[id]; ok {
						rec.Had = decisionWord(d)
					}
					switch {
					case unmark(id):
						rec.Had = "not retrieved: " + p.NotRetrieved[id]
						err = r.SetNotRetrieved(id, "")
						rec.Decision = "undone"
					case marking:
						err = r.SetNotRetrieved(id, notRetrieved)
						rec.Decision, rec.Reason = "not retrieved", strings.Join(strings.Fields(notRetrieved), " ")
					case undo:
						err = r.UndecideStage(stage, id)
						rec.Decision = "undone"
					case include:
						err = r.DecideStage(stage, id, true, "")
						rec.Decision = "include"
					default:
						err = r.DecideStage(stage, id, false, exclude)
						rec.Decision, rec.Reason = "exclude", strings.Join(strings.Fields(exclude), " ")
					}
					if err != nil {
						return fmt.Errorf("%s: %w", id, err)
					}
					out.Records = append(out.Records, rec)
				}
				p = r.Project()
				conflicts := map[string]bool{}
				for _, c := range p.Conflicts(stage) {
					if c.Resolution == nil {
						conflicts[c.ID] = true
						out.OpenConflicts++
					}
				}
				for i := range out.Records {
					out.Records[i].Conflict = conflicts[out.Records[i].ID]
				}
				stageIDs := p.Candidates()
				if stage == evidence.StageFullText {
					stageIDs = p.Sought()
					for _, id := range stageIDs {
						if _, ok := p.NotRetrieved[id]; ok {
							out.NotRetrieved++
						}
					}
				}
				out.Candidates = len(stageIDs)
				after := p.DecisionsOf(reviewer, stage)
				for _, id := range stageIDs {
					if d, ok := after[id]; ok {
						out.Decided++
						if d.Include {
							out.Included++
						} else {
							out.Excluded++
						}
					}
				}
				if asJSON {
					enc := json.NewEncoder(f.Out)
					enc.SetEscapeHTML(false)
					return enc.Encode(out)
				}
				return printDecisions(f.Out, out)
			})
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "the saved review project (as named in the desktop app)")
	cmd.Flags().StringArrayVar(&ids, "id", nil, "a record to decide: its ID (pmid:…, demo:…) or PMID; repeatable")
	cmd.Flags().StringVar(&idsFile, "ids-file", "", "a file of records to decide, one ID or PMID per line (a CSV's first column)")
	cmd.Flags().BoolVar(&include, "include", false, "include the records")
	cmd.Flags().StringVar(&exclude, "exclude", "", "exclude the records, for this reason")
	cmd.Flags().StringVar(&notRetrieved, "not-retrieved", "", "mark the reports' full texts not retrieved, saying why (full-text stage)")
	cmd.Flags().BoolVar(&undo, "undo", false, "remove the decision on the records (at full text also a not-retrieved mark)")
	cmd.Flags().StringVar(&reviewer, "reviewer", "", "the reviewer deciding (required when the review has named reviewers)")
	cmd.Flags().StringVar(&stageName, "stage", string(evidence.StageTitleAbstract), "the screening stage: title-abstract or full-text")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the decisions made and the reviewer's counts at the stage as JSON")
	_ = cmd.MarkFlagRequired("project")
	return cmd
}

// btoi is 1 for true.
func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// decidingReviewer checks --reviewer against the review's reviewers and
// returns the name as the review spells it; it is required when the
// review has named reviewers and refused when it has none.
func decidingReviewer(p *evidence.Project, name string) (string, error) {
	names := p.ReviewerNames()
	name = strings.TrimSpace(name)
	switch {
	case name == "" && len(names) > 0:
		return "", fmt.Errorf("review %s is screened by %s: say who decides with --reviewer NAME", p.Name, strings.Join(names, " and "))
	case name == "":
		return "", nil
	case len(names) == 0:
		return "", fmt.Errorf("review %s has no named reviewers, so there is no reviewer %s: leave --reviewer out, or name the reviewers first (clinsight evidence reviewers --project %q --add NAME)", p.Name, name, p.Name)
	}
	for _, n := range names {
		if strings.EqualFold(n, name) {
			return n, nil
		}
	}
	return "", fmt.Errorf("%s is not a reviewer of review %s (its reviewers: %s)", name, p.Name, strings.Join(names, ", "))
}

// candidateID returns the ID of the review's candidate that id names (its
// ID, or its PMID with or without "pmid:"), or says which records are
// candidates.
func candidateID(p *evidence.Project, id string) (string, error) {
	id = strings.TrimSpace(id)
	if p.IsCandidate(id) {
		return id, nil
	}
	if pmid := strings.TrimPrefix(strings.ToLower(id), "pmid:"); pmid != "" {
		for _, c := range p.Candidates() {
			if p.Studies[c].PMID == pmid {
				return c, nil
			}
		}
	}
	if p.Search == nil || len(p.Search.IDs) == 0 {
		return "", fmt.Errorf("%s is not a candidate of review %s: the review has no candidates yet (run a search first: clinsight evidence search --project %q)", id, p.Name, p.Name)
	}
	return "", fmt.Errorf("%s is not a candidate of review %s (its candidates: %s; clinsight evidence search --project %q --json lists them)", id, p.Name, candidateList(p, 5), p.Name)
}

// readIDsFile reads record IDs, one per line: a CSV's or TSV's first
// column; blank lines, lines starting with # and a header "id" are
// skipped.
func readIDsFile(path string) ([]string, error) {
	fh, _, err := inputfile.Open(path) // a named pipe would block for ever
	if err != nil {
		return nil, fmt.Errorf("reading the records to decide: %w", err)
	}
	defer fh.Close()
	sc := bufio.NewScanner(io.LimitReader(fh, maxIDsFileBytes+1))
	sc.Buffer(make([]byte, 0, 64<<10), 64<<10)
	var ids []string
	read, line := 0, 0
	for sc.Scan() {
		line++
		read += len(sc.Bytes()) + 1
		if read > maxIDsFileBytes {
			return nil, fmt.Errorf("%s is larger than %d MB: split it", path, maxIDsFileBytes>>20)
		}
		text := strings.TrimSpace(strings.TrimPrefix(sc.Text(), "\ufeff"))
		if i := strings.IndexAny(text, ",\t;"); i >= 0 {
			text = strings.TrimSpace(text[:i])
		}
		text = strings.Trim(text, `"`)
		if text == "" || strings.HasPrefix(text, "#") || line == 1 && strings.EqualFold(text, "id") {
			continue
		}
		if len(ids) == maxIDsPerRun {
			return nil, fmt.Errorf("%s lists more than %d records: split it", path, maxIDsPerRun)
		}
		ids = append(ids, text)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s line %d: %w", path, line+1, err)
	}
	if len(ids) == 0 {
		return nil, fmt.Errorf("%s lists no record IDs (one per line)", path)
	}
	return ids, nil
}

// printDecisions prints what "evidence decide" did and where the stage
// stands.
func printDecisions(w io.Writer, out decideJSON) error {
	if out.FullTextStageOn {
		fmt.Fprintf(w, "The full-text stage of review %s is now on.\n", out.Project)
	}
	by := ""
	if out.Reviewer != "" {
		by = " by " + out.Reviewer
	}
	const shown = 20
	for i, rec := range out.Records {
		if i == shown {
			fmt.Fprintf(w, "… and %d more records\n", len(out.Records)-shown)
			break
		}
		what := "included"
		switch rec.Decision {
		case "undone":
			what = "decision undone"
			if rec.Had == "" {
				what = "had no decision"
			}
		case "exclude":
			what = "excluded (" + rec.Reason + ")"
		case "not retrieved":
			what = "full text not retrieved (" + rec.Reason + ")"
		}
		conflict := ""
		if rec.Conflict {
			conflict = "; the reviewers disagree: a conflict to resolve"
		}
		fmt.Fprintf(w, "%s (%s): %s at %s%s%s\n", rec.ID, clipTitle(rec.Study, 40), what, strings.ToLower(out.Stage.Label()), by, conflict)
	}
	who := "the review"
	if out.Reviewer != "" {
		who = out.Reviewer
	}
	fmt.Fprintf(w, "Review %s, %s: %s has decided %d of %d records (%d included, %d excluded)", out.Project, strings.ToLower(out.Stage.Label()), who, out.Decided, out.Candidates, out.Included, out.Excluded)
	if out.NotRetrieved > 0 {
		fmt.Fprintf(w, "; %d not retrieved", out.NotRetrieved)
	}
	if out.OpenConflicts > 0 {
		fmt.Fprintf(w, "; %d open conflicts (clinsight evidence conflicts --project %q)", out.OpenConflicts, out.Project)
	}
	_, err := fmt.Fprintln(w, ".")
	return err
}

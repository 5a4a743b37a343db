package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/app/meta"
)

// newEvidenceOutcomesCmds returns the commands on a saved review's
// outcomes: outcomes (list, add, remove), arms (a multi-arm study's arm
// choice) and analyze (the meta-analysis of each outcome).
func newEvidenceOutcomesCmds(f *Factory) []*cobra.Command {
	return []*cobra.Command{newEvidenceOutcomesCmd(f), newEvidenceArmsCmd(f), newEvidenceAnalyzeCmd(f)}
}

// armsNeededJSON is a study awaiting an arm choice.
type armsNeededJSON struct {
	ID     string   `json:"id"`
	Label  string   `json:"label"`
	Groups []string `json:"groups"`
}

// outcomeJSON is one outcome in "evidence outcomes --json".
type outcomeJSON struct {
	// Number counts outcomes from 1, as --outcome takes them.
	Number   int                   `json:"number"`
	Name     string                `json:"name"`
	Result   evidence.ResultSpec   `json:"result"`
	Meta     evidence.MetaSettings `json:"meta"`
	Included int                   `json:"included"`
	// WithResults is the number of included studies with a result;
	// Standardized those in the standardized table.
	WithResults  int                           `json:"with_results"`
	Standardized int                           `json:"standardized"`
	ArmsNeeded   []armsNeededJSON              `json:"arms_needed"`
	Arms         map[string]evidence.ArmChoice `json:"arms,omitempty"`
}

func outcomesOf(p *evidence.Project) []outcomeJSON {
	out := make([]outcomeJSON, p.NumOutcomes())
	included := len(p.Included())
	for i := range out {
		o := p.OutcomeAt(i)
		rows, _ := p.StandardTableFor(i)
		j := outcomeJSON{Number: i + 1, Name: o.Name(), Result: o.Result, Meta: o.Meta, Included: included,
			WithResults: p.StudiesWithResults(i), Standardized: len(rows), ArmsNeeded: []armsNeededJSON{}, Arms: o.Arms}
		for _, id := range p.ArmsNeeded(i) {
			j.ArmsNeeded = append(j.ArmsNeeded, armsNeededJSON{ID: id, Label: p.Label(id), Groups: groupNamesOf(o.Results[id])})
		}
		out[i] = j
	}
	return out
}

func groupNamesOf(r evidence.ResultExtraction) []string {
	names := make([]string, len(r.Groups))
	for i, g := range r.Groups {
		names[i] = g.Name
	}
	return names
}

func newEvidenceOutcomesCmd(f *Factory) *cobra.Command {
	var (
		project, addPath string
		remove           int
		asJSON           bool
	)
	cmd := &cobra.Command{
		Use:   "outcomes --project NAME [--add FILE.json | --remove N] [--json]",
		Short: "List, add or remove the outcomes of a saved review (each with its own results and meta-analysis)",
		Long: `A review can have several outcomes (at most 20), each with its own result
extraction, standardized table, arm choices and meta-analysis. Outcomes are
numbered from 1 as listed here; --outcome N of "evidence arms" and
"evidence analyze" takes these numbers.

--add FILE.json adds an outcome: {"outcome", "cohort", "measure"} as for
"evidence extract --result" (measure: two-groups, single-arm, means or
ratio). --remove N removes outcome N with its results and arm choices (the
last outcome cannot be removed).

The list shows, per outcome, the studies with a result, those in the
standardized table, and the multi-arm studies that wait for an arm choice
("evidence arms"): they are left out of the meta-analysis until then.`,
		Example: `  clinsight evidence outcomes --project "HCC ablation"
  clinsight evidence outcomes --project "HCC ablation" --add survival.json
  clinsight evidence outcomes --project "HCC ablation" --remove 2 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if addPath != "" && cmd.Flags().Changed("remove") {
				return errors.New("give --add FILE.json or --remove N, not both")
			}
			var spec evidence.ResultSpec
			if addPath != "" {
				var err error
				if spec, err = readResultFile(addPath); err != nil {
					return err
				}
			}
			return withSavedReview(f, project, func(r app.Reviewer) error {
				var note string
				switch {
				case addPath != "":
					i, err := r.AddOutcome(spec)
					if err != nil {
						return fmt.Errorf("adding the outcome: %w", err)
					}
					note = fmt.Sprintf("Added outcome %d %q.", i+1, r.Project().OutcomeAt(i).Name())
				case cmd.Flags().Changed("remove"):
					p := r.Project()
					if remove < 1 || remove > p.NumOutcomes() {
						return fmt.Errorf("--remove %d: the review has no outcome %d; its outcomes are %s", remove, remove, outcomeNumbers(p))
					}
					name := p.OutcomeAt(remove - 1).Name()
					if err := r.RemoveOutcome(remove - 1); err != nil {
						return err
					}
					note = fmt.Sprintf("Removed outcome %d %q.", remove, name)
				}
				list := outcomesOf(r.Project())
				if asJSON {
					if note != "" {
						fmt.Fprintln(f.Err, note)
					}
					return writeJSONLine(f.Out, list)
				}
				if note != "" {
					fmt.Fprintln(f.Out, note)
				}
				return writeOutcomesText(f.Out, project, list)
			})
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "saved review project")
	cmd.Flags().StringVar(&addPath, "add", "", `outcome JSON file: {"outcome": ..., "cohort": ..., "measure": "two-groups|single-arm|means|ratio"}`)
	cmd.Flags().IntVar(&remove, "remove", 0, "remove outcome N (as listed)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the outcomes as JSON")
	_ = cmd.MarkFlagRequired("project")
	return cmd
}

// outcomeNumbers lists the outcomes for flag errors: `1 "response", 2 "pain"`.
func outcomeNumbers(p *evidence.Project) string {
	parts := make([]string, p.NumOutcomes())
	for i := range parts {
		parts[i] = fmt.Sprintf("%d %q", i+1, p.OutcomeAt(i).Name())
	}
	return strings.Join(parts, ", ")
}

func writeJSONLine(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

func writeOutcomesText(w io.Writer, project string, list []outcomeJSON) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tOutcome\tShape\tWith a result\tStandardized\tAwaiting an arm choice")
	for _, o := range list {
		var waiting []string
		for _, a := range o.ArmsNeeded {
			waiting = append(waiting, fmt.Sprintf("%s (%s: %s)", a.Label, a.ID, strings.Join(a.Groups, ", ")))
		}
		shape := string(o.Result.Measure)
		if shape == "" {
			shape = "(not chosen)"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d of %d\t%d\t%s\n", o.Number, o.Name, shape, o.WithResults, o.Included, o.Standardized, strings.Join(waiting, "; "))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, o := range list {
		if len(o.ArmsNeeded) > 0 {
			_, err := fmt.Fprintf(w, "\nStudies with more groups than their outcome compares are left out until you choose their arms:\n  clinsight evidence arms --project %s --outcome N --id ID --treatment GROUP [--treatment GROUP] --control GROUP\n", shellQuote(project))
			return err
		}
	}
	return nil
}

// outcomeFlag returns the outcome index of --outcome N (from 1): N given,
// else the only outcome; an unknown N names the outcomes there are.
func outcomeFlag(p *evidence.Project, n int, given bool) (int, error) {
	if !given {
		if p.NumOutcomes() == 1 {
			return 0, nil
		}
		return 0, fmt.Errorf("the review has %d outcomes: choose one with --outcome N (%s)", p.NumOutcomes(), outcomeNumbers(p))
	}
	if n < 1 || n > p.NumOutcomes() {
		return 0, fmt.Errorf("--outcome %d: the review has no outcome %d; its outcomes are %s", n, n, outcomeNumbers(p))
	}
	return n - 1, nil
}

// resultID finds the record ID of a study with a result for the outcome
// (a bare PMID is read as pmid:PMID); an unknown one names those there are.
func resultID(p *evidence.Project, i int, id string) (string, error) {
	o := p.OutcomeAt(i)
	id = strings.TrimSpace(id)
	if _, ok := o.Results[id]; ok {
		return id, nil
	}
	if id != "" && strings.IndexFunc(id, func(r rune) bool { return !unicode.IsDigit(r) }) < 0 {
		if _, ok := o.Results["pmid:"+id]; ok {
			return "pmid:" + id, nil
		}
	}
	var have []string
	for _, inc := range p.Included() {
		if r, ok := o.Results[inc]; ok {
			have = append(have, fmt.Sprintf("%s (%s: %s)", inc, p.Label(inc), strings.Join(groupNamesOf(r), ", ")))
		}
	}
	if len(have) == 0 {
		return "", fmt.Errorf("no study has a result for outcome %d %q yet: extract the results first", i+1, o.Name())
	}
	return "", fmt.Errorf("--id %q: no study with a result for outcome %d %q has that ID; studies with a result: %s", id, i+1, o.Name(), strings.Join(have, "; "))
}

// armsJSON is the --json shape of "evidence arms".
type armsJSON struct {
	Outcome  int                   `json:"outcome"`
	Name     string                `json:"name"`
	ID       string                `json:"id"`
	Label    string                `json:"label"`
	Groups   []string              `json:"groups"`
	Choice   *evidence.ArmChoice   `json:"choice,omitempty"`
	Row      *evidence.StandardRow `json:"row,omitempty"`
	RowError string                `json:"row_error,omitempty"`
}

func newEvidenceArmsCmd(f *Factory) *cobra.Command {
	var (
		project, id        string
		outcome            int
		treatment, control []string
		clear, asJSON      bool
	)
	cmd := &cobra.Command{
		Use:   "arms --project NAME [--outcome N] --id ID [--treatment GROUP]... [--control GROUP]... [--clear] [--json]",
		Short: "Choose the groups that form a multi-arm study's comparison for an outcome (or combine groups)",
		Long: `A study whose result has more groups than the outcome compares (three or
more for two groups or means, two or more for a single arm) is never
analysed until you choose its arms: name the treatment group(s) with
--treatment and, for two groups or means, the control group(s) with
--control, by the group names the result lists. Several groups on one side
are combined as the Cochrane Handbook says (6.5.2.10): events and totals
summed; means and SDs by its formula (Table 6.5.a). --clear removes the
choice. Without --treatment, --control or --clear the study's groups and
its current choice are shown. The standardized row that results is shown
with how it was derived.`,
		Example: `  clinsight evidence arms --project "HCC ablation" --outcome 2 --id pmid:123 --treatment "low dose" --treatment "high dose" --control placebo
  clinsight evidence arms --project "HCC ablation" --outcome 2 --id pmid:123 --clear`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if clear && (len(treatment) > 0 || len(control) > 0) {
				return errors.New("give --clear or the groups (--treatment, --control), not both")
			}
			return withSavedReview(f, project, func(r app.Reviewer) error {
				p := r.Project()
				i, err := outcomeFlag(p, outcome, cmd.Flags().Changed("outcome"))
				if err != nil {
					return err
				}
				if id, err = resultID(p, i, id); err != nil {
					return err
				}
				switch {
				case clear:
					r.ClearArms(i, id)
				case len(treatment) > 0 || len(control) > 0:
					if err := r.SetArms(i, id, evidence.ArmChoice{Treatment: treatment, Control: control}); err != nil {
						return fmt.Errorf("outcome %d %q: %w", i+1, p.OutcomeAt(i).Name(), err)
					}
				}
				p = r.Project()
				o := p.OutcomeAt(i)
				out := armsJSON{Outcome: i + 1, Name: o.Name(), ID: id, Label: p.Label(id), Groups: groupNamesOf(o.Results[id])}
				if c, ok := o.Arms[id]; ok {
					out.Choice = &c
				}
				row, rerr := p.StandardRowFor(i, id)
				if rerr != nil {
					out.RowError = rerr.Error()
				} else {
					out.Row = &row
				}
				if asJSON {
					return writeJSONLine(f.Out, out)
				}
				return writeArmsText(f.Out, out, o.Result)
			})
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "saved review project")
	cmd.Flags().IntVar(&outcome, "outcome", 1, "outcome N (as \"evidence outcomes\" lists them; may be left out when the review has one)")
	cmd.Flags().StringVar(&id, "id", "", "record ID of the study (a bare PMID is read as pmid:PMID)")
	cmd.Flags().StringArrayVar(&treatment, "treatment", nil, "a treatment group, by name (repeat to combine groups)")
	cmd.Flags().StringArrayVar(&control, "control", nil, "a control group, by name (repeat to combine groups)")
	cmd.Flags().BoolVar(&clear, "clear", false, "remove the study's arm choice for the outcome")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the groups, the choice and the standardized row as JSON")
	_ = cmd.MarkFlagRequired("project")
	_ = cmd.MarkFlagRequired("id")
	return cmd
}

func writeArmsText(w io.Writer, a armsJSON, spec evidence.ResultSpec) error {
	fmt.Fprintf(w, "%s (%s), outcome %d %q\n", a.Label, a.ID, a.Outcome, a.Name)
	fmt.Fprintf(w, "Groups: %s\n", strings.Join(a.Groups, ", "))
	if a.Choice != nil {
		fmt.Fprintf(w, "Arm choice: %s\n", a.Choice)
	} else {
		fmt.Fprintln(w, "Arm choice: none")
	}
	if a.RowError != "" {
		_, err := fmt.Fprintf(w, "Not in the standardized table: %s\n", strings.TrimPrefix(a.RowError, "evidence: "))
		return err
	}
	return writeRows(w, spec, []evidence.StandardRow{*a.Row})
}

// writeRows writes standardized rows with their derivations.
func writeRows(w io.Writer, spec evidence.ResultSpec, rows []evidence.StandardRow) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	cols := evidence.StandardColumns(spec.Measure)
	head := []string{"Study"}
	for _, c := range cols {
		head = append(head, c.Header)
	}
	fmt.Fprintln(tw, strings.Join(append(head, "Notes"), "\t"))
	for _, r := range rows {
		cells := []string{r.Label}
		for _, c := range cols {
			cells = append(cells, c.Text(r))
		}
		notes := append([]string(nil), r.Derivations...)
		if len(r.Unsupported) > 0 {
			notes = append(notes, "unsupported: "+strings.Join(r.Unsupported, ", "))
		}
		cells = append(cells, strings.Join(notes, "; "))
		fmt.Fprintln(tw, strings.Join(cells, "\t"))
	}
	return tw.Flush()
}

// analyzeJSON is one outcome in "evidence analyze --json".
type analyzeJSON struct {
	Outcome    int                    `json:"outcome"`
	Name       string                 `json:"name"`
	Result     evidence.ResultSpec    `json:"result"`
	Rows       []evidence.StandardRow `json:"rows"`
	Problems   []string               `json:"problems,omitempty"`
	ArmsNeeded []armsNeededJSON       `json:"arms_needed,omitempty"`
	Meta       *meta.Result           `json:"meta,omitempty"`
	Error      string                 `json:"error,omitempty"`
}

func newEvidenceAnalyzeCmd(f *Factory) *cobra.Command {
	var (
		project string
		outcome int
		asJSON  bool
	)
	cmd := &cobra.Command{
		Use:   "analyze --project NAME [--outcome N] [--json]",
		Short: "Run the meta-analysis of a saved review's outcomes (each outcome's standardized table)",
		Long: `Runs the meta-analysis of each outcome of the saved review (or of
--outcome N) with the outcome's settings (effect measure, method,
Knapp–Hartung), as the desktop app does: the standardized table, the
studies left out and why (a multi-arm study without an arm choice is
always left out: see "evidence arms"), and the pooled result.`,
		Example: `  clinsight evidence analyze --project "HCC ablation"
  clinsight evidence analyze --project "HCC ablation" --outcome 2 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return withSavedReview(f, project, func(r app.Reviewer) error {
				p := r.Project()
				outcomes := make([]int, p.NumOutcomes())
				for i := range outcomes {
					outcomes[i] = i
				}
				if cmd.Flags().Changed("outcome") {
					i, err := outcomeFlag(p, outcome, true)
					if err != nil {
						return err
					}
					outcomes = []int{i}
				}
				list, analysed := analyzeOutcomes(r, outcomes)
				if asJSON {
					if err := writeJSONLine(f.Out, list); err != nil {
						return err
					}
				} else if err := writeAnalysesText(f.Out, project, list); err != nil {
					return err
				}
				if analysed == 0 {
					if len(list) == 1 {
						return fmt.Errorf("outcome %d %q: %s", list[0].Outcome, list[0].Name, list[0].Error)
					}
					return errors.New("no outcome could be analysed (see why above)")
				}
				return nil
			})
		},
	}
	cmd.Flags().StringVar(&project, "project", "", "saved review project")
	cmd.Flags().IntVar(&outcome, "outcome", 1, "analyse outcome N only (as \"evidence outcomes\" lists them); default: every outcome")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the standardized rows, the studies left out and the pooled results as JSON")
	_ = cmd.MarkFlagRequired("project")
	return cmd
}

// analyzeOutcomes runs the meta-analysis of each outcome through the
// review service and returns them with the number analysed.
func analyzeOutcomes(r app.Reviewer, outcomes []int) ([]analyzeJSON, int) {
	p := r.Project()
	var list []analyzeJSON
	analysed := 0
	for _, i := range outcomes {
		o := p.OutcomeAt(i)
		rows, problems := p.StandardTableFor(i)
		a := analyzeJSON{Outcome: i + 1, Name: o.Name(), Result: o.Result, Rows: rows, Problems: problems}
		if a.Rows == nil {
			a.Rows = []evidence.StandardRow{}
		}
		for _, id := range p.ArmsNeeded(i) {
			a.ArmsNeeded = append(a.ArmsNeeded, armsNeededJSON{ID: id, Label: p.Label(id), Groups: groupNamesOf(o.Results[id])})
		}
		if res, err := r.Analyze(i); err != nil {
			a.Error = strings.TrimPrefix(meta.ErrorMessage(err), "evidence: ")
		} else {
			a.Meta = &res
			analysed++
		}
		list = append(list, a)
	}
	return list, analysed
}

func writeAnalysesText(w io.Writer, project string, list []analyzeJSON) error {
	for k, a := range list {
		if k > 0 {
			fmt.Fprintln(w)
		}
		shape := a.Result.Measure.Label()
		fmt.Fprintf(w, "Outcome %d: %s (%s)\n", a.Outcome, a.Name, shape)
		if len(a.Rows) > 0 {
			if err := writeRows(w, a.Result, a.Rows); err != nil {
				return err
			}
		}
		if len(a.Problems) > 0 {
			fmt.Fprintln(w, "Left out:")
			for _, pr := range a.Problems {
				fmt.Fprintln(w, "  "+pr)
			}
		}
		if len(a.ArmsNeeded) > 0 {
			fmt.Fprintf(w, "Choose their arms with: clinsight evidence arms --project %s --outcome %d --id ID --treatment GROUP --control GROUP\n", shellQuote(project), a.Outcome)
		}
		if a.Meta == nil {
			fmt.Fprintf(w, "Meta-analysis not run: %s\n", a.Error)
			continue
		}
		if err := writeMetaText(w, *a.Meta); err != nil {
			return err
		}
	}
	return nil
}

// shellQuote quotes a project name for a command line hint when it has
// spaces or quotes.
func shellQuote(s string) string {
	if strings.ContainsAny(s, " '\"$`\\") {
		return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return s
}

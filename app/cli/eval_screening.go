package cli

import (
	"encoding/json"
	"fmt"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app/evidence"
)

// attachEvidence adds the evidence-synthesis commands: "evidence" (import,
// search) and "eval screening" under root's "eval" command, creating that
// command when no other pipeline has.
func attachEvidence(f *Factory, root *cobra.Command) {
	root.AddCommand(newEvidenceCmd(f))
	evalCmd := evalCommand(root)
	evalCmd.AddCommand(newEvalScreeningCmd(f))
}

// screeningJSON is the --json shape of "eval screening".
type screeningJSON struct {
	RecallAt20 float64 `json:"recall_at_20"`
	RecallAt50 float64 `json:"recall_at_50"`
	Reviews    int     `json:"reviews"`
}

func newEvalScreeningCmd(f *Factory) *cobra.Command {
	var (
		dir           string
		noLLM, asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "screening --reviews DIR [--no-llm] [--json]",
		Short: "Recall@20/@50 of PICO-based study ranking on TrialReviewBench (cross-review pool)",
		Long: `Reads the systematic reviews of a TrialReviewBench search_screen folder (one
JSON file per review: PICO and included studies). The pool is the titles of
every included study of every review; each review's PICO ranks the whole pool
and the command prints Recall@20 and Recall@50 of the review's own included
studies, averaged over reviews (recall = included studies found in the top k
/ all included studies of the review).

Ranking is LLM-free: BM25 of the PICO elements (population and intervention
weighted 1, comparison and outcome 0.3) against each title, with English and
clinical-trial stop words and plural stripping. Model-based screening is not
available yet, so --no-llm is the only mode and is implied.`,
		Example: `  clinsight eval screening --reviews ../shared/data/trialmind-reviewbench-sample/search_screen --no-llm --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			reviews, err := evidence.LoadReviews(dir)
			if err != nil {
				return err
			}
			if !noLLM {
				fmt.Fprintln(f.Err, "note: model-based screening is not available yet; ranking without a model (--no-llm)")
			}
			ev, err := evidence.EvalScreening(reviews, evidence.RankOptions{})
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(f.Out).Encode(screeningJSON{RecallAt20: ev.RecallAt20, RecallAt50: ev.RecallAt50, Reviews: ev.Reviews})
			}
			fmt.Fprintf(f.Out, "%d reviews, pool of %d studies (titles), LLM-free BM25 ranking by PICO\nRecall@20 %.4f   Recall@50 %.4f\n\n", ev.Reviews, ev.Pool, ev.RecallAt20, ev.RecallAt50)
			tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "Review\tIncluded\tRecall@20\tRecall@50")
			for _, r := range ev.PerReview {
				fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\n", r.PMID, r.Included, r.RecallAt20, r.RecallAt50)
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&dir, "reviews", "", "TrialReviewBench search_screen folder (one JSON file per review)")
	cmd.Flags().BoolVar(&noLLM, "no-llm", false, "rank without a model (BM25 of the PICO against the titles)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"recall_at_20":...,"recall_at_50":...,"reviews":25}`)
	_ = cmd.MarkFlagRequired("reviews")
	return cmd
}

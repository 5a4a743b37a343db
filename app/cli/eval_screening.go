package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/internal/progress"
)

// attachEvidence adds the evidence-synthesis commands: "evidence" (import,
// search) and "eval screening" under root's "eval" command, creating that
// command when no other pipeline has.
func attachEvidence(f *Factory, root *cobra.Command) {
	root.AddCommand(newEvidenceCmd(f))
	evalCmd := evalCommand(root)
	evalCmd.AddCommand(newEvalScreeningCmd(f))
}

// screeningJSON is the --json shape of "eval screening": the three keys
// of the LLM-free ranking, and with the model its name, the number of
// matches it re-ranked per review, its requests and the failed studies.
type screeningJSON struct {
	RecallAt20 float64 `json:"recall_at_20"`
	RecallAt50 float64 `json:"recall_at_50"`
	Reviews    int     `json:"reviews"`
	Model      string  `json:"model,omitempty"`
	Rerank     int     `json:"rerank,omitempty"`
	Calls      *int    `json:"calls,omitempty"`
	Failed     *int    `json:"failed,omitempty"`
}

func newEvalScreeningCmd(f *Factory) *cobra.Command {
	var (
		dir                 string
		rerank, concurrency int
		noLLM, asJSON       bool
	)
	cmd := &cobra.Command{
		Use:   "screening --reviews DIR [--no-llm] [--rerank 50] [--concurrency 4] [--json]",
		Short: "Recall@20/@50 of PICO-based study ranking and model screening on TrialReviewBench (cross-review pool)",
		Long: `Reads the systematic reviews of a TrialReviewBench search_screen folder (one
JSON file per review: PICO and included studies). The pool is the titles of
every included study of every review; each review's PICO ranks the whole pool
and the command prints Recall@20 and Recall@50 of the review's own included
studies, averaged over reviews (recall = included studies found in the top k
/ all included studies of the review).

With --no-llm the ranking uses no model: BM25 of the PICO elements
(population and intervention weighted 1, comparison and outcome 0.3) against
each title, with English and clinical-trial stop words and plural stripping.

Without --no-llm the workspace's chat model (Settings, models.chat) also
screens: for each review it writes eligibility criteria from the PICO, then
gives a verdict per criterion (YES, NO or UNCERTAIN) on each of the --rerank
best matches of the BM25 ranking, judging from the title alone. Those studies
are re-ordered by their screening score (YES = 1, UNCERTAIN = 0, NO = -1,
averaged over the criteria; ties keep the BM25 order); the studies after them
keep the BM25 order. A study the model fails to screen counts as UNCERTAIN on
every criterion (score 0) and is reported as failed. With --rerank 50,
Recall@50 cannot change (the same 50 studies are only re-ordered); raise
--rerank to let the model change it.

Cost: one model call per review for the criteria plus one per screened study,
so with the 25 reviews and --rerank 50 about 25 x 51 = 1,275 calls (more when
a reply is asked again). On a local model at a few seconds per call this
takes about an hour or more; --concurrency sets how many calls run at once
(raise it only if Ollama serves requests in parallel, OLLAMA_NUM_PARALLEL).`,
		Example: `  clinsight eval screening --reviews ../shared/data/trialmind-reviewbench-sample/search_screen --no-llm --json
  clinsight eval screening --reviews ../shared/data/trialmind-reviewbench-sample/search_screen --rerank 30 --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if noLLM {
				for _, name := range []string{"rerank", "concurrency"} {
					if cmd.Flags().Changed(name) {
						return fmt.Errorf("--%s sets the model screening: leave out --no-llm to use it, or leave out --%s", name, name)
					}
				}
			}
			if rerank < 1 {
				return fmt.Errorf("--rerank must be at least 1, not %d", rerank)
			}
			if concurrency < 1 {
				return fmt.Errorf("--concurrency must be at least 1, not %d", concurrency)
			}
			reviews, err := evidence.LoadReviews(dir)
			if err != nil {
				return err
			}
			var ev evidence.ScreeningEval
			if noLLM {
				if ev, err = evidence.EvalScreening(reviews, evidence.RankOptions{}); err != nil {
					return err
				}
			} else if ev, err = evalScreeningWithModel(cmd, f, reviews, rerank, concurrency, asJSON); err != nil {
				return err
			}
			if asJSON {
				out := screeningJSON{RecallAt20: ev.RecallAt20, RecallAt50: ev.RecallAt50, Reviews: ev.Reviews}
				if !noLLM {
					out.Model, out.Rerank, out.Calls, out.Failed = ev.Model, ev.Rerank, &ev.Calls, &ev.Failed
				}
				return json.NewEncoder(f.Out).Encode(out)
			}
			return printScreeningEval(f, ev)
		},
	}
	cmd.Flags().StringVar(&dir, "reviews", "", "TrialReviewBench search_screen folder (one JSON file per review)")
	cmd.Flags().BoolVar(&noLLM, "no-llm", false, "rank without a model (BM25 of the PICO against the titles)")
	cmd.Flags().IntVar(&rerank, "rerank", evidence.DefaultRerank, "the model screens and re-orders this many of each review's best BM25 matches")
	cmd.Flags().IntVar(&concurrency, "concurrency", 4, "model calls in flight at most")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"recall_at_20":...,"recall_at_50":...,"reviews":25}, with the model also "model", "rerank", "calls" and "failed"`)
	_ = cmd.MarkFlagRequired("reviews")
	return cmd
}

// evalScreeningWithModel runs the evaluation with the workspace's chat
// model, showing progress on stderr unless asJSON.
func evalScreeningWithModel(cmd *cobra.Command, f *Factory, reviews []evidence.Review, rerank, concurrency int, asJSON bool) (evidence.ScreeningEval, error) {
	ws, err := f.Workspace()
	if err != nil {
		return evidence.ScreeningEval{}, err
	}
	model, client, err := chatModel(ws, ", or rank without a model with --no-llm")
	if err != nil {
		return evidence.ScreeningEval{}, err
	}
	m := evidence.ModelScreening{Chat: client, Model: model, Options: reviewOptions(), Rerank: rerank, Concurrency: concurrency}
	var pp *progressPrinter
	if !asJSON {
		fmt.Fprintf(f.Err, "screening the %d best matches of %d reviews with %s (about %d model calls)…\n", rerank, len(reviews), model, len(reviews)*(rerank+1))
		pp = newProgressPrinter(f.Err)
		m.Progress = func(p evidence.EvalProgress) {
			if p.Stage == evidence.EvalStageCriteria {
				pp.Report(progress.Report{Stage: "eligibility criteria", Done: int64(p.ReviewsDone), Total: int64(p.Reviews), Unit: "reviews"})
				return
			}
			pp.Report(progress.Report{Stage: "screening", Done: int64(p.StudiesDone), Total: int64(p.Studies),
				Unit: fmt.Sprintf("studies; %d of %d reviews done", p.ReviewsDone, p.Reviews)})
		}
	}
	ev, err := evidence.EvalScreeningWithModel(cmd.Context(), reviews, evidence.RankOptions{}, m)
	if pp != nil {
		pp.Done()
	}
	return ev, err
}

// printScreeningEval prints the evaluation as text: the means, then a
// table of the reviews; with the model, a note on stderr when studies
// could not be screened.
func printScreeningEval(f *Factory, ev evidence.ScreeningEval) error {
	if ev.Model == "" {
		fmt.Fprintf(f.Out, "%d reviews, pool of %d studies (titles), LLM-free BM25 ranking by PICO\n", ev.Reviews, ev.Pool)
	} else {
		fmt.Fprintf(f.Out, "%d reviews, pool of %d studies (titles), BM25 ranking by PICO, best %d re-ordered by %s's screening (%d model calls, %d studies failed)\n",
			ev.Reviews, ev.Pool, ev.Rerank, ev.Model, ev.Calls, ev.Failed)
	}
	fmt.Fprintf(f.Out, "Recall@20 %.4f   Recall@50 %.4f\n\n", ev.RecallAt20, ev.RecallAt50)
	tw := tabwriter.NewWriter(f.Out, 0, 4, 2, ' ', 0)
	if ev.Model == "" {
		fmt.Fprintln(tw, "Review\tIncluded\tRecall@20\tRecall@50")
	} else {
		fmt.Fprintln(tw, "Review\tIncluded\tRecall@20\tRecall@50\tScreened\tFailed")
	}
	var firstErr error
	for _, r := range ev.PerReview {
		if ev.Model == "" {
			fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\n", r.PMID, r.Included, r.RecallAt20, r.RecallAt50)
			continue
		}
		fmt.Fprintf(tw, "%s\t%d\t%.3f\t%.3f\t%d\t%d\n", r.PMID, r.Included, r.RecallAt20, r.RecallAt50, r.Screened, r.Failed)
		if firstErr == nil && r.Errors != nil {
			firstErr = r.Errors
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if firstErr != nil {
		msg, _, _ := strings.Cut(firstErr.Error(), "\n")
		fmt.Fprintf(f.Err, "%d studies could not be screened and count as UNCERTAIN (score 0); the first error: %s\n", ev.Failed, msg)
	}
	return nil
}

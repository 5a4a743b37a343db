package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/eval"
	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/internal/atomicfile"
	"github.com/clinsight/clinsight/internal/progress"
)

// attachTrialsEval adds "eval trec" (trial ranking) to root's "eval"
// command, creating that command when no other pipeline has.
func attachTrialsEval(f *Factory, root *cobra.Command) {
	evalCmd := evalCommand(root)
	evalCmd.AddCommand(newEvalTRECCmd(f))
}

// trecJSON is the --json shape of "eval trec".
type trecJSON struct {
	NDCG10 float64 `json:"ndcg_cut_10"`
	P10    float64 `json:"p_10"`
	RR     float64 `json:"recip_rank"`
	Topics int     `json:"topics"`
}

func newEvalTRECCmd(f *Factory) *cobra.Command {
	var (
		runPath, qrelsPath, db, topicsPath, writeRun, model string
		noLLM, pool, filters, asJSON                        bool
		depth                                               int
	)
	cmd := &cobra.Command{
		Use:   "trec (--run RUN.trec | --db DB --topics TOPICS.jsonl) --qrels QRELS",
		Short: "Score a trial ranking like trec_eval: NDCG@10 (graded), P@10 and reciprocal rank (relevant = grade 2)",
		Long: `Scores a TREC run file (--run), or ranks every topic of TOPICS.jsonl ({"_id","text"} per line)
over the trials of --db and scores that run. Measures are computed as trec_eval -l 2 -m ndcg_cut.10 -m P.10
-m recip_rank does: NDCG@10 with the grades as gains, P@10 and RR with relevant = grade ≥ 2, averaged over
the topics present in both the run and the qrels. --pool ranks, for each topic, only the trials judged for it.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			qrels, err := readQrels(qrelsPath)
			if err != nil {
				return err
			}
			var run eval.Run
			var scores eval.TRECScores
			switch {
			case runPath != "" && (db != "" || topicsPath != ""):
				return errors.New("give either --run, or --db with --topics, not both")
			case runPath != "":
				rf, err := os.Open(runPath)
				if err != nil {
					return err
				}
				run, err = eval.ReadRun(rf)
				rf.Close()
				if err != nil {
					return fmt.Errorf("%s: %w", runPath, err)
				}
				if scores, err = eval.EvaluateRun(run, qrels, eval.DefaultRelevanceLevel); err != nil {
					return err
				}
			case db != "" && topicsPath != "":
				tf, err := os.Open(topicsPath)
				if err != nil {
					return err
				}
				topics, err := trials.ReadTopics(tf)
				tf.Close()
				if err != nil {
					return fmt.Errorf("%s: %w", topicsPath, err)
				}
				ws, err := f.Workspace()
				if err != nil {
					return err
				}
				src, err := ws.Resolve(db)
				if err != nil {
					return err
				}
				m, err := ws.Trials().Open(cmd.Context(), src, app.TrialsOptions{NoModel: noLLM, Model: model})
				if err != nil {
					return err
				}
				defer m.Close()
				for _, n := range m.Notices {
					fmt.Fprintln(f.Err, "note:", n)
				}
				fmt.Fprintln(f.Err, "embedder:", m.Embedder.Label)
				pp := newProgressPrinter(f.Err)
				run, scores, err = m.Evaluate(cmd.Context(), topics, qrels, trials.EvalOptions{
					UseModel: !noLLM, Pool: pool, FilterAge: filters, FilterSex: filters, Depth: depth,
					Progress: func(done, total int) {
						pp.Report(progress.Report{Stage: "Ranking topics", Done: int64(done), Total: int64(total), Unit: "topics"})
					},
				})
				pp.Done()
				if err != nil {
					return err
				}
			default:
				return errors.New("give --run RUN.trec, or --db DB with --topics TOPICS.jsonl")
			}
			if w := unjudgedWarning(run, qrels); w != "" {
				fmt.Fprintln(f.Err, "warning:", w)
			}
			if writeRun != "" {
				if err := writeRunFile(writeRun, run); err != nil {
					return err
				}
				fmt.Fprintf(f.Err, "wrote the run to %s\n", writeRun)
			}
			if asJSON {
				return json.NewEncoder(f.Out).Encode(trecJSON{NDCG10: scores.NDCG10, P10: scores.P10, RR: scores.RR, Topics: scores.Topics})
			}
			fmt.Fprintf(f.Out, "NDCG@10  %.4f\nP@10     %.4f\nRR       %.4f\ntopics   %d\n", scores.NDCG10, scores.P10, scores.RR, scores.Topics)
			return nil
		},
	}
	cmd.Flags().StringVar(&runPath, "run", "", "TREC run file to score (topic Q0 doc rank score tag)")
	cmd.Flags().StringVar(&qrelsPath, "qrels", "", "judgments: TREC qrels or BEIR TSV (query-id corpus-id score)")
	cmd.Flags().StringVar(&db, "db", "", "database holding the trials to rank (file or data source name)")
	cmd.Flags().StringVar(&topicsPath, "topics", "", "topics as JSON lines {\"_id\",\"text\"}")
	cmd.Flags().BoolVar(&noLLM, "no-llm", false, "rank without a model (deterministic concepts, lexical embedder)")
	cmd.Flags().StringVar(&model, "model", "", "chat model (default: the workspace's chat model)")
	cmd.Flags().BoolVar(&pool, "pool", false, "rank only each topic's judged trials")
	cmd.Flags().BoolVar(&filters, "filters", false, "drop trials whose age or sex limits exclude the patient")
	cmd.Flags().IntVar(&depth, "depth", 1000, "trials kept per topic in the run")
	cmd.Flags().StringVar(&writeRun, "write-run", "", "write the run to this file (TREC format)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"ndcg_cut_10":...,"p_10":...,"recip_rank":...,"topics":...}`)
	_ = cmd.MarkFlagRequired("qrels")
	return cmd
}

func readQrels(path string) (eval.Qrels, error) {
	qf, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer qf.Close()
	q, err := eval.ReadQrels(qf)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return q, nil
}

// writeRunFile writes a run atomically.
func writeRunFile(path string, run eval.Run) error {
	if err := atomicfile.Write(path, 0o666, func(w io.Writer) error { return eval.WriteRun(w, run, "clinsight") }); err != nil {
		return fmt.Errorf("write run %s: %w", path, err)
	}
	return nil
}

// unjudgedWarning says, when none of the trials a run ranks for the topics
// it shares with the qrels is judged there, that the zero scores come from
// the mismatch, not the ranking ("" otherwise).
func unjudgedWarning(run eval.Run, qrels eval.Qrels) string {
	ranked, shared := 0, 0
	for topic, entries := range run {
		judged, ok := qrels[topic]
		if !ok {
			continue
		}
		shared++
		for _, e := range entries {
			ranked++
			if _, ok := judged[e.Doc]; ok {
				return ""
			}
		}
	}
	if shared == 0 {
		return ""
	}
	return fmt.Sprintf("none of the %d trials the run ranks for its %d topics in the qrels is judged there, so every score is 0: check that the run and the qrels use the same trial ids (e.g. NCT numbers) and topic ids, or rank only judged trials with --pool", ranked, shared)
}

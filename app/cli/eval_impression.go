package cli

import (
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strconv"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app/impression"
	"github.com/clinsight/clinsight/internal/atomicfile"
)

// newEvalImpressionCmd is the "eval" command with the impression
// pipeline's evaluations ("impressions", "labeler").
func newEvalImpressionCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "eval",
		Short: "Score the pipelines on public benchmark data",
	}
	cmd.AddCommand(newEvalImpressionsCmd(f), newEvalLabelerCmd(f))
	return cmd
}

func newEvalImpressionsCmd(f *Factory) *cobra.Command {
	var (
		corpusPath, testPath, out string
		asJSON, ignoreConsistency bool
		fl                        impressionFlags
	)
	cmd := &cobra.Command{
		Use:   "impressions --corpus FILE.csv [--test FILE.csv] [--no-llm] [--model M] [--out FILE.csv]",
		Short: "ROUGE-1/2/L of generated (or retrieved) impressions against the reports' own, and how many contradict their findings",
		Long: `Produces an impression for each report of --test (or, without --test, for each
report of --corpus, leaving the report itself out of its examples) and scores
it against the report's real impression: mean ROUGE-1, ROUGE-2 and ROUGE-L F1 in
percent (tokens: lowercase letters and digits, no stemming). It also reports
the contradiction rate: the share of the impressions produced that contradict
their findings by the observation labeler (calling the study normal while the
findings have a positive observation; leaving out or ruling out a pleural
effusion, pneumothorax, consolidation, edema, cardiomegaly or fracture positive
in the findings; or reporting one the findings rule out), next to the share of
the reports' own impressions that do. --ignore-consistency chooses retrieved
impressions and iterations without preferring consistent ones, as before the
check (for comparison). --out writes one row per report: uid, hypothesis,
reference, source, the three scores and the contradictions.`,
		Example: `  clinsight eval impressions --corpus findings_impression_pairs_dev.csv --no-llm
  clinsight eval impressions --corpus findings_impression_pairs_dev.csv --no-llm --ignore-consistency --json
  clinsight eval impressions --corpus train.csv --test test.csv --model llama3.1:8b --out scores.csv --json`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			reports, err := impression.ReadReports(ctx, corpusPath)
			if err != nil {
				return err
			}
			tests, loo := reports, true
			if testPath != "" {
				if tests, err = impression.ReadReports(ctx, testPath); err != nil {
					return err
				}
				loo = false
			}
			opts := fl.options()
			opts.IgnoreConsistency = ignoreConsistency
			p, err := ws.Impressions().Pipeline(impression.NewCorpus(reports), opts)
			if err != nil {
				return err
			}
			pp := newProgressPrinter(f.Err)
			sum, err := impression.EvaluateImpressions(ctx, p, tests, loo, pp.Report)
			pp.Done()
			if err != nil {
				return err
			}
			if sum.N == 0 {
				return errors.New("no report with both findings and an impression to evaluate")
			}
			if out != "" {
				if err := writeEvalCSV(out, sum); err != nil {
					return err
				}
				fmt.Fprintf(f.Err, "wrote %d rows to %s\n", len(sum.Items), out)
			}
			if !fl.noLLM && sum.Retrieved > 0 {
				fmt.Fprintf(f.Err, "note: %d of %d impressions are retrieved, not generated (the model failed for them)\n", sum.Retrieved, sum.N)
			}
			r1, r2, rl := 100*sum.Mean.R1.F1, 100*sum.Mean.R2.F1, 100*sum.Mean.RL.F1
			if asJSON {
				return json.NewEncoder(f.Out).Encode(map[string]any{"rouge1": r1, "rouge2": r2, "rougeL": rl, "n": sum.N,
					"contradiction_rate": sum.ContradictionRate, "reference_contradiction_rate": sum.ReferenceContradictionRate})
			}
			mode := "leave-one-out"
			if !loo {
				mode = "test " + filepath.Base(testPath)
			}
			_, err = fmt.Fprintf(f.Out, "%d reports (%s, corpus %s, %d examples; %d generated, %d retrieved)\nROUGE-1 %.2f  ROUGE-2 %.2f  ROUGE-L %.2f\n"+
				"contradicting their findings: %.2f%% of the impressions produced (%.2f%% of the reports' own impressions)\n",
				sum.N, mode, filepath.Base(corpusPath), p.Corpus().Examples(), sum.Generated, sum.Retrieved, r1, r2, rl,
				100*sum.ContradictionRate, 100*sum.ReferenceContradictionRate)
			return err
		},
	}
	cmd.Flags().StringVar(&corpusPath, "corpus", "", "report corpus: CSV with uid,findings,impression (or any input of 'reports import')")
	cmd.Flags().StringVar(&testPath, "test", "", "reports to evaluate (default: leave-one-out over the corpus)")
	cmd.Flags().StringVar(&out, "out", "", "write per-report results to this CSV file")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"rouge1":...,"rouge2":...,"rougeL":...,"n":...,"contradiction_rate":...,"reference_contradiction_rate":...} (F1 in percent, rates as fractions 0-1)`)
	cmd.Flags().BoolVar(&ignoreConsistency, "ignore-consistency", false, "choose impressions without preferring ones consistent with the findings (the choice before the check, for comparison)")
	fl.register(cmd)
	_ = cmd.MarkFlagRequired("corpus")
	return cmd
}

// writeEvalCSV writes the per-report results atomically.
func writeEvalCSV(path string, sum impression.EvalSummary) error {
	return atomicfile.Write(path, 0o666, func(out io.Writer) error {
		w := csv.NewWriter(out)
		pct := func(x float64) string { return strconv.FormatFloat(100*x, 'f', 4, 64) }
		_ = w.Write([]string{"uid", "hypothesis", "reference", "source", "rouge1", "rouge2", "rougeL", "contradictions"})
		for _, it := range sum.Items {
			src := "retrieved"
			if it.Generated {
				src = "generated"
			}
			_ = w.Write([]string{it.UID, it.Hypothesis, it.Reference, src, pct(it.Rouge.R1.F1), pct(it.Rouge.R2.F1), pct(it.Rouge.RL.F1),
				impression.DescribeContradictions(it.Contradictions)})
		}
		w.Flush()
		return w.Error()
	})
}

func newEvalLabelerCmd(f *Factory) *cobra.Command {
	var (
		reportsPath, uncertain string
		asJSON                 bool
	)
	cmd := &cobra.Command{
		Use:   "labeler --reports indiana_reports_dev.csv [--json]",
		Short: "Precision, recall and F1 of the observation labeler against Open-i's MeSH annotations",
		Long: `Labels each report's FINDINGS and IMPRESSION with the 14 CheXpert observations
and compares them with the report's MeSH annotations (column MeSH), mapped to
the observations as documented in the README ("normal" = No Finding,
Cardiomegaly, Pleural Effusion, Pulmonary Atelectasis = Atelectasis, ...).
Reports indexed "No Indexing" are left out. By default an uncertain label
counts as a positive prediction (--uncertain negative counts it as negative).`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			var uncertainPositive bool
			switch uncertain {
			case "positive":
				uncertainPositive = true
			case "negative":
			default:
				return fmt.Errorf("--uncertain %q: use positive or negative", uncertain)
			}
			reports, err := impression.ReadReferenceReports(reportsPath)
			if err != nil {
				return err
			}
			ev, err := impression.EvaluateLabeler(cmd.Context(), reports, uncertainPositive)
			if err != nil {
				return err
			}
			if ev.Reports == 0 {
				return errors.New("no annotated report to evaluate")
			}
			if asJSON {
				out := map[string]map[string]float64{}
				for _, o := range impression.AllObservations() {
					s := ev.Scores[o]
					out[o.String()] = map[string]float64{"precision": s.Precision, "recall": s.Recall, "f1": s.F1}
				}
				return json.NewEncoder(f.Out).Encode(out)
			}
			fmt.Fprintf(f.Out, "%d reports (%d left out: no MeSH indexing or no text); uncertain counted as %s\n", ev.Reports, ev.Skipped, uncertain)
			fmt.Fprintf(f.Out, "%-27s %9s %7s %6s %8s\n", "observation", "precision", "recall", "F1", "support")
			for _, o := range impression.AllObservations() {
				s := ev.Scores[o]
				fmt.Fprintf(f.Out, "%-27s %9.3f %7.3f %6.3f %8d\n", o, s.Precision, s.Recall, s.F1, s.Support)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&reportsPath, "reports", "", "Open-i CSV with MeSH, findings and impression columns")
	cmd.Flags().StringVar(&uncertain, "uncertain", "positive", "count uncertain labels as positive or negative predictions")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"Cardiomegaly":{"precision":...,"recall":...,"f1":...},...}`)
	_ = cmd.MarkFlagRequired("reports")
	return cmd
}

package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/app/eval"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/atomicfile"
	"github.com/clinsight/clinsight/internal/progress"
)

// attachCohortEval adds the cohort pipeline's evaluations ("eval retrieval",
// "eval ehrsql", "eval grounding") to root's "eval" command, creating that command when no
// other pipeline has.
func attachCohortEval(f *Factory, root *cobra.Command) {
	evalCmd := evalCommand(root)
	evalCmd.AddCommand(newEvalRetrievalCmd(f), newEvalEHRSQLCmd(f), newEvalGroundingCmd(f))
}

// ehrsqlDB returns the database of an EHRSQL evaluation: --db, else the
// task's own database in the EHRSQL folder.
func ehrsqlDB(db, dir string) (string, error) {
	if db != "" {
		return db, nil
	}
	p := filepath.Join(dir, "mimic_iv_demo.sqlite")
	if _, err := os.Stat(p); err != nil {
		return "", fmt.Errorf("no --db given and %s is missing: %w", p, err)
	}
	return p, nil
}

// retrievalJSON is the --json shape of "eval retrieval".
type retrievalJSON struct {
	K              int     `json:"k"`
	N              int     `json:"n"`
	RecallAtK      float64 `json:"recall_at_k"`
	AllTablesShare float64 `json:"all_tables_share"`
	Embedder       string  `json:"embedder"`
	// Profile is "curated" (the schema profile Clinsight knows, when one
	// fits) or "generated" (--no-profile).
	Profile string `json:"profile"`
	// Dev and Test are the halves of the questions (cohort.RetrievalHalf):
	// retrieval's vocabulary and constants were chosen on Dev.
	Dev  cohort.RetrievalFigures `json:"dev"`
	Test cohort.RetrievalFigures `json:"test"`
}

func newEvalRetrievalCmd(f *Factory) *cobra.Command {
	var (
		dir, db, split    string
		k                 int
		asJSON, noProfile bool
	)
	cmd := &cobra.Command{
		Use:   "retrieval --ehrsql DIR --db DB [--k 5] [--no-profile]",
		Short: "Recall@k of the cohort pipeline's table retrieval on EHRSQL (no model needed)",
		Long: `For each answerable question of the EHRSQL split, compares the tables its gold
SQL reads with the k tables retrieved for the question, and prints the mean
recall@k and the share of questions with every table retrieved, over all
questions and over the two halves of a split by question id (dev: where
retrieval's vocabulary and constants were chosen; test: held out). Retrieval
uses the configured embedding model when Ollama has it, else the lexical
fallback.

With --no-profile, the tables are documented as for a database Clinsight has
no curated profile of: from their names, types, keys and sampled values only.`,
		Example: `  clinsight eval retrieval --ehrsql ../shared/data/ehrsql-2024-mimic-iv-demo --db ../shared/data/ehrsql-2024-mimic-iv-demo/mimic_iv_demo.sqlite --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			if db, err = ehrsqlDB(db, dir); err != nil {
				return err
			}
			items, err := eval.LoadEHRSQL(dir, split)
			if err != nil {
				return err
			}
			src, err := ws.Resolve(db)
			if err != nil {
				return err
			}
			index, profile := ws.Cohort().Index, "curated"
			if noProfile {
				index, profile = ws.Cohort().IndexWithoutProfile, "generated"
			}
			ix, err := index(ctx, src, nil)
			if err != nil {
				return err
			}
			rep, err := cohort.EvaluateRetrieval(ctx, ix, items, k)
			if err != nil {
				return err
			}
			if asJSON {
				return json.NewEncoder(f.Out).Encode(retrievalJSON{K: rep.K, N: rep.N, RecallAtK: rep.RecallAtK, AllTablesShare: rep.AllTablesShare,
					Embedder: rep.Embedder, Profile: profile, Dev: rep.Dev, Test: rep.Test})
			}
			_, err = fmt.Fprintf(f.Out, "EHRSQL %s: %d answerable questions, top %d tables, %s profile\nrecall@%d %.4f   all tables retrieved %.4f   median %s per question\n"+
				"dev half (%d): recall@%d %.4f, all tables %.4f; test half (%d): recall@%d %.4f, all tables %.4f\nembedder: %s\n",
				split, rep.N, rep.K, profile, rep.K, rep.RecallAtK, rep.AllTablesShare, rep.MedianLatency.Round(time.Microsecond),
				rep.Dev.N, rep.K, rep.Dev.RecallAtK, rep.Dev.AllTablesShare, rep.Test.N, rep.K, rep.Test.RecallAtK, rep.Test.AllTablesShare, rep.Embedder)
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "ehrsql", "", "EHRSQL 2024 folder (with valid/data.json, label.json)")
	cmd.Flags().StringVar(&db, "db", "", "database file or data source name (default: mimic_iv_demo.sqlite in the EHRSQL folder)")
	cmd.Flags().StringVar(&split, "split", "valid", "split to evaluate")
	cmd.Flags().IntVar(&k, "k", cohort.DefaultTopK, "tables retrieved per question")
	cmd.Flags().BoolVar(&noProfile, "no-profile", false, "document the tables from the database structure only, as for an unknown database (no curated profile)")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"k":5,"n":...,"recall_at_k":...,"all_tables_share":...,"embedder":"...","profile":"curated","dev":{...},"test":{...}}`)
	_ = cmd.MarkFlagRequired("ehrsql")
	return cmd
}

// ehrsqlJSON is the --json shape of "eval ehrsql": one flat object.
type ehrsqlJSON struct {
	ExecutionAccuracy   float64 `json:"execution_accuracy"`
	RS0                 float64 `json:"rs_0"`
	RS10                float64 `json:"rs_10"`
	AbstainPrecision    float64 `json:"abstain_precision"`
	AbstainRecall       float64 `json:"abstain_recall"`
	MeanAttempts        float64 `json:"mean_attempts"`
	LLMCallsPerQuestion float64 `json:"llm_calls_per_question"`
	MedianLatencyMS     float64 `json:"median_latency_ms"`
	N                   int     `json:"n"`
	TokensPerQuestion   float64 `json:"tokens_per_question"`
	RS5                 float64 `json:"rs_5"`
	Answerable          int     `json:"answerable"`
	Unanswerable        int     `json:"unanswerable"`
}

func newEvalEHRSQLCmd(f *Factory) *cobra.Command {
	var (
		dir, db, split, model, out string
		limit, attempts            int
		asJSON, all                bool
	)
	cmd := &cobra.Command{
		Use:   "ehrsql --ehrsql DIR --db DB [--model M] [--limit N] [--split valid]",
		Short: "Run the whole cohort pipeline on EHRSQL 2024 and score it as the task does",
		Long: `Asks every question of the split (the first --limit ones) and prints execution
accuracy (answerable questions answered correctly), abstention precision and
recall, and the reliability scores RS(0) and RS(10) of EHRSQL 2024 (per
question +1 for a correct answer or a correct abstention, 0 for abstaining on
an answerable question, -N for a wrong answer or for answering an unanswerable
one; the mean, scaled to 100), with mean attempts, model calls and tokens per
question and the median latency. Answers compare as the task's scorer does
(cells rounded to 3 decimals, rows sorted, the first 100). "Now" is the
dataset's fixed current time (2100-12-31 23:59:00), as its schema notes say.
Answerable questions whose gold answer cannot be reproduced on the shipped demo
database (they need chartevents) are left out unless --include-unrunnable.
Per-question results go to OUT.json and OUT.xlsx.`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			if db, err = ehrsqlDB(db, dir); err != nil {
				return err
			}
			items, err := eval.LoadEHRSQL(dir, split)
			if err != nil {
				return err
			}
			if !all {
				kept := items[:0]
				for _, it := range items {
					if !it.Unrunnable {
						kept = append(kept, it)
					}
				}
				items = kept
			}
			if limit > 0 && limit < len(items) {
				items = items[:limit]
			}
			if len(items) == 0 {
				return errors.New("no question to evaluate")
			}
			src, err := ws.Resolve(db)
			if err != nil {
				return err
			}
			if ws.Data().Policy(src).AggregateOnly() { // the results files hold exact answers
				return &disclosure.AggregateOnlyError{Source: src.Name, Why: "an evaluation writes every exact answer to its results files"}
			}
			pp := newProgressPrinter(f.Err)
			p, err := ws.Cohort().Pipeline(ctx, src, app.CohortOptions{Model: model, MaxAttempts: attempts, Progress: pp.Report})
			if err != nil {
				pp.Done()
				return err
			}
			defer p.Close()
			rep, err := cohort.EvaluateEHRSQL(ctx, p, items, func(done, total int) {
				pp.Report(progress.Report{Stage: "EHRSQL " + split, Done: int64(done), Total: int64(total), Unit: "questions"})
			})
			pp.Done()
			if err != nil {
				return err
			}
			if out == "" {
				out = "ehrsql-" + split + "-results"
			}
			if err := writeEHRSQLRecords(out+".json", rep); err != nil {
				return err
			}
			prov := export.Provenance{AppVersion: f.Version, DataSource: db, Models: p.Models(), Created: time.Now()}
			prov.Add("Benchmark", "EHRSQL 2024 "+split+" ("+dir+")")
			prov.Add("Retrieval embedder", p.Index().Embedder())
			if err := cohort.WriteEHRSQLWorkbook(ctx, out+".xlsx", rep, prov); err != nil {
				return err
			}
			fmt.Fprintf(f.Err, "wrote %s.json and %s.xlsx\n", out, out)
			m := rep.EHRSQLMetrics
			if asJSON {
				return json.NewEncoder(f.Out).Encode(ehrsqlJSON{
					ExecutionAccuracy: m.ExecutionAccuracy, RS0: m.RS0, RS10: m.RS10, AbstainPrecision: m.AbstainPrecision,
					AbstainRecall: m.AbstainRecall, MeanAttempts: rep.MeanAttempts, LLMCallsPerQuestion: rep.LLMCallsPerQuestion,
					MedianLatencyMS: rep.MedianLatencyMS, N: m.N, TokensPerQuestion: rep.TokensPerQuestion, RS5: m.RS5,
					Answerable: m.Answerable, Unanswerable: m.Unanswerable,
				})
			}
			_, err = fmt.Fprintf(f.Out, `EHRSQL %s: %d questions (%d answerable, %d unanswerable), models %v
execution accuracy   %.4f
RS(0) %.2f   RS(5) %.2f   RS(10) %.2f
abstention precision %.4f   recall %.4f
mean attempts %.2f   LLM calls/question %.2f   tokens/question %.0f   median latency %.0f ms
`, split, m.N, m.Answerable, m.Unanswerable, p.Models(), m.ExecutionAccuracy, m.RS0, m.RS5, m.RS10,
				m.AbstainPrecision, m.AbstainRecall, rep.MeanAttempts, rep.LLMCallsPerQuestion, rep.TokensPerQuestion, rep.MedianLatencyMS)
			return err
		},
	}
	cmd.Flags().StringVar(&dir, "ehrsql", "", "EHRSQL 2024 folder (with valid/data.json, label.json, answer.json)")
	cmd.Flags().StringVar(&db, "db", "", "database file or data source name (default: mimic_iv_demo.sqlite in the EHRSQL folder)")
	cmd.Flags().StringVar(&split, "split", "valid", "split to evaluate")
	cmd.Flags().StringVar(&model, "model", "", "model for SQL and explanation (default: the models of the settings)")
	cmd.Flags().IntVar(&limit, "limit", 0, "evaluate only the first N questions")
	cmd.Flags().IntVar(&attempts, "max-attempts", cohort.DefaultMaxAttempts, "statements tried per question")
	cmd.Flags().StringVar(&out, "out", "", "per-question results: OUT.json and OUT.xlsx (default ehrsql-SPLIT-results)")
	cmd.Flags().BoolVar(&all, "include-unrunnable", false, "also ask the answerable questions the shipped database cannot reproduce")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the metrics as one flat JSON object")
	_ = cmd.MarkFlagRequired("ehrsql")
	return cmd
}

// writeEHRSQLRecords writes the per-question records as a JSON array,
// atomically.
func writeEHRSQLRecords(path string, rep *cohort.EHRSQLReport) error {
	raw, err := json.MarshalIndent(rep.Records, "", "  ")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return atomicfile.WriteFile(path, append(raw, '\n'), 0o666)
}

// groundingJSON is the --json shape of "eval grounding".
type groundingJSON struct {
	N                    int                             `json:"n"`
	MatchBefore          float64                         `json:"match_before"`
	MatchAfter           float64                         `json:"match_after"`
	ChangedUncorrupted   int                             `json:"changed_uncorrupted"`
	Uncorrupted          int                             `json:"uncorrupted"`
	RewrittenUncorrupted int                             `json:"rewritten_uncorrupted"`
	Seed                 uint64                          `json:"seed"`
	Dev                  cohort.GroundingRate            `json:"dev"`
	Test                 cohort.GroundingRate            `json:"test"`
	ByRule               map[string]cohort.GroundingRate `json:"by_rule"`
	Rules                []string                        `json:"rules"`
}

func newEvalGroundingCmd(f *Factory) *cobra.Command {
	var (
		dir, db, split, out string
		seed                uint64
		limit               int
		asJSON              bool
	)
	cmd := &cobra.Command{
		Use:   "grounding --ehrsql DIR --db DB [--seed N] [--json]",
		Short: "Measure value grounding on corrupted EHRSQL gold queries (no model needed)",
		Long: `Takes the gold SQL of the answerable EHRSQL questions that run on the demo
database and checks value grounding two ways. First every gold query is
grounded as it is: its literals match stored values, so it must keep its gold
answer (changed_uncorrupted counts those that did not). Then one literal of
each gold query that names a stored value is corrupted the way small models
get values wrong, by one seeded rule:
  case         UPPER CASE or Title Case
  drop-suffix  a dose, strength, form or route suffix dropped
  synonym      a brand name, lay term or abbreviation for a drug or diagnosis
  misspell     one or two character edits in a word of 4 letters or more
and the corrupted query's answer is compared with the gold answer before and
after grounding (match_before, match_after). Questions are split into a
development and a test half by a hash of their id: grounding's thresholds were
chosen on the development half, so the test half is the fair figure.
Per-query cases go to OUT.json when --out is given.`,
		Example: `  clinsight eval grounding --ehrsql ../shared/data/ehrsql-2024-mimic-iv-demo --db ../shared/data/ehrsql-2024-mimic-iv-demo/mimic_iv_demo.sqlite --json`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx := cmd.Context()
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			if db, err = ehrsqlDB(db, dir); err != nil {
				return err
			}
			items, err := eval.LoadEHRSQL(dir, split)
			if err != nil {
				return err
			}
			if limit > 0 && limit < len(items) {
				items = items[:limit]
			}
			src, err := ws.Resolve(db)
			if err != nil {
				return err
			}
			if ws.Data().Policy(src).AggregateOnly() { // the cases hold the source's stored values
				return &disclosure.AggregateOnlyError{Source: src.Name, Why: "an evaluation writes the stored values it grounds on"}
			}
			path := db
			if _, err := os.Stat(path); err != nil {
				path = src.Path
			}
			ix, err := ws.Cohort().Index(ctx, src, nil)
			if err != nil {
				return err
			}
			runner, err := datasets.NewRunner(ctx, path, ws.RunnerOptions())
			if err != nil {
				return fmt.Errorf("open %s (--db): %w", path, err)
			}
			defer runner.Close()
			g := cohort.NewGrounder(ix, runner)
			if g == nil {
				return fmt.Errorf("%s has no text values to ground literals on", db)
			}
			pp := newProgressPrinter(f.Err)
			rep, err := cohort.EvaluateGrounding(ctx, g, runner, items, seed, func(done, total int) {
				pp.Report(progress.Report{Stage: "grounding " + split, Done: int64(done), Total: int64(total), Unit: "questions"})
			})
			pp.Done()
			if err != nil {
				return err
			}
			if rep.N == 0 {
				return errors.New("no gold query could be corrupted (no answerable question with a literal naming a stored value)")
			}
			if out != "" {
				raw, err := json.MarshalIndent(rep.Cases, "", "  ")
				if err != nil {
					return fmt.Errorf("write %s.json: %w", out, err)
				}
				if err := atomicfile.WriteFile(out+".json", append(raw, '\n'), 0o666); err != nil {
					return err
				}
				fmt.Fprintf(f.Err, "wrote %s.json\n", out)
			}
			if asJSON {
				return json.NewEncoder(f.Out).Encode(groundingJSON{N: rep.N, MatchBefore: rep.MatchBefore, MatchAfter: rep.MatchAfter,
					ChangedUncorrupted: rep.ChangedUncorrupted, Uncorrupted: rep.Uncorrupted, RewrittenUncorrupted: rep.RewrittenUncorrupted,
					Seed: rep.Seed, Dev: rep.Dev, Test: rep.Test, ByRule: rep.Rule, Rules: rep.Rules})
			}
			w := f.Out
			fmt.Fprintf(w, "EHRSQL %s, seed %d: %d corrupted gold queries (%d gold queries had no literal naming a stored value)\n", split, rep.Seed, rep.N, rep.NotCorrupted)
			fmt.Fprintf(w, "answer matches gold   before grounding %.4f   after %.4f\n", rep.MatchBefore, rep.MatchAfter)
			fmt.Fprintf(w, "  development half    n=%d  before %.4f  after %.4f  (thresholds chosen here)\n", rep.Dev.N, rep.Dev.MatchBefore, rep.Dev.MatchAfter)
			fmt.Fprintf(w, "  test half           n=%d  before %.4f  after %.4f\n", rep.Test.N, rep.Test.MatchBefore, rep.Test.MatchAfter)
			for _, r := range []string{cohort.RuleCase, cohort.RuleDropSuffix, cohort.RuleSynonym, cohort.RuleMisspell} {
				x := rep.Rule[r]
				fmt.Fprintf(w, "  rule %-14s n=%d  before %.4f  after %.4f\n", r, x.N, x.MatchBefore, x.MatchAfter)
			}
			fmt.Fprintf(w, "uncorrupted gold queries: %d grounded, %d rewritten, %d with another answer\n", rep.Uncorrupted, rep.RewrittenUncorrupted, rep.ChangedUncorrupted)
			fmt.Fprintln(w, "corruption rules:")
			for _, r := range rep.Rules {
				fmt.Fprintln(w, "  "+r)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&dir, "ehrsql", "", "EHRSQL 2024 folder (with valid/data.json, label.json, answer.json)")
	cmd.Flags().StringVar(&db, "db", "", "database file (default: mimic_iv_demo.sqlite in the EHRSQL folder)")
	cmd.Flags().StringVar(&split, "split", "valid", "split to evaluate")
	cmd.Flags().Uint64Var(&seed, "seed", 1, "seed of the corruption generator")
	cmd.Flags().IntVar(&limit, "limit", 0, "use only the first N questions of the split")
	cmd.Flags().StringVar(&out, "out", "", "write the per-query cases to OUT.json")
	cmd.Flags().BoolVar(&asJSON, "json", false, `print {"n":...,"match_before":...,"match_after":...,"changed_uncorrupted":...,"dev":{...},"test":{...},...}`)
	_ = cmd.MarkFlagRequired("ehrsql")
	return cmd
}

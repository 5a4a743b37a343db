package cli

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/export"
	"github.com/clinsight/clinsight/internal/durfmt"
	"github.com/clinsight/clinsight/internal/progress"
)

func newTrialsCmd(f *Factory) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "trials",
		Short: "Import clinical trials and match patients to them",
	}
	cmd.AddCommand(newTrialsImportCmd(f), newTrialsMatchCmd(f))
	return cmd
}

func newTrialsImportCmd(f *Factory) *cobra.Command {
	var (
		db, name        string
		replace, noEmbd bool
	)
	cmd := &cobra.Command{
		Use:   "import PATH... --db DB",
		Short: "Import trials: ClinicalTrials.gov XML or JSON, TrialGPT or BIRCO JSONL, directories and zip archives",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			src, err := ws.Resolve(db)
			if err != nil {
				return err
			}
			pp := newProgressPrinter(f.Err)
			res, err := ws.Trials().Import(cmd.Context(), src, args, trials.ImportOptions{Replace: replace, Progress: pp.Report})
			pp.Done()
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "imported %d trials (%d replaced) with %d criteria from %d files in %s; %d trials in the database\n",
				res.Trials, res.Replaced, res.Criteria, res.Files, durfmt.Human(res.Elapsed), res.Total)
			fmt.Fprintf(f.Out, "search index: %s, optimised in %s\n", humanBytes(res.IndexBytes), durfmt.Human(res.IndexTime))
			if res.CutFields > 0 {
				what := fmt.Sprintf("%d fields were", res.CutFields)
				if res.CutFields == 1 {
					what = "1 field was"
				}
				fmt.Fprintf(f.Out, "%s longer than any registry allows and cut (the stored text ends with \"[…]\"):\n", what)
				for _, c := range res.Cuts {
					fmt.Fprintf(f.Out, "  %s\n", c)
				}
				if len(res.Cuts) < res.CutFields {
					fmt.Fprintf(f.Out, "  ... and %d more\n", res.CutFields-len(res.Cuts))
				}
			}
			if err := register(f, ws, src, name, app.SourceCSV, "clinical trials"); err != nil {
				return err
			}
			if noEmbd {
				return nil
			}
			// Embed the conditions and interventions now, once, rather
			// than on the first match.
			m, err := ws.Trials().Open(cmd.Context(), src, app.TrialsOptions{})
			if err != nil {
				return err
			}
			defer m.Close()
			start := time.Now()
			n, err := m.IndexItems(cmd.Context(), func(done, total int) {
				pp.Report(progress.Report{Stage: "Embedding conditions and interventions", Done: int64(done), Total: int64(total), Unit: "items"})
			})
			pp.Done()
			if err != nil {
				return err
			}
			fmt.Fprintf(f.Out, "embedded %d conditions and interventions in %s (%s)\n", n, durfmt.Human(time.Since(start)), m.Embedder.Label)
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database file or data source name (created if missing)")
	cmd.Flags().BoolVar(&replace, "replace", false, "delete the trials already in the database first")
	cmd.Flags().StringVar(&name, "name", "", "register the database as a data source with this name")
	cmd.Flags().BoolVar(&noEmbd, "no-embed", false, "do not embed the conditions and interventions now (matching does it for its candidates)")
	_ = cmd.MarkFlagRequired("db")
	return cmd
}

func newTrialsMatchCmd(f *Factory) *cobra.Command {
	var (
		db, xlsx, model      string
		top                  int
		noLLM, asJSON, noFlt bool
		recruiting           bool
	)
	cmd := &cobra.Command{
		Use:   `match --db DB "patient description"`,
		Short: "Rank the trials of a database for a patient",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
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
			pp := newProgressPrinter(f.Err)
			res, err := m.Match(cmd.Context(), trials.Request{
				Patient: args[0], Top: top, UseModel: !noLLM,
				FilterAge: !noFlt, FilterSex: !noFlt, RecruitingOnly: recruiting,
				Progress: func(stage string, done, total int) {
					if total > 0 {
						pp.Report(progress.Report{Stage: stage, Done: int64(done), Total: int64(total), Unit: "trials"})
					}
				},
			})
			pp.Done()
			if err != nil {
				return err
			}
			res.Notices = append(m.Notices, res.Notices...)
			for _, n := range res.Notices {
				fmt.Fprintln(f.Err, "note:", n)
			}
			if xlsx != "" {
				prov := export.Provenance{AppVersion: f.Version, DataSource: m.Path, Created: time.Now()}
				if res.Model != "" {
					prov.Models = append(prov.Models, res.Model)
				}
				prov.Models = append(prov.Models, res.Embedder)
				if _, err := ws.Trials().Export(cmd.Context(), xlsx, res, prov); err != nil {
					return err
				}
				fmt.Fprintf(f.Err, "wrote %d trials to %s\n", len(res.Trials), xlsx)
			}
			if asJSON {
				enc := json.NewEncoder(f.Out)
				return enc.Encode(res)
			}
			printMatch(f, res)
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database holding the trials (file or data source name)")
	cmd.Flags().IntVar(&top, "top", 10, "number of trials to show")
	cmd.Flags().BoolVar(&noLLM, "no-llm", false, "rank without a model (deterministic concepts, lexical embedder, no eligibility check)")
	cmd.Flags().StringVar(&model, "model", "", "chat model (default: the workspace's chat model)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	cmd.Flags().StringVar(&xlsx, "xlsx", "", "also write the ranked trials, their criteria and the provenance to this Excel workbook")
	cmd.Flags().BoolVar(&noFlt, "no-filters", false, "do not drop trials whose age or sex limits exclude the patient")
	cmd.Flags().BoolVar(&recruiting, "recruiting", false, "only trials that recruit (or will)")
	_ = cmd.MarkFlagRequired("db")
	return cmd
}

// printMatch prints the ranked trials as a table.
func printMatch(f *Factory, res *trials.Result) {
	q := res.Query
	age := "age not stated"
	if q.HasAge {
		age = fmt.Sprintf("%g years", q.Age)
	}
	sex := string(q.Sex)
	if sex == "" {
		sex = "sex not stated"
	}
	var cs []string
	for _, c := range q.Concepts {
		if c.Negated || c.Weight <= 0 {
			continue
		}
		cs = append(cs, fmt.Sprintf("%s (%.2g)", c.Text, c.Weight))
		if len(cs) == 12 {
			break
		}
	}
	fmt.Fprintf(f.Out, "patient: %s, %s; concepts (%s): %s\n", age, sex, q.Source, strings.Join(cs, ", "))
	fmt.Fprintf(f.Out, "%d candidates ranked, %d removed by filters, %s\n\n", res.Candidates, res.Filtered, durfmt.Human(res.Elapsed))
	fmt.Fprintf(f.Out, "%4s  %-12s %9s %9s %9s %8s %6s  %s\n", "rank", "trial", "bm25", "sts1", "sts2", "combo", "elig", "title")
	for _, r := range res.Trials {
		el := "-"
		if r.Eligibility != nil {
			if r.Eligibility.Error != "" {
				el = "err"
			} else {
				el = fmt.Sprintf("%.2f", r.Eligibility.Score)
			}
		}
		fmt.Fprintf(f.Out, "%4d  %-12s %9s %9s %9s %8.2f %6s  %s\n", r.Rank, r.Trial.ID,
			compText(r.BM25), compText(r.STS1), compText(r.STS2), r.Combo.Score, el, truncateText(r.Trial.Title, 70))
	}
}

// compText shows a component as "score#rank".
func compText(c trials.Component) string { return fmt.Sprintf("%.2f#%d", c.Score, c.Rank) }

func truncateText(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

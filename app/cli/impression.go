package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app/impression"
)

// impressionFlags are the pipeline options shared by "impression" and
// "eval impressions".
type impressionFlags struct {
	noLLM      bool
	model      string
	examples   int
	iterations int
	threshold  float64
	seed       int
}

func (fl *impressionFlags) register(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.BoolVar(&fl.noLLM, "no-llm", false, "no model: answer with the impression of a similar report (retrieved, not generated)")
	fs.StringVar(&fl.model, "model", "", "chat model (default: the workspace's chat model)")
	fs.IntVar(&fl.examples, "examples", impression.DefaultExamples, "number of similar reports in the prompt (N_s)")
	fs.IntVar(&fl.iterations, "iterations", impression.DefaultIterations, "model calls of the iterative optimization (I)")
	fs.Float64Var(&fl.threshold, "threshold", 0, "mean ROUGE-1 F1 (0-1) separating good from bad responses; 0 = adaptive")
	fs.IntVar(&fl.seed, "seed", -1, "model seed for reproducible answers (-1: none)")
}

func (fl *impressionFlags) options() impression.Options {
	o := impression.Options{Model: fl.model, Examples: fl.examples, Iterations: fl.iterations, Threshold: fl.threshold, NoLLM: fl.noLLM}
	if fl.seed >= 0 {
		o.Seed = new(fl.seed)
	}
	return o
}

func newImpressionCmd(f *Factory) *cobra.Command {
	var (
		db     string
		asJSON bool
		fl     impressionFlags
	)
	cmd := &cobra.Command{
		Use:   `impression --db DB "FINDINGS"`,
		Short: "Write the IMPRESSION of radiology FINDINGS from similar reports of a corpus (ImpressionGPT)",
		Long: `Labels the findings with CheXpert's 14 observations, finds the most similar
reports of the corpus in DB (see 'clinsight reports import'), builds a
few-shot prompt from them and lets the chat model refine its answer over a few
iterations scored by ROUGE-1 against the similar reports' impressions; the best
answer is printed. With --no-llm, or when the model fails, the answer is the
impression of a similar report, marked as retrieved.`,
		Example: `  clinsight impression --db reports "Heart size is normal. The lungs are clear. No effusion or pneumothorax."
  clinsight impression --db demo --no-llm --json "Mild cardiomegaly. Small left pleural effusion."`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if strings.TrimSpace(args[0]) == "" {
				return errors.New("no findings given")
			}
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			src, err := ws.Resolve(db)
			if err != nil {
				return err
			}
			corpus, err := ws.Impressions().Corpus(cmd.Context(), src)
			if err != nil {
				return err
			}
			p, err := ws.Impressions().Pipeline(corpus, fl.options())
			if err != nil {
				return err
			}
			res, err := p.Generate(cmd.Context(), impression.Request{Findings: args[0]}, nil)
			if err != nil {
				return err
			}
			if res.Notice != "" {
				fmt.Fprintln(f.Err, "note:", res.Notice)
			}
			if asJSON {
				enc := json.NewEncoder(f.Out)
				enc.SetEscapeHTML(false)
				return enc.Encode(impressionJSON(res))
			}
			return writeImpressionText(f.Out, res)
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database holding the report corpus (file path or data source name)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the result as JSON")
	fl.register(cmd)
	_ = cmd.MarkFlagRequired("db")
	return cmd
}

// labelsJSON maps the non-blank observations to 1, 0 or -1.
func labelsJSON(l impression.Labels) map[string]int {
	m := map[string]int{}
	for _, o := range impression.AllObservations() {
		if l[o] != impression.Blank {
			m[o.String()] = int(l[o])
		}
	}
	return m
}

type similarJSON struct {
	ID         int64          `json:"id"`
	UID        string         `json:"uid"`
	Distance   float64        `json:"distance"`
	Similarity float64        `json:"similarity"`
	Labels     map[string]int `json:"labels"`
	Findings   string         `json:"findings"`
	Impression string         `json:"impression"`
}

type iterationJSON struct {
	Iteration int     `json:"iteration"`
	Role      string  `json:"role,omitempty"`
	Score     float64 `json:"score"`
	Response  string  `json:"response,omitempty"`
	Error     string  `json:"error,omitempty"`
}

type impressionResultJSON struct {
	Impression string          `json:"impression"`
	Source     string          `json:"source"`
	Score      float64         `json:"score"`
	Threshold  float64         `json:"threshold,omitempty"`
	Model      string          `json:"model,omitempty"`
	Notice     string          `json:"notice,omitempty"`
	Labels     map[string]int  `json:"labels"`
	Similar    []similarJSON   `json:"similar"`
	Retrieved  int             `json:"retrieved"`
	Iterations []iterationJSON `json:"iterations"`
	ElapsedMS  int64           `json:"elapsed_ms"`

	// Contradictions says how the impression contradicts the findings
	// (empty when consistent).
	Contradictions []string `json:"contradictions"`
}

func impressionJSON(res impression.Result) impressionResultJSON {
	out := impressionResultJSON{Impression: res.Impression, Source: res.Source(), Score: res.Score, Threshold: res.Threshold,
		Model: res.Model, Notice: res.Notice, Labels: labelsJSON(res.Labels), Retrieved: res.Retrieved,
		Similar: []similarJSON{}, Iterations: []iterationJSON{}, ElapsedMS: res.Elapsed.Milliseconds(), Contradictions: []string{}}
	for _, c := range res.Contradictions {
		out.Contradictions = append(out.Contradictions, c.String())
	}
	for _, m := range res.Examples {
		out.Similar = append(out.Similar, similarJSON{ID: m.Report.ID, UID: m.Report.UID, Distance: m.Distance,
			Similarity: m.Similarity, Labels: labelsJSON(m.Report.Labels), Findings: m.Report.Findings, Impression: m.Report.Impression})
	}
	for _, it := range res.Iterations {
		out.Iterations = append(out.Iterations, iterationJSON{Iteration: it.Number, Role: it.Role, Score: it.Score, Response: it.Response, Error: it.Err})
	}
	return out
}

// writeImpressionText prints the observations, the similar reports, the
// iterations and the answer.
func writeImpressionText(w io.Writer, res impression.Result) error {
	obs := res.Labels.Positives()
	if obs == "" {
		obs = "none positive"
	}
	fmt.Fprintf(w, "Observations: %s\n", obs)
	fmt.Fprintf(w, "Similar reports (label distance, text similarity):\n")
	for i, m := range res.Examples {
		mark := " "
		if i == res.Retrieved {
			mark = "*"
		}
		fmt.Fprintf(w, " %s%d. [%s] distance %.2f, similarity %.2f: %s\n", mark, i+1, m.Report.UID, m.Distance, m.Similarity, oneLineText(m.Report.Impression, 100))
	}
	for _, it := range res.Iterations {
		if it.Err != "" {
			fmt.Fprintf(w, "Iteration %d: failed: %s\n", it.Number, it.Err)
			continue
		}
		fmt.Fprintf(w, "Iteration %d: %s, ROUGE-1 %.3f (threshold %.3f): %s\n", it.Number, it.Role, it.Score, res.Threshold, oneLineText(it.Response, 120))
	}
	label := "Impression (generated by " + res.Model + ")"
	if !res.Generated {
		label = "Impression (retrieved from similar report " + res.Examples[res.Retrieved].Report.UID + ", not generated)"
	}
	if _, err := fmt.Fprintf(w, "%s:\n%s\n", label, res.Impression); err != nil {
		return err
	}
	if len(res.Contradictions) > 0 {
		_, err := fmt.Fprintf(w, "Check before using it: %s\n", impression.DescribeContradictions(res.Contradictions))
		return err
	}
	return nil
}

// oneLineText flattens and shortens text for a listing.
func oneLineText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if r := []rune(s); len(r) > n {
		return string(r[:n-1]) + "…"
	}
	return s
}

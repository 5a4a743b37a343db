package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/cohort"
	"github.com/clinsight/clinsight/internal/durfmt"
)

func newAskCmd(f *Factory) *cobra.Command {
	var (
		db, xlsx, model string
		asJSON          bool
		k, attempts     int
		exclude         []int64 // OMOP: concept ids removed from the concept sets
		withoutSteps    []int   // criteria of the attrition switched off
		exp             app.ExportOptions
	)
	cmd := &cobra.Command{
		Use:   `ask --db DB "question"`,
		Short: "Answer a question about a data source with validated, read-only SQL",
		Long: `Finds the tables the question is about, has the local model classify it and
write SQLite SQL, validates the SQL, corrects it with the database's own error
messages (up to 10 attempts), runs it read-only and explains the result. Numbers
in the explanation that are not found in the result or the question are marked
[unverified]. Questions the data cannot answer (out of scope, not medical, after
the data's collection period, or asking for private details) are declined
without SQL.`,
		Example: `  clinsight ask --db demo "How many female patients had a heart attack?"
  clinsight ask --db demo --json "What are the five most common diagnoses?"`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			ws, err := f.Workspace()
			if err != nil {
				return err
			}
			src, err := ws.Resolve(db)
			if err != nil {
				return err
			}
			pp := newProgressPrinter(f.Err)
			p, err := ws.Cohort().Open(ctx, src, app.CohortOptions{Model: model, TopK: k, MaxAttempts: attempts, Progress: pp.Report})
			pp.Done()
			if err != nil {
				return err
			}
			defer p.Close()
			streamed := false
			ans, askErr := p.Ask(ctx, cohort.Request{Question: args[0], ExcludeConcepts: exclude}, func(e cohort.Event) {
				if asJSON {
					return
				}
				switch e.Kind {
				case cohort.EventStage:
					fmt.Fprintf(f.Err, "… %s\n", e.Stage)
				case cohort.EventDelta:
					io.WriteString(f.Out, e.Text)
					streamed = true
				}
			})
			if err := switchStepsOff(ctx, p, ans, withoutSteps); err != nil { // ask_attrition.go
				return err
			}
			if xlsx != "" && ans.Result != nil {
				exp.Source, exp.Version = src, f.Version
				sum, err := ws.Cohort().Export(ctx, xlsx, ans, exp)
				if err != nil {
					return exportHint(err)
				}
				fmt.Fprintf(f.Err, "wrote %d rows to %s\n", sum.Rows, xlsx)
			}
			if asJSON {
				enc := json.NewEncoder(f.Out)
				enc.SetEscapeHTML(false) // "<11" as written
				if err := enc.Encode(answerJSON(ans)); err != nil {
					return err
				}
			} else {
				if streamed {
					fmt.Fprintln(f.Out)
				}
				writeAnswerText(f.Out, ans, streamed)
				writeSuppressionNote(f.Err, ans.Disclosure.Shown)
			}
			if askErr != nil {
				return askErr
			}
			if ans.Status == cohort.StatusFailed {
				return fmt.Errorf("no answer: %s", ans.Message)
			}
			return nil
		},
	}
	cmd.Flags().StringVar(&db, "db", "", "database file or data source name")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the answer, SQL, attempts and rows as one JSON object")
	cmd.Flags().StringVar(&xlsx, "xlsx", "", "also export the cohort (rows, attempts, provenance) to this Excel workbook (aggregates small-cell suppressed)")
	addExportFlags(cmd, &exp)
	cmd.Flags().StringVar(&model, "model", "", "model for SQL and explanation (default: the SQL and chat models of the settings)")
	cmd.Flags().IntVar(&k, "k", cohort.DefaultTopK, "tables retrieved")
	cmd.Flags().IntVar(&attempts, "max-attempts", cohort.DefaultMaxAttempts, "statements tried before giving up")
	cmd.Flags().Int64SliceVar(&exclude, "exclude-concept", nil, "OMOP sources: remove this concept id from the question's concept sets (repeatable)")
	cmd.Flags().IntSliceVar(&withoutSteps, "without-step", nil, "switch criterion N of the attrition table off and count again without the model (repeatable)")
	_ = cmd.MarkFlagRequired("db")
	return cmd
}

// writeAnswerText prints an answer for people: the explanation (unless it
// was streamed already) or the reason there is none, the SQL, the attempts,
// the retrieved tables and the first rows.
func writeAnswerText(w io.Writer, ans *cohort.Answer, streamed bool) {
	switch {
	case ans.Explanation != "" && !streamed:
		fmt.Fprintln(w, ans.MarkedExplanation())
	case ans.Explanation == "" && ans.Message != "":
		fmt.Fprintln(w, ans.Message)
	}
	if un := ans.Unverified(); len(un) > 0 {
		texts := make([]string, len(un))
		for i, n := range un {
			texts[i] = n.Text
		}
		fmt.Fprintf(w, "Unverified numbers (not found in the result or the question): %s\n", strings.Join(texts, ", "))
	}
	if ans.Explanation != "" && ans.Message != "" {
		fmt.Fprintln(w, ans.Message)
	}
	writeConceptSets(w, ans) // OMOP sources (ask_omop.go)
	// A cohort written as a chain of criteria (ask_attrition.go).
	writeAttrition(w, ans.Attrition)
	if ans.SQL != "" {
		fmt.Fprintf(w, "\nSQL:\n  %s\n", strings.ReplaceAll(ans.SQL, "\n", "\n  "))
	}
	if len(ans.Attempts) > 0 {
		fmt.Fprintln(w, "\nAttempts:")
		tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
		for _, a := range ans.Attempts {
			outcome := fmt.Sprintf("%d rows", a.Rows)
			if a.Error != "" {
				outcome = a.Error
			}
			fmt.Fprintf(tw, "  %d\t%s\t%s\t%s\t%s\n", a.Number, a.Source, a.Stage, outcome, durfmt.Human(a.Duration))
		}
		tw.Flush()
	}
	if ans.Retrieval != nil {
		var ts []string
		for _, t := range ans.Retrieval.Tables {
			ts = append(ts, fmt.Sprintf("%s %.2f", t.Table, t.Score))
		}
		fmt.Fprintf(w, "\nTables: %s\n", strings.Join(ts, ", "))
	}
	if ans.Result != nil {
		fmt.Fprintln(w)
		res := ans.Result
		writeHead(w, res.Columns, res.Rows[:min(len(res.Rows), headRows(w))], int64(len(res.Rows)))
		fmt.Fprintf(w, "%d rows\n", len(res.Rows))
		if n := ans.Result.Notice(); n != "" {
			fmt.Fprintln(w, n)
		}
	}
	fmt.Fprintf(w, "\n%s · %d model calls · %d tokens · %s\n", ans.Status, ans.Calls(), ans.Usage.Tokens(), durfmt.Human(ans.Elapsed))
}

// askJSON is the --json shape of an answer.
type askJSON struct {
	Question    string               `json:"question"`
	Status      cohort.Status        `json:"status"`
	Category    cohort.Category      `json:"category,omitempty"`
	Reason      string               `json:"reason,omitempty"`
	Message     string               `json:"message,omitempty"`
	Answer      string               `json:"answer"`
	Unverified  []string             `json:"unverified"`
	Numbers     []cohort.NumberCheck `json:"numbers"`
	SQL         string               `json:"sql"`
	Attempts    []cohort.Attempt     `json:"attempts"`
	Tables      []cohort.TableScore  `json:"tables"`
	Embedder    string               `json:"embedder,omitempty"`
	Columns     []string             `json:"columns"`
	Rows        [][]any              `json:"rows"`
	Truncated   bool                 `json:"truncated"`
	LLMCalls    int                  `json:"llm_calls"`
	Tokens      int                  `json:"tokens"`
	ElapsedMS   int64                `json:"elapsed_ms"`
	NonLLMMS    int64                `json:"non_llm_ms"`
	DataSource  string               `json:"data_source,omitempty"`
	ModelsUsed  []string             `json:"models,omitempty"`
	StageTiming []cohort.StageTiming `json:"stages"`
	// Suppressed, MinCell and Individual are set for an aggregate-only
	// source: the cells shown as "<k".
	Suppressed []suppressedJSON `json:"suppressed,omitempty"`
	MinCell    int              `json:"min_cell,omitempty"`
	Individual string           `json:"individual_column,omitempty"`
	// ExplainedFrom says what the explanation was written from when not
	// the exact result: "suppressed result" or "row count".
	ExplainedFrom string `json:"explained_from,omitempty"`
	// Attrition is the patients left after each criterion of a cohort
	// written as a chain of criteria (ask_attrition.go).
	Attrition *cohort.Attrition `json:"attrition,omitempty"`
}

// answerJSON converts an answer to its --json shape.
func answerJSON(ans *cohort.Answer) askJSON {
	out := askJSON{
		Question: ans.Question, Status: ans.Status, Category: ans.Category, Reason: ans.Reason, Message: ans.Message,
		Answer: ans.Explanation, Unverified: []string{}, Numbers: ans.Numbers, SQL: ans.SQL, Attempts: ans.Attempts,
		Tables: []cohort.TableScore{}, Columns: []string{}, Rows: [][]any{}, LLMCalls: ans.Calls(), Tokens: ans.Usage.Tokens(),
		ElapsedMS: ans.Elapsed.Milliseconds(), NonLLMMS: ans.NonLLMTime().Milliseconds(), DataSource: ans.DataSource,
		ModelsUsed: ans.Models, StageTiming: ans.Stages, Attrition: ans.Attrition,
	}
	switch {
	case ans.Disclosure.RowsWithheld:
		out.ExplainedFrom = "row count"
	case ans.Disclosure.Explained != nil:
		out.ExplainedFrom = "suppressed result"
	}
	if out.Numbers == nil {
		out.Numbers = []cohort.NumberCheck{}
	}
	for _, n := range ans.Unverified() {
		out.Unverified = append(out.Unverified, n.Text)
	}
	if ans.Retrieval != nil {
		out.Tables, out.Embedder = ans.Retrieval.Tables, ans.Retrieval.Embedder
	}
	if ans.Result != nil {
		out.Columns, out.Truncated = ans.Result.ColumnNames(), ans.Result.Truncated
		out.Suppressed, out.MinCell, out.Individual = suppressedCells(ans.Result, ans.Disclosure.Shown)
		for _, r := range ans.Result.Rows {
			row := make([]any, len(r))
			for i, v := range r {
				if x, ok := v.(float64); ok && (math.IsInf(x, 0) || math.IsNaN(x)) {
					v = fmt.Sprint(x) // JSON has no infinities
				}
				row[i] = v
			}
			out.Rows = append(out.Rows, row)
		}
	}
	return out
}

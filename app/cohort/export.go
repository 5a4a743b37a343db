package cohort

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"path/filepath"
	"strings"
	"time"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
	"github.com/clinsight/clinsight/export"
)

// ExportOptions adjust ExportWorkbookWith; the zero value writes the
// answer as it is.
type ExportOptions struct {
	// Progress, if not nil, receives the rows written.
	Progress func(rows int64)
	// Result replaces the answer's result on the Cohort sheet (the result
	// as disclosure control lets it leave: suppressed or pseudonymised).
	Result *datasets.Result
	// Provenance entries are added to the Provenance sheet (what was
	// suppressed, pseudonymised, shifted).
	Provenance []export.Entry
	// MinCell, when at least 2, shows the patient counts of the
	// Definition sheet under it as "<k".
	MinCell int
	// OmitExplanation, when not "", leaves the explanation out of the
	// Provenance sheet and says why (it was written from exact values and
	// the export is suppressed).
	OmitExplanation string
	// BeforeCommit is export.Options.BeforeCommit (the audit record).
	BeforeCommit func(sha256 string, sum export.Summary) error
	// Columns and Rows, when Rows is not nil, replace the Cohort sheet's
	// result by rows read from the database as they are written (a
	// streamed export); Late then says on the Provenance sheet how many
	// were read and what the limits left out (export.Provenance.Late).
	Columns []string
	Rows    iter.Seq2[[]any, error]
	Late    func() []export.Entry
}

// ExportWorkbookWith writes an answer to an .xlsx workbook: the cohort
// (the result rows, or opts.Result or opts.Rows in their place) on sheet
// "Cohort", every attempt on "Attempts", the retrieved tables with their
// scores on "Retrieval", and a Provenance sheet with the question, the
// SQL, the attempts, the models, the data source, the settings and the
// explanation with its unverified numbers. For an OMOP source, a
// Definition sheet describes the cohort (entry event, inclusion criteria,
// concept sets) and the concept sets are also written beside the workbook
// as ATLAS JSON (ConceptSetsPath). The file is written atomically;
// opts.Progress, if not nil, receives the rows written.
func ExportWorkbookWith(ctx context.Context, path string, ans *Answer, appVersion string, opts ExportOptions) (export.Summary, error) {
	if ans == nil || ans.Result == nil {
		return export.Summary{}, errors.New("export the cohort: there is no result to export")
	}
	res := ans.Result
	if opts.Result != nil {
		res = opts.Result
	}
	cohortSheet := export.Table{Name: "Cohort", Columns: res.ColumnNames(), Rows: rowsOf(res.Rows)}
	if opts.Rows != nil {
		cohortSheet.Columns, cohortSheet.Rows = opts.Columns, opts.Rows
	}
	tables := []export.Table{
		cohortSheet,
		{Name: "Attempts", Columns: []string{"attempt", "source", "stage", "sql", "error", "rows", "ms"}, Rows: attemptRows(ans.Attempts)},
	}
	if ans.Retrieval != nil {
		tables = append(tables, export.Table{Name: "Retrieval", Columns: []string{"table", "score", "similarity", "evidence"}, Rows: retrievalRows(ans.Retrieval)})
	}
	if len(ans.ConceptSets) > 0 { // OMOP: the cohort definition and its concept sets
		cols, rows := DefinitionRows(ans)
		if opts.MinCell >= 2 {
			for _, r := range rows {
				if n, ok := r[len(r)-1].(int64); ok && n >= 1 && n < int64(opts.MinCell) {
					r[len(r)-1] = disclosure.Suppressed{K: opts.MinCell}
				}
			}
		}
		tables = append(tables, export.Table{Name: "Definition", Columns: cols, Rows: rowsOf(rows)})
	}
	attrition := ans.Attrition.Under(opts.MinCell) // a chain of criteria (attrition.go)
	if attrition != nil && len(attrition.Steps) > 0 {
		tables = append(tables, AttritionSheet(attrition))
	}
	prov := export.Provenance{AppVersion: appVersion, DataSource: ans.DataSource, Query: ans.SQL, Models: ans.Models, Created: time.Now()}
	prov.Add("Question", ans.Question)
	prov.Add("Status", string(ans.Status))
	if ans.Category != "" {
		prov.Add("Classification", string(ans.Category)+": "+ans.Reason)
	}
	prov.Add("Attempts", len(ans.Attempts))
	if opts.Rows == nil {
		prov.Add("Rows", len(res.Rows))
		if n := res.Notice(); n != "" {
			prov.Add("Truncated", "yes: "+n)
		}
	}
	prov.Late = opts.Late
	if ans.Retrieval != nil {
		prov.Add("Retrieval embedder", ans.Retrieval.Embedder)
		var ts []string
		for _, t := range ans.Retrieval.Tables {
			ts = append(ts, fmt.Sprintf("%s (%.3f)", t.Table, t.Score))
		}
		prov.Add("Retrieved tables", strings.Join(ts, ", "))
	}
	s := ans.Settings
	prov.Add("Settings", fmt.Sprintf("top-k %d, relevance threshold %.3f, up to %d attempts, temperature %g, seed %d", s.TopK, s.MinRelevance, s.MaxAttempts, s.Temperature, s.Seed))
	if s.Now != "" {
		prov.Add("Current time used", s.Now)
	}
	if s.Period != "" {
		prov.Add("Data collection period", s.Period)
	}
	prov.Add("Model calls", fmt.Sprintf("%d requests, %d prompt + %d completion tokens", ans.Calls(), ans.Usage.PromptTokens, ans.Usage.CompletionTokens))
	if ans.Explanation != "" && opts.OmitExplanation != "" {
		prov.Add("Answer", "not exported: "+opts.OmitExplanation)
	} else if ans.Explanation != "" {
		prov.Add("Answer", ans.MarkedExplanation())
		var un []string
		for _, n := range ans.Unverified() {
			un = append(un, n.Text)
		}
		if len(un) > 0 {
			prov.Add("Unverified numbers", strings.Join(un, ", ")+" (not found in the result or the question)")
		}
	}
	if ans.Message != "" {
		prov.Add("Note", ans.Message)
	}
	if attrition != nil && len(attrition.Steps) > 0 {
		prov.Add("Attrition", attrition.Summary())
	}
	if len(ans.ConceptSets) > 0 {
		prov.Add("Concept sets (ATLAS JSON)", filepath.Base(ConceptSetsPath(path)))
	}
	prov.Extra = append(prov.Extra, opts.Provenance...)
	sum, err := export.WriteWorkbook(ctx, path, tables, prov, export.Options{Progress: opts.Progress, BeforeCommit: opts.BeforeCommit})
	if err == nil && len(ans.ConceptSets) > 0 {
		err = WriteConceptSets(ConceptSetsPath(path), ans.ConceptSets)
	}
	return sum, err
}

func rowsOf(rows [][]any) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		for _, r := range rows {
			if !yield(r, nil) {
				return
			}
		}
	}
}

func attemptRows(as []Attempt) iter.Seq2[[]any, error] {
	rows := make([][]any, len(as))
	for i, a := range as {
		rows[i] = []any{int64(a.Number), a.Source, a.Stage, a.SQL, a.Error, int64(a.Rows), a.Duration.Milliseconds()}
	}
	return rowsOf(rows)
}

func retrievalRows(r *Retrieval) iter.Seq2[[]any, error] {
	rows := make([][]any, len(r.Tables))
	for i, t := range r.Tables {
		rows[i] = []any{t.Table, t.Score, t.Similarity, strings.Join(t.Evidence, "; ")}
	}
	return rowsOf(rows)
}

package impression

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/clinsight/clinsight/export"
)

// ExportRow is one impression to export.
type ExportRow struct {
	// UID names the report (a batch row's uid, or "" for typed findings).
	UID string
	// Result is the pipeline's result.
	Result Result
	// Final is the impression the user accepted (possibly edited); empty
	// means Result.Impression.
	Final string
	// Reference is the report's real impression, when known (batch CSV
	// with an impression column); "" otherwise.
	Reference string
}

// final returns the accepted impression.
func (r ExportRow) final() string {
	if strings.TrimSpace(r.Final) != "" {
		return r.Final
	}
	return r.Result.Impression
}

// contradictions are the accepted impression's contradictions of the
// findings: the pipeline's for an unedited impression, checked again for an
// edited one.
func (r ExportRow) contradictions() []Contradiction {
	if r.final() == r.Result.Impression {
		return r.Result.Contradictions
	}
	return Contradictions(r.Result.Labels, r.final())
}

// ExportWorkbook writes the impressions, every iteration (prompt role,
// score, response) and the similar reports used to an .xlsx workbook with
// a Provenance sheet (atomic: an error or a cancellation leaves no file).
// The caller fills prov (app version, data source, models); the pipeline's
// settings are added to it. xopts are the caller's export options
// (progress, the audit record before commit).
func ExportWorkbook(ctx context.Context, path string, rows []ExportRow, opts Options, prov export.Provenance, xopts export.Options) (export.Summary, error) {
	impressions := export.Table{
		Name: "Impressions",
		Columns: []string{"uid", "findings", "observations", "impression", "source", "edited", "score_rouge1",
			"threshold", "iterations", "best_iteration", "model", "notice", "reference", "contradicts_findings", "contradictions"},
		Rows: func(yield func([]any, error) bool) {
			for _, r := range rows {
				res := r.Result
				best := any(nil)
				if res.Best >= 0 {
					best = res.Best + 1
				}
				cs := r.contradictions()
				if !yield([]any{r.UID, res.Findings, res.Labels.Positives(), r.final(), res.Source(),
					r.final() != res.Impression, res.Score, res.Threshold, len(res.Iterations), best,
					res.Model, res.Notice, r.Reference, len(cs) > 0, DescribeContradictions(cs)}, nil) {
					return
				}
			}
		},
	}
	iterations := export.Table{
		Name:    "Iterations",
		Columns: []string{"uid", "iteration", "role", "score_rouge1", "response", "error", "prompt_messages", "prompt_tokens", "completion_tokens"},
		Rows: func(yield func([]any, error) bool) {
			for _, r := range rows {
				for _, it := range r.Result.Iterations {
					if !yield([]any{r.UID, it.Number, it.Role, it.Score, it.Response, it.Err, len(it.Messages),
						it.Usage.PromptTokens, it.Usage.CompletionTokens}, nil) {
						return
					}
				}
			}
		},
	}
	examples := export.Table{
		Name:    "Similar reports",
		Columns: []string{"uid", "rank", "report_id", "report_uid", "source", "distance", "similarity", "observations", "findings", "impression", "retrieved"},
		Rows:    exampleRows(rows),
	}
	prov.Add("Pipeline", "ImpressionGPT: similar reports (label distance, TF-IDF ties), dynamic prompt, iterative ROUGE-1 optimization")
	prov.Add("Similar reports per input (N_s)", opts.Examples)
	prov.Add("Iterations (I)", opts.Iterations)
	if opts.Threshold > 0 {
		prov.Add("Good/bad threshold (mean ROUGE-1 F1)", opts.Threshold)
	} else {
		prov.Add("Good/bad threshold (mean ROUGE-1 F1)", "adaptive: the retrieved impression's agreement with the other examples")
	}
	prov.Add("Observation labeler", "CheXpert 14 observations, rule-based, "+LabelerVersion)
	prov.Add("Consistency check", "an impression is flagged (contradicts_findings) when, by the observation labeler, it calls the study normal while the findings have a positive observation, "+
		"leaves out or rules out a significant finding positive in the findings (pleural effusion, pneumothorax, consolidation, edema, cardiomegaly, fracture), "+
		"or reports one the findings rule out")
	if !opts.IgnoreConsistency {
		prov.Add("Retrieval", fmt.Sprintf("prefers, among the %d most similar reports, an impression consistent with the findings", RetrievalCandidates))
	}
	if opts.NoLLM {
		prov.Add("Mode", "retrieval only (no model): impressions are retrieved, not generated")
	}
	prov.Add("Impressions exported", len(rows))
	return export.WriteWorkbook(ctx, path, []export.Table{impressions, iterations, examples}, prov, xopts)
}

func exampleRows(rows []ExportRow) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		for _, r := range rows {
			for i, m := range r.Result.Examples {
				if !yield([]any{r.UID, i + 1, m.Report.ID, m.Report.UID, m.Report.Source, m.Distance, m.Similarity,
					m.Report.Labels.Positives(), m.Report.Findings, m.Report.Impression, i == r.Result.Retrieved}, nil) {
					return
				}
			}
		}
	}
}

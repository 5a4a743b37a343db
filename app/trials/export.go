package trials

import (
	"context"
	"fmt"
	"iter"
	"strings"

	"github.com/clinsight/clinsight/export"
)

// ExportWorkbook writes a match result to an Excel workbook: the ranked
// trials with each component's score and rank, one row per criterion with
// the model's verdict and evidence, the query concepts, and a Provenance
// sheet (the patient description, the concept source, models, notices).
// The write is atomic (an error or cancellation leaves no file). opts are
// the caller's export options (the audit record before commit).
func ExportWorkbook(ctx context.Context, path string, res *Result, prov export.Provenance, opts export.Options) (export.Summary, error) {
	if res == nil || res.Query == nil {
		return export.Summary{}, fmt.Errorf("export trials: no result to export")
	}
	ranked := export.Table{
		Name: "Ranked trials",
		Columns: []string{"rank", "trial", "title", "conditions", "interventions", "sex", "ages", "status", "phase",
			"bm25_score", "bm25_rank", "sts1_score", "sts1_rank", "sts2_score", "sts2_rank", "combo_score", "combo_rank",
			"eligibility_score", "eligibility_note"},
		Rows: rowsOf(res.Trials, func(r RankedTrial) []any {
			var el, note any
			if r.Eligibility != nil {
				if r.Eligibility.Error != "" {
					note = r.Eligibility.Error
				} else {
					el = r.Eligibility.Score
				}
			}
			t := r.Trial
			return []any{r.Rank, t.ID, t.Title, strings.Join(t.Conditions, "; "), strings.Join(t.Interventions, "; "),
				string(t.Sex), t.AgeLimits(), t.Status, t.Phase, r.BM25.Score, r.BM25.Rank, r.STS1.Score, r.STS1.Rank,
				r.STS2.Score, r.STS2.Rank, r.Combo.Score, r.Combo.Rank, el, note}
		}),
	}
	var crit [][]any
	for _, r := range res.Trials {
		if r.Eligibility != nil && len(r.Eligibility.Verdicts) > 0 {
			for _, v := range r.Eligibility.Verdicts {
				crit = append(crit, []any{r.Rank, r.Trial.ID, string(v.Kind), v.Index, v.Text, string(v.Verdict), v.Evidence, v.Explanation})
			}
			continue
		}
		for _, c := range r.Trial.Criteria() {
			crit = append(crit, []any{r.Rank, r.Trial.ID, string(c.Kind), c.Index, c.Text, string(VerdictMissing), nil, nil})
		}
	}
	criteria := export.Table{
		Name:    "Criteria",
		Columns: []string{"rank", "trial", "kind", "index", "criterion", "verdict", "evidence", "explanation"},
		Rows:    rowsOf(crit, func(r []any) []any { return r }),
	}
	concepts := export.Table{
		Name:    "Concepts",
		Columns: []string{"concept", "kind", "weight", "negated"},
		Rows:    rowsOf(res.Query.Concepts, func(c Concept) []any { return []any{c.Text, string(c.Kind), c.Weight, c.Negated} }),
	}
	if prov.Query == "" {
		prov.Query = res.Query.Patient
	}
	q := res.Query
	age := "not stated"
	if q.HasAge {
		age = fmtYears(q.Age) + " years"
	}
	sex := string(q.Sex)
	if sex == "" {
		sex = "not stated"
	}
	prov.Add("Patient age", age)
	prov.Add("Patient sex", sex)
	prov.Add("Concepts from", q.Source)
	prov.Add("Embedder", res.Embedder)
	if res.Model != "" {
		prov.Add("Chat model", res.Model)
	}
	prov.Add("Candidates ranked", res.Candidates)
	prov.Add("Removed by filters", res.Filtered)
	for i, n := range res.Notices {
		prov.Add(fmt.Sprintf("Notice %d", i+1), n)
	}
	return export.WriteWorkbook(ctx, path, []export.Table{ranked, criteria, concepts}, prov, opts)
}

// rowsOf adapts a slice to the exporter's row iterator.
func rowsOf[T any](xs []T, row func(T) []any) iter.Seq2[[]any, error] {
	return func(yield func([]any, error) bool) {
		for _, x := range xs {
			if !yield(row(x), nil) {
				return
			}
		}
	}
}

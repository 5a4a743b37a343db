package impression

import (
	"context"
	"strings"

	"github.com/clinsight/clinsight/app/eval"
	"github.com/clinsight/clinsight/internal/progress"
)

// EvalItem is one evaluated report.
type EvalItem struct {
	// UID identifies the report.
	UID string
	// Findings is the input; Reference its real impression; Hypothesis
	// the impression produced.
	Findings, Reference, Hypothesis string
	// Generated is true for a model's impression, false for a retrieved
	// one.
	Generated bool
	// Rouge scores Hypothesis against Reference.
	Rouge eval.Rouge
	// Notice is the pipeline's fallback notice, if any.
	Notice string
	// Contradictions are Hypothesis's contradictions of the findings
	// (see Contradictions); ReferenceContradicts is true when the report's
	// own impression contradicts its findings by the same rules.
	Contradictions       []Contradiction
	ReferenceContradicts bool
}

// EvalSummary is the result of an impression evaluation.
type EvalSummary struct {
	// N is the number of reports scored.
	N int
	// Mean holds the mean ROUGE-1, ROUGE-2 and ROUGE-L (fractions).
	Mean eval.Rouge
	// Generated and Retrieved count the answers by source.
	Generated, Retrieved int
	// ContradictionRate is the share (0–1) of the impressions produced
	// that contradict their findings' labels (see Contradictions);
	// ReferenceContradictionRate the share of the reports' own impressions
	// that do, for scale.
	ContradictionRate, ReferenceContradictionRate float64
	// Items are the per-report results in input order.
	Items []EvalItem
}

// EvaluateImpressions produces an impression for each test report with
// both findings and an impression and scores it with ROUGE (F1, no
// stemming, as the Open-i baselines) and by whether it contradicts its
// findings. With leaveOneOut the tests are
// corpus reports and each is excluded from its own examples. onProgress (may
// be nil) receives the reports done.
func EvaluateImpressions(ctx context.Context, p *Pipeline, tests []Report, leaveOneOut bool, onProgress progress.Func) (EvalSummary, error) {
	var sum EvalSummary
	var mean eval.RougeMean
	total, contradicting, referenceContradicting := 0, 0, 0
	for _, r := range tests {
		if strings.TrimSpace(r.Findings) != "" && strings.TrimSpace(r.Impression) != "" {
			total++
		}
	}
	for _, r := range tests {
		if strings.TrimSpace(r.Findings) == "" || strings.TrimSpace(r.Impression) == "" {
			continue
		}
		req := Request{Findings: r.Findings}
		if leaveOneOut {
			req.ExcludeID = r.ID
		}
		res, err := p.Generate(ctx, req, nil)
		if err != nil {
			return sum, err
		}
		item := EvalItem{UID: r.UID, Findings: r.Findings, Reference: r.Impression, Hypothesis: res.Impression,
			Generated: res.Generated, Notice: res.Notice}
		item.Rouge = eval.ComputeRouge(r.Impression, res.Impression, eval.RougeOptions{})
		item.Contradictions = res.Contradictions
		item.ReferenceContradicts = len(Contradictions(res.Labels, r.Impression)) > 0
		if len(item.Contradictions) > 0 {
			contradicting++
		}
		if item.ReferenceContradicts {
			referenceContradicting++
		}
		mean.Add(item.Rouge)
		if res.Generated {
			sum.Generated++
		} else {
			sum.Retrieved++
		}
		sum.Items = append(sum.Items, item)
		onProgress.Send(progress.Report{Stage: "impressions", Done: int64(len(sum.Items)), Total: int64(total), Unit: "reports"})
	}
	sum.N = mean.N
	sum.Mean = mean.Mean()
	if sum.N > 0 {
		sum.ContradictionRate = float64(contradicting) / float64(sum.N)
		sum.ReferenceContradictionRate = float64(referenceContradicting) / float64(sum.N)
	}
	return sum, nil
}

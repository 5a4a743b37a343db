package meta

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/clinsight/clinsight/export"
)

// Sheet names of the analyses ExportReport adds.
const (
	SummarySheet     = "Summary"
	SubgroupSheet    = "Subgroups"
	RegressionSheet  = "Meta-regression"
	BiasSheet        = "Small-study effects"
	LeaveOneOutSheet = "Leave-one-out"
	CumulativeSheet  = "Cumulative"
	InfluenceSheet   = "Influence"
	FunnelSheet      = "Funnel plot"
	BubbleSheet      = "Bubble plot"
	// SubgroupPlotSheet and CumulativePlotSheet hold the grouped and
	// cumulative forest plots.
	SubgroupPlotSheet   = "Subgroup forest plot"
	CumulativePlotSheet = "Cumulative forest plot"
)

// ExportReport writes a report to the .xlsx workbook at path: the sheets
// of writeWorkbook (Studies, Pooled, Forest plot, Provenance) plus a
// Summary sheet (the plain-language sentences and the problems), one sheet
// per analysis that was run, the funnel plot (with trim-and-fill studies
// when run) and the bubble plot of a one-moderator regression; the
// provenance records the plan. Atomic as writeWorkbook. opts carries the
// caller's export options (progress, the audit record before commit); the
// plots are added to its images.
func ExportReport(ctx context.Context, path string, studies []Study, rep Report, plan Plan, prov export.Provenance, opts export.Options) (export.Summary, error) {
	parts := ReportSheets(rep, plan)
	prov.Extra = slices.Clone(prov.Extra)
	for _, kv := range parts.Settings {
		prov.Add(kv[0], kv[1])
	}
	return writeWorkbook(ctx, path, studies, rep.Result, parts.Tables, parts.Images, prov, opts)
}

// ReportParts are the sheets of a report for a workbook of its own
// (ExportReport) or another one (the review workbook): the analysis
// tables, the plot pictures, and the settings to record in the provenance
// (name, value).
type ReportParts struct {
	Tables   []export.Table
	Images   []export.Image
	Settings [][2]string
}

// ReportSheets builds the Summary sheet, one sheet per analysis of rep,
// the forest (grouped when subgroups were run), cumulative, funnel and
// bubble plots, and the plan's settings.
func ReportSheets(rep Report, plan Plan) ReportParts {
	res := rep.Result
	var images []export.Image
	var buf bytes.Buffer
	if err := WriteForestPlot(&buf, res, PlotOptions{}); err == nil && res.K > 0 {
		images = append(images, export.Image{Sheet: PlotSheet, PNG: slices.Clone(buf.Bytes()),
			AltText: fmt.Sprintf("Forest plot: %s, %s, k = %d", res.Measure.Label(), res.ModelLabel(), res.K)})
	}
	if rep.Subgroups != nil {
		buf.Reset()
		if err := WriteSubgroupForestPlot(&buf, *rep.Subgroups, res, PlotOptions{}); err == nil {
			images = append(images, export.Image{Sheet: SubgroupPlotSheet, PNG: slices.Clone(buf.Bytes()), AltText: "Forest plot by subgroup"})
		}
	}
	if len(rep.Cumulative) > 0 {
		buf.Reset()
		if err := WriteCumulativeForestPlot(&buf, rep.Cumulative, res, PlotOptions{}); err == nil {
			images = append(images, export.Image{Sheet: CumulativePlotSheet, PNG: slices.Clone(buf.Bytes()), AltText: "Cumulative forest plot"})
		}
	}
	buf.Reset()
	if err := WriteFunnelPlot(&buf, res, FunnelOptions{Contours: true, TrimFill: rep.TrimFill}); err == nil {
		images = append(images, export.Image{Sheet: FunnelSheet, PNG: slices.Clone(buf.Bytes()), AltText: "Contour-enhanced funnel plot"})
	}
	if rep.Regression != nil {
		buf.Reset()
		if err := WriteBubblePlot(&buf, *rep.Regression, "png", 0); err == nil {
			images = append(images, export.Image{Sheet: BubbleSheet, PNG: slices.Clone(buf.Bytes()), AltText: "Bubble plot of the meta-regression"})
		}
	}
	tables := []export.Table{rowsTable(SummarySheet, []string{"Summary"}, func(add func(...any)) {
		for _, s := range rep.Sentences {
			add(s)
		}
		for _, p := range rep.Problems {
			add("Not computed — " + p)
		}
	})}
	num := func(f Float) any { return num(float64(f)) }
	if sa := rep.Subgroups; sa != nil {
		tables = append(tables, rowsTable(SubgroupSheet, []string{"Subgroup", "k", "est", "se", "ci_lb", "ci_ub", "tau2", "I2", "QE", "QEp", "Model"}, func(add func(...any)) {
			for _, g := range sa.Groups {
				r := g.Result
				add(g.Name, r.K, num(Float(r.Est)), num(Float(r.SE)), num(Float(r.CILB)), num(Float(r.CIUB)), num(Float(r.Tau2)), num(Float(r.I2)), num(Float(r.QE)), num(Float(r.QEp)), r.ModelLabel())
			}
			add(fmt.Sprintf("Test for subgroup differences (separate τ²): Q(%d)", sa.DF), nil, num(sa.QBetween), nil, nil, nil, nil, nil, nil, num(sa.PBetween), "p in column QEp")
			add("Test for subgroup differences (common τ²): QM", nil, num(sa.QPooled), nil, nil, nil, nil, nil, nil, num(sa.PPooled), "p in column QEp")
		}))
	}
	if g := rep.Regression; g != nil {
		tables = append(tables, rowsTable(RegressionSheet, []string{"Term", "estimate", "se", "stat", "pval", "ci_lb", "ci_ub"}, func(add func(...any)) {
			for _, c := range g.Coefficients {
				add(c.Term, num(c.Est), num(c.SE), num(c.Stat), num(c.Pval), num(c.CILB), num(c.CIUB))
			}
			add("QM (test of moderators)", num(g.QM), nil, nil, num(g.QMp), nil, nil)
			add(fmt.Sprintf("QE (residual heterogeneity, df %d)", g.QEdf), num(g.QE), nil, nil, num(g.QEp), nil, nil)
			add("tau2 (residual)", num(g.Tau2), num(g.SETau2), nil, nil, nil, nil)
			add("I2 (residual, %)", num(g.I2), nil, nil, nil, nil, nil)
			add("R2 (%)", num(g.R2), nil, nil, nil, nil, nil)
			for _, n := range g.Notes {
				add("Note: "+n, nil, nil, nil, nil, nil, nil)
			}
		}))
	}
	if rep.Egger != nil || rep.Begg != nil || rep.TrimFill != nil {
		tables = append(tables, rowsTable(BiasSheet, []string{"Test", "Statistic", "Value", "p-value", "Detail"}, func(add func(...any)) {
			if e := rep.Egger; e != nil {
				add("Egger's regression test (regtest)", "z (t with Knapp–Hartung)", num(e.Stat), num(e.Pval), fmt.Sprintf("limit estimate %s [%s, %s]", sf(float64(e.Limit)), sf(float64(e.LimitCILB)), sf(float64(e.LimitCIUB))))
			}
			if b := rep.Begg; b != nil {
				add("Begg's rank correlation (ranktest)", "Kendall's tau", num(b.Tau), num(b.Pval), b.Note)
			}
			if tf := rep.TrimFill; tf != nil {
				add(fmt.Sprintf("Trim and fill (%s, %s side)", tf.Estimator, tf.Side), "k0 (missing studies)", tf.K0, nil, fmt.Sprintf("SE of k0 %s", sf(float64(tf.SEK0))))
				add("Trim and fill: adjusted estimate", "est", num(Float(tf.Result.Est)), num(Float(tf.Result.Pval)),
					fmt.Sprintf("95%% CI %s to %s (analysis scale)", sf(tf.Result.CILB), sf(tf.Result.CIUB)))
			}
		}))
	}
	sensCols := []string{"Study", "estimate", "se", "stat", "pval", "ci_lb", "ci_ub", "Q", "Qp", "tau2", "I2", "H2", "Note"}
	sens := func(name string, rows []SensitivityRow) {
		if len(rows) == 0 {
			return
		}
		tables = append(tables, rowsTable(name, sensCols, func(add func(...any)) {
			for _, r := range rows {
				add(r.Study, num(r.Est), num(r.SE), num(r.Stat), num(r.Pval), num(r.CILB), num(r.CIUB), num(r.Q), num(r.Qp), num(r.Tau2), num(r.I2), num(r.H2), r.Note)
			}
		}))
	}
	sens(LeaveOneOutSheet, rep.LeaveOneOut)
	sens(CumulativeSheet, rep.Cumulative)
	if len(rep.Influence) > 0 {
		tables = append(tables, rowsTable(InfluenceSheet, []string{"Study", "rstudent", "dffits", "cook.d", "cov.r", "tau2.del", "QE.del", "hat", "weight", "dfbetas", "Influential"}, func(add func(...any)) {
			for _, r := range rep.Influence {
				add(r.Study, num(r.RStudent), num(r.DFFITS), num(r.CookD), num(r.CovR), num(r.Tau2Del), num(r.QEDel), num(r.Hat), num(r.Weight), num(r.DFBETAS), map[bool]string{true: "*", false: ""}[r.Influential])
			}
		}))
	}
	var set [][2]string
	add := func(k, v string) { set = append(set, [2]string{k, v}) }
	if plan.Subgroup != "" {
		add("Subgroups by", plan.Subgroup)
	}
	if len(plan.Mods) > 0 {
		add("Moderators", strings.Join(plan.Mods, ", ")+" (rma with mods)")
	}
	if plan.Egger {
		add("Egger's test", "regtest, model \"rma\", predictor \"sei\"")
	}
	if plan.Begg {
		add("Begg's test", "ranktest (exact p-value without ties)")
	}
	if plan.TrimFill != "" {
		add("Trim and fill", "estimator "+plan.TrimFill+", side chosen as metafor")
	}
	if plan.Cumulative {
		by := "data order"
		if plan.CumulativeBy != "" {
			by = "increasing " + plan.CumulativeBy
		}
		add("Cumulative order", by)
	}
	return ReportParts{Tables: tables, Images: images, Settings: set}
}

// rowsTable builds a table from rows added by fill.
func rowsTable(name string, cols []string, fill func(add func(...any))) export.Table {
	var rows [][]any
	fill(func(v ...any) { rows = append(rows, v) })
	return export.Table{Name: name, Columns: cols, Rows: func(yield func([]any, error) bool) {
		for _, r := range rows {
			if !yield(r, nil) {
				return
			}
		}
	}}
}

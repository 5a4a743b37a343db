package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/clinsight/clinsight/app/meta"
)

// metaFlags are the options of "clinsight meta".
type metaFlags struct {
	data, sheet, cols     string
	filters               []string
	measure, model        string
	hk, skipMissing, json bool
	level                 float64
	plot, xlsx            string
}

func newMetaCmd(f *Factory) *cobra.Command {
	var fl metaFlags
	cmd := &cobra.Command{
		Use:   "meta --data FILE --measure OR|RR|RD|MD|SMD|GIV|PR|PLO|PFT [--model EE|MH|DL|REML] [--hk]",
		Short: "Meta-analysis of a study table (effect sizes, pooling, heterogeneity, forest plot)",
		Long: `Computes each study's effect size and pools them as R's metafor does
(rma.uni with EE, DL or REML, optionally with the Knapp–Hartung adjustment;
rma.mh for MH). The data file is CSV or .xlsx with a header row and one
study per row: 2x2 counts (ai, n1i, ci, n2i, or ai, bi, ci, di), means
(m1i, sd1i, n1i, m2i, sd2i, n2i), a reported estimate with its CI
(est, ci_lb, ci_ub, or sei), or the events and total of single-arm studies
(xi, ni) for proportions, named as metafor does or mapped with --cols.

Proportions (response or toxicity rates) are pooled as metafor's PR (raw),
PLO (logit, shown back-transformed) or PFT (Freeman–Tukey double arcsine,
shown back-transformed at the harmonic mean study size, as
transf.ipft.hm). PR and PLO add 1/2 to the events and non-events of studies
with no events or only events; PFT needs no correction.

--json prints metafor's names (k, est, se, ci_lb, ci_ub, tau2, I2, QE, QEp,
...), with est and its CI on the log scale for OR and RR as rma prints them
(on the logit or double-arcsine scale for PLO and PFT, with the
back-transformed values under "proportion"); the text summary shows ratios
and proportions back-transformed.`,
		Example: `  clinsight meta --data studies_2x2.csv --filter dataset=dat.bcg --measure RR --model REML
  clinsight meta --data bcg.csv --cols study=author,ai=tpos,bi=tneg,ci=cpos,di=cneg --measure OR --model MH --json
  clinsight meta --data trials.xlsx --sheet Data --measure SMD --model DL --hk --plot forest.svg --xlsx meta.xlsx
  clinsight meta --data response.csv --cols study=Study,xi=n,ni=total --measure PFT --model REML --skip-missing`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runMeta(cmd, f, fl)
		},
	}
	fs := cmd.Flags()
	fs.StringVar(&fl.data, "data", "", "study table: .csv, .tsv, .txt or .xlsx (required)")
	fs.StringVar(&fl.sheet, "sheet", "", "sheet of an .xlsx file (default the first)")
	fs.StringArrayVar(&fl.filters, "filter", nil, "keep only rows where column=value, e.g. dataset=dat.bcg (repeatable: all must hold)")
	fs.StringVar(&fl.cols, "cols", "", "column names in order (ai,n1i,ci,n2i; m1i,sd1i,n1i,m2i,sd2i,n2i; est,ci_lb,ci_ub; xi,ni) or field=column pairs (study=author,ai=tpos,bi=tneg,...)")
	fs.StringVar(&fl.measure, "measure", "", "effect measure: OR, RR, RD (2x2 counts), MD, SMD (means), GIV or GIV.RATIO (estimate and CI), PR, PLO or PFT (single-arm proportions: events and total) (required)")
	fs.StringVar(&fl.model, "model", "REML", "pooling: EE (common effect, inverse variance), MH (Mantel–Haenszel), DL or REML (random effects)")
	fs.BoolVar(&fl.hk, "hk", false, "Knapp–Hartung adjustment (t distribution), as metafor's test=\"knha\"")
	fs.Float64Var(&fl.level, "level", 95, "confidence level in percent")
	fs.BoolVar(&fl.skipMissing, "skip-missing", false, "omit studies with missing (empty or NA) values, as metafor's na.omit, instead of failing")
	fs.BoolVar(&fl.json, "json", false, "print the result as JSON with metafor's names")
	fs.StringVar(&fl.plot, "plot", "", "write the forest plot to this .png or .svg file")
	fs.StringVar(&fl.xlsx, "xlsx", "", "write studies, pooled result, forest plot and provenance to this Excel workbook")
	_ = cmd.MarkFlagRequired("data")
	_ = cmd.MarkFlagRequired("measure")
	return cmd
}

// runMeta loads, analyses, writes the requested files and prints.
func runMeta(cmd *cobra.Command, f *Factory, fl metaFlags) error {
	measure, err := meta.ParseMeasure(fl.measure)
	if err != nil {
		return err
	}
	method, err := meta.ParseMethod(fl.model)
	if err != nil {
		return err
	}
	opts := meta.Options{Measure: measure, Method: method, Level: fl.level}
	if fl.hk {
		opts.Test = meta.TestKnHa
	}
	if err := opts.Validate(); err != nil {
		return err
	}
	if fl.plot != "" {
		if ext := strings.ToLower(filepath.Ext(fl.plot)); ext != ".png" && ext != ".svg" {
			return fmt.Errorf("--plot %s: the file name must end in .png or .svg", fl.plot)
		}
	}
	if fl.xlsx != "" && !strings.EqualFold(filepath.Ext(fl.xlsx), ".xlsx") {
		return fmt.Errorf("--xlsx %s: the file name must end in .xlsx", fl.xlsx)
	}

	spec := meta.InputSpec{Kind: measure.Kind(), Sheet: fl.sheet, SkipMissing: fl.skipMissing}
	if spec.Columns, err = meta.ParseColumns(fl.cols, spec.Kind); err != nil {
		return err
	}
	for _, flt := range fl.filters {
		col, val, err := meta.ParseFilter(flt)
		if err != nil {
			return err
		}
		if spec.Where == nil {
			spec.Where = map[string]string{}
		}
		spec.Where[col] = val
	}
	studies, err := meta.LoadFile(fl.data, spec)
	if err != nil {
		return err
	}
	res, err := meta.Analyze(studies, opts)
	if err != nil {
		return err
	}

	if fl.plot != "" {
		if err := meta.SaveForestPlot(fl.plot, res, meta.PlotOptions{}); err != nil {
			return fmt.Errorf("writing the forest plot %s: %w", fl.plot, err)
		}
		fmt.Fprintf(f.Err, "wrote the forest plot to %s\n", fl.plot)
	}
	if fl.xlsx != "" {
		var png bytes.Buffer
		if err := meta.WriteForestPlot(&png, res, meta.PlotOptions{}); err != nil {
			fmt.Fprintf(f.Err, "warning: the workbook has no forest plot: %v\n", oneLine(err))
			png.Reset()
		}
		prov := meta.NewProvenance(f.Version, fl.data, spec)
		if _, err := meta.ExportWorkbook(cmd.Context(), fl.xlsx, studies, res, png.Bytes(), prov); err != nil {
			return err
		}
		fmt.Fprintf(f.Err, "wrote %d studies and the pooled result to %s\n", len(studies), fl.xlsx)
	}

	if fl.json {
		enc := json.NewEncoder(f.Out)
		enc.SetEscapeHTML(false) // study labels such as "Ferguson & Simes"
		return enc.Encode(res)
	}
	return writeMetaText(f.Out, res)
}

// writeMetaText prints a readable summary: the pooled estimate (back-
// transformed for ratios) with its CI, test and prediction interval,
// heterogeneity, one line per study, and the notes.
func writeMetaText(w io.Writer, res meta.Result) error {
	m := string(res.Measure)
	pct := fmt.Sprintf("%g%%", 100*res.Level)
	b := res.Back
	var out strings.Builder
	fmt.Fprintf(&out, "%s, k = %d\n", res.ModelLabel(), res.K)
	if res.IsRatio() {
		fmt.Fprintf(&out, "%s (%s), pooled on the log scale and shown back-transformed\n\n", res.Measure.Label(), m)
	} else if res.Measure.Transformed() {
		fmt.Fprintf(&out, "%s (%s), pooled on the %s scale and shown as proportions\n\n", res.Measure.Label(), m, map[meta.Measure]string{meta.PLO: "logit", meta.PFT: "double-arcsine"}[res.Measure])
	} else {
		fmt.Fprintf(&out, "%s (%s)\n\n", res.Measure.Label(), m)
	}
	stat := "z"
	if res.DF > 0 {
		stat = fmt.Sprintf("t(%d)", res.DF)
	}
	fmt.Fprintf(&out, "Pooled %s     %s  (%s CI %s to %s)\n", m, fmtNum(b(res.Est)), pct, fmtNum(b(res.CILB)), fmtNum(b(res.CIUB)))
	if res.IsRatio() {
		fmt.Fprintf(&out, "log %s        %s  (SE %s)\n", m, fmtNum(res.Est), fmtNum(res.SE))
	} else if res.Measure.Transformed() {
		fmt.Fprintf(&out, "%s scale     %s  (SE %s)\n", m, fmtNum(res.Est), fmtNum(res.SE))
		if res.Measure == meta.PFT {
			fmt.Fprintf(&out, "Harmonic n    %s  (study size used to back-transform)\n", fmtNum(res.HarmonicN))
		}
	} else {
		fmt.Fprintf(&out, "SE            %s\n", fmtNum(res.SE))
	}
	fmt.Fprintf(&out, "Test          %s = %s, p %s\n", stat, fmtNum(res.Stat), fmtPValue(res.Pval))
	if res.IsRandom() && !math.IsNaN(res.PILB) {
		fmt.Fprintf(&out, "Prediction    %s to %s (%s prediction interval)\n", fmtNum(b(res.PILB)), fmtNum(b(res.PIUB)), pct)
	}
	out.WriteString("\nHeterogeneity\n")
	if res.IsRandom() {
		fmt.Fprintf(&out, "  tau^2 = %s (SE %s), tau = %s\n", fmtNum(res.Tau2), fmtNum(res.SETau2), fmtNum(res.Tau))
	}
	fmt.Fprintf(&out, "  I^2 = %.2f%%, H^2 = %s\n", res.I2, fmtNum(res.H2))
	fmt.Fprintf(&out, "  Q(df = %d) = %s, p %s\n\n", res.QEdf, fmtNum(res.QE), fmtPValue(res.QEp))
	if _, err := io.WriteString(w, out.String()); err != nil {
		return err
	}

	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "Study\t%s\t%s CI\tWeight\n", m, pct)
	for _, s := range res.Studies {
		if !s.Estimable {
			fmt.Fprintf(tw, "%s\tnot estimable\t\t\n", formatCell(s.Label))
			continue
		}
		fmt.Fprintf(tw, "%s\t%s\t%s to %s\t%.1f%%\n", formatCell(s.Label), fmtNum(b(s.YI)), fmtNum(b(s.CILB)), fmtNum(b(s.CIUB)), s.Weight)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if len(res.Notes) > 0 {
		fmt.Fprintln(w, "\nNotes")
		for _, n := range res.Notes {
			fmt.Fprintf(w, "  - %s\n", n)
		}
	}
	return nil
}

// fmtNum prints a statistic with four decimals ("n/a" when undefined).
func fmtNum(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", v)
}

// fmtPValue prints a p-value with its relation: "= 0.0421", "< 0.0001".
func fmtPValue(p float64) string {
	switch {
	case math.IsNaN(p):
		return "= n/a"
	case p < 1e-4:
		return "< 0.0001"
	}
	return fmt.Sprintf("= %.4f", p)
}

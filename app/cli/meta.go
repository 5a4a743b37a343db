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
	"github.com/clinsight/clinsight/internal/atomicfile"
)

// metaFlags are the options of "clinsight meta".
type metaFlags struct {
	data, sheet, cols          string
	filters                    []string
	measure, model, test       string
	hk, peto, skipMissing      bool
	json                       bool
	level                      float64
	add                        string
	to                         string
	drop00                     bool
	plot, xlsx, funnel, bubble string
	cumulPlot                  string
	subgroup, mods             string
	egger, begg, contours      bool
	trimfill                   string
	leave1out, influence       bool
	cumul                      bool
	cumulBy                    string
	favours                    string
}

// plotOptions are the forest plots' options: the file's format and the
// --favours labels ("none" leaves them out, empty uses the measure's).
func (fl *metaFlags) plotOptions(path string) meta.PlotOptions {
	o := meta.PlotOptions{Format: filepath.Ext(path)}
	switch v := strings.TrimSpace(fl.favours); {
	case strings.EqualFold(v, "none"):
		o.HideFavours = true
	case v != "":
		left, right, _ := strings.Cut(v, ",")
		o.FavoursLeft, o.FavoursRight = strings.TrimSpace(left), strings.TrimSpace(right)
	}
	return o
}

func newMetaCmd(f *Factory) *cobra.Command {
	var fl metaFlags
	cmd := &cobra.Command{
		Use:   "meta --data FILE --measure OR|RR|RD|MD|SMD|GIV|PR|PLO|PFT [--model EE|MH|PETO|DL|REML|ML|HE|HS|SJ|PM|EB] [--hk]",
		Short: "Meta-analysis of a study table (pooling, heterogeneity, subgroups, meta-regression, small-study effects, sensitivity)",
		Long: `Computes each study's effect size and pools them as R's metafor 3.8-1 does:
rma.uni with EE or a random-effects estimator of tau^2 (DL, REML, ML, HE,
HS, SJ, PM, EB; metafor's control defaults), optionally with the
Knapp-Hartung adjustment; rma.mh for MH; rma.peto for PETO (Peto's odds
ratio). Random-effects results carry the Q-profile confidence intervals of
tau^2, I^2 and H^2 (confint). The data file is CSV or .xlsx with a header
row and one study per row: 2x2 counts (ai, n1i, ci, n2i, or ai, bi, ci,
di), means (m1i, sd1i, n1i, m2i, sd2i, n2i), a reported estimate with its
CI (est, ci_lb, ci_ub, or sei), or the events and total of single-arm
studies (xi, ni) for proportions, named as metafor does or mapped with
--cols.

Further analyses, each as metafor: --subgroup COL (one model per subgroup
and the test for subgroup differences), --mods COL[,COL] (meta-regression:
coefficients, QM, QE, R^2; text columns are categorical), --egger
(regtest), --begg (ranktest), --trimfill[=L0|R0] (trimfill), --leave1out,
--cumul [--cumul-by COL] and --influence (influence.rma.uni). An analysis
that cannot be run (too few studies, ...) is reported and the others are
still given. --funnel and --bubble draw the funnel plot (with filled
studies after --trimfill) and the bubble plot of a one-moderator
regression; --xlsx writes every table and plot with the settings used.

--json prints metafor's names (k, est, se, ci_lb, ci_ub, tau2, tau2_ci_lb,
tau2_ci_ub, I2, I2_ci_lb, I2_ci_ub, H2, QE, QEp, ...), with est and its CI
on the log scale for OR and RR as rma prints them, plus "subgroups",
"regression", "egger", "begg", "trimfill", "leave1out", "cumulative",
"influence", the plain-language "summary" and "problems".`,
		Example: `  clinsight meta --data studies_2x2.csv --filter dataset=dat.bcg --measure RR --model PM --hk
  clinsight meta --data dat.bcg.csv --cols ` + "`" + `study=author,ai=tpos,bi=tneg,ci=cpos,di=cneg` + "`" + ` --measure RR --mods ablat,year --json
  clinsight meta --data dat.bcg.csv --cols study=author,ai=tpos,bi=tneg,ci=cpos,di=cneg --measure RR --subgroup alloc --egger --begg --trimfill --funnel funnel.png
  clinsight meta --data trials.csv --measure OR --peto --leave1out --cumul --cumul-by year --influence --xlsx meta.xlsx`,
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
	fs.StringVar(&fl.model, "model", "REML", "pooling: EE (common effect, inverse variance), MH (Mantel–Haenszel), PETO (Peto odds ratio), or the random-effects tau^2 estimator DL, REML, ML, HE, HS, SJ, PM or EB")
	fs.StringVar(&fl.model, "method", "REML", "the same as --model")
	fs.BoolVar(&fl.hk, "hk", false, "Knapp–Hartung adjustment (t distribution), as metafor's test=\"knha\"")
	fs.StringVar(&fl.test, "test", "", "z or knha (knha is the same as --hk)")
	fs.BoolVar(&fl.peto, "peto", false, "Peto's odds ratio (the same as --model PETO --measure OR)")
	fs.Float64Var(&fl.level, "level", 95, "confidence level in percent")
	fs.StringVar(&fl.add, "add", "", "value added to the cells of zero-cell studies (metafor's add; default 1/2; 0 means no correction)")
	fs.StringVar(&fl.to, "to", "", "which studies get --add: only0 (default), all, if0all or none (metafor's to)")
	fs.BoolVar(&fl.drop00, "drop00", false, "drop studies with no events (or only events) in both groups, as metafor's drop00=TRUE")
	fs.BoolVar(&fl.skipMissing, "skip-missing", false, "omit studies with missing (empty or NA) values, as metafor's na.omit, instead of failing")
	fs.StringVar(&fl.subgroup, "subgroup", "", "column to split the studies by: one model per subgroup and the test for subgroup differences")
	fs.StringVar(&fl.mods, "mods", "", "moderator columns for a meta-regression, comma-separated (text columns are categorical)")
	fs.BoolVar(&fl.egger, "egger", false, "Egger's regression test for funnel-plot asymmetry (regtest)")
	fs.BoolVar(&fl.begg, "begg", false, "Begg's rank correlation test (ranktest)")
	fs.StringVar(&fl.trimfill, "trimfill", "", "trim and fill with estimator L0 or R0 (trimfill)")
	fs.Lookup("trimfill").NoOptDefVal = "L0"
	fs.BoolVar(&fl.leave1out, "leave1out", false, "leave-one-out analysis (leave1out)")
	fs.BoolVar(&fl.cumul, "cumul", false, "cumulative meta-analysis (cumul), in data order or by --cumul-by")
	fs.StringVar(&fl.cumulBy, "cumul-by", "", "numeric column ordering the cumulative analysis, e.g. year")
	fs.BoolVar(&fl.influence, "influence", false, "influence diagnostics (influence.rma.uni)")
	fs.BoolVar(&fl.json, "json", false, "print the result as JSON with metafor's names")
	fs.StringVar(&fl.plot, "plot", "", "write the forest plot to this .png or .svg file (grouped by subgroup with --subgroup)")
	fs.StringVar(&fl.favours, "favours", "", "labels either side of the null line in the forest plots, LEFT,RIGHT (default \"Favours treatment,Favours control\"; none leaves them out)")
	fs.StringVar(&fl.cumulPlot, "cumul-plot", "", "write the cumulative forest plot to this .png or .svg file (implies --cumul)")
	fs.StringVar(&fl.funnel, "funnel", "", "write the funnel plot to this .png or .svg file")
	fs.BoolVar(&fl.contours, "contours", false, "contour-enhanced funnel plot (p < 0.10, 0.05, 0.01 shaded)")
	fs.StringVar(&fl.bubble, "bubble", "", "write the bubble plot of a one-moderator regression (--mods) to this .png or .svg file")
	fs.StringVar(&fl.xlsx, "xlsx", "", "write studies, results of every analysis, plots and provenance to this Excel workbook")
	_ = cmd.MarkFlagRequired("data")
	_ = cmd.MarkFlagRequired("measure")
	return cmd
}

// metaOptions turns the flags into analysis options and a plan.
func metaOptions(fl metaFlags) (meta.Options, meta.Plan, error) {
	if fl.peto {
		fl.model = "PETO"
	}
	measure, err := meta.ParseMeasure(fl.measure)
	if err != nil {
		return meta.Options{}, meta.Plan{}, err
	}
	method, err := meta.ParseMethod(fl.model)
	if err != nil {
		return meta.Options{}, meta.Plan{}, err
	}
	opts := meta.Options{Measure: measure, Method: method, Level: fl.level, To: meta.ZeroCells(strings.ToLower(fl.to)), Drop00: fl.drop00}
	if err := opts.SetAdd(fl.add); err != nil {
		return meta.Options{}, meta.Plan{}, err
	}
	switch strings.ToLower(fl.test) {
	case "", "z":
	case "knha", "hk", "t":
		fl.hk = true
	default:
		return meta.Options{}, meta.Plan{}, fmt.Errorf("--test %s: use z or knha", fl.test)
	}
	if fl.hk {
		opts.Test = meta.TestKnHa
	}
	if err := opts.Validate(); err != nil {
		return meta.Options{}, meta.Plan{}, err
	}
	tf := strings.ToUpper(fl.trimfill)
	if tf != "" && tf != "L0" && tf != "R0" {
		return meta.Options{}, meta.Plan{}, fmt.Errorf("--trimfill %s: use L0 or R0", fl.trimfill)
	}
	plan := meta.Plan{Subgroup: strings.TrimSpace(fl.subgroup), Egger: fl.egger, Begg: fl.begg, TrimFill: tf,
		LeaveOneOut: fl.leave1out, Influence: fl.influence, Cumulative: fl.cumul || fl.cumulBy != "" || fl.cumulPlot != "", CumulativeBy: strings.TrimSpace(fl.cumulBy)}
	for _, m := range strings.Split(fl.mods, ",") {
		if m = strings.TrimSpace(m); m != "" {
			plan.Mods = append(plan.Mods, m)
		}
	}
	if fl.bubble != "" && len(plan.Mods) != 1 {
		return meta.Options{}, meta.Plan{}, fmt.Errorf("--bubble needs exactly one moderator in --mods")
	}
	return opts, plan, nil
}

// runMeta loads, analyses, writes the requested files and prints.
func runMeta(cmd *cobra.Command, f *Factory, fl metaFlags) error {
	opts, plan, err := metaOptions(fl)
	if err != nil {
		return err
	}
	for flag, path := range map[string]string{"--plot": fl.plot, "--funnel": fl.funnel, "--bubble": fl.bubble, "--cumul-plot": fl.cumulPlot} {
		if path != "" {
			if ext := strings.ToLower(filepath.Ext(path)); ext != ".png" && ext != ".svg" {
				return fmt.Errorf("%s %s: the file name must end in .png or .svg", flag, path)
			}
		}
	}
	if fl.xlsx != "" && !strings.EqualFold(filepath.Ext(fl.xlsx), ".xlsx") {
		return fmt.Errorf("--xlsx %s: the file name must end in .xlsx", fl.xlsx)
	}

	spec := meta.InputSpec{Kind: opts.Measure.Kind(), Sheet: fl.sheet, SkipMissing: fl.skipMissing}
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
	ws, err := f.Workspace()
	if err != nil {
		return err
	}
	svc := ws.Meta()
	ctx := cmd.Context()
	studies, err := svc.Load(ctx, fl.data, spec, plan)
	if err != nil {
		return err
	}
	rep, err := svc.Run(ctx, studies, opts, plan)
	if err != nil {
		return err
	}
	res := rep.Result
	for _, p := range rep.Problems {
		fmt.Fprintf(f.Err, "warning: %s\n", p)
	}

	if fl.plot != "" {
		var err error
		if rep.Subgroups != nil {
			err = writeFileWith(fl.plot, func(w io.Writer) error {
				return meta.WriteSubgroupForestPlot(w, *rep.Subgroups, res, fl.plotOptions(fl.plot))
			})
		} else {
			err = meta.SaveForestPlot(fl.plot, res, fl.plotOptions(""))
		}
		if err != nil {
			return fmt.Errorf("writing the forest plot %s: %w", fl.plot, err)
		}
		fmt.Fprintf(f.Err, "wrote the forest plot to %s\n", fl.plot)
	}
	if fl.cumulPlot != "" && len(rep.Cumulative) > 0 {
		err := writeFileWith(fl.cumulPlot, func(w io.Writer) error {
			return meta.WriteCumulativeForestPlot(w, rep.Cumulative, res, fl.plotOptions(fl.cumulPlot))
		})
		if err != nil {
			return fmt.Errorf("writing the cumulative forest plot %s: %w", fl.cumulPlot, err)
		}
		fmt.Fprintf(f.Err, "wrote the cumulative forest plot to %s\n", fl.cumulPlot)
	}
	if fl.funnel != "" {
		err := writeFileWith(fl.funnel, func(w io.Writer) error {
			return meta.WriteFunnelPlot(w, res, meta.FunnelOptions{Format: filepath.Ext(fl.funnel), Contours: fl.contours, TrimFill: rep.TrimFill})
		})
		if err != nil {
			return fmt.Errorf("writing the funnel plot %s: %w", fl.funnel, err)
		}
		fmt.Fprintf(f.Err, "wrote the funnel plot to %s\n", fl.funnel)
	}
	if fl.bubble != "" {
		if rep.Regression == nil {
			return fmt.Errorf("--bubble %s: the meta-regression could not be fitted", fl.bubble)
		}
		err := writeFileWith(fl.bubble, func(w io.Writer) error {
			return meta.WriteBubblePlot(w, *rep.Regression, filepath.Ext(fl.bubble), 0)
		})
		if err != nil {
			return fmt.Errorf("writing the bubble plot %s: %w", fl.bubble, err)
		}
		fmt.Fprintf(f.Err, "wrote the bubble plot to %s\n", fl.bubble)
	}
	if fl.xlsx != "" {
		prov := meta.NewProvenance(f.Version, fl.data, spec)
		if _, err := svc.Export(ctx, fl.xlsx, studies, rep, plan, prov); err != nil {
			return err
		}
		fmt.Fprintf(f.Err, "wrote %d studies and the results to %s\n", len(studies), fl.xlsx)
	}

	if fl.json {
		enc := json.NewEncoder(f.Out)
		enc.SetEscapeHTML(false) // study labels such as "Ferguson & Simes"
		return enc.Encode(metaOutput{Summary: res.Summary(), Report: &rep})
	}
	if err := writeMetaText(f.Out, res); err != nil {
		return err
	}
	return rep.WriteText(f.Out)
}

// metaOutput is the JSON of "clinsight meta": the pooled result with
// metafor's names and the planned analyses beside it.
type metaOutput struct {
	meta.Summary
	*meta.Report
}

// writeFileWith writes a file through fn, atomically.
func writeFileWith(path string, fn func(io.Writer) error) error {
	var buf bytes.Buffer
	if err := fn(&buf); err != nil {
		return err
	}
	af, err := atomicfile.Create(path, 0o644)
	if err != nil {
		return err
	}
	defer af.Discard()
	if _, err := af.Write(buf.Bytes()); err != nil {
		return err
	}
	return af.Commit()
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
		if !math.IsNaN(res.Tau2CILB) {
			fmt.Fprintf(&out, "  %s CI (Q-profile): tau^2 %s to %s, I^2 %.2f%% to %.2f%%, H^2 %s to %s\n", pct, fmtNum(res.Tau2CILB), fmtNum(res.Tau2CIUB), res.I2CILB, res.I2CIUB, fmtNum(res.H2CILB), fmtNum(res.H2CIUB))
		}
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

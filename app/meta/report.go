package meta

import (
	"context"
	"fmt"
	"math"
	"strings"

	"github.com/clinsight/clinsight/internal/progress"
)

// Plan says which analyses to run beside the pooled model. The zero value
// runs only the pooled model.
type Plan struct {
	// Subgroup is a covariate column to split the studies by.
	Subgroup string
	// Mods are covariate columns for a meta-regression.
	Mods []string
	// Egger and Begg run the small-study-effect tests.
	Egger, Begg bool
	// TrimFill is "" (none), "L0" or "R0".
	TrimFill string
	// LeaveOneOut, Influence and Cumulative run the sensitivity analyses;
	// CumulativeBy orders the cumulative analysis by a numeric covariate
	// column (data order when empty).
	LeaveOneOut, Influence, Cumulative bool
	CumulativeBy                       string
	// Progress, when set, receives Run's progress: the analysis under way
	// and, for the leave-one-out, cumulative and influence analyses, how
	// many of their refits are done ("Leave-one-out analysis: 1200 of
	// 5000"). It is called from the goroutines doing the work.
	Progress progress.Func
}

// Columns returns the covariate columns the plan reads (for
// InputSpec.Covariates).
func (p Plan) Columns() []string {
	var cols []string
	seen := map[string]bool{}
	for _, c := range append(append([]string{p.Subgroup}, p.Mods...), p.CumulativeBy) {
		if c = strings.TrimSpace(c); c != "" && !seen[normName(c)] {
			seen[normName(c)] = true
			cols = append(cols, c)
		}
	}
	return cols
}

// Report is the pooled model and the planned analyses. An analysis that
// cannot be run (too few studies, a model that does not converge, ...) is
// left nil and explained in Problems; the others are still given.
type Report struct {
	Result      Result            `json:"-"`
	Subgroups   *SubgroupAnalysis `json:"subgroups,omitempty"`
	Regression  *Regression       `json:"regression,omitempty"`
	Egger       *EggerTest        `json:"egger,omitempty"`
	Begg        *BeggTest         `json:"begg,omitempty"`
	TrimFill    *TrimFill         `json:"trimfill,omitempty"`
	LeaveOneOut []SensitivityRow  `json:"leave1out,omitempty"`
	Cumulative  []SensitivityRow  `json:"cumulative,omitempty"`
	Influence   []InfluenceRow    `json:"influence,omitempty"`
	// Sentences is the plain-language summary, generated from the numbers
	// by templates.
	Sentences []string `json:"summary"`
	// Problems lists the analyses that could not be run, with the reason.
	Problems []string `json:"problems,omitempty"`
}

// Run analyses the studies with opts and runs the plan. It fails only when
// the pooled model itself cannot be computed, or when ctx is cancelled:
// every analysis notices Cancel between its refits and iterations and Run
// then returns an ECANCELLED error wrapping ctx.Err().
func Run(ctx context.Context, studies []Study, opts Options, plan Plan) (Report, error) {
	prog := plan.Progress
	prog.Send(progress.Report{Stage: "Pooled model"})
	res, err := analyze(ctx, studies, opts)
	if err != nil {
		if ctx.Err() != nil {
			return Report{}, stopped(ctx, "Meta-analysis")
		}
		return Report{}, err
	}
	rep := Report{Result: res}
	var halt error // the error of the analysis Cancel stopped
	problem := func(what string, err error) {
		if ctx.Err() != nil {
			halt = err
			return
		}
		rep.Problems = append(rep.Problems, fmt.Sprintf("%s: %v", what, err))
	}
	step := func(stage string) bool {
		if halt != nil || ctx.Err() != nil {
			return false
		}
		prog.Send(progress.Report{Stage: stage})
		return true
	}
	if plan.Subgroup != "" && step("Subgroup analysis") {
		if sa, err := subgroups(ctx, studies, opts, plan.Subgroup); err != nil {
			problem("Subgroup analysis", err)
		} else {
			rep.Subgroups = &sa
		}
	}
	if len(plan.Mods) > 0 && step("Meta-regression") {
		if r, err := regress(ctx, res, plan.Mods, nil); err != nil {
			problem("Meta-regression", err)
		} else {
			rep.Regression = &r
		}
	}
	if plan.Egger && step("Egger's test") {
		if e, err := egger(ctx, res); err != nil {
			problem("Egger's test", err)
		} else {
			rep.Egger = &e
		}
	}
	if plan.Begg && step("Begg's test") {
		if b, err := begg(ctx, res); err != nil {
			problem("Begg's test", err)
		} else {
			rep.Begg = &b
		}
	}
	if plan.TrimFill != "" && step("Trim and fill") {
		if tf, err := trimFill(ctx, res, plan.TrimFill, ""); err != nil {
			problem("Trim and fill", err)
		} else {
			rep.TrimFill = &tf
		}
	}
	// Leave-one-out and influence refit the same models: fit them once.
	var dels []refit
	if plan.LeaveOneOut && plan.Influence && res.Method != MH && res.Method != PETO && res.K >= 2 && step("Leave-one-out analysis") {
		if dels, err = deletionFits(ctx, "Leave-one-out analysis", res, prog); err != nil {
			problem("Leave-one-out analysis", err)
		}
	}
	if plan.LeaveOneOut && step("Leave-one-out analysis") {
		if rows, err := leaveOneOut(ctx, studies, res, dels, prog); err != nil {
			problem("Leave-one-out analysis", err)
		} else {
			rep.LeaveOneOut = rows
		}
	}
	if plan.Cumulative && step("Cumulative analysis") {
		key, err := covariateKey(res, plan.CumulativeBy)
		if err == nil {
			rep.Cumulative, err = cumulative(ctx, studies, res, key, prog)
		}
		if err != nil {
			problem("Cumulative analysis", err)
		}
	}
	if plan.Influence && step("Influence diagnostics") {
		if rows, err := influence(ctx, res, dels, prog); err != nil {
			problem("Influence diagnostics", err)
		} else {
			rep.Influence = rows
		}
	}
	if ctx.Err() != nil {
		if ErrorCode(halt) == ECANCELLED {
			return Report{}, halt
		}
		return Report{}, stopped(ctx, "Meta-analysis")
	}
	rep.Sentences = rep.summarize()
	return rep, nil
}

// covariateKey returns the numeric values of column per study of res (nil
// for an empty column name).
func covariateKey(res Result, column string) ([]float64, error) {
	if column == "" {
		return nil, nil
	}
	key := make([]float64, len(res.Studies))
	for i, s := range res.Studies {
		v, missing, err := parseNumber(strings.TrimSpace(s.Covariates[normName(column)]))
		if err != nil || missing {
			return nil, errorf(EINVALID, "study %q has no number in %q to order by", s.Label, column)
		}
		key[i] = v
	}
	return key, nil
}

// summarize writes the plain-language summary: one sentence per result,
// numbers as in the tables (a model may rephrase, never change, them).
func (rep Report) summarize() []string {
	r := rep.Result
	pct := fmt.Sprintf("%g%%", 100*r.Level)
	b := r.Back
	scale := strings.ToLower(r.Measure.Label())
	var out []string
	model := "a common-effect model"
	if r.IsRandom() {
		model = "a random-effects model"
	}
	s := fmt.Sprintf("Across %s, the pooled %s was %s (%s CI %s to %s; %s, %s).",
		plural(r.K, "study", "studies"), scale, sf(b(r.Est)), pct, sf(b(r.CILB)), sf(b(r.CIUB)), model, r.ModelLabelShort())
	out = append(out, s)
	if r.IsRatio() {
		null := "does not include 1"
		if r.CILB <= 0 && r.CIUB >= 0 {
			null = "includes 1 (no difference)"
		}
		out = append(out, fmt.Sprintf("The confidence interval %s; p %s.", null, pText(r.Pval)))
	} else if !r.Measure.IsProportion() {
		null := "does not include 0"
		if r.CILB <= 0 && r.CIUB >= 0 {
			null = "includes 0 (no difference)"
		}
		out = append(out, fmt.Sprintf("The confidence interval %s; p %s.", null, pText(r.Pval)))
	}
	if r.K > 1 {
		h := fmt.Sprintf("Heterogeneity: I² = %.1f%%", r.I2)
		if isFinite(r.I2CILB) {
			h += fmt.Sprintf(" (%s CI %.1f%% to %.1f%%)", pct, r.I2CILB, r.I2CIUB)
		}
		if r.IsRandom() {
			h += fmt.Sprintf(", τ² = %s", sf(r.Tau2))
		}
		h += fmt.Sprintf(", Q(%d) = %s, p %s (%s).", r.QEdf, sf(r.QE), pText(r.QEp), i2Words(r.I2))
		out = append(out, h)
	}
	if r.IsRandom() && isFinite(r.PILB) {
		out = append(out, fmt.Sprintf("The %s prediction interval for the effect in a new study is %s to %s.", pct, sf(b(r.PILB)), sf(b(r.PIUB))))
	}
	if sa := rep.Subgroups; sa != nil {
		var parts []string
		for _, g := range sa.Groups {
			parts = append(parts, fmt.Sprintf("%s %s (k = %d)", g.Name, sf(g.Result.Back(g.Result.Est)), g.Result.K))
		}
		t := fmt.Sprintf("By %s: %s. Test for subgroup differences: Q(%d) = %s, p %s", sa.Column, strings.Join(parts, "; "), sa.DF, sf(float64(sa.QBetween)), pText(float64(sa.PBetween)))
		if isFinite(float64(sa.QPooled)) && r.IsRandom() {
			t += fmt.Sprintf(" (with a common τ²: %s, p %s)", sf(float64(sa.QPooled)), pText(float64(sa.PPooled)))
		}
		out = append(out, t+".")
	}
	if g := rep.Regression; g != nil {
		t := fmt.Sprintf("Meta-regression on %s (k = %d): test of the moderators QM = %s, p %s", strings.Join(g.Mods, " + "), g.K, sf(float64(g.QM)), pText(float64(g.QMp)))
		if isFinite(float64(g.R2)) {
			t += fmt.Sprintf("; the moderators account for %.1f%% of the between-study variance (R²)", float64(g.R2))
		}
		out = append(out, t+fmt.Sprintf("; residual heterogeneity QE(%d) = %s, p %s.", g.QEdf, sf(float64(g.QE)), pText(float64(g.QEp))))
	}
	if e := rep.Egger; e != nil {
		out = append(out, fmt.Sprintf("Egger's regression test for funnel-plot asymmetry: %s = %s, p %s.", map[bool]string{true: "t", false: "z"}[e.DF > 0], sf(float64(e.Stat)), pText(float64(e.Pval))))
	}
	if bt := rep.Begg; bt != nil {
		out = append(out, fmt.Sprintf("Begg's rank correlation test: Kendall's τ = %s, p %s.", sf(float64(bt.Tau)), pText(float64(bt.Pval))))
	}
	if tf := rep.TrimFill; tf != nil {
		if tf.K0 == 0 {
			out = append(out, fmt.Sprintf("Trim and fill (%s) estimated no missing studies.", tf.Estimator))
		} else {
			fr := tf.Result
			out = append(out, fmt.Sprintf("Trim and fill (%s) estimated %s missing on the %s side; with the filled studies the pooled %s would be %s (95%% CI %s to %s).",
				tf.Estimator, plural(tf.K0, "study", "studies"), tf.Side, scale, sf(fr.Back(fr.Est)), sf(fr.Back(fr.CILB)), sf(fr.Back(fr.CIUB))))
		}
	}
	if rows := rep.LeaveOneOut; len(rows) > 0 {
		lo, hi := math.Inf(1), math.Inf(-1)
		for _, x := range rows {
			if v := b(float64(x.Est)); isFinite(v) {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
		if isFinite(lo) {
			out = append(out, fmt.Sprintf("Leaving out one study at a time, the pooled %s ranged from %s to %s.", scale, sf(lo), sf(hi)))
		}
	}
	if rows := rep.Influence; len(rows) > 0 {
		var names []string
		for _, x := range rows {
			if x.Influential {
				names = append(names, x.Study)
			}
		}
		if len(names) == 0 {
			out = append(out, "No study was flagged as influential.")
		} else {
			out = append(out, fmt.Sprintf("Flagged as influential: %s.", strings.Join(names, ", ")))
		}
	}
	return out
}

// ModelLabelShort names the estimator and test briefly, e.g. "REML,
// Knapp–Hartung".
func (r Result) ModelLabelShort() string {
	s := string(r.Method)
	if r.Method == EE {
		s = "inverse variance"
	}
	if r.Test == TestKnHa {
		s += ", Knapp–Hartung"
	}
	return s
}

func i2Words(i2 float64) string {
	switch {
	case i2 < 25:
		return "low"
	case i2 < 50:
		return "moderate"
	case i2 < 75:
		return "substantial"
	}
	return "considerable"
}

// sf formats a number for sentences: three significant digits, at most
// four decimals.
func sf(v float64) string {
	if !isFinite(v) {
		return "not available"
	}
	a := math.Abs(v)
	switch {
	case a == 0:
		return "0"
	case a >= 100:
		return fmt.Sprintf("%.1f", v)
	case a >= 1:
		return fmt.Sprintf("%.2f", v)
	case a >= 0.001:
		return fmt.Sprintf("%.3g", v)
	}
	return fmt.Sprintf("%.2g", v)
}

func pText(p float64) string {
	switch {
	case !isFinite(p):
		return "not available"
	case p < 0.0001:
		return "< 0.0001"
	}
	return fmt.Sprintf("= %.4f", p)
}

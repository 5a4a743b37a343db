package meta

import (
	"fmt"
	"io"
	"math"
	"strings"
	"text/tabwriter"
)

// WriteText prints the planned analyses as plain-text tables (subgroups,
// meta-regression, small-study effects, leave-one-out, cumulative and
// influence), then the plain-language summary, for the command line and
// the desktop app's Analyses tab.
func (rep Report) WriteText(w io.Writer) error {
	var out strings.Builder
	res := rep.Result
	b := res.Back
	m := string(res.Measure)
	if sa := rep.Subgroups; sa != nil {
		fmt.Fprintf(&out, "\nSubgroups by %s\n", sa.Column)
		tw := tabwriter.NewWriter(&out, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  Subgroup\tk\t%s\tCI\ttau^2\tI^2\n", m)
		for _, g := range sa.Groups {
			r := g.Result
			fmt.Fprintf(tw, "  %s\t%d\t%s\t%s to %s\t%s\t%.1f%%\n", cell(g.Name), r.K, txtNum(r.Back(r.Est)), txtNum(r.Back(r.CILB)), txtNum(r.Back(r.CIUB)), txtNum(r.Tau2), r.I2)
		}
		_ = tw.Flush()
		fmt.Fprintf(&out, "  Test for subgroup differences: Q(%d) = %s, p %s", sa.DF, txtNum(float64(sa.QBetween)), txtP(float64(sa.PBetween)))
		if q := float64(sa.QPooled); !math.IsNaN(q) {
			fmt.Fprintf(&out, "; with a common tau^2: QM = %s, p %s", txtNum(q), txtP(float64(sa.PPooled)))
		}
		out.WriteString("\n")
	}
	if g := rep.Regression; g != nil {
		fmt.Fprintf(&out, "\nMeta-regression on %s (k = %d)\n", strings.Join(g.Mods, " + "), g.K)
		tw := tabwriter.NewWriter(&out, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  Term\testimate\tse\t%s\tp\tCI\n", g.Test)
		for _, c := range g.Coefficients {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s to %s\n", cell(c.Term), txtNum(float64(c.Est)), txtNum(float64(c.SE)), txtNum(float64(c.Stat)), strings.TrimPrefix(txtP(float64(c.Pval)), "= "), txtNum(float64(c.CILB)), txtNum(float64(c.CIUB)))
		}
		_ = tw.Flush()
		fmt.Fprintf(&out, "  QM = %s, p %s; QE(%d) = %s, p %s; tau^2 = %s; R^2 = %s%%\n", txtNum(float64(g.QM)), txtP(float64(g.QMp)), g.QEdf, txtNum(float64(g.QE)), txtP(float64(g.QEp)), txtNum(float64(g.Tau2)), txtNum(float64(g.R2)))
	}
	if e := rep.Egger; e != nil {
		fmt.Fprintf(&out, "\nEgger's test: %s = %s, p %s; limit estimate %s (%s to %s)\n", map[bool]string{true: "t", false: "z"}[e.DF > 0], txtNum(float64(e.Stat)), txtP(float64(e.Pval)), txtNum(b(float64(e.Limit))), txtNum(b(float64(e.LimitCILB))), txtNum(b(float64(e.LimitCIUB))))
	}
	if bt := rep.Begg; bt != nil {
		fmt.Fprintf(&out, "Begg's test: Kendall's tau = %s, p %s\n", txtNum(float64(bt.Tau)), txtP(float64(bt.Pval)))
	}
	if tf := rep.TrimFill; tf != nil {
		r := tf.Result
		fmt.Fprintf(&out, "Trim and fill (%s): %d missing on the %s side; adjusted %s %s (%s to %s)\n", tf.Estimator, tf.K0, tf.Side, m, txtNum(r.Back(r.Est)), txtNum(r.Back(r.CILB)), txtNum(r.Back(r.CIUB)))
	}
	sens := func(title string, rows []SensitivityRow) {
		if len(rows) == 0 {
			return
		}
		fmt.Fprintf(&out, "\n%s\n", title)
		tw := tabwriter.NewWriter(&out, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  Study\t%s\tCI\tp\ttau^2\tI^2\n", m)
		for _, r := range rows {
			fmt.Fprintf(tw, "  %s\t%s\t%s to %s\t%s\t%s\t%s\n", cell(r.Study), txtNum(b(float64(r.Est))), txtNum(b(float64(r.CILB))), txtNum(b(float64(r.CIUB))), strings.TrimPrefix(txtP(float64(r.Pval)), "= "), txtNum(float64(r.Tau2)), txtNum(float64(r.I2)))
		}
		_ = tw.Flush()
	}
	sens("Leave-one-out (each row without the study)", rep.LeaveOneOut)
	sens("Cumulative (each row adds the study)", rep.Cumulative)
	if len(rep.Influence) > 0 {
		out.WriteString("\nInfluence diagnostics\n")
		tw := tabwriter.NewWriter(&out, 0, 4, 2, ' ', 0)
		fmt.Fprintf(tw, "  Study\trstudent\tdffits\tcook.d\tcov.r\ttau2.del\tQE.del\that\tweight\tinf\n")
		for _, r := range rep.Influence {
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", cell(r.Study), txtNum(float64(r.RStudent)), txtNum(float64(r.DFFITS)), txtNum(float64(r.CookD)), txtNum(float64(r.CovR)), txtNum(float64(r.Tau2Del)), txtNum(float64(r.QEDel)), txtNum(float64(r.Hat)), txtNum(float64(r.Weight)), map[bool]string{true: "*", false: ""}[r.Influential])
		}
		_ = tw.Flush()
	}
	if len(rep.Sentences) > 0 {
		out.WriteString("\nIn words\n")
		for _, s := range rep.Sentences {
			fmt.Fprintf(&out, "  %s\n", s)
		}
	}
	_, err := io.WriteString(w, out.String())
	return err
}

// txtNum prints a statistic with four decimals ("n/a" when undefined).
func txtNum(v float64) string {
	if !isFinite(v) {
		return "n/a"
	}
	return fmt.Sprintf("%.4f", v)
}

// txtP prints a p-value with its relation: "= 0.0421", "< 0.0001".
func txtP(p float64) string {
	switch {
	case !isFinite(p):
		return "= n/a"
	case p < 1e-4:
		return "< 0.0001"
	}
	return fmt.Sprintf("= %.4f", p)
}

// cell makes a label safe for one tab-separated cell.
func cell(s string) string {
	return strings.Map(func(r rune) rune {
		if r == '\t' || r == '\n' || r == '\r' || (r < 0x20) {
			return ' '
		}
		return r
	}, s)
}

package meta

import (
	"fmt"
	"math"
	"strconv"
)

// Statistic is one line of a pooled result's summary, as the desktop app's
// summary table and the workbook's Pooled sheet show it.
type Statistic struct {
	// Key is metafor's name of the quantity ("est", "ci_lb", "tau2", "I2",
	// "QEp", ...); back-transformed values of ratio measures are named after
	// the measure ("RR", "RR ci_lb", ...), descriptive lines "model",
	// "measure", "level" and "note".
	Key string
	// Label says what it is in words, e.g. "Pooled log risk ratio".
	Label string
	// Value is a float64, an int or a string; nil when the quantity is
	// undefined for the model (the prediction interval of a fixed-effect
	// model, for example).
	Value any
}

// Text formats the value for reading: four decimals (four significant
// digits for small numbers), p-values as "< 0.0001" below that, I² as a
// percentage, "—" when undefined.
func (s Statistic) Text() string {
	switch v := s.Value.(type) {
	case nil:
		return "—"
	case string:
		return v
	case int:
		return strconv.Itoa(v)
	case float64:
		switch s.Key {
		case "pval", "QEp":
			if v < 1e-4 {
				return "< 0.0001"
			}
			return strconv.FormatFloat(v, 'f', 4, 64)
		case "I2", "I2_ci_lb", "I2_ci_ub":
			return strconv.FormatFloat(v, 'f', 2, 64) + "%"
		}
		if v != 0 && math.Abs(v) < 1e-3 {
			return strconv.FormatFloat(v, 'g', 4, 64)
		}
		return strconv.FormatFloat(v, 'f', 4, 64)
	}
	return fmt.Sprint(s.Value)
}

// Statistics lists the pooled result for tables: model and measure, k, the
// estimate with its standard error, test and confidence interval (and their
// back-transformed values for ratio measures and proportions on the logit
// or double-arcsine scale), the prediction interval,
// τ², τ, I², H², Q with its degrees of freedom and p-value, REML
// iterations, then the notes.
func (r Result) Statistics() []Statistic {
	scale := string(r.Measure)
	if r.IsRatio() {
		scale = "log " + string(r.Measure)
	}
	if s := proportionScale(r.Measure); s != "" {
		scale = s
	}
	pct := fmt.Sprintf("%g%%", 100*r.Level)
	out := []Statistic{
		{"model", "Model", r.ModelLabel()},
		{"measure", "Effect measure", fmt.Sprintf("%s (%s)", r.Measure.Label(), r.Measure)},
		{"level", "Confidence level", pct},
		{"k", "Studies in the model (k)", r.K},
		{"est", "Pooled estimate (" + scale + ")", num(r.Est)},
		{"se", "Standard error (" + scale + ")", num(r.SE)},
	}
	if r.DF > 0 {
		out = append(out,
			Statistic{"tval", "Test statistic t", num(r.Stat)},
			Statistic{"df", "Degrees of freedom of t", r.DF})
	} else {
		out = append(out, Statistic{"zval", "Test statistic z", num(r.Stat)})
	}
	out = append(out,
		Statistic{"pval", "p-value of the pooled estimate", num(r.Pval)},
		Statistic{"ci_lb", pct + " CI lower limit (" + scale + ")", num(r.CILB)},
		Statistic{"ci_ub", pct + " CI upper limit (" + scale + ")", num(r.CIUB)},
	)
	if r.IsRatio() {
		m := string(r.Measure)
		out = append(out,
			Statistic{m, "Pooled " + r.Measure.Label(), num(math.Exp(r.Est))},
			Statistic{m + " ci_lb", pct + " CI lower limit (" + m + ")", num(math.Exp(r.CILB))},
			Statistic{m + " ci_ub", pct + " CI upper limit (" + m + ")", num(math.Exp(r.CIUB))},
		)
	}
	if r.Measure == PLO || r.Measure == PFT {
		out = append(out,
			Statistic{"proportion", "Pooled proportion (back-transformed)", num(r.Back(r.Est))},
			Statistic{"proportion ci_lb", pct + " CI lower limit (proportion)", num(r.Back(r.CILB))},
			Statistic{"proportion ci_ub", pct + " CI upper limit (proportion)", num(r.Back(r.CIUB))},
		)
	}
	out = append(out,
		Statistic{"pi_lb", pct + " prediction interval lower limit (" + scale + ")", num(r.PILB)},
		Statistic{"pi_ub", pct + " prediction interval upper limit (" + scale + ")", num(r.PIUB)},
	)
	if r.IsRatio() {
		m := string(r.Measure)
		out = append(out,
			Statistic{m + " pi_lb", pct + " prediction interval lower limit (" + m + ")", num(math.Exp(r.PILB))},
			Statistic{m + " pi_ub", pct + " prediction interval upper limit (" + m + ")", num(math.Exp(r.PIUB))},
		)
	}
	if r.Measure == PLO || r.Measure == PFT {
		out = append(out,
			Statistic{"proportion pi_lb", pct + " prediction interval lower limit (proportion)", num(r.Back(r.PILB))},
			Statistic{"proportion pi_ub", pct + " prediction interval upper limit (proportion)", num(r.Back(r.PIUB))},
		)
	}
	if r.Measure == PFT {
		out = append(out, Statistic{"harmonic_n", "Harmonic mean study size (for the back-transformation)", num(r.HarmonicN)})
	}
	out = append(out,
		Statistic{"tau2", "Between-study variance τ²", num(r.Tau2)},
		Statistic{"se_tau2", "Standard error of τ²", num(r.SETau2)},
		Statistic{"tau2_ci_lb", pct + " CI lower limit of τ² (Q-profile)", num(r.Tau2CILB)},
		Statistic{"tau2_ci_ub", pct + " CI upper limit of τ² (Q-profile)", num(r.Tau2CIUB)},
		Statistic{"tau", "τ (√τ²)", num(r.Tau)},
		Statistic{"I2", "I² (share of variability due to heterogeneity)", num(r.I2)},
		Statistic{"I2_ci_lb", pct + " CI lower limit of I²", num(r.I2CILB)},
		Statistic{"I2_ci_ub", pct + " CI upper limit of I²", num(r.I2CIUB)},
		Statistic{"H2", "H²", num(r.H2)},
		Statistic{"QE", "Cochran's Q", num(r.QE)},
		Statistic{"QEdf", "Degrees of freedom of Q", r.QEdf},
		Statistic{"QEp", "p-value of Q", num(r.QEp)},
	)
	if r.Iterations > 0 {
		out = append(out, Statistic{"iterations", "Fisher-scoring iterations", r.Iterations})
	}
	for i, n := range r.Notes {
		out = append(out, Statistic{"note", fmt.Sprintf("Note %d", i+1), n})
	}
	return out
}

// num returns v, or nil when it is not finite (undefined for the model).
func num(v float64) any {
	if !isFinite(v) {
		return nil
	}
	return v
}

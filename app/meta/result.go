package meta

import (
	"encoding/json"
	"math"
)

// Result is a pooled meta-analysis with metafor's quantities. Estimates of
// OR, RR and GENRatio are on the log scale, as rma prints them; Back gives
// the ratio scale.
type Result struct {
	// Measure is the effect-size measure.
	Measure Measure
	// Method is the pooling method (EE, MH, DL or REML).
	Method Method
	// Test is z or knha (Knapp–Hartung).
	Test Test
	// Model names method and adjustment: "EE", "MH", "DL", "REML",
	// "REML+HK", "DL+HK".
	Model string
	// Level is the confidence level as a fraction (0.95).
	Level float64
	// K is the number of studies in the model (metafor's k; for MH the
	// number of tables, double-zero ones included).
	K int

	// Est is the pooled estimate (metafor's beta).
	Est float64
	// SE is its standard error (Knapp–Hartung adjusted for Test knha).
	SE float64
	// Stat is the test statistic: zval, or tval for Test knha.
	Stat float64
	// DF is the t distribution's degrees of freedom (k−1) for Test knha, 0
	// for z.
	DF int
	// Pval is the two-sided p-value of Stat.
	Pval float64
	// CILB and CIUB are the confidence limits (ci.lb, ci.ub).
	CILB, CIUB float64

	// Tau2 is the between-study variance τ² (0 for EE and MH).
	Tau2 float64
	// Tau is √τ².
	Tau float64
	// SETau2 is the standard error of τ² (NaN when not computed: EE, MH, k=1).
	SETau2 float64
	// Tau2CILB and Tau2CIUB are the Q-profile confidence limits of τ²
	// (confint.rma.uni); NaN for common-effect models and k = 1.
	Tau2CILB, Tau2CIUB float64
	// I2 is I² in percent.
	I2 float64
	// I2CILB and I2CIUB are the confidence limits of I² from those of τ².
	I2CILB, I2CIUB float64
	// H2 is H².
	H2 float64
	// H2CILB and H2CIUB are the confidence limits of H².
	H2CILB, H2CIUB float64
	// QE is Cochran's Q statistic for heterogeneity.
	QE float64
	// QEp is its p-value (chi-squared with QEdf degrees of freedom).
	QEp float64
	// QEdf is the degrees of freedom of QE (number of studies with an
	// estimable effect − 1; 0 when there is one).
	QEdf int
	// PILB and PIUB are the prediction interval (predict.rma's pi.lb, pi.ub)
	// for random-effects models; NaN for fixed-effect ones.
	PILB, PIUB float64
	// Iterations is the number of Fisher-scoring iterations of REML, ML and
	// EB (0 otherwise).
	Iterations int
	// HarmonicN is the harmonic mean of the sizes of the studies in the
	// model for PFT, at which Back inverts the double arcsine (metafor's
	// transf.ipft.hm); NaN for other measures.
	HarmonicN float64
	// Options are the options the result was computed with, metafor's
	// defaults filled in (zero-cell correction, double-zero handling, ...),
	// for provenance.
	Options Options

	// Studies lists every analysed study in input order.
	Studies []StudyResult
	// Notes explain corrections, omissions and special cases in plain words.
	Notes []string
}

// StudyResult is one study's effect, confidence interval and weight.
type StudyResult struct {
	// Label is the study label; Year its year ("" when the data has none).
	Label string
	Year  string
	// Row is the input data row (0 when not from a table).
	Row int
	// Estimable is false when the study has no usable effect (e.g. a dropped
	// double-zero study); YI, VI, SEI, CILB and CIUB are then NaN.
	Estimable bool
	// YI is the observed effect on the analysis scale (log scale for ratios).
	YI float64
	// VI is its sampling variance.
	VI float64
	// SEI is √VI.
	SEI float64
	// CILB and CIUB are the study's normal-theory confidence limits
	// yi ± z·sei, as metafor's forest plot shows them.
	CILB, CIUB float64
	// Weight is the study's weight in percent (metafor's weights()).
	Weight float64
	// Note explains why a study is not estimable or was corrected.
	Note string
	// Covariates are the study's moderator and grouping values
	// (Study.Covariates), for Regress and Subgroups.
	Covariates map[string]string `json:"-"`
}

// IsRatio reports whether the result is on the log scale of a ratio.
func (r Result) IsRatio() bool { return r.Measure.IsRatio() }

// IsRandom reports whether the model is a random-effects model.
func (r Result) IsRandom() bool { return r.Method.IsRandom() }

// Back transforms a value on the analysis scale to the display scale: exp
// for ratios, the inverse logit for PLO, the inverse double arcsine at the
// harmonic mean study size for PFT, unchanged otherwise.
func (r Result) Back(x float64) float64 {
	if r.IsRatio() {
		return math.Exp(x)
	}
	if r.Measure.IsProportion() {
		return backProportion(r.Measure, x, r.HarmonicN)
	}
	return x
}

// ModelLabel describes the model for people, e.g. "Random-effects model
// (REML, Knapp–Hartung)".
func (r Result) ModelLabel() string {
	var s string
	switch r.Method {
	case EE:
		s = "Common-effect model (inverse variance"
	case MH:
		s = "Common-effect model (Mantel–Haenszel"
	case PETO:
		s = "Common-effect model (Peto"
	case DL:
		s = "Random-effects model (DerSimonian–Laird"
	case REML:
		s = "Random-effects model (REML"
	default:
		if r.Method.IsRandom() {
			s = "Random-effects model (" + r.Method.Label() + ", " + string(r.Method)
		} else {
			s = "Model (" + string(r.Method)
		}
	}
	if r.Test == TestKnHa {
		s += ", Knapp–Hartung"
	}
	return s + ")"
}

// Summary is the JSON shape of a Result (clinsight meta --json), with
// metafor's names. Values that are undefined for the model (NaN) are null.
type Summary struct {
	// Measure is the effect-size measure ("OR", "RR", ...).
	Measure Measure `json:"measure"`
	// Model is the model name ("REML+HK", "MH", ...).
	Model string `json:"model"`
	// Method is the pooling method.
	Method Method `json:"method"`
	// Test is "z" or "t" (Knapp–Hartung).
	Test string `json:"test"`
	// Level is the confidence level as a fraction.
	Level float64 `json:"level"`
	// K is the number of studies in the model.
	K int `json:"k"`
	// Est is the pooled estimate (log scale for ratios).
	Est Float `json:"est"`
	// SE is its standard error.
	SE Float `json:"se"`
	// Zval is the z statistic (z test only).
	Zval *Float `json:"zval,omitempty"`
	// Tval is the t statistic (Knapp–Hartung only).
	Tval *Float `json:"tval,omitempty"`
	// DF is the t distribution's degrees of freedom (Knapp–Hartung only).
	DF *int `json:"df,omitempty"`
	// Pval is the two-sided p-value.
	Pval Float `json:"pval"`
	// CILB is the lower confidence limit.
	CILB Float `json:"ci_lb"`
	// CIUB is the upper confidence limit.
	CIUB Float `json:"ci_ub"`
	// PILB is the lower prediction limit (random effects only).
	PILB Float `json:"pi_lb"`
	// PIUB is the upper prediction limit (random effects only).
	PIUB Float `json:"pi_ub"`
	// Tau2 is τ².
	Tau2 Float `json:"tau2"`
	// Tau is τ.
	Tau Float `json:"tau"`
	// SETau2 is the standard error of τ² (DL and REML only).
	SETau2 Float `json:"se_tau2"`
	// Tau2CILB is the lower Q-profile confidence limit of τ².
	Tau2CILB Float `json:"tau2_ci_lb"`
	// Tau2CIUB is the upper Q-profile confidence limit of τ².
	Tau2CIUB Float `json:"tau2_ci_ub"`
	// I2 is I² in percent.
	I2 Float `json:"I2"`
	// I2CILB is the lower confidence limit of I².
	I2CILB Float `json:"I2_ci_lb"`
	// I2CIUB is the upper confidence limit of I².
	I2CIUB Float `json:"I2_ci_ub"`
	// H2 is H².
	H2 Float `json:"H2"`
	// H2CILB is the lower confidence limit of H².
	H2CILB Float `json:"H2_ci_lb"`
	// H2CIUB is the upper confidence limit of H².
	H2CIUB Float `json:"H2_ci_ub"`
	// QE is Cochran's Q.
	QE Float `json:"QE"`
	// QEp is the p-value of QE.
	QEp Float `json:"QEp"`
	// QEdf is the degrees of freedom of QE.
	QEdf int `json:"QEdf"`
	// Exp holds the back-transformed values for ratio measures.
	Exp *ExpJSON `json:"exp,omitempty"`
	// Proportion holds the pooled values as proportions for PR, PLO and PFT
	// (back-transformed for PLO and PFT).
	Proportion *ExpJSON `json:"proportion,omitempty"`
	// HarmonicN is the harmonic mean study size used to back-transform PFT.
	HarmonicN *Float `json:"harmonic_n,omitempty"`
	// Studies lists the per-study effects and weights.
	Studies []StudyJSON `json:"studies"`
	// Notes explain corrections, omissions and special cases.
	Notes []string `json:"notes,omitempty"`
	// Scale is "log" for ratio measures, "identity" otherwise.
	Scale string `json:"scale"`
	// Iterations is the number of Fisher-scoring iterations.
	Iterations int `json:"iterations,omitempty"`
	// Reproduces names the software these results agree with.
	Reproduces string `json:"reproduces"`
}

// ExpJSON holds back-transformed (ratio-scale) values for OR, RR and
// GENRatio.
type ExpJSON struct {
	// Est is exp(est).
	Est Float `json:"est"`
	// CILB is exp(ci_lb).
	CILB Float `json:"ci_lb"`
	// CIUB is exp(ci_ub).
	CIUB Float `json:"ci_ub"`
	// PILB is exp(pi_lb).
	PILB Float `json:"pi_lb"`
	// PIUB is exp(pi_ub).
	PIUB Float `json:"pi_ub"`
}

// StudyJSON is one study in the JSON shape.
type StudyJSON struct {
	// Study is the label.
	Study string `json:"study"`
	// Row is the input data row.
	Row int `json:"row,omitempty"`
	// YI is the effect on the analysis scale.
	YI Float `json:"yi"`
	// VI is its sampling variance.
	VI Float `json:"vi"`
	// CILB is the study's lower confidence limit.
	CILB Float `json:"ci_lb"`
	// CIUB is the study's upper confidence limit.
	CIUB Float `json:"ci_ub"`
	// Weight is the weight in percent.
	Weight Float `json:"weight"`
	// Note explains a non-estimable study.
	Note string `json:"note,omitempty"`
}

// Float is a float64 that marshals NaN and ±Inf as JSON null, for values
// that are undefined in a given model (for example pi_lb of a fixed-effect
// model).
type Float float64

// MarshalJSON implements json.Marshaler.
func (n Float) MarshalJSON() ([]byte, error) {
	f := float64(n)
	if !isFinite(f) {
		return []byte("null"), nil
	}
	return json.Marshal(f)
}

// Summary returns the JSON-friendly shape of the result.
func (r Result) Summary() Summary {
	s := Summary{
		Measure: r.Measure, Model: r.Model, Method: r.Method, Test: "z", Level: r.Level, K: r.K,
		Est: Float(r.Est), SE: Float(r.SE), Pval: Float(r.Pval),
		CILB: Float(r.CILB), CIUB: Float(r.CIUB), PILB: Float(r.PILB), PIUB: Float(r.PIUB),
		Tau2: Float(r.Tau2), Tau: Float(r.Tau), SETau2: Float(r.SETau2),
		I2: Float(r.I2), H2: Float(r.H2),
		Tau2CILB: Float(r.Tau2CILB), Tau2CIUB: Float(r.Tau2CIUB), I2CILB: Float(r.I2CILB), I2CIUB: Float(r.I2CIUB),
		H2CILB: Float(r.H2CILB), H2CIUB: Float(r.H2CIUB), QE: Float(r.QE), QEp: Float(r.QEp), QEdf: r.QEdf,
		Notes: r.Notes, Scale: "identity", Iterations: r.Iterations, Reproduces: "metafor 3.8-1",
	}
	stat := Float(r.Stat)
	if r.DF > 0 {
		s.Test = "t"
		s.Tval = &stat
		df := r.DF
		s.DF = &df
	} else {
		s.Zval = &stat
	}
	if r.IsRatio() {
		s.Scale = "log"
		s.Exp = &ExpJSON{
			Est: Float(math.Exp(r.Est)), CILB: Float(math.Exp(r.CILB)), CIUB: Float(math.Exp(r.CIUB)),
			PILB: Float(math.Exp(r.PILB)), PIUB: Float(math.Exp(r.PIUB)),
		}
	}
	if r.Measure.IsProportion() {
		s.Proportion = &ExpJSON{
			Est: Float(r.Back(r.Est)), CILB: Float(r.Back(r.CILB)), CIUB: Float(r.Back(r.CIUB)),
			PILB: Float(r.Back(r.PILB)), PIUB: Float(r.Back(r.PIUB)),
		}
		if r.Measure == PFT {
			n := Float(r.HarmonicN)
			s.HarmonicN = &n
		}
	}
	s.Studies = make([]StudyJSON, len(r.Studies))
	for i, st := range r.Studies {
		s.Studies[i] = StudyJSON{
			Study: st.Label, Row: st.Row, YI: Float(st.YI), VI: Float(st.VI),
			CILB: Float(st.CILB), CIUB: Float(st.CIUB), Weight: Float(st.Weight), Note: st.Note,
		}
	}
	return s
}

// MarshalJSON encodes the result as its Summary.
func (r Result) MarshalJSON() ([]byte, error) {
	return json.Marshal(r.Summary())
}

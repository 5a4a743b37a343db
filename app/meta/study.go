package meta

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Kind says which summary data a Study carries.
type Kind int

const (
	// Binary studies carry 2x2 counts: events and totals per arm.
	Binary Kind = iota + 1
	// Continuous studies carry a mean, SD and size per arm.
	Continuous
	// Generic studies carry a reported effect with its confidence interval
	// (or its standard error), for generic inverse-variance pooling.
	Generic
	// Proportion studies carry one group's events and total (single-arm
	// studies: response or toxicity rates).
	Proportion
)

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case Binary:
		return "binary"
	case Continuous:
		return "continuous"
	case Generic:
		return "generic"
	case Proportion:
		return "proportion"
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// Study is one study's summary data, named as in metafor. Only the fields of
// its Kind are read.
type Study struct {
	// Label names the study (metafor's slab), for messages and plots.
	Label string
	// Row is the 1-based data row it was read from (0 when not from a table).
	Row int
	// Kind says which of the field groups below is filled in.
	Kind Kind
	// Missing marks a study with a missing (NA or empty) value that the
	// loader kept because InputSpec.SkipMissing was set. Analyze omits it, as
	// metafor's na.omit does, and says so in Result.Notes.
	Missing bool

	// AI is the number of events in the treatment (first) group (Binary).
	AI float64
	// N1I is the size of the treatment group (Binary and Continuous).
	N1I float64
	// CI is the number of events in the control (second) group (Binary).
	CI float64
	// N2I is the size of the control group (Binary and Continuous).
	N2I float64

	// M1I is the mean of the treatment group (Continuous).
	M1I float64
	// SD1I is the standard deviation of the treatment group (Continuous).
	SD1I float64
	// M2I is the mean of the control group (Continuous).
	M2I float64
	// SD2I is the standard deviation of the control group (Continuous).
	SD2I float64

	// Est is the reported effect on its natural scale, e.g. a hazard ratio of
	// 0.8 or a mean difference of -2.1 (Generic).
	Est float64
	// LB and UB are the reported confidence limits of Est on the same scale
	// (Generic; their level is Options.InputLevel, 95% by default). They are
	// ignored when SE is positive.
	LB, UB float64
	// SE, when positive, is the standard error of the effect on the analysis
	// scale: the log scale for GENRatio, the natural scale for GEN (Generic).
	SE float64

	// XI is the number of events of a single-arm study (Proportion).
	XI float64
	// NI is the size of a single-arm study (Proportion).
	NI float64

	// Covariates holds study-level values by lower-case column name
	// (InputSpec.Covariates): moderators for Regress, groupings for
	// Subgroups. Empty means missing.
	Covariates map[string]string
	// Year is the study's year when the table has a "year" column ("" when
	// not), for the forest plot's labels.
	Year string
}

// Validate checks that the study's values are usable for its Kind: counts
// non-negative with events not above totals, group sizes of at least 1
// (2x2) or 2 (continuous), SDs above 0, confidence limits in order. A
// Missing study is valid: it is omitted by Analyze. Errors name the row and
// study.
func (s Study) Validate() error {
	if s.Missing {
		return nil
	}
	switch s.Kind {
	case Binary:
		return s.validateBinary()
	case Continuous:
		return s.validateContinuous()
	case Generic:
		return s.validateGeneric()
	case Proportion:
		return s.validateProportion()
	default:
		return rowError(&s, "the kind of data (2x2 counts, means and SDs, estimate and CI, or events and total) is not set")
	}
}

func (s *Study) validateBinary() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"ai", s.AI}, {"n1i", s.N1I}, {"ci", s.CI}, {"n2i", s.N2I}} {
		if !isFinite(f.v) {
			return rowError(s, "%s is not a finite number", f.name)
		}
		if f.v < 0 {
			return rowError(s, "%s = %s is negative; counts must be 0 or more", f.name, fmtNum(f.v))
		}
	}
	if s.N1I < 1 {
		return rowError(s, "n1i = %s: the treatment group must have at least 1 participant", fmtNum(s.N1I))
	}
	if s.N2I < 1 {
		return rowError(s, "n2i = %s: the control group must have at least 1 participant", fmtNum(s.N2I))
	}
	if s.AI > s.N1I {
		return rowError(s, "ai = %s events is more than the group total n1i = %s", fmtNum(s.AI), fmtNum(s.N1I))
	}
	if s.CI > s.N2I {
		return rowError(s, "ci = %s events is more than the group total n2i = %s", fmtNum(s.CI), fmtNum(s.N2I))
	}
	return nil
}

func (s *Study) validateContinuous() error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"m1i", s.M1I}, {"sd1i", s.SD1I}, {"n1i", s.N1I}, {"m2i", s.M2I}, {"sd2i", s.SD2I}, {"n2i", s.N2I}} {
		if !isFinite(f.v) {
			return rowError(s, "%s is not a finite number", f.name)
		}
	}
	if s.SD1I <= 0 {
		return rowError(s, "sd1i = %s: standard deviations must be greater than 0", fmtNum(s.SD1I))
	}
	if s.SD2I <= 0 {
		return rowError(s, "sd2i = %s: standard deviations must be greater than 0", fmtNum(s.SD2I))
	}
	if s.N1I < 2 {
		return rowError(s, "n1i = %s: each group needs at least 2 participants for a standard deviation", fmtNum(s.N1I))
	}
	if s.N2I < 2 {
		return rowError(s, "n2i = %s: each group needs at least 2 participants for a standard deviation", fmtNum(s.N2I))
	}
	return nil
}

func (s *Study) validateGeneric() error {
	if !isFinite(s.Est) {
		return rowError(s, "the estimate is not a finite number")
	}
	if !isFinite(s.SE) || s.SE < 0 {
		return rowError(s, "the standard error %s must be a finite number above 0 (or left empty to use the CI)", fmtNum(s.SE))
	}
	if s.SE > 0 {
		return nil
	}
	if !isFinite(s.LB) || !isFinite(s.UB) {
		return rowError(s, "the confidence limits are not finite numbers")
	}
	if !(s.LB < s.UB) {
		return rowError(s, "the lower confidence limit %s must be below the upper limit %s", fmtNum(s.LB), fmtNum(s.UB))
	}
	if s.Est < s.LB || s.Est > s.UB {
		return rowError(s, "the estimate %s lies outside its confidence interval [%s, %s]", fmtNum(s.Est), fmtNum(s.LB), fmtNum(s.UB))
	}
	return nil
}

// Measure is the effect-size measure, with metafor's names.
type Measure string

const (
	// OR is the log odds ratio (2x2 counts).
	OR Measure = "OR"
	// RR is the log risk ratio (2x2 counts).
	RR Measure = "RR"
	// RD is the risk difference (2x2 counts).
	RD Measure = "RD"
	// MD is the raw mean difference (continuous data).
	MD Measure = "MD"
	// SMD is the standardized mean difference as Hedges' g (continuous data).
	SMD Measure = "SMD"
	// GEN is a generic effect on a difference scale, pooled as reported
	// (estimate and CI, or estimate and SE).
	GEN Measure = "GEN"
	// GENRatio is a generic ratio (hazard ratio, odds ratio, ...) pooled on the
	// log scale: yi = log(Est), SE = (log(UB) − log(LB)) / (2·z).
	GENRatio Measure = "GEN.RATIO"
	// PR is the raw proportion of a single-arm study (events and total).
	PR Measure = "PR"
	// PLO is the logit-transformed proportion (events and total), shown
	// back-transformed as a proportion.
	PLO Measure = "PLO"
	// PFT is the Freeman–Tukey double-arcsine-transformed proportion (events
	// and total), shown back-transformed at the harmonic mean study size.
	PFT Measure = "PFT"
)

// Kind returns the kind of study data the measure is computed from.
func (m Measure) Kind() Kind {
	switch m {
	case OR, RR, RD:
		return Binary
	case MD, SMD:
		return Continuous
	case GEN, GENRatio:
		return Generic
	case PR, PLO, PFT:
		return Proportion
	}
	return 0
}

// IsRatio reports whether the measure is analysed on the log scale and shown
// back-transformed (OR, RR, GENRatio).
func (m Measure) IsRatio() bool { return m == OR || m == RR || m == GENRatio }

// Label returns a readable name, e.g. "Risk Ratio".
func (m Measure) Label() string {
	switch m {
	case OR:
		return "Odds Ratio"
	case RR:
		return "Risk Ratio"
	case RD:
		return "Risk Difference"
	case MD:
		return "Mean Difference"
	case SMD:
		return "Standardized Mean Difference"
	case GEN:
		return "Effect"
	case GENRatio:
		return "Ratio"
	case PR:
		return "Proportion"
	case PLO:
		return "Proportion (logit)"
	case PFT:
		return "Proportion (Freeman–Tukey)"
	}
	return string(m)
}

// ParseMeasure accepts a measure name case-insensitively ("or", "RR",
// "smd", "gen.ratio", "hr" for a generic ratio, "pr", "plo", "pft").
func ParseMeasure(s string) (Measure, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "OR":
		return OR, nil
	case "RR":
		return RR, nil
	case "RD":
		return RD, nil
	case "MD":
		return MD, nil
	case "SMD":
		return SMD, nil
	case "GEN", "GIV":
		return GEN, nil
	case "GEN.RATIO", "GENRATIO", "GIV.RATIO", "RATIO", "HR":
		return GENRatio, nil
	case "PR":
		return PR, nil
	case "PLO":
		return PLO, nil
	case "PFT":
		return PFT, nil
	}
	return "", errorf(EINVALID, "unknown effect measure %q (use OR, RR, RD, MD, SMD, GEN, GEN.RATIO, PR, PLO or PFT)", s)
}

// Method is the pooling method (metafor's method argument, plus MH for
// rma.mh).
type Method string

const (
	// EE is the equal-effects (fixed-effect) inverse-variance model.
	EE Method = "EE"
	// MH is the Mantel–Haenszel fixed-effect method (OR, RR, RD only).
	MH Method = "MH"
	// DL is the DerSimonian–Laird random-effects estimator of τ².
	DL Method = "DL"
	// REML is the restricted maximum-likelihood random-effects estimator of
	// τ² (metafor's default).
	REML Method = "REML"
	// ML is the maximum-likelihood estimator of τ² (Fisher scoring).
	ML Method = "ML"
	// HE is the Hedges (Hedges–Olkin) estimator of τ².
	HE Method = "HE"
	// HS is the Hunter–Schmidt estimator of τ².
	HS Method = "HS"
	// SJ is the Sidik–Jonkman estimator of τ².
	SJ Method = "SJ"
	// PM is the Paule–Mandel (empirical Bayes moment) estimator of τ².
	PM Method = "PM"
	// EB is the empirical Bayes (Morris) estimator of τ² (Fisher scoring).
	EB Method = "EB"
	// PETO is Peto's one-step odds ratio (rma.peto; measure OR only).
	PETO Method = "PETO"
)

// IsRandom reports whether the method estimates τ² (DL, REML, ML, HE, HS,
// SJ, PM, EB).
func (m Method) IsRandom() bool {
	switch m {
	case DL, REML, ML, HE, HS, SJ, PM, EB:
		return true
	}
	return false
}

// Label names the method for people, e.g. "Paule–Mandel".
func (m Method) Label() string {
	switch m {
	case EE:
		return "Inverse variance (common effect)"
	case MH:
		return "Mantel–Haenszel"
	case PETO:
		return "Peto odds ratio"
	case DL:
		return "DerSimonian–Laird"
	case REML:
		return "Restricted maximum likelihood"
	case ML:
		return "Maximum likelihood"
	case HE:
		return "Hedges"
	case HS:
		return "Hunter–Schmidt"
	case SJ:
		return "Sidik–Jonkman"
	case PM:
		return "Paule–Mandel"
	case EB:
		return "Empirical Bayes"
	}
	return string(m)
}

// ParseMethod accepts a method name case-insensitively; "FE" and "IV" are
// accepted for EE, "HK" or "KNHA" suffixes are not (use Test).
func ParseMethod(s string) (Method, error) {
	switch strings.ToUpper(strings.TrimSpace(s)) {
	case "EE", "FE", "IV", "CE":
		return EE, nil
	case "MH":
		return MH, nil
	case "DL":
		return DL, nil
	case "REML":
		return REML, nil
	case "ML":
		return ML, nil
	case "HE", "HO":
		return HE, nil
	case "HS":
		return HS, nil
	case "SJ":
		return SJ, nil
	case "PM", "EB-PM":
		return PM, nil
	case "EB":
		return EB, nil
	case "PETO":
		return PETO, nil
	}
	return "", errorf(EINVALID, "unknown pooling method %q (use EE, MH, PETO, DL, REML, ML, HE, HS, SJ, PM or EB)", s)
}

// Test is the distribution used for the pooled estimate's test and CI
// (metafor's test argument).
type Test string

const (
	// TestZ uses the standard normal distribution (metafor's default).
	TestZ Test = "z"
	// TestKnHa is the Knapp–Hartung adjustment: the variance of the estimate
	// is scaled by the weighted residual sum of squares over k−1, and the t
	// distribution with k−1 degrees of freedom is used.
	TestKnHa Test = "knha"
)

// ZeroCells says to which studies Options.Add is added (metafor's to).
type ZeroCells string

const (
	// Only0 adds to the cells of studies with at least one zero cell
	// (metafor's default).
	Only0 ZeroCells = "only0"
	// All adds to the cells of every study.
	All ZeroCells = "all"
	// If0All adds to the cells of every study when any study has a zero cell.
	If0All ZeroCells = "if0all"
	// None adds nothing; studies whose effect is then undefined are omitted.
	None ZeroCells = "none"
)

// Control holds the REML Fisher-scoring settings (metafor's control list).
// Zero values select metafor's defaults.
type Control struct {
	// Threshold is the convergence criterion on the change of τ² between
	// iterations (default 1e-5, as metafor).
	Threshold float64
	// MaxIter is the maximum number of iterations (default 100).
	MaxIter int
	// StepAdj scales each Fisher-scoring step (default 1); a value below 1
	// can help when the algorithm does not converge.
	StepAdj float64
}

// Options configures Analyze. The zero value of every field except Measure
// selects metafor's default.
type Options struct {
	// Measure is the effect size to compute and pool (required).
	Measure Measure
	// Method is the pooling method; empty means REML, as metafor's rma.
	Method Method
	// Test selects z (default) or Knapp–Hartung ("knha") inference.
	Test Test
	// Level is the confidence level, as a fraction (0.95) or a percentage
	// (95); 0 means 95%.
	Level float64
	// Add is the value added to cells for zero-cell studies (for
	// proportions: to the events and non-events of studies with no events
	// or only events); 0 means 1/2, except for PFT, where 0 means none as in
	// metafor. To switch the correction off set To to None.
	Add float64
	// To says which studies get Add; empty means Only0.
	To ZeroCells
	// Drop00 drops double-zero studies (no events, or only events, in both
	// arms) before computing OR, RR and RD, as escalc's drop00=TRUE. metafor's
	// default (false) keeps them with the continuity correction. rma.mh always
	// drops them from its heterogeneity statistic, as metafor does.
	Drop00 bool
	// InputLevel is the confidence level of the intervals reported by Generic
	// studies, as a fraction or percentage; 0 means 95%.
	InputLevel float64
	// Control tunes the REML algorithm.
	Control Control
}

// SetAdd sets the value added to the cells of zero-cell studies from what
// a person typed: empty keeps the default (1/2; none for PFT); otherwise a
// number of 0 or more, where 0 means no correction at all (To becomes
// None), as metafor's add=0. Both front ends read the value through it.
func (o *Options) SetAdd(text string) error {
	t := strings.TrimSpace(text)
	if t == "" {
		return nil
	}
	v, err := strconv.ParseFloat(t, 64)
	if err != nil || v < 0 || math.IsInf(v, 0) || math.IsNaN(v) {
		return errorf(EINVALID, "the value added to zero cells must be a number of 0 or more, not %q", t)
	}
	o.Add = v
	if v == 0 {
		o.To = None
	}
	return nil
}

// withDefaults returns the options with metafor's defaults filled in.
func (o Options) withDefaults() Options {
	if o.Method == "" {
		o.Method = REML
	}
	if o.Test == "" {
		o.Test = TestZ
	}
	if o.Level == 0 {
		o.Level = 0.95
	}
	if o.Level > 1 {
		o.Level /= 100
	}
	if o.Add == 0 && o.Measure != PFT {
		o.Add = 0.5
	}
	if o.To == "" {
		o.To = Only0
	}
	if o.InputLevel == 0 {
		o.InputLevel = 0.95
	}
	if o.InputLevel > 1 {
		o.InputLevel /= 100
	}
	if o.Control.Threshold == 0 {
		o.Control.Threshold = 1e-5
	}
	if o.Control.MaxIter == 0 {
		o.Control.MaxIter = 100
	}
	if o.Control.StepAdj == 0 {
		o.Control.StepAdj = 1
	}
	return o
}

// Validate checks the options: a known measure and method, MH only with OR,
// RR or RD, levels strictly between 0 and 1 (or 0 and 100), a non-negative
// Add and positive controls.
func (o Options) Validate() error {
	if o.Measure == "" {
		return errorf(EINVALID, "no effect measure chosen (OR, RR, RD, MD, SMD, GEN, GEN.RATIO, PR, PLO or PFT)")
	}
	if o.Measure.Kind() == 0 {
		return errorf(EINVALID, "unknown effect measure %q (use OR, RR, RD, MD, SMD, GEN, GEN.RATIO, PR, PLO or PFT)", o.Measure)
	}
	d := o.withDefaults()
	switch d.Method {
	case EE, DL, REML, ML, HE, HS, SJ, PM, EB:
	case PETO:
		if d.Measure != OR {
			return errorf(EINVALID, "Peto's method gives an odds ratio: choose the measure OR, not %s", d.Measure)
		}
		if d.Test == TestKnHa {
			return errorf(EINVALID, "the Knapp–Hartung adjustment does not apply to Peto's method")
		}
	case MH:
		if d.Measure.Kind() != Binary {
			return errorf(EINVALID, "the Mantel–Haenszel method needs 2x2 counts and measure OR, RR or RD, not %s", d.Measure)
		}
		if d.Test == TestKnHa {
			return errorf(EINVALID, "the Knapp–Hartung adjustment does not apply to the Mantel–Haenszel method")
		}
	default:
		return errorf(EINVALID, "unknown pooling method %q (use EE, MH, PETO, DL, REML, ML, HE, HS, SJ, PM or EB)", o.Method)
	}
	if d.Test != TestZ && d.Test != TestKnHa {
		return errorf(EINVALID, "unknown test %q (use z or knha)", o.Test)
	}
	if !(d.Level > 0 && d.Level < 1) || !(d.InputLevel > 0 && d.InputLevel < 1) {
		return errorf(EINVALID, "confidence levels must lie between 0 and 1 (or 0 and 100), got %v and %v", o.Level, o.InputLevel)
	}
	if !isFinite(d.Add) || d.Add < 0 {
		return errorf(EINVALID, "the zero-cell correction must be a non-negative number, got %v", o.Add)
	}
	switch d.To {
	case Only0, All, If0All, None:
	default:
		return errorf(EINVALID, "unknown zero-cell rule %q (use only0, all, if0all or none)", o.To)
	}
	c := d.Control
	if !(c.Threshold > 0) || c.MaxIter < 1 || !(c.StepAdj > 0) || !isFinite(c.Threshold) || !isFinite(c.StepAdj) {
		return errorf(EINVALID, "REML controls must be positive (threshold %v, maxiter %d, stepadj %v)", c.Threshold, c.MaxIter, c.StepAdj)
	}
	return nil
}

func isFinite(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }

// fmtNum formats a number for messages: integers without decimals.
func fmtNum(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%g", v)
}

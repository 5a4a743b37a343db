package meta

import (
	"context"
	"fmt"
	"math"
	"sort"
	"strings"
)

// maxModerators bounds the number of model columns of a meta-regression.
const maxModerators = 20

// Coefficient is one term of a meta-regression.
type Coefficient struct {
	// Term names it: "intrcpt", a numeric moderator's column name, or
	// "column=level" for a level of a categorical moderator (treatment
	// coding against the first level in sorted order, as R's factor()).
	Term string `json:"term"`
	// Est is the coefficient; SE its standard error (Knapp–Hartung
	// adjusted for test knha).
	Est Float `json:"estimate"`
	SE  Float `json:"se"`
	// Stat is the z or t statistic; Pval its two-sided p-value.
	Stat Float `json:"stat"`
	Pval Float `json:"pval"`
	// CILB and CIUB are the confidence limits.
	CILB Float `json:"ci_lb"`
	CIUB Float `json:"ci_ub"`
}

// Regression is a mixed-effects meta-regression, metafor's rma(yi, vi,
// mods = ~ ...): coefficients, the omnibus test of the moderators QM, the
// residual heterogeneity QE and τ², and R².
type Regression struct {
	Measure Measure `json:"measure"`
	Method  Method  `json:"method"`
	// Test is "z" or "t" (Knapp–Hartung; QM is then an F statistic).
	Test  string  `json:"test"`
	Level float64 `json:"level"`
	// Mods are the moderator columns as requested.
	Mods []string `json:"mods"`
	// K is the number of studies in the model, P the number of coefficients.
	K int `json:"k"`
	P int `json:"p"`
	// Coefficients lists the model terms, the intercept first.
	Coefficients []Coefficient `json:"coefficients"`
	// Tau2 is the residual between-study variance, SETau2 its standard error.
	Tau2   Float `json:"tau2"`
	SETau2 Float `json:"se_tau2"`
	// I2 and H2 describe the residual heterogeneity.
	I2 Float `json:"I2"`
	H2 Float `json:"H2"`
	// R2 is the share of τ² explained by the moderators, in percent
	// (metafor's pseudo-R²); null when not defined.
	R2 Float `json:"R2"`
	// QE is the test of residual heterogeneity with QEdf degrees of freedom.
	QE   Float `json:"QE"`
	QEp  Float `json:"QEp"`
	QEdf int   `json:"QEdf"`
	// QM is the omnibus test of the moderators: chi-squared with QMdf1
	// degrees of freedom, or F(QMdf1, QMdf2) with Knapp–Hartung.
	QM    Float `json:"QM"`
	QMp   Float `json:"QMp"`
	QMdf1 int   `json:"QMdf1"`
	QMdf2 int   `json:"QMdf2,omitempty"`
	// Studies are the studies in the model with their moderator values,
	// for the bubble plot.
	Studies []RegressionStudy `json:"studies"`
	// Notes explain omitted studies and dropped moderators.
	Notes []string `json:"notes,omitempty"`
}

// RegressionStudy is one study of a meta-regression.
type RegressionStudy struct {
	Label string    `json:"study"`
	YI    float64   `json:"yi"`
	VI    float64   `json:"vi"`
	X     []float64 `json:"x"` // the model row without the intercept
}

// Regress fits a meta-regression of the studies of res on the moderator
// columns mods (Study.Covariates) with res's method, test, level and
// controls, as metafor's rma.uni with mods does. A column whose values are
// all numbers is a continuous moderator, any other a categorical one.
// Studies with a missing moderator value are left out (na.omit), and
// moderators that are constant or redundant are dropped, as metafor does,
// with a note. MH and Peto results cannot be regressed.
func Regress(res Result, mods []string) (Regression, error) {
	return regress(context.Background(), res, mods, nil)
}

func regress(ctx context.Context, res Result, mods []string, factors map[string]bool) (Regression, error) {
	if res.Method == MH || res.Method == PETO {
		return Regression{}, errorf(EINVALID, "meta-regression needs an inverse-variance model (EE or a random-effects model), not %s", res.Method.Label())
	}
	if len(mods) == 0 {
		return Regression{}, errorf(EINVALID, "no moderator chosen")
	}
	var notes []string
	var y, v []float64
	var rows []*StudyResult
	missing := 0
	for i := range res.Studies {
		s := &res.Studies[i]
		if !s.Estimable {
			continue
		}
		ok := true
		for _, m := range mods {
			if strings.TrimSpace(s.Covariates[normName(m)]) == "" {
				ok = false
			}
		}
		if !ok {
			missing++
			continue
		}
		y, v = append(y, s.YI), append(v, s.VI)
		rows = append(rows, s)
	}
	if missing > 0 {
		notes = append(notes, fmt.Sprintf("%s left out: a moderator value is missing.", plural(missing, "study", "studies")))
	}
	if len(y) == 0 {
		return Regression{}, errorf(ENOTESTIMABLE, "no study has values for all of the moderators %s", strings.Join(mods, ", "))
	}
	names := []string{"intrcpt"}
	x := make([][]float64, len(rows))
	for i := range x {
		x[i] = []float64{1}
	}
	for _, m := range mods {
		key := normName(m)
		numeric := !factors[key]
		vals := make([]float64, len(rows))
		for i, s := range rows {
			f, _, err := parseNumber(strings.TrimSpace(s.Covariates[key]))
			if err != nil {
				numeric = false
				break
			}
			vals[i] = f
		}
		if numeric {
			names = append(names, m)
			for i := range x {
				x[i] = append(x[i], vals[i])
			}
			continue
		}
		levels := map[string]bool{}
		for _, s := range rows {
			levels[strings.TrimSpace(s.Covariates[key])] = true
		}
		lv := make([]string, 0, len(levels))
		for l := range levels {
			lv = append(lv, l)
		}
		sort.Strings(lv)
		for _, l := range lv[1:] {
			names = append(names, m+"="+l)
			for i, s := range rows {
				d := 0.0
				if strings.TrimSpace(s.Covariates[key]) == l {
					d = 1
				}
				x[i] = append(x[i], d)
			}
		}
		if len(names) > maxModerators+1 {
			return Regression{}, errorf(EINVALID, "the moderators make more than %d model terms (a categorical moderator adds one per level); choose fewer", maxModerators)
		}
	}
	x, names, dropped := dropRedundant(x, names)
	if len(dropped) > 0 {
		notes = append(notes, fmt.Sprintf("Moderator terms %s are constant or redundant across the studies and were dropped, as metafor does.", strings.Join(dropped, ", ")))
	}
	o := res.Options
	u, err := fitRMA(ctx, uniModel{y: y, v: v, x: x, intercept: true, method: o.Method, test: o.Test, level: o.Level, ctl: o.Control})
	if err != nil {
		if ctx.Err() != nil {
			return Regression{}, stopped(ctx, "Meta-regression")
		}
		return Regression{}, err
	}
	r := Regression{
		Measure: res.Measure, Method: o.Method, Test: "z", Level: o.Level, Mods: mods, K: u.k, P: u.p,
		Tau2: Float(u.tau2), SETau2: Float(u.seTau2), I2: Float(u.i2), H2: Float(u.h2), R2: Float(u.r2),
		QE: Float(u.qe), QEp: Float(u.qep), QEdf: u.qeDF, QM: Float(u.qm), QMp: Float(u.qmp), QMdf1: u.qmDF1, QMdf2: u.qmDF2,
		Notes: append(notes, u.notes...),
	}
	if !o.Method.IsRandom() {
		r.Tau2 = 0
	}
	if u.test == TestKnHa {
		r.Test = "t"
	}
	for j := range names {
		r.Coefficients = append(r.Coefficients, Coefficient{Term: names[j], Est: Float(u.beta[j]), SE: Float(u.se[j]),
			Stat: Float(u.stat[j]), Pval: Float(u.pval[j]), CILB: Float(u.ciLB[j]), CIUB: Float(u.ciUB[j])})
	}
	for i, s := range rows {
		r.Studies = append(r.Studies, RegressionStudy{Label: s.Label, YI: s.YI, VI: s.VI, X: append([]float64(nil), x[i][1:]...)})
	}
	return r, nil
}

// dropRedundant drops, in order, the columns of x that are (numerically)
// linear combinations of the columns before them, as lm's pivoting QR
// (tolerance 1e-7) does when metafor removes redundant predictors.
func dropRedundant(x [][]float64, names []string) ([][]float64, []string, []string) {
	k := len(x)
	var basis [][]float64 // orthonormal columns kept so far
	var keep []int
	var dropped []string
	for j := range names {
		c := make([]float64, k)
		var n0 float64
		for i := range x {
			c[i] = x[i][j]
			n0 += c[i] * c[i]
		}
		for _, b := range basis {
			var d float64
			for i := range c {
				d += c[i] * b[i]
			}
			for i := range c {
				c[i] -= d * b[i]
			}
		}
		var n float64
		for _, ci := range c {
			n += ci * ci
		}
		if n0 == 0 || math.Sqrt(n) <= 1e-7*math.Sqrt(n0) {
			dropped = append(dropped, names[j])
			continue
		}
		for i := range c {
			c[i] /= math.Sqrt(n)
		}
		basis = append(basis, c)
		keep = append(keep, j)
	}
	if len(dropped) == 0 {
		return x, names, nil
	}
	nx := make([][]float64, k)
	for i := range x {
		for _, j := range keep {
			nx[i] = append(nx[i], x[i][j])
		}
	}
	nn := make([]string, len(keep))
	for i, j := range keep {
		nn[i] = names[j]
	}
	return nx, nn, dropped
}

// Subgroup is the pooled result of one subgroup.
type Subgroup struct {
	// Name is the subgroup's value of the grouping column.
	Name string `json:"group"`
	// Result is the meta-analysis of its studies alone (own τ²).
	Result Result `json:"result"`
}

// SubgroupAnalysis is a meta-analysis per subgroup with the tests for
// subgroup differences.
type SubgroupAnalysis struct {
	// Column is the grouping column.
	Column string `json:"column"`
	// Groups are the subgroups in sorted order.
	Groups []Subgroup `json:"groups"`
	// QBetween is the test for subgroup differences with a separate τ² per
	// subgroup: Cochran's Q of the subgroup estimates under a common-effect
	// model, with DF = groups − 1 (for EE it is the fixed-effect Q between).
	QBetween Float `json:"Q_between"`
	// PBetween is its p-value.
	PBetween Float `json:"Q_between_p"`
	// DF is its degrees of freedom.
	DF int `json:"Q_between_df"`
	// QPooled is the test with a τ² pooled across subgroups: the QM of the
	// meta-regression on the grouping (Knapp–Hartung: an F statistic with
	// DFPooled2 denominator degrees of freedom); null for MH and Peto.
	QPooled   Float `json:"Q_between_pooled"`
	PPooled   Float `json:"Q_between_pooled_p"`
	DFPooled2 int   `json:"Q_between_pooled_df2,omitempty"`
	// Notes explain omitted studies and untestable cases.
	Notes []string `json:"notes,omitempty"`
}

// Subgroups splits the studies by the covariate column, pools each subgroup
// with opts (Analyze) and tests for subgroup differences. Studies with no
// value in the column are left out with a note.
func Subgroups(studies []Study, opts Options, column string) (SubgroupAnalysis, error) {
	return subgroups(context.Background(), studies, opts, column)
}

func subgroups(ctx context.Context, studies []Study, opts Options, column string) (SubgroupAnalysis, error) {
	key := normName(column)
	groups := map[string][]Study{}
	var kept []Study
	missing := 0
	for _, s := range studies {
		g := strings.TrimSpace(s.Covariates[key])
		if g == "" {
			missing++
			continue
		}
		groups[g] = append(groups[g], s)
		kept = append(kept, s)
	}
	sa := SubgroupAnalysis{Column: column, QPooled: Float(math.NaN()), PPooled: Float(math.NaN())}
	if missing > 0 {
		sa.Notes = append(sa.Notes, fmt.Sprintf("%s left out: no value in %q.", plural(missing, "study", "studies"), column))
	}
	if len(groups) < 2 {
		return SubgroupAnalysis{}, errorf(EINVALID, "the column %q has %d distinct value(s); subgroups need at least 2", column, len(groups))
	}
	if len(groups) > maxModerators {
		return SubgroupAnalysis{}, errorf(EINVALID, "the column %q has %d distinct values; at most %d subgroups are supported", column, len(groups), maxModerators)
	}
	names := make([]string, 0, len(groups))
	for g := range groups {
		names = append(names, g)
	}
	sort.Strings(names)
	var est, vr []float64
	for _, g := range names {
		r, err := analyze(ctx, groups[g], opts)
		if err != nil {
			if ctx.Err() != nil {
				return SubgroupAnalysis{}, stopped(ctx, "Subgroup analysis")
			}
			return SubgroupAnalysis{}, fmt.Errorf("subgroup %q: %w", g, err)
		}
		sa.Groups = append(sa.Groups, Subgroup{Name: g, Result: r})
		est, vr = append(est, r.Est), append(vr, r.SE*r.SE)
	}
	sep, err := fitRMA(ctx, uniModel{y: est, v: vr, method: EE, test: TestZ, level: 0.95, ctl: Options{}.withDefaults().Control})
	if err != nil {
		if ctx.Err() != nil {
			return SubgroupAnalysis{}, stopped(ctx, "Subgroup analysis")
		}
		return SubgroupAnalysis{}, fmt.Errorf("test for subgroup differences: %w", err)
	}
	sa.QBetween, sa.PBetween, sa.DF = Float(sep.qe), Float(sep.qep), sep.qeDF
	o := opts.withDefaults()
	if o.Method == MH || o.Method == PETO {
		sa.Notes = append(sa.Notes, "The test with a pooled between-study variance needs an inverse-variance model; only the test across subgroup estimates is given.")
		return sa, nil
	}
	all, err := analyze(ctx, kept, opts)
	if err != nil {
		if ctx.Err() != nil {
			return SubgroupAnalysis{}, stopped(ctx, "Subgroup analysis")
		}
		return SubgroupAnalysis{}, err
	}
	reg, err := regress(ctx, all, []string{column}, map[string]bool{key: true})
	if err != nil {
		if ctx.Err() != nil {
			return SubgroupAnalysis{}, stopped(ctx, "Subgroup analysis")
		}
		sa.Notes = append(sa.Notes, "The test with a pooled between-study variance could not be computed: "+err.Error())
		return sa, nil
	}
	sa.QPooled, sa.PPooled, sa.DFPooled2 = reg.QM, reg.QMp, reg.QMdf2
	return sa, nil
}

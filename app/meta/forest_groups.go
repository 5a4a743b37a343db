package meta

import (
	"fmt"
	"io"
	"math"
)

// WriteSubgroupForestPlot draws the forest plot of a subgroup analysis as
// metafor's forest with subgroups: per subgroup a bold heading, its
// studies (weights within the subgroup) and its pooled diamond; then the
// overall diamond and prediction interval of overall (the model of all
// studies), and the test for subgroup differences under the heterogeneity
// line.
func WriteSubgroupForestPlot(w io.Writer, sa SubgroupAnalysis, overall Result, opts PlotOptions) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	if len(sa.Groups) == 0 || !isFinite(overall.Est) {
		return errorf(EINVALID, "there is no subgroup analysis to plot")
	}
	if opts.Title == "" {
		opts.Title = fmt.Sprintf("%s by %s \u2014 %s, k = %d", overall.Measure.Label(), sa.Column, overall.ModelLabel(), overall.K)
	}
	lay, err := newForestLayout(overall, opts, func(l *forestLayout) {
		for _, g := range sa.Groups {
			r := g.Result
			l.rows = append(l.rows, forestRow{kind: rowHeader, label: fmt.Sprintf("%s = %s", sa.Column, g.Name)})
			l.addStudyRows(r.Studies)
			l.rows = append(l.rows, forestRow{kind: rowPooled, label: fmt.Sprintf("%s (k = %d)", pooledLabel(r), r.K), ok: isFinite(r.Est),
				y: r.Est, lo: r.CILB, hi: r.CIUB, est: l.fmtCI(r.Est, r.CILB, r.CIUB)})
			l.rows = append(l.rows, forestRow{kind: rowBlank})
		}
		l.addPooledRows()
		l.hetLines = append(l.hetLines, fmt.Sprintf("Test for subgroup differences: Q = %.2f (df = %d), p %s", float64(sa.QBetween), sa.DF, fmtP(float64(sa.PBetween))))
	})
	if err != nil {
		return err
	}
	return lay.render(w)
}

// WriteCumulativeForestPlot draws a cumulative meta-analysis as metafor's
// forest(cumul(...)): one row per added study with the pooled estimate and
// CI of the studies so far; res is the model of all studies.
func WriteCumulativeForestPlot(w io.Writer, rows []SensitivityRow, res Result, opts PlotOptions) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	if len(rows) == 0 {
		return errorf(EINVALID, "there is no cumulative analysis to plot")
	}
	z := res
	z.Studies = make([]StudyResult, len(rows))
	for i, r := range rows {
		ok := isFinite(float64(r.Est)) && isFinite(float64(r.CILB))
		z.Studies[i] = StudyResult{Label: "+ " + r.Study, Estimable: ok, YI: float64(r.Est), CILB: float64(r.CILB), CIUB: float64(r.CIUB), Weight: 1}
	}
	if opts.Title == "" {
		opts.Title = fmt.Sprintf("Cumulative meta-analysis \u2014 %s, %s", res.Measure.Label(), res.ModelLabel())
	}
	lay, err := newForestLayout(z, opts, func(l *forestLayout) {
		for _, s := range z.Studies {
			r := forestRow{kind: rowStudy, label: s.Label, ok: s.Estimable, y: s.YI, lo: s.CILB, hi: s.CIUB, weight: 0.3}
			r.est = "not estimable"
			if s.Estimable {
				r.est = l.fmtCI(s.YI, s.CILB, s.CIUB)
			}
			l.rows = append(l.rows, r)
		}
		l.maxWeight = 1
	})
	if err != nil {
		return err
	}
	return lay.render(w)
}

// addStudyRows appends one row per study.
func (l *forestLayout) addStudyRows(studies []StudyResult) {
	for _, s := range studies {
		r := forestRow{kind: rowStudy, label: s.Label, ok: s.Estimable, y: s.YI, lo: s.CILB, hi: s.CIUB, weight: s.Weight}
		r.est = "not estimable"
		if s.Estimable {
			r.est = l.fmtCI(s.YI, s.CILB, s.CIUB)
		}
		r.wtext = fmt.Sprintf("%.1f%%", s.Weight)
		l.maxWeight = math.Max(l.maxWeight, s.Weight)
		l.rows = append(l.rows, r)
	}
}

// addPooledRows appends the overall diamond and prediction interval.
func (l *forestLayout) addPooledRows() {
	res := l.res
	l.rows = append(l.rows, forestRow{
		kind: rowPooled, label: pooledLabel(res), ok: true, y: res.Est, lo: res.CILB, hi: res.CIUB,
		est: l.fmtCI(res.Est, res.CILB, res.CIUB), wtext: "100%",
	})
	if res.IsRandom() && !l.opts.HidePrediction && isFinite(res.PILB) && res.K > 1 {
		l.rows = append(l.rows, forestRow{
			kind: rowPI, label: "Prediction interval", ok: true, y: res.Est, lo: res.PILB, hi: res.PIUB,
			est: fmt.Sprintf("[%s, %s]", l.fmtNum(res.Back(res.PILB)), l.fmtNum(res.Back(res.PIUB))),
		})
	}
}

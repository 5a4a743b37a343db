package meta

import (
	"context"
	"errors"
	"fmt"
	"math"

	"gonum.org/v1/gonum/stat/distuv"
)

// maxReportedErrors caps how many row errors one call reports.
const maxReportedErrors = 20

// Analyze computes each study's effect size and pools them as metafor's
// rma.uni (EE or a random-effects estimator of τ²: DL, REML, ML, HE, HS,
// SJ, PM, EB; test z or knha), rma.mh (MH) or rma.peto (PETO) would. Studies
// marked Missing are omitted with a note. Invalid studies make it fail with
// an *Error per offending row (joined). With a single usable study the
// result is that study's estimate, with a note; with none it fails.
func Analyze(studies []Study, opts Options) (Result, error) {
	return analyze(context.Background(), studies, opts)
}

// analyze is Analyze stopping with an ECANCELLED error when ctx is
// cancelled (Run's pooled model and refits).
func analyze(ctx context.Context, studies []Study, opts Options) (Result, error) {
	if err := opts.Validate(); err != nil {
		return Result{}, err
	}
	o := opts.withDefaults()
	kind := o.Measure.Kind()

	var notes []string
	var errs []error
	used := make([]Study, 0, len(studies))
	for i := range studies {
		s := studies[i]
		if s.Label == "" {
			s.Label = fmt.Sprintf("Study %d", i+1)
		}
		if s.Missing {
			notes = append(notes, fmt.Sprintf("%s omitted: missing values.", where(&s)))
			continue
		}
		if s.Kind != kind {
			errs = append(errs, rowError(&s, "has %s data but the measure %s needs %s data", s.Kind, o.Measure, kind))
		} else if err := s.Validate(); err != nil {
			errs = append(errs, err)
		}
		if len(errs) >= maxReportedErrors {
			break
		}
		used = append(used, s)
	}
	if len(errs) > 0 {
		return Result{}, errors.Join(errs...)
	}
	if len(used) == 0 {
		return Result{}, errorf(EINVALID, "there are no studies to analyse")
	}

	var eff []effect
	switch kind {
	case Binary:
		drop00 := o.Drop00 || o.Method == MH // rma.mh: escalc(drop00 = TRUE) for Q
		if o.Method == PETO {
			eff = petoEffects(used, o.Add, o.To)
		} else {
			eff = binaryEffects(used, o.Measure, o.Add, o.To, drop00)
		}
		if o.Method != MH {
			if note := correctionNote(used, o.To, o.Add); note != "" {
				notes = append(notes, note)
			}
		}
	case Continuous:
		eff = continuousEffects(used, o.Measure)
	case Generic:
		var err error
		if eff, err = genericEffects(used, o.Measure, o.InputLevel); err != nil {
			return Result{}, err
		}
	case Proportion:
		add := proportionAdd(o.Measure, opts.Add)
		eff = proportionEffects(used, o.Measure, add, o.To)
		if note := proportionCorrectionNote(used, o.Measure, o.To, add); note != "" {
			notes = append(notes, note)
		}
	}

	var y, v []float64
	for i, e := range eff {
		if e.ok {
			y = append(y, e.yi)
			v = append(v, e.vi)
		} else if o.Method != MH && o.Method != PETO {
			notes = append(notes, fmt.Sprintf("%s left out: %s.", where(&used[i]), e.reason))
		}
	}

	res := Result{
		Measure: o.Measure, Method: o.Method, Test: o.Test, Model: modelName(o.Method, o.Test), Level: o.Level,
		PILB: math.NaN(), PIUB: math.NaN(), Options: o, HarmonicN: math.NaN(),
	}
	if o.Measure == PFT {
		res.HarmonicN = harmonicN(used, eff)
	}
	var f fit
	var wt []float64
	if o.Method == MH {
		var err error
		if f, wt, err = fitMH(used, o.Measure, y, v, o.Level); err != nil {
			return Result{}, err
		}
		res.K = len(used)
		if n := len(used) - len(y); n > 0 {
			notes = append(notes, fmt.Sprintf("%s with no events (or only events) in both groups add nothing to the Mantel–Haenszel estimate and are left out of Q, I² and H² (as metafor's rma.mh).", plural(n, "study", "studies")))
		}
	} else if o.Method == PETO {
		var err error
		if f, wt, err = fitPeto(used, len(y), o.Level); err != nil {
			return Result{}, err
		}
		res.K = len(used)
		if n := len(used) - len(y); n > 0 {
			notes = append(notes, fmt.Sprintf("%s with no events (or only events) in both groups add nothing to Peto's estimate and are left out of Q's degrees of freedom (as metafor's rma.peto).", plural(n, "study", "studies")))
		}
	} else {
		if len(y) == 0 {
			return Result{}, errorf(ENOTESTIMABLE, "no study has an estimable effect")
		}
		var err error
		if f, err = fitUni(ctx, y, v, o.Method, o.Test, o.Level, o.Control); err != nil {
			return Result{}, err
		}
		res.K = len(y)
		w := weights(v, f.tau2)
		var sw float64
		for _, wi := range w {
			sw += wi
		}
		wt = make([]float64, 0, len(used))
		j := 0
		for _, e := range eff {
			if e.ok {
				wt = append(wt, 100*w[j]/sw)
				j++
			} else {
				wt = append(wt, 0)
			}
		}
		if o.Test == TestKnHa && res.K == 1 {
			res.Test, res.Model = TestZ, modelName(o.Method, TestZ)
		}
	}
	if res.K == 1 {
		notes = append(notes, "Only one study: the pooled estimate is that study's own estimate, and heterogeneity (τ², I², Q) cannot be assessed.")
	}
	notes = append(notes, f.notes...)

	res.Est, res.SE, res.Stat, res.DF, res.Pval = f.est, f.se, f.zval, f.df, f.pval
	res.CILB, res.CIUB = f.ciLB, f.ciUB
	res.Tau2, res.Tau, res.SETau2 = f.tau2, math.Sqrt(f.tau2), f.seTau2
	res.I2, res.H2, res.QE, res.QEp, res.QEdf = f.i2, f.h2, f.qe, f.qep, f.qeDF
	res.Tau2CILB, res.Tau2CIUB, res.I2CILB, res.I2CIUB, res.H2CILB, res.H2CIUB = f.tau2Lo, f.tau2Hi, f.i2Lo, f.i2Hi, f.h2Lo, f.h2Hi
	res.Iterations = f.iter
	if o.Method.IsRandom() {
		// predict.rma: pred ± crit·√(se² + τ²), crit as for the CI.
		h := f.crit * math.Sqrt(f.se*f.se+f.tau2)
		res.PILB, res.PIUB = f.est-h, f.est+h
	}

	z := distuv.UnitNormal.Quantile(1 - (1-o.Level)/2)
	res.Studies = make([]StudyResult, len(used))
	for i, e := range eff {
		sr := StudyResult{Label: used[i].Label, Year: used[i].Year, Row: used[i].Row, Weight: wt[i], Covariates: used[i].Covariates}
		if e.ok {
			se := math.Sqrt(e.vi)
			sr.Estimable, sr.YI, sr.VI, sr.SEI = true, e.yi, e.vi, se
			sr.CILB, sr.CIUB = e.yi-z*se, e.yi+z*se
		} else {
			nan := math.NaN()
			sr.YI, sr.VI, sr.SEI, sr.CILB, sr.CIUB = nan, nan, nan, nan, nan
			sr.Note = e.reason
		}
		res.Studies[i] = sr
	}
	res.Notes = notes
	return res, nil
}

func modelName(m Method, t Test) string {
	if t == TestKnHa {
		return string(m) + "+HK"
	}
	return string(m)
}

// correctionNote says which studies received the zero-cell correction.
func correctionNote(studies []Study, to ZeroCells, add float64) string {
	n := 0
	for i := range studies {
		if hasZeroCell(&studies[i]) {
			n++
		}
	}
	switch {
	case to == All:
		return fmt.Sprintf("%g added to every cell of every study (to = \"all\").", add)
	case to == If0All && n > 0:
		return fmt.Sprintf("%g added to every cell of every study because %s a zero cell (to = \"if0all\").", add, plural(n, "study has", "studies have"))
	case to == Only0 && n > 0:
		return fmt.Sprintf("%g added to every cell of %s with a zero cell (metafor's default continuity correction).", add, plural(n, "study", "studies"))
	}
	return ""
}

func where(s *Study) string {
	if s.Row > 0 {
		return fmt.Sprintf("Study %q (data row %d)", s.Label, s.Row)
	}
	return fmt.Sprintf("Study %q", s.Label)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}

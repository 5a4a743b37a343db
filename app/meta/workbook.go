package meta

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/clinsight/clinsight/export"
)

// Sheet names of the workbook written by ExportReport.
const (
	// StudiesSheet holds one row per study.
	StudiesSheet = "Studies"
	// PooledSheet holds the pooled result (Result.Statistics).
	PooledSheet = "Pooled"
	// PlotSheet holds the forest plot picture.
	PlotSheet = "Forest plot"
)

// NewProvenance starts the provenance record of an analysis: the app
// version, the data file (or a description such as "pasted text"), the
// sheet, filter, column mapping and missing-value rule of spec, and the
// current time. ExportReport adds the analysis options.
func NewProvenance(appVersion, dataSource string, spec InputSpec) export.Provenance {
	p := export.Provenance{AppVersion: appVersion, DataSource: dataSource, Created: time.Now()}
	if spec.Sheet != "" {
		p.Add("Sheet", spec.Sheet)
	}
	if len(spec.Where) > 0 {
		cols := make([]string, 0, len(spec.Where))
		for c := range spec.Where {
			cols = append(cols, c)
		}
		sort.Strings(cols)
		p.Add("Filter", filterString(spec.Where, cols))
	}
	if m := columnMapping(spec.Columns); m != "" {
		p.Add("Columns", m)
	}
	if spec.SkipMissing {
		p.Add("Missing values", "studies with a missing value omitted (metafor's na.omit)")
	} else {
		p.Add("Missing values", "not allowed (an error)")
	}
	return p
}

// columnMapping lists the non-default column names as field=column pairs.
func columnMapping(c Columns) string {
	var parts []string
	for _, f := range []string{"study", "ai", "bi", "n1i", "ci", "di", "n2i", "m1i", "sd1i", "m2i", "sd2i", "est", "ci_lb", "ci_ub", "sei", "xi", "ni"} {
		if v := *columnField(&c, f); v != "" {
			parts = append(parts, f+"="+v)
		}
	}
	return strings.Join(parts, ", ")
}

// writeWorkbook writes a meta-analysis to the .xlsx workbook at path: a
// Studies sheet (each study's label, data row, input values, yi and vi on
// the analysis scale, the estimate and confidence interval on the display
// scale, weight and note, including studies omitted for missing values), a
// Pooled sheet (Result.Statistics), the extra tables and images, and a
// Provenance sheet with prov followed by the measure, model, Knapp–Hartung
// adjustment, confidence level and zero-cell handling. studies are those
// given to Analyze for res (nil writes the Studies sheet without input
// values). The file is written atomically: on an error or when ctx is
// cancelled no file is left behind.
func writeWorkbook(ctx context.Context, path string, studies []Study, res Result, extra []export.Table, images []export.Image, prov export.Provenance, opts export.Options) (export.Summary, error) {
	studiesTable, err := studiesTable(studies, res)
	if err != nil {
		return export.Summary{}, err
	}
	pooled := res.Statistics()
	pooledTable := export.Table{
		Name:    PooledSheet,
		Columns: []string{"Statistic", "Value", "Description"},
		Rows: func(yield func([]any, error) bool) {
			for _, s := range pooled {
				if !yield([]any{s.Key, s.Value, s.Label}, nil) {
					return
				}
			}
		},
	}
	o := res.Options
	prov.Extra = slices.Clone(prov.Extra) // appends must not reach the caller's array
	prov.Add("Effect measure", fmt.Sprintf("%s (%s)", res.Measure.Label(), res.Measure))
	prov.Add("Model", res.ModelLabel())
	prov.Add("Method", string(res.Method))
	hk := "no (z test)"
	if res.Test == TestKnHa {
		hk = fmt.Sprintf("yes (t test with %d degrees of freedom)", res.DF)
	} else if o.Test == TestKnHa {
		hk = "requested, not applied (one study)"
	}
	prov.Add("Knapp–Hartung adjustment", hk)
	prov.Add("Confidence level", fmt.Sprintf("%g%%", 100*res.Level))
	if res.Measure.Kind() == Binary {
		prov.Add("Zero cells", zeroCellRule(o, res.Method))
		prov.Add("Double-zero studies", doubleZeroRule(o, res.Method))
	}
	if res.Measure.Kind() == Proportion {
		prov.Add("No events or only events", proportionZeroRule(o))
		if res.Measure == PFT {
			prov.Add("Back-transformation", fmt.Sprintf("inverse Freeman–Tukey at the harmonic mean study size %.6g (metafor's transf.ipft.hm)", res.HarmonicN))
		}
	}
	if res.Measure.Kind() == Generic {
		prov.Add("Level of the reported intervals", fmt.Sprintf("%g%%", 100*o.InputLevel))
	}
	switch res.Method {
	case REML, ML, EB:
		prov.Add(string(res.Method)+" control", fmt.Sprintf("Fisher scoring from Hedges' estimate: threshold %g, at most %d iterations, step adjustment %g", o.Control.Threshold, o.Control.MaxIter, o.Control.StepAdj))
	case PM:
		prov.Add("PM control", fmt.Sprintf("root of the generalized Q statistic in [0, max(100, 10·mad(yi)²)], tolerance %g, at most %d iterations", rootTol, o.Control.MaxIter))
	}
	if res.IsRandom() {
		prov.Add("CI of τ², I² and H²", "Q-profile method (confint.rma.uni)")
	}
	prov.Add("Studies in the model (k)", res.K)
	prov.Add("Reproduces", "R package metafor 3.8-1")

	opts.Images = append(slices.Clone(opts.Images), images...)
	sum, err := export.WriteWorkbook(ctx, path, append([]export.Table{studiesTable, pooledTable}, extra...), prov, opts)
	if err != nil {
		return export.Summary{}, fmt.Errorf("meta: writing the workbook: %w", err)
	}
	return sum, nil
}

// studiesTable builds the Studies sheet. Studies that Analyze omitted for
// missing values are listed with a note; the others take their effects from
// res.Studies in order.
func studiesTable(studies []Study, res Result) (export.Table, error) {
	kind := res.Measure.Kind()
	inputs := inputColumns(kind)
	pct := fmt.Sprintf("%g%%", 100*res.Level)
	scale := string(res.Measure)
	if res.IsRatio() {
		scale = "log " + scale
	}
	m := string(res.Measure)
	if res.Measure.IsProportion() {
		m = "Proportion"
	}
	cols := []string{"Study", "Data row"}
	for _, c := range inputs {
		cols = append(cols, c.header)
	}
	cols = append(cols, "yi ("+scale+")", "vi", m, m+" "+pct+" CI lower", m+" "+pct+" CI upper", "Weight (%)", "Note")

	if studies == nil {
		studies = make([]Study, len(res.Studies))
		for i, sr := range res.Studies {
			studies[i] = Study{Label: sr.Label, Row: sr.Row}
		}
	}
	used := 0
	for _, s := range studies {
		if !s.Missing {
			used++
		}
	}
	if used != len(res.Studies) {
		return export.Table{}, errorf(EINVALID, "the %d studies given do not match the result's %d studies", used, len(res.Studies))
	}

	rows := func(yield func([]any, error) bool) {
		j := 0
		for i, s := range studies {
			row := make([]any, 0, len(cols))
			label := s.Label
			if label == "" {
				label = fmt.Sprintf("Study %d", i+1)
			}
			var rowNo any
			if s.Row > 0 {
				rowNo = s.Row
			}
			if s.Missing {
				row = append(row, label, rowNo)
				for range inputs {
					row = append(row, nil)
				}
				row = append(row, nil, nil, nil, nil, nil, nil, "omitted: missing values")
				if !yield(row, nil) {
					return
				}
				continue
			}
			sr := res.Studies[j]
			j++
			row = append(row, sr.Label, rowNo)
			for _, c := range inputs {
				if s.Kind == kind {
					row = append(row, c.value(&s))
				} else {
					row = append(row, nil)
				}
			}
			row = append(row, num(sr.YI), num(sr.VI), num(res.Back(sr.YI)), num(res.Back(sr.CILB)), num(res.Back(sr.CIUB)), num(sr.Weight), sr.Note)
			if !yield(row, nil) {
				return
			}
		}
	}
	return export.Table{Name: StudiesSheet, Columns: cols, Rows: rows}, nil
}

// inputColumn is one input value of a study on the Studies sheet.
type inputColumn struct {
	header string
	value  func(*Study) any
}

// inputColumns are the input columns for a kind of data.
func inputColumns(kind Kind) []inputColumn {
	f := func(get func(*Study) float64) func(*Study) any {
		return func(s *Study) any { return get(s) }
	}
	switch kind {
	case Binary:
		return []inputColumn{
			{"ai (group 1 events)", f(func(s *Study) float64 { return s.AI })},
			{"n1i (group 1 total)", f(func(s *Study) float64 { return s.N1I })},
			{"ci (group 2 events)", f(func(s *Study) float64 { return s.CI })},
			{"n2i (group 2 total)", f(func(s *Study) float64 { return s.N2I })},
		}
	case Continuous:
		return []inputColumn{
			{"m1i (group 1 mean)", f(func(s *Study) float64 { return s.M1I })},
			{"sd1i (group 1 SD)", f(func(s *Study) float64 { return s.SD1I })},
			{"n1i (group 1 size)", f(func(s *Study) float64 { return s.N1I })},
			{"m2i (group 2 mean)", f(func(s *Study) float64 { return s.M2I })},
			{"sd2i (group 2 SD)", f(func(s *Study) float64 { return s.SD2I })},
			{"n2i (group 2 size)", f(func(s *Study) float64 { return s.N2I })},
		}
	case Generic:
		opt := func(get func(*Study) float64) func(*Study) any {
			return func(s *Study) any {
				if v := get(s); v != 0 {
					return v
				}
				return nil
			}
		}
		return []inputColumn{
			{"Reported estimate", f(func(s *Study) float64 { return s.Est })},
			{"Reported CI lower", opt(func(s *Study) float64 { return s.LB })},
			{"Reported CI upper", opt(func(s *Study) float64 { return s.UB })},
			{"sei (analysis scale)", opt(func(s *Study) float64 { return s.SE })},
		}
	case Proportion:
		return []inputColumn{
			{"xi (events)", f(func(s *Study) float64 { return s.XI })},
			{"ni (total)", f(func(s *Study) float64 { return s.NI })},
		}
	}
	return nil
}

// zeroCellRule describes the zero-cell correction of 2x2 effect sizes.
func zeroCellRule(o Options, m Method) string {
	var s string
	switch o.To {
	case None:
		s = `none (to = "none"): studies whose effect is then undefined are left out`
	case All:
		s = fmt.Sprintf(`%g added to every cell of every study (add = %g, to = "all")`, o.Add, o.Add)
	case If0All:
		s = fmt.Sprintf(`%g added to every cell of every study when any study has a zero cell (add = %g, to = "if0all")`, o.Add, o.Add)
	default:
		s = fmt.Sprintf(`%g added to every cell of studies with a zero cell (add = %g, to = "only0")`, o.Add, o.Add)
		if o.Add == 0.5 {
			s += ", metafor's default"
		}
	}
	if m == MH {
		s += "; the Mantel–Haenszel estimate itself pools the uncorrected tables"
	}
	return s
}

// doubleZeroRule describes how studies without events (or with only
// events) in both groups are handled.
func doubleZeroRule(o Options, m Method) string {
	switch {
	case m == MH:
		return "counted in k; they add nothing to the Mantel–Haenszel estimate and are left out of Q, I² and H² (as metafor's rma.mh)"
	case o.Drop00:
		return "left out (drop00 = TRUE)"
	}
	return "kept with the zero-cell correction (drop00 = FALSE, metafor's default)"
}

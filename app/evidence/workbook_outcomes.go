package evidence

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/clinsight/clinsight/app/meta"
	"github.com/clinsight/clinsight/export"
)

// Sheets of the review workbook for several outcomes and arm choices.
const (
	// OutcomesSheet lists the outcomes of a review with several, with the
	// prefix of each outcome's sheets ("O2 Results - pain").
	OutcomesSheet = "Outcomes"
	// ArmsSheet records the user's arm choices for multi-arm studies (which
	// groups, combined or not) and the studies awaiting one.
	ArmsSheet = "Arm choices"
)

// maxSheetName is Excel's limit on a sheet name's length.
const maxSheetName = 31

// OutcomeAnalysis is the meta-analysis of one outcome for the workbook.
type OutcomeAnalysis struct {
	// Meta is the result, nil when the meta-analysis was not run (Error
	// then says why).
	Meta *meta.Result
	// Studies are the inputs given to meta.Analyze, in order.
	Studies []meta.Study
	// Report and Plan are the further analyses (see ProjectExport), nil
	// to leave them out.
	Report *meta.Report
	Plan   meta.Plan
	// Error is why the meta-analysis was not run.
	Error string
}

// OutcomeSheet names a sheet of outcome i (0 is the first) of a review
// with several outcomes: "O2 Results - pain at 6 months", the outcome's
// name clipped so that the name has at most 31 characters (and left out
// when fewer than 4 of its characters would fit). The "O2" prefix keeps
// the names of different outcomes apart.
func OutcomeSheet(i int, name, what string) string {
	s := fmt.Sprintf("O%d %s", i+1, what)
	room := maxSheetName - len([]rune(s)) - len(" - ")
	name = strings.Map(func(r rune) rune {
		if strings.ContainsRune(`[]:*?/\'`, r) {
			return '_'
		}
		return r
	}, cleanSpace(name))
	if room >= 4 && name != "" {
		if r := []rune(name); len(r) > room {
			name = strings.TrimSpace(string(r[:room]))
		}
		s += " - " + name
	}
	return s
}

// workbookBlocks are the outcomes' sheets, pictures and provenance notes.
type workbookBlocks struct {
	tables []export.Table
	images []export.Image
	notes  []export.Entry
}

// analysis returns outcome i's meta-analysis for the workbook, nil when
// there is none.
func (w *workbookWriter) analysis(i int) *OutcomeAnalysis {
	if i == 0 {
		if w.x.Meta == nil {
			return nil
		}
		return &OutcomeAnalysis{Meta: w.x.Meta, Studies: w.x.MetaStudies, Report: w.x.MetaReport, Plan: w.x.MetaPlan}
	}
	return w.x.OtherMeta[i]
}

// outcomeBlocks returns each outcome's block: its Results and
// Standardized sheets and, when its meta-analysis was run, the
// Meta-analysis and Pooled result sheets, the further analyses and the
// forest plot. A review with one outcome keeps the sheet names of before
// (Results, Standardized, ...); with several, each outcome's sheets are
// named by OutcomeSheet and listed on the Outcomes sheet. The Arm choices
// sheet is written when an outcome has an arm choice or a study awaits one.
func (w *workbookWriter) outcomeBlocks() (workbookBlocks, error) {
	var b workbookBlocks
	n := w.p.NumOutcomes()
	if n > 1 {
		b.tables = append(b.tables, w.outcomesTable())
	}
	for i := range n {
		o := w.p.OutcomeAt(i)
		name := func(single, what string) string {
			if n == 1 {
				return single
			}
			return OutcomeSheet(i, o.Name(), what)
		}
		b.tables = append(b.tables, w.resultsTableFor(o, name(ResultsSheet, "Results")), w.standardTableFor(i, name(StandardSheet, "Standardized")))
		if i == n-1 {
			if t, ok := w.armsTable(); ok {
				b.tables = append(b.tables, t)
			}
		}
		a := w.analysis(i)
		if n > 1 {
			b.notes = append(b.notes, export.Entry{Key: fmt.Sprintf("Outcome %d", i+1), Value: outcomeNote(o, a)})
		}
		if a == nil || a.Meta == nil {
			continue
		}
		mt, err := metaTableFor(*a.Meta, a.Studies, name(MetaSheet, "Meta-analysis"))
		if err != nil {
			return b, fmt.Errorf("%s: %w", o.Name(), err)
		}
		b.tables = append(b.tables, mt, pooledTableFor(*a.Meta, name(PooledSheet, "Pooled result")))
		if a.Report != nil {
			// The further analyses: their tables, plots (the forest plot has
			// its own sheet already) and settings.
			parts := meta.ReportSheets(*a.Report, a.Plan)
			for _, t := range parts.Tables {
				t.Name = name(t.Name, t.Name)
				b.tables = append(b.tables, t)
			}
			for _, im := range parts.Images {
				if im.Sheet != meta.PlotSheet {
					im.Sheet = name(im.Sheet, im.Sheet)
					b.images = append(b.images, im)
				}
			}
			for _, kv := range parts.Settings {
				key := kv[0]
				if n > 1 {
					key = fmt.Sprintf("Outcome %d: %s", i+1, key)
				}
				b.notes = append(b.notes, export.Entry{Key: key, Value: kv[1]})
			}
		}
		forest := w.x.ForestPNG
		if i > 0 || len(forest) == 0 {
			var buf bytes.Buffer
			if err := meta.WriteForestPlot(&buf, *a.Meta, meta.PlotOptions{}); err != nil {
				b.notes = append(b.notes, export.Entry{Key: name("Forest plot", "Forest plot"), Value: "not drawn: " + err.Error()})
				forest = nil
			} else {
				forest = buf.Bytes()
			}
		}
		if len(forest) > 0 {
			alt := fmt.Sprintf("Forest plot: %s, %s, k = %d", a.Meta.Measure.Label(), a.Meta.ModelLabel(), a.Meta.K)
			if n > 1 {
				alt = fmt.Sprintf("Forest plot of %s: %s, %s, k = %d", o.Name(), a.Meta.Measure.Label(), a.Meta.ModelLabel(), a.Meta.K)
			}
			b.images = append(b.images, export.Image{Sheet: name(ForestSheet, "Forest plot"), PNG: forest, AltText: alt})
		}
	}
	return b, nil
}

// outcomeNote describes an outcome and its meta-analysis for the
// provenance.
func outcomeNote(o *Outcome, a *OutcomeAnalysis) string {
	s := fmt.Sprintf("%s (%s)", o.Name(), o.Result.Measure.Label())
	if c := cleanSpace(o.Result.Cohort); c != "" {
		s += "; groups compared: " + c
	}
	switch {
	case a != nil && a.Meta != nil:
		s += fmt.Sprintf("; meta-analysis: %s (%s), %s, k = %d", a.Meta.Measure.Label(), a.Meta.Measure, a.Meta.ModelLabel(), a.Meta.K)
	case a != nil && a.Error != "":
		s += "; meta-analysis not run: " + a.Error
	default:
		s += "; meta-analysis not run"
	}
	return s
}

// outcomesTable lists the outcomes of a review with several.
func (w *workbookWriter) outcomesTable() export.Table {
	p := w.p
	cols := []string{"Outcome", "Name", "Result shape", "Groups compared", "Studies with a result", "Studies in the standardized table",
		"Studies awaiting an arm choice", "Meta-analysis", "Sheets"}
	var rs [][]any
	for i := range p.NumOutcomes() {
		o := p.OutcomeAt(i)
		rows, _ := p.StandardTableFor(i)
		var awaiting []string
		for _, id := range p.ArmsNeeded(i) {
			awaiting = append(awaiting, p.Label(id))
		}
		var analysed any = "not run"
		if a := w.analysis(i); a != nil && a.Meta != nil {
			analysed = fmt.Sprintf("%s, k = %d", a.Meta.Measure, a.Meta.K)
		}
		rs = append(rs, []any{i + 1, o.Name(), o.Result.Measure.Label(), cellOrNil(cleanSpace(o.Result.Cohort)),
			p.StudiesWithResults(i), len(rows), cellOrNil(strings.Join(awaiting, "; ")), analysed, fmt.Sprintf("O%d ...", i+1)})
	}
	return export.Table{Name: OutcomesSheet, Columns: cols, Rows: rowSeq(rs)}
}

// armsTable records, for every outcome, the arm choices of the included
// studies (which groups form each side, combined or not, and whether the
// choice still fits the result) and the studies awaiting one; ok is false
// when there is nothing to record.
func (w *workbookWriter) armsTable() (t export.Table, ok bool) {
	p := w.p
	cols := []string{"Outcome", "Study", "Study ID", "Groups in the result", "Treatment groups", "Control groups", "Combined", "Status"}
	var rs [][]any
	for i := range p.NumOutcomes() {
		o := p.OutcomeAt(i)
		need := GroupsCompared(o.Result.Measure)
		for id, r := range p.includedResults(o) {
			c, chosen := o.Arms[id]
			if !chosen && !needsArmChoice(r, o.Result.Measure) {
				continue
			}
			groups := strings.Trim(groupNames(r), " ")
			if !chosen {
				rs = append(rs, []any{o.Name(), p.Label(id), id, groups, nil, nil, nil,
					"awaiting the user's choice: left out of the standardized table and the meta-analysis"})
				continue
			}
			status := "used"
			if _, _, problems := resolveArms(r, c, need); len(problems) > 0 {
				status = "not used: " + strings.Join(problems, "; ")
			}
			rs = append(rs, []any{o.Name(), p.Label(id), id, groups, strings.Join(c.Treatment, "; "), cellOrNil(strings.Join(c.Control, "; ")),
				c.Combined(), status})
		}
	}
	if len(rs) == 0 {
		return export.Table{}, false
	}
	return export.Table{Name: ArmsSheet, Columns: cols, Rows: rowSeq(rs)}, true
}

package ui

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"
	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/app/meta"
)

// bcgModsCSV is dat.bcg with its moderators (year, ablat) and allocation.
const bcgModsCSV = `study,year,ablat,alloc,ai,n1i,ci,n2i
Aronson,1948,44,random,4,123,11,139
Ferguson & Simes,1949,55,random,6,306,29,303
Rosenthal et al,1960,42,random,3,231,11,220
Hart & Sutherland,1977,52,random,62,13598,248,12867
Frimodt-Moller et al,1973,13,alternate,33,5069,47,5808
Stein & Aronson,1953,44,alternate,180,1541,372,1451
Vandiviere et al,1973,19,random,8,2545,10,629
TPT Madras,1980,13,random,505,88391,499,88391
Coetzee & Berjak,1968,27,random,29,7499,45,7277
Rosenthal et al,1961,42,systematic,17,1716,65,1665
Comstock et al,1974,18,systematic,186,50634,141,27338
Comstock & Webster,1969,33,systematic,5,2498,3,2341
Comstock et al,1976,33,systematic,27,16913,29,17854
`

// The further analyses run through the service and show in the tabs, the
// plain-language summary and the exported workbook; the screen holds no
// arithmetic, so its numbers are app/meta's.
func TestMetaScreenFurtherAnalyses(t *testing.T) {
	s := newTestMetaScreen(t)
	onUI(t, func(t testing.TB) {
		if !s.SelectMeasure(meta.RR) || !s.SelectModel(meta.PM) {
			t.Fatal("RR or PM not offered for 2x2 counts")
		}
		f := s.analyses
		f.subgroup.SetText("alloc")
		f.mods.SetText("ablat")
		f.egger.SetChecked(true)
		f.begg.SetChecked(true)
		f.trimFill.SetSelectedIndex(1)
		f.leave1out.SetChecked(true)
		f.cumul.SetChecked(true)
		f.cumulBy.SetText("year")
		f.infl.SetChecked(true)
		f.contours.SetChecked(true)
		s.paste.SetText(bcgModsCSV)
		test.Tap(s.pasteBtn)
	})
	waitStatus(t, s, "Random-effects model (Paule–Mandel, PM), Risk Ratio: k = 13")
	onUI(t, func(t testing.TB) {
		if !s.hasResult {
			t.Fatalf("no result; error %q, status %q", s.errLabel.Text, s.status.Text)
		}
		rep := s.report
		if len(rep.Problems) > 0 || rep.Subgroups == nil || rep.Regression == nil || rep.Egger == nil || rep.Begg == nil ||
			rep.TrimFill == nil || len(rep.LeaveOneOut) != 13 || len(rep.Cumulative) != 13 || len(rep.Influence) != 13 {
			t.Fatalf("report incomplete: problems %q", rep.Problems)
		}
		want, err := meta.Analyze(s.studies, meta.Options{Measure: meta.RR, Method: meta.PM})
		if err != nil || want.Est != s.res.Est || want.Tau2CIUB != s.res.Tau2CIUB {
			t.Errorf("screen est %v, app/meta %v (%v)", s.res.Est, want.Est, err)
		}
		if s.funnel.Image == nil || s.bubble.Image == nil || s.plot.Image == nil || s.cumul.Image == nil {
			t.Error("a plot is missing")
		}
		for _, w := range []string{"Subgroups by alloc", "Meta-regression on ablat", "Trim and fill (L0)", "Influence diagnostics"} {
			if !strings.Contains(s.analysesTxt.Text, w) {
				t.Errorf("Analyses tab lacks %q", w)
			}
		}
		if !strings.Contains(s.notes.Text, "Across 13 studies, the pooled risk ratio was") {
			t.Errorf("no plain-language summary: %q", s.notes.Text)
		}
		if statText(s, "tau2_ci_ub") == "" || statText(s, "tau2_ci_ub") == "—" {
			t.Error("no Q-profile CI of tau2 in the summary table")
		}
	})
	out := filepath.Join(t.TempDir(), "meta.xlsx")
	onUI(t, func(testing.TB) { s.ExportWorkbook(out) })
	waitStatus(t, s, "Exported 13 studies to "+out)
	wb, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatalf("exported workbook: %v", err)
	}
	defer wb.Close()
	for _, sheet := range []string{meta.SubgroupSheet, meta.RegressionSheet, meta.BiasSheet, meta.LeaveOneOutSheet, meta.CumulativeSheet, meta.InfluenceSheet, meta.FunnelSheet, meta.BubbleSheet} {
		if !slices.Contains(wb.GetSheetList(), sheet) {
			t.Errorf("workbook lacks %q: %q", sheet, wb.GetSheetList())
		}
	}
}

// The zero-cell choices reach the engine as metafor's add, to and drop00;
// a bad value is shown inline.
func TestMetaScreenZeroCells(t *testing.T) {
	s := newTestMetaScreen(t)
	onUI(t, func(t testing.TB) {
		s.SelectMeasure(meta.OR)
		s.analyses.add.SetText("0.25")
		s.analyses.to.SetSelectedIndex(1) // all
		s.analyses.drop00.SetChecked(true)
		s.paste.SetText("study,ai,n1i,ci,n2i\nA,0,20,3,20\nB,1,25,0,24\nC,0,30,0,31\nD,2,40,5,40\n")
		test.Tap(s.pasteBtn)
	})
	waitStatus(t, s, "Random-effects model (REML), Odds Ratio: k = 3")
	onUI(t, func(t testing.TB) {
		if !s.hasResult {
			t.Fatalf("no result: %q", s.errLabel.Text)
		}
		o := s.res.Options
		if o.Add != 0.25 || o.To != meta.All || !o.Drop00 || s.res.K != 3 {
			t.Errorf("options add %v to %q drop00 %v, k = %d (want 0.25, all, true, 3)", o.Add, o.To, o.Drop00, s.res.K)
		}
		want, err := meta.Analyze(s.studies, meta.Options{Measure: meta.OR, Add: 0.25, To: meta.All, Drop00: true})
		if err != nil || want.Est != s.res.Est {
			t.Errorf("screen est %v, app/meta %v (%v)", s.res.Est, want.Est, err)
		}
		s.analyses.add.SetText("-1")
		test.Tap(s.analyses.runBtn)
	})
	waitError(t, s, "must be a number of 0 or more") // the reload; the analysis stops at the bad value
	onUI(t, func(t testing.TB) {
		if !strings.Contains(s.errLabel.Text, "must be a number of 0 or more") {
			t.Errorf("error %q", s.errLabel.Text)
		}
	})
}

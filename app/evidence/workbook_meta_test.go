package evidence

import (
	"context"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/app/meta"
	"github.com/clinsight/clinsight/export"
)

// With the further analyses of the review's meta-analysis (AnalyzeReport
// with ReviewMetaPlan), the review workbook gains their sheets — summary,
// small-study effects, leave-one-out, cumulative, influence, funnel and
// cumulative forest plots — with the numbers of the report, and the plan in
// the provenance; the forest plot keeps its one sheet.
func TestWriteProjectWorkbookWithFurtherAnalyses(t *testing.T) {
	p := workbookProject(t)
	studies, rep, err := p.AnalyzeReport(context.Background(), ReviewMetaPlan())
	if err != nil {
		t.Fatal(err)
	}
	if len(studies) != 3 || len(rep.LeaveOneOut) != 3 || len(rep.Cumulative) != 3 || rep.Influence == nil {
		t.Fatalf("report of %d studies: %d leave-one-out rows, %d cumulative rows, influence %v; problems %q",
			len(studies), len(rep.LeaveOneOut), len(rep.Cumulative), rep.Influence != nil, rep.Problems)
	}
	x := &ProjectExport{Project: p, Texts: workbookTexts(), Meta: &rep.Result, MetaStudies: studies,
		MetaReport: &rep, MetaPlan: ReviewMetaPlan()}
	path := filepath.Join(t.TempDir(), "review.xlsx")
	if _, err := WriteProjectWorkbook(context.Background(), path, x, export.Provenance{AppVersion: "test"}, export.Options{}); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	for _, want := range []string{MetaSheet, PooledSheet, ForestSheet, meta.SummarySheet, meta.BiasSheet,
		meta.LeaveOneOutSheet, meta.CumulativeSheet, meta.InfluenceSheet, meta.FunnelSheet, meta.CumulativePlotSheet, "Provenance"} {
		if !slices.Contains(sheets, want) {
			t.Errorf("workbook lacks sheet %q; has %q", want, sheets)
		}
	}
	if n := len(sheets); slices.Contains(sheets, meta.PlotSheet+" (2)") || n != len(slices.Compact(slices.Clone(sheets))) {
		t.Errorf("forest plot sheet repeated: %q", sheets)
	}
	for _, sheet := range []string{meta.FunnelSheet, meta.CumulativePlotSheet} {
		pics, err := f.GetPictures(sheet, "A1")
		if err != nil || len(pics) != 1 {
			t.Errorf("sheet %q has %d pictures (%v), want 1", sheet, len(pics), err)
		}
	}
	// The leave-one-out sheet carries the report's numbers: the estimate
	// without the first study.
	loo := wbSheetRows(t, f, meta.LeaveOneOutSheet)
	if len(loo) != 4 {
		t.Fatalf("leave-one-out sheet has %d rows, want a header and 3", len(loo))
	}
	got, err := strconv.ParseFloat(loo[1][1], 64)
	if want := float64(rep.LeaveOneOut[0].Est); err != nil || math.Abs(got-want) > 1e-9*(1+math.Abs(want)) {
		t.Errorf("leave-one-out estimate without %s: sheet %q, report %g", rep.LeaveOneOut[0].Study, loo[1][1], want)
	}
	prov := wbSheetRows(t, f, "Provenance")
	for _, key := range []string{"Trim and fill", "Egger's test"} {
		if wbFindRow(prov, key) == nil {
			t.Errorf("provenance lacks the setting %q", key)
		}
	}
}

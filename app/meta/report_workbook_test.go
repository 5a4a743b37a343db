package meta

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/export"
	"github.com/xuri/excelize/v2"
)

// The report workbook holds a sheet per analysis run, the plots and the
// plan in the provenance.
func TestExportReport(t *testing.T) {
	bcg := loadBCG(t)
	plan := Plan{Subgroup: "alloc", Mods: []string{"ablat"}, Egger: true, Begg: true, TrimFill: "L0", LeaveOneOut: true, Cumulative: true, Influence: true}
	rep, err := Run(context.Background(), bcg, Options{Measure: RR, Method: PM}, plan)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "report.xlsx")
	prov := NewProvenance("test", "dat.bcg.csv", InputSpec{})
	if _, err := ExportReport(context.Background(), path, bcg, rep, plan, prov, export.Options{}); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sheets := f.GetSheetList()
	for _, want := range []string{StudiesSheet, PooledSheet, SummarySheet, SubgroupSheet, RegressionSheet, BiasSheet, LeaveOneOutSheet, CumulativeSheet, InfluenceSheet, PlotSheet, FunnelSheet, BubbleSheet, SubgroupPlotSheet, CumulativePlotSheet, "Provenance"} {
		if !slices.Contains(sheets, want) {
			t.Errorf("sheet %q missing (sheets %q)", want, sheets)
		}
	}
	rows, err := f.GetRows(SummarySheet)
	if err != nil || len(rows) < 3 || !strings.Contains(rows[1][0], "pooled risk ratio") {
		t.Errorf("summary sheet: %q, %v", rows, err)
	}
	prows, _ := f.GetRows("Provenance")
	var all []string
	for _, r := range prows {
		all = append(all, strings.Join(r, " "))
	}
	text := strings.Join(all, "\n")
	for _, want := range []string{"Subgroups by", "alloc", "Moderators", "PM control", "Q-profile"} {
		if !strings.Contains(text, want) {
			t.Errorf("provenance lacks %q:\n%s", want, text)
		}
	}
}

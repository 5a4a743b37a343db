package impression

import (
	"context"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/export"
)

func TestDemoData(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	// Another source's reports are kept; demo reports are replaced.
	if _, err := Import(ctx, db, writeFile(t, t.TempDir(), "openi.csv", openiCSV), ImportOptions{}); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if err := DemoData(ctx, db, 7); err != nil {
			t.Fatal(err)
		}
	}
	if n := countReports(t, db); n != DemoReportCount+3 {
		t.Fatalf("%d reports", n)
	}
	c, err := LoadCorpus(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var positive [NumObservations]int
	for _, r := range c.Reports() {
		for o, l := range r.Labels {
			if l == Positive {
				positive[o]++
			}
		}
	}
	for _, o := range []Observation{NoFinding, Cardiomegaly, PleuralEffusion, Atelectasis, Pneumonia, SupportDevices} {
		if positive[o] < 5 {
			t.Errorf("only %d synthetic reports positive for %s", positive[o], o)
		}
	}
	// Deterministic, and the demo findings are new texts.
	a, b := SyntheticReports(20, 3), SyntheticReports(20, 3)
	for i := range a {
		if a[i].Findings != b[i].Findings || a[i].Impression != b[i].Impression {
			t.Fatal("the same seed gave different reports")
		}
	}
	if f := DemoFindings(4, 7); len(f) != 4 || f[0] == "" {
		t.Errorf("demo findings %q", f)
	}
}

func TestExportWorkbook(t *testing.T) {
	p, err := NewPipeline(testCorpus(), nil, Options{NoLLM: true, Examples: 3}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res, err := p.Generate(context.Background(), Request{Findings: normalFindings}, nil)
	if err != nil {
		t.Fatal(err)
	}
	res.Iterations = []Iteration{{Number: 1, Response: "No acute disease.", Score: 0.4, Role: RoleBad}}
	out := filepath.Join(t.TempDir(), "impressions.xlsx")
	// An impression contradicting its findings is flagged; edited to name
	// the findings, it is not.
	flagged, err := p.Generate(context.Background(), Request{Findings: "Moderate cardiomegaly. Small left pleural effusion.", ExcludeID: 5}, nil)
	if err != nil || len(flagged.Contradictions) == 0 {
		t.Fatalf("no flagged impression to export: %v %+v", err, flagged)
	}
	rows := []ExportRow{{UID: "a", Result: res, Final: "Edited impression."}, {UID: "b", Result: res, Reference: "Normal."},
		{UID: "c", Result: flagged}, {UID: "d", Result: flagged, Final: "Cardiomegaly and small left pleural effusion."}}
	if _, err := ExportWorkbook(context.Background(), out, rows, p.Options(), export.Provenance{AppVersion: "test", DataSource: "demo"}, export.Options{}); err != nil {
		t.Fatal(err)
	}
	wb, err := excelize.OpenFile(out)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	if got := wb.GetSheetList(); len(got) != 4 || got[0] != "Impressions" || got[3] != "Provenance" {
		t.Fatalf("sheets %v", got)
	}
	imp, _ := wb.GetRows("Impressions")
	if len(imp) != 5 || imp[1][3] != "Edited impression." || imp[1][5] != "TRUE" || imp[2][3] != res.Impression || imp[2][4] != "retrieved" {
		t.Fatalf("impressions sheet %q", imp)
	}
	col := slices.Index(imp[0], "contradicts_findings")
	if col < 0 || imp[0][col+1] != "contradictions" {
		t.Fatalf("no consistency columns in %q", imp[0])
	}
	cell := func(r, c int) string {
		if c < len(imp[r]) {
			return imp[r][c]
		}
		return ""
	}
	if cell(2, col) != "FALSE" || cell(2, col+1) != "" || cell(3, col) != "TRUE" || !strings.Contains(cell(3, col+1), "Pleural Effusion") ||
		cell(4, col) != "FALSE" || cell(4, col+1) != "" {
		t.Errorf("consistency columns: %q / %q / %q", imp[2][col:], imp[3][col:], imp[4][col:])
	}
	ex, _ := wb.GetRows("Similar reports")
	if len(ex) != 1+2*len(res.Examples)+2*len(flagged.Examples) {
		t.Errorf("%d similar-report rows", len(ex))
	}
	prov, _ := wb.GetRows("Provenance")
	found := false
	for _, r := range prov {
		if len(r) > 1 && r[0] == "Mode" && r[1] != "" {
			found = true
		}
	}
	if !found {
		t.Errorf("provenance %q", prov)
	}
}

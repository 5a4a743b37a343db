package meta

import (
	"bytes"
	"context"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/export"
	"github.com/xuri/excelize/v2"
)

// rowsByKey maps the first cell of each row to the row.
func rowsByKey(rows [][]string) map[string][]string {
	m := map[string][]string{}
	for _, r := range rows {
		if len(r) > 0 {
			m[r[0]] = r
		}
	}
	return m
}

// The report of a plain analysis (no further analyses planned): Studies,
// Pooled, Summary, the forest and funnel plots and the provenance.
func TestExportReportSheets(t *testing.T) {
	studies, err := LoadCSV(strings.NewReader(bcgCSV), bcgSpec(t))
	if err != nil {
		t.Fatal(err)
	}
	rep, err := Run(context.Background(), studies, Options{Measure: RR, Method: REML, Test: TestKnHa}, Plan{})
	if err != nil {
		t.Fatal(err)
	}
	res := rep.Result
	var plot bytes.Buffer
	if err := WriteForestPlot(&plot, res, PlotOptions{}); err != nil {
		t.Fatal(err)
	}
	spec := bcgSpec(t)
	spec.Where = map[string]string{"year": "x"} // recorded only
	prov := NewProvenance("1.2.3", "/data/bcg.csv", spec)
	path := filepath.Join(t.TempDir(), "bcg.xlsx")
	sum, err := ExportReport(context.Background(), path, studies, rep, Plan{}, prov, export.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sum.Rows != 13+int64(len(res.Statistics()))+int64(len(rep.Sentences)) || !reflect.DeepEqual(sum.ImageSheets, []string{PlotSheet, FunnelSheet}) {
		t.Errorf("summary %+v", sum)
	}

	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, want := f.GetSheetList(), []string{"Studies", "Pooled", "Summary", "Forest plot", "Funnel plot", "Provenance"}; !reflect.DeepEqual(got, want) {
		t.Errorf("sheets %v, want %v", got, want)
	}

	rows, _ := f.GetRows("Studies")
	wantHeader := []string{"Study", "Data row", "ai (group 1 events)", "n1i (group 1 total)", "ci (group 2 events)", "n2i (group 2 total)",
		"yi (log RR)", "vi", "RR", "RR 95% CI lower", "RR 95% CI upper", "Weight (%)"}
	if len(rows) != 14 || !reflect.DeepEqual(rows[0][:len(wantHeader)], wantHeader) || rows[0][len(wantHeader)] != "Note" {
		t.Fatalf("Studies header %v (%d rows)", rows[0], len(rows))
	}
	first := rows[1]
	if first[0] != "Aronson" || first[1] != "1" || first[2] != "4" || first[3] != "123" || first[4] != "11" || first[5] != "139" {
		t.Errorf("Studies row 1 = %v", first)
	}
	cell := func(sheet, axis string) float64 {
		t.Helper()
		v, err := f.GetCellValue(sheet, axis, excelize.Options{RawCellValue: true})
		if err != nil {
			t.Fatal(err)
		}
		x, err := strconv.ParseFloat(v, 64)
		if err != nil {
			t.Fatalf("%s!%s = %q: %v", sheet, axis, v, err)
		}
		return x
	}
	sr := res.Studies[0]
	near(t, "yi", cell("Studies", "G2"), sr.YI, 1e-12)
	near(t, "vi", cell("Studies", "H2"), sr.VI, 1e-12)
	near(t, "RR", cell("Studies", "I2"), math.Exp(sr.YI), 1e-12)
	near(t, "RR lower", cell("Studies", "J2"), math.Exp(sr.CILB), 1e-12)
	near(t, "RR upper", cell("Studies", "K2"), math.Exp(sr.CIUB), 1e-12)
	near(t, "weight", cell("Studies", "L2"), sr.Weight, 1e-12)

	pooled, _ := f.GetRows("Pooled", excelize.Options{RawCellValue: true})
	byKey := rowsByKey(pooled)
	num := func(key string) float64 {
		t.Helper()
		r, ok := byKey[key]
		if !ok || len(r) < 2 {
			t.Fatalf("Pooled has no %q row: %v", key, r)
		}
		x, err := strconv.ParseFloat(r[1], 64)
		if err != nil {
			t.Fatalf("Pooled %s = %q", key, r[1])
		}
		return x
	}
	near(t, "est", num("est"), res.Est, 1e-12)
	near(t, "se", num("se"), res.SE, 1e-12)
	near(t, "RR", num("RR"), math.Exp(res.Est), 1e-12)
	near(t, "RR ci_lb", num("RR ci_lb"), math.Exp(res.CILB), 1e-12)
	near(t, "tau2", num("tau2"), res.Tau2, 1e-12)
	near(t, "I2", num("I2"), res.I2, 1e-12)
	near(t, "QEp", num("QEp"), res.QEp, 1e-12)
	near(t, "pi_ub", num("pi_ub"), res.PIUB, 1e-12)
	if num("df") != 12 || byKey["model"][1] != "Random-effects model (REML, Knapp–Hartung)" {
		t.Errorf("Pooled df/model: %v %v", byKey["df"], byKey["model"])
	}

	pics, err := f.GetPictures("Forest plot", "A1")
	if err != nil || len(pics) != 1 || !bytes.Equal(pics[0].File, plot.Bytes()) {
		t.Errorf("forest plot picture: %d pictures, %v", len(pics), err)
	}

	provRows, _ := f.GetRows("Provenance")
	prov2 := rowsByKey(provRows)
	for key, want := range map[string]string{
		"Clinsight version":        "1.2.3",
		"Data source":              "/data/bcg.csv",
		"Filter":                   "year=x",
		"Columns":                  "study=author, ai=tpos, bi=tneg, ci=cpos, di=cneg",
		"Effect measure":           "Risk Ratio (RR)",
		"Model":                    "Random-effects model (REML, Knapp–Hartung)",
		"Knapp–Hartung adjustment": "yes (t test with 12 degrees of freedom)",
		"Zero cells":               `0.5 added to every cell of studies with a zero cell (add = 0.5, to = "only0"), metafor's default`,
		"Pictures":                 "on sheet(s) Forest plot, Funnel plot",
	} {
		if r := prov2[key]; len(r) < 2 || r[1] != want {
			t.Errorf("Provenance %q = %v, want %q", key, r, want)
		}
	}
	if _, ok := prov2["Created"]; !ok {
		t.Error("Provenance lacks Created")
	}
}

func TestExportReportMissingStudies(t *testing.T) {
	in := "study,ai,n1i,ci,n2i\nA,1,10,2,10\nB,NA,10,2,10\nC,3,10,2,10\n"
	studies, err := LoadCSV(strings.NewReader(in), InputSpec{SkipMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	rep := Report{Result: mustAnalyze(t, studies, Options{Measure: OR, Method: MH})}
	write := func(ctx context.Context, path string, studies []Study, prov export.Provenance) error {
		_, err := ExportReport(ctx, path, studies, rep, Plan{}, prov, export.Options{})
		return err
	}
	path := filepath.Join(t.TempDir(), "mh.xlsx")
	if err := write(context.Background(), path, studies, NewProvenance("v", "pasted text", InputSpec{SkipMissing: true})); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got := f.GetSheetList(); !slices.Equal(got[:2], []string{"Studies", "Pooled"}) || got[len(got)-1] != "Provenance" {
		t.Errorf("sheets %v", got)
	}
	rows, _ := f.GetRows("Studies")
	if len(rows) != 4 || rows[2][0] != "B" || rows[2][len(rows[2])-1] != "omitted: missing values" || rows[3][0] != "C" {
		t.Errorf("Studies rows %v", rows)
	}
	byKey := rowsByKey(mustRows(t, f, "Pooled"))
	if r := byKey["pi_lb"]; len(r) != 3 || r[1] != "" {
		t.Errorf("fixed-effect pi_lb should be empty: %q", r)
	}
	prov := rowsByKey(mustRows(t, f, "Provenance"))
	if r := prov["Zero cells"]; len(r) < 2 || !strings.HasSuffix(r[1], "the Mantel–Haenszel estimate itself pools the uncorrected tables") {
		t.Errorf("MH zero cells: %v", r)
	}

	// Studies that do not belong to the result, and a cancelled export.
	if err := write(context.Background(), path, studies[:1], NewProvenance("v", "", InputSpec{})); ErrorCode(err) != EINVALID {
		t.Errorf("mismatched studies: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	other := filepath.Join(t.TempDir(), "cancelled.xlsx")
	if err := write(ctx, other, studies, NewProvenance("v", "", InputSpec{})); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if _, err := os.Stat(other); !os.IsNotExist(err) {
		t.Errorf("cancelled export left a file: %v", err)
	}
}

func mustRows(t *testing.T, f *excelize.File, sheet string) [][]string {
	t.Helper()
	rows, err := f.GetRows(sheet)
	if err != nil {
		t.Fatal(err)
	}
	return rows
}

func TestStatisticText(t *testing.T) {
	for _, c := range []struct {
		s    Statistic
		want string
	}{
		{Statistic{Key: "est", Value: -0.71453}, "-0.7145"},
		{Statistic{Key: "pval", Value: 3e-9}, "< 0.0001"},
		{Statistic{Key: "QEp", Value: 0.04212}, "0.0421"},
		{Statistic{Key: "I2", Value: 92.2246}, "92.22%"},
		{Statistic{Key: "tau2", Value: 0.000012345}, "1.234e-05"},
		{Statistic{Key: "k", Value: 13}, "13"},
		{Statistic{Key: "pi_lb"}, "—"},
		{Statistic{Key: "model", Value: "EE"}, "EE"},
	} {
		if got := c.s.Text(); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
}

package cli

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// runMetaCLI runs "clinsight meta ARGS" in-process against buffers. The
// meta command needs no workspace.
func runMetaCLI(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errb bytes.Buffer
	f := &Factory{In: strings.NewReader(""), Out: &out, Err: &errb, Version: "test"}
	code = Run(context.Background(), f, append([]string{"meta"}, args...))
	return out.String(), errb.String(), code
}

// bcgCSV is metadat's dat.bcg (13 BCG vaccine trials) in its original
// columns, so these tests run without the shared data.
const bcgCSV = `trial,author,year,tpos,tneg,cpos,cneg
1,Aronson,1948,4,119,11,128
2,Ferguson & Simes,1949,6,300,29,274
3,Rosenthal et al,1960,3,228,11,209
4,Hart & Sutherland,1977,62,13536,248,12619
5,Frimodt-Moller et al,1973,33,5036,47,5761
6,Stein & Aronson,1953,180,1361,372,1079
7,Vandiviere et al,1973,8,2537,10,619
8,TPT Madras,1980,505,87886,499,87892
9,Coetzee & Berjak,1968,29,7470,45,7232
10,Rosenthal et al,1961,17,1699,65,1600
11,Comstock et al,1974,186,50448,141,27197
12,Comstock & Webster,1969,5,2493,3,2338
13,Comstock et al,1976,27,16886,29,17825
`

// bcgCols maps bcgCSV's columns.
const bcgCols = "study=author,ai=tpos,bi=tneg,ci=cpos,di=cneg"

func writeFile(t *testing.T, name, content string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// metaJSON holds the fields of "meta --json" that are checked; null (an
// undefined value) decodes to nil.
type metaJSON struct {
	K    int      `json:"k"`
	Est  *float64 `json:"est"`
	SE   *float64 `json:"se"`
	CILB *float64 `json:"ci_lb"`
	CIUB *float64 `json:"ci_ub"`
	Tau2 *float64 `json:"tau2"`
	I2   *float64 `json:"I2"`
	QE   *float64 `json:"QE"`
	QEp  *float64 `json:"QEp"`
}

// closeTo reports whether got agrees with want within 1e-6 relative or
// 1e-9 absolute, and the relative error.
func closeTo(got *float64, want float64) (bool, float64) {
	if got == nil {
		return false, math.Inf(1)
	}
	d := math.Abs(*got - want)
	if d <= 1e-9 {
		return true, 0
	}
	rel := d / math.Abs(want)
	return rel <= 1e-6, rel
}

// modelArgs maps a model name of metafor_reference.csv to meta flags. Per
// its PROVENANCE.md, HK is REML with the Knapp–Hartung adjustment
// (test="knha").
func modelArgs(model string) []string {
	if model == "HK" {
		return []string{"--model", "REML", "--hk"}
	}
	return []string{"--model", model}
}

// TestMetaCLIMetaforReference reproduces every row of metafor_reference.csv
// (metafor 3.8-1) through "clinsight meta --json" on studies_2x2.csv, with
// metafor's na.omit (--skip-missing).
func TestMetaCLIMetaforReference(t *testing.T) {
	refPath := realdata.Path(t, "meta-analysis-2x2", "metafor_reference.csv")
	data := realdata.Path(t, "meta-analysis-2x2", "studies_2x2.csv")
	f, err := os.Open(refPath)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(f).ReadAll()
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(recs[0], ","); got != "dataset,k,measure,model,est,se,ci_lb,ci_ub,tau2,I2,QE,QEp" {
		t.Fatalf("unexpected reference header %s", got)
	}
	matched, worst, worstAt := 0, 0.0, ""
	for i, r := range recs[1:] {
		line := i + 2
		name := fmt.Sprintf("%s/%s/%s", r[0], r[2], r[3])
		ok := t.Run(name, func(t *testing.T) {
			args := append([]string{"--data", data, "--filter", "dataset=" + r[0], "--measure", r[2], "--skip-missing", "--json"}, modelArgs(r[3])...)
			out, stderr, code := runMetaCLI(t, args...)
			if code != 0 {
				t.Fatalf("reference line %d: exit %d: %s", line, code, stderr)
			}
			var got metaJSON
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("reference line %d: %v in %s", line, err, out)
			}
			if k, _ := strconv.Atoi(r[1]); got.K != k {
				t.Errorf("reference line %d: k = %d, metafor %d", line, got.K, k)
			}
			for _, c := range []struct {
				field string
				got   *float64
				col   int
			}{
				{"est", got.Est, 4}, {"se", got.SE, 5}, {"ci_lb", got.CILB, 6}, {"ci_ub", got.CIUB, 7},
				{"tau2", got.Tau2, 8}, {"I2", got.I2, 9}, {"QE", got.QE, 10},
			} {
				want, err := strconv.ParseFloat(r[c.col], 64)
				if err != nil {
					t.Fatalf("reference line %d column %d: %v", line, c.col+1, err)
				}
				ok, rel := closeTo(c.got, want)
				if rel > worst && !math.IsInf(rel, 0) {
					worst, worstAt = rel, name+" "+c.field
				}
				if !ok {
					t.Errorf("reference line %d: %s = %v, metafor %.10g (relative error %.2g)", line, c.field, deref(c.got), want, rel)
				}
			}
			// QEp spans 1e-75..1: compared more loosely (chi-square tail).
			want, _ := strconv.ParseFloat(r[11], 64)
			if ok, rel := closeTo(got.QEp, want); !ok && rel > 1e-5 {
				t.Errorf("reference line %d: QEp = %v, metafor %.10g (relative error %.2g)", line, deref(got.QEp), want, rel)
			}
		})
		if ok {
			matched++
		}
	}
	t.Logf("%d of %d metafor reference rows reproduced through clinsight meta --json; worst relative error %.3g (%s)", matched, len(recs)-1, worst, worstAt)
	if matched != len(recs)-1 {
		t.Errorf("only %d of %d reference rows matched", matched, len(recs)-1)
	}
}

func deref(p *float64) any {
	if p == nil {
		return "null"
	}
	return *p
}

func TestMetaCLIText(t *testing.T) {
	data := writeFile(t, "bcg.csv", bcgCSV)
	out, stderr, code := runMetaCLI(t, "--data", data, "--cols", bcgCols, "--measure", "rr", "--model", "REML")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"Random-effects model (REML), k = 13",
		"Pooled RR     0.4894  (95% CI 0.3441 to 0.6962)", // Viechtbauer (2010)
		"log RR        -0.7145  (SE 0.1798)",
		"tau^2 = 0.3132",
		"I^2 = 92.22%",
		"Q(df = 12) = 152.2330, p < 0.0001",
		"Ferguson & Simes      0.2049",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}

	// JSON: log scale for ratios, with the back-transformed values beside.
	out, _, code = runMetaCLI(t, "--data", data, "--cols", bcgCols, "--measure", "RR", "--model", "EE", "--json")
	var got struct {
		metaJSON
		Model string `json:"model"`
		PILB  any    `json:"pi_lb"`
		Exp   struct {
			Est float64 `json:"est"`
		} `json:"exp"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil || code != 0 {
		t.Fatalf("exit %d: %v: %s", code, err, out)
	}
	if got.Model != "EE" || got.PILB != nil || math.Abs(*got.Est-math.Log(got.Exp.Est)) > 1e-12 || *got.Tau2 != 0 {
		t.Errorf("EE JSON: %+v", got)
	}
}

func TestMetaCLIBadInputs(t *testing.T) {
	data := writeFile(t, "bcg.csv", bcgCSV)
	bad := writeFile(t, "bad.csv", "study,ai,n1i,ci,n2i\nA,1,10,2,10\nB,12,10,2,10\n")
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		args []string
		want string
	}{
		{"missing file", []string{"--data", filepath.Join(dir, "nope.csv"), "--measure", "OR"}, "clinsight: cannot open the data file: open " + filepath.Join(dir, "nope.csv")},
		{"bad measure", []string{"--data", data, "--measure", "XX"}, `clinsight: unknown effect measure "XX"`},
		{"bad model", []string{"--data", data, "--measure", "OR", "--model", "XY"}, `clinsight: unknown pooling method "XY"`},
		{"events above total", []string{"--data", bad, "--measure", "OR"}, `clinsight: data row 2 (study "B"): ai = 12 events is more than the group total n1i = 10`},
		{"missing values", []string{"--data", writeFile(t, "na.csv", "study,ai,n1i,ci,n2i\nA,NA,10,2,10\n"), "--measure", "RR"}, `clinsight: data row 1 (study "A"): column "ai" is empty or NA`},
		{"no measure", []string{"--data", data}, `clinsight: required flag(s) "measure" not set`},
		{"wrong kind", []string{"--data", data, "--cols", bcgCols, "--measure", "SMD"}, `clinsight: column "m1i" not found`},
		{"bad cols", []string{"--data", data, "--cols", "a,b", "--measure", "OR"}, "clinsight: columns \"a,b\": 2 names given but binary data take 4"},
		{"MH with HK", []string{"--data", data, "--cols", bcgCols, "--measure", "OR", "--model", "MH", "--hk"}, "clinsight: the Knapp–Hartung adjustment does not apply to the Mantel–Haenszel method"},
		{"bad filter", []string{"--data", data, "--filter", "dat.bcg", "--measure", "OR"}, `clinsight: filter "dat.bcg" is not of the form column=value`},
		{"plot type", []string{"--data", data, "--measure", "OR", "--plot", filepath.Join(dir, "f.pdf")}, "must end in .png or .svg"},
	} {
		t.Run(c.name, func(t *testing.T) {
			out, stderr, code := runMetaCLI(t, c.args...)
			if code != 1 {
				t.Errorf("exit %d, want 1", code)
			}
			if out != "" {
				t.Errorf("stdout %q", out)
			}
			if strings.Count(stderr, "\n") != 1 || !strings.HasPrefix(stderr, "clinsight: ") || !strings.Contains(stderr, c.want) {
				t.Errorf("stderr %q, want one line containing %q", stderr, c.want)
			}
		})
	}
	if got, _ := os.ReadDir(dir); len(got) != 0 {
		t.Errorf("failed runs left files: %v", got)
	}
}

func TestMetaCLIPlotAndWorkbook(t *testing.T) {
	data := writeFile(t, "bcg.csv", bcgCSV)
	dir := t.TempDir()
	pngPath, svgPath, xlsx := filepath.Join(dir, "forest.png"), filepath.Join(dir, "forest.svg"), filepath.Join(dir, "meta.xlsx")
	_, stderr, code := runMetaCLI(t, "--data", data, "--cols", bcgCols, "--measure", "RR", "--model", "DL", "--hk", "--plot", pngPath, "--xlsx", xlsx)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stderr, "wrote the forest plot to "+pngPath) || !strings.Contains(stderr, "wrote 13 studies and the results to "+xlsx) {
		t.Errorf("stderr %q", stderr)
	}
	pf, err := os.Open(pngPath)
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(pf)
	pf.Close()
	if err != nil || img.Bounds().Dx() < 600 {
		t.Errorf("PNG plot: %v", err)
	}

	if _, stderr, code := runMetaCLI(t, "--data", data, "--cols", bcgCols, "--measure", "OR", "--plot", svgPath); code != 0 {
		t.Fatalf("SVG: exit %d: %s", code, stderr)
	}
	svg, err := os.ReadFile(svgPath)
	if err != nil || !bytes.Contains(svg, []byte("<svg")) || !bytes.Contains(svg, []byte("Aronson")) {
		t.Errorf("SVG plot: %v", err)
	}

	wb, err := excelize.OpenFile(xlsx)
	if err != nil {
		t.Fatal(err)
	}
	defer wb.Close()
	if got := strings.Join(wb.GetSheetList(), ","); got != "Studies,Pooled,Summary,Forest plot,Funnel plot,Provenance" {
		t.Errorf("sheets %s", got)
	}
	studies, _ := wb.GetRows("Studies")
	if len(studies) != 14 || studies[1][0] != "Aronson" || studies[13][0] != "Comstock et al" {
		t.Errorf("Studies sheet: %d rows", len(studies))
	}
	pooled, _ := wb.GetRows("Pooled")
	found := false
	for _, r := range pooled {
		if len(r) > 1 && r[0] == "model" && r[1] == "Random-effects model (DerSimonian–Laird, Knapp–Hartung)" {
			found = true
		}
	}
	if !found {
		t.Errorf("Pooled sheet lacks the model row: %v", pooled)
	}
	pics, err := wb.GetPictures("Forest plot", "A1")
	if err != nil || len(pics) != 1 || pics[0].Extension != ".png" {
		t.Errorf("forest plot picture: %d, %v", len(pics), err)
	}
	prov, _ := wb.GetRows("Provenance")
	text := ""
	for _, r := range prov {
		text += strings.Join(r, "=") + "\n"
	}
	for _, want := range []string{"Clinsight version=test", "Data source=" + data, "Knapp–Hartung adjustment=yes", "Zero cells=0.5 added", "Columns=study=author, ai=tpos"} {
		if !strings.Contains(text, want) {
			t.Errorf("Provenance lacks %q:\n%s", want, text)
		}
	}
}

// TestMetaCLIAddZeroIsNoCorrection: --add 0 switches the zero-cell
// correction off, as add=0 does in metafor and in the desktop app; it used
// to be read as "not given" and added 1/2.
func TestMetaCLIAddZeroIsNoCorrection(t *testing.T) {
	data := writeFile(t, "zero.csv", "study,ai,n1i,ci,n2i\na,0,10,3,10\nb,2,10,4,10\nc,1,12,5,11\n")
	k := func(args ...string) string {
		out, stderr, code := runMetaCLI(t, append([]string{"--data", data, "--cols", "ai,n1i,ci,n2i", "--measure", "OR", "--model", "EE"}, args...)...)
		if code != 0 {
			t.Fatalf("%v: exit %d: %s", args, code, stderr)
		}
		for _, line := range strings.Split(out, "\n") {
			if i := strings.Index(line, "k = "); i >= 0 {
				return strings.Fields(line[i+4:])[0]
			}
		}
		t.Fatalf("%v: no k in\n%s", args, out)
		return ""
	}
	if got := k(); got != "3" {
		t.Errorf("default (1/2 added): k = %s, want 3", got)
	}
	if got := k("--add", "0"); got != "2" {
		t.Errorf("--add 0: k = %s, want 2 (the zero-cell study has no log odds ratio)", got)
	}
	if _, stderr, code := runMetaCLI(t, "--data", data, "--cols", "ai,n1i,ci,n2i", "--measure", "OR", "--add", "-1"); code == 0 || !strings.Contains(stderr, "0 or more") {
		t.Errorf("--add -1: exit %d, %s", code, stderr)
	}
}

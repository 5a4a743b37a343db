package meta

import (
	"bytes"
	"context"
	"encoding/json"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/export"
)

// Synthetic single-arm studies (not real data): one with no events and one
// with only events, so the correction for 0 or all events is exercised.
var (
	propXI = []float64{0, 3, 12, 20, 7}
	propNI = []float64{15, 20, 40, 20, 30}
)

func proportionStudies(xi, ni []float64) []Study {
	s := make([]Study, len(xi))
	for i := range xi {
		s[i] = Study{Label: "S" + itoa(i+1), Row: i + 1, Kind: Proportion, XI: xi[i], NI: ni[i]}
	}
	return s
}

// propRef holds metafor 3.8-1's values for propXI/propNI, printed with 15
// significant digits by
//
//	dat <- escalc(m, xi=xi, ni=ni); res <- rma(yi, vi, data=dat, method=meth)
//	predict(res, transf=transf.ilogit)                      # PLO
//	predict(res, transf=transf.ipft.hm, targs=list(ni=ni))  # PFT
type propFit struct {
	est, se, ciLB, ciUB, tau2, i2, qe float64
	// back-transformed pred, ci.lb, ci.ub, pi.lb, pi.ub (NaN for EE's PI)
	back [5]float64
}

var propRef = map[Measure]struct {
	yi, vi []float64
	fits   map[Method]propFit
}{
	PR: {
		yi: []float64{0.03125, 0.15, 0.3, 0.976190476190476, 0.233333333333333},
		vi: []float64{0.00189208984375, 0.006375, 0.00525, 0.00110679192311845, 0.00596296296296296},
		fits: map[Method]propFit{
			EE:   {0.523000863528816, 0.0226625781711054, 0.478583026516626, 0.567418700541006, 0, 98.8849776502271, 358.737203860943, [5]float64{0.523000863528816, 0.478583026516626, 0.567418700541006, math.NaN(), math.NaN()}},
			DL:   {0.339574395345055, 0.231991369157719, -0.115120332928211, 0.79426912361832, 0.265000349315576, 98.8849776502271, 358.737203860943, [5]float64{0.339574395345055, -0.115120332928211, 0.79426912361832, -0.767103166225994, 1.4462519569161}},
			REML: {0.340857543896883, 0.168554880368006, 0.0104960489571335, 0.671219038836632, 0.137970063120906, 97.8801293075618, 358.737203860943, [5]float64{0.340857543896883, 0.0104960489571335, 0.671219038836632, -0.458607923341294, 1.14032301113506}},
		},
	},
	PLO: {
		yi: []float64{-3.43398720448515, -1.73460105538811, -0.847297860387204, 3.71357206670431, -1.18958406687384},
		vi: []float64{2.06451612903226, 0.392156862745098, 0.119047619047619, 2.04878048780488, 0.186335403726708},
		fits: map[Method]propFit{
			EE:   {-1.02812515658758, 0.240499037902881, -1.49949460919376, -0.556755703981398, 0, 74.1353547613652, 15.4651260943069, [5]float64{0.263447743082819, 0.182500913150343, 0.364298459019006, math.NaN(), math.NaN()}},
			DL:   {-0.932730785286624, 0.573066550411765, -2.05592058483829, 0.190459014265043, 1.0293094392862, 74.1353547613652, 15.4651260943069, [5]float64{0.282371025937537, 0.113455504754022, 0.547471339783805, 0.038549471239932, 0.794299465771882}},
			REML: {-0.810497893494058, 0.953872159331941, -2.68005297164011, 1.059057184652, 3.74720149978875, 91.2546890914999, 15.4651260943069, [5]float64{0.307784407762191, 0.0641606956972414, 0.742510330842809, 0.00643115030325918, 0.968297816843757}},
		},
	},
	PFT: {
		yi: []float64{0.126340127571039, 0.419615063867356, 0.584875510633336, 1.46080233809717, 0.514021460110127},
		vi: []float64{0.0161290322580645, 0.0121951219512195, 0.00617283950617284, 0.0121951219512195, 0.00819672131147541},
		fits: map[Method]propFit{
			EE:   {0.626446599463787, 0.0442807442770048, 0.539657935472229, 0.713235263455344, 0, 94.8665779711288, 77.9207315802856, [5]float64{0.33684724026941, 0.253710037896566, 0.424922476993387, math.NaN(), math.NaN()}},
			DL:   {0.62237491479585, 0.19891933364177, 0.232500185029274, 1.01224964456243, 0.186927673075891, 94.8665779711288, 77.9207315802856, [5]float64{0.332816078272992, 0.0351367001486534, 0.728747139535156, 0, 1}},
			REML: {0.622140363423896, 0.222035209346405, 0.186959349805131, 1.05732137704266, 0.235569317944772, 95.8829149482368, 77.9207315802856, [5]float64{0.332584198707918, 0.0169950800481036, 0.770015313500762, 0, 1}},
		},
	},
}

func TestProportionsAgreeWithMetafor(t *testing.T) {
	studies := proportionStudies(propXI, propNI)
	for _, m := range []Measure{PR, PLO, PFT} {
		ref := propRef[m]
		for _, meth := range []Method{EE, DL, REML} {
			name := string(m) + "/" + string(meth)
			res := mustAnalyze(t, studies, Options{Measure: m, Method: meth})
			want := ref.fits[meth]
			nearAll(t, name+" yi", yis(res), ref.yi, 1e-12)
			nearAll(t, name+" vi", vis(res), ref.vi, 1e-12)
			near(t, name+" est", res.Est, want.est, 1e-9)
			near(t, name+" se", res.SE, want.se, 1e-9)
			near(t, name+" ci_lb", res.CILB, want.ciLB, 1e-9)
			near(t, name+" ci_ub", res.CIUB, want.ciUB, 1e-9)
			near(t, name+" tau2", res.Tau2, want.tau2, 1e-6)
			near(t, name+" I2", res.I2, want.i2, 1e-6)
			near(t, name+" QE", res.QE, want.qe, 1e-9)
			back := []float64{res.Back(res.Est), res.Back(res.CILB), res.Back(res.CIUB), res.Back(res.PILB), res.Back(res.PIUB)}
			nearAll(t, name+" back-transformed", back, want.back[:], 1e-6)
			if res.K != 5 {
				t.Errorf("%s: k = %d, want 5", name, res.K)
			}
		}
	}
}

func TestPFTStudiesBackTransformAtHarmonicMean(t *testing.T) {
	res := mustAnalyze(t, proportionStudies(propXI, propNI), Options{Measure: PFT})
	// 1/mean(1/ni)
	near(t, "harmonic n", res.HarmonicN, 5/(1.0/15+1.0/20+1.0/40+1.0/20+1.0/30), 1e-15)
	// transf.ipft.hm(dat$yi, targs=list(ni=ni))
	want := []float64{0.00165312344211488, 0.151536184475776, 0.296249215041464, 0.999880938205241, 0.230472484375094}
	got := make([]float64, len(res.Studies))
	for i, s := range res.Studies {
		got[i] = res.Back(s.YI)
	}
	nearAll(t, "study proportions", got, want, 1e-9)
	// No correction for PFT by default, as metafor (add = 0).
	if res.Options.Add != 0 {
		t.Errorf("PFT default Add = %g, want 0", res.Options.Add)
	}
	for _, n := range res.Notes {
		if strings.Contains(n, "added") {
			t.Errorf("PFT should not be corrected by default: %q", n)
		}
	}
}

func TestIPFTEdges(t *testing.T) {
	// transf.ipft(c(0, 0.05, 0.2, 1.2, 1.5, 1.6), 10)
	in := []float64{0, 0.05, 0.2, 1.2, 1.5, 1.6}
	want := []float64{0, 0, 0.00741376689140044, 0.901876567237676, 1, 1}
	for i, x := range in {
		near(t, "ipft", IPFT(x, 10), want[i], 1e-12)
	}
	if !math.IsNaN(IPFT(math.NaN(), 10)) {
		t.Error("IPFT(NaN) should be NaN")
	}
	// The forward and inverse transforms agree inside (0, 1).
	for _, p := range []float64{0.01, 0.2, 0.5, 0.77, 0.99} {
		near(t, "ipft(pft(p))", IPFT(PFTransform(p, 37), 37), p, 1e-12)
		near(t, "ilogit(logit(p))", ILogit(Logit(p)), p, 1e-12)
	}
	near(t, "ilogit(-800)", ILogit(-800), 0, 0)
	near(t, "ilogit(800)", ILogit(800), 1, 0)
}

func TestProportionCorrections(t *testing.T) {
	studies := proportionStudies(propXI, propNI)
	// Default for PR and PLO: 1/2 added to the two studies with 0 or all events.
	res := mustAnalyze(t, studies, Options{Measure: PLO})
	if !containsNote(res.Notes, "0.5 added to the events and non-events of 2 studies") {
		t.Errorf("PLO correction note missing: %q", res.Notes)
	}
	// to = "none": the logit of 0 and of 1 is not estimable; those studies are left out.
	res = mustAnalyze(t, studies, Options{Measure: PLO, To: None, Method: EE})
	if res.K != 3 || res.Studies[0].Estimable || res.Studies[3].Estimable || !res.Studies[1].Estimable {
		t.Errorf("to=none: k = %d, estimable %v %v %v", res.K, res.Studies[0].Estimable, res.Studies[1].Estimable, res.Studies[3].Estimable)
	}
	if !containsNote(res.Notes, "left out") {
		t.Errorf("to=none: no note on the left-out studies: %q", res.Notes)
	}
	// to = "all" with add = 1 for PR: every study corrected.
	res = mustAnalyze(t, studies, Options{Measure: PR, To: All, Add: 1, Method: EE})
	near(t, "PR all add=1 yi[2]", res.Studies[1].YI, 4.0/22, 1e-15)
	// PFT with an explicit add uses it (as metafor with add given).
	res = mustAnalyze(t, studies, Options{Measure: PFT, Add: 0.5, Method: EE})
	near(t, "PFT add=0.5 yi[1]", res.Studies[0].YI, 0.5*(math.Asin(math.Sqrt(0.5/17))+math.Asin(math.Sqrt(1.5/17))), 1e-15)
	near(t, "PFT add=0.5 yi[2] (no zero)", res.Studies[1].YI, propRef[PFT].yi[1], 1e-15)
}

func containsNote(notes []string, s string) bool {
	for _, n := range notes {
		if strings.Contains(n, s) {
			return true
		}
	}
	return false
}

func TestProportionValidation(t *testing.T) {
	for _, c := range []struct {
		s    Study
		want string
	}{
		{Study{Kind: Proportion, XI: -1, NI: 10}, "xi = -1 is negative"},
		{Study{Kind: Proportion, XI: 1, NI: 0}, "ni = 0"},
		{Study{Kind: Proportion, XI: 11, NI: 10}, "more than the group total"},
		{Study{Kind: Proportion, XI: math.NaN(), NI: 10}, "xi is not a finite number"},
	} {
		c.s.Label, c.s.Row = "Trial A", 4
		err := c.s.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), `data row 4 (study "Trial A")`) {
			t.Errorf("Validate(%+v) = %v, want %q", c.s, err, c.want)
		}
	}
	// Two-arm data with a proportion measure is a located error.
	_, err := Analyze(binaryStudies([]float64{1}, []float64{10}, []float64{2}, []float64{10}), Options{Measure: PFT})
	if err == nil || !strings.Contains(err.Error(), "needs proportion data") {
		t.Errorf("binary data with PFT: %v", err)
	}
}

func TestParseProportionMeasures(t *testing.T) {
	for in, want := range map[string]Measure{"pr": PR, " PLO ": PLO, "pft": PFT} {
		got, err := ParseMeasure(in)
		if err != nil || got != want {
			t.Errorf("ParseMeasure(%q) = %q, %v", in, got, err)
		}
		if got.Kind() != Proportion || !got.IsProportion() {
			t.Errorf("%s: kind %v", got, got.Kind())
		}
	}
	if PR.Transformed() || !PLO.Transformed() || !PFT.Transformed() || !OR.Transformed() || MD.Transformed() {
		t.Error("Transformed() is wrong")
	}
	if _, err := ParseMeasure("PAS"); err == nil || !strings.Contains(err.Error(), "PR, PLO or PFT") {
		t.Errorf("unknown measure: %v", err)
	}
}

func TestLoadProportions(t *testing.T) {
	// Inferred from xi and ni; non-ASCII labels; NA skipped.
	in := "study,xi,ni\nMüller 2019,3,20\nZhou 2020,NA,25\n\"Ö, B\",12,40\n"
	st, err := LoadCSV(strings.NewReader(in), InputSpec{SkipMissing: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(st) != 3 || st[0].Kind != Proportion || st[0].XI != 3 || st[0].NI != 20 || !st[1].Missing || st[2].Label != "Ö, B" {
		t.Fatalf("loaded %+v", st)
	}
	// Positional mapping as clinsight meta --cols n,total.
	cols, err := ParseColumns("n,total", Proportion)
	if err != nil || cols.XI != "n" || cols.NI != "total" {
		t.Fatalf("ParseColumns: %+v %v", cols, err)
	}
	in = "Study,n,total\nA,0,7\nB,1,1\nC,4,6\n"
	st, err = LoadCSV(strings.NewReader(in), InputSpec{Kind: Proportion, Columns: Columns{Study: "Study", XI: "n", NI: "total"}})
	if err != nil || len(st) != 3 || st[1].XI != 1 || st[2].Label != "C" {
		t.Fatalf("mapped load: %+v %v", st, err)
	}
	// A row with more events than participants names its row.
	_, err = LoadCSV(strings.NewReader("study,xi,ni\nA,1,10\nB,12,10\n"), InputSpec{})
	if err == nil || !strings.Contains(err.Error(), `data row 2 (study "B")`) {
		t.Errorf("bad row: %v", err)
	}
	// Missing ni column.
	_, err = LoadCSV(strings.NewReader("study,xi\nA,1\n"), InputSpec{Kind: Proportion})
	if err == nil || !strings.Contains(err.Error(), `column "ni" not found`) {
		t.Errorf("missing column: %v", err)
	}
}

func TestProportionSummaryAndStatistics(t *testing.T) {
	res := mustAnalyze(t, proportionStudies(propXI, propNI), Options{Measure: PFT, Method: DL})
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var got struct {
		Est        float64  `json:"est"`
		Scale      string   `json:"scale"`
		HarmonicN  *float64 `json:"harmonic_n"`
		Proportion *struct {
			Est  float64 `json:"est"`
			CILB float64 `json:"ci_lb"`
		} `json:"proportion"`
		Exp any `json:"exp"`
	}
	if err := json.Unmarshal(b, &got); err != nil {
		t.Fatal(err)
	}
	if got.Proportion == nil || got.HarmonicN == nil || got.Exp != nil || got.Scale != "identity" {
		t.Fatalf("JSON: %s", b)
	}
	near(t, "json proportion est", got.Proportion.Est, 0.332816078272992, 1e-9)
	near(t, "json est", got.Est, 0.62237491479585, 1e-12)

	keys := map[string]any{}
	for _, s := range res.Statistics() {
		keys[s.Key] = s.Value
	}
	for _, k := range []string{"proportion", "proportion ci_lb", "proportion ci_ub", "proportion pi_lb", "proportion pi_ub", "harmonic_n"} {
		if _, ok := keys[k]; !ok {
			t.Errorf("Statistics lacks %q", k)
		}
	}
	// PR is shown as is: no back-transformed block in Statistics, but the
	// JSON still carries "proportion" for uniform reading.
	pr := mustAnalyze(t, proportionStudies(propXI, propNI), Options{Measure: PR})
	for _, s := range pr.Statistics() {
		if strings.HasPrefix(s.Key, "proportion") {
			t.Errorf("PR Statistics has %q", s.Key)
		}
	}
	if s := pr.Summary(); s.Proportion == nil || float64(s.Proportion.Est) != pr.Est || s.HarmonicN != nil {
		t.Errorf("PR summary: %+v", s.Proportion)
	}
}

func TestProportionForestPlotAndWorkbook(t *testing.T) {
	studies := proportionStudies(propXI, propNI)
	for _, m := range []Measure{PR, PLO, PFT} {
		res := mustAnalyze(t, studies, Options{Measure: m})
		lay, err := newForestLayout(res, PlotOptions{}, nil)
		if err != nil {
			t.Fatalf("%s: %v", m, err)
		}
		if len(lay.ticks) < 3 {
			t.Errorf("%s: %d ticks", m, len(lay.ticks))
		}
		if m != PR {
			// Ticks are labelled as proportions on the transformed axis.
			for _, tk := range lay.ticks {
				if v := backProportion(m, tk.Value, res.HarmonicN); math.Abs(v-parseTick(t, tk.Label)) > 1e-9 {
					t.Errorf("%s: tick at %g labelled %q, back-transforms to %g", m, tk.Value, tk.Label, v)
				}
			}
		}
		var buf bytes.Buffer
		if err := WriteForestPlot(&buf, res, PlotOptions{Format: "svg"}); err != nil || !bytes.Contains(buf.Bytes(), []byte("Proportion")) {
			t.Errorf("%s forest plot: %v", m, err)
		}
		if err := WriteForestPlot(&buf, res, PlotOptions{XMin: 0, XMax: 1}); m == PLO && (err == nil || !strings.Contains(err.Error(), "between 0 and 1")) {
			t.Errorf("PLO limits 0..1: %v", err)
		}
	}

	res := mustAnalyze(t, studies, Options{Measure: PLO})
	path := filepath.Join(t.TempDir(), "prop.xlsx")
	if _, err := ExportReport(context.Background(), path, studies, Report{Result: res}, Plan{}, export.Provenance{AppVersion: "test"}, export.Options{}); err != nil {
		t.Fatal(err)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := f.GetRows(StudiesSheet)
	if err != nil {
		t.Fatal(err)
	}
	if h := strings.Join(rows[0], "|"); !strings.Contains(h, "xi (events)|ni (total)|yi (PLO)") {
		t.Errorf("Studies header %q", h)
	}
	if !strings.Contains(strings.Join(rows[0], "|"), "Proportion 95% CI lower") {
		t.Errorf("Studies header %q", rows[0])
	}
	prov, _ := f.GetRows("Provenance")
	if !strings.Contains(joinRows(prov), "0.5 added to the events and non-events") {
		t.Errorf("provenance lacks the correction rule: %q", prov)
	}
}

func parseTick(t *testing.T, s string) float64 {
	t.Helper()
	var v float64
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		t.Fatalf("tick label %q: %v", s, err)
	}
	return v
}

func joinRows(rows [][]string) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString(strings.Join(r, "|"))
		b.WriteByte('\n')
	}
	return b.String()
}

package meta

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"
)

func TestBadStudiesNameTheRow(t *testing.T) {
	cases := []struct {
		name    string
		study   Study
		measure Measure
		want    string
	}{
		{"negative count", Study{Label: "Smith 2001", Row: 4, Kind: Binary, AI: -1, N1I: 10, CI: 2, N2I: 10}, OR, `data row 4 (study "Smith 2001"): ai = -1 is negative`},
		{"events above total", Study{Label: "Jones", Row: 2, Kind: Binary, AI: 12, N1I: 10, CI: 2, N2I: 10}, RR, `data row 2 (study "Jones"): ai = 12 events is more than the group total n1i = 10`},
		{"control events above total", Study{Label: "Lee", Row: 7, Kind: Binary, AI: 1, N1I: 10, CI: 11, N2I: 10}, RD, `data row 7 (study "Lee"): ci = 11 events`},
		{"empty group", Study{Label: "Kim", Row: 3, Kind: Binary, AI: 0, N1I: 0, CI: 1, N2I: 10}, OR, `data row 3 (study "Kim"): n1i = 0`},
		{"non-finite", Study{Label: "Ng", Row: 5, Kind: Binary, AI: math.NaN(), N1I: 10, CI: 1, N2I: 10}, OR, `data row 5 (study "Ng"): ai is not a finite number`},
		{"SD zero", Study{Label: "Roe", Row: 9, Kind: Continuous, M1I: 1, SD1I: 0, N1I: 10, M2I: 2, SD2I: 1, N2I: 10}, MD, `data row 9 (study "Roe"): sd1i = 0: standard deviations must be greater than 0`},
		{"SD negative", Study{Label: "Poe", Row: 1, Kind: Continuous, M1I: 1, SD1I: 1, N1I: 10, M2I: 2, SD2I: -1, N2I: 10}, SMD, `sd2i = -1`},
		{"N below 2", Study{Label: "Doe", Row: 6, Kind: Continuous, M1I: 1, SD1I: 1, N1I: 1, M2I: 2, SD2I: 1, N2I: 10}, SMD, `data row 6 (study "Doe"): n1i = 1: each group needs at least 2 participants`},
		{"CI reversed", Study{Label: "Hay", Row: 8, Kind: Generic, Est: 0.8, LB: 1.1, UB: 0.6}, GENRatio, `data row 8 (study "Hay"): the lower confidence limit 1.1 must be below the upper limit 0.6`},
		{"estimate outside CI", Study{Label: "Fox", Row: 2, Kind: Generic, Est: 2, LB: 0.5, UB: 1.5}, GENRatio, `outside its confidence interval`},
		{"ratio not positive", Study{Label: "Orr", Row: 3, Kind: Generic, Est: 0.5, LB: -0.1, UB: 0.9}, GENRatio, `data row 3 (study "Orr"): a ratio and its confidence limits must be greater than 0`},
		{"wrong kind", Study{Label: "Ito", Row: 1, Kind: Continuous, M1I: 1, SD1I: 1, N1I: 10, M2I: 2, SD2I: 1, N2I: 10}, OR, `data row 1 (study "Ito"): has continuous data but the measure OR needs binary data`},
		{"no kind", Study{Label: "Uno", Row: 1}, OR, `data row 1 (study "Uno")`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			good := Study{Label: "Good", Row: 10, Kind: c.measure.Kind(), AI: 1, N1I: 10, CI: 2, N2I: 10,
				M1I: 1, SD1I: 1, M2I: 2, SD2I: 1, Est: 0.8, LB: 0.6, UB: 1.1}
			_, err := Analyze([]Study{good, c.study}, Options{Measure: c.measure})
			if err == nil {
				t.Fatal("no error")
			}
			if !strings.Contains(err.Error(), c.want) {
				t.Errorf("error %q does not contain %q", err, c.want)
			}
			if ErrorCode(err) != EINVALID {
				t.Errorf("code %q, want %q", ErrorCode(err), EINVALID)
			}
			var e *Error
			if !errors.As(err, &e) || e.Row != c.study.Row || e.Study != c.study.Label {
				t.Errorf("error does not carry row %d and study %q: %#v", c.study.Row, c.study.Label, e)
			}
		})
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, c := range []struct {
		o    Options
		want string
	}{
		{Options{}, "no effect measure"},
		{Options{Measure: "XX"}, "unknown effect measure"},
		{Options{Measure: OR, Method: "XY"}, "unknown pooling method"},
		{Options{Measure: RR, Method: PETO}, "Peto's method gives an odds ratio"},
		{Options{Measure: MD, Method: MH}, "Mantel–Haenszel method needs 2x2"},
		{Options{Measure: OR, Method: MH, Test: TestKnHa}, "does not apply"},
		{Options{Measure: OR, Level: 120}, "confidence levels"},
		{Options{Measure: OR, Add: -1}, "non-negative"},
		{Options{Measure: OR, To: "some"}, "zero-cell rule"},
		{Options{Measure: OR, Test: "t"}, "unknown test"},
	} {
		err := c.o.Validate()
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("Validate(%+v) = %v, want an error containing %q", c.o, err, c.want)
		}
	}
	if err := (Options{Measure: SMD, Method: DL, Test: TestKnHa, Level: 0.9}).Validate(); err != nil {
		t.Errorf("valid options rejected: %v", err)
	}
}

// k = 1: the study's own estimate, z-based, with a note; metafor behaves the
// same (rma with k = 1 sets τ² = 0 and switches knha to z).
func TestSingleStudy(t *testing.T) {
	one := binaryStudies([]float64{4}, []float64{123}, []float64{11}, []float64{139})
	for _, o := range []Options{
		{Measure: RR}, {Measure: RR, Method: DL}, {Measure: RR, Method: EE},
		{Measure: RR, Test: TestKnHa}, {Measure: RR, Method: MH},
	} {
		res := mustAnalyze(t, one, o)
		want := -0.889311333920205 // dat.bcg Aronson, log RR (see TestBCGDetails)
		if o.Method == MH {
			want = math.Log((4.0 * 139 / 262) / (11.0 * 123 / 262)) // MH with one table: the crude RR
		}
		near(t, string(o.Method)+" est", res.Est, want, 1e-12)
		if res.K != 1 || res.Tau2 != 0 || res.QE != 0 || res.QEp != 1 || res.I2 != 0 || res.H2 != 1 || res.DF != 0 {
			t.Errorf("%+v: k=%d tau2=%v QE=%v QEp=%v I2=%v H2=%v df=%d", o, res.K, res.Tau2, res.QE, res.QEp, res.I2, res.H2, res.DF)
		}
		if !strings.Contains(strings.Join(res.Notes, " "), "Only one study") {
			t.Errorf("%+v: no note about the single study: %q", o, res.Notes)
		}
		if _, err := json.Marshal(res); err != nil {
			t.Errorf("%+v: JSON: %v", o, err)
		}
	}
}

func TestNoStudies(t *testing.T) {
	if _, err := Analyze(nil, Options{Measure: OR}); ErrorCode(err) != EINVALID {
		t.Errorf("no studies: %v", err)
	}
	miss := []Study{{Label: "A", Kind: Binary, Missing: true}}
	if _, err := Analyze(miss, Options{Measure: OR}); ErrorCode(err) != EINVALID {
		t.Errorf("only missing studies: %v", err)
	}
	// Every study double-zero and dropped: nothing estimable (metafor stops
	// with "Processing terminated since k = 0").
	zeros := binaryStudies([]float64{0, 0}, []float64{10, 20}, []float64{0, 0}, []float64{10, 20})
	if _, err := Analyze(zeros, Options{Measure: OR, Drop00: true}); ErrorCode(err) != ENOTESTIMABLE {
		t.Errorf("all dropped: %v", err)
	}
}

// All-zero events. Expected (metafor 3.8-1): rma(measure="OR", ai=c(0,0,0),
// n1i=c(10,20,30), ci=c(0,0,0), n2i=c(10,20,30)) gives est 0, se
// 1.171493819, τ² 0; rma.mh gives NA for OR and RR and a zero SE for RD,
// which Clinsight reports as not estimable.
func TestAllZeroEvents(t *testing.T) {
	zeros := binaryStudies([]float64{0, 0, 0}, []float64{10, 20, 30}, []float64{0, 0, 0}, []float64{10, 20, 30})
	res := mustAnalyze(t, zeros, Options{Measure: OR})
	near(t, "est", res.Est, 0, 0)
	near(t, "se", res.SE, 1.171493819, 1e-9)
	if res.Tau2 != 0 || res.K != 3 {
		t.Errorf("tau2 %v k %d", res.Tau2, res.K)
	}
	for _, m := range []Measure{OR, RR, RD} {
		for _, meth := range []Method{EE, DL, REML} {
			if _, err := Analyze(zeros, Options{Measure: m, Method: meth}); err != nil {
				t.Errorf("%s/%s: %v", m, meth, err)
			}
		}
		_, err := Analyze(zeros, Options{Measure: m, Method: MH})
		if ErrorCode(err) != ENOTESTIMABLE {
			t.Errorf("MH %s with no events: %v, want a not-estimable error", m, err)
		}
	}
}

// Identical studies (τ² = 0). Expected (metafor 3.8-1):
// rma(yi=c(.1,.1,.1), vi=c(.01,.02,.03)): est 0.1, se 0.07385489459, τ² 0,
// I² 0, H² 1 (EE: H² 0); with test="knha" the SE is 0 and the CI [0.1, 0.1].
func TestIdenticalStudies(t *testing.T) {
	var st []Study
	for i, se := range []float64{0.1, math.Sqrt(0.02), math.Sqrt(0.03)} {
		st = append(st, Study{Label: "I" + itoa(i+1), Kind: Generic, Est: 0.1, SE: se})
	}
	for _, meth := range []Method{EE, DL, REML} {
		res := mustAnalyze(t, st, Options{Measure: GEN, Method: meth})
		near(t, string(meth)+" est", res.Est, 0.1, 1e-12)
		near(t, string(meth)+" se", res.SE, 0.07385489459, 1e-9)
		wantH2 := 1.0
		if meth == EE {
			wantH2 = 0
		}
		if res.Tau2 != 0 || res.I2 != 0 || res.QE > 1e-20 || res.H2 != wantH2 {
			t.Errorf("%s: tau2 %v I2 %v QE %v H2 %v", meth, res.Tau2, res.I2, res.QE, res.H2)
		}
	}
	hk := mustAnalyze(t, st, Options{Measure: GEN, Test: TestKnHa})
	if hk.SE != 0 || hk.CILB != 0.1 || hk.CIUB != 0.1 {
		t.Errorf("HK: se %v CI [%v, %v], want 0 and [0.1, 0.1] as metafor", hk.SE, hk.CILB, hk.CIUB)
	}
	if !strings.Contains(strings.Join(hk.Notes, " "), "zero width") {
		t.Errorf("HK: no note on the zero-width interval: %q", hk.Notes)
	}
	if _, err := json.Marshal(hk); err != nil {
		t.Errorf("JSON: %v", err)
	}
}

func TestREMLNotConverged(t *testing.T) {
	st := continuousStudies()
	_, err := Analyze(st, Options{Measure: MD, Control: Control{MaxIter: 1, Threshold: 1e-14}})
	if ErrorCode(err) != ENOTCONVERGED {
		t.Errorf("err = %v, want code %s", err, ENOTCONVERGED)
	}
}

func TestJSONShape(t *testing.T) {
	res := mustAnalyze(t, zeroCellTable(), Options{Measure: OR, Method: MH})
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"k", "est", "se", "ci_lb", "ci_ub", "tau2", "I2", "QE", "QEp", "pval", "zval", "exp", "studies", "model"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks %q: %s", k, b)
		}
	}
	if m["pi_lb"] != nil || m["se_tau2"] != nil {
		t.Errorf("undefined values must be null: pi_lb %v se_tau2 %v", m["pi_lb"], m["se_tau2"])
	}
	if m["k"].(float64) != 6 || m["model"] != "MH" {
		t.Errorf("k %v model %v", m["k"], m["model"])
	}
	studies := m["studies"].([]any)
	if studies[2].(map[string]any)["yi"] != nil {
		t.Errorf("the double-zero study's yi must be null in MH: %v", studies[2])
	}
}

func TestErrorMessage(t *testing.T) {
	if got := ErrorMessage(errors.New("disk on fire")); got != "Internal error." {
		t.Errorf("ErrorMessage(other) = %q", got)
	}
	e := &Error{Code: EINVALID, Row: 3, Study: "A", Message: "bad"}
	if got := ErrorMessage(e); got != `data row 3 (study "A"): bad` {
		t.Errorf("ErrorMessage = %q", got)
	}
	if ErrorCode(nil) != "" || ErrorMessage(nil) != "" {
		t.Error("nil error must have no code or message")
	}
}

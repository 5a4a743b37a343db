package meta

import (
	"math"
	"strings"
	"testing"
)

// The published check (Viechtbauer 2010, J Stat Softw 36(3), section on
// dat.bcg): REML log risk ratio −0.7145, RR 0.4894 [0.3441, 0.6962],
// τ² 0.3132, I² 92.22%.
func TestPublishedBCG(t *testing.T) {
	res := bcgResult(t, Options{Measure: RR, Method: REML})
	round := func(v float64, d int) float64 { p := math.Pow(10, float64(d)); return math.Round(v*p) / p }
	for _, c := range []struct {
		name      string
		got, want float64
		digits    int
	}{
		{"log RR", res.Est, -0.7145, 4},
		{"RR", math.Exp(res.Est), 0.4894, 4},
		{"RR ci.lb", math.Exp(res.CILB), 0.3441, 4},
		{"RR ci.ub", math.Exp(res.CIUB), 0.6962, 4},
		{"tau2", res.Tau2, 0.3132, 4},
		{"I2", res.I2, 92.22, 2},
	} {
		if got := round(c.got, c.digits); got != c.want {
			t.Errorf("dat.bcg REML %s = %.6f, published %v", c.name, c.got, c.want)
		}
	}
	if res.Model != "REML" || res.K != 13 {
		t.Errorf("model %q k %d, want REML and 13", res.Model, res.K)
	}
}

// Expected: metafor 3.8-1 on dat.bcg from studies_2x2.csv:
// r <- rma(measure="RR", ai, n1i, ci, n2i); predict(r); weights(r); r$yi;
// r$vi; and the same with test="knha".
func TestBCGDetails(t *testing.T) {
	res := bcgResult(t, Options{Measure: RR})
	near(t, "zval", res.Stat, -3.97444799412458, 1e-8)
	near(t, "pval", res.Pval, 7.05426734852055e-05, 1e-7)
	near(t, "se.tau2", res.SETau2, 0.166425783098725, 1e-7)
	near(t, "H2", res.H2, 12.8557608031121, 1e-7)
	near(t, "QEp", res.QEp, 1.99676459084597e-26, 1e-6)
	near(t, "pi.lb", res.PILB, -1.86669234660707, 1e-8)
	near(t, "pi.ub", res.PIUB, 0.437627649876866, 1e-8)
	near(t, "exp(pi.lb)", res.Back(res.PILB), 0.154634293498826, 1e-8)
	near(t, "exp(pi.ub)", res.Back(res.PIUB), 1.54902801925028, 1e-8)
	near(t, "tau", res.Tau, math.Sqrt(0.313243325980895), 1e-8)
	nearAll(t, "weights", wts(res), []float64{5.05948307931551, 6.3646796321266, 4.43602776309674, 9.69874673569736, 8.86845628682752, 10.0957381652943, 6.02718170294241, 10.1894386345929, 8.74313313169806, 8.3676072473369, 9.9250266628389, 3.82162942284151, 8.40285153539128}, 1e-8)
	nearAll(t, "yi", yis(res), []float64{-0.889311333920205, -1.58538865720143, -1.34807314829969, -1.44155119002131, -0.217547322211296, -0.786115585818864, -1.62089822359839, 0.0119523335238405, -0.469417648738149, -1.37134480347278, -0.339358828338391, 0.445913400571379, -0.0173139482168798}, 1e-12)
	nearAll(t, "vi", vis(res), []float64{0.325584765003961, 0.194581121398144, 0.415367965367965, 0.0200100319022476, 0.0512101721696309, 0.00690561845590876, 0.223017247572315, 0.00396157929781773, 0.056434210463249, 0.0730247936130289, 0.0124122139715597, 0.532505845200153, 0.0714046596839863}, 1e-12)
	if res.Iterations == 0 {
		t.Error("REML reports no Fisher-scoring iterations")
	}

	hk := bcgResult(t, Options{Measure: RR, Test: TestKnHa})
	if hk.Model != "REML+HK" || hk.DF != 12 {
		t.Errorf("model %q df %d, want REML+HK with 12 df", hk.Model, hk.DF)
	}
	near(t, "HK tval", hk.Stat, -3.95223988967799, 1e-8)
	near(t, "HK pval", hk.Pval, 0.00192001508513394, 1e-7)
	near(t, "HK pi.lb", hk.PILB, -1.99601696702229, 1e-8)
	near(t, "HK pi.ub", hk.PIUB, 0.566952270292088, 1e-8)
}

// Expected: metafor 3.8-1, rma(measure="OR", ..., method="DL",
// test="knha", level=90) on dat.bcg, and predict().
func TestDLKnappHartungLevel90(t *testing.T) {
	res := bcgResult(t, Options{Measure: OR, Method: DL, Test: TestKnHa, Level: 90})
	if res.Model != "DL+HK" {
		t.Errorf("model %q, want DL+HK", res.Model)
	}
	near(t, "est", res.Est, -0.747392349732138, 1e-9)
	near(t, "se", res.SE, 0.18723593963303, 1e-9)
	near(t, "tval", res.Stat, -3.99171415058976, 1e-9)
	near(t, "pval", res.Pval, 0.00178816519086827, 1e-7)
	near(t, "ci.lb", res.CILB, -1.08110063491039, 1e-9)
	near(t, "ci.ub", res.CIUB, -0.41368406455388, 1e-9)
	near(t, "tau2", res.Tau2, 0.366343406725599, 1e-9)
	near(t, "se.tau2", res.SETau2, 0.265938710557632, 1e-9)
	near(t, "I2", res.I2, 92.6454777445856, 1e-9)
	near(t, "H2", res.H2, 13.5970762650667, 1e-9)
	near(t, "pi.lb", res.PILB, -1.87658187174247, 1e-9)
	near(t, "pi.ub", res.PIUB, 0.381797172278198, 1e-9)
}

// Expected: metafor 3.8-1, weights(rma.mh(measure=m, ...)) on dat.bcg, and
// zval, pval, H2 of the OR fit.
func TestMHWeights(t *testing.T) {
	or := bcgResult(t, Options{Measure: OR, Method: MH})
	nearAll(t, "OR weights", wts(or), []float64{0.656527373745082, 1.87722549297404, 0.730744362630871, 16.6680429766667, 2.85949231836084, 22.235861447265, 1.05033546092394, 32.5984300430236, 2.98944602479871, 4.29216143512605, 11.9877830680052, 0.203096479094172, 1.85085351738574}, 1e-10)
	near(t, "OR zval", or.Stat, -11.5444192982602, 1e-9)
	near(t, "OR pval", or.Pval, 7.87716732544439e-31, 1e-6)
	near(t, "OR H2", or.H2, 13.6618816307661, 1e-9)
	rr := bcgResult(t, Options{Measure: RR, Method: MH})
	nearAll(t, "RR weights", wts(rr), []float64{0.656295430727474, 1.85184659389304, 0.716029637093508, 16.1941327360973, 2.78364530343937, 24.349321542075, 1.01902242083981, 31.7083340807275, 2.90243070798117, 4.19264744616632, 11.6365851328133, 0.196816245096907, 1.79289272304934}, 1e-10)
	rd := bcgResult(t, Options{Measure: RD, Method: MH})
	nearAll(t, "RD weights", wts(rd), []float64{0.0747657135992984, 0.174433793114679, 0.129104678711477, 7.57468020095875, 3.10115613802337, 0.856233714575584, 0.57785033861391, 50.6362941445272, 4.23138662046992, 0.968211447155164, 20.3401506272458, 1.38459286095302, 9.95113972205187}, 1e-10)
	if !math.IsNaN(or.PILB) || !math.IsNaN(or.SETau2) {
		t.Error("a fixed-effect model must not report a prediction interval or se(τ²)")
	}
}

// Double-zero studies in a real dataset: dat.collins1985a has two (Teres,
// Foco) and five rows with missing counts. metafor keeps the double-zero
// studies in rma (k = 22) and in rma.mh's k, but leaves them out of the MH
// Q statistic (20 − 1 = 19 df).
func TestDoubleZeroAndMissingRealData(t *testing.T) {
	studies := loadDataset(t, "dat.collins1985a")
	missing := 0
	for _, s := range studies {
		if s.Missing {
			missing++
		}
	}
	if missing != 5 {
		t.Fatalf("%d studies marked missing, want 5", missing)
	}
	reml := mustAnalyze(t, studies, Options{Measure: OR})
	mh := mustAnalyze(t, studies, Options{Measure: OR, Method: MH})
	if reml.K != 22 || mh.K != 22 || mh.QEdf != 19 || reml.QEdf != 21 {
		t.Errorf("k %d/%d, QE df %d/%d; want 22/22 and 21/19", reml.K, mh.K, reml.QEdf, mh.QEdf)
	}
	notes := strings.Join(mh.Notes, "\n")
	if !strings.Contains(notes, "Macklon") || !strings.Contains(notes, "2 studies with no events") {
		t.Errorf("notes do not explain the omissions:\n%s", notes)
	}
}

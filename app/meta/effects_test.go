package meta

import (
	"math"
	"testing"
)

// zeroCellTable is an invented 2x2 table exercising zero cells: study 1 has
// one zero cell, study 3 is double-zero (no events in either group), study 6
// has only events in group 1 (bi = 0).
func zeroCellTable() []Study {
	return binaryStudies(
		[]float64{0, 3, 0, 12, 5, 10}, []float64{20, 50, 15, 100, 40, 10},
		[]float64{2, 8, 0, 20, 9, 10}, []float64{20, 50, 16, 100, 41, 12})
}

// Expected values: R 4.2 + metafor 3.8-1,
// escalc(measure=m, ai, n1i, ci, n2i, to=to) on zeroCellTable, printed with
// sprintf("%.15g"). NaN marks metafor's NA.
func TestEscalcZeroCells(t *testing.T) {
	nan := math.NaN()
	cases := []struct {
		to     ZeroCells
		m      Measure
		yi, vi []float64
	}{
		{Only0, OR,
			[]float64{-1.71209206649418, -1.09330723643842, 0.062520356981334, -0.606135803570316, -0.677398823591806, 1.6094379124341},
			[]float64{2.50283454185893, 0.503419452887538, 4.12512218963832, 0.15719696969697, 0.37093253968254, 2.59047619047619}},
		{Only0, RR,
			[]float64{-1.6094379124341, -0.980829253011726, 0.060624621816435, -0.510825623765991, -0.563094052311747, 0.167054084663166},
			[]float64{2.30476190476191, 0.418333333333333, 3.87867647058824, 0.113333333333333, 0.261720867208672, 0.0226440226440226}},
		{Only0, RD,
			[]float64{-0.0952380952380952, -0.1, 0.00183823529411765, -0.08, -0.0945121951219512, 0.146853146853147},
			[]float64{0.00610085303962855, 0.003816, 0.00357130824391283, 0.002656, 0.00691307234913887, 0.0158925137652704}},
		{All, OR,
			[]float64{-1.71209206649418, -0.998528830111127, 0.062520356981334, -0.589441609425473, -0.634836313513748, 1.6094379124341},
			[]float64{2.50283454185893, 0.447943387881468, 4.12512218963832, 0.152502283081574, 0.346019584566656, 2.59047619047619}},
		{All, RR,
			[]float64{-1.6094379124341, -0.887303195000903, 0.060624621816435, -0.494696241836107, -0.52244615478901, 0.167054084663166},
			[]float64{2.30476190476191, 0.364145658263305, 3.87867647058824, 0.108978507606858, 0.238881572000956, 0.0226440226440226}},
		{If0All, RD,
			[]float64{-0.0952380952380952, -0.0980392156862745, 0.00183823529411765, -0.0792079207920792, -0.0920441347270615, 0.146853146853147},
			[]float64{0.00610085303962855, 0.00397660025178853, 0.00357130824391283, 0.00267543174276255, 0.00700029521138553, 0.0158925137652704}},
		{None, OR,
			[]float64{nan, -1.09330723643842, nan, -0.606135803570316, -0.677398823591806, nan},
			[]float64{nan, 0.503419452887538, nan, 0.15719696969697, 0.37093253968254, nan}},
		{None, RR,
			[]float64{nan, -0.980829253011726, nan, -0.510825623765991, -0.563094052311747, 0.182321556793955},
			[]float64{nan, 0.418333333333333, nan, 0.113333333333333, 0.261720867208672, 0.0166666666666667}},
		// metafor keeps study 3 with yi = 0, vi = 0 here; a zero variance
		// cannot be inverse-variance weighted, so Clinsight marks it not
		// estimable.
		{None, RD,
			[]float64{-0.1, -0.1, nan, -0.08, -0.0945121951219512, 0.166666666666667},
			[]float64{0.0045, 0.003816, nan, 0.002656, 0.00691307234913887, 0.0115740740740741}},
	}
	for _, c := range cases {
		t.Run(string(c.to)+"/"+string(c.m), func(t *testing.T) {
			res := mustAnalyze(t, zeroCellTable(), Options{Measure: c.m, Method: EE, To: c.to})
			nearAll(t, "yi", yis(res), c.yi, 1e-12)
			nearAll(t, "vi", vis(res), c.vi, 1e-12)
		})
	}
}

// Expected: metafor 3.8-1 rma(measure=m, ai, n1i, ci, n2i) (REML), with and
// without drop00=TRUE, and rma.mh(measure=m, ...) on zeroCellTable.
func TestZeroCellPooling(t *testing.T) {
	type want struct {
		k                     int
		est, se, tau2, i2, qe float64
		weights               []float64 // MH only
		qep                   float64   // MH only
	}
	cases := []struct {
		m          Measure
		reml, drop want
		mh         want
	}{
		{OR,
			want{k: 6, est: -0.654542525777959, se: 0.287815820097709, tau2: 0, i2: 0, qe: 2.94886701223536},
			want{k: 5, est: -0.669237535095052, se: 0.290752559088988, tau2: 4.0864690275538e-06, i2: 0.000759495962587453, qe: 2.8216668583426},
			want{k: 6, est: -0.668248384691738, se: 0.287161083512832, i2: 0, qe: 2.82167842435869, qep: 0.588096455559004,
				weights: []float64{5.73102394294447, 21.5486500254712, 0, 50.4330106979114, 22.287315333673, 0}}},
		{RR,
			want{k: 6, est: -0.327650387804327, se: 0.264385534883323, tau2: 0.15225242288706, i2: 43.8821711078969, qe: 8.08186096512074},
			want{k: 5, est: -0.340888468414157, se: 0.271378424314014, tau2: 0.161181985153694, i2: 50.457762312771, qe: 8.07931419896741},
			want{k: 6, est: -0.437734598491305, se: 0.18826520900764, i2: 77.2221782556798, qe: 17.5609417129512, qep: 0.001503314068814,
				weights: []float64{4.16842105263158, 16.6736842105263, 0, 41.6842105263158, 18.5263157894737, 18.9473684210526}}},
		{RD,
			want{k: 6, est: -0.0587964175799348, se: 0.0278457015869384, tau2: 1.0943422263659e-06, i2: 0.0224519479004506, qe: 4.70695224114399},
			want{k: 5, est: -0.0756060363223607, se: 0.0314684554994471, tau2: 8.24795778504783e-07, i2: 0.0154723464816282, qe: 3.39201301962688},
			want{k: 6, est: -0.0718021412032615, se: 0.0303136125577001, i2: 0, qe: 3.40664271688641, qep: 0.492214732925931,
				weights: []float64{8.44285157533566, 21.1071289383392, 6.53640121961471, 42.2142578766783, 17.0941686216673, 4.60519176836491}}},
	}
	check := func(t *testing.T, res Result, w want) {
		t.Helper()
		if res.K != w.k {
			t.Errorf("k = %d, want %d", res.K, w.k)
		}
		near(t, "est", res.Est, w.est, 1e-8)
		near(t, "se", res.SE, w.se, 1e-8)
		near(t, "tau2", res.Tau2, w.tau2, 1e-6)
		near(t, "I2", res.I2, w.i2, 1e-6)
		near(t, "QE", res.QE, w.qe, 1e-8)
	}
	for _, c := range cases {
		t.Run(string(c.m), func(t *testing.T) {
			check(t, mustAnalyze(t, zeroCellTable(), Options{Measure: c.m}), c.reml)
			check(t, mustAnalyze(t, zeroCellTable(), Options{Measure: c.m, Drop00: true}), c.drop)
			mh := mustAnalyze(t, zeroCellTable(), Options{Measure: c.m, Method: MH})
			check(t, mh, c.mh)
			near(t, "MH QEp", mh.QEp, c.mh.qep, 1e-7)
			if mh.QEdf != 4 {
				t.Errorf("MH QE df = %d, want 4 (the double-zero study is left out of Q)", mh.QEdf)
			}
			nearAll(t, "MH weights", wts(mh), c.mh.weights, 1e-10)
		})
	}
}

// continuousStudies is an invented set of five two-arm trials.
func continuousStudies() []Study {
	m1 := []float64{10.2, 8.1, 12.5, 9.9, 11.0}
	sd1 := []float64{3.1, 2.5, 4.0, 3.3, 2.9}
	n1 := []float64{25, 40, 18, 60, 33}
	m2 := []float64{12.0, 9.0, 13.1, 12.2, 11.4}
	sd2 := []float64{2.9, 2.8, 3.6, 3.5, 3.0}
	n2 := []float64{24, 38, 20, 58, 30}
	s := make([]Study, len(m1))
	for i := range m1 {
		s[i] = Study{Label: "T" + itoa(i+1), Kind: Continuous, M1I: m1[i], SD1I: sd1[i], N1I: n1[i], M2I: m2[i], SD2I: sd2[i], N2I: n2[i]}
	}
	return s
}

// Expected: metafor 3.8-1, escalc(measure="MD"/"SMD", m1i, sd1i, n1i, m2i,
// sd2i, n2i) on continuousStudies, then rma(yi, vi, method=...) and
// predict() for the prediction interval.
func TestContinuousMeasures(t *testing.T) {
	type pooled struct {
		method                                    Method
		est, se, lb, ub, tau2, i2, qe, pilb, piub float64
	}
	cases := []struct {
		m      Measure
		yi, vi []float64
		pooled []pooled
	}{
		{MD,
			[]float64{-1.8, -0.9, -0.6, -2.3, -0.4},
			[]float64{0.734816666666667, 0.362565789473684, 1.53688888888889, 0.392706896551724, 0.554848484848485},
			[]pooled{
				{EE, -1.30505485730274, 0.331162300412933, -1.95412103914952, -0.655988675455954, 0, 21.6669197057342, 5.10639947385398, math.NaN(), math.NaN()},
				{DL, -1.28999973623171, 0.382323889014879, -2.03934078913016, -0.540658683333259, 0.158800550558407, 21.6669197057342, 5.10639947385398, -2.37237572877434, -0.207623743689084},
				{REML, -1.2849362092917, 0.402022767301717, -2.07288635416819, -0.496986064415209, 0.227965465471384, 28.4217166136888, 5.10639947385398, -2.50828627323888, -0.0615861453445183},
			}},
		{SMD,
			[]float64{-0.589620446798437, -0.336220389945097, -0.154816813867774, -0.672135953808478, -0.134010567178556},
			[]float64{0.0852141388226135, 0.0520404314648049, 0.105870927211558, 0.0358223118261727, 0.0637788940499789},
			[]pooled{
				{EE, -0.425123014082257, 0.109114683618637, -0.638983864159267, -0.211262164005246, 0, 4.57085551641901, 4.19159159567675, math.NaN(), math.NaN()},
				{DL, -0.422261926289482, 0.112170232688303, -0.642111542496033, -0.20241231008293, 0.00296177849469355, 4.57085551641901, 4.19159159567675, -0.666621096098087, -0.177902756480876},
				{REML, -0.416177064335335, 0.119740659377436, -0.650864444200188, -0.181489684470481, 0.0108107589830766, 14.8814220066757, 4.19159159567675, -0.726994135490971, -0.105359993179698},
			}},
	}
	for _, c := range cases {
		for _, p := range c.pooled {
			t.Run(string(c.m)+"/"+string(p.method), func(t *testing.T) {
				res := mustAnalyze(t, continuousStudies(), Options{Measure: c.m, Method: p.method})
				nearAll(t, "yi", yis(res), c.yi, 1e-12)
				nearAll(t, "vi", vis(res), c.vi, 1e-12)
				near(t, "est", res.Est, p.est, 1e-8)
				near(t, "se", res.SE, p.se, 1e-8)
				near(t, "ci_lb", res.CILB, p.lb, 1e-8)
				near(t, "ci_ub", res.CIUB, p.ub, 1e-8)
				near(t, "tau2", res.Tau2, p.tau2, 1e-7)
				near(t, "I2", res.I2, p.i2, 1e-7)
				near(t, "QE", res.QE, p.qe, 1e-10)
				near(t, "pi_lb", res.PILB, p.pilb, 1e-8)
				near(t, "pi_ub", res.PIUB, p.piub, 1e-8)
			})
		}
	}
}

// Hedges' correction with the smallest usable groups (n1 = n2 = 2, m = 2).
// Expected: metafor 3.8-1 escalc("SMD", m1i=1, sd1i=1, n1i=2, m2i=0,
// sd2i=2, n2i=2) → yi 0.356824823230554, vi 1.01591549430919. By hand:
// c(2) = Γ(1)/(1·Γ(1/2)) = 1/√π, sp = √((1+4)/2), g = (1/√2.5)/√π.
func TestSMDSmallestGroups(t *testing.T) {
	eff := continuousEffects([]Study{{Kind: Continuous, M1I: 1, SD1I: 1, N1I: 2, M2I: 0, SD2I: 2, N2I: 2}}, SMD)
	near(t, "yi", eff[0].yi, 0.356824823230554, 1e-13)
	near(t, "yi by hand", eff[0].yi, 1/math.Sqrt(2.5)/math.Sqrt(math.Pi), 1e-13)
	near(t, "vi", eff[0].vi, 1.01591549430919, 1e-13)
	if c := hedgesCorrection(1); !math.IsNaN(c) {
		t.Errorf("c(1) = %v, want NaN (metafor: undefined for m <= 1)", c)
	}
}

// Generic inverse variance. Expected: R 4.2 with metafor 3.8-1:
// yi = log(hr), vi = ((log(ub) − log(lb)) / (2·qnorm(0.975)))², then
// rma(yi, vi, method=...) and predict(transf=exp) for the PI; likewise on
// the identity scale for mean differences.
func TestGenericInverseVariance(t *testing.T) {
	hr := []float64{0.72, 0.85, 0.60, 1.05, 0.78}
	lb := []float64{0.55, 0.70, 0.41, 0.80, 0.52}
	ub := []float64{0.94, 1.03, 0.88, 1.38, 1.17}
	var ratios []Study
	for i := range hr {
		ratios = append(ratios, Study{Label: "H" + itoa(i+1), Kind: Generic, Est: hr[i], LB: lb[i], UB: ub[i]})
	}
	res := mustAnalyze(t, ratios, Options{Measure: GENRatio, Method: EE})
	nearAll(t, "yi", yis(res), []float64{-0.328504066972036, -0.162518929497775, -0.510825623765991, 0.048790164169432, -0.2484613592985}, 1e-12)
	nearAll(t, "vi", vis(res), []float64{0.0186943845363881, 0.00970832395005965, 0.0379632203005578, 0.0193463310720216, 0.0427967502885946}, 1e-11)
	near(t, "EE est", res.Est, -0.197957761936811, 1e-9)
	near(t, "EE se", res.SE, 0.0622701556263844, 1e-9)
	near(t, "EE I2", res.I2, 41.40161546711, 1e-9)
	near(t, "EE QE", res.QE, 6.82612674715442, 1e-9)

	dl := mustAnalyze(t, ratios, Options{Measure: GENRatio, Method: DL})
	near(t, "DL est", dl.Est, -0.21289285229127, 1e-9)
	near(t, "DL tau2", dl.Tau2, 0.0148361109157408, 1e-8)
	near(t, "DL exp(pi_lb)", math.Exp(dl.PILB), 0.603620731533109, 1e-9)
	near(t, "DL exp(pi_ub)", math.Exp(dl.PIUB), 1.08222975592328, 1e-9)

	reml := mustAnalyze(t, ratios, Options{Measure: GENRatio})
	near(t, "REML est", reml.Est, -0.213065491392031, 1e-8)
	near(t, "REML se", reml.SE, 0.0860604578651972, 1e-8)
	near(t, "REML ci_lb", reml.CILB, -0.381740889300844, 1e-8)
	near(t, "REML ci_ub", reml.CIUB, -0.0443900934832173, 1e-8)
	near(t, "REML tau2", reml.Tau2, 0.0151074296923918, 1e-7)
	near(t, "REML I2", reml.I2, 41.841954182752, 1e-7)
	near(t, "REML exp(pi_lb)", math.Exp(reml.PILB), 0.602209165363502, 1e-8)
	near(t, "REML exp(pi_ub)", math.Exp(reml.PIUB), 1.08439199913545, 1e-8)

	// A reported standard error (log scale) replaces the CI.
	withSE := append([]Study(nil), ratios...)
	withSE[0].SE = math.Sqrt(0.0186943845363881)
	withSE[0].LB, withSE[0].UB = 0, 0
	near(t, "SE instead of CI", mustAnalyze(t, withSE, Options{Measure: GENRatio, Method: EE}).Est, -0.197957761936811, 1e-9)

	md := []float64{-1.2, -0.4, -2.0, 0.3}
	mlb := []float64{-2.5, -1.1, -3.9, -0.8}
	mub := []float64{0.1, 0.3, -0.1, 1.4}
	var diffs []Study
	for i := range md {
		diffs = append(diffs, Study{Label: "D" + itoa(i+1), Kind: Generic, Est: md[i], LB: mlb[i], UB: mub[i]})
	}
	g := mustAnalyze(t, diffs, Options{Measure: GEN})
	nearAll(t, "GEN vi", vis(g), []float64{0.43993703404964, 0.127555708097233, 0.939747155573491, 0.314984503668677}, 1e-12)
	near(t, "GEN est", g.Est, -0.595993327345021, 1e-8)
	near(t, "GEN se", g.SE, 0.3963319553182, 1e-8)
	near(t, "GEN ci_lb", g.CILB, -1.37278968569103, 1e-8)
	near(t, "GEN ci_ub", g.CIUB, 0.18080303100099, 1e-8)
	near(t, "GEN tau2", g.Tau2, 0.277998522060691, 1e-7)
	near(t, "GEN I2", g.I2, 45.2749301665185, 1e-7)
	near(t, "GEN QE", g.QE, 5.61700224223497, 1e-10)
}

package demo

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

// labModel holds, for one admission, each test's value without the acute
// illness (base) and at its height (peak); results move from peak back
// towards base over the first days of the stay.
type labModel struct {
	base, peak [numLabs]float64
}

// recovery weighs peak against base by hospital day.
var recovery = []float64{1, 0.6, 0.35, 0.2}

// lateRise weighs peak against base for markers that peak a day later
// (cardiac enzymes after myocardial infarction).
var lateRise = []float64{0.6, 1, 0.6, 0.3}

// at returns the expected value of a test on a hospital day.
func (m *labModel) at(id labID, day int) float64 {
	w := recovery
	if id == labTroponinT || id == labCKMB || id == labCK {
		w = lateRise
	}
	f := w[min(day, len(w)-1)]
	return m.base[id] + (m.peak[id]-m.base[id])*f
}

// newLabModel derives an admission's laboratory profile from the patient's
// chronic conditions, medications and acute illness.
func (c *clinical) newLabModel(p *patient, a *admission) *labModel {
	r := c.r
	ac := &a.ac
	m := &labModel{}
	set := func(id labID, base, peak float64) { m.base[id], m.peak[id] = base, peak }
	same := func(id labID, v float64) { set(id, v, v) }
	male := p.male()
	ckd := p.ckdStage
	if !p.has[chCKD] {
		ckd = 0
	}
	statin := p.takes(drAtorvastatin) || p.takes(drAtorvastatinHigh)
	heparinDrip := slices.Contains(a.orders, drHeparinDrip)
	warfarin := p.takes(drWarfarin)
	leukemia := p.cancerCode == "C9100" || p.cancerCode == "C910" || p.cancerCode == "C9200" || p.cancerCode == "C920"

	// Kidney function.
	cr := logNormal(r, pickF(male, 0.95, 0.75), 0.15)
	switch ckd {
	case 3:
		cr *= uniform(r, 1.7, 2.3)
	case 4:
		cr *= uniform(r, 2.8, 3.8)
	case 5:
		cr *= uniform(r, 4.5, 6)
	case 6:
		cr *= uniform(r, 6, 9)
	}
	crPeak := cr
	if ac.aki {
		crPeak = cr * uniform(r, 1.8, 3.2)
	}
	if ac.sepsis || ac.dka {
		crPeak *= 1.2
	}
	set(labCreatinine, cr, crPeak)
	bun := 14 * math.Pow(cr/0.85, 0.8) * logNormal(r, 1, 0.15)
	bunPeak := bun * crPeak / cr
	if ac.bleed && ac.reason == rsGIBleed {
		bunPeak += 15
	}
	if ac.hfExac || ac.dehydration {
		bunPeak *= 1.3
	}
	set(labUreaNitrogen, bun, bunPeak)

	// Electrolytes and acid-base.
	na := normal(r, 139, 2)
	naPeak := na
	if ac.hypoNa {
		naPeak = normal(r, 127, 3)
	}
	if ac.dehydration {
		naPeak += 3
	}
	set(labSodium, na, naPeak)
	k := normal(r, 4.1, 0.3) + 0.4*b(ckd >= 4)
	kPeak := k
	switch {
	case ac.hypoK:
		kPeak = normal(r, 3.0, 0.2)
	case ac.hyperK:
		kPeak = normal(r, 5.9, 0.35)
	case ac.dka:
		kPeak = normal(r, 5.3, 0.4)
	}
	set(labPotassium, k, kPeak)
	hco3 := normal(r, 25.5, 2) - 3*b(ckd >= 5) + 3*b(p.has[chCOPD])
	hco3Peak := hco3
	switch {
	case ac.dka:
		hco3Peak = normal(r, 10, 3)
	case ac.shock:
		hco3Peak -= uniform(r, 6, 10)
	case ac.sepsis || ac.aki:
		hco3Peak -= uniform(r, 2, 6)
	}
	set(labBicarbonate, hco3, hco3Peak)
	cl := na - hco3 - normal(r, 12, 1.5)
	set(labChloride, cl, naPeak-hco3Peak-normal(r, 12, 1.5)-8*b(ac.dka))
	ca := normal(r, 9.2, 0.35)
	set(labCalcium, ca, ca-0.6*b(ac.sepsis || ac.pancreatitis)-0.4*b(ac.reason == rsCirrhosis))
	mg := normal(r, 2.0, 0.17) + 0.3*b(ckd >= 5)
	mgPeak := mg
	if ac.hypoMg {
		mgPeak = normal(r, 1.3, 0.12)
	}
	set(labMagnesium, mg, mgPeak)
	phos := normal(r, 3.5, 0.5) + 1.6*b(ckd >= 5) + 0.6*b(ckd == 4)
	set(labPhosphate, phos, phos+1.2*b(ac.aki))

	// Glucose.
	var glu, a1c float64
	switch {
	case p.has[chT1DM]:
		glu, a1c = logNormal(r, 185, 0.35), math.Max(5.8, normal(r, 8.4, 1.4))
	case p.has[chT2DM]:
		glu, a1c = logNormal(r, 160, 0.3), math.Max(5.7, normal(r, 7.6, 1.2))
	default:
		glu, a1c = logNormal(r, 100, 0.12), clamp(normal(r, 5.4, 0.3), 4.3, 6.2)
	}
	gluPeak := glu
	switch {
	case ac.dka:
		gluPeak = logNormal(r, 480, 0.25)
	case ac.hypoglycemia:
		gluPeak = uniform(r, 35, 60)
	case ac.steroid || ac.sepsis || ac.mi:
		gluPeak *= 1.25
	}
	set(labGlucose, glu, gluPeak)
	same(labHbA1c, a1c)

	// Perfusion.
	lac := logNormal(r, 1.2, 0.25)
	lacPeak := lac
	switch {
	case ac.shock:
		lacPeak = logNormal(r, 5.5, 0.3)
	case ac.sepsis:
		lacPeak = logNormal(r, 3.2, 0.3)
	case ac.seizure:
		lacPeak = logNormal(r, 3.5, 0.4)
	case ac.dka || ac.reason == rsGIBleed:
		lacPeak = logNormal(r, 2.4, 0.25)
	}
	set(labLactate, lac, lacPeak)

	// Liver.
	cirr := p.has[chCirrhosis]
	alb := normal(r, 3.9, 0.35) - 1.0*b(cirr) - 0.5*b(p.has[chCancer]) - 0.3*b(a.age >= 80)
	set(labAlbumin, math.Max(1.6, alb), math.Max(1.5, alb-0.7*b(ac.sepsis)-0.4*b(ac.covid)-0.3*b(ac.liver)))
	bili := logNormal(r, 0.6, 0.35) * (1 + 2.5*b(cirr))
	set(labBilirubin, bili, bili*(1+1.5*b(ac.cholecystitis)+0.6*b(ac.liver)+0.5*b(ac.sepsis)))
	alt := logNormal(r, 22, 0.35) * (1 + 1.5*b(p.has[chHepC]))
	set(labALT, alt, alt*(1+2*b(ac.cholecystitis)+0.5*b(ac.covid)+3*b(ac.shock)))
	ast := logNormal(r, 24, 0.3) * (1 + 1.2*b(p.has[chHepC])) * (1 + 0.8*b(p.has[chAlcohol])) * (1 + 0.8*b(cirr))
	set(labAST, ast, ast*(1+1.5*b(ac.cholecystitis)+0.6*b(ac.covid)+3*b(ac.shock)+0.5*b(ac.withdrawal)))
	alp := logNormal(r, 80, 0.25) * (1 + 0.6*b(cirr)) * (1 + 1.2*b(p.metastasis == "C787" || p.metastasis == "C7951"))
	set(labAlkPhos, alp, alp*(1+1*b(ac.cholecystitis)))
	same(labProtein, normal(r, 6.9, 0.45)-0.5*b(cirr))

	// Lipids.
	tc := normal(r, 195, 35) - 45*b(statin)
	hdl := math.Max(18, normal(r, 47+8*b(!male), 12)-5*b(p.has[chT2DM]))
	tg := logNormal(r, 130*(1+0.5*b(p.has[chT2DM])+0.3*b(p.has[chObesity])), 0.4)
	tc = math.Max(tc, hdl+tg/5+25)
	same(labCholesterol, tc)
	same(labHDL, hdl)
	same(labTriglycerides, tg)

	// Cardiac markers.
	trop := logNormal(r, 0.005, 0.5) + 0.03*b(ckd >= 4) + 0.015*b(p.has[chHF])
	tropPeak := trop
	if ac.mi {
		tropPeak = logNormal(r, 1.2, 0.9)
	}
	tropPeak += 0.03*b(ac.hfExac) + 0.03*b(ac.sepsis) + 0.05*b(a.codesContain("I2699"))
	set(labTroponinT, trop, tropPeak)
	ckmb := logNormal(r, 2.5, 0.4)
	set(labCKMB, ckmb, ckmb+b(ac.mi)*logNormal(r, 45, 0.7))
	ck := logNormal(r, 110, 0.5)
	set(labCK, ck, ck*(1+5*b(ac.mi)+4*b(ac.fracture)+3*b(ac.seizure)))
	bnp := logNormal(r, 90*math.Max(1, float64(a.age-40)/20), 0.7) * (1 + 7*b(p.has[chHF])) * (1 + 2*b(ckd >= 4)) * (1 + 2*b(p.has[chAF]))
	bnpPeak := bnp
	if ac.hfExac {
		bnpPeak = math.Max(bnp*2, logNormal(r, 7000, 0.7))
	}
	if ac.sepsis {
		bnpPeak *= 2
	}
	set(labNTproBNP, bnp, bnpPeak)

	// Inflammation and others.
	crp := logNormal(r, 3, 0.8) * (1 + 3*b(p.has[chRA] || p.has[chLupus]))
	crpPeak := crp
	switch {
	case ac.sepsis:
		crpPeak = logNormal(r, 170, 0.4)
	case ac.covid:
		crpPeak = logNormal(r, 110, 0.5)
	case ac.pancreatitis:
		crpPeak = logNormal(r, 120, 0.5)
	case ac.infection:
		crpPeak = logNormal(r, 80, 0.6)
	}
	set(labCRP, crp, crpPeak)
	lip := logNormal(r, 32, 0.35)
	set(labLipase, lip, lip+b(ac.pancreatitis)*logNormal(r, 900, 0.7))
	if p.has[chHypothyroid] {
		same(labTSH, logNormal(r, 3.5, 0.7))
	} else {
		same(labTSH, logNormal(r, 1.8, 0.45))
	}
	ldh := logNormal(r, 190, 0.2) * (1 + 0.4*b(p.has[chCancer]))
	set(labLDH, ldh, ldh*(1+b(ac.covid)+0.3*b(ac.sepsis)))
	ferr := logNormal(r, pickF(male, 120, 70), 0.6)
	if p.anemiaCode == "D509" {
		ferr = logNormal(r, 9, 0.4)
	}
	set(labFerritin, ferr, ferr*(1+2*b(ac.infection)))

	// Blood count.
	hgb := normal(r, pickF(male, 14.4, 12.9), 0.9) - 1.5*b(ckd >= 3) - 1.0*b(ckd >= 5) -
		1.8*b(p.has[chCancer]) - 2.2*b(p.has[chAnemia]) - 1.3*b(cirr)
	hgb = math.Max(6.5, hgb)
	hgbPeak := hgb
	if ac.bleed {
		hgbPeak -= uniform(r, 2.5, 4.5)
	}
	hgbPeak -= 1.2*b(ac.chemo) + 0.8*b(ac.sepsis)
	set(labHemoglobin, hgb, math.Max(4.5, hgbPeak))
	wbc := logNormal(r, 7.4, 0.22)
	if leukemia {
		wbc = logNormal(r, 12, 0.9)
	}
	wbcPeak := wbc
	switch {
	case ac.neutropenia:
		wbcPeak = uniform(r, 0.3, 1.5)
	case ac.sepsis:
		wbcPeak = logNormal(r, 17, 0.3)
	case ac.infection:
		wbcPeak = logNormal(r, 13, 0.3)
	}
	if ac.steroid {
		wbcPeak *= 1.3
	}
	set(labWBC, wbc, wbcPeak)
	plt := logNormal(r, 240, 0.25) * (1 - 0.6*b(cirr))
	set(labPlatelets, plt, plt*(1-0.4*b(ac.sepsis)-0.65*b(ac.neutropenia)))
	mcv := normal(r, 90, 4) - 14*b(p.anemiaCode == "D509") + 6*b(p.has[chAlcohol])
	same(labMCV, mcv)
	same(labRDW, normal(r, 13.3, 0.8)+2.5*b(p.has[chAnemia] || ckd >= 4 || p.has[chCancer]))
	neut := clamp(normal(r, 62, 7), 35, 80)
	neutPeak := neut
	switch {
	case ac.neutropenia:
		neutPeak = uniform(r, 5, 30)
	case ac.sepsis:
		neutPeak = clamp(normal(r, 86, 4), 70, 97)
	case ac.infection:
		neutPeak = clamp(normal(r, 80, 5), 65, 95)
	}
	set(labNeutrophils, neut, neutPeak)

	// Coagulation.
	inr := normal(r, 1.05, 0.06)
	switch {
	case warfarin:
		inr = math.Max(1.3, normal(r, 2.4, 0.5))
	case cirr:
		inr = math.Max(1.1, normal(r, 1.6, 0.25))
	}
	set(labINR, inr, inr+0.2*b(ac.sepsis)+0.3*b(ac.liver))
	ptt := normal(r, 30, 2.5)
	set(labPTT, ptt, ptt+b(heparinDrip)*uniform(r, 30, 50))
	fib := normal(r, 330, 60) - 120*b(cirr)
	set(labFibrinogen, math.Max(90, fib), math.Max(90, fib+220*b(ac.sepsis || ac.infection)))

	// Blood gas.
	ph := normal(r, 7.40, 0.02)
	phPeak := ph
	pco2 := normal(r, 40, 3) + 5*b(p.has[chCOPD])
	pco2Peak := pco2
	switch {
	case ac.dka:
		phPeak, pco2Peak = normal(r, 7.12, 0.06), normal(r, 22, 3)
	case ac.shock || ac.sepsis:
		phPeak, pco2Peak = normal(r, 7.29, 0.04), normal(r, 33, 3)
	case ac.copdExac && ac.respFail:
		phPeak, pco2Peak = normal(r, 7.30, 0.03), normal(r, 60, 5)
	}
	set(labPH, ph, phPeak)
	set(labPCO2, pco2, pco2Peak)
	po2 := normal(r, 92, 10)
	set(labPO2, po2, po2-b(ac.respFail)*uniform(r, 25, 40)-b(ac.pneumonia)*10)

	// Urine.
	same(labUrinePH, clamp(normal(r, 6, 0.6), 5, 8.5))
	sg := normal(r, 1.015, 0.005)
	set(labUrineSG, sg, sg+0.01*b(ac.dehydration))
	uwbc := logNormal(r, 2, 0.7)
	set(labUrineWBC, uwbc, uwbc+b(ac.uti)*logNormal(r, 60, 0.6))
	return m
}

// pickF returns x when cond holds, else y.
func pickF(cond bool, x, y float64) float64 {
	if cond {
		return x
	}
	return y
}

// labDraw is one specimen's results, computed on demand so that derived
// results (anion gap, hematocrit, indices) agree with the measured ones.
type labDraw struct {
	m   *labModel
	r   *rand.Rand
	day int
	v   [numLabs]float64
	ok  [numLabs]bool
}

// get returns the result of test id on this specimen.
func (d *labDraw) get(id labID) float64 {
	if d.ok[id] {
		return d.v[id]
	}
	r := d.r
	var v float64
	switch id {
	case labAnionGap:
		v = math.Max(3, d.get(labSodium)-d.get(labChloride)-d.get(labBicarbonate))
	case labHematocrit:
		v = d.get(labHemoglobin) * uniform(r, 2.9, 3.1)
	case labMCH:
		v = d.get(labMCV) * uniform(r, 0.32, 0.35)
	case labRBC:
		v = d.get(labHemoglobin) / d.get(labMCH) * 10
	case labMCHC:
		v = d.get(labHemoglobin) / d.get(labHematocrit) * 100
	case labPT:
		v = d.get(labINR) * uniform(r, 10.8, 11.6)
	case labLDL:
		v = math.Max(10, d.m.at(labCholesterol, 0)-d.m.at(labHDL, 0)-d.m.at(labTriglycerides, 0)/5)
	case labLymphocytes:
		v = (100 - d.get(labNeutrophils)) * uniform(r, 0.55, 0.85)
	case labPH:
		v = d.m.at(id, d.day) + normal(r, 0, 0.01)
	case labUrineSG:
		v = d.m.at(id, d.day) + normal(r, 0, 0.001)
	default:
		v = d.m.at(id, d.day) * logNormal(r, 1, 0.04)
	}
	switch id {
	case labNeutrophils:
		v = clamp(v, 1, 98)
	case labLymphocytes:
		v = clamp(v, 0.5, 95)
	case labUrineSG:
		v = clamp(v, 1.001, 1.040)
	case labPH:
		v = clamp(v, 6.8, 7.7)
	case labCreatinine:
		v = clamp(v, 0.2, 15)
	case labUreaNitrogen:
		v = clamp(v, 3, 180)
	case labGlucose:
		v = clamp(v, 25, 900)
	default:
		v = math.Max(v, 0)
	}
	d.v[id], d.ok[id] = v, true
	return v
}

// writeLabs draws the admission's laboratory results: a broad set of panels
// on arrival and basic chemistry and blood counts on the following mornings.
func (c *clinical) writeLabs(p *patient, a *admission) error {
	r := c.r
	ac := &a.ac
	m := c.newLabModel(p, a)
	stay := a.disch.Sub(a.admit)
	first := a.admit.Add(hours(uniform(r, 0.2, 2.5)))
	if !first.Before(a.disch) {
		first = a.admit.Add(stay / 3)
	}
	priority := "ROUTINE"
	if !a.edReg.IsZero() || a.admType == "EW EMER." || a.admType == "URGENT" {
		priority = "STAT"
	}

	cardiac := ac.reason == rsACS || ac.reason == rsChestPain || ac.hfExac || ac.afRVR || ac.reason == rsSyncope || ac.stroke
	var panels [][]labID
	want := func(prob float64, panel []labID) {
		if chance(r, prob) {
			panels = append(panels, panel)
		}
	}
	want(0.95, panelBMP)
	want(0.7, panelMgPhos)
	want(0.95, panelCBC)
	want(0.6, panelDiff)
	want(0.35+0.6*b(ac.liver || ac.pancreatitis || ac.sepsis || ac.cholecystitis || p.has[chCirrhosis] || p.has[chHepC] || p.metastasis == "C787"), panelLFT)
	want(0.3+0.6*b(p.anticoagulated() || ac.liver || ac.bleed || ac.stroke || ac.vte || ac.mi || ac.surgery || p.has[chCirrhosis]), panelCoag)
	want(0.12+0.85*b(cardiac), panelCardiac)
	want(0.03+0.92*b(ac.hfExac)+0.4*b(p.has[chHF] || ac.respFail || ac.afRVR), []labID{labNTproBNP})
	if ac.sepsis || ac.respFail || ac.dka || ac.shock || ac.copdExac {
		want(0.9, panelGas)
	} else {
		want(0.15, []labID{labLactate})
	}
	want(0.05+0.5*b(ac.infection)+0.3*b(p.has[chRA] || p.has[chLupus])+0.4*b(ac.covid), []labID{labCRP})
	want(0.05+0.95*b(ac.pancreatitis)+0.75*b(ac.reason == rsAbdominalPain || ac.cholecystitis), []labID{labLipase})
	want(0.06+0.4*b(p.diabetic()), []labID{labHbA1c})
	want(0.05+0.45*b(p.has[chCAD] || ac.stroke)+0.15*b(p.diabetic()), panelLipids)
	want(0.07+0.45*b(p.has[chHypothyroid] || ac.afRVR), []labID{labTSH})
	want(0.03+0.8*b(ac.covid)+0.2*b(p.has[chCancer]), []labID{labLDH})
	want(0.03+0.4*b(p.has[chAnemia])+0.5*b(ac.covid), []labID{labFerritin})
	want(0.02+0.4*b(ac.bleed || ac.liver)+0.3*b(ac.sepsis), []labID{labFibrinogen})
	want(0.15+0.8*b(ac.uti)+0.55*b(ac.sepsis), panelUrine)
	for _, panel := range panels {
		if err := c.writeSpecimen(p, a, m, panel, first, 0, priority); err != nil {
			return err
		}
	}

	// Morning labs on the following days.
	for day := 1; day <= 3; day++ {
		midnight := time.Date(a.admit.Year(), a.admit.Month(), a.admit.Day(), 0, 0, 0, 0, time.UTC).AddDate(0, 0, day)
		t := midnight.Add(hours(uniform(r, 4, 7)))
		if !t.Before(a.disch) {
			break
		}
		if !chance(r, 0.85) {
			continue
		}
		for _, panel := range [][]labID{panelBMP, panelCBCLite} {
			if err := c.writeSpecimen(p, a, m, panel, t, day, "ROUTINE"); err != nil {
				return err
			}
		}
		if day == 1 && (ac.mi || ac.reason == rsACS || ac.reason == rsChestPain) {
			if err := c.writeSpecimen(p, a, m, []labID{labTroponinT}, t, day, "ROUTINE"); err != nil {
				return err
			}
		}
		if p.takes(drWarfarin) || slices.Contains(a.orders, drHeparinDrip) {
			if err := c.writeSpecimen(p, a, m, panelCoag, t, day, "ROUTINE"); err != nil {
				return err
			}
		}
		if day == 1 && (ac.sepsis || ac.shock) {
			if err := c.writeSpecimen(p, a, m, []labID{labLactate}, t, day, "STAT"); err != nil {
				return err
			}
		}
	}
	return nil
}

// writeSpecimen inserts the results of one specimen.
func (c *clinical) writeSpecimen(p *patient, a *admission, m *labModel, panel []labID, t time.Time, day int, priority string) error {
	r := c.r
	c.nextSpecimen += int64(between(r, 1, 20))
	store := t.Add(hours(uniform(r, 0.3, 2.5)))
	if !store.Before(c.end) {
		store = c.end.Add(-time.Minute)
	}
	draw := &labDraw{m: m, r: r, day: day}
	female := !p.male()
	var prio any = priority
	if chance(r, 0.04) {
		prio = nil
	}
	for _, id := range panel {
		it := &labItems[id]
		v := draw.get(id)
		scale := math.Pow(10, float64(it.decimals))
		num := math.Round(v*scale) / scale
		text := strconv.FormatFloat(num, 'f', it.decimals, 64)
		if id == labTroponinT && num < 0.01 {
			num, text = 0.01, "<0.01"
		}
		lo, hi := it.lo, it.hi
		if female && (it.loF != 0 || it.hiF != 0) {
			lo, hi = it.loF, it.hiF
		}
		var flag, upper, comments any
		if hi > 0 {
			upper = hi
		}
		if num < lo || (hi > 0 && num > hi) {
			flag = "abnormal"
		}
		if critical(id, num) {
			comments = "Critical value; care team notified."
		}
		c.nextLabEvent++
		if err := c.w.labEvents.insert(c.nextLabEvent, p.subjectID, a.hadmID, c.nextSpecimen, it.itemid,
			ts(t), ts(store), text, num, nullString(it.unit), lo, upper, flag, prio, comments); err != nil {
			return err
		}
	}
	return nil
}

// critical reports results that a laboratory phones through.
func critical(id labID, v float64) bool {
	switch id {
	case labPotassium:
		return v <= 2.8 || v >= 6.2
	case labSodium:
		return v < 120 || v > 160
	case labGlucose:
		return v < 50 || v > 450
	case labHemoglobin:
		return v < 7
	case labLactate:
		return v >= 4
	case labTroponinT:
		return v >= 0.1
	case labPlatelets:
		return v < 20
	case labPH:
		return v < 7.2
	}
	return false
}

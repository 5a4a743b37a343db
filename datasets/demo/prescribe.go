package demo

import (
	"slices"
	"strconv"
	"time"
)

// orders returns the drugs ordered during an admission: home medications
// continued (some held for the acute problem), treatment of the principal
// problem and complications, and routine inpatient orders.
func (c *clinical) orders(p *patient, a *admission) []drugID {
	r := c.r
	ac := &a.ac
	var ds []drugID
	add := func(prob float64, d ...drugID) {
		if chance(r, prob) {
			for _, x := range d {
				if !slices.Contains(ds, x) {
					ds = append(ds, x)
				}
			}
		}
	}
	one := func(prob float64, options ...choice[drugID]) {
		if chance(r, prob) {
			add(1, pickWeighted(r, options))
		}
	}
	holdBP := ac.sepsis || ac.bleed || ac.aki
	holdAnticoag := ac.bleed || ac.ich
	for _, d := range p.homeMeds {
		prob := 0.85
		switch d {
		case drMetformin, drGlipizide, drEmpagliflozin:
			if ac.sepsis || ac.aki || ac.dka || ac.hypoglycemia || ac.surgery {
				prob = 0.1
			}
		case drLisinopril, drLosartan, drAmlodipine, drHydrochlorothiazide:
			if holdBP {
				prob = 0.25
			}
		case drApixaban, drWarfarin, drClopidogrel:
			if holdAnticoag {
				prob = 0.05
			}
		case drFurosemidePO:
			if ac.hfExac {
				prob = 0 // given IV instead
			}
		case drAlendronate, drMethotrexate, drEpoetin:
			prob = 0.3
		}
		add(prob, d)
	}

	switch ac.reason {
	case rsSepsis:
		add(0.85, drVancomycin)
		if p.penAllergy || chance(r, 0.35) {
			add(1, drCefepime, drMetronidazole)
		} else {
			add(1, drPipTazo)
		}
		add(0.9, drSodiumChloride)
		add(b(ac.shock), drNorepinephrine)
	case rsPneumonia:
		if a.codesContain("J690") {
			add(1, drPipTazo)
		} else {
			add(0.9, drCeftriaxone, drAzithromycin)
		}
	case rsCOVID:
		add(0.85, drDexamethasone)
		if !a.admit.Before(time.Date(2020, 5, 1, 0, 0, 0, 0, time.UTC)) {
			add(0.5, drRemdesivir)
		}
		add(0.8, drEnoxaparin)
	case rsHFExacerbation:
		add(0.95, drFurosemideIV)
		add(0.4, drPotassiumChloride)
	case rsACS:
		add(0.95, drAspirinLoad, drAspirin, drAtorvastatinHigh)
		add(0.8, drMetoprololTartrate)
		add(0.8*b(ac.mi)+0.3*b(!ac.mi), drHeparinDrip)
		one(0.9*b(ac.mi), choice[drugID]{drClopidogrel, 60}, choice[drugID]{drTicagrelor, 40})
		add(0.5, drNitroglycerin)
	case rsChestPain:
		add(0.6, drAspirinLoad)
		add(0.3, drNitroglycerin)
	case rsAF:
		one(1, choice[drugID]{drDiltiazem, 50}, choice[drugID]{drMetoprololTartrate, 50})
		if !p.anticoagulated() {
			add(0.6, drApixaban)
			add(0.2, drHeparinDrip)
		}
	case rsStroke:
		if !ac.ich {
			add(0.9, drAspirin, drAtorvastatinHigh)
			add(0.08, drAlteplase)
		}
	case rsAKI:
		add(0.9, drSodiumChloride)
	case rsCOPDExacerbation:
		one(1, choice[drugID]{drPrednisone, 80}, choice[drugID]{drMethylprednisolone, 20})
		add(1, drAlbuterol, drIpratropium)
		add(0.6, drAzithromycin)
	case rsAsthmaExacerbation:
		add(1, drPrednisone, drAlbuterol, drIpratropium)
	case rsGIBleed:
		add(0.95, drPantoprazoleIV)
		add(b(p.has[chCirrhosis]), drOctreotide, drCeftriaxone)
		add(0.6, drSodiumChloride)
	case rsPancreatitis:
		add(0.9, drLactatedRingers)
		add(0.8, drHydromorphone)
		add(0.7, drOndansetron)
	case rsVTE:
		add(0.6, drHeparinDrip)
		one(0.9, choice[drugID]{drApixaban, 70}, choice[drugID]{drEnoxaparin, 30})
	case rsHipFracture:
		add(0.9, drOxycodone, drAcetaminophen, drEnoxaparin)
		add(0.9, drCefazolin)
		add(0.8, drDocusate, drSenna)
	case rsUTI:
		one(1, choice[drugID]{drCeftriaxone, 70}, choice[drugID]{drNitrofurantoin, 30})
	case rsCellulitis:
		one(1, choice[drugID]{drCefazolin, 50}, choice[drugID]{drVancomycin, 50})
	case rsSyncope:
		add(0.5, drSodiumChloride)
	case rsDKA:
		add(1, drInsulinDrip, drSodiumChloride, drPotassiumChloride, drInsulinGlargine)
	case rsAlcoholWithdrawal:
		add(0.95, drLorazepamIV)
		add(0.9, drThiamine, drFolicAcid, drMultivitamin)
	case rsCirrhosis:
		add(0.9, drLactulose)
		add(0.6, drRifaximin)
		add(0.3, drCeftriaxone)
		add(0.6, drSpironolactone, drFurosemidePO)
	case rsOncology:
		add(0.9, drOndansetron)
		if ac.neutropenia {
			add(0.9, drCefepime)
			add(0.7, drFilgrastim)
		}
	case rsSeizure:
		add(1, drLevetiracetam)
		add(0.6, drLorazepamIV)
	case rsCholecystitis:
		if p.penAllergy || chance(r, 0.4) {
			add(1, drCeftriaxone, drMetronidazole)
		} else {
			add(1, drPipTazo)
		}
		add(0.8, drHydromorphone)
		add(0.6, drOndansetron)
	case rsObstruction:
		add(0.9, drSodiumChloride, drOndansetron)
		add(0.7, drHydromorphone)
	case rsDelirium:
		one(0.9, choice[drugID]{drHaloperidol, 55}, choice[drugID]{drQuetiapine, 45})
	case rsAbdominalPain:
		add(0.7, drOndansetron)
		add(0.5, drAcetaminophen)
		add(0.2, drFamotidine)
	case rsArthroplasty:
		add(1, drCefazolin, drOxycodone, drAcetaminophen)
		one(1, choice[drugID]{drEnoxaparin, 60}, choice[drugID]{drAspirin, 40})
		add(0.8, drDocusate, drSenna, drOndansetron)
	}

	// Complications.
	if ac.hypoK {
		add(0.95, drPotassiumChloride)
	}
	if ac.hypoMg {
		add(0.9, drMagnesiumSulfate)
	}
	if p.has[chAlcohol] && ac.reason != rsAlcoholWithdrawal {
		add(0.7, drThiamine, drFolicAcid, drMultivitamin)
	}
	if p.smokerNow {
		add(0.5, drNicotinePatch)
	}
	if p.diabetic() && !ac.dka {
		add(0.85, drInsulinLispro)
	}
	if ac.respFail || ac.covid || ac.pneumonia {
		add(0.5, drAlbuterol)
	}

	// Routine inpatient orders.
	anticoag := slices.Contains(ds, drApixaban) || slices.Contains(ds, drWarfarin) ||
		slices.Contains(ds, drHeparinDrip) || slices.Contains(ds, drEnoxaparin)
	if !anticoag && !ac.bleed && !ac.ich {
		add(0.7, drHeparinSC)
	}
	add(0.55, drAcetaminophen)
	add(0.3, drOndansetron)
	if !slices.Contains(ds, drPantoprazole) && !slices.Contains(ds, drPantoprazoleIV) && !slices.Contains(ds, drOmeprazole) {
		add(0.15, drPantoprazole)
	}
	add(0.3, drDocusate)
	add(0.3, drSenna)
	add(0.15, drPolyethyleneGlycol)
	add(0.55, drSalineFlush)
	return ds
}

// codesContain reports whether the admission's ICD-10 codes include code.
func (a *admission) codesContain(code string) bool { return slices.Contains(a.codes, code) }

// writePrescriptions inserts the admission's orders with start and stop
// times inside the stay.
func (c *clinical) writePrescriptions(p *patient, a *admission) error {
	r := c.r
	stay := a.disch.Sub(a.admit)
	for _, d := range a.orders {
		s := &drugs[d]
		// Most orders start within the first hours; a few later.
		var start time.Time
		if chance(r, 0.8) {
			start = a.admit.Add(hours(uniform(r, 0.3, 6)))
		} else {
			start = a.admit.Add(time.Duration(uniform(r, 0.1, 0.7) * float64(stay)))
		}
		if !start.Before(a.disch) {
			start = a.admit.Add(stay / 4)
		}
		stop := a.disch
		if s.maxDays > 0 {
			if end := start.Add(days(s.maxDays * uniform(r, 0.6, 1))); end.Before(stop) {
				stop = end
			}
		}
		if !stop.After(start) {
			stop = start.Add(time.Minute)
		}
		c.nextPharmacy += int64(between(r, 1, 40))
		p.poeSeq++
		var perDay any
		if s.perDay > 0 {
			perDay = s.perDay
		}
		if err := c.w.prescriptions.insert(p.subjectID, a.hadmID, c.nextPharmacy,
			strconv.FormatInt(p.subjectID, 10)+"-"+strconv.Itoa(p.poeSeq),
			ts(start), ts(stop), s.drugType, s.drug, s.formularyCD, nil, nil, s.prodStrength,
			nullString(s.formRx), s.dose, s.doseUnit, s.formVal, s.formUnit, perDay, s.route); err != nil {
			return err
		}
	}
	return nil
}

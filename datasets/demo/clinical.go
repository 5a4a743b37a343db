package demo

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"
)

// patient is a synthetic hospital patient: demographics, chronic conditions
// and home medications, fixed across admissions.
type patient struct {
	subjectID int64
	sex       string // "M" or "F"
	age       int    // true age at the first admission
	race      string
	english   bool
	marital   string
	// insuranceYoung and insuranceOld are the payers before and from 65.
	insuranceYoung, insuranceOld string

	has         [numChronic]bool
	ckdStage    int  // 3, 4, 5, or 6 for end-stage renal disease
	hfSystolic  bool // else diastolic
	cancerCode  string
	metastasis  string // ICD-10 code of a secondary site, or ""
	afCode      string
	hldCode     string
	depressCode string
	anxietyCode string
	anemiaCode  string
	morbidObese bool
	smokerNow   bool
	alcoholDep  bool
	alzheimers  bool
	neuropathy  bool
	stent, cabg bool
	priorMI     bool
	penAllergy  bool

	homeMeds []drugID
	poeSeq   int
}

func (p *patient) male() bool     { return p.sex == "M" }
func (p *patient) diabetic() bool { return p.has[chT2DM] || p.has[chT1DM] }

// takes reports whether d is one of the patient's home medications.
func (p *patient) takes(d drugID) bool { return slices.Contains(p.homeMeds, d) }

// anticoagulated reports whether the patient takes an oral anticoagulant.
func (p *patient) anticoagulated() bool { return p.takes(drApixaban) || p.takes(drWarfarin) }

// acute holds what happens during one admission, beyond chronic disease.
type acute struct {
	reason                                              reason
	sepsis, shock, infection, pneumonia, uti            bool
	mi, hfExac, afRVR, stroke, ich, vte                 bool
	bleed, dka, hypoglycemia, pancreatitis, liver       bool
	covid, neutropenia, chemo, aki, respFail            bool
	copdExac, asthmaExac, fracture, surgery, seizure    bool
	delirium, withdrawal, cholecystitis, obstruction    bool
	hypoK, hypoNa, hyperK, hypoMg, dehydration, steroid bool
}

// admission is one generated hospital stay.
type admission struct {
	hadmID       int64
	admit, disch time.Time
	age          int
	died         bool
	admType      string
	admLocation  string
	dischLoc     string
	insurance    string
	provider     string
	edReg, edOut time.Time // zero when not admitted through the ED
	ac           acute
	codes        []string // ICD-10-CM codes in seq_num order
	orders       []drugID
}

// clinical generates the hospital tables.
type clinical struct {
	w     *writer
	opts  Options
	r     *rand.Rand
	start time.Time // first instant of the collection period
	end   time.Time // first instant after it
	icd10 map[string]diagCode
	// icd10Start is the first admission time coded in ICD-10.
	icd10Start time.Time
	hadmUsed   map[int64]bool
	providers  []string

	nextSubject  int64
	subjectStep  int
	nextLabEvent int64
	nextSpecimen int64
	nextPharmacy int64
}

func newClinical(w *writer, opts Options) *clinical {
	c := &clinical{
		w:            w,
		opts:         opts,
		r:            newRand(opts.Seed, streamClinical),
		start:        mustDate(CollectionStart),
		end:          mustDate(CollectionEnd).AddDate(0, 0, 1),
		icd10Start:   mustDate(icdTransition),
		icd10:        make(map[string]diagCode, len(icd10Codes)),
		hadmUsed:     make(map[int64]bool, opts.Patients*3),
		nextSubject:  10_000_000,
		subjectStep:  max(1, 2*9_000_000/opts.Patients),
		nextSpecimen: 10_000_000,
		nextPharmacy: 10_000_000,
	}
	c.subjectStep = min(c.subjectStep, 2000)
	for _, d := range icd10Codes {
		c.icd10[d.code] = d
	}
	const alnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
	for range 400 {
		b := []byte{'P', 0, 0, 0, 0, 0}
		for i := 1; i < len(b); i++ {
			b[i] = alnum[c.r.IntN(len(alnum))]
		}
		c.providers = append(c.providers, string(b))
	}
	return c
}

// run generates and writes every patient, checking ctx between batches.
func (c *clinical) run(ctx context.Context) error {
	const batch = 25
	total := int64(c.opts.Patients)
	report(c.opts.Progress, "clinical", 0, total, "patients")
	for i := range c.opts.Patients {
		if i%batch == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
			if i > 0 {
				report(c.opts.Progress, "clinical", int64(i), total, "patients")
			}
		}
		p := c.newPatient()
		adms, dod := c.simulate(p)
		if err := c.writePatient(p, adms, dod); err != nil {
			return err
		}
	}
	report(c.opts.Progress, "clinical", total, total, "patients")
	return nil
}

// b converts a condition to 1 or 0 for weight arithmetic.
func b(cond bool) float64 {
	if cond {
		return 1
	}
	return 0
}

// newPatient draws demographics, chronic conditions and home medications.
func (c *clinical) newPatient() *patient {
	r := c.r
	c.nextSubject += int64(between(r, 1, c.subjectStep))
	p := &patient{subjectID: c.nextSubject, sex: "M"}
	if chance(r, 0.52) {
		p.sex = "F"
	}
	if chance(r, 0.2) {
		p.age = int(clamp(normal(r, 34, 10), 18, 95))
	} else {
		p.age = int(clamp(normal(r, 67, 14), 18, 100))
	}
	p.race = pickWeighted(r, raceChoices)
	p.english = !chance(r, 0.09)
	switch {
	case p.age < 30:
		p.marital = pickWeighted(r, []choice[string]{{"SINGLE", 80}, {"MARRIED", 15}, {"DIVORCED", 1}, {"", 4}})
	case p.age < 60:
		p.marital = pickWeighted(r, []choice[string]{{"MARRIED", 50}, {"SINGLE", 30}, {"DIVORCED", 12}, {"WIDOWED", 2}, {"", 6}})
	default:
		p.marital = pickWeighted(r, []choice[string]{{"MARRIED", 45}, {"WIDOWED", 25}, {"SINGLE", 14}, {"DIVORCED", 10}, {"", 6}})
	}
	p.insuranceYoung = pickWeighted(r, []choice[string]{{"Other", 58}, {"Medicaid", 30}, {"Medicare", 12}})
	p.insuranceOld = pickWeighted(r, []choice[string]{{"Medicare", 88}, {"Other", 10}, {"Medicaid", 2}})

	a := float64(p.age)
	f := clamp((a-18)/60, 0, 1.4) // 0 at 18, 1 at 78
	m, fem := p.male(), !p.male()
	set := func(ch chronic, prob float64) { p.has[ch] = chance(r, prob) }

	set(chTobacco, 0.2+0.06*b(m))
	p.smokerNow = p.has[chTobacco] && chance(r, 0.7-0.4*f)
	set(chAlcohol, (0.04+0.05*b(m))*(1+b(a >= 25 && a < 65)))
	p.alcoholDep = p.has[chAlcohol] && chance(r, 0.5)
	set(chOpioid, 0.01+0.025*b(a >= 20 && a < 55))
	set(chHepC, 0.008+0.35*b(p.has[chOpioid]))
	set(chHIV, 0.005+0.04*b(p.has[chOpioid]))
	set(chObesity, 0.18+0.08*(1-math.Abs(a-55)/40))
	p.morbidObese = p.has[chObesity] && chance(r, 0.3)
	set(chHTN, 0.08+0.55*f+0.1*b(p.has[chObesity]))
	set(chT1DM, 0.006+0.01*b(a < 40))
	if !p.has[chT1DM] {
		set(chT2DM, 0.03+0.25*f+0.1*b(p.has[chObesity]))
	}
	p.neuropathy = p.diabetic() && chance(r, 0.2)
	set(chHLD, 0.06+0.4*f+0.2*b(p.diabetic()))
	set(chCKD, 0.01+0.14*f+0.15*b(p.diabetic())+0.07*b(p.has[chHTN]))
	if p.has[chCKD] {
		p.ckdStage = pickWeighted(r, []choice[int]{{3, 60}, {4, 20}, {5, 7}, {6, 13}})
	}
	set(chCAD, (0.8+0.5*b(m))*(0.01+0.22*math.Pow(f, 1.5))+0.05*b(p.diabetic())+0.04*b(p.has[chTobacco]))
	if p.has[chCAD] {
		p.stent = chance(r, 0.3)
		p.cabg = chance(r, 0.1)
		p.priorMI = chance(r, 0.25)
	}
	set(chHF, 0.005+0.12*f*f+0.15*b(p.has[chCAD])+0.05*b(p.has[chCKD]))
	p.hfSystolic = chance(r, 0.4+0.2*b(p.has[chCAD]))
	set(chAF, 0.003+0.18*math.Pow(f, 2.5)+0.15*b(p.has[chHF]))
	if p.has[chAF] {
		p.afCode = pickWeighted(r, []choice[string]{{"I4891", 50}, {"I480", 25}, {"I481", 10}, {"I482", 8}, {"I4892", 7}})
	}
	if p.has[chTobacco] {
		set(chCOPD, 0.04+0.22*f)
	} else {
		set(chCOPD, 0.01+0.04*f)
	}
	set(chAsthma, 0.07+0.03*b(fem))
	set(chOSA, 0.03+0.15*b(p.has[chObesity]))
	set(chCancer, 0.02+0.15*f)
	if p.has[chCancer] {
		p.pickCancer(r)
	}
	set(chHypothyroid, b(fem)*(0.04+0.1*f)+b(m)*(0.01+0.04*f))
	set(chDepression, 0.13+0.05*b(fem))
	if p.has[chDepression] {
		p.depressCode = pickWeighted(r, []choice[string]{{"F329", 65}, {"F339", 35}})
	}
	set(chAnxiety, 0.11+0.05*b(fem)+0.2*b(p.has[chDepression]))
	if p.has[chAnxiety] {
		p.anxietyCode = pickWeighted(r, []choice[string]{{"F419", 70}, {"F411", 30}})
	}
	if a > 65 {
		set(chDementia, 0.01+0.3*math.Pow((a-65)/30, 2))
		p.alzheimers = p.has[chDementia] && chance(r, 0.45)
	}
	if a > 55 {
		set(chParkinson, (0.01+0.03*(a-55)/35)*(1+0.4*b(m)))
	}
	set(chEpilepsy, 0.015)
	set(chCirrhosis, 0.006+0.2*b(p.alcoholDep)+0.06*b(p.has[chAlcohol])+0.25*b(p.has[chHepC]))
	set(chGERD, 0.12+0.1*f)
	if fem && a > 50 {
		set(chOsteoporosis, 0.05+0.3*(a-50)/40)
	} else {
		set(chOsteoporosis, 0.02*f)
	}
	set(chRA, 0.008*(1+b(fem)))
	if fem && a < 65 {
		set(chLupus, 0.008)
	} else {
		set(chLupus, 0.001)
	}
	if m && a > 50 {
		set(chBPH, 0.1+0.4*(a-50)/40)
	}
	set(chGout, b(m)*0.05*f+0.05*b(p.has[chCKD]))
	set(chPVD, 0.01+0.06*f+0.04*b(p.diabetic())+0.04*b(p.has[chTobacco]))
	set(chAnemia, 0.05+0.03*b(fem))
	if p.has[chAnemia] {
		p.anemiaCode = pickWeighted(r, []choice[string]{{"D649", 60}, {"D509", 40}})
	}
	set(chVTEHistory, 0.02+0.05*b(p.has[chCancer]))
	if p.has[chHLD] {
		p.hldCode = pickWeighted(r, []choice[string]{{"E785", 60}, {"E7800", 25}, {"E782", 15}})
	}
	p.penAllergy = chance(r, 0.08)
	p.homeMeds = homeMedications(r, p)
	return p
}

// pickCancer chooses a sex- and age-appropriate cancer and, for solid
// tumours, sometimes a metastatic site.
func (p *patient) pickCancer(r *rand.Rand) {
	var cs []choice[int]
	for i, s := range cancers {
		w := s.female
		if p.male() {
			w = s.male
		}
		if w > 0 && p.age >= s.minAge {
			cs = append(cs, choice[int]{i, w})
		}
	}
	if len(cs) == 0 {
		p.has[chCancer] = false
		return
	}
	s := cancers[pickWeighted(r, cs)]
	p.cancerCode = pick(r, s.codes)
	if s.solid && chance(r, 0.3) {
		p.metastasis = pickWeighted(r, []choice[string]{{"C787", 45}, {"C7951", 35}, {"C7931", 20}})
	}
}

// homeMedications chooses the patient's regular medications from their
// chronic conditions.
func homeMedications(r *rand.Rand, p *patient) []drugID {
	var meds []drugID
	add := func(prob float64, ds ...drugID) {
		if chance(r, prob) {
			for _, d := range ds {
				if !slices.Contains(meds, d) {
					meds = append(meds, d)
				}
			}
		}
	}
	if p.has[chHTN] {
		first := pickWeighted(r, []choice[drugID]{{drLisinopril, 40}, {drAmlodipine, 30}, {drLosartan, 20}, {drHydrochlorothiazide, 10}})
		add(1, first)
		if chance(r, 0.4) {
			second := pickWeighted(r, []choice[drugID]{{drAmlodipine, 50}, {drHydrochlorothiazide, 30}, {drLisinopril, 20}})
			if !(second == drLisinopril && first == drLosartan) && !(second == drHydrochlorothiazide && p.ckdStage >= 4) {
				add(1, second)
			}
		}
	}
	if p.has[chT2DM] {
		add(0.7*b(p.ckdStage < 4), drMetformin)
		add(0.2, drGlipizide)
		add(0.1, drEmpagliflozin)
		add(0.35, drInsulinGlargine)
	}
	if p.has[chT1DM] {
		add(1, drInsulinGlargine)
	}
	if p.neuropathy {
		add(0.6, drGabapentin)
	}
	if p.has[chCAD] {
		if chance(r, 0.6) {
			add(1, drAtorvastatinHigh)
		} else {
			add(1, drAtorvastatin)
		}
		add(0.9, drAspirin)
		add(0.3+0.5*b(p.stent), drClopidogrel)
	} else if p.has[chHLD] || (p.diabetic() && p.age >= 40) {
		add(0.8, drAtorvastatin)
	}
	if p.has[chHF] {
		add(0.9, drFurosemidePO)
		if chance(r, 0.5) {
			add(0.9, drCarvedilol)
		} else {
			add(0.9, drMetoprololSuccinate)
		}
		add(0.35*b(p.hfSystolic), drSpironolactone)
		if !p.takes(drLosartan) {
			add(0.4, drLisinopril)
		}
	} else if p.has[chCAD] {
		add(0.6, drMetoprololTartrate)
	}
	if p.has[chAF] || p.has[chVTEHistory] {
		pAnti := 0.8
		if !p.has[chAF] {
			pAnti = 0.5
		}
		if chance(r, pAnti) {
			add(1, pickWeighted(r, []choice[drugID]{{drApixaban, 70}, {drWarfarin, 30}}))
		}
	}
	if p.has[chAF] && !p.takes(drCarvedilol) && !p.takes(drMetoprololSuccinate) && !p.takes(drMetoprololTartrate) {
		add(1, pickWeighted(r, []choice[drugID]{{drMetoprololTartrate, 60}, {drDiltiazem, 40}}))
	}
	if p.has[chCOPD] {
		add(0.9, drAlbuterol)
		add(0.6, drTiotropium)
		add(0.4, drFluticasoneSalmeterol)
	}
	if p.has[chAsthma] {
		add(0.9, drAlbuterol)
		add(0.5, drFluticasoneSalmeterol)
	}
	if p.has[chHypothyroid] {
		add(0.95, drLevothyroxine)
	}
	if p.has[chDepression] {
		add(0.85, pickWeighted(r, []choice[drugID]{{drSertraline, 55}, {drEscitalopram, 45}}))
	}
	if p.has[chAnxiety] {
		if !p.takes(drSertraline) && !p.takes(drEscitalopram) {
			add(0.5, drEscitalopram)
		}
		add(0.25, drLorazepam)
	}
	if p.has[chOpioid] {
		add(0.8, pickWeighted(r, []choice[drugID]{{drBuprenorphineNaloxone, 60}, {drMethadone, 40}}))
	}
	if p.has[chDementia] {
		add(0.6, drDonepezil)
	}
	if p.has[chParkinson] {
		add(0.95, drCarbidopaLevodopa)
	}
	if p.has[chEpilepsy] {
		add(0.9, drLevetiracetam)
	}
	if p.has[chCirrhosis] {
		add(0.6, drLactulose)
		add(0.4, drRifaximin)
		add(0.5, drSpironolactone)
		add(0.4, drFurosemidePO)
	}
	if p.has[chHIV] {
		add(0.9, drBiktarvy)
	}
	if p.has[chGERD] {
		add(0.9, pickWeighted(r, []choice[drugID]{{drPantoprazole, 50}, {drOmeprazole, 40}, {drFamotidine, 10}}))
	}
	if p.has[chOsteoporosis] {
		add(0.5, drAlendronate)
		add(0.6, drCalciumCarbonate, drVitaminD)
	}
	if p.has[chRA] {
		add(0.6, drMethotrexate, drFolicAcid)
	}
	if p.has[chLupus] {
		add(0.8, drHydroxychloroquine)
	}
	if p.has[chBPH] {
		add(0.7, drTamsulosin)
	}
	if p.has[chGout] {
		add(0.7, drAllopurinol)
	}
	if p.ckdStage >= 5 {
		add(0.7, drSevelamer)
		add(0.6, drNephrocaps)
	}
	if p.ckdStage >= 4 {
		add(0.4, drEpoetin)
	}
	return meds
}

// simulate draws the patient's admissions in time order and the date of an
// out-of-hospital death, if any (zero otherwise).
func (c *clinical) simulate(p *patient) ([]admission, time.Time) {
	r := c.r
	burden := b(p.has[chHF]) + b(p.has[chCKD]) + b(p.has[chCOPD]) + b(p.has[chCancer]) + b(p.has[chCirrhosis]) + b(p.has[chDementia])
	n := pickWeighted(r, []choice[int]{{1, 50 - 6*burden}, {2, 22}, {3, 13 + 2*burden}, {4, 9 + 2*burden}, {5, 6 + 2*burden}})
	// The first admission leaves room for an ED visit before it and a long
	// stay after it inside the collection period.
	span := c.end.Sub(c.start) - days(51)
	at := c.start.Add(days(1) + time.Duration(r.Int64N(int64(span/time.Minute)))*time.Minute)
	var adms []admission
	for i := 0; i < n; i++ {
		if i > 0 {
			prev := adms[i-1]
			gap := 3 + r.ExpFloat64()*150
			if chance(r, 0.25) {
				gap = uniform(r, 3, 30)
			}
			at = prev.disch.Add(days(gap))
		}
		a, ok := c.newAdmission(p, at, i == 0, adms)
		if !ok {
			break
		}
		adms = append(adms, a)
		if a.died {
			return adms, time.Time{}
		}
	}
	// Deaths after discharge are known for up to a year, as in MIMIC-IV.
	last := adms[len(adms)-1]
	pDeath := 0.02 + 0.06*b(last.age >= 80) + 0.25*b(p.metastasis != "") + 0.06*b(p.has[chHF]) + 0.05*b(p.has[chCirrhosis]) + 0.05*b(p.has[chDementia])
	if chance(r, pDeath) {
		dod := last.disch.Add(days(uniform(r, 3, 365)))
		if dod.Before(c.end) {
			return adms, dod
		}
	}
	return adms, time.Time{}
}

// ageAt returns the patient's age at t.
func (c *clinical) ageAt(p *patient, first, t time.Time) int {
	return p.age + int(t.Sub(first).Hours()/(24*365.25))
}

// newAdmission draws one admission starting around at; ok is false when it
// would end after the collection period.
func (c *clinical) newAdmission(p *patient, at time.Time, first bool, prev []admission) (admission, bool) {
	r := c.r
	firstAdmit := at
	if !first {
		firstAdmit = prev[0].admit
	}
	age := c.ageAt(p, firstAdmit, at)
	rs := c.pickReason(p, age, at)
	spec := reasons[rs]
	a := admission{age: age}
	a.admType = pickWeighted(r, admissionTypeBySetting[spec.setting])
	a.admLocation = pickWeighted(r, admissionLocations(a.admType, age))
	// Time of day: planned admissions in the morning, others around the clock.
	day := time.Date(at.Year(), at.Month(), at.Day(), 0, 0, 0, 0, time.UTC)
	var hour float64
	if spec.setting == settingElective || spec.setting == settingSurgical {
		hour = uniform(r, 6, 10)
	} else {
		hour = math.Mod(normal(r, 15, 5)+48, 24)
	}
	a.admit = day.Add(hours(hour))
	if !first && !a.admit.After(prev[len(prev)-1].disch) {
		a.admit = prev[len(prev)-1].disch.Add(days(uniform(r, 2, 5)))
	}
	los := logNormal(r, spec.losMedian, 0.55) * (1 + float64(age-60)/150)
	if slices.Contains(observationTypes, a.admType) {
		los = math.Min(los, uniform(r, 0.4, 2))
	}
	los = clamp(los, 0.2, 45)
	a.ac = c.acuteFor(p, rs)
	if a.ac.shock || a.ac.respFail {
		los *= 1.4
	}
	a.disch = a.admit.Add(days(los))
	if los > 1.2 {
		// Discharges happen in the daytime.
		d := a.disch
		a.disch = time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC).Add(hours(uniform(r, 10, 18)))
		if a.disch.Sub(a.admit) < hours(12) {
			a.disch = a.admit.Add(hours(uniform(r, 12, 20)))
		}
	}
	// In-hospital death.
	major := b(p.has[chHF]) + b(p.ckdStage >= 4) + b(p.has[chCirrhosis]) + b(p.metastasis != "") + b(p.has[chDementia]) + b(p.has[chCOPD])
	logit := -5.35 + 0.045*float64(age-60) + spec.severity + 0.45*major + 1.3*b(a.ac.shock) + 0.9*b(a.ac.respFail) + 1.5*b(a.ac.ich)
	a.died = chance(r, 1/(1+math.Exp(-logit)))
	if !a.disch.Before(c.end) {
		return admission{}, false
	}
	if a.admLocation == "EMERGENCY ROOM" {
		a.edReg = a.admit.Add(-hours(uniform(r, 2, 12)))
		a.edOut = a.admit.Add(hours(uniform(r, 0.1, 1.5)))
		if !a.edOut.Before(a.disch) {
			a.edOut = a.admit.Add(a.disch.Sub(a.admit) / 2)
		}
	}
	switch {
	case a.died:
		a.dischLoc = "DIED"
	default:
		obs := slices.Contains(observationTypes, a.admType)
		a.dischLoc = pickWeighted(r, dischargeLocations(age, obs, p.has[chAlcohol] || p.has[chOpioid]))
	}
	if age >= 65 {
		a.insurance = p.insuranceOld
	} else if p.ckdStage == 6 {
		a.insurance = "Medicare"
	} else {
		a.insurance = p.insuranceYoung
	}
	if !chance(r, 0.04) {
		a.provider = pick(r, c.providers)
	}
	a.hadmID = c.newHadmID()
	a.codes = c.diagnoses(p, &a)
	a.orders = c.orders(p, &a)
	// What this admission teaches us stays with the patient.
	if a.ac.mi {
		p.priorMI = true
		p.has[chCAD] = true
	}
	if a.ac.vte {
		p.has[chVTEHistory] = true
	}
	return a, true
}

// newHadmID returns an unused random 8-digit admission identifier.
func (c *clinical) newHadmID() int64 {
	for {
		id := 20_000_000 + c.r.Int64N(10_000_000)
		if !c.hadmUsed[id] {
			c.hadmUsed[id] = true
			return id
		}
	}
}

// pickReason draws the principal problem of an admission from weights that
// depend on the patient's conditions, age and the date.
func (c *clinical) pickReason(p *patient, age int, t time.Time) reason {
	old := age >= 75
	var w [numReasons]float64
	w[rsSepsis] = 4 + 3*b(age > 70) + 3*b(p.has[chCancer]) + 1.5*b(p.diabetic()) + 1.5*b(p.has[chCKD]) + 2*b(p.has[chCirrhosis]) + 2*b(p.has[chHIV])
	w[rsPneumonia] = 4 + 4*b(p.has[chCOPD]) + 2*b(old) + 2*b(p.has[chDementia])
	switch {
	case t.Before(time.Date(2020, 3, 1, 0, 0, 0, 0, time.UTC)):
	case t.Before(time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)):
		w[rsCOVID] = 7 + 2*b(old)
	default:
		w[rsCOVID] = 2
	}
	w[rsHFExacerbation] = 12 * b(p.has[chHF])
	w[rsACS] = 6*b(p.has[chCAD]) + b(age >= 45)
	w[rsChestPain] = 3 + 2*b(p.has[chCAD])
	w[rsAF] = 5*b(p.has[chAF]) + 0.3
	w[rsStroke] = 1 + 1.5*b(age > 60) + b(p.has[chHTN]) + 2*b(p.has[chAF])
	w[rsAKI] = 2 + 4*b(p.has[chCKD])
	w[rsCOPDExacerbation] = 9 * b(p.has[chCOPD])
	w[rsAsthmaExacerbation] = 4 * b(p.has[chAsthma])
	w[rsGIBleed] = 2 + 5*b(p.has[chCirrhosis]) + 2*b(p.anticoagulated())
	w[rsPancreatitis] = 0.8 + 4*b(p.has[chAlcohol])
	w[rsVTE] = 1.2 + 2*b(p.has[chCancer]) + 3*b(p.has[chVTEHistory])
	w[rsHipFracture] = b(age >= 65) * (1.5 + 3*b(p.has[chOsteoporosis]) + 1.5*b(p.has[chDementia]) + 1.5*b(p.has[chParkinson]))
	w[rsUTI] = 2 + 3*b(!p.male() && old) + 2*b(p.has[chDementia]) + b(p.has[chBPH])
	w[rsCellulitis] = 2 + 1.5*b(p.diabetic()) + b(p.has[chObesity])
	w[rsSyncope] = 2 + 1.5*b(old)
	w[rsDKA] = 8*b(p.has[chT1DM]) + 0.4*b(p.has[chT2DM])
	w[rsHypoglycemia] = 2 * b(p.has[chT2DM] && (p.takes(drInsulinGlargine) || p.takes(drGlipizide)))
	w[rsAlcoholWithdrawal] = 6 * b(p.has[chAlcohol])
	w[rsCirrhosis] = 8 * b(p.has[chCirrhosis])
	w[rsOncology] = 9 * b(p.has[chCancer])
	w[rsSeizure] = 6 * b(p.has[chEpilepsy])
	w[rsCholecystitis] = 1.5
	w[rsObstruction] = 1.2 + b(p.has[chCancer])
	w[rsDelirium] = 4*b(p.has[chDementia]) + 1.5*b(age >= 80)
	w[rsAbdominalPain] = 3
	w[rsArthroplasty] = 3 * b(age >= 50)
	cs := make([]choice[reason], 0, numReasons)
	for i, x := range w {
		if x > 0 {
			cs = append(cs, choice[reason]{reason(i), x})
		}
	}
	return pickWeighted(c.r, cs)
}

// acuteFor draws the acute events that go with a principal problem,
// including common complications.
func (c *clinical) acuteFor(p *patient, rs reason) acute {
	r := c.r
	ac := acute{reason: rs}
	switch rs {
	case rsSepsis:
		ac.sepsis, ac.infection = true, true
		ac.shock = chance(r, 0.25)
		ac.aki = chance(r, 0.35)
		ac.respFail = chance(r, 0.15)
		src := pickWeighted(r, []choice[int]{{0, 40}, {1, 30}, {2, 10}, {3, 20}})
		ac.uti, ac.pneumonia = src == 0, src == 1
	case rsPneumonia:
		ac.pneumonia, ac.infection = true, true
		ac.respFail = chance(r, 0.2)
	case rsCOVID:
		ac.covid, ac.infection, ac.pneumonia = true, true, true
		ac.respFail = chance(r, 0.35)
		ac.steroid = true
	case rsHFExacerbation:
		ac.hfExac = true
		ac.aki = chance(r, 0.2)
		ac.respFail = chance(r, 0.08)
	case rsACS:
		ac.mi = chance(r, 0.7)
	case rsAF:
		ac.afRVR = true
	case rsStroke:
		ac.stroke = true
		ac.ich = chance(r, 0.12)
	case rsAKI:
		ac.aki = true
		ac.dehydration = chance(r, 0.5)
		ac.hyperK = chance(r, 0.2)
	case rsCOPDExacerbation:
		ac.copdExac, ac.steroid = true, true
		ac.respFail = chance(r, 0.2)
		ac.infection = chance(r, 0.3)
	case rsAsthmaExacerbation:
		ac.asthmaExac, ac.steroid = true, true
	case rsGIBleed:
		ac.bleed = true
	case rsPancreatitis:
		ac.pancreatitis = true
	case rsVTE:
		ac.vte = true
	case rsHipFracture:
		ac.fracture, ac.surgery = true, true
		ac.bleed = chance(r, 0.3)
	case rsUTI:
		ac.uti, ac.infection = true, true
	case rsCellulitis:
		ac.infection = true
	case rsDKA:
		ac.dka, ac.dehydration = true, true
		ac.hypoK = chance(r, 0.4)
	case rsHypoglycemia:
		ac.hypoglycemia = true
	case rsAlcoholWithdrawal:
		ac.withdrawal = true
		ac.hypoMg = chance(r, 0.3)
	case rsCirrhosis:
		ac.liver = true
		ac.hypoNa = chance(r, 0.3)
	case rsOncology:
		ac.chemo = true
		ac.neutropenia = chance(r, 0.35)
		ac.infection = ac.neutropenia
	case rsSeizure:
		ac.seizure = true
	case rsCholecystitis:
		ac.cholecystitis, ac.infection, ac.surgery = true, true, chance(r, 0.7)
	case rsObstruction:
		ac.obstruction = true
	case rsDelirium:
		ac.delirium = true
	case rsArthroplasty:
		ac.surgery = true
	}
	// Complications. Patients on dialysis do not get acute kidney injury.
	ckdF := 1 + 0.5*b(p.has[chCKD])
	if !ac.aki {
		ac.aki = chance(r, ckdF*(0.04+0.16*b(ac.hfExac)+0.1*b(ac.pneumonia)))
	}
	if p.ckdStage == 6 {
		ac.aki = false
	}
	ac.hypoK = ac.hypoK || chance(r, 0.06+0.1*b(ac.hfExac || ac.withdrawal)+0.05*b(p.takes(drFurosemidePO)))
	ac.hypoNa = ac.hypoNa || chance(r, 0.05+0.12*b(p.has[chCirrhosis])+0.05*b(p.has[chHF])+0.05*b(ac.pneumonia))
	ac.hyperK = !ac.hypoK && (ac.hyperK || chance(r, 0.02+0.15*b(p.ckdStage >= 4 || ac.aki)))
	ac.hypoMg = ac.hypoMg || chance(r, 0.03)
	return ac
}

// addCode appends an ICD-10 code unless already present.
func addCode(codes []string, code string) []string {
	if code == "" || slices.Contains(codes, code) {
		return codes
	}
	return append(codes, code)
}

// diagnoses returns the admission's ICD-10 codes in seq_num order: the
// principal problem, its companions, complications, chronic conditions and
// status codes; 3 to 15 of them.
func (c *clinical) diagnoses(p *patient, a *admission) []string {
	r := c.r
	ac := &a.ac
	var cs []string
	add := func(code string) { cs = addCode(cs, code) }
	maybe := func(prob float64, code string) {
		if chance(r, prob) {
			add(code)
		}
	}
	one := func(options ...choice[string]) { add(pickWeighted(r, options)) }

	switch ac.reason {
	case rsSepsis:
		one(choice[string]{"A419", 50}, choice[string]{"A4151", 25}, choice[string]{"A4101", 12}, choice[string]{"A4102", 13})
		if ac.shock {
			add("R6521")
		} else {
			maybe(0.45, "R6520")
		}
		switch {
		case ac.uti:
			add("N390")
		case ac.pneumonia:
			add("J189")
		default:
			maybe(0.3, pick(r, []string{"L03115", "L03116", "A047"}))
		}
	case rsPneumonia:
		if a.age >= 75 || p.has[chDementia] {
			one(choice[string]{"J189", 50}, choice[string]{"J690", 30}, choice[string]{"J181", 10}, choice[string]{"J159", 10})
		} else {
			one(choice[string]{"J189", 60}, choice[string]{"J181", 20}, choice[string]{"J159", 20})
		}
	case rsCOVID:
		add("U071")
		if !a.admit.Before(time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)) {
			maybe(0.75, "J1282")
		}
	case rsHFExacerbation:
		if p.hfSystolic {
			one(choice[string]{"I5023", 80}, choice[string]{"I5021", 20})
		} else {
			one(choice[string]{"I5033", 80}, choice[string]{"I5031", 20})
		}
	case rsACS:
		if ac.mi {
			one(choice[string]{"I214", 65}, choice[string]{"I2109", 12}, choice[string]{"I2119", 13}, choice[string]{"I213", 10})
		} else {
			add("I200")
		}
	case rsChestPain:
		one(choice[string]{"R079", 60}, choice[string]{"R0789", 40})
	case rsAF:
		if p.afCode != "" {
			add(p.afCode)
		} else {
			add("I4891")
		}
		maybe(0.3, "R000")
	case rsStroke:
		if ac.ich {
			add("I619")
		} else {
			one(choice[string]{"I639", 55}, choice[string]{"I634", 30}, choice[string]{"G459", 15})
		}
	case rsAKI:
		one(choice[string]{"N179", 80}, choice[string]{"N170", 20})
	case rsCOPDExacerbation:
		if ac.infection {
			add("J440")
			add("J189")
		} else {
			add("J441")
		}
	case rsAsthmaExacerbation:
		add("J45901")
	case rsGIBleed:
		one(choice[string]{"K922", 60}, choice[string]{"K921", 40})
		maybe(0.7, "D62")
	case rsPancreatitis:
		add("K859")
	case rsVTE:
		one(choice[string]{"I82409", 35}, choice[string]{"I82401", 25}, choice[string]{"I2699", 40})
	case rsHipFracture:
		one(choice[string]{"S72001A", 50}, choice[string]{"S72002A", 50})
		add("W19XXXA")
		if ac.bleed {
			add("D62")
		}
	case rsUTI:
		add("N390")
		maybe(0.2*b(a.age >= 75), "R410")
	case rsCellulitis:
		one(choice[string]{"L03115", 50}, choice[string]{"L03116", 50})
	case rsSyncope:
		add("R55")
	case rsDKA:
		if p.has[chT1DM] {
			add("E1010")
		} else {
			add("E1110")
		}
		add("E860")
	case rsHypoglycemia:
		add("E11649")
	case rsAlcoholWithdrawal:
		add("F10239")
	case rsCirrhosis:
		if p.has[chAlcohol] {
			add("K7031")
		} else {
			add("K7460")
		}
		add("R188")
		maybe(0.6, "K766")
	case rsOncology:
		if ac.neutropenia {
			add("D701")
			add("R509")
			add(p.cancerCode)
		} else {
			add("Z5111")
			add(p.cancerCode)
		}
		maybe(0.3, "D6481")
	case rsSeizure:
		add("G40909")
	case rsCholecystitis:
		add("K810")
	case rsObstruction:
		add("K5660")
		maybe(0.5, "R112")
	case rsDelirium:
		one(choice[string]{"F05", 60}, choice[string]{"G9341", 40})
		maybe(0.5, "R4182")
	case rsAbdominalPain:
		add("R109")
		maybe(0.5, "R112")
	case rsArthroplasty:
		one(choice[string]{"M1711", 60}, choice[string]{"M1611", 40})
	}
	// Complications.
	if ac.respFail {
		one(choice[string]{"J9601", 80}, choice[string]{"J9600", 20})
	}
	if ac.aki {
		add("N179")
	}
	if ac.hypoK {
		add("E876")
	}
	if ac.hypoNa {
		add("E871")
	}
	if ac.hyperK {
		add("E875")
	}
	if ac.hypoMg {
		add("E8342")
	}
	if ac.dehydration {
		add("E860")
	}
	if ac.sepsis || ac.shock {
		maybe(0.3, "I959")
	}
	if p.has[chCirrhosis] || ac.sepsis || ac.neutropenia {
		maybe(0.3, "D696")
	}
	if a.age >= 75 && !ac.delirium {
		maybe(0.07, "F05")
	}
	if a.age >= 75 && a.disch.Sub(a.admit) > days(6) {
		maybe(0.15, pick(r, []string{"L89159", "L89154"}))
	}
	if p.has[chCancer] || p.has[chCirrhosis] {
		maybe(0.08, "E43")
	}
	// Chronic conditions.
	chronic := c.chronicCodes(p, a)
	for _, code := range chronic {
		maybe(0.92, code)
	}
	// Status and history codes.
	if a.died {
		maybe(0.5, "Z66")
		maybe(0.35, "Z515")
	} else if a.age >= 85 {
		maybe(0.15, "Z66")
	}
	if p.anticoagulated() {
		maybe(0.8, "Z7901")
	}
	if p.takes(drAspirin) {
		maybe(0.5, "Z7982")
	}
	if p.takes(drClopidogrel) {
		maybe(0.5, "Z7902")
	}
	if p.takes(drInsulinGlargine) {
		maybe(0.8, "Z794")
	} else if p.takes(drMetformin) || p.takes(drGlipizide) {
		maybe(0.4, "Z7984")
	}
	if p.has[chCOPD] || p.has[chRA] || p.has[chLupus] {
		maybe(0.15, "Z7952")
	}
	if p.penAllergy {
		maybe(0.8, "Z880")
	}
	if a.age >= 75 {
		maybe(0.12, "Z9181")
	}
	if !ac.covid && !a.admit.Before(time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC)) && a.admit.Before(time.Date(2023, 6, 1, 0, 0, 0, 0, time.UTC)) {
		maybe(0.1, "Z20822")
	}
	maybe(0.1, "Z79899")
	// Short lists get common incidental findings.
	for len(cs) < 3 {
		add(pick(r, incidentalCodes))
	}
	if len(cs) > 15 {
		cs = cs[:15]
	}
	return cs
}

// chronicCodes returns the ICD-10 codes of the patient's chronic
// conditions, using combination codes where ICD-10-CM requires them.
func (c *clinical) chronicCodes(p *patient, a *admission) []string {
	var cs []string
	add := func(code string) { cs = addCode(cs, code) }
	ckd := p.has[chCKD]
	hf := p.has[chHF]
	if p.has[chHTN] || ckd {
		switch {
		case ckd && hf && p.ckdStage >= 5:
			add("I132")
		case ckd && hf:
			add("I130")
		case ckd && p.ckdStage >= 5:
			add("I120")
		case ckd:
			add("I129")
		case hf:
			add("I110")
		default:
			add("I10")
		}
	}
	if hf && !a.ac.hfExac {
		switch {
		case p.subjectID%7 == 0:
			add("I509")
		case p.hfSystolic:
			add("I5022")
		default:
			add("I5032")
		}
	}
	if p.has[chT2DM] {
		switch {
		case ckd:
			add("E1122")
		case p.neuropathy:
			add("E1142")
		case p.has[chPVD]:
			add("E1151")
		case a.hadmID%4 == 0:
			add("E1165")
		default:
			add("E119")
		}
	}
	if p.has[chT1DM] {
		if a.hadmID%3 == 0 {
			add("E1065")
		} else {
			add("E109")
		}
	}
	if ckd {
		switch p.ckdStage {
		case 3:
			add("N183")
		case 4:
			add("N184")
		case 5:
			add("N185")
		default:
			add("N186")
			add("Z992")
		}
		if p.ckdStage >= 3 && a.hadmID%5 < 2 {
			add("D631")
		}
	}
	if p.has[chCancer] {
		add(p.cancerCode)
		add(p.metastasis)
		if a.hadmID%3 == 0 {
			add("D630")
		}
	}
	if p.has[chCAD] {
		add("I2510")
		if p.priorMI && !a.ac.mi {
			add("I252")
		}
		if p.stent {
			add("Z955")
		}
		if p.cabg {
			add("Z951")
		}
	}
	if p.has[chAF] && a.ac.reason != rsAF {
		add(p.afCode)
	}
	if p.has[chCOPD] && !a.ac.copdExac {
		add("J449")
	}
	if p.has[chAsthma] && !a.ac.asthmaExac {
		add("J45909")
	}
	if p.has[chHLD] {
		add(p.hldCode)
	}
	if p.has[chObesity] {
		if p.morbidObese {
			add("E6601")
			add("Z6841")
		} else {
			add("E669")
		}
	}
	if p.has[chOSA] {
		add("G4733")
	}
	if p.has[chHypothyroid] {
		add("E039")
	}
	if p.has[chDepression] {
		add(p.depressCode)
	}
	if p.has[chAnxiety] {
		add(p.anxietyCode)
	}
	if p.has[chAlcohol] {
		if p.alcoholDep {
			add("F1020")
		} else {
			add("F1010")
		}
	}
	if p.has[chOpioid] {
		add("F1120")
	}
	if p.has[chTobacco] {
		if p.smokerNow {
			add("F17210")
		} else {
			add("Z87891")
		}
	}
	if p.has[chDementia] {
		if p.alzheimers {
			add("G309")
		} else {
			add("F0390")
		}
	}
	if p.has[chParkinson] {
		add("G20")
	}
	if p.has[chEpilepsy] {
		add("G40909")
	}
	if p.has[chCirrhosis] && a.ac.reason != rsCirrhosis {
		if p.has[chAlcohol] {
			add("K7030")
		} else {
			add("K7460")
		}
	}
	if p.has[chHepC] {
		add("B182")
	}
	if p.has[chHIV] {
		add("B20")
	}
	if p.has[chGERD] {
		add("K219")
	}
	if p.has[chOsteoporosis] {
		add("M810")
	}
	if p.has[chRA] {
		add("M069")
	}
	if p.has[chLupus] {
		add("M329")
	}
	if p.has[chBPH] {
		if a.hadmID%2 == 0 {
			add("N401")
		} else {
			add("N400")
		}
	}
	if p.has[chGout] {
		add("M109")
	}
	if p.has[chPVD] && !(p.has[chT2DM] && !ckd && !p.neuropathy) {
		add("I739")
	}
	if p.has[chAnemia] {
		add(p.anemiaCode)
	}
	if p.has[chVTEHistory] && !a.ac.vte {
		add("Z86718")
	}
	return cs
}

// writePatient inserts the patient and everything about their admissions.
func (c *clinical) writePatient(p *patient, adms []admission, dod time.Time) error {
	first := adms[0]
	anchorAge := first.age
	if anchorAge > 89 {
		anchorAge = 91
	}
	year := first.admit.Year()
	lo := year - (year-2014)%3
	group := strconv.Itoa(lo) + " - " + strconv.Itoa(lo+2)
	var dodVal any
	if last := adms[len(adms)-1]; last.died {
		dodVal = last.disch.Format(dateLayout)
	} else if !dod.IsZero() {
		dodVal = dod.Format(dateLayout)
	}
	if err := c.w.patients.insert(p.subjectID, p.sex, anchorAge, year, group, dodVal); err != nil {
		return err
	}
	for i := range adms {
		if err := c.writeAdmission(p, &adms[i]); err != nil {
			return err
		}
	}
	return nil
}

// ts formats a timestamp, or NULL for the zero time.
func ts(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.Format(timestampLayout)
}

// writeAdmission inserts one admission with its diagnoses, lab results and
// prescriptions.
func (c *clinical) writeAdmission(p *patient, a *admission) error {
	var deathtime any
	expire := 0
	if a.died {
		deathtime, expire = ts(a.disch), 1
	}
	language := "ENGLISH"
	if !p.english {
		language = "?"
	}
	if err := c.w.admissions.insert(p.subjectID, a.hadmID, ts(a.admit), ts(a.disch), deathtime,
		a.admType, nullString(a.provider), a.admLocation, nullString(a.dischLoc), a.insurance, language,
		nullString(p.marital), p.race, ts(a.edReg), ts(a.edOut), expire); err != nil {
		return err
	}
	version := 10
	if a.admit.Before(c.icd10Start) {
		version = 9
	}
	codes, err := c.versioned(a.codes, version)
	if err != nil {
		return err
	}
	for i, code := range codes {
		if err := c.w.diagnoses.insert(p.subjectID, a.hadmID, i+1, code, version); err != nil {
			return err
		}
	}
	if err := c.writeLabs(p, a); err != nil {
		return err
	}
	return c.writePrescriptions(p, a)
}

// versioned converts ICD-10 codes to the codes of the given ICD version,
// dropping codes without an equivalent and duplicates, and pads the list to
// three codes.
func (c *clinical) versioned(codes []string, version int) ([]string, error) {
	out := make([]string, 0, len(codes))
	for _, code := range append(codes[:len(codes):len(codes)], incidentalCodes...) {
		if len(out) >= 3 && !slices.Contains(codes, code) {
			break
		}
		d, ok := c.icd10[code]
		if !ok {
			return nil, fmt.Errorf("diagnosis code %s is not in the curated list", code)
		}
		if version == 9 {
			code = d.icd9
		}
		if code != "" && !slices.Contains(out, code) {
			out = append(out, code)
		}
	}
	return out, nil
}

package demo

// chronic is a long-standing condition of a patient.
type chronic int

// The chronic conditions a patient may carry across admissions.
const (
	chHTN chronic = iota
	chT2DM
	chT1DM
	chHLD
	chObesity
	chCKD
	chCAD
	chHF
	chAF
	chCOPD
	chAsthma
	chOSA
	chCancer
	chHypothyroid
	chDepression
	chAnxiety
	chAlcohol
	chOpioid
	chTobacco
	chDementia
	chParkinson
	chEpilepsy
	chCirrhosis
	chHepC
	chHIV
	chGERD
	chOsteoporosis
	chRA
	chLupus
	chBPH
	chGout
	chPVD
	chAnemia
	chVTEHistory
	numChronic
)

// reason is the principal problem of an admission.
type reason int

// The principal problems of admissions.
const (
	rsSepsis reason = iota
	rsPneumonia
	rsCOVID
	rsHFExacerbation
	rsACS
	rsChestPain
	rsAF
	rsStroke
	rsAKI
	rsCOPDExacerbation
	rsAsthmaExacerbation
	rsGIBleed
	rsPancreatitis
	rsVTE
	rsHipFracture
	rsUTI
	rsCellulitis
	rsSyncope
	rsDKA
	rsHypoglycemia
	rsAlcoholWithdrawal
	rsCirrhosis
	rsOncology
	rsSeizure
	rsCholecystitis
	rsObstruction
	rsDelirium
	rsAbdominalPain
	rsArthroplasty
	numReasons
)

// setting is how a kind of admission usually arrives.
type setting int

const (
	settingED       setting = iota // through the emergency department
	settingObs                     // short observation stays
	settingUrgent                  // urgent, often surgical
	settingElective                // planned medical admissions
	settingSurgical                // planned surgery
)

// reasonSpec describes a kind of admission.
type reasonSpec struct {
	// losMedian is the median length of stay in days.
	losMedian float64
	// severity is added to the log-odds of in-hospital death.
	severity float64
	// setting drives admission_type and admission_location.
	setting setting
}

// reasons holds each principal problem's length of stay and severity.
var reasons = [numReasons]reasonSpec{
	rsSepsis:             {6.5, 2.3, settingED},
	rsPneumonia:          {4.5, 1.1, settingED},
	rsCOVID:              {6, 1.6, settingED},
	rsHFExacerbation:     {4.5, 1.0, settingED},
	rsACS:                {3.5, 1.2, settingED},
	rsChestPain:          {1.2, -2.5, settingObs},
	rsAF:                 {2.5, -0.6, settingED},
	rsStroke:             {4.5, 1.3, settingED},
	rsAKI:                {4, 0.7, settingED},
	rsCOPDExacerbation:   {4, 0.5, settingED},
	rsAsthmaExacerbation: {2.5, -1.5, settingED},
	rsGIBleed:            {3.5, 0.8, settingED},
	rsPancreatitis:       {4.5, 0.2, settingED},
	rsVTE:                {3.5, 0.6, settingED},
	rsHipFracture:        {5.5, 0.6, settingUrgent},
	rsUTI:                {3.5, -0.3, settingED},
	rsCellulitis:         {3.5, -1.2, settingED},
	rsSyncope:            {1.5, -2.0, settingObs},
	rsDKA:                {3, -0.3, settingED},
	rsHypoglycemia:       {1.5, -1.0, settingObs},
	rsAlcoholWithdrawal:  {3.5, -0.8, settingED},
	rsCirrhosis:          {5, 1.5, settingED},
	rsOncology:           {4, 0.9, settingElective},
	rsSeizure:            {2.5, -0.8, settingED},
	rsCholecystitis:      {3, -1.0, settingUrgent},
	rsObstruction:        {5, 0.2, settingED},
	rsDelirium:           {4, 0.4, settingED},
	rsAbdominalPain:      {1.8, -2.0, settingObs},
	rsArthroplasty:       {2, -3.0, settingSurgical},
}

// cancerSpec is a kind of cancer a patient may have.
type cancerSpec struct {
	// codes are the ICD-10-CM codes one of which a patient carries.
	codes []string
	// male and female are the relative frequencies by sex (0: never).
	male, female float64
	// minAge is the youngest age at which it is assigned.
	minAge int
	// solid tumours may metastasise.
	solid bool
}

// cancers lists the cancers of the hospital patients.
var cancers = []cancerSpec{
	{[]string{"C3490", "C3411", "C3412", "C349"}, 14, 12, 40, true},
	{[]string{"C50911", "C50912", "C50919", "C509"}, 0, 30, 25, true},
	{[]string{"C50921"}, 0.3, 0, 40, true},
	{[]string{"C61"}, 28, 0, 45, true},
	{[]string{"C189", "C187", "C20"}, 9, 8, 30, true},
	{[]string{"C250", "C259"}, 4, 4, 40, true},
	{[]string{"C220"}, 3, 1, 40, true},
	{[]string{"C649"}, 4, 2, 35, true},
	{[]string{"C679"}, 5, 1.5, 45, true},
	{[]string{"C719"}, 2, 1.5, 18, true},
	{[]string{"C569"}, 0, 3, 35, true},
	{[]string{"C169"}, 2, 1, 40, true},
	{[]string{"C159"}, 2, 0.5, 45, true},
	{[]string{"C439"}, 3, 2, 25, true},
	{[]string{"C9100", "C910"}, 0.6, 0.5, 18, false},
	{[]string{"C9200", "C920"}, 2, 1.5, 18, false},
	{[]string{"C8330", "C833", "C8510", "C851"}, 3, 2.5, 18, false},
	{[]string{"C9000"}, 2, 1.5, 40, false},
}

// Fixed category lists of the admissions table, with MIMIC-IV-like weights.
var (
	raceChoices = []choice[string]{
		{"WHITE", 60}, {"BLACK/AFRICAN AMERICAN", 13.5}, {"UNKNOWN", 5}, {"OTHER", 3.5},
		{"WHITE - OTHER EUROPEAN", 2}, {"HISPANIC/LATINO - PUERTO RICAN", 2}, {"ASIAN", 1.5},
		{"HISPANIC OR LATINO", 1.2}, {"ASIAN - CHINESE", 1.2}, {"WHITE - RUSSIAN", 1.2},
		{"BLACK/CAPE VERDEAN", 1}, {"HISPANIC/LATINO - DOMINICAN", 1}, {"BLACK/CARIBBEAN ISLAND", 0.8},
		{"UNABLE TO OBTAIN", 0.6}, {"PATIENT DECLINED TO ANSWER", 0.5}, {"PORTUGUESE", 0.5},
		{"ASIAN - SOUTH EAST ASIAN", 0.4}, {"WHITE - BRAZILIAN", 0.4}, {"ASIAN - ASIAN INDIAN", 0.4},
		{"WHITE - EASTERN EUROPEAN", 0.3}, {"HISPANIC/LATINO - GUATEMALAN", 0.3},
		{"HISPANIC/LATINO - SALVADORAN", 0.3}, {"AMERICAN INDIAN/ALASKA NATIVE", 0.2},
		{"NATIVE HAWAIIAN OR OTHER PACIFIC ISLANDER", 0.1}, {"MULTIPLE RACE/ETHNICITY", 0.1},
		{"SOUTH AMERICAN", 0.1},
	}
	admissionTypeBySetting = [...][]choice[string]{
		settingED:       {{"EW EMER.", 62}, {"URGENT", 10}, {"DIRECT EMER.", 6}, {"EU OBSERVATION", 14}, {"OBSERVATION ADMIT", 8}},
		settingObs:      {{"EU OBSERVATION", 50}, {"OBSERVATION ADMIT", 22}, {"DIRECT OBSERVATION", 8}, {"EW EMER.", 17}, {"AMBULATORY OBSERVATION", 3}},
		settingUrgent:   {{"EW EMER.", 55}, {"URGENT", 25}, {"SURGICAL SAME DAY ADMISSION", 10}, {"DIRECT EMER.", 10}},
		settingElective: {{"ELECTIVE", 50}, {"URGENT", 25}, {"DIRECT EMER.", 10}, {"OBSERVATION ADMIT", 15}},
		settingSurgical: {{"SURGICAL SAME DAY ADMISSION", 70}, {"ELECTIVE", 25}, {"URGENT", 5}},
	}
)

// observationTypes are the admission types of short observation stays.
var observationTypes = []string{"EU OBSERVATION", "OBSERVATION ADMIT", "DIRECT OBSERVATION", "AMBULATORY OBSERVATION"}

// admissionLocations returns the weighted admission_location values of an
// admission_type.
func admissionLocations(admType string, age int) []choice[string] {
	switch admType {
	case "EW EMER.", "EU OBSERVATION":
		snf := 1.0
		if age >= 75 {
			snf = 5
		}
		return []choice[string]{{"EMERGENCY ROOM", 85}, {"WALK-IN/SELF REFERRAL", 4}, {"TRANSFER FROM HOSPITAL", 7}, {"TRANSFER FROM SKILLED NURSING FACILITY", snf}, {"INFORMATION NOT AVAILABLE", 1}}
	case "URGENT":
		return []choice[string]{{"TRANSFER FROM HOSPITAL", 60}, {"PHYSICIAN REFERRAL", 30}, {"CLINIC REFERRAL", 10}}
	case "DIRECT EMER.", "DIRECT OBSERVATION":
		return []choice[string]{{"PHYSICIAN REFERRAL", 60}, {"CLINIC REFERRAL", 40}}
	case "ELECTIVE":
		return []choice[string]{{"PHYSICIAN REFERRAL", 90}, {"CLINIC REFERRAL", 10}}
	case "SURGICAL SAME DAY ADMISSION":
		return []choice[string]{{"PHYSICIAN REFERRAL", 80}, {"PROCEDURE SITE", 20}}
	case "OBSERVATION ADMIT":
		return []choice[string]{{"EMERGENCY ROOM", 60}, {"PACU", 15}, {"PHYSICIAN REFERRAL", 25}}
	default: // AMBULATORY OBSERVATION
		return []choice[string]{{"AMBULATORY SURGERY TRANSFER", 50}, {"PROCEDURE SITE", 50}}
	}
}

// dischargeLocations returns the weighted discharge_location values of a
// living patient; "" stands for NULL, common after observation stays.
func dischargeLocations(age int, observation, substanceUse bool) []choice[string] {
	ama := 1.5
	if substanceUse {
		ama = 8
	}
	null := 2.0
	if observation {
		null = 45
	}
	switch {
	case age < 65:
		return []choice[string]{{"HOME", 60}, {"HOME HEALTH CARE", 20}, {"SKILLED NURSING FACILITY", 5}, {"REHAB", 3}, {"AGAINST ADVICE", ama}, {"PSYCH FACILITY", 1}, {"ACUTE HOSPITAL", 1}, {"", null}}
	case age < 80:
		return []choice[string]{{"HOME", 40}, {"HOME HEALTH CARE", 30}, {"SKILLED NURSING FACILITY", 15}, {"REHAB", 5}, {"HOSPICE", 2}, {"CHRONIC/LONG TERM ACUTE CARE", 1.5}, {"AGAINST ADVICE", ama / 2}, {"ASSISTED LIVING", 1}, {"ACUTE HOSPITAL", 1}, {"", null}}
	default:
		return []choice[string]{{"HOME", 25}, {"HOME HEALTH CARE", 33}, {"SKILLED NURSING FACILITY", 25}, {"REHAB", 6}, {"HOSPICE", 4}, {"CHRONIC/LONG TERM ACUTE CARE", 2}, {"ASSISTED LIVING", 2}, {"HEALTHCARE FACILITY", 1}, {"", null}}
	}
}

// incidentalCodes are common secondary diagnoses that complete short lists
// (every admission has at least three diagnoses).
var incidentalCodes = []string{"E559", "K5900", "M545", "K5730", "Z79899", "E785", "K219", "R339", "E8342", "N200"}

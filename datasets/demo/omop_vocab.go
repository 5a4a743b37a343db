package demo

import "sync"

// The vocabulary of the demo OMOP source: a small synthetic vocabulary with
// OMOP's structure (standard SNOMED, RxNorm and LOINC concepts; ICD-10-CM
// and ICD-9-CM source concepts mapped to them with 'Maps to'; an ancestor
// hierarchy in concept_ancestor).
//
// Concept ids: the concepts also present in the vocabulary of OHDSI's
// Synthea27Nj instance carry OMOP's concept id, name and code (checked by
// TestOMOPDemoConceptsMatchSynthea against ../shared/data); metformin
// carries OMOP's id 1503297 (RxNorm 6809), as recalled from OHDSI's
// documentation, not checked. Every other concept has a local id above
// 2,000,000,000 (OMOP's range for site-specific concepts), with the public
// code of its vocabulary where one is listed (RxNorm RXCUI, LOINC, ICD),
// or a "CS-" code when Clinsight invented it. Do not use these ids outside
// the demo.

// omopLocal is the first local concept id (OMOP reserves ids above
// 2,000,000,000 for site-specific concepts).
const omopLocal int64 = 2_000_000_000

// demoConcept is a standard concept of the demo vocabulary.
type demoConcept struct {
	id                         int64
	name, domain, vocab, class string
	code                       string
	// parents are the keys of its parent concepts.
	parents []string
	// sources are the ICD-10-CM codes (as stored, without the dot) that
	// map to it; their ICD-9-CM equivalents (icd10Codes) map too. Drug
	// concepts list their demo drugs instead (drugIngredient).
	sources []string
}

// demoConditions are the condition concepts, keyed by a short name.
var demoConditions = sync.OnceValue(func() map[string]demoConcept {
	return map[string]demoConcept{
		"dm":             {201820, "Diabetes mellitus", "Condition", "SNOMED", "Clinical Finding", "73211009", nil, nil},
		"t2dm":           {201826, "Type 2 diabetes mellitus", "Condition", "SNOMED", "Clinical Finding", "44054006", []string{"dm"}, []string{"E119", "E1165", "E11649", "E1169", "E1110", "E1151"}},
		"t1dm":           {omopLocal + 1, "Type 1 diabetes mellitus", "Condition", "SNOMED", "Clinical Finding", "46635009", []string{"dm"}, []string{"E109", "E1010", "E1065"}},
		"dm_kidney":      {192279, "Disorder of kidney due to diabetes mellitus", "Condition", "SNOMED", "Clinical Finding", "127013003", []string{"dm"}, []string{"E1122", "E1121"}},
		"t2dm_neuro":     {37016354, "Neuropathy due to type 2 diabetes mellitus", "Condition", "SNOMED", "Clinical Finding", "368581000119106", []string{"t2dm"}, []string{"E1140", "E1142"}},
		"htn_disorder":   {omopLocal + 2, "Hypertensive disorder", "Condition", "SNOMED", "Clinical Finding", "38341003", nil, nil},
		"htn":            {320128, "Essential hypertension", "Condition", "SNOMED", "Clinical Finding", "59621000", []string{"htn_disorder"}, []string{"I10"}},
		"htn_heart":      {omopLocal + 3, "Hypertensive heart disease", "Condition", "Clinsight", "Clinical Finding", "CS-C3", []string{"htn_disorder"}, []string{"I110", "I119"}},
		"htn_renal":      {omopLocal + 4, "Hypertensive renal disease", "Condition", "Clinsight", "Clinical Finding", "CS-C4", []string{"htn_disorder"}, []string{"I129", "I120", "I130", "I132"}},
		"hf":             {316139, "Heart failure", "Condition", "SNOMED", "Clinical Finding", "84114007", nil, []string{"I509"}},
		"chf":            {omopLocal + 5, "Congestive heart failure", "Condition", "SNOMED", "Clinical Finding", "42343007", []string{"hf"}, []string{"I5020", "I5030"}},
		"chronic_chf":    {4229440, "Chronic congestive heart failure", "Condition", "SNOMED", "Clinical Finding", "88805009", []string{"chf"}, []string{"I5022", "I5032"}},
		"acute_hf":       {omopLocal + 6, "Acute heart failure", "Condition", "Clinsight", "Clinical Finding", "CS-C6", []string{"hf"}, []string{"I5021", "I5031", "I5023", "I5033"}},
		"mi":             {4329847, "Myocardial infarction", "Condition", "SNOMED", "Clinical Finding", "22298006", nil, []string{"I214", "I2109", "I2119", "I213"}},
		"old_mi":         {omopLocal + 7, "Old myocardial infarction", "Condition", "Clinsight", "Clinical Finding", "CS-C7", []string{"mi"}, []string{"I252"}},
		"cad":            {317576, "Coronary arteriosclerosis", "Condition", "SNOMED", "Clinical Finding", "53741008", nil, []string{"I2510"}},
		"af":             {313217, "Atrial fibrillation", "Condition", "SNOMED", "Clinical Finding", "49436004", nil, []string{"I4891", "I480", "I481", "I482"}},
		"ckd":            {omopLocal + 8, "Chronic kidney disease", "Condition", "SNOMED", "Clinical Finding", "709044004", nil, []string{"N189"}},
		"ckd1":           {443614, "Chronic kidney disease stage 1", "Condition", "SNOMED", "Clinical Finding", "431855005", []string{"ckd"}, []string{"N181"}},
		"ckd2":           {443601, "Chronic kidney disease stage 2", "Condition", "SNOMED", "Clinical Finding", "431856006", []string{"ckd"}, []string{"N182"}},
		"ckd3":           {443597, "Chronic kidney disease stage 3", "Condition", "SNOMED", "Clinical Finding", "433144002", []string{"ckd"}, []string{"N183"}},
		"ckd4":           {443612, "Chronic kidney disease stage 4", "Condition", "SNOMED", "Clinical Finding", "431857002", []string{"ckd"}, []string{"N184"}},
		"esrd":           {193782, "End-stage renal disease", "Condition", "SNOMED", "Clinical Finding", "46177005", []string{"ckd"}, []string{"N185", "N186"}},
		"pneumonia":      {255848, "Pneumonia", "Condition", "SNOMED", "Clinical Finding", "233604007", nil, []string{"J189", "J181", "J159", "J690", "J1282"}},
		"sepsis":         {132797, "Sepsis", "Condition", "SNOMED", "Clinical Finding", "91302008", nil, []string{"A419", "A4151", "A4101", "A4102", "R6520"}},
		"septic_shock":   {196236, "Septic shock", "Condition", "SNOMED", "Clinical Finding", "76571007", []string{"sepsis"}, []string{"R6521"}},
		"copd":           {omopLocal + 9, "Chronic obstructive lung disease", "Condition", "SNOMED", "Clinical Finding", "13645005", nil, []string{"J449", "J441", "J440"}},
		"asthma":         {317009, "Asthma", "Condition", "SNOMED", "Clinical Finding", "195967001", nil, []string{"J45909", "J45901"}},
		"anemia":         {439777, "Anemia", "Condition", "SNOMED", "Clinical Finding", "271737000", nil, []string{"D649", "D62", "D631", "D630", "D509", "D6481"}},
		"hld":            {432867, "Hyperlipidemia", "Condition", "SNOMED", "Clinical Finding", "55822004", nil, []string{"E785", "E782"}},
		"hchol":          {omopLocal + 10, "Pure hypercholesterolemia", "Condition", "Clinsight", "Clinical Finding", "CS-C10", []string{"hld"}, []string{"E7800"}},
		"uti":            {81902, "Urinary tract infectious disease", "Condition", "SNOMED", "Clinical Finding", "68566005", nil, []string{"N390"}},
		"cva":            {381316, "Cerebrovascular accident", "Condition", "SNOMED", "Clinical Finding", "230690007", nil, []string{"I639", "I634"}},
		"mdd":            {4152280, "Major depressive disorder", "Condition", "SNOMED", "Clinical Finding", "370143000", nil, []string{"F329", "F339"}},
		"alzheimer":      {378419, "Alzheimer's disease", "Condition", "SNOMED", "Clinical Finding", "26929004", nil, []string{"G309"}},
		"osteoporosis":   {80502, "Osteoporosis", "Condition", "SNOMED", "Clinical Finding", "64859006", nil, []string{"M810"}},
		"gout":           {440674, "Gout", "Condition", "SNOMED", "Clinical Finding", "90560007", nil, []string{"M109"}},
		"ra":             {80809, "Rheumatoid arthritis", "Condition", "SNOMED", "Clinical Finding", "69896004", nil, []string{"M069"}},
		"gerd":           {318800, "Gastroesophageal reflux disease", "Condition", "SNOMED", "Clinical Finding", "235595009", nil, []string{"K219"}},
		"seizure":        {4029498, "Seizure disorder", "Condition", "SNOMED", "Clinical Finding", "128613002", nil, nil},
		"epilepsy":       {380378, "Epilepsy", "Condition", "SNOMED", "Clinical Finding", "84757009", []string{"seizure"}, []string{"G40909"}},
		"breast_ca":      {4112853, "Malignant tumor of breast", "Condition", "SNOMED", "Clinical Finding", "254837009", nil, []string{"C509", "C50911", "C50912", "C50919", "C50921"}},
		"colon_ca":       {4180790, "Malignant tumor of colon", "Condition", "SNOMED", "Clinical Finding", "363406005", nil, []string{"C189", "C187"}},
		"prostate_neo":   {4129902, "Neoplasm of prostate", "Condition", "SNOMED", "Clinical Finding", "126906006", nil, []string{"C61"}},
		"lung_ca":        {omopLocal + 11, "Malignant tumor of lung", "Condition", "Clinsight", "Clinical Finding", "CS-C11", nil, []string{"C349", "C3490", "C3411", "C3412"}},
		"covid":          {37311061, "COVID-19", "Condition", "SNOMED", "Clinical Finding", "840539006", nil, []string{"U071"}},
		"resp_failure":   {319049, "Acute respiratory failure", "Condition", "SNOMED", "Clinical Finding", "65710008", nil, []string{"J9601", "J9600"}},
		"dvt":            {44782746, "Acute deep venous thrombosis", "Condition", "SNOMED", "Clinical Finding", "132281000119108", nil, []string{"I82409", "I82401"}},
		"pe":             {45768439, "Acute pulmonary embolism", "Condition", "SNOMED", "Clinical Finding", "706870000", nil, []string{"I2699"}},
		"alcoholism":     {4218106, "Alcoholism", "Condition", "SNOMED", "Clinical Finding", "7200002", nil, []string{"F1020", "F10239"}},
		"opioid_abuse":   {438130, "Opioid abuse", "Condition", "SNOMED", "Clinical Finding", "5602001", nil, []string{"F1120"}},
		"hip_fracture":   {4230399, "Closed fracture of hip", "Condition", "SNOMED", "Clinical Finding", "359817006", nil, []string{"S72001A", "S72002A"}},
		"back_pain":      {4132891, "Chronic low back pain", "Condition", "SNOMED", "Clinical Finding", "278860009", nil, []string{"M545"}},
		"gallstone":      {196456, "Gallstone", "Condition", "SNOMED", "Clinical Finding", "235919008", nil, []string{"K8020"}},
		"cholecystitis":  {198809, "Acute cholecystitis", "Condition", "SNOMED", "Clinical Finding", "65275009", nil, []string{"K810"}},
		"pressure_ulcer": {135333, "Pressure ulcer", "Condition", "SNOMED", "Clinical Finding", "399912005", nil, []string{"L89159", "L89154"}},
		"fever":          {437663, "Fever", "Condition", "SNOMED", "Clinical Finding", "386661006", nil, []string{"R509"}},
		"obesity":        {omopLocal + 12, "Obesity", "Condition", "SNOMED", "Clinical Finding", "414916001", nil, []string{"E669", "E6601"}},
		"hypothyroid":    {omopLocal + 13, "Hypothyroidism", "Condition", "SNOMED", "Clinical Finding", "40930008", nil, []string{"E039"}},
		"aki":            {omopLocal + 14, "Acute renal failure syndrome", "Condition", "SNOMED", "Clinical Finding", "14669001", nil, []string{"N179", "N170"}},
	}
})

// demoIngredients are the drug ingredients (RxNorm Ingredient concepts
// with their RXCUI) and the demo drugs that contain them; each demo drug
// also gets a clinical drug concept under its ingredient.
var demoIngredients = sync.OnceValue(func() map[string]demoIngredient {
	return map[string]demoIngredient{
		"metformin":           {demoConcept{1503297, "metformin", "Drug", "RxNorm", "Ingredient", "6809", nil, nil}, []drugID{drMetformin}},
		"glipizide":           {demoConcept{omopLocal + 101, "glipizide", "Drug", "RxNorm", "Ingredient", "4821", nil, nil}, []drugID{drGlipizide}},
		"empagliflozin":       {demoConcept{omopLocal + 102, "empagliflozin", "Drug", "RxNorm", "Ingredient", "1545653", nil, nil}, []drugID{drEmpagliflozin}},
		"insulin glargine":    {demoConcept{omopLocal + 103, "insulin glargine", "Drug", "RxNorm", "Ingredient", "274783", nil, nil}, []drugID{drInsulinGlargine}},
		"insulin lispro":      {demoConcept{omopLocal + 104, "insulin lispro", "Drug", "RxNorm", "Ingredient", "86009", nil, nil}, []drugID{drInsulinLispro}},
		"insulin, regular":    {demoConcept{omopLocal + 105, "insulin, regular, human", "Drug", "RxNorm", "Ingredient", "253182", nil, nil}, []drugID{drInsulinDrip}},
		"lisinopril":          {demoConcept{1308216, "lisinopril", "Drug", "RxNorm", "Ingredient", "29046", nil, nil}, []drugID{drLisinopril}},
		"amlodipine":          {demoConcept{omopLocal + 106, "amlodipine", "Drug", "RxNorm", "Ingredient", "17767", nil, nil}, []drugID{drAmlodipine}},
		"losartan":            {demoConcept{omopLocal + 107, "losartan", "Drug", "RxNorm", "Ingredient", "52175", nil, nil}, []drugID{drLosartan}},
		"hydrochlorothiazide": {demoConcept{omopLocal + 108, "hydrochlorothiazide", "Drug", "RxNorm", "Ingredient", "5487", nil, nil}, []drugID{drHydrochlorothiazide}},
		"metoprolol":          {demoConcept{omopLocal + 109, "metoprolol", "Drug", "RxNorm", "Ingredient", "6918", nil, nil}, []drugID{drMetoprololTartrate, drMetoprololSuccinate}},
		"carvedilol":          {demoConcept{omopLocal + 110, "carvedilol", "Drug", "RxNorm", "Ingredient", "20352", nil, nil}, []drugID{drCarvedilol}},
		"furosemide":          {demoConcept{omopLocal + 111, "furosemide", "Drug", "RxNorm", "Ingredient", "4603", nil, nil}, []drugID{drFurosemidePO, drFurosemideIV}},
		"spironolactone":      {demoConcept{omopLocal + 112, "spironolactone", "Drug", "RxNorm", "Ingredient", "9997", nil, nil}, []drugID{drSpironolactone}},
		"atorvastatin":        {demoConcept{omopLocal + 113, "atorvastatin", "Drug", "RxNorm", "Ingredient", "83367", nil, nil}, []drugID{drAtorvastatin, drAtorvastatinHigh}},
		"aspirin":             {demoConcept{1112807, "aspirin", "Drug", "RxNorm", "Ingredient", "1191", nil, nil}, []drugID{drAspirin, drAspirinLoad}},
		"clopidogrel":         {demoConcept{omopLocal + 114, "clopidogrel", "Drug", "RxNorm", "Ingredient", "32968", nil, nil}, []drugID{drClopidogrel}},
		"heparin":             {demoConcept{omopLocal + 115, "heparin", "Drug", "RxNorm", "Ingredient", "5224", nil, nil}, []drugID{drHeparinSC, drHeparinDrip}},
		"enoxaparin":          {demoConcept{omopLocal + 116, "enoxaparin", "Drug", "RxNorm", "Ingredient", "67108", nil, nil}, []drugID{drEnoxaparin}},
		"apixaban":            {demoConcept{omopLocal + 117, "apixaban", "Drug", "RxNorm", "Ingredient", "1364430", nil, nil}, []drugID{drApixaban}},
		"warfarin":            {demoConcept{omopLocal + 118, "warfarin", "Drug", "RxNorm", "Ingredient", "11289", nil, nil}, []drugID{drWarfarin}},
		"vancomycin":          {demoConcept{omopLocal + 119, "vancomycin", "Drug", "RxNorm", "Ingredient", "11124", nil, nil}, []drugID{drVancomycin}},
		"ceftriaxone":         {demoConcept{1777806, "ceftriaxone", "Drug", "RxNorm", "Ingredient", "2193", nil, nil}, []drugID{drCeftriaxone}},
		"cefepime":            {demoConcept{1748975, "cefepime", "Drug", "RxNorm", "Ingredient", "20481", nil, nil}, []drugID{drCefepime}},
		"cefazolin":           {demoConcept{1771162, "cefazolin", "Drug", "RxNorm", "Ingredient", "2180", nil, nil}, []drugID{drCefazolin}},
		"acetaminophen":       {demoConcept{omopLocal + 120, "acetaminophen", "Drug", "RxNorm", "Ingredient", "161", nil, nil}, []drugID{drAcetaminophen}},
		"pantoprazole":        {demoConcept{omopLocal + 121, "pantoprazole", "Drug", "RxNorm", "Ingredient", "40790", nil, nil}, []drugID{drPantoprazole, drPantoprazoleIV}},
		"omeprazole":          {demoConcept{omopLocal + 122, "omeprazole", "Drug", "RxNorm", "Ingredient", "7646", nil, nil}, []drugID{drOmeprazole}},
		"levothyroxine":       {demoConcept{omopLocal + 123, "levothyroxine", "Drug", "RxNorm", "Ingredient", "10582", nil, nil}, []drugID{drLevothyroxine}},
		"sertraline":          {demoConcept{omopLocal + 124, "sertraline", "Drug", "RxNorm", "Ingredient", "36437", nil, nil}, []drugID{drSertraline}},
		"prednisone":          {demoConcept{omopLocal + 125, "prednisone", "Drug", "RxNorm", "Ingredient", "8640", nil, nil}, []drugID{drPrednisone}},
		"albuterol":           {demoConcept{omopLocal + 126, "albuterol", "Drug", "RxNorm", "Ingredient", "435", nil, nil}, []drugID{drAlbuterol}},
		"oxycodone":           {demoConcept{omopLocal + 127, "oxycodone", "Drug", "RxNorm", "Ingredient", "7804", nil, nil}, []drugID{drOxycodone}},
		"gabapentin":          {demoConcept{omopLocal + 128, "gabapentin", "Drug", "RxNorm", "Ingredient", "25480", nil, nil}, []drugID{drGabapentin}},
		"allopurinol":         {demoConcept{omopLocal + 129, "allopurinol", "Drug", "RxNorm", "Ingredient", "519", nil, nil}, []drugID{drAllopurinol}},
	}
})

// demoIngredient is a drug ingredient concept and the demo drugs that
// contain it.
type demoIngredient struct {
	concept demoConcept
	drugs   []drugID
}

// demoLabs maps demo laboratory tests (d_labitems itemid) to LOINC
// measurement concepts.
var demoLabs = sync.OnceValue(func() map[labID]demoConcept {
	return map[labID]demoConcept{
		labHbA1c:         {3004410, "Hemoglobin A1c/Hemoglobin.total in Blood", "Measurement", "LOINC", "Lab Test", "4548-4", nil, nil},
		labGlucose:       {3004501, "Glucose [Mass/volume] in Serum or Plasma", "Measurement", "LOINC", "Lab Test", "2345-7", nil, nil},
		labCreatinine:    {3016723, "Creatinine [Mass/volume] in Serum or Plasma", "Measurement", "LOINC", "Lab Test", "2160-0", nil, nil},
		labHemoglobin:    {3000963, "Hemoglobin [Mass/volume] in Blood", "Measurement", "LOINC", "Lab Test", "718-7", nil, nil},
		labCholesterol:   {3027114, "Cholesterol [Mass/volume] in Serum or Plasma", "Measurement", "LOINC", "Lab Test", "2093-3", nil, nil},
		labHDL:           {3007070, "Cholesterol in HDL [Mass/volume] in Serum or Plasma", "Measurement", "LOINC", "Lab Test", "2085-9", nil, nil},
		labLDL:           {omopLocal + 201, "Cholesterol in LDL [Mass/volume] in Serum or Plasma by calculation", "Measurement", "LOINC", "Lab Test", "13457-7", nil, nil},
		labSodium:        {omopLocal + 202, "Sodium [Moles/volume] in Serum or Plasma", "Measurement", "LOINC", "Lab Test", "2951-2", nil, nil},
		labPotassium:     {omopLocal + 203, "Potassium [Moles/volume] in Serum or Plasma", "Measurement", "LOINC", "Lab Test", "2823-3", nil, nil},
		labUreaNitrogen:  {omopLocal + 204, "Urea nitrogen [Mass/volume] in Serum or Plasma", "Measurement", "LOINC", "Lab Test", "3094-0", nil, nil},
		labTroponinT:     {omopLocal + 205, "Troponin T.cardiac [Mass/volume] in Serum or Plasma", "Measurement", "LOINC", "Lab Test", "6598-7", nil, nil},
		labNTproBNP:      {omopLocal + 206, "Natriuretic peptide.B prohormone N-Terminal [Mass/volume] in Serum or Plasma", "Measurement", "LOINC", "Lab Test", "33762-6", nil, nil},
		labPlatelets:     {omopLocal + 207, "Platelets [#/volume] in Blood", "Measurement", "LOINC", "Lab Test", "777-3", nil, nil},
		labWBC:           {omopLocal + 208, "Leukocytes [#/volume] in Blood", "Measurement", "LOINC", "Lab Test", "6690-2", nil, nil},
		labINR:           {omopLocal + 209, "INR in Platelet poor plasma by Coagulation assay", "Measurement", "LOINC", "Lab Test", "6301-6", nil, nil},
		labLactate:       {omopLocal + 210, "Lactate [Moles/volume] in Blood", "Measurement", "LOINC", "Lab Test", "2524-7", nil, nil},
		labTriglycerides: {omopLocal + 211, "Triglyceride [Mass/volume] in Serum or Plasma", "Measurement", "LOINC", "Lab Test", "2571-8", nil, nil},
	}
})

// Fixed concepts of the demo: gender, race, ethnicity, visit and type
// concepts (OMOP's ids).
var demoFixedConcepts = []demoConcept{
	{8507, "MALE", "Gender", "Gender", "Gender", "M", nil, nil},
	{8532, "FEMALE", "Gender", "Gender", "Gender", "F", nil, nil},
	{8527, "White", "Race", "Race", "Race", "5", nil, nil},
	{8516, "Black or African American", "Race", "Race", "Race", "3", nil, nil},
	{8515, "Asian", "Race", "Race", "Race", "2", nil, nil},
	{38003563, "Hispanic or Latino", "Ethnicity", "Ethnicity", "Ethnicity", "Hispanic", nil, nil},
	{38003564, "Not Hispanic or Latino", "Ethnicity", "Ethnicity", "Ethnicity", "Not Hispanic", nil, nil},
	{9201, "Inpatient Visit", "Visit", "Visit", "Visit", "IP", nil, nil},
	{9203, "Emergency Room Visit", "Visit", "Visit", "Visit", "ER", nil, nil},
	{32817, "EHR", "Type Concept", "Type Concept", "Type Concept", "OMOP4976890", nil, nil},
}

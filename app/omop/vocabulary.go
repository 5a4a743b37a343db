package omop

import (
	"strings"
	"sync"
)

// expansion is what an abbreviation or lay term stands for.
type expansion struct {
	// terms are clinical names to look up, in order of preference.
	terms []string
	// domain is the OMOP domain the term belongs to.
	domain string
}

// abbreviations is Clinsight's domain vocabulary of clinical abbreviations
// (as clinicians write them in questions) and their expansions into the
// names SNOMED CT, RxNorm and LOINC use. It is general medical
// vocabulary, written for Clinsight from standard clinical usage; it is not
// derived from any evaluation set. Keys are lower case; abbreviations of
// one or two letters only match when written in capitals ("MI", not "mi").
var abbreviations = sync.OnceValue(func() map[string]expansion {
	return map[string]expansion{
		// Conditions.
		"t2dm":   {[]string{"type 2 diabetes mellitus"}, "Condition"},
		"t2d":    {[]string{"type 2 diabetes mellitus"}, "Condition"},
		"dm2":    {[]string{"type 2 diabetes mellitus"}, "Condition"},
		"niddm":  {[]string{"type 2 diabetes mellitus"}, "Condition"},
		"t1dm":   {[]string{"type 1 diabetes mellitus"}, "Condition"},
		"t1d":    {[]string{"type 1 diabetes mellitus"}, "Condition"},
		"iddm":   {[]string{"type 1 diabetes mellitus"}, "Condition"},
		"dm":     {[]string{"diabetes mellitus"}, "Condition"},
		"mi":     {[]string{"myocardial infarction"}, "Condition"},
		"ami":    {[]string{"acute myocardial infarction", "myocardial infarction"}, "Condition"},
		"stemi":  {[]string{"acute ST segment elevation myocardial infarction", "myocardial infarction"}, "Condition"},
		"nstemi": {[]string{"acute non-ST segment elevation myocardial infarction", "myocardial infarction"}, "Condition"},
		"htn":    {[]string{"essential hypertension", "hypertensive disorder"}, "Condition"},
		"chf":    {[]string{"congestive heart failure", "heart failure"}, "Condition"},
		"hf":     {[]string{"heart failure"}, "Condition"},
		"cad":    {[]string{"coronary arteriosclerosis", "coronary artery disease"}, "Condition"},
		"chd":    {[]string{"coronary arteriosclerosis", "coronary heart disease"}, "Condition"},
		"copd":   {[]string{"chronic obstructive lung disease"}, "Condition"},
		"afib":   {[]string{"atrial fibrillation"}, "Condition"},
		"af":     {[]string{"atrial fibrillation"}, "Condition"},
		"ckd":    {[]string{"chronic kidney disease"}, "Condition"},
		"esrd":   {[]string{"end-stage renal disease"}, "Condition"},
		"aki":    {[]string{"acute kidney injury", "acute renal failure syndrome"}, "Condition"},
		"uti":    {[]string{"urinary tract infectious disease", "urinary tract infection"}, "Condition"},
		"uri":    {[]string{"acute upper respiratory infection"}, "Condition"},
		"oa":     {[]string{"osteoarthritis"}, "Condition"},
		"ra":     {[]string{"rheumatoid arthritis"}, "Condition"},
		"tbi":    {[]string{"traumatic brain injury"}, "Condition"},
		"cva":    {[]string{"cerebrovascular accident"}, "Condition"},
		"tia":    {[]string{"transient ischemic attack"}, "Condition"},
		"dvt":    {[]string{"deep venous thrombosis"}, "Condition"},
		"pe":     {[]string{"pulmonary embolism"}, "Condition"},
		"gerd":   {[]string{"gastroesophageal reflux disease"}, "Condition"},
		"bph":    {[]string{"benign prostatic hyperplasia"}, "Condition"},
		"osa":    {[]string{"obstructive sleep apnea syndrome"}, "Condition"},
		"adhd":   {[]string{"attention deficit hyperactivity disorder", "attention deficit disorder"}, "Condition"},
		"add":    {[]string{"attention deficit disorder"}, "Condition"},
		"ptsd":   {[]string{"posttraumatic stress disorder"}, "Condition"},
		"mdd":    {[]string{"major depressive disorder"}, "Condition"},
		"hld":    {[]string{"hyperlipidemia"}, "Condition"},
		"ards":   {[]string{"acute respiratory distress syndrome"}, "Condition"},
		"sle":    {[]string{"systemic lupus erythematosus", "lupus erythematosus"}, "Condition"},
		"cf":     {[]string{"cystic fibrosis"}, "Condition"},
		"acl":    {[]string{"injury of anterior cruciate ligament"}, "Condition"},
		"covid":  {[]string{"COVID-19"}, "Condition"},
		// Measurements.
		"bmi":   {[]string{"body mass index"}, "Measurement"},
		"hba1c": {[]string{"hemoglobin A1c/hemoglobin.total in blood", "hemoglobin A1c"}, "Measurement"},
		"a1c":   {[]string{"hemoglobin A1c/hemoglobin.total in blood", "hemoglobin A1c"}, "Measurement"},
		"bp":    {[]string{"blood pressure"}, "Measurement"},
		"sbp":   {[]string{"systolic blood pressure"}, "Measurement"},
		"dbp":   {[]string{"diastolic blood pressure"}, "Measurement"},
		"ldl":   {[]string{"cholesterol in LDL"}, "Measurement"},
		"hdl":   {[]string{"cholesterol in HDL"}, "Measurement"},
		"egfr":  {[]string{"glomerular filtration rate"}, "Measurement"},
		"gfr":   {[]string{"glomerular filtration rate"}, "Measurement"},
		"bun":   {[]string{"urea nitrogen"}, "Measurement"},
		"wbc":   {[]string{"leukocytes"}, "Measurement"},
		"hgb":   {[]string{"hemoglobin"}, "Measurement"},
		// Drugs.
		"hctz":  {[]string{"hydrochlorothiazide"}, "Drug"},
		"apap":  {[]string{"acetaminophen"}, "Drug"},
		"asa":   {[]string{"aspirin"}, "Drug"},
		"ppi":   {[]string{"omeprazole", "pantoprazole"}, "Drug"},
		"nsaid": {[]string{"ibuprofen", "naproxen"}, "Drug"},
		"ocp":   {[]string{"ethinyl estradiol"}, "Drug"},
	}
})

// layTerms maps everyday words and phrases for diseases, tests and drugs
// to the clinical names the vocabularies use. Like abbreviations, it is
// general vocabulary written for Clinsight. Keys are lower case phrases.
var layTerms = sync.OnceValue(func() map[string]expansion {
	return map[string]expansion{
		"sugar diabetes":            {[]string{"diabetes mellitus"}, "Condition"},
		"adult onset diabetes":      {[]string{"type 2 diabetes mellitus"}, "Condition"},
		"juvenile diabetes":         {[]string{"type 1 diabetes mellitus"}, "Condition"},
		"high blood pressure":       {[]string{"essential hypertension", "hypertensive disorder"}, "Condition"},
		"heart attack":              {[]string{"myocardial infarction"}, "Condition"},
		"heart failure":             {[]string{"heart failure"}, "Condition"},
		"stroke":                    {[]string{"cerebrovascular accident"}, "Condition"},
		"mini stroke":               {[]string{"transient ischemic attack"}, "Condition"},
		"high cholesterol":          {[]string{"hypercholesterolemia", "hyperlipidemia"}, "Condition"},
		"coronary artery disease":   {[]string{"coronary arteriosclerosis"}, "Condition"},
		"hardening of the arteries": {[]string{"arteriosclerosis"}, "Condition"},
		"sore throat":               {[]string{"sore throat symptom", "pharyngitis"}, "Condition"},
		"strep throat":              {[]string{"streptococcal sore throat"}, "Condition"},
		"ear infection":             {[]string{"otitis media"}, "Condition"},
		"sinus infection":           {[]string{"sinusitis"}, "Condition"},
		"bladder infection":         {[]string{"cystitis"}, "Condition"},
		"kidney infection":          {[]string{"pyelonephritis"}, "Condition"},
		"water infection":           {[]string{"urinary tract infectious disease"}, "Condition"},
		"chest cold":                {[]string{"acute bronchitis"}, "Condition"},
		"broken hip":                {[]string{"fracture of hip", "closed fracture of hip"}, "Condition"},
		"broken rib":                {[]string{"fracture of rib"}, "Condition"},
		"broken arm":                {[]string{"fracture of forearm"}, "Condition"},
		"broken ankle":              {[]string{"fracture of ankle"}, "Condition"},
		"broken collarbone":         {[]string{"fracture of clavicle"}, "Condition"},
		"collarbone":                {[]string{"clavicle"}, "Condition"},
		"heartburn":                 {[]string{"gastroesophageal reflux disease"}, "Condition"},
		"acid reflux":               {[]string{"gastroesophageal reflux disease"}, "Condition"},
		"hay fever":                 {[]string{"seasonal allergic rhinitis"}, "Condition"},
		"eczema":                    {[]string{"atopic dermatitis"}, "Condition"},
		"low iron":                  {[]string{"iron deficiency anemia", "anemia"}, "Condition"},
		"anaemia":                   {[]string{"anemia"}, "Condition"},
		"kidney failure":            {[]string{"end-stage renal disease", "chronic kidney disease"}, "Condition"},
		"kidney disease":            {[]string{"chronic kidney disease", "disorder of kidney"}, "Condition"},
		"lung cancer":               {[]string{"non-small cell lung cancer", "small cell carcinoma of lung", "malignant tumor of lung"}, "Condition"},
		"breast cancer":             {[]string{"malignant tumor of breast"}, "Condition"},
		"colon cancer":              {[]string{"malignant tumor of colon"}, "Condition"},
		"prostate cancer":           {[]string{"neoplasm of prostate", "malignant tumor of prostate"}, "Condition"},
		"blood poisoning":           {[]string{"sepsis"}, "Condition"},
		"fits":                      {[]string{"seizure disorder", "epilepsy"}, "Condition"},
		"seizures":                  {[]string{"seizure disorder"}, "Condition"},
		"depression":                {[]string{"major depressive disorder", "depressive disorder"}, "Condition"},
		"anxiety":                   {[]string{"anxiety disorder", "severe anxiety (panic)"}, "Condition"},
		"panic attacks":             {[]string{"severe anxiety (panic)"}, "Condition"},
		"dementia":                  {[]string{"dementia", "alzheimer's disease"}, "Condition"},
		"alzheimers":                {[]string{"alzheimer's disease"}, "Condition"},
		"back pain":                 {[]string{"chronic low back pain", "low back pain"}, "Condition"},
		"neck pain":                 {[]string{"chronic neck pain", "neck pain"}, "Condition"},
		"drug overdose":             {[]string{"drug overdose"}, "Condition"},
		"alcoholism":                {[]string{"alcoholism"}, "Condition"},
		"flu":                       {[]string{"influenza"}, "Condition"},
		"coronavirus":               {[]string{"COVID-19"}, "Condition"},
		"blood sugar":               {[]string{"glucose"}, "Measurement"},
		"weight":                    {[]string{"body weight"}, "Measurement"},
		"height":                    {[]string{"body height"}, "Measurement"},
		"paracetamol":               {[]string{"acetaminophen"}, "Drug"},
		"tylenol":                   {[]string{"acetaminophen"}, "Drug"},
		"water pill":                {[]string{"hydrochlorothiazide", "furosemide"}, "Drug"},
		"inhaler":                   {[]string{"albuterol", "fluticasone"}, "Drug"},
		"the pill":                  {[]string{"ethinyl estradiol"}, "Drug"},
		"birth control":             {[]string{"ethinyl estradiol", "norethindrone"}, "Drug"},
		"blood thinner":             {[]string{"warfarin", "clopidogrel"}, "Drug"},
		"statin":                    {[]string{"simvastatin", "atorvastatin"}, "Drug"},
		"statins":                   {[]string{"simvastatin", "atorvastatin"}, "Drug"},
		"insulin":                   {[]string{"insulin"}, "Drug"},
	}
})

// expandAbbreviation returns the expansion of a word written as in the
// question, honouring the capitals rule for short abbreviations.
func expandAbbreviation(word string) (expansion, bool) {
	lower := strings.ToLower(word)
	e, ok := abbreviations()[lower]
	if !ok {
		return expansion{}, false
	}
	if len(lower) <= 2 && word != strings.ToUpper(word) {
		return expansion{}, false
	}
	return e, true
}

package trials

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
)

// Synthetic trials and patients, for the demo workspace and the scale
// benchmark. Never real records: names of conditions and interventions are
// real vocabulary, everything else is generated.

// synthCondition is a condition with the interventions trials of it test
// and the findings that describe a patient who has it.
type synthCondition struct {
	name          string
	synonyms      []string
	interventions []string
	findings      []string
	sex           Sex
	minAge        float64
	maxAge        float64
}

// synthConditions is the condition vocabulary.
var synthConditions = []synthCondition{
	{"Type 2 Diabetes Mellitus", []string{"type 2 diabetes", "T2DM"}, []string{"Metformin", "Insulin Glargine", "Semaglutide", "Empagliflozin", "Sitagliptin", "Lifestyle Intervention"}, []string{"elevated HbA1c", "polyuria", "obesity"}, SexAll, 18, 0},
	{"Type 1 Diabetes Mellitus", []string{"type 1 diabetes"}, []string{"Insulin Pump", "Closed-Loop Insulin Delivery", "Teplizumab"}, []string{"diabetic ketoacidosis", "hypoglycemia"}, SexAll, 6, 0},
	{"Essential Hypertension", []string{"hypertension", "high blood pressure"}, []string{"Amlodipine", "Lisinopril", "Losartan", "Hydrochlorothiazide", "Renal Denervation"}, []string{"elevated blood pressure", "headache"}, SexAll, 18, 80},
	{"Heart Failure With Reduced Ejection Fraction", []string{"heart failure", "HFrEF"}, []string{"Sacubitril/Valsartan", "Dapagliflozin", "Carvedilol", "Cardiac Resynchronization Therapy"}, []string{"dyspnea on exertion", "leg edema", "reduced ejection fraction"}, SexAll, 18, 0},
	{"Atrial Fibrillation", []string{"AF", "atrial fibrillation"}, []string{"Apixaban", "Rivaroxaban", "Catheter Ablation", "Amiodarone"}, []string{"palpitations", "irregular pulse"}, SexAll, 18, 0},
	{"Coronary Artery Disease", []string{"coronary heart disease", "CAD"}, []string{"Atorvastatin", "Ticagrelor", "Percutaneous Coronary Intervention", "Cardiac Rehabilitation"}, []string{"exertional chest pain", "angina"}, SexAll, 30, 0},
	{"Acute Myocardial Infarction", []string{"myocardial infarction", "heart attack"}, []string{"Primary PCI", "Clopidogrel", "Colchicine"}, []string{"chest pain radiating to the left arm", "ST elevation", "elevated troponin"}, SexAll, 18, 0},
	{"Ischemic Stroke", []string{"stroke", "cerebral infarction"}, []string{"Alteplase", "Mechanical Thrombectomy", "Constraint-Induced Movement Therapy"}, []string{"sudden hemiparesis", "aphasia"}, SexAll, 18, 0},
	{"Asthma", []string{"bronchial asthma"}, []string{"Budesonide/Formoterol", "Mepolizumab", "Montelukast", "Asthma Education"}, []string{"wheezing", "nocturnal cough"}, SexAll, 6, 0},
	{"Chronic Obstructive Pulmonary Disease", []string{"COPD", "emphysema"}, []string{"Tiotropium", "Pulmonary Rehabilitation", "Roflumilast"}, []string{"chronic productive cough", "smoking history", "dyspnea"}, SexAll, 40, 0},
	{"Community-Acquired Pneumonia", []string{"pneumonia"}, []string{"Ceftriaxone", "Azithromycin", "Corticosteroids"}, []string{"fever", "productive cough", "lobar consolidation"}, SexAll, 18, 0},
	{"COVID-19", []string{"SARS-CoV-2 infection"}, []string{"Nirmatrelvir/Ritonavir", "Remdesivir", "Dexamethasone"}, []string{"fever", "loss of smell", "positive SARS-CoV-2 PCR"}, SexAll, 12, 0},
	{"Influenza", []string{"flu"}, []string{"Oseltamivir", "Baloxavir", "Influenza Vaccine"}, []string{"fever", "myalgia"}, SexAll, 0, 0},
	{"Tuberculosis", []string{"pulmonary tuberculosis"}, []string{"Rifapentine", "Bedaquiline", "Isoniazid"}, []string{"night sweats", "weight loss", "hemoptysis"}, SexAll, 0, 0},
	{"HIV Infections", []string{"HIV"}, []string{"Dolutegravir", "Cabotegravir", "Pre-Exposure Prophylaxis"}, []string{"positive HIV serology", "low CD4 count"}, SexAll, 18, 0},
	{"Chronic Hepatitis C", []string{"hepatitis C", "HCV"}, []string{"Sofosbuvir/Velpatasvir", "Glecaprevir/Pibrentasvir"}, []string{"elevated transaminases", "positive HCV RNA"}, SexAll, 18, 0},
	{"Chronic Kidney Disease", []string{"CKD", "renal insufficiency"}, []string{"Finerenone", "Dapagliflozin", "Low-Protein Diet"}, []string{"elevated creatinine", "proteinuria"}, SexAll, 18, 0},
	{"Acute Kidney Injury", []string{"AKI"}, []string{"Balanced Crystalloids", "Renal Replacement Therapy"}, []string{"oliguria", "rising creatinine"}, SexAll, 18, 0},
	{"Obesity", []string{"morbid obesity"}, []string{"Tirzepatide", "Sleeve Gastrectomy", "Behavioral Weight Loss Program"}, []string{"BMI over 35", "weight gain"}, SexAll, 18, 65},
	{"Osteoporosis", []string{"low bone density"}, []string{"Denosumab", "Zoledronic Acid", "Resistance Training"}, []string{"vertebral fracture", "low bone mineral density"}, SexFemale, 50, 0},
	{"Rheumatoid Arthritis", []string{"RA"}, []string{"Methotrexate", "Adalimumab", "Tofacitinib"}, []string{"symmetric joint swelling", "morning stiffness"}, SexAll, 18, 0},
	{"Systemic Lupus Erythematosus", []string{"lupus", "SLE"}, []string{"Hydroxychloroquine", "Belimumab", "Anifrolumab"}, []string{"malar rash", "arthralgia", "positive ANA"}, SexAll, 16, 0},
	{"Knee Osteoarthritis", []string{"osteoarthritis of the knee"}, []string{"Intra-Articular Hyaluronic Acid", "Total Knee Arthroplasty", "Physical Therapy"}, []string{"knee pain", "crepitus"}, SexAll, 40, 0},
	{"Chronic Low Back Pain", []string{"low back pain"}, []string{"Spinal Manipulation", "Duloxetine", "Yoga"}, []string{"back pain for more than three months"}, SexAll, 18, 0},
	{"Migraine", []string{"migraine headache"}, []string{"Erenumab", "Sumatriptan", "Botulinum Toxin Type A"}, []string{"recurrent unilateral headache", "photophobia"}, SexAll, 12, 0},
	{"Epilepsy", []string{"seizure disorder"}, []string{"Levetiracetam", "Cannabidiol", "Vagus Nerve Stimulation"}, []string{"recurrent seizures"}, SexAll, 2, 0},
	{"Parkinson Disease", []string{"Parkinson's disease"}, []string{"Levodopa/Carbidopa", "Deep Brain Stimulation", "Exercise Training"}, []string{"resting tremor", "bradykinesia"}, SexAll, 40, 0},
	{"Alzheimer Disease", []string{"Alzheimer's disease", "dementia"}, []string{"Lecanemab", "Donepezil", "Cognitive Stimulation"}, []string{"progressive memory loss", "disorientation"}, SexAll, 50, 90},
	{"Multiple Sclerosis", []string{"relapsing multiple sclerosis"}, []string{"Ocrelizumab", "Natalizumab", "Fingolimod"}, []string{"optic neuritis", "numbness", "white matter lesions"}, SexAll, 18, 55},
	{"Major Depressive Disorder", []string{"depression"}, []string{"Escitalopram", "Cognitive Behavioral Therapy", "Esketamine", "Transcranial Magnetic Stimulation"}, []string{"depressed mood", "anhedonia", "insomnia"}, SexAll, 18, 65},
	{"Generalized Anxiety Disorder", []string{"anxiety"}, []string{"Sertraline", "Mindfulness-Based Stress Reduction"}, []string{"excessive worry", "restlessness"}, SexAll, 18, 65},
	{"Schizophrenia", []string{"psychosis"}, []string{"Aripiprazole", "Clozapine", "Paliperidone Palmitate"}, []string{"auditory hallucinations", "delusions"}, SexAll, 18, 65},
	{"Bipolar Disorder", []string{"manic depression"}, []string{"Lithium", "Quetiapine", "Lamotrigine"}, []string{"manic episode", "mood swings"}, SexAll, 18, 65},
	{"Alcohol Use Disorder", []string{"alcohol dependence"}, []string{"Naltrexone", "Acamprosate", "Motivational Interviewing"}, []string{"heavy drinking", "withdrawal symptoms"}, SexAll, 18, 0},
	{"Attention Deficit Hyperactivity Disorder", []string{"ADHD"}, []string{"Methylphenidate", "Parent Training"}, []string{"inattention", "hyperactivity"}, SexAll, 6, 17},
	{"Autism Spectrum Disorder", []string{"autism"}, []string{"Applied Behavior Analysis", "Oxytocin"}, []string{"impaired social communication", "repetitive behaviors"}, SexAll, 2, 17},
	{"Breast Cancer", []string{"breast carcinoma"}, []string{"Trastuzumab", "Palbociclib", "Letrozole", "Breast-Conserving Surgery"}, []string{"breast mass", "HER2-positive tumor"}, SexFemale, 18, 0},
	{"Prostate Cancer", []string{"prostate adenocarcinoma"}, []string{"Enzalutamide", "Abiraterone", "Radical Prostatectomy", "Stereotactic Body Radiotherapy"}, []string{"elevated PSA", "Gleason score 7"}, SexMale, 40, 0},
	{"Non-Small Cell Lung Cancer", []string{"NSCLC", "lung adenocarcinoma"}, []string{"Pembrolizumab", "Osimertinib", "Carboplatin", "Lobectomy"}, []string{"lung mass", "EGFR mutation"}, SexAll, 18, 0},
	{"Colorectal Cancer", []string{"colon cancer"}, []string{"FOLFOX", "Bevacizumab", "Laparoscopic Colectomy"}, []string{"rectal bleeding", "iron deficiency anemia"}, SexAll, 18, 0},
	{"Pancreatic Cancer", []string{"pancreatic adenocarcinoma"}, []string{"FOLFIRINOX", "Gemcitabine", "Nab-Paclitaxel"}, []string{"painless jaundice", "weight loss"}, SexAll, 18, 0},
	{"Ovarian Cancer", []string{"ovarian carcinoma"}, []string{"Olaparib", "Carboplatin", "Cytoreductive Surgery"}, []string{"pelvic mass", "elevated CA-125"}, SexFemale, 18, 0},
	{"Cervical Cancer", []string{"cervical carcinoma"}, []string{"Cisplatin", "Brachytherapy", "HPV Vaccine"}, []string{"abnormal Pap smear", "postcoital bleeding"}, SexFemale, 18, 0},
	{"Melanoma", []string{"cutaneous melanoma"}, []string{"Nivolumab", "Ipilimumab", "Dabrafenib"}, []string{"changing pigmented lesion", "BRAF mutation"}, SexAll, 18, 0},
	{"Acute Myeloid Leukemia", []string{"AML"}, []string{"Venetoclax", "Azacitidine", "Allogeneic Stem Cell Transplantation"}, []string{"pancytopenia", "blasts in peripheral blood"}, SexAll, 18, 0},
	{"Acute Lymphoblastic Leukemia", []string{"ALL", "childhood leukemia"}, []string{"Blinatumomab", "CAR T-Cell Therapy"}, []string{"bone pain", "lymphadenopathy"}, SexAll, 1, 21},
	{"Diffuse Large B-Cell Lymphoma", []string{"lymphoma"}, []string{"R-CHOP", "Polatuzumab Vedotin"}, []string{"lymphadenopathy", "B symptoms"}, SexAll, 18, 0},
	{"Multiple Myeloma", []string{"myeloma"}, []string{"Daratumumab", "Lenalidomide", "Bortezomib"}, []string{"bone lesions", "monoclonal protein"}, SexAll, 18, 0},
	{"Psoriasis", []string{"plaque psoriasis"}, []string{"Secukinumab", "Apremilast", "Phototherapy"}, []string{"scaly plaques"}, SexAll, 18, 0},
	{"Atopic Dermatitis", []string{"eczema"}, []string{"Dupilumab", "Tacrolimus Ointment"}, []string{"pruritic rash", "dry skin"}, SexAll, 2, 0},
	{"Crohn Disease", []string{"Crohn's disease"}, []string{"Ustekinumab", "Infliximab", "Exclusive Enteral Nutrition"}, []string{"chronic diarrhea", "abdominal pain", "perianal fistula"}, SexAll, 6, 0},
	{"Ulcerative Colitis", []string{"colitis"}, []string{"Mesalamine", "Vedolizumab", "Fecal Microbiota Transplantation"}, []string{"bloody diarrhea", "tenesmus"}, SexAll, 18, 0},
	{"Gastroesophageal Reflux Disease", []string{"GERD", "reflux"}, []string{"Omeprazole", "Fundoplication"}, []string{"heartburn", "regurgitation"}, SexAll, 18, 0},
	{"Nonalcoholic Steatohepatitis", []string{"NASH", "fatty liver"}, []string{"Resmetirom", "Vitamin E", "Weight Loss"}, []string{"elevated ALT", "hepatic steatosis"}, SexAll, 18, 75},
	{"Sepsis", []string{"septic shock"}, []string{"Vasopressin", "Hydrocortisone", "Early Goal-Directed Therapy"}, []string{"fever", "hypotension", "elevated lactate"}, SexAll, 18, 0},
	{"Malaria", []string{"Plasmodium falciparum malaria"}, []string{"Artemether/Lumefantrine", "Artesunate", "RTS,S Vaccine"}, []string{"cyclic fever", "positive blood smear"}, SexAll, 0, 0},
	{"Iron Deficiency Anemia", []string{"anemia"}, []string{"Ferric Carboxymaltose", "Oral Iron"}, []string{"fatigue", "low ferritin", "pallor"}, SexAll, 0, 0},
	{"Sickle Cell Disease", []string{"sickle cell anemia"}, []string{"Hydroxyurea", "Voxelotor", "Gene Therapy"}, []string{"vaso-occlusive crises", "hemolytic anemia"}, SexAll, 2, 0},
	{"Cystic Fibrosis", []string{"CF"}, []string{"Elexacaftor/Tezacaftor/Ivacaftor", "Hypertonic Saline"}, []string{"recurrent lung infections", "elevated sweat chloride"}, SexAll, 2, 0},
	{"Obstructive Sleep Apnea", []string{"sleep apnea", "OSA"}, []string{"Continuous Positive Airway Pressure", "Hypoglossal Nerve Stimulation", "Adenotonsillectomy"}, []string{"snoring", "daytime sleepiness", "witnessed apneas"}, SexAll, 2, 0},
	{"Insomnia", []string{"chronic insomnia"}, []string{"Cognitive Behavioral Therapy for Insomnia", "Suvorexant"}, []string{"difficulty falling asleep"}, SexAll, 18, 0},
	{"Glaucoma", []string{"open-angle glaucoma"}, []string{"Latanoprost", "Selective Laser Trabeculoplasty"}, []string{"elevated intraocular pressure", "visual field loss"}, SexAll, 40, 0},
	{"Neovascular Age-Related Macular Degeneration", []string{"macular degeneration", "AMD"}, []string{"Aflibercept", "Faricimab"}, []string{"central vision loss"}, SexAll, 50, 0},
	{"Hypothyroidism", []string{"underactive thyroid"}, []string{"Levothyroxine", "Selenium"}, []string{"fatigue", "cold intolerance", "elevated TSH"}, SexAll, 18, 0},
	{"Graves Disease", []string{"hyperthyroidism"}, []string{"Methimazole", "Radioiodine Therapy"}, []string{"weight loss", "tremor", "exophthalmos"}, SexAll, 18, 0},
	{"Polycystic Ovary Syndrome", []string{"PCOS"}, []string{"Letrozole", "Metformin", "Oral Contraceptives"}, []string{"irregular menses", "hirsutism"}, SexFemale, 18, 45},
	{"Endometriosis", []string{"endometriosis-associated pain"}, []string{"Elagolix", "Laparoscopic Excision"}, []string{"dysmenorrhea", "pelvic pain"}, SexFemale, 18, 50},
	{"Uterine Fibroids", []string{"leiomyoma"}, []string{"Relugolix", "Uterine Artery Embolization", "Myomectomy"}, []string{"heavy menstrual bleeding"}, SexFemale, 18, 55},
	{"Preeclampsia", []string{"pregnancy-induced hypertension"}, []string{"Aspirin", "Labetalol", "Magnesium Sulfate"}, []string{"hypertension in pregnancy", "proteinuria"}, SexFemale, 16, 45},
	{"Benign Prostatic Hyperplasia", []string{"BPH"}, []string{"Tamsulosin", "Transurethral Resection of the Prostate"}, []string{"nocturia", "weak urinary stream"}, SexMale, 45, 0},
	{"Bronchiolitis", []string{"RSV bronchiolitis"}, []string{"Nirsevimab", "Hypertonic Saline Nebulization", "High-Flow Nasal Cannula"}, []string{"wheezing", "feeding difficulty"}, SexAll, 0, 2},
	{"Acute Otitis Media", []string{"ear infection"}, []string{"Amoxicillin", "Watchful Waiting"}, []string{"ear pain", "bulging tympanic membrane"}, SexAll, 0.5, 12},
	{"Kawasaki Disease", []string{"mucocutaneous lymph node syndrome"}, []string{"Intravenous Immunoglobulin", "Anakinra"}, []string{"prolonged fever", "conjunctival injection", "strawberry tongue"}, SexAll, 0, 10},
	{"Hip Fracture", []string{"femoral neck fracture"}, []string{"Hemiarthroplasty", "Early Mobilization", "Nerve Block"}, []string{"fall", "shortened externally rotated leg"}, SexAll, 60, 0},
	{"Traumatic Brain Injury", []string{"TBI", "head injury"}, []string{"Tranexamic Acid", "Therapeutic Hypothermia"}, []string{"loss of consciousness", "intracranial hemorrhage"}, SexAll, 0, 0},
	{"Chronic Subdural Hematoma", []string{"subdural hematoma"}, []string{"Middle Meningeal Artery Embolization", "Burr Hole Drainage"}, []string{"progressive headache", "confusion"}, SexAll, 18, 0},
	{"Deep Vein Thrombosis", []string{"DVT", "venous thromboembolism"}, []string{"Apixaban", "Catheter-Directed Thrombolysis", "Compression Stockings"}, []string{"unilateral leg swelling", "calf pain"}, SexAll, 18, 0},
	{"Pulmonary Embolism", []string{"PE"}, []string{"Rivaroxaban", "Systemic Thrombolysis"}, []string{"pleuritic chest pain", "tachycardia", "hypoxemia"}, SexAll, 18, 0},
	{"Peripheral Artery Disease", []string{"peripheral arterial disease", "claudication"}, []string{"Cilostazol", "Supervised Exercise Therapy", "Endovascular Revascularization"}, []string{"calf pain when walking", "diminished pedal pulses"}, SexAll, 40, 0},
	{"Smoking Cessation", []string{"tobacco use disorder"}, []string{"Varenicline", "Nicotine Replacement Therapy", "Counseling"}, []string{"daily smoking"}, SexAll, 18, 0},
	{"Chronic Migraine in Adolescents", []string{"pediatric migraine"}, []string{"Topiramate", "Amitriptyline", "Biofeedback"}, []string{"frequent headaches"}, SexAll, 12, 17},
}

// designWords vary titles.
var (
	synthDesigns  = []string{"A Randomized Trial of", "Efficacy and Safety of", "A Phase 2 Study of", "A Phase 3 Study of", "Long-Term Follow-Up of", "Pilot Study of", "Comparative Effectiveness of", "Dose-Finding Study of"}
	synthStatuses = []string{"Recruiting", "Completed", "Completed", "Active, not recruiting", "Not yet recruiting", "Terminated", "Withdrawn", "Unknown status"}
	synthPhases   = []string{"Phase 1", "Phase 2", "Phase 3", "Phase 4", "Phase 2/Phase 3", "N/A"}
	synthCommon   = []string{"Signed informed consent", "Able to comply with study procedures", "Women of childbearing potential must use effective contraception"}
	synthExcl     = []string{"Pregnancy or breastfeeding", "Participation in another interventional trial within 30 days", "Known hypersensitivity to the study drug", "Active malignancy within the past 5 years", "Severe hepatic impairment", "eGFR below 30 mL/min/1.73 m2", "Uncontrolled hypertension", "Active infection requiring systemic antibiotics", "History of alcohol or drug abuse", "Current treatment with immunosuppressants"}
)

// SyntheticTrial returns the synthetic trial number i of the seeded
// generator: a condition (sometimes two), its interventions, a title,
// summary, age and sex limits, and criteria. The same seed and i always
// give the same trial.
func SyntheticTrial(seed uint64, i int) Trial {
	r := rand.New(rand.NewPCG(seed, uint64(i)))
	c := synthConditions[r.IntN(len(synthConditions))]
	t := Trial{ID: fmt.Sprintf("NCT9%07d", i), Sex: c.sex, MinAge: c.minAge, MaxAge: c.maxAge}
	t.Conditions = []string{c.name}
	var second *synthCondition
	if r.IntN(4) == 0 {
		s := synthConditions[r.IntN(len(synthConditions))]
		if s.name != c.name {
			second = &s
			t.Conditions = append(t.Conditions, s.name)
		}
	}
	nIv := 1 + r.IntN(min(3, len(c.interventions)))
	perm := r.Perm(len(c.interventions))
	for _, j := range perm[:nIv] {
		t.Interventions = append(t.Interventions, c.interventions[j])
	}
	if r.IntN(3) == 0 {
		t.Interventions = append(t.Interventions, "Placebo")
	}
	t.Title = fmt.Sprintf("%s %s in %s", synthDesigns[r.IntN(len(synthDesigns))], t.Interventions[0], pick(r, append([]string{c.name}, c.synonyms...)))
	t.Keywords = append(t.Keywords, c.synonyms...)
	t.MeSH = []string{c.name}
	t.Summary = fmt.Sprintf("This study evaluates %s in participants with %s. The primary outcome is the change in %s over %d weeks; secondary outcomes include quality of life, safety and tolerability.",
		strings.ToLower(strings.Join(t.Interventions, " versus ")), strings.ToLower(c.name), pick(r, c.findings), 4*(1+r.IntN(13)))
	if r.IntN(2) == 0 {
		t.Description = fmt.Sprintf("%s is common and burdensome. Participants will be randomized to %s. Visits occur every %d weeks.",
			c.name, strings.ToLower(t.Interventions[0]), 2+r.IntN(6))
	}
	t.Status = synthStatuses[r.IntN(len(synthStatuses))]
	t.Phase = synthPhases[r.IntN(len(synthPhases))]
	for _, p := range []string{"Phase 2", "Phase 3"} { // the title's phase wins (the draw above keeps the stream)
		if strings.Contains(t.Title, "A "+p+" Study") {
			t.Phase = p
		}
	}
	age := "Any age"
	switch {
	case c.minAge > 0 && c.maxAge > 0:
		age = fmt.Sprintf("Aged %s to %s years", fmtYears(c.minAge), fmtYears(c.maxAge))
	case c.minAge > 0:
		age = fmt.Sprintf("Aged %s years or older", fmtYears(c.minAge))
	case c.maxAge > 0:
		age = fmt.Sprintf("Aged up to %s years", fmtYears(c.maxAge))
	}
	t.Inclusion = []string{fmt.Sprintf("Diagnosis of %s", strings.ToLower(c.name)), age}
	if r.IntN(2) == 0 {
		t.Inclusion = append(t.Inclusion, "Documented "+pick(r, c.findings))
	}
	t.Inclusion = append(t.Inclusion, synthCommon[r.IntN(2)])
	if second != nil {
		t.Inclusion = append(t.Inclusion, "Concomitant "+strings.ToLower(second.name))
	}
	for _, j := range r.Perm(len(synthExcl))[:2+r.IntN(3)] {
		t.Exclusion = append(t.Exclusion, synthExcl[j])
	}
	addLabCriteria(&t, c.name, seed, i)
	t.Source = "synthetic"
	return t
}

// synthLabCriteria are lab-value criteria of the conditions whose trials
// state them (the pre-screening checks them against structured values):
// inclusion criteria, then exclusion criteria, each drawn with even odds.
var synthLabCriteria = sync.OnceValue(func() map[string][2][]string {
	return map[string][2][]string{
		"Type 2 Diabetes Mellitus":                     {{"HbA1c between 7 and 10%", "eGFR ≥ 45 mL/min/1.73 m2"}, {"Serum creatinine > 1.5 mg/dL"}},
		"Type 1 Diabetes Mellitus":                     {{"HbA1c between 7.5 and 11%"}, nil},
		"Chronic Kidney Disease":                       {{"eGFR between 25 and 75 mL/min/1.73 m2"}, {"Serum potassium > 5.5 mmol/L"}},
		"Heart Failure With Reduced Ejection Fraction": {{"Creatinine < 2.5 mg/dL"}, {"Serum potassium > 5.0 mmol/L"}},
		"Atrial Fibrillation":                          {{"Creatinine < 1.5 mg/dL"}, {"Hemoglobin < 9 g/dL"}},
		"Coronary Artery Disease":                      {{"LDL cholesterol ≥ 70 mg/dL"}, {"Serum creatinine ≥ 221 µmol/L"}},
		"Essential Hypertension":                       {{"Creatinine < 1.5 mg/dL"}, {"Serum potassium > 5.5 mmol/L"}},
		"Acute Myocardial Infarction":                  {nil, {"eGFR below 30 mL/min/1.73 m2"}},
		"Ischemic Stroke":                              {{"Platelet count ≥ 100 x 10^9/L"}, {"INR > 1.7"}},
		"Iron Deficiency Anemia":                       {{"Hemoglobin between 8 and 11 g/dL"}, nil},
		"Sepsis":                                       {{"Lactate ≥ 2 mmol/L"}, nil},
		"Chronic Obstructive Pulmonary Disease":        {nil, {"Hemoglobin < 10 g/dL"}},
		"Community-Acquired Pneumonia":                 {nil, {"Creatinine clearance below 30 mL/min"}},
		"Hypothyroidism":                               {{"TSH > 4.5 mIU/L"}, nil},
		"Non-Small Cell Lung Cancer":                   {{"Platelet count ≥ 100 x 10^9/L", "Total bilirubin ≤ 1.5 x ULN"}, nil},
		"Colorectal Cancer":                            {{"Platelet count ≥ 100 x 10^9/L", "ALT ≤ 3 x ULN"}, nil},
		"Acute Myeloid Leukemia":                       {{"Total bilirubin ≤ 1.5 x ULN"}, {"Creatinine > 2 mg/dL"}},
		"Nonalcoholic Steatohepatitis":                 {{"ALT > 1 x ULN"}, nil},
	}
})

// addLabCriteria adds the lab-value criteria of a trial's condition, drawn
// from a stream of their own (the other fields of the trials are as they
// were without them).
func addLabCriteria(t *Trial, condition string, seed uint64, i int) {
	lab, ok := synthLabCriteria()[condition]
	if !ok {
		return
	}
	r := rand.New(rand.NewPCG(seed^0x5bd1e995, uint64(i)))
	for _, c := range lab[0] {
		if r.IntN(2) == 0 {
			t.Inclusion = append(t.Inclusion, c)
		}
	}
	for _, c := range lab[1] {
		if r.IntN(2) == 0 {
			t.Exclusion = append(t.Exclusion, c)
		}
	}
}

func pick(r *rand.Rand, xs []string) string { return xs[r.IntN(len(xs))] }

// SyntheticPatient is a generated patient description with the condition
// it was generated from.
type SyntheticPatient struct {
	// ID identifies the patient ("P0001").
	ID string `json:"id"`
	// Description is the free text.
	Description string `json:"description"`
	// Age and Sex are the patient's.
	Age int `json:"age"`
	Sex Sex `json:"sex"`
	// Condition is the main condition the description was built around.
	Condition string `json:"condition"`
}

// SyntheticPatientN returns the synthetic patient number i.
func SyntheticPatientN(seed uint64, i int) SyntheticPatient {
	r := rand.New(rand.NewPCG(seed^0x9e3779b97f4a7c15, uint64(i)))
	c := synthConditions[r.IntN(len(synthConditions))]
	lo, hi := c.minAge, c.maxAge
	if lo < 1 {
		lo = 1
	}
	if hi == 0 {
		hi = 85
	}
	age := int(lo) + r.IntN(max(1, int(hi-lo)+1))
	sex := c.sex
	if sex == SexAll {
		sex = []Sex{SexFemale, SexMale}[r.IntN(2)]
	}
	noun := map[Sex][2]string{SexFemale: {"woman", "girl"}, SexMale: {"man", "boy"}}[sex][0]
	if age < 18 {
		noun = map[Sex][2]string{SexFemale: {"woman", "girl"}, SexMale: {"man", "boy"}}[sex][1]
	}
	pron := map[Sex]string{SexFemale: "She", SexMale: "He"}[sex]
	other := synthConditions[r.IntN(len(synthConditions))]
	denied := synthConditions[r.IntN(len(synthConditions))]
	var b strings.Builder
	fmt.Fprintf(&b, "A %d-year-old %s presents with %s and %s.", age, noun, pick(r, c.findings), pick(r, c.findings))
	fmt.Fprintf(&b, " %s was diagnosed with %s %d years ago.", pron, pick(r, append([]string{strings.ToLower(c.name)}, c.synonyms...)), 1+r.IntN(8))
	if other.name != c.name && other.sex != oppositeSex(sex) {
		fmt.Fprintf(&b, " Past medical history includes %s.", strings.ToLower(other.name))
	}
	if denied.name != c.name && denied.name != other.name {
		fmt.Fprintf(&b, " %s denies any history of %s.", pron, strings.ToLower(denied.name))
	}
	fmt.Fprintf(&b, " Current medication: %s.", strings.ToLower(pick(r, c.interventions)))
	return SyntheticPatient{ID: fmt.Sprintf("P%04d", i+1), Description: b.String(), Age: age, Sex: sex, Condition: c.name}
}

func oppositeSex(s Sex) Sex {
	switch s {
	case SexFemale:
		return SexMale
	case SexMale:
		return SexFemale
	}
	return SexUnknown
}

// WriteSyntheticJSONL writes n synthetic trials as ClinicalTrials.gov API
// v2 studies, one JSON object per line (the format [Import] reads).
func WriteSyntheticJSONL(ctx context.Context, w io.Writer, n int, seed uint64) error {
	bw := bufio.NewWriterSize(w, 1<<20)
	enc := json.NewEncoder(bw)
	for i := range n {
		if i%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := enc.Encode(v2Study(SyntheticTrial(seed, i))); err != nil {
			return fmt.Errorf("write synthetic trials: %w", err)
		}
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write synthetic trials: %w", err)
	}
	return nil
}

// v2Study renders a trial as an API v2 study object.
func v2Study(t Trial) map[string]any {
	crit := "Inclusion Criteria:\n\n* " + strings.Join(t.Inclusion, "\n* ") + "\n\nExclusion Criteria:\n\n* " + strings.Join(t.Exclusion, "\n* ")
	ivs := make([]map[string]string, len(t.Interventions))
	for i, iv := range t.Interventions {
		ivs[i] = map[string]string{"type": "DRUG", "name": iv}
	}
	ages := func(y float64) string {
		if y == 0 {
			return ""
		}
		if y < 1 {
			return fmt.Sprintf("%d Months", int(y*12+0.5))
		}
		return fmt.Sprintf("%s Years", fmtYears(y))
	}
	sex := strings.ToUpper(string(t.Sex))
	meshes := make([]map[string]string, len(t.MeSH))
	for i, m := range t.MeSH {
		meshes[i] = map[string]string{"term": m}
	}
	return map[string]any{
		"protocolSection": map[string]any{
			"identificationModule":    map[string]any{"nctId": t.ID, "briefTitle": t.Title},
			"statusModule":            map[string]any{"overallStatus": strings.ToUpper(strings.NewReplacer(", ", "_", " ", "_").Replace(t.Status))},
			"descriptionModule":       map[string]any{"briefSummary": t.Summary, "detailedDescription": t.Description},
			"conditionsModule":        map[string]any{"conditions": t.Conditions, "keywords": t.Keywords},
			"designModule":            map[string]any{"phases": v2Phases(t.Phase)},
			"armsInterventionsModule": map[string]any{"interventions": ivs},
			"eligibilityModule":       map[string]any{"eligibilityCriteria": crit, "sex": sex, "minimumAge": ages(t.MinAge), "maximumAge": ages(t.MaxAge)},
		},
		"derivedSection": map[string]any{"conditionBrowseModule": map[string]any{"meshes": meshes}},
	}
}

// v2Phases renders "Phase 2/Phase 3" as ["PHASE2", "PHASE3"] and "N/A" as
// ["NA"].
func v2Phases(p string) []string {
	if p == "N/A" || p == "" {
		return []string{"NA"}
	}
	var out []string
	for _, part := range strings.Split(p, "/") {
		out = append(out, strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(part), " ", "")))
	}
	return out
}

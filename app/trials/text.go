package trials

import (
	"strings"
	"sync"
	"unicode"

	"github.com/clinsight/clinsight/internal/lazyre"
	"github.com/clinsight/clinsight/internal/textsearch"
)

// narrativeStopwords are the trial pipeline's domain stop words: the words
// of case descriptions that say how the story is told, not what the patient
// has ("presents", "year", "history", "examination"): they would match
// every trial.
var narrativeStopwords = textsearch.NewWordSet(`patient patients presents present presented presenting presentation comes came
come brought bring referred refers seen sees visit visits visited evaluated evaluation evaluate assessed
year years yr yrs yo old month months week weeks day days hour hours minute minutes ago today yesterday
tonight morning evening night nights time times since prior previous previously recent recently currently
current later earlier first second third last next initially ever
history past medical complains complaining complaint complaints reports reported report reporting states
stated notes noted note found finding findings shows showed shown reveals revealed reveal demonstrates
demonstrated describes described exam examination examined physical remarkable unremarkable notable
significant significantly normal abnormal otherwise mild moderate severe slight slightly marked markedly
started began begin begins onset developed develop developing became become becomes
woman women man men male female boy girl child lady gentleman mother father wife husband daughter son
parents parent family
emergency department room er ed clinic office hospital admitted admission hospitalized physician doctor
pediatrician nurse
one two three four five six seven eight nine ten several many multiple few
well also still however although though including include includes included due following approximately
about around nearly almost less greater increased decreased
left right bilateral
undergoes underwent undergoing taking takes took given receives received
complaint chief known`)

// isStop reports whether a lower-cased word carries no clinical concept:
// an English stop word (textsearch.IsStopWord), a narrative word, a single
// character, or a number or measurement.
func isStop(w string) bool {
	if textsearch.IsStopWord(w) || narrativeStopwords.Has(w) {
		return true
	}
	if len(w) < 2 {
		return true
	}
	// Pure numbers and measurements ("120", "3rd", "10mg") are left to
	// the eligibility step.
	digits := 0
	for _, r := range w {
		if unicode.IsDigit(r) {
			digits++
		}
	}
	return digits > 0 && (digits == len(w) || digits*2 >= len(w) && !abbreviationWithDigits.Has(w))
}

// abbreviationWithDigits are concepts spelled with digits (domain
// vocabulary).
var abbreviationWithDigits = textsearch.NewWordSet(`t1dm t2dm hba1c covid19 h1n1 brca1 brca2 her2 ca125 il6 t4 t3 b12 cd4 cd8 p53 h2 sars2`)

// abbreviations maps clinical abbreviations to their expansion: the trial
// pipeline's domain vocabulary. Two-letter
// ones are only expanded when written in capitals ("MI", "PE"), to leave
// ordinary words alone.
var abbreviations = sync.OnceValue(func() map[string]string {
	return map[string]string{
		"htn": "hypertension", "dm": "diabetes mellitus", "t2dm": "type 2 diabetes mellitus",
		"t1dm": "type 1 diabetes mellitus", "iddm": "type 1 diabetes mellitus", "niddm": "type 2 diabetes mellitus",
		"cad": "coronary artery disease", "chd": "coronary heart disease", "chf": "congestive heart failure",
		"hf": "heart failure", "copd": "chronic obstructive pulmonary disease", "mi": "myocardial infarction",
		"ami": "acute myocardial infarction", "stemi": "st elevation myocardial infarction",
		"nstemi": "non st elevation myocardial infarction", "acs": "acute coronary syndrome",
		"afib": "atrial fibrillation", "af": "atrial fibrillation", "cva": "stroke", "tia": "transient ischemic attack",
		"ckd": "chronic kidney disease", "esrd": "end stage renal disease", "aki": "acute kidney injury",
		"arf": "acute renal failure", "uti": "urinary tract infection", "uri": "upper respiratory tract infection",
		"gerd": "gastroesophageal reflux disease", "ibd": "inflammatory bowel disease", "ibs": "irritable bowel syndrome",
		"ra": "rheumatoid arthritis", "sle": "systemic lupus erythematosus", "ms": "multiple sclerosis",
		"hiv": "human immunodeficiency virus", "aids": "acquired immunodeficiency syndrome", "hcv": "hepatitis c",
		"hbv": "hepatitis b", "tb": "tuberculosis", "pe": "pulmonary embolism", "dvt": "deep vein thrombosis",
		"vte": "venous thromboembolism", "osa": "obstructive sleep apnea", "bph": "benign prostatic hyperplasia",
		"adhd": "attention deficit hyperactivity disorder", "ptsd": "post traumatic stress disorder",
		"ocd": "obsessive compulsive disorder", "mdd": "major depressive disorder", "gad": "generalized anxiety disorder",
		"sob": "shortness of breath", "doe": "dyspnea on exertion", "cp": "chest pain", "loc": "loss of consciousness",
		"ekg": "electrocardiogram", "ecg": "electrocardiogram", "cxr": "chest x-ray", "mri": "magnetic resonance imaging",
		"ards": "acute respiratory distress syndrome", "nsclc": "non small cell lung cancer",
		"sclc": "small cell lung cancer", "hcc": "hepatocellular carcinoma", "aml": "acute myeloid leukemia",
		"cll": "chronic lymphocytic leukemia", "cml": "chronic myeloid leukemia", "nhl": "non hodgkin lymphoma",
		"pcos": "polycystic ovary syndrome", "cabg": "coronary artery bypass graft",
		"pci": "percutaneous coronary intervention", "nsaid": "nonsteroidal anti inflammatory drug",
		"nsaids": "nonsteroidal anti inflammatory drugs", "ssri": "selective serotonin reuptake inhibitor",
		"ppi": "proton pump inhibitor", "ugib": "upper gastrointestinal bleeding", "gib": "gastrointestinal bleeding",
		"pad": "peripheral artery disease", "pvd": "peripheral vascular disease", "aaa": "abdominal aortic aneurysm",
		"cvid": "common variable immunodeficiency", "fap": "familial adenomatous polyposis",
		"hpv": "human papillomavirus", "rsv": "respiratory syncytial virus", "cmv": "cytomegalovirus",
		"ebv": "epstein barr virus", "hsv": "herpes simplex virus", "mrsa": "methicillin resistant staphylococcus aureus",
		"tsh": "thyroid stimulating hormone", "psa": "prostate specific antigen", "hba1c": "glycated hemoglobin",
		"crp": "c reactive protein", "esr": "erythrocyte sedimentation rate", "bmi": "body mass index",
		"lvef": "left ventricular ejection fraction", "hfref": "heart failure with reduced ejection fraction",
		"hfpef": "heart failure with preserved ejection fraction", "svt": "supraventricular tachycardia",
		"ptx": "pneumothorax", "sah": "subarachnoid hemorrhage", "ich": "intracerebral hemorrhage",
		"tbi": "traumatic brain injury", "sci": "spinal cord injury", "oa": "osteoarthritis", "dka": "diabetic ketoacidosis",
		"cf": "cystic fibrosis", "als": "amyotrophic lateral sclerosis", "pd": "parkinson disease",
		"ad": "alzheimer disease", "bpd": "bipolar disorder", "sids": "sudden infant death syndrome",
		"nafld": "nonalcoholic fatty liver disease", "nash": "nonalcoholic steatohepatitis",
		"itp": "immune thrombocytopenia", "ttp": "thrombotic thrombocytopenic purpura", "dic": "disseminated intravascular coagulation",
		"gbs": "guillain barre syndrome", "cfs": "chronic fatigue syndrome", "pid": "pelvic inflammatory disease",
		"std": "sexually transmitted disease", "sti": "sexually transmitted infection",
	}
})

// clauseSplitRE splits a sentence into clauses where negation scope ends.
var clauseSplitRE = lazyre.New(`(?i)[.;:!?]|\bbut\b|\bhowever\b|\bexcept\b|\balthough\b|\bwhich\b|\bwho\b|\bthat\b|\bapart from\b`)

// sentenceSplitRE ends sentences.
var sentenceSplitRE = lazyre.New(`[.!?]+(?:\s+|$)|\n+`)

// negationRE finds negation cues; the words after a cue, to the end of
// the clause, are negated. "family history of" moves the concepts to a
// relative: they are not the patient's either.
var negationRE = lazyre.New(`(?i)\b(?:denies|denied|deny|denying|no|not|without|negative for|never|absence of|absent|free of|rules? out|ruled out|no history of|no evidence of|no signs? of|unremarkable for|family history of|non-?smoker|nonsmoking)\b`)

// sentences splits text into sentences.
func sentences(text string) []string {
	var out []string
	prev := 0
	for _, loc := range sentenceSplitRE().FindAllStringIndex(text, -1) {
		if s := strings.TrimSpace(text[prev:loc[1]]); s != "" {
			out = append(out, s)
		}
		prev = loc[1]
	}
	if s := strings.TrimSpace(text[prev:]); s != "" {
		out = append(out, s)
	}
	return out
}

// clause is part of a sentence with its negation status.
type clause struct {
	text    string
	negated bool
}

// clauses splits a sentence at clause boundaries and splits each clause at
// its first negation cue: the part before is affirmed, the part after
// negated ("She denies smoking" → "She" affirmed, "smoking" negated).
func clauses(sentence string) []clause {
	var out []clause
	prev := 0
	emit := func(s string) {
		if strings.TrimSpace(s) == "" {
			return
		}
		if loc := negationRE().FindStringIndex(s); loc != nil {
			out = append(out, clause{s[:loc[0]], false}, clause{s[loc[1]:], true})
			return
		}
		out = append(out, clause{s, false})
	}
	for _, loc := range clauseSplitRE().FindAllStringIndex(sentence, -1) {
		emit(sentence[prev:loc[0]])
		prev = loc[1]
	}
	emit(sentence[prev:])
	return out
}

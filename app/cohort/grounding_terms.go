package cohort

import (
	"slices"
	"strings"
	"sync"
)

// groundTerms maps abbreviations, brand names and lay terms of general
// clinical English to one canonical spelling, so that a literal and a
// stored value that differ only by them are recognised as the same (both
// sides are expanded). It is general vocabulary — common pharmacy and
// charting abbreviations, brand → generic drug names, lay → clinical
// terms — written from clinical usage, not from the values or questions of
// any evaluation set. Keys and values are lower-case words.
var groundTerms = sync.OnceValue(func() map[string]string {
	return map[string]string{
		// Dose forms and routes.
		"tab": "tablet", "tabs": "tablet", "tablets": "tablet", "cap": "capsule", "caps": "capsule", "capsules": "capsule",
		"inj": "injection", "soln": "solution", "sol": "solution", "susp": "suspension", "syr": "syringe",
		"oint": "ointment", "crm": "cream", "supp": "suppository", "neb": "nebulizer", "nebs": "nebulizer",
		"ivpb": "iv piggyback", "intravenous": "iv", "oral": "po", "by mouth": "po", "subcutaneous": "sc", "subq": "sc",
		"sq": "sc", "intramuscular": "im", "sublingual": "sl", "topical": "tp", "transdermal": "td",
		"ec": "enteric coated", "er": "extended release", "xl": "extended release", "sr": "extended release",
		"dr": "delayed release",
		// Chemistry.
		"hcl": "hydrochloride", "chl": "chloride", "kcl": "potassium chloride", "nacl": "sodium chloride",
		"nahco3": "sodium bicarbonate", "bicarb": "bicarbonate", "mgso4": "magnesium sulfate", "mg sulfate": "magnesium sulfate",
		"caco3": "calcium carbonate", "k": "potassium", "na": "sodium", "ca": "calcium", "mg2": "magnesium", "d5w": "dextrose",
		"ns": "normal saline", "saline": "normal saline", "asa": "aspirin",
		// Brand and common names → generic.
		"tylenol": "acetaminophen", "paracetamol": "acetaminophen", "apap": "acetaminophen",
		"advil": "ibuprofen", "motrin": "ibuprofen", "lasix": "furosemide", "coumadin": "warfarin",
		"zofran": "ondansetron", "protonix": "pantoprazole", "prilosec": "omeprazole", "nexium": "esomeprazole",
		"lipitor": "atorvastatin", "zocor": "simvastatin", "crestor": "rosuvastatin", "plavix": "clopidogrel",
		"eliquis": "apixaban", "xarelto": "rivaroxaban", "lovenox": "enoxaparin", "synthroid": "levothyroxine",
		"norvasc": "amlodipine", "lopressor": "metoprolol", "toprol": "metoprolol", "glucophage": "metformin",
		"neurontin": "gabapentin", "ativan": "lorazepam", "valium": "diazepam", "xanax": "alprazolam",
		"haldol": "haloperidol", "seroquel": "quetiapine", "zyprexa": "olanzapine", "ambien": "zolpidem",
		"colace": "docusate", "senokot": "senna", "miralax": "polyethylene glycol", "dilaudid": "hydromorphone",
		"percocet": "oxycodone acetaminophen", "vicodin": "hydrocodone acetaminophen", "ultram": "tramadol",
		"keppra": "levetiracetam", "dilantin": "phenytoin", "flagyl": "metronidazole", "cipro": "ciprofloxacin",
		"levaquin": "levofloxacin", "zosyn": "piperacillin tazobactam", "vanco": "vancomycin", "rocephin": "ceftriaxone",
		"keflex": "cephalexin", "augmentin": "amoxicillin clavulanate", "bactrim": "sulfamethoxazole trimethoprim",
		"zithromax": "azithromycin", "prednisone": "prednisone", "solumedrol": "methylprednisolone",
		"decadron": "dexamethasone", "benadryl": "diphenhydramine", "pepcid": "famotidine", "reglan": "metoclopramide",
		"narcan": "naloxone", "heparin sodium": "heparin", "insulin regular": "regular insulin", "humalog": "insulin lispro",
		"lantus": "insulin glargine", "novolog": "insulin aspart", "digoxin": "digoxin", "lanoxin": "digoxin",
		"cardizem": "diltiazem", "flomax": "tamsulosin", "aldactone": "spironolactone", "zestril": "lisinopril",
		"prinivil": "lisinopril", "vasotec": "enalapril", "cozaar": "losartan", "flonase": "fluticasone",
		"albuterol": "albuterol", "ventolin": "albuterol", "proventil": "albuterol", "salbutamol": "albuterol",
		"atrovent": "ipratropium", "duoneb": "ipratropium albuterol", "epinephrine": "epinephrine", "adrenaline": "epinephrine",
		"noradrenaline": "norepinephrine", "levophed": "norepinephrine", "vitamin b12": "cyanocobalamin",
		"vitamin c": "ascorbic acid", "vitamin d": "cholecalciferol", "folate": "folic acid",
		// Lay terms → clinical terms.
		"heart attack": "myocardial infarction", "high blood pressure": "hypertension", "low blood pressure": "hypotension",
		"high cholesterol": "hyperlipidemia", "high blood sugar": "hyperglycemia", "low blood sugar": "hypoglycemia",
		"sugar": "glucose", "blood sugar": "glucose", "stroke": "cerebral infarction", "kidney": "renal",
		"kidney failure": "renal failure", "heart failure": "heart failure", "irregular heartbeat": "arrhythmia",
		"blood clot": "thrombosis", "clot": "thrombosis", "blood poisoning": "sepsis", "lung": "pulmonary",
		"belly": "abdominal", "stomach": "gastric", "liver": "hepatic", "bleeding": "hemorrhage", "bleed": "hemorrhage",
		"low potassium": "hypokalemia", "high potassium": "hyperkalemia", "low sodium": "hyponatremia",
		"high sodium": "hypernatremia", "anemia": "anemia", "low blood count": "anemia", "fainting": "syncope",
		"shortness of breath": "dyspnea", "chest pain": "chest pain", "fever": "fever", "obesity": "obesity",
		"overweight": "obesity", "depression": "depressive disorder", "sleep apnea": "sleep apnea", "heartburn": "esophageal reflux",
		"acid reflux": "esophageal reflux", "reflux": "esophageal reflux", "gerd": "esophageal reflux",
		"bladder infection": "urinary tract infection", "uti": "urinary tract infection", "flu": "influenza",
		"blood thinner": "anticoagulant", "water pill": "diuretic", "painkiller": "analgesic",
		// Clinical abbreviations.
		"mi": "myocardial infarction", "htn": "hypertension", "dm": "diabetes mellitus", "chf": "congestive heart failure",
		"afib": "atrial fibrillation", "a fib": "atrial fibrillation", "copd": "chronic obstructive pulmonary disease",
		"ckd": "chronic kidney disease", "aki": "acute kidney failure", "arf": "acute kidney failure", "cad": "coronary atherosclerosis",
		"dvt": "deep vein thrombosis", "pe": "pulmonary embolism", "cva": "cerebral infarction", "tia": "transient ischemic attack",
		"hld": "hyperlipidemia", "osa": "obstructive sleep apnea", "esrd": "end stage renal disease",
		"wbc": "white blood cells", "rbc": "red blood cells", "hgb": "hemoglobin", "hct": "hematocrit", "plt": "platelet count",
		"platelets": "platelet count", "bun": "urea nitrogen", "cr": "creatinine", "inr": "inr pt", "ptt": "ptt",
		"bp": "blood pressure", "hr": "heart rate", "rr": "respiratory rate", "spo2": "o2 saturation", "temp": "temperature",
		"icu": "intensive care unit", "er room": "emergency department", "ed": "emergency department", "emergency room": "emergency department",
	}
})

// groundPhrases is groundTerms split into word sequences, by first word,
// longest first, for expandTerms (built on first use).
var groundPhrases = sync.OnceValue(func() map[string][][2][]string {
	out := map[string][][2][]string{}
	for k, v := range groundTerms() {
		ks := strings.Fields(k)
		out[ks[0]] = append(out[ks[0]], [2][]string{ks, strings.Fields(v)})
	}
	for _, list := range out {
		// Longest key first, then alphabetical, so expansion is deterministic.
		slices.SortFunc(list, func(a, b [2][]string) int {
			if len(a[0]) != len(b[0]) {
				return len(b[0]) - len(a[0])
			}
			return strings.Compare(strings.Join(a[0], " "), strings.Join(b[0], " "))
		})
	}
	return out
})

// expandTerms replaces the terms of groundTerms in a word sequence (longest
// first) and returns the plural-stripped words.
func expandTerms(words []string) []string {
	out := make([]string, 0, len(words))
	for i := 0; i < len(words); {
		matched := false
		for _, ph := range groundPhrases()[words[i]] {
			n := len(ph[0])
			if i+n > len(words) || !slices.Equal(words[i:i+n], ph[0]) {
				continue
			}
			for _, w := range ph[1] {
				out = append(out, stem(w))
			}
			i += n
			matched = true
			break
		}
		if !matched {
			out = append(out, stem(words[i]))
			i++
		}
	}
	return out
}

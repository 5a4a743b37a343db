package demo

import (
	"encoding/csv"
	"os"
	"testing"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// idcQuestion is one Text2Cohort prompt with an SQLite query answering it on
// dicom_all. positive marks queries returning one count that must be > 0.
type idcQuestion struct {
	prompt   string
	sql      string
	positive bool
}

// ageYears extracts the number of years of a DICOM age string.
const ageYears = "CAST(substr(PatientAge, 1, 3) AS INTEGER)"

// idcQuestions answers the 50 prompts of the Text2Cohort paper
// (BioIntelligence-Lab/text2cohort, data/T2C_UM2ii_Text-Query.csv). The SQL
// is written for SQLite and corrected where the paper's model output was
// wrong (e.g. prompt 12, or file_size for instance_size).
var idcQuestions = []idcQuestion{
	{"How many collections are hosted on IDC", "SELECT COUNT(DISTINCT collection_id) FROM dicom_all", true},
	{"List all the collections", "SELECT DISTINCT collection_id FROM dicom_all", false},
	{"How many body parts are present across all the collections on IDC", "SELECT COUNT(DISTINCT BodyPartExamined) FROM dicom_all", true},
	{"List all the body parts", "SELECT DISTINCT BodyPartExamined FROM dicom_all", false},
	{"How many modalities are present across all datasets on IDC", "SELECT COUNT(DISTINCT Modality) FROM dicom_all", true},
	{"List all the modalities", "SELECT DISTINCT Modality FROM dicom_all", false},
	{"How many different MRI sequences are present on IDC", "SELECT COUNT(DISTINCT SequenceName) FROM dicom_all WHERE Modality = 'MR'", true},
	{"List all the MRI sequences", "SELECT DISTINCT SeriesDescription, SequenceName FROM dicom_all WHERE Modality = 'MR'", false},
	{"How many different body parts and modalities are hosted on IDC", "SELECT COUNT(DISTINCT BodyPartExamined) * COUNT(DISTINCT Modality) FROM dicom_all", true},
	{"How many images are hosted on IDC", "SELECT COUNT(*) FROM dicom_all", true},
	{"How many patients are on IDC", "SELECT COUNT(DISTINCT PatientID) FROM dicom_all", true},
	{"How many collections have atleast 500 patients", "SELECT COUNT(*) FROM (SELECT collection_id FROM dicom_all GROUP BY collection_id HAVING COUNT(DISTINCT PatientID) >= 500)", true},
	{"List all collection with atleast 500 patients", "SELECT collection_id, COUNT(DISTINCT PatientID) AS n FROM dicom_all GROUP BY collection_id HAVING n >= 500", false},
	{"List all the collections with atleast 100000 images", "SELECT collection_id, COUNT(*) FROM dicom_all GROUP BY collection_id HAVING COUNT(*) >= 100000", false},
	{"What are different MRI scanners used for datasets on IDC", "SELECT DISTINCT Manufacturer, ManufacturerModelName FROM dicom_all WHERE Modality = 'MR'", false},
	{"How many collections on IDC have brain data", "SELECT COUNT(DISTINCT collection_id) FROM dicom_all WHERE BodyPartExamined IN ('BRAIN', 'HEAD')", true},
	{"Which IDC collections have brain images", "SELECT DISTINCT collection_id FROM dicom_all WHERE BodyPartExamined = 'BRAIN'", false},
	{"How many collections have lung CT images hosted on IDC", "SELECT COUNT(DISTINCT collection_id) FROM dicom_all WHERE Modality = 'CT' AND LOWER(BodyPartExamined) LIKE '%lung%'", true},
	{"List the collections with lung CT", "SELECT DISTINCT collection_id FROM dicom_all WHERE Modality = 'CT' AND (BodyPartExamined IN ('LUNG', 'CHEST') OR collection_cancerType = 'Lung Cancer')", false},
	{"List the collections with both PET and CT", "SELECT collection_id FROM dicom_all WHERE Modality IN ('CT', 'PT') GROUP BY collection_id HAVING COUNT(DISTINCT Modality) = 2", false},
	{"What is the download size of each collection in GB", "SELECT collection_id, ROUND(SUM(instance_size) / 1e9, 2) FROM dicom_all GROUP BY collection_id", false},
	{"For each collection on IDC, list the number of images", "SELECT collection_id, COUNT(*) FROM dicom_all GROUP BY collection_id", false},
	{"For each collection on IDC, list the number of patients", "SELECT collection_id, COUNT(DISTINCT PatientID) FROM dicom_all GROUP BY collection_id", false},
	{"For each collection on IDC, list all the body parts and modalities available", "SELECT DISTINCT collection_id, BodyPartExamined, Modality FROM dicom_all ORDER BY 1, 2, 3", false},
	{"Count the number of modalities for each collection on IDC", "SELECT collection_id, COUNT(DISTINCT Modality) FROM dicom_all GROUP BY collection_id", false},
	{"For each collection on IDC, count the body parts and modalities", "SELECT collection_id, COUNT(DISTINCT BodyPartExamined), COUNT(DISTINCT Modality) FROM dicom_all GROUP BY collection_id", false},
	{"For each collection on IDC, count the body parts, modalities and series descriptions", "SELECT collection_id, COUNT(DISTINCT BodyPartExamined), COUNT(DISTINCT Modality), COUNT(DISTINCT SeriesDescription) FROM dicom_all GROUP BY collection_id", false},
	{"For each collection on IDC, list the body parts, modalities and series descriptions", "SELECT DISTINCT collection_id, BodyPartExamined, Modality, SeriesDescription FROM dicom_all ORDER BY 1", false},
	{"For each collection hosted on IDC, what is the proportion of male and female patients?", `SELECT collection_id, ROUND(AVG(PatientSex = 'M'), 2), ROUND(AVG(PatientSex = 'F'), 2)
		FROM (SELECT DISTINCT collection_id, PatientID, PatientSex FROM dicom_all) GROUP BY collection_id`, false},
	{"How many male brain MRI images are hosted on IDC", "SELECT COUNT(*) FROM dicom_all WHERE Modality = 'MR' AND BodyPartExamined = 'BRAIN' AND PatientSex = 'M'", true},
	{"Give me patient id of all male brain MRI images hosted on IDC", "SELECT DISTINCT PatientID FROM dicom_all WHERE Modality = 'MR' AND BodyPartExamined = 'BRAIN' AND PatientSex = 'M'", false},
	{"I only want brain MRI DWI sequences", "SELECT * FROM dicom_all WHERE Modality = 'MR' AND BodyPartExamined = 'BRAIN' AND LOWER(SeriesDescription) LIKE '%dwi%'", false},
	{"How many male brain MRIs are hosted on IDC where the patient is older than 25 and acquired after 2005?", `SELECT COUNT(DISTINCT SeriesInstanceUID) FROM dicom_all
		WHERE Modality = 'MR' AND BodyPartExamined = 'BRAIN' AND PatientSex = 'M' AND PatientAge LIKE '%Y' AND ` + ageYears + ` > 25 AND StudyDate >= '2006-01-01'`, true},
	{"Can you give me the patient id and study date for all pediatric studies hosted on IDC?", `SELECT DISTINCT PatientID, StudyDate FROM dicom_all
		WHERE PatientAge LIKE '%M' OR (PatientAge LIKE '%Y' AND ` + ageYears + ` < 18)`, false},
	{"How many images hosted on IDC have a transfer syntax uid of explicit VR little endian and explicit VR big endian?", `SELECT TransferSyntaxUID, COUNT(*) FROM dicom_all
		WHERE TransferSyntaxUID IN ('1.2.840.10008.1.2.1', '1.2.840.10008.1.2.2') GROUP BY 1`, false},
	{"How many images hosted on IDC where sourced from institutions in Maryland?", "SELECT COUNT(*) FROM dicom_all WHERE InstitutionAddress LIKE '%, MD,%' OR InstitutionAddress LIKE '%Maryland%'", true},
	{"What collections are hosted on IDC that focus on glioblastoma?", "SELECT DISTINCT collection_id FROM dicom_all WHERE collection_cancerType LIKE '%glioblastoma%'", false},
	{"I want images in the nsclc_radiomics collection", "SELECT * FROM dicom_all WHERE collection_id = 'nsclc_radiomics'", false},
	{"I want all seg images in the nsclc_radiomics collection", "SELECT * FROM dicom_all WHERE Modality = 'SEG' AND collection_id = 'nsclc_radiomics'", false},
	{"Download all brain MRI data on IDC", "SELECT * FROM dicom_all WHERE Modality = 'MR' AND BodyPartExamined = 'BRAIN'", false},
	{"I want to download images in the IDC upenn_gbm collection", "SELECT * FROM dicom_all WHERE collection_id = 'upenn_gbm'", false},
	{"How many patients, images, modalities, body parts, sequences, and different scanners in the IDC upenn_gbm collection", `SELECT COUNT(DISTINCT PatientID) * COUNT(*) * COUNT(DISTINCT Modality)
		* COUNT(DISTINCT BodyPartExamined) * COUNT(DISTINCT SequenceName) * COUNT(DISTINCT StationName) FROM dicom_all WHERE collection_id = 'upenn_gbm'`, true},
	{"For the IDC upenn_gbm collection, list all modalities, body parts, sequences, and different scanners", "SELECT DISTINCT Modality, BodyPartExamined, SeriesDescription, ManufacturerModelName FROM dicom_all WHERE collection_id = 'upenn_gbm'", false},
	{"For the upenn_gbm collection, how many male and female patients", "SELECT PatientSex, COUNT(DISTINCT PatientID) FROM dicom_all WHERE collection_id = 'upenn_gbm' GROUP BY PatientSex", false},
	{"For the upenn_gbm collection, how many teenagers", "SELECT COUNT(DISTINCT PatientID) FROM dicom_all WHERE collection_id = 'upenn_gbm' AND PatientAge LIKE '%Y' AND " + ageYears + " BETWEEN 13 AND 19", true},
	{"For the upenn_gbm collection, how many patients under the age of 25 years, between 25 and 50, and greater than 50 years", `SELECT CASE WHEN ` + ageYears + ` < 25 THEN 'under_25'
		WHEN ` + ageYears + ` <= 50 THEN '25_to_50' ELSE 'over_50' END AS age_group, COUNT(DISTINCT PatientID)
		FROM dicom_all WHERE collection_id = 'upenn_gbm' GROUP BY age_group`, false},
	{"For the upenn_gbm collection, download only male patient data for patients between 25 and 50 years of age", "SELECT * FROM dicom_all WHERE collection_id = 'upenn_gbm' AND PatientSex = 'M' AND PatientAge LIKE '%Y' AND " + ageYears + " BETWEEN 25 AND 50", false},
	{"For the upenn_gbm collection, how many patients corresponding to each scanner", "SELECT ManufacturerModelName, COUNT(DISTINCT PatientID) FROM dicom_all WHERE collection_id = 'upenn_gbm' AND Modality = 'MR' GROUP BY 1", false},
	{"For the upenn_gbm collection, download only T2 and FLAIR scans", "SELECT * FROM dicom_all WHERE collection_id = 'upenn_gbm' AND (SeriesDescription LIKE '%T2%' OR SeriesDescription LIKE '%FLAIR%')", false},
	{"List all collections that contain segmentation images", "SELECT DISTINCT collection_id FROM dicom_all WHERE Modality = 'SEG'", false},
}

func TestText2CohortQuestions(t *testing.T) {
	db, _ := defaultDB(t)
	for _, q := range idcQuestions {
		rows, err := db.Query(q.sql)
		if err != nil {
			t.Errorf("%q: %v", q.prompt, err)
			continue
		}
		n := 0
		var first any
		for rows.Next() {
			if n == 0 {
				cols, _ := rows.Columns()
				vals := make([]any, len(cols))
				ptrs := make([]any, len(cols))
				for i := range vals {
					ptrs[i] = &vals[i]
				}
				if err := rows.Scan(ptrs...); err != nil {
					t.Errorf("%q: %v", q.prompt, err)
				}
				first = vals[0]
			}
			n++
		}
		if err := rows.Err(); err != nil {
			t.Errorf("%q: %v", q.prompt, err)
		}
		rows.Close()
		switch {
		case n == 0:
			t.Errorf("%q: no rows", q.prompt)
		case q.positive:
			if v, ok := first.(int64); !ok || v <= 0 {
				t.Errorf("%q: answer %v, want a positive count", q.prompt, first)
			}
		}
	}
	// The answers that depend on the data's shape.
	if got := scalar[string](t, db, "SELECT group_concat(collection_id) FROM (SELECT collection_id FROM dicom_all GROUP BY 1 HAVING count(*) >= 100000)"); got != "nlst" {
		t.Errorf("collections with 100000 images: %q", got)
	}
	if got := scalar[string](t, db, "SELECT group_concat(collection_id) FROM (SELECT DISTINCT collection_id FROM dicom_all WHERE collection_cancerType = 'Glioblastoma' ORDER BY 1)"); got != "tcga_gbm,upenn_gbm" {
		t.Errorf("glioblastoma collections: %q", got)
	}
}

// TestText2CohortPromptsCovered checks that idcQuestions covers every prompt
// of the paper's file, when the shared data is present.
func TestText2CohortPromptsCovered(t *testing.T) {
	path := realdata.Path(t, "text2cohort-idc-prompts", "T2C_UM2ii_Text-Query.csv")
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	recs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	have := map[string]bool{}
	for _, q := range idcQuestions {
		have[q.prompt] = true
	}
	for _, rec := range recs[1:] {
		if !have[rec[0]] {
			t.Errorf("prompt without a query: %q", rec[0])
		}
	}
	if len(recs)-1 != len(idcQuestions) {
		t.Errorf("%d prompts in the file, %d queries", len(recs)-1, len(idcQuestions))
	}
}

// TestCohortQuestions checks that typical cohort-discovery questions over
// the hospital tables have non-empty answers.
func TestCohortQuestions(t *testing.T) {
	db, _ := defaultDB(t)
	questions := []struct{ question, sql string }{
		{"Patients with type 2 diabetes and chronic kidney disease stage 3 or worse",
			`SELECT DISTINCT a.subject_id FROM diagnoses_icd a JOIN diagnoses_icd b USING (hadm_id)
			 WHERE a.icd_code LIKE 'E11%' AND b.icd_code IN ('N183', 'N184', 'N185', 'N186')`},
		{"Patients on metformin with a creatinine above 1.5 mg/dL",
			`SELECT DISTINCT p.subject_id FROM prescriptions p JOIN labevents l USING (hadm_id)
			 WHERE p.drug LIKE '%metformin%' AND l.itemid = 50912 AND l.valuenum > 1.5`},
		{"Sepsis admissions that ended in death",
			`SELECT a.hadm_id FROM admissions a JOIN diagnoses_icd d USING (hadm_id)
			 WHERE d.icd_code IN ('A419', 'A4151', 'R6521') AND a.hospital_expire_flag = 1`},
		{"COVID-19 admissions in 2020 to 2022",
			`SELECT a.hadm_id FROM admissions a JOIN diagnoses_icd d USING (hadm_id)
			 WHERE d.icd_code = 'U071' AND a.admittime BETWEEN '2020-01-01' AND '2022-12-31 23:59:59'`},
		{"Women over 65 with osteoporosis admitted for a hip fracture",
			`SELECT DISTINCT p.subject_id FROM patients p JOIN diagnoses_icd d USING (subject_id)
			 WHERE p.gender = 'F' AND p.anchor_age > 65 AND d.icd_code IN ('S72001A', 'S72002A')
			 AND p.subject_id IN (SELECT subject_id FROM diagnoses_icd WHERE icd_code = 'M810')`},
		{"Heart failure patients with an NT-proBNP above 5000",
			`SELECT DISTINCT l.subject_id FROM labevents l JOIN diagnoses_icd d USING (hadm_id)
			 WHERE d.icd_code LIKE 'I50%' AND l.itemid = 50963 AND l.valuenum > 5000`},
		{"Atrial fibrillation patients on apixaban or warfarin",
			`SELECT DISTINCT d.subject_id FROM diagnoses_icd d JOIN prescriptions p USING (hadm_id)
			 WHERE d.icd_code LIKE 'I48%' AND (p.drug = 'Apixaban' OR p.drug = 'Warfarin')`},
		{"Medicaid patients readmitted within 30 days",
			`SELECT DISTINCT a.subject_id FROM admissions a JOIN admissions b ON b.subject_id = a.subject_id
			 AND b.admittime > a.dischtime AND julianday(b.admittime) - julianday(a.dischtime) <= 30
			 WHERE a.insurance = 'Medicaid'`},
		{"Patients with prostate cancer",
			"SELECT DISTINCT subject_id FROM diagnoses_icd WHERE icd_code IN ('C61', '185')"},
		{"Admissions with an abnormal potassium",
			"SELECT DISTINCT hadm_id FROM labevents WHERE itemid = 50971 AND flag = 'abnormal'"},
	}
	for _, q := range questions {
		if n := scalar[int64](t, db, "SELECT count(*) FROM ("+q.sql+")"); n == 0 {
			t.Errorf("%s: no rows", q.question)
		}
	}
}

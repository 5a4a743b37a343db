// Package cohortbench holds the demo cohort questions the cohort
// benchmarks ask (app/cohort's BenchmarkQuestion and app's
// BenchmarkCohortPostgresVsSQLite), each with the SQL a scripted model
// answers it with: SQL that SQLite and PostgreSQL read alike (unquoted
// lower-case names, LOWER … LIKE). Only tests import it.
package cohortbench

// Question is a question on the demo data and SQL that answers it.
type Question struct{ Q, SQL string }

// Questions are ten demo cohort questions with their SQL.
var Questions = []Question{
	{"How many female patients are there?", "SELECT COUNT(DISTINCT subject_id) FROM patients WHERE gender = 'F'"},
	{"How many patients had a heart attack?", `SELECT COUNT(DISTINCT d.subject_id) FROM diagnoses_icd d
		JOIN d_icd_diagnoses t ON t.icd_code = d.icd_code AND t.icd_version = d.icd_version
		WHERE LOWER(t.long_title) LIKE '%myocardial infarction%'`},
	{"What is the average creatinine value by sex?", `SELECT p.gender, AVG(l.valuenum) FROM labevents l
		JOIN d_labitems i ON i.itemid = l.itemid JOIN patients p ON p.subject_id = l.subject_id
		WHERE LOWER(i.label) = 'creatinine' GROUP BY p.gender`},
	{"Which ten drugs were prescribed most often?", "SELECT drug, COUNT(*) AS n FROM prescriptions GROUP BY drug ORDER BY n DESC LIMIT 10"},
	{"How many admissions were emergencies?", "SELECT COUNT(*) FROM admissions WHERE LOWER(admission_type) LIKE '%emer%'"},
	{"How many patients died in hospital, by insurance?", "SELECT insurance, COUNT(DISTINCT subject_id) FROM admissions WHERE hospital_expire_flag = 1 GROUP BY insurance"},
	{"How many chest CT series are there?", "SELECT COUNT(DISTINCT SeriesInstanceUID) FROM dicom_all WHERE Modality = 'CT' AND BodyPartExamined = 'CHEST'"},
	{"How many patients are in each age group?", `SELECT (anchor_age / 10) * 10 AS age_group, COUNT(*) FROM patients GROUP BY age_group ORDER BY age_group`},
	{"How many diabetic patients received insulin?", `SELECT COUNT(DISTINCT p.subject_id) FROM prescriptions p
		WHERE LOWER(p.drug) LIKE '%insulin%' AND p.subject_id IN (SELECT d.subject_id FROM diagnoses_icd d
		JOIN d_icd_diagnoses t ON t.icd_code = d.icd_code AND t.icd_version = d.icd_version WHERE LOWER(t.long_title) LIKE '%diabetes%')`},
	{"What are the five most common diagnoses?", `SELECT t.long_title, COUNT(*) AS n FROM diagnoses_icd d
		JOIN d_icd_diagnoses t ON t.icd_code = d.icd_code AND t.icd_version = d.icd_version GROUP BY t.long_title ORDER BY n DESC LIMIT 5`},
}

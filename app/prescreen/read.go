package prescreen

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/clinsight/clinsight/app/trials"
	"github.com/clinsight/clinsight/datasets"
)

// Reading the patients' summaries from a source: MIMIC-IV-shaped tables
// (patients, admissions, diagnoses_icd, prescriptions, labevents with
// d_labitems: the demo, MIMIC-IV, EHRSQL's MIMIC-IV) or an OMOP CDM
// (person, visit_occurrence, condition_occurrence, drug_exposure,
// measurement, death, concept). Statements are portable (SQLite and
// PostgreSQL), read-only and bounded: patients in batches, at most
// MaxDiagnoses and MaxMedications per patient, one value per lab test.

// Querier runs one read-only statement (a datasets.Engine).
type Querier interface {
	Query(ctx context.Context, query string) (*datasets.Result, error)
}

// ReadOptions choose the patients to summarise.
type ReadOptions struct {
	// Query is the cohort's statement; PatientColumn its column that
	// identifies a patient (subject_id, person_id).
	Query         string
	PatientColumn string
	// MaxPatients bounds the patients read (0: DefaultMaxPatients; at
	// most MaxPatients): the first by identifier.
	MaxPatients int
	// Progress, if set, receives the patients read.
	Progress func(done, total int)
	// CountText, if set, writes the counts of patients in the notices
	// (an aggregate-only source's "<k" for small counts); nil: exact.
	CountText func(n int) string
}

// DefaultMaxPatients is how many patients are pre-screened when no bound
// is chosen.
const DefaultMaxPatients = 500

// batchSize is the patients read by one statement.
const batchSize = 100

// Cohort is the patients of a cohort, summarised.
type Cohort struct {
	// Summaries, by identifier.
	Summaries []*Summary
	// Total is the cohort's distinct patients (more than len(Summaries)
	// when it was bounded).
	Total int
	// Schema is "MIMIC-IV" or "OMOP CDM".
	Schema string
	// Notices say what the source lacks and what was left out.
	Notices []string
}

// schema is what a source has.
type schema struct {
	omop                      bool
	anchor, ageCol, dod       bool
	icdVersion, seqNum, title bool
	diagnoses, prescriptions  bool
	rxStart                   bool
	labs, fluid, uom, refHigh bool
	death                     bool
}

func columnsOf(ctx context.Context, q Querier, from string) map[string]bool {
	res, err := q.Query(ctx, "SELECT * FROM "+from+" AS t LIMIT 0")
	if err != nil {
		return nil
	}
	cols := map[string]bool{}
	for _, c := range res.Columns {
		cols[strings.ToLower(c.Name)] = true
	}
	return cols
}

func readSchema(ctx context.Context, q Querier) (schema, []string, error) {
	var s schema
	var notes []string
	has := func(t string) map[string]bool { return columnsOf(ctx, q, t) }
	if per, vis, con := has("person"), has("visit_occurrence"), has("concept"); per["person_id"] && per["year_of_birth"] && vis["visit_occurrence_id"] && con["concept_name"] {
		s.omop = true
		s.diagnoses = has("condition_occurrence")["condition_concept_id"]
		s.prescriptions = has("drug_exposure")["drug_concept_id"]
		m := has("measurement")
		s.labs = m["value_as_number"]
		s.refHigh = m["range_high"]
		s.death = has("death")["death_date"]
		return s, notes, ctx.Err()
	}
	pat, adm := has("patients"), has("admissions")
	if !pat["subject_id"] || !pat["gender"] || !adm["hadm_id"] || !adm["admittime"] {
		if err := ctx.Err(); err != nil {
			return s, nil, err
		}
		return s, nil, errors.New("pre-screening reads MIMIC-IV-shaped sources (tables patients and admissions) and OMOP CDM sources (person, visit_occurrence, concept); this source has neither")
	}
	s.anchor = pat["anchor_age"] && pat["anchor_year"]
	s.ageCol = adm["age"]
	s.dod = pat["dod"]
	if !s.anchor && !s.ageCol {
		notes = append(notes, "The source records no age: age criteria are unknown.")
	}
	if dx := has("diagnoses_icd"); dx["hadm_id"] && dx["icd_code"] && dx["subject_id"] {
		s.diagnoses = true
		s.icdVersion = dx["icd_version"]
		s.seqNum = dx["seq_num"]
		if t := has("d_icd_diagnoses"); t["long_title"] && t["icd_code"] && (!s.icdVersion || t["icd_version"]) {
			s.title = true
		}
	} else {
		notes = append(notes, "The source records no diagnoses (diagnoses_icd).")
	}
	if rx := has("prescriptions"); rx["drug"] && rx["subject_id"] && rx["hadm_id"] {
		s.prescriptions = true
		s.rxStart = rx["starttime"]
	} else {
		notes = append(notes, "The source records no medications (prescriptions).")
	}
	if l, d := has("labevents"), has("d_labitems"); l["subject_id"] && l["itemid"] && l["valuenum"] && l["charttime"] && d["itemid"] && d["label"] {
		s.labs = true
		s.uom = l["valueuom"]
		s.refHigh = l["ref_range_upper"]
		s.fluid = d["fluid"]
	} else {
		notes = append(notes, "The source records no lab values (labevents with d_labitems): lab criteria are unknown.")
	}
	return s, notes, ctx.Err()
}

// ReadCohort summarises the patients of a cohort statement.
func ReadCohort(ctx context.Context, q Querier, opts ReadOptions) (*Cohort, error) {
	stmt := strings.TrimRight(strings.TrimSpace(opts.Query), "; \t\n")
	if stmt == "" {
		return nil, errors.New("pre-screen: there is no cohort statement")
	}
	if opts.PatientColumn == "" {
		return nil, errors.New("pre-screen: the cohort's result has no column that identifies a patient")
	}
	limit := opts.MaxPatients
	switch {
	case limit <= 0:
		limit = DefaultMaxPatients
	case limit > MaxPatients:
		return nil, fmt.Errorf("pre-screen: at most %d patients at once (%d asked)", MaxPatients, limit)
	}
	s, notes, err := readSchema(ctx, q)
	if err != nil {
		return nil, err
	}
	pcol := datasets.QuoteIdent(opts.PatientColumn)
	res, err := q.Query(ctx, "SELECT COUNT(DISTINCT "+pcol+") FROM ("+stmt+") AS q")
	if err != nil {
		return nil, fmt.Errorf("pre-screen: count the cohort's patients: %w", err)
	}
	total := 0
	if len(res.Rows) == 1 {
		n, _ := datasets.Number(res.Rows[0][0])
		total = int(n)
	}
	res, err = q.Query(ctx, "SELECT DISTINCT "+pcol+" FROM ("+stmt+") AS q WHERE "+pcol+" IS NOT NULL ORDER BY 1 LIMIT "+strconv.Itoa(limit))
	if err != nil {
		return nil, fmt.Errorf("pre-screen: read the cohort's patients: %w", err)
	}
	if len(res.Rows) == 0 {
		return nil, errors.New("pre-screen: the cohort statement selects no patients")
	}
	c := &Cohort{Total: total, Schema: "MIMIC-IV", Notices: notes}
	if s.omop {
		c.Schema = "OMOP CDM"
	}
	if total > len(res.Rows) {
		text := strconv.Itoa
		if opts.CountText != nil {
			text = opts.CountText
		}
		c.Notices = append(c.Notices, fmt.Sprintf("The cohort has %s patients: the first %s (by identifier) are pre-screened.", text(total), text(len(res.Rows))))
	}
	r := reader{s: s, q: q}
	if s.labs {
		if err := r.labItems(ctx); err != nil {
			return nil, err
		}
	}
	for start := 0; start < len(res.Rows); start += batchSize {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		rows := res.Rows[start:min(start+batchSize, len(res.Rows))]
		ids := make([]string, 0, len(rows))
		for _, row := range rows {
			lit, ok := literal(row[0])
			if !ok {
				return nil, fmt.Errorf("pre-screen: the patient column %s holds values that are not identifiers", opts.PatientColumn)
			}
			ids = append(ids, lit)
		}
		batch, err := r.batch(ctx, rows, strings.Join(ids, ", "))
		if err != nil {
			return nil, err
		}
		c.Summaries = append(c.Summaries, batch...)
		if opts.Progress != nil {
			opts.Progress(len(c.Summaries), len(res.Rows))
		}
	}
	return c, nil
}

// literal writes an identifier value as an SQL literal.
func literal(v any) (string, bool) {
	switch x := v.(type) {
	case int64:
		return strconv.FormatInt(x, 10), true
	case float64:
		if x == math.Trunc(x) && !math.IsInf(x, 0) {
			return strconv.FormatInt(int64(x), 10), true
		}
	case string:
		return datasets.QuoteString(x), true
	case []byte:
		return datasets.QuoteString(string(x)), true
	}
	return "", false
}

// reader reads batches of patients.
type reader struct {
	s     schema
	q     Querier
	items map[string]*Analyte // lab item id (as text) → analyte
	list  string              // the item ids, as SQL literals
	label map[string]string   // lab item id → its label
}

// labItems finds the source's lab items of the analytes.
func (r *reader) labItems(ctx context.Context) error {
	r.items, r.label = map[string]*Analyte{}, map[string]string{}
	var stmt string
	if r.s.omop {
		var conds []string
		for _, a := range Analytes() {
			for _, l := range a.labels {
				if pre, ok := strings.CutSuffix(l, "*"); ok {
					conds = append(conds, "lower(concept_name) LIKE "+datasets.QuoteString(pre+"%"))
				} else {
					conds = append(conds, "lower(concept_name) = "+datasets.QuoteString(l))
				}
			}
		}
		stmt = "SELECT concept_id, concept_name, NULL FROM concept WHERE domain_id = 'Measurement' AND (" + strings.Join(conds, " OR ") + ") LIMIT 5000"
	} else {
		fluid := "NULL"
		if r.s.fluid {
			fluid = "fluid"
		}
		stmt = "SELECT itemid, label, " + fluid + " FROM d_labitems LIMIT 50000"
	}
	res, err := r.q.Query(ctx, stmt)
	if err != nil {
		return fmt.Errorf("pre-screen: read the lab tests: %w", err)
	}
	var lits []string
	for _, row := range res.Rows {
		a := MatchLabel(datasets.Text(row[1]), datasets.Text(row[2]))
		if a == nil {
			continue
		}
		lit, ok := literal(row[0])
		if !ok {
			continue
		}
		id := datasets.Text(row[0])
		r.items[id], r.label[id] = a, datasets.Text(row[1])
		lits = append(lits, lit)
	}
	r.list = strings.Join(lits, ", ")
	return nil
}

// batch reads the summaries of the patients of rows (ids: their
// literals).
func (r *reader) batch(ctx context.Context, rows [][]any, ids string) ([]*Summary, error) {
	byID := map[string]*Summary{}
	latest := map[string]string{} // the latest admission or visit
	out := make([]*Summary, 0, len(rows))
	for _, row := range rows {
		s := &Summary{ID: datasets.Text(row[0]), Labs: map[string]LabValue{}}
		byID[s.ID] = s
		out = append(out, s)
	}
	res, err := r.q.Query(ctx, r.demographics(ids))
	if err != nil {
		return nil, fmt.Errorf("pre-screen: read the patients' age and sex: %w", err)
	}
	for _, row := range res.Rows {
		s := byID[datasets.Text(row[0])]
		if s == nil {
			continue
		}
		s.Sex = trials.ParseSex(datasets.Text(row[1]))
		if s.Sex == trials.SexUnknown {
			switch strings.ToLower(datasets.Text(row[1])) {
			case "female":
				s.Sex = trials.SexFemale
			case "male":
				s.Sex = trials.SexMale
			}
		}
		if d := datasets.Text(row[4]); d != "" {
			s.Deceased, s.Died = true, d
		}
		s.RefDate = datasets.Text(row[5])
		latest[s.ID] = datasets.Text(row[6])
		if age, ok := datasets.Number(row[7]); ok {
			s.Age, s.HasAge = age, true
		} else if anchorAge, ok := datasets.Number(row[2]); ok {
			if anchorYear, ok := datasets.Number(row[3]); ok {
				if y, ok := yearOf(s.RefDate); ok {
					s.Age, s.HasAge = anchorAge+float64(y)-anchorYear, true
					s.AgeCapped = !r.s.omop && anchorAge >= 90
				}
			}
		}
	}
	if r.s.diagnoses {
		res, err := r.q.Query(ctx, r.diagnosesSQL(ids))
		if err != nil {
			return nil, fmt.Errorf("pre-screen: read the patients' diagnoses: %w", err)
		}
		for _, row := range res.Rows {
			s := byID[datasets.Text(row[0])]
			if s == nil || len(s.Diagnoses) >= MaxDiagnoses {
				continue
			}
			d := Diagnosis{Code: datasets.Text(row[2]), Title: datasets.Text(row[3]), Date: datasets.Text(row[4])}
			end := datasets.Text(row[5])
			if r.s.omop {
				d.Active = end == "" || dateOf(end) >= dateOf(s.RefDate)
			} else {
				d.Active = datasets.Text(row[1]) != "" && datasets.Text(row[1]) == latest[s.ID]
			}
			s.Diagnoses = append(s.Diagnoses, d)
		}
	}
	if r.s.prescriptions {
		res, err := r.q.Query(ctx, r.medicationsSQL(ids))
		if err != nil {
			return nil, fmt.Errorf("pre-screen: read the patients' medications: %w", err)
		}
		for _, row := range res.Rows {
			s := byID[datasets.Text(row[0])]
			if s == nil || len(s.Medications) >= MaxMedications {
				continue
			}
			s.Medications = append(s.Medications, Medication{Drug: datasets.Text(row[2]), Date: datasets.Text(row[3]), Active: datasets.Text(row[1]) != "" && datasets.Text(row[1]) == latest[s.ID]})
		}
	}
	if r.s.labs && r.list != "" {
		res, err := r.q.Query(ctx, r.labsSQL(ids))
		if err != nil {
			return nil, fmt.Errorf("pre-screen: read the patients' lab values: %w", err)
		}
		for _, row := range res.Rows {
			s := byID[datasets.Text(row[0])]
			a := r.items[datasets.Text(row[1])]
			v, ok := datasets.Number(row[2])
			if s == nil || a == nil || !ok {
				continue
			}
			lv := LabValue{Analyte: a.Key, Label: r.label[datasets.Text(row[1])], Value: v, Unit: datasets.Text(row[3]), Time: datasets.Text(row[4])}
			if u, ok := datasets.Number(row[5]); ok && u > 0 {
				lv.ULN = u
			}
			if old, ok := s.Labs[a.Key]; !ok || lv.Time > old.Time {
				s.Labs[a.Key] = lv
			}
		}
	}
	return out, nil
}

// demographics selects per patient: id, sex, anchor age, anchor year,
// date of death, the latest admission's start and id, and an age column.
func (r *reader) demographics(ids string) string {
	if r.s.omop {
		death, join := "NULL", ""
		if r.s.death {
			death = "dd.death_date"
			join = " LEFT JOIN (SELECT person_id, MIN(death_date) AS death_date FROM death WHERE person_id IN (" + ids + ") GROUP BY person_id) dd ON dd.person_id = p.person_id"
		}
		return "SELECT p.person_id, COALESCE(CASE WHEN p.gender_concept_id <> 0 THEN gc.concept_name END, p.gender_source_value), 0, p.year_of_birth, " + death +
			", v.visit_start_date, v.visit_occurrence_id, NULL FROM person p LEFT JOIN concept gc ON gc.concept_id = p.gender_concept_id" +
			" LEFT JOIN (SELECT person_id, visit_occurrence_id, visit_start_date, ROW_NUMBER() OVER (PARTITION BY person_id ORDER BY visit_start_date DESC, visit_occurrence_id DESC) AS rn FROM visit_occurrence WHERE person_id IN (" + ids + ")) v ON v.person_id = p.person_id AND v.rn = 1" +
			join + " WHERE p.person_id IN (" + ids + ")"
	}
	anchorAge, anchorYear, dod, age, ageSel := "NULL", "NULL", "NULL", "NULL", ""
	if r.s.anchor {
		anchorAge, anchorYear = "p.anchor_age", "p.anchor_year"
	}
	if r.s.dod {
		dod = "p.dod"
	}
	if r.s.ageCol {
		age, ageSel = "a.age", ", age"
	}
	return "SELECT p.subject_id, p.gender, " + anchorAge + ", " + anchorYear + ", " + dod + ", a.admittime, a.hadm_id, " + age +
		" FROM patients p LEFT JOIN (SELECT subject_id, hadm_id, admittime" + ageSel + ", ROW_NUMBER() OVER (PARTITION BY subject_id ORDER BY admittime DESC, hadm_id DESC) AS rn FROM admissions WHERE subject_id IN (" + ids + ")) a ON a.subject_id = p.subject_id AND a.rn = 1" +
		" WHERE p.subject_id IN (" + ids + ")"
}

// diagnosesSQL selects per patient, the most recent first, each
// diagnosis once: id, admission, code, title, date, end date.
func (r *reader) diagnosesSQL(ids string) string {
	limit := strconv.Itoa(MaxDiagnoses)
	if r.s.omop {
		// Unmapped conditions (concept 0) keep their source code.
		code := "COALESCE(CASE WHEN c.condition_concept_id <> 0 THEN CAST(c.condition_concept_id AS VARCHAR(20)) END, c.condition_source_value)"
		return "SELECT person_id, visit_occurrence_id, code, title, st, en FROM (SELECT x.*, ROW_NUMBER() OVER (PARTITION BY person_id ORDER BY st DESC, code) AS n FROM (" +
			"SELECT c.person_id, c.visit_occurrence_id, " + code + " AS code, CASE WHEN c.condition_concept_id <> 0 THEN cc.concept_name END AS title, c.condition_start_date AS st, c.condition_end_date AS en, " +
			"ROW_NUMBER() OVER (PARTITION BY c.person_id, " + code + " ORDER BY c.condition_start_date DESC) AS r " +
			"FROM condition_occurrence c LEFT JOIN concept cc ON cc.concept_id = c.condition_concept_id WHERE c.person_id IN (" + ids + ")) x WHERE r = 1 AND code IS NOT NULL) y WHERE n <= " + limit + " ORDER BY person_id, n"
	}
	seq, title, join, part := "0", "NULL", "", "d.subject_id, d.icd_code"
	if r.s.seqNum {
		seq = "d.seq_num"
	}
	if r.s.icdVersion {
		part += ", d.icd_version"
	}
	if r.s.title {
		title = "t.long_title"
		join = " LEFT JOIN d_icd_diagnoses t ON t.icd_code = d.icd_code"
		if r.s.icdVersion {
			join += " AND t.icd_version = d.icd_version"
		}
	}
	return "SELECT subject_id, hadm_id, icd_code, title, admittime, NULL FROM (SELECT x.*, ROW_NUMBER() OVER (PARTITION BY subject_id ORDER BY admittime DESC, seq, icd_code) AS n FROM (" +
		"SELECT d.subject_id, d.hadm_id, d.icd_code, " + title + " AS title, a.admittime, " + seq + " AS seq, " +
		"ROW_NUMBER() OVER (PARTITION BY " + part + " ORDER BY a.admittime DESC, " + seq + ") AS r " +
		"FROM diagnoses_icd d JOIN admissions a ON a.hadm_id = d.hadm_id" + join + " WHERE d.subject_id IN (" + ids + ")) x WHERE r = 1) y WHERE n <= " + limit + " ORDER BY subject_id, n"
}

// medicationsSQL selects per patient, the most recent first, each drug
// once: id, admission, drug, start.
func (r *reader) medicationsSQL(ids string) string {
	limit := strconv.Itoa(MaxMedications)
	if r.s.omop {
		return "SELECT person_id, visit_occurrence_id, drug, st FROM (SELECT x.*, ROW_NUMBER() OVER (PARTITION BY person_id ORDER BY st DESC, drug) AS n FROM (" +
			"SELECT d.person_id, d.visit_occurrence_id, COALESCE(CASE WHEN d.drug_concept_id <> 0 THEN c.concept_name END, d.drug_source_value) AS drug, d.drug_exposure_start_date AS st, " +
			"ROW_NUMBER() OVER (PARTITION BY d.person_id, COALESCE(CASE WHEN d.drug_concept_id <> 0 THEN c.concept_name END, d.drug_source_value) ORDER BY d.drug_exposure_start_date DESC) AS r " +
			"FROM drug_exposure d LEFT JOIN concept c ON c.concept_id = d.drug_concept_id WHERE d.person_id IN (" + ids + ")) x WHERE r = 1 AND drug IS NOT NULL) y WHERE n <= " + limit + " ORDER BY person_id, n"
	}
	st := "a.admittime"
	if r.s.rxStart {
		st = "COALESCE(p.starttime, a.admittime)"
	}
	return "SELECT subject_id, hadm_id, drug, st FROM (SELECT x.*, ROW_NUMBER() OVER (PARTITION BY subject_id ORDER BY st DESC, drug) AS n FROM (" +
		"SELECT p.subject_id, p.hadm_id, p.drug, " + st + " AS st, ROW_NUMBER() OVER (PARTITION BY p.subject_id, lower(p.drug) ORDER BY " + st + " DESC) AS r " +
		"FROM prescriptions p JOIN admissions a ON a.hadm_id = p.hadm_id WHERE p.subject_id IN (" + ids + ") AND p.drug IS NOT NULL) x WHERE r = 1) y WHERE n <= " + limit + " ORDER BY subject_id, n"
}

// labsSQL selects per patient and lab item the latest numeric value: id,
// item, value, unit, time, upper limit of normal.
func (r *reader) labsSQL(ids string) string {
	if r.s.omop {
		high := "NULL"
		if r.s.refHigh {
			high = "m.range_high"
		}
		return "SELECT person_id, measurement_concept_id, value_as_number, unit, t, high FROM (" +
			"SELECT m.person_id, m.measurement_concept_id, m.value_as_number, COALESCE(CASE WHEN m.unit_concept_id <> 0 THEN uc.concept_name END, m.unit_source_value) AS unit, " +
			"COALESCE(m.measurement_datetime, m.measurement_date) AS t, " + high + " AS high, " +
			"ROW_NUMBER() OVER (PARTITION BY m.person_id, m.measurement_concept_id ORDER BY COALESCE(m.measurement_datetime, m.measurement_date) DESC) AS r " +
			"FROM measurement m LEFT JOIN concept uc ON uc.concept_id = m.unit_concept_id WHERE m.person_id IN (" + ids + ") AND m.measurement_concept_id IN (" + r.list + ") AND m.value_as_number IS NOT NULL) x WHERE r = 1"
	}
	uom, high := "NULL", "NULL"
	if r.s.uom {
		uom = "l.valueuom"
	}
	if r.s.refHigh {
		high = "l.ref_range_upper"
	}
	return "SELECT subject_id, itemid, valuenum, uom, charttime, high FROM (" +
		"SELECT l.subject_id, l.itemid, l.valuenum, " + uom + " AS uom, l.charttime, " + high + " AS high, " +
		"ROW_NUMBER() OVER (PARTITION BY l.subject_id, l.itemid ORDER BY l.charttime DESC) AS r " +
		"FROM labevents l WHERE l.subject_id IN (" + ids + ") AND l.itemid IN (" + r.list + ") AND l.valuenum IS NOT NULL) x WHERE r = 1"
}

// yearOf reads the year of a date.
func yearOf(d string) (int, bool) {
	if len(d) < 4 {
		return 0, false
	}
	y, err := strconv.Atoi(d[:4])
	return y, err == nil
}

package cohort

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/disclosure"
)

// Table 1 (issue 19 item 2): the baseline characteristics of the patients
// a cohort statement selects, computed deterministically from the source
// with read-only statements, optionally stratified, with standardized mean
// differences between two strata. Only MIMIC-IV-shaped sources (the demo,
// MIMIC-IV, EHRSQL's MIMIC-IV) are described for now: patients, admissions,
// diagnoses_icd, prescriptions, labevents.
//
// Definitions, so that every cell can be checked by hand:
//   - The index admission of a patient is their first admission (earliest
//     admittime, then lowest hadm_id); when the cohort's result has a
//     hadm_id column (visit_occurrence_id on OMOP), the first of the
//     patient's admissions in the result.
//   - Age is the age at the index admission: admissions.age where the
//     schema has it, else anchor_age + year(admittime) − anchor_year.
//   - Length of stay is dischtime − admittime of the index admission, in
//     days.
//   - Diagnoses and medications are those recorded at the index
//     admission; a patient counts once per diagnosis or drug.
//   - A lab value at admission is the first numeric value (by charttime)
//     of the index admission for a blood test of that label.
//   - Percentages are of all the patients of the column (missing included).
//   - Mean ± SD uses the sample SD (n−1); median [IQR] uses quantiles by
//     linear interpolation between order statistics (R's type 7).
//   - SMD, with exactly two strata (first minus second): continuous
//     (m1−m2)/sqrt((s1²+s2²)/2); binary (p1−p2)/sqrt((p1(1−p1)+p2(1−p2))/2),
//     each level of a categorical variable as a binary one.

// Querier runs one read-only statement (datasets.Runner and every
// datasets.Engine implement it).
type Querier interface {
	Query(ctx context.Context, query string) (*datasets.Result, error)
}

// querierDialect is the SQL a querier speaks: an engine says (Dialect), a
// SQLite runner does not.
func querierDialect(q Querier) datasets.Dialect {
	if d, ok := q.(interface{ Dialect() datasets.Dialect }); ok {
		return d.Dialect()
	}
	return datasets.DialectSQLite
}

// Strata choices of Table1Options.Stratify besides a column of the
// cohort's result.
const (
	// StratifySex stratifies by the patients' recorded sex.
	StratifySex = "sex"
	// StratifyCohort compares the cohort with the rest of the source's
	// patients.
	StratifyCohort = "cohort"
)

// Limits of Table 1.
const (
	// Table1MaxPatients bounds the patients described (cohort vs rest
	// included).
	Table1MaxPatients = 200_000
	// table1MaxStrata bounds the strata.
	table1MaxStrata = 8
	// table1MaxLevels bounds the levels of a categorical variable shown;
	// the rest are summed into "other".
	table1MaxLevels = 12
	// table1MaxTop bounds the most frequent diagnoses and medications.
	table1MaxTop = 50
	// table1MaxLabs bounds the lab tests.
	table1MaxLabs = 20
)

// DefaultTable1Labs are the lab tests described when none are chosen.
var DefaultTable1Labs = []string{"Creatinine", "Hemoglobin", "White Blood Cells", "Sodium", "Potassium", "Glucose"}

// Table1Options choose what Table1 describes.
type Table1Options struct {
	// Query is the cohort's statement; PatientColumn the column of its
	// result that identifies a patient (subject_id for MIMIC-IV).
	Query         string
	PatientColumn string
	// Stratify is "" (overall only), StratifySex, StratifyCohort or the
	// name of a column of the cohort's result (a patient's stratum is the
	// smallest value of their rows).
	Stratify string
	// TopDiagnoses and TopMedications are how many of the most frequent
	// are listed (0: 10; negative: none).
	TopDiagnoses, TopMedications int
	// Labs are the lab test labels (d_labitems.label, any case) whose
	// first value at admission is described; nil means DefaultTable1Labs.
	Labs []string
}

// RowKind says what a Table 1 row holds.
type RowKind string

// Row kinds.
const (
	RowCount    RowKind = "count"     // the number of patients of each column
	RowHeading  RowKind = "heading"   // a variable's name, no values
	RowLevel    RowKind = "level"     // n (%) of patients with a level
	RowMissing  RowKind = "missing"   // n (%) of patients without a value
	RowMeanSD   RowKind = "mean ± SD" // of the patients with a value
	RowMedian   RowKind = "median [IQR]"
	RowDistinct RowKind = "patients"
)

// Table1Cell is one cell: a count of patients out of the column's
// patients, or the statistics of the values of the patients with one.
type Table1Cell struct {
	// Count of patients and Of, the patients of the column (count rows).
	Count, Of int64
	// Values is how many patients have a value (statistics rows).
	Values int64
	// Mean, SD, Median, Q1, Q3 of those values.
	Mean, SD, Median, Q1, Q3 float64
}

// Table1Row is one row of the table.
type Table1Row struct {
	// Variable is the characteristic ("Age, years"); Label the row's text
	// ("Age, years, mean ± SD", "F", "missing").
	Variable, Label string
	Kind            RowKind
	// Decimals for statistics.
	Decimals int
	// Overall and Strata (in Table1.Strata order) hold the cells.
	Overall Table1Cell
	Strata  []Table1Cell
	// SMD is the standardized mean difference of the first stratum and
	// the second; NaN when there are not exactly two strata or it is not
	// defined.
	SMD float64
}

// Stratum is one column of the table.
type Stratum struct {
	Name     string
	Patients int64
}

// Table1 is the baseline-characteristics table of a cohort.
type Table1 struct {
	// PatientColumn identifies the patients; Patients counts them overall.
	PatientColumn string
	Patients      int64
	// Stratify is what the strata are ("" for none) and Strata the
	// columns after Overall.
	Stratify string
	Strata   []Stratum
	Rows     []Table1Row
	// Notes explain what the reader should know (variables the source
	// lacks, labs not found).
	Notes []string
}

// ComputeTable1 computes Table 1 of the patients selected by opts.Query on
// a MIMIC-IV-shaped source, reading it with q (read-only, bounded).
func ComputeTable1(ctx context.Context, q Querier, opts Table1Options) (*Table1, error) {
	stmt := strings.TrimRight(strings.TrimSpace(opts.Query), "; \t\n")
	if stmt == "" {
		return nil, errors.New("make Table 1: there is no cohort statement to describe")
	}
	pcol := opts.PatientColumn
	if pcol == "" {
		return nil, errors.New("make Table 1: the result has no column that identifies a patient")
	}
	labs := opts.Labs
	if labs == nil {
		labs = DefaultTable1Labs
	}
	if len(labs) > table1MaxLabs {
		return nil, fmt.Errorf("make Table 1: at most %d lab tests can be described (%d chosen)", table1MaxLabs, len(labs))
	}
	topDx, topRx := topN(opts.TopDiagnoses), topN(opts.TopMedications)

	s, err := readTable1Schema(ctx, q)
	if err != nil {
		return nil, err
	}
	qcols, err := columnsOf(ctx, q, "("+stmt+")")
	if err != nil {
		return nil, fmt.Errorf("make Table 1: run the cohort statement: %w", err)
	}
	if !qcols[strings.ToLower(pcol)] {
		return nil, fmt.Errorf("make Table 1: the cohort's result has no column %s", pcol)
	}
	b := table1SQL{s: s, stmt: stmt, pcol: datasets.QuoteIdent(pcol)}
	switch {
	case !s.omop && qcols["hadm_id"]:
		b.hadm = "hadm_id"
	case s.omop && qcols["visit_occurrence_id"]:
		b.hadm = "visit_occurrence_id"
	}
	switch st := opts.Stratify; st {
	case "", StratifySex, StratifyCohort:
	default:
		if !qcols[strings.ToLower(st)] {
			return nil, fmt.Errorf("make Table 1: the cohort's result has no column %s to stratify by", st)
		}
		b.strat = datasets.QuoteIdent(st)
	}
	b.cohortVsRest = opts.Stratify == StratifyCohort

	t := &Table1{PatientColumn: pcol, Stratify: opts.Stratify}
	pats, err := b.patients(ctx, q, labs)
	if err != nil {
		return nil, err
	}
	t.Patients = int64(len(pats))
	if t.Patients == 0 {
		return nil, errors.New("make Table 1: the cohort statement selects no patients")
	}
	idx, err := t.assignStrata(pats, opts.Stratify)
	if err != nil {
		return nil, err
	}
	t.Notes = append(t.Notes, s.notes...)

	t.Rows = append(t.Rows, Table1Row{Variable: "Patients", Label: "Patients, n", Kind: RowCount,
		Overall: Table1Cell{Count: t.Patients, Of: t.Patients}, Strata: t.stratumCounts(), SMD: math.NaN()})
	t.continuous("Age, years", 1, pats, idx, func(p *t1Patient) (float64, bool) { return p.age, p.hasAge })
	t.categorical("Sex", pats, idx, func(p *t1Patient) string { return p.sex })
	if s.race != "" {
		t.categorical("Race/ethnicity", pats, idx, func(p *t1Patient) string { return p.race })
	}
	t.categorical("Admission type", pats, idx, func(p *t1Patient) string { return p.admType })
	t.continuous("Length of stay, days", 1, pats, idx, func(p *t1Patient) (float64, bool) { return p.los, p.hasLOS })
	if topDx > 0 && s.diagnoses {
		if err := b.top(ctx, q, t, idx, len(pats), "diagnoses", topDx); err != nil {
			return nil, err
		}
	}
	if topRx > 0 && s.prescriptions {
		if err := b.top(ctx, q, t, idx, len(pats), "medications", topRx); err != nil {
			return nil, err
		}
	}
	if s.labs {
		for i, lab := range labs {
			label, unit, err := b.labInfo(ctx, q, lab)
			if err != nil {
				return nil, err
			}
			name := label + " at admission"
			if unit != "" {
				name += ", " + unit
			}
			found := slices.ContainsFunc(pats, func(p *t1Patient) bool { return p.labOK[i] })
			if !found {
				t.Notes = append(t.Notes, fmt.Sprintf("No %s value at admission for any patient (is the label right?).", lab))
			}
			t.continuous(name, labDecimals(pats, i), pats, idx, func(p *t1Patient) (float64, bool) { return p.labs[i], p.labOK[i] })
		}
	}
	return t, nil
}

func topN(n int) int {
	switch {
	case n == 0:
		return 10
	case n < 0:
		return 0
	case n > table1MaxTop:
		return table1MaxTop
	}
	return n
}

// t1Schema is what the source has.
type t1Schema struct {
	ageColumn     bool   // admissions.age (EHRSQL)
	anchorYear    bool   // patients.anchor_year
	race          string // admissions.race or .ethnicity, "" when absent
	diagnoses     bool
	icdVersion    bool
	titles        bool // d_icd_diagnoses with long_title
	prescriptions bool
	labs          bool
	labFluid      bool
	notes         []string
	// prelude are common table expressions that present another schema
	// (OMOP CDM) as the MIMIC-IV tables the statements read.
	prelude []string
	omop    bool
}

// omopPrelude presents an OMOP CDM 5.4 source as the MIMIC-IV tables of
// Table 1: person as patients, visit_occurrence as admissions (the visit
// concept as admission type, race from person, age at the visit from
// year_of_birth), condition_occurrence as diagnoses_icd (concept ids as
// codes, concept names as titles), drug_exposure as prescriptions and
// measurement as labevents (measurement concepts as lab items).
var omopPrelude = []string{
	`patients AS (SELECT p.person_id AS subject_id, COALESCE(CASE WHEN p.gender_concept_id <> 0 THEN gc.concept_name END, p.gender_source_value) AS gender FROM person p LEFT JOIN concept gc ON gc.concept_id = p.gender_concept_id)`,
	`admissions AS (SELECT v.person_id AS subject_id, v.visit_occurrence_id AS hadm_id, COALESCE(v.visit_start_datetime, v.visit_start_date) AS admittime, COALESCE(v.visit_end_datetime, v.visit_end_date) AS dischtime, CASE WHEN v.visit_concept_id <> 0 THEN vc.concept_name END AS admission_type, COALESCE(CASE WHEN p.race_concept_id <> 0 THEN rc.concept_name END, p.race_source_value) AS race, CAST(substr(CAST(v.visit_start_date AS TEXT), 1, 4) AS INTEGER) - p.year_of_birth AS age FROM visit_occurrence v JOIN person p ON p.person_id = v.person_id LEFT JOIN concept vc ON vc.concept_id = v.visit_concept_id LEFT JOIN concept rc ON rc.concept_id = p.race_concept_id)`,
	`diagnoses_icd AS (SELECT person_id AS subject_id, visit_occurrence_id AS hadm_id, CAST(condition_concept_id AS TEXT) AS icd_code FROM condition_occurrence WHERE condition_concept_id <> 0)`,
	`d_icd_diagnoses AS (SELECT CAST(concept_id AS TEXT) AS icd_code, concept_name AS long_title FROM concept WHERE domain_id = 'Condition')`,
	`prescriptions AS (SELECT d.visit_occurrence_id AS hadm_id, COALESCE(CASE WHEN d.drug_concept_id <> 0 THEN c.concept_name END, d.drug_source_value) AS drug FROM drug_exposure d LEFT JOIN concept c ON c.concept_id = d.drug_concept_id)`,
	`labevents AS (SELECT m.visit_occurrence_id AS hadm_id, m.measurement_concept_id AS itemid, m.value_as_number AS valuenum, COALESCE(m.measurement_datetime, m.measurement_date) AS charttime, COALESCE(CASE WHEN m.unit_concept_id <> 0 THEN uc.concept_name END, m.unit_source_value) AS valueuom FROM measurement m LEFT JOIN concept uc ON uc.concept_id = m.unit_concept_id)`,
	`d_labitems AS (SELECT concept_id AS itemid, concept_name AS label FROM concept WHERE domain_id = 'Measurement')`,
}

// omopLabNames are the LOINC names of lab tests whose common name differs.
var omopLabNames = map[string]string{"white blood cells": "leukocytes", "platelet count": "platelets", "urea nitrogen": "urea nitrogen"}

// omopSchema recognises an OMOP CDM source.
func omopSchema(has func(string) map[string]bool) (t1Schema, bool) {
	per, vis, con := has("person"), has("visit_occurrence"), has("concept")
	if !per["person_id"] || !per["year_of_birth"] || !vis["visit_occurrence_id"] || !con["concept_name"] {
		return t1Schema{}, false
	}
	s := t1Schema{ageColumn: true, race: "race", omop: true, titles: true}
	s.prelude = omopPrelude
	s.diagnoses = has("condition_occurrence")["visit_occurrence_id"]
	s.prescriptions = has("drug_exposure")["visit_occurrence_id"]
	s.labs = has("measurement")["visit_occurrence_id"]
	return s, true
}

// columnsOf returns the lower-case column names of a table or a
// parenthesised statement (no rows are read).
func columnsOf(ctx context.Context, q Querier, from string) (map[string]bool, error) {
	res, err := q.Query(ctx, "SELECT * FROM "+from+" AS t LIMIT 0")
	if err != nil {
		return nil, err
	}
	cols := map[string]bool{}
	for _, c := range res.Columns {
		cols[strings.ToLower(c.Name)] = true
	}
	return cols, nil
}

func readTable1Schema(ctx context.Context, q Querier) (t1Schema, error) {
	var s t1Schema
	has := func(table string) map[string]bool {
		cols, err := columnsOf(ctx, q, table)
		if err != nil {
			return nil
		}
		return cols
	}
	if o, ok := omopSchema(has); ok {
		return o, ctx.Err()
	}
	pat, adm := has("patients"), has("admissions")
	if pat == nil || adm == nil || !pat["subject_id"] || !pat["gender"] || !adm["hadm_id"] || !adm["admittime"] {
		return s, errors.New("make Table 1: it describes MIMIC-IV-shaped sources (tables patients and admissions) and OMOP CDM sources (person, visit_occurrence, concept); this source has neither")
	}
	if ctx.Err() != nil {
		return s, ctx.Err()
	}
	s.ageColumn = adm["age"]
	s.anchorYear = pat["anchor_year"] && pat["anchor_age"]
	if !s.ageColumn && !s.anchorYear {
		s.notes = append(s.notes, "The source records no age (admissions.age or patients.anchor_age).")
	}
	switch {
	case adm["race"]:
		s.race = "race"
	case adm["ethnicity"]:
		s.race = "ethnicity"
	default:
		s.notes = append(s.notes, "The source records no race or ethnicity.")
	}
	if dx := has("diagnoses_icd"); dx != nil && dx["hadm_id"] && dx["icd_code"] {
		s.diagnoses = true
		s.icdVersion = dx["icd_version"]
		if d := has("d_icd_diagnoses"); d != nil && d["long_title"] && d["icd_code"] && (!s.icdVersion || d["icd_version"]) {
			s.titles = true
		}
	}
	if rx := has("prescriptions"); rx != nil && rx["hadm_id"] && rx["drug"] {
		s.prescriptions = true
	}
	if l := has("labevents"); l != nil && l["hadm_id"] && l["itemid"] && l["valuenum"] && l["charttime"] {
		if d := has("d_labitems"); d != nil && d["label"] {
			s.labs = true
			s.labFluid = d["fluid"]
		}
	}
	return s, ctx.Err()
}

// table1SQL writes the statements of Table 1.
type table1SQL struct {
	s            t1Schema
	stmt         string // the cohort's statement
	pcol         string // its patient column, quoted
	hadm         string // its result's admission column (hadm_id, visit_occurrence_id), "" when none
	strat        string // a column of its result to stratify by, quoted
	cohortVsRest bool
}

// with returns the common table expressions: q (the cohort's statement),
// pop (the patients described, with their stratum when it comes from the
// result: cohort vs rest or a column) and idx (their index admissions).
func (b table1SQL) with() string {
	var w strings.Builder
	w.WriteString("WITH ")
	for _, p := range b.s.prelude {
		w.WriteString(p + ",\n")
	}
	w.WriteString("q AS (\n" + b.stmt + "\n),\n")
	switch {
	case b.cohortVsRest:
		w.WriteString("pop AS (SELECT p.subject_id AS pid, CASE WHEN p.subject_id IN (SELECT " + b.pcol + " FROM q) THEN 'Cohort' ELSE 'Rest' END AS stratum FROM patients p),\n")
	case b.strat != "":
		w.WriteString("pop AS (SELECT " + b.pcol + " AS pid, MIN(" + b.strat + ") AS stratum FROM q WHERE " + b.pcol + " IS NOT NULL GROUP BY " + b.pcol + "),\n")
	default:
		w.WriteString("pop AS (SELECT DISTINCT " + b.pcol + " AS pid, NULL AS stratum FROM q WHERE " + b.pcol + " IS NOT NULL),\n")
	}
	restrict := ""
	if b.hadm != "" {
		h := datasets.QuoteIdent(b.hadm)
		w.WriteString("qadm AS (SELECT DISTINCT " + b.pcol + " AS pid, " + h + " AS hadm_id FROM q WHERE " + h + " IS NOT NULL),\n")
		restrict = " AND (NOT EXISTS (SELECT 1 FROM qadm c WHERE c.pid = pop.pid) OR a.hadm_id IN (SELECT c.hadm_id FROM qadm c WHERE c.pid = pop.pid))"
	}
	w.WriteString("idx AS (SELECT pid, hadm_id FROM (SELECT pop.pid, a.hadm_id, ROW_NUMBER() OVER (PARTITION BY pop.pid ORDER BY a.admittime, a.hadm_id) AS rn FROM pop JOIN admissions a ON a.subject_id = pop.pid" + restrict + ") AS f WHERE rn = 1)\n")
	return w.String()
}

// prefix is the WITH clause of the prelude, "" when there is none.
func (b table1SQL) prefix() string {
	if len(b.s.prelude) == 0 {
		return ""
	}
	return "WITH " + strings.Join(b.s.prelude, ",\n") + "\n"
}

// labItems selects the itemids of a blood test label.
func (b table1SQL) labItems(label string) string {
	cond := "lower(label) = lower(" + datasets.QuoteString(label) + ")"
	if b.s.omop { // LOINC names: "Creatinine [Mass/volume] in Serum or Plasma"
		name := strings.ToLower(label)
		if n, ok := omopLabNames[name]; ok {
			name = n
		}
		cond = "(" + cond + " OR lower(label) LIKE " + datasets.QuoteString(name+" [%] in serum or plasma") + " OR lower(label) LIKE " + datasets.QuoteString(name+" [%] in blood") + ")"
	}
	if b.s.labFluid {
		cond += " AND lower(fluid) = 'blood'"
	}
	return "SELECT itemid FROM d_labitems WHERE " + cond
}

// t1Patient is one patient's values.
type t1Patient struct {
	id               any
	stratum          string
	age, los         float64
	hasAge, hasLOS   bool
	sex, race        string
	admType          string
	labs             []float64
	labOK            []bool
	stratumAvailable bool
}

// patients reads one row per patient.
func (b table1SQL) patients(ctx context.Context, q Querier, labs []string) ([]*t1Patient, error) {
	age := "NULL"
	switch {
	case b.s.ageColumn:
		age = "a.age"
	case b.s.anchorYear:
		age = "p.anchor_age + CAST(substr(CAST(a.admittime AS TEXT), 1, 4) AS INTEGER) - p.anchor_year"
	}
	race := "NULL"
	if b.s.race != "" {
		race = "a." + b.s.race
	}
	var sel strings.Builder
	sel.WriteString(b.with())
	if b.s.labs && len(labs) > 0 {
		sel.WriteString(b.firstLabs(labs))
	}
	los := "(julianday(a.dischtime) - julianday(a.admittime))"
	if querierDialect(q) == datasets.DialectPostgres {
		los = "(EXTRACT(EPOCH FROM (CAST(a.dischtime AS timestamp) - CAST(a.admittime AS timestamp))) / 86400.0)"
	}
	sel.WriteString("SELECT pop.pid, pop.stratum, " + age + " AS age, p.gender, " + race + " AS race, a.admission_type, " + los + " AS los")
	if b.s.labs {
		for i := range labs {
			fmt.Fprintf(&sel, ", fl.lab%d", i)
		}
	}
	sel.WriteString("\nFROM pop LEFT JOIN patients p ON p.subject_id = pop.pid LEFT JOIN idx ON idx.pid = pop.pid LEFT JOIN admissions a ON a.hadm_id = idx.hadm_id")
	if b.s.labs && len(labs) > 0 {
		sel.WriteString(" LEFT JOIN fl ON fl.pid = pop.pid")
	}
	sel.WriteString(" ORDER BY pop.pid")
	res, err := q.Query(ctx, sel.String())
	if err != nil {
		return nil, fmt.Errorf("make Table 1: read the patients: %w", err)
	}
	if res.Truncated || len(res.Rows) > Table1MaxPatients {
		return nil, fmt.Errorf("make Table 1: more than %d patients (or a result larger than the query limits allow) to describe", min(Table1MaxPatients, len(res.Rows)))
	}
	out := make([]*t1Patient, 0, len(res.Rows))
	for _, r := range res.Rows {
		p := &t1Patient{id: r[0], labs: make([]float64, len(labs)), labOK: make([]bool, len(labs))}
		if r[1] != nil {
			p.stratum, p.stratumAvailable = datasets.Text(r[1]), true
		}
		p.age, p.hasAge = datasets.Number(r[2])
		p.sex, p.race, p.admType = datasets.Text(r[3]), datasets.Text(r[4]), datasets.Text(r[5])
		p.los, p.hasLOS = datasets.Number(r[6])
		if b.s.labs {
			for i := range labs {
				p.labs[i], p.labOK[i] = datasets.Number(r[7+i])
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// firstLabs continues the WITH clause of with() with fl: one row per
// index admission's patient with the first numeric value of each lab test
// (by chart time, then value) as lab0, lab1, .... A join with a window
// function, not a subquery per patient and test: without an index on
// labevents(hadm_id) — MIMIC-IV's PostgreSQL build has none until
// mimic-code's index script is run — those subqueries scanned the table
// once per patient and test (23 s for 58 patients of the MIMIC-IV demo
// on PostgreSQL, against 0.1 s as a join).
func (b table1SQL) firstLabs(labs []string) string {
	var w strings.Builder
	w.WriteString(",\nlv AS (")
	for i, lab := range labs {
		if i > 0 {
			w.WriteString("\n UNION ALL ")
		}
		fmt.Fprintf(&w, "SELECT idx.pid AS pid, %d AS k, l.charttime AS ct, l.valuenum AS v FROM idx JOIN labevents l ON l.hadm_id = idx.hadm_id WHERE l.itemid IN (%s) AND l.valuenum IS NOT NULL", i, b.labItems(lab))
	}
	w.WriteString("),\nfl AS (SELECT pid")
	for i := range labs {
		fmt.Fprintf(&w, ", MAX(CASE WHEN k = %d THEN v END) AS lab%d", i, i)
	}
	w.WriteString(" FROM (SELECT pid, k, v, ROW_NUMBER() OVER (PARTITION BY pid, k ORDER BY ct, v) AS rn FROM lv) AS f WHERE rn = 1 GROUP BY pid)\n")
	return w.String()
}

// labInfo returns a lab test's label as the source spells it (lab when
// it has no such test) and its most frequent unit.
func (b table1SQL) labInfo(ctx context.Context, q Querier, lab string) (label, unit string, err error) {
	label = lab
	res, err := q.Query(ctx, b.prefix()+"SELECT MIN(label) FROM d_labitems WHERE itemid IN ("+b.labItems(lab)+")")
	if err != nil {
		return "", "", fmt.Errorf("make Table 1: read the lab test %s: %w", lab, err)
	}
	if len(res.Rows) > 0 && datasets.Text(res.Rows[0][0]) != "" && !b.s.omop { // OMOP: the LOINC names are long
		label = datasets.Text(res.Rows[0][0])
	}
	res, err = q.Query(ctx, b.prefix()+"SELECT valueuom FROM labevents WHERE itemid IN ("+b.labItems(lab)+") AND valueuom IS NOT NULL AND valueuom <> '' GROUP BY valueuom ORDER BY COUNT(*) DESC, valueuom LIMIT 1")
	if err != nil {
		return "", "", fmt.Errorf("make Table 1: read the unit of %s: %w", lab, err)
	}
	if len(res.Rows) > 0 {
		unit = datasets.Text(res.Rows[0][0])
	}
	return label, unit, nil
}

// top adds the most frequent diagnoses or medications of the index
// admissions, with the patients having each per stratum.
func (b table1SQL) top(ctx context.Context, q Querier, t *Table1, idx map[string]int, n int, what string, limit int) error {
	var key, title, join string
	switch what {
	case "diagnoses":
		key = "d.icd_code"
		if b.s.icdVersion {
			key = "CAST(d.icd_version AS TEXT) || ':' || d.icd_code"
		}
		title = "MAX(d.icd_code)"
		if b.s.titles {
			title = "MAX(t.long_title)"
			on := "t.icd_code = d.icd_code"
			if b.s.icdVersion {
				on += " AND t.icd_version = d.icd_version"
			}
			join = " LEFT JOIN d_icd_diagnoses t ON " + on
		}
		join = "idx JOIN diagnoses_icd d ON d.hadm_id = idx.hadm_id" + join
	default:
		key, title, join = "d.drug", "MAX(d.drug)", "idx JOIN prescriptions d ON d.hadm_id = idx.hadm_id"
	}
	topQ := b.with() + "SELECT " + key + " AS k, " + title + " AS title, COUNT(DISTINCT idx.pid) AS n FROM " + join +
		" GROUP BY 1 ORDER BY 3 DESC, 1 LIMIT " + strconv.Itoa(limit)
	res, err := q.Query(ctx, topQ)
	if err != nil {
		return fmt.Errorf("make Table 1: the most frequent %s: %w", what, err)
	}
	if len(res.Rows) == 0 {
		t.Notes = append(t.Notes, "No "+what+" are recorded at the patients' index admissions.")
		return nil
	}
	keys := make([]string, len(res.Rows))
	titles := make([]string, len(res.Rows))
	quoted := make([]string, len(res.Rows))
	for i, r := range res.Rows {
		keys[i], titles[i] = datasets.Text(r[0]), datasets.Text(r[1])
		if titles[i] == "" {
			titles[i] = keys[i]
		}
		if what == "diagnoses" {
			code := keys[i]
			if _, c, ok := strings.Cut(code, ":"); ok {
				code = c
			}
			if !strings.EqualFold(titles[i], code) {
				titles[i] += " (" + code + ")"
			}
		}
		quoted[i] = datasets.QuoteString(keys[i])
	}
	who := b.with() + "SELECT DISTINCT idx.pid, " + key + " AS k FROM " + join + " WHERE " + key + " IN (" + strings.Join(quoted, ", ") + ")"
	rows, err := q.Query(ctx, who)
	if err != nil {
		return fmt.Errorf("make Table 1: the patients with the most frequent %s: %w", what, err)
	}
	if rows.Truncated {
		return fmt.Errorf("make Table 1: too many patients with the most frequent %s for the query limits", what)
	}
	has := make([]map[string]bool, len(keys))
	for i := range has {
		has[i] = map[string]bool{}
	}
	pos := map[string]int{}
	for i, k := range keys {
		pos[k] = i
	}
	for _, r := range rows.Rows {
		if i, ok := pos[datasets.Text(r[1])]; ok {
			has[i][idKey(r[0])] = true
		}
	}
	variable := "Most frequent " + what + " at the index admission, n (%)"
	t.Rows = append(t.Rows, Table1Row{Variable: variable, Label: variable, Kind: RowHeading, Strata: make([]Table1Cell, len(t.Strata)), SMD: math.NaN()})
	for i := range keys {
		row := Table1Row{Variable: variable, Label: titles[i], Kind: RowLevel}
		row.Overall, row.Strata = t.countCells(idx, func(id string) bool { return has[i][id] })
		row.SMD = t.binarySMD(row)
		t.Rows = append(t.Rows, row)
	}
	return nil
}

// assignStrata names the strata and returns each patient's stratum index
// by patient key.
func (t *Table1) assignStrata(pats []*t1Patient, stratify string) (map[string]int, error) {
	idx := make(map[string]int, len(pats))
	if stratify == "" {
		for _, p := range pats {
			idx[idKey(p.id)] = -1
		}
		return idx, nil
	}
	name := func(p *t1Patient) string {
		if stratify == StratifySex {
			if p.sex == "" {
				return "(sex not recorded)"
			}
			return p.sex
		}
		if !p.stratumAvailable {
			return "(no value)"
		}
		return p.stratum
	}
	counts := map[string]int64{}
	for _, p := range pats {
		counts[name(p)]++
	}
	names := make([]string, 0, len(counts))
	for n := range counts {
		names = append(names, n)
	}
	sort.Strings(names)
	if stratify == StratifyCohort {
		names = []string{"Cohort", "Rest"}
	}
	if len(names) > table1MaxStrata {
		return nil, fmt.Errorf("make Table 1: %s has %d different values; at most %d strata can be shown", stratify, len(names), table1MaxStrata)
	}
	pos := map[string]int{}
	for i, n := range names {
		pos[n] = i
		t.Strata = append(t.Strata, Stratum{Name: n, Patients: counts[n]})
	}
	for _, p := range pats {
		idx[idKey(p.id)] = pos[name(p)]
	}
	return idx, nil
}

func (t *Table1) stratumCounts() []Table1Cell {
	out := make([]Table1Cell, len(t.Strata))
	for i, s := range t.Strata {
		out[i] = Table1Cell{Count: s.Patients, Of: s.Patients}
	}
	return out
}

// countCells counts the patients for whom has is true, overall and per
// stratum.
func (t *Table1) countCells(idx map[string]int, has func(id string) bool) (Table1Cell, []Table1Cell) {
	overall := Table1Cell{Of: t.Patients}
	strata := t.stratumCounts()
	for i := range strata {
		strata[i].Count = 0
	}
	for id, s := range idx {
		if !has(id) {
			continue
		}
		overall.Count++
		if s >= 0 {
			strata[s].Count++
		}
	}
	return overall, strata
}

// categorical adds a variable's levels (most frequent first, at most
// table1MaxLevels, the rest as "other") and its missing patients.
func (t *Table1) categorical(variable string, pats []*t1Patient, idx map[string]int, value func(*t1Patient) string) {
	counts := map[string]int64{}
	for _, p := range pats {
		if v := value(p); v != "" {
			counts[v]++
		}
	}
	levels := make([]string, 0, len(counts))
	for l := range counts {
		levels = append(levels, l)
	}
	sort.Slice(levels, func(i, j int) bool {
		if counts[levels[i]] != counts[levels[j]] {
			return counts[levels[i]] > counts[levels[j]]
		}
		return levels[i] < levels[j]
	})
	shown := levels
	other := map[string]bool{}
	if len(levels) > table1MaxLevels {
		shown = levels[:table1MaxLevels-1]
		for _, l := range levels[table1MaxLevels-1:] {
			other[l] = true
		}
	}
	byID := make(map[string]*t1Patient, len(pats))
	for _, p := range pats {
		byID[idKey(p.id)] = p
	}
	head := variable + ", n (%)"
	t.Rows = append(t.Rows, Table1Row{Variable: variable, Label: head, Kind: RowHeading, Strata: make([]Table1Cell, len(t.Strata)), SMD: math.NaN()})
	add := func(label string, kind RowKind, has func(string) bool) {
		row := Table1Row{Variable: variable, Label: label, Kind: kind}
		row.Overall, row.Strata = t.countCells(idx, func(id string) bool { return has(value(byID[id])) })
		row.SMD = t.binarySMD(row)
		t.Rows = append(t.Rows, row)
	}
	for _, l := range shown {
		add(l, RowLevel, func(v string) bool { return v == l })
	}
	if len(other) > 0 {
		add(fmt.Sprintf("other (%d more)", len(other)), RowLevel, func(v string) bool { return other[v] })
	}
	add("missing", RowMissing, func(v string) bool { return v == "" })
}

// continuous adds mean ± SD, median [IQR] and missing rows.
func (t *Table1) continuous(variable string, decimals int, pats []*t1Patient, idx map[string]int, value func(*t1Patient) (float64, bool)) {
	all := []float64{}
	per := make([][]float64, len(t.Strata))
	missing := map[string]bool{}
	for _, p := range pats {
		v, ok := value(p)
		if !ok {
			missing[idKey(p.id)] = true
			continue
		}
		all = append(all, v)
		if s := idx[idKey(p.id)]; s >= 0 {
			per[s] = append(per[s], v)
		}
	}
	overall := describe(all)
	strata := make([]Table1Cell, len(per))
	for i, v := range per {
		strata[i] = describe(v)
	}
	smd := math.NaN()
	if len(strata) == 2 {
		smd = ContinuousSMD(strata[0].Mean, strata[0].SD, strata[1].Mean, strata[1].SD)
	}
	t.Rows = append(t.Rows,
		Table1Row{Variable: variable, Label: variable + ", mean ± SD", Kind: RowMeanSD, Decimals: decimals, Overall: overall, Strata: strata, SMD: smd},
		Table1Row{Variable: variable, Label: variable + ", median [IQR]", Kind: RowMedian, Decimals: decimals, Overall: overall, Strata: strata, SMD: math.NaN()},
	)
	row := Table1Row{Variable: variable, Label: "missing", Kind: RowMissing}
	row.Overall, row.Strata = t.countCells(idx, func(id string) bool { return missing[id] })
	row.SMD = t.binarySMD(row)
	t.Rows = append(t.Rows, row)
}

// binarySMD is the SMD of a count row between two strata.
func (t *Table1) binarySMD(row Table1Row) float64 {
	if len(row.Strata) != 2 || row.Strata[0].Of == 0 || row.Strata[1].Of == 0 {
		return math.NaN()
	}
	p1 := float64(row.Strata[0].Count) / float64(row.Strata[0].Of)
	p2 := float64(row.Strata[1].Count) / float64(row.Strata[1].Of)
	return BinarySMD(p1, p2)
}

// describe computes the statistics of values.
func describe(v []float64) Table1Cell {
	c := Table1Cell{Values: int64(len(v)), Mean: math.NaN(), SD: math.NaN(), Median: math.NaN(), Q1: math.NaN(), Q3: math.NaN()}
	if len(v) == 0 {
		return c
	}
	s := slices.Clone(v)
	sort.Float64s(s)
	if len(s) == 1 {
		c.Mean = s[0]
	} else {
		c.Mean, c.SD = stat.MeanStdDev(s, nil)
	}
	c.Median, c.Q1, c.Q3 = Quantile7(s, 0.5), Quantile7(s, 0.25), Quantile7(s, 0.75)
	return c
}

// Quantile7 is the p-quantile of sorted values by linear interpolation
// between order statistics (R's default, type 7).
func Quantile7(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := float64(len(sorted)-1) * p
	lo := int(math.Floor(h))
	if lo+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// ContinuousSMD is (m1−m2)/sqrt((s1²+s2²)/2); NaN when undefined.
func ContinuousSMD(m1, s1, m2, s2 float64) float64 {
	d := math.Sqrt((s1*s1 + s2*s2) / 2)
	if math.IsNaN(d) || d == 0 {
		return math.NaN()
	}
	return (m1 - m2) / d
}

// BinarySMD is (p1−p2)/sqrt((p1(1−p1)+p2(1−p2))/2); NaN when undefined.
func BinarySMD(p1, p2 float64) float64 {
	d := math.Sqrt((p1*(1-p1) + p2*(1-p2)) / 2)
	if d == 0 {
		return math.NaN()
	}
	return (p1 - p2) / d
}

func labDecimals(pats []*t1Patient, i int) int {
	var v []float64
	for _, p := range pats {
		if p.labOK[i] {
			v = append(v, math.Abs(p.labs[i]))
		}
	}
	if len(v) == 0 {
		return 1
	}
	sort.Float64s(v)
	switch m := Quantile7(v, 0.5); {
	case m >= 100:
		return 0
	case m >= 10:
		return 1
	}
	return 2
}

// Columns are the header of the table as in a paper.
func (t *Table1) Columns() []string {
	cols := []string{"Characteristic", fmt.Sprintf("Overall (n = %d)", t.Patients)}
	for _, s := range t.Strata {
		cols = append(cols, fmt.Sprintf("%s (n = %d)", s.Name, s.Patients))
	}
	if len(t.Strata) == 2 {
		cols = append(cols, "SMD")
	}
	return cols
}

// Cells renders the table as text, one row per Table1Row, in Columns
// order. With k ≥ 2, counts of 1 to k−1 patients and statistics of fewer
// than k patients are shown as "<k", and so are the counts that would let
// them be worked out: the other cells of the row (a stratum from the
// overall count) and, for a categorical variable, the next smallest level
// of a column where only one is suppressed. The headers of the strata are
// suppressed likewise.
func (t *Table1) Cells(k int) (header []string, rows [][]string) {
	header = t.Columns()
	sup := t.suppressed(k)
	for i, r := range t.Rows {
		label := r.Label
		if r.Kind != RowHeading && r.Kind != RowCount && r.Label != r.Variable && !strings.HasPrefix(r.Label, r.Variable) {
			label = "    " + label
		}
		row := []string{label}
		cells := append([]Table1Cell{r.Overall}, r.Strata...)
		for j, c := range cells {
			if sup[i][j] {
				row = append(row, disclosure.Suppressed{K: k}.String())
				continue
			}
			row = append(row, cellText(r, c))
		}
		if len(t.Strata) == 2 {
			if anyTrue(sup[i]) || math.IsNaN(r.SMD) || math.IsInf(r.SMD, 0) {
				row = append(row, "")
			} else {
				row = append(row, strconv.FormatFloat(r.SMD, 'f', 3, 64))
			}
		}
		rows = append(rows, row)
	}
	if k >= 2 && len(t.Strata) > 0 {
		for j, s := range t.Strata {
			if s.Patients >= 1 && s.Patients < int64(k) {
				header[2+j] = fmt.Sprintf("%s (n %s)", s.Name, disclosure.Suppressed{K: k})
			}
		}
	}
	return header, rows
}

// Suppressed reports how many cells Cells(k) suppresses.
func (t *Table1) Suppressed(k int) int {
	n := 0
	for _, r := range t.suppressed(k) {
		for _, s := range r {
			if s {
				n++
			}
		}
	}
	return n
}

func anyTrue(b []bool) bool { return slices.Contains(b, true) }

// suppressed marks the cells to suppress under k (none when k < 2).
func (t *Table1) suppressed(k int) [][]bool {
	sup := make([][]bool, len(t.Rows))
	for i, r := range t.Rows {
		sup[i] = make([]bool, 1+len(r.Strata))
	}
	if k < 2 {
		return sup
	}
	small := func(n int64) bool { return n >= 1 && n < int64(k) }
	for i, r := range t.Rows {
		cells := append([]Table1Cell{r.Overall}, r.Strata...)
		for j, c := range cells {
			switch r.Kind {
			case RowLevel, RowMissing:
				sup[i][j] = small(c.Count) || small(c.Of-c.Count) && c.Of >= int64(k)
			case RowMeanSD, RowMedian:
				sup[i][j] = small(c.Values)
			case RowCount:
				sup[i][j] = small(c.Count) // the overall N too: a cohort of fewer than k
			}
		}
	}
	for changed, round := true, 0; changed && round < 10; round++ {
		changed = false
		// A row: the overall count and all but one stratum give the last.
		for i, r := range t.Rows {
			if r.Kind != RowLevel && r.Kind != RowMissing || !anyTrue(sup[i]) {
				continue
			}
			for j := range sup[i] {
				if !sup[i][j] && countOf(r, j) > 0 {
					sup[i][j], changed = true, true
				}
			}
		}
		// A categorical variable's column: its levels add up to the
		// column's patients, so one suppressed level is worked out from
		// the others.
		for start := 0; start < len(t.Rows); {
			end := start + 1
			for end < len(t.Rows) && t.Rows[end].Variable == t.Rows[start].Variable {
				end++
			}
			if t.Rows[start].Kind == RowHeading && end-start > 2 && t.Rows[start+1].Kind == RowLevel && !strings.HasPrefix(t.Rows[start].Variable, "Most frequent") {
				for j := range sup[start] {
					n, best := 0, -1
					for i := start + 1; i < end; i++ {
						if sup[i][j] {
							n++
						} else if c := countOf(t.Rows[i], j); c > 0 && (best < 0 || c < countOf(t.Rows[best], j)) {
							best = i
						}
					}
					if n == 1 && best >= 0 {
						sup[best][j], changed = true, true
					}
				}
			}
			start = end
		}
	}
	return sup
}

func countOf(r Table1Row, j int) int64 {
	if j == 0 {
		return r.Overall.Count
	}
	return r.Strata[j-1].Count
}

// cellText renders a cell as in a paper.
func cellText(r Table1Row, c Table1Cell) string {
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', r.Decimals, 64) }
	switch r.Kind {
	case RowHeading:
		return ""
	case RowCount:
		return strconv.FormatInt(c.Count, 10)
	case RowLevel, RowMissing:
		if c.Of == 0 {
			return "0"
		}
		return fmt.Sprintf("%d (%.1f%%)", c.Count, 100*float64(c.Count)/float64(c.Of))
	case RowMeanSD:
		switch c.Values {
		case 0:
			return "–"
		case 1:
			return f(c.Mean)
		}
		return f(c.Mean) + " ± " + f(c.SD)
	case RowMedian:
		if c.Values == 0 {
			return "–"
		}
		return f(c.Median) + " [" + f(c.Q1) + "–" + f(c.Q3) + "]"
	}
	return ""
}

// idKey is a patient's key whatever the type of the identifier.
func idKey(v any) string {
	switch x := v.(type) {
	case float64:
		if x == math.Trunc(x) {
			return strconv.FormatInt(int64(x), 10)
		}
	}
	return datasets.Text(v)
}

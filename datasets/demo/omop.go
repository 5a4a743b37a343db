package demo

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/internal/progress"
)

// OMOPOptions configures GenerateOMOP.
type OMOPOptions struct {
	// Overwrite allows replacing an existing file at the output path.
	Overwrite bool
	// Progress, when set, receives one report per table written.
	Progress progress.Func
}

// demoSynonyms are concept synonyms of the demo vocabulary (lay and
// alternative names), written for Clinsight.
var demoSynonyms = sync.OnceValue(func() map[string][]string {
	return map[string][]string{
		"mi":        {"Heart attack"},
		"htn":       {"High blood pressure"},
		"cva":       {"Stroke"},
		"t2dm":      {"Type II diabetes mellitus", "Adult-onset diabetes"},
		"copd":      {"Chronic obstructive pulmonary disease"},
		"gerd":      {"Acid reflux"},
		"uti":       {"Urinary tract infection"},
		"aki":       {"Acute kidney injury"},
		"esrd":      {"Kidney failure"},
		"hld":       {"High cholesterol"},
		"alzheimer": {"Alzheimer disease"},
	}
})

// omopTables are the CDM tables the demo fills, in order, with the query
// that fills each from the demo's MIMIC-shaped tables (attached as src).
var omopTables = []struct{ name, sql string }{
	{"person", `INSERT INTO person (person_id, gender_concept_id, year_of_birth, race_concept_id, ethnicity_concept_id,
			person_source_value, gender_source_value, race_source_value, ethnicity_source_value)
		SELECT p.subject_id, CASE p.gender WHEN 'M' THEN 8507 WHEN 'F' THEN 8532 ELSE 0 END,
			p.anchor_year - p.anchor_age,
			CASE WHEN r.race LIKE 'WHITE%' THEN 8527 WHEN r.race LIKE 'BLACK%' THEN 8516 WHEN r.race LIKE 'ASIAN%' THEN 8515 ELSE 0 END,
			CASE WHEN r.race LIKE 'HISPANIC%' THEN 38003563 ELSE 38003564 END,
			CAST(p.subject_id AS TEXT), p.gender, r.race, CASE WHEN r.race LIKE 'HISPANIC%' THEN 'Hispanic' ELSE 'Not Hispanic' END
		FROM src.patients p
		LEFT JOIN (SELECT subject_id, race, min(admittime) FROM src.admissions GROUP BY subject_id) r ON r.subject_id = p.subject_id
		ORDER BY p.subject_id`},
	{"observation_period", `INSERT INTO observation_period (observation_period_id, person_id, observation_period_start_date, observation_period_end_date, period_type_concept_id)
		SELECT subject_id, subject_id, date(min(admittime)), date(max(dischtime)), 32817
		FROM src.admissions GROUP BY subject_id ORDER BY subject_id`},
	{"visit_occurrence", `INSERT INTO visit_occurrence (visit_occurrence_id, person_id, visit_concept_id, visit_start_date, visit_start_datetime,
			visit_end_date, visit_end_datetime, visit_type_concept_id, visit_source_value)
		SELECT hadm_id, subject_id, 9201, date(admittime), admittime, date(dischtime), dischtime, 32817, admission_type
		FROM src.admissions ORDER BY hadm_id`},
	{"condition_occurrence", `INSERT INTO condition_occurrence (condition_occurrence_id, person_id, condition_concept_id, condition_start_date,
			condition_start_datetime, condition_end_date, condition_end_datetime, condition_type_concept_id, visit_occurrence_id,
			condition_source_value, condition_source_concept_id)
		SELECT row_number() OVER (ORDER BY d.hadm_id, d.seq_num), d.subject_id, coalesce(m.target_concept_id, 0), date(a.admittime),
			a.admittime, date(a.dischtime), a.dischtime, 32817, d.hadm_id, d.icd_code, coalesce(m.source_concept_id, 0)
		FROM src.diagnoses_icd d JOIN src.admissions a ON a.hadm_id = d.hadm_id
		LEFT JOIN temp.map_icd m ON m.icd_code = d.icd_code AND m.icd_version = d.icd_version
		ORDER BY d.hadm_id, d.seq_num`},
	{"drug_exposure", `INSERT INTO drug_exposure (drug_exposure_id, person_id, drug_concept_id, drug_exposure_start_date, drug_exposure_start_datetime,
			drug_exposure_end_date, drug_exposure_end_datetime, drug_type_concept_id, visit_occurrence_id, drug_source_value,
			drug_source_concept_id, route_source_value, dose_unit_source_value)
		SELECT row_number() OVER (ORDER BY p.hadm_id, p.pharmacy_id), p.subject_id, coalesce(m.drug_concept_id, 0),
			date(coalesce(p.starttime, a.admittime)), coalesce(p.starttime, a.admittime),
			date(coalesce(p.stoptime, p.starttime, a.admittime)), coalesce(p.stoptime, p.starttime, a.admittime),
			32817, p.hadm_id, p.drug, 0, p.route, p.dose_unit_rx
		FROM src.prescriptions p JOIN src.admissions a ON a.hadm_id = p.hadm_id
		LEFT JOIN temp.map_drug m ON m.formulary_drug_cd = p.formulary_drug_cd
		ORDER BY p.hadm_id, p.pharmacy_id`},
	{"measurement", `INSERT INTO measurement (measurement_id, person_id, measurement_concept_id, measurement_date, measurement_datetime,
			measurement_type_concept_id, value_as_number, unit_source_value, range_low, range_high, visit_occurrence_id,
			measurement_source_value, value_source_value)
		SELECT l.labevent_id, l.subject_id, m.concept_id, date(l.charttime), l.charttime, 32817, l.valuenum, l.valueuom,
			l.ref_range_lower, l.ref_range_upper, l.hadm_id, CAST(l.itemid AS TEXT), l.value
		FROM src.labevents l JOIN temp.map_lab m ON m.itemid = l.itemid
		ORDER BY l.labevent_id`},
	{"death", `INSERT INTO death (person_id, death_date, death_type_concept_id)
		SELECT subject_id, dod, 32817 FROM src.patients WHERE dod IS NOT NULL ORDER BY subject_id`},
}

// GenerateOMOP writes the demo OMOP source to path: the population of the
// demo database at from (made by Generate) as an OMOP CDM 5.4 instance
// (person, observation_period, visit_occurrence, condition_occurrence with
// SNOMED concepts mapped from the ICD codes, drug_exposure with RxNorm
// clinical drugs under their ingredients, measurement with LOINC concepts,
// death) with its vocabulary (see omop_vocab.go), the concept search index
// and clinsight_metadata. Diagnoses, drugs and lab tests outside the demo
// vocabulary keep their source code with concept 0, as unmapped codes do
// in OMOP; lab tests outside it are left out. Like Generate, it builds
// under a temporary name and renames into place, so an error or a
// cancelled ctx leaves no file behind.
func GenerateOMOP(ctx context.Context, from, path string, opts OMOPOptions) (Summary, error) {
	began := time.Now()
	sum := Summary{Path: path}
	if _, err := os.Stat(from); err != nil {
		return sum, fmt.Errorf("demo OMOP source: the demo database %s is needed: %w", from, err)
	}
	if !opts.Overwrite {
		if err := refuseExisting(path); err != nil {
			return sum, err
		}
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return sum, fmt.Errorf("demo OMOP source: %w", err)
	}
	tmpPath := tmp.Name()
	tmp.Close()
	ok := false
	defer func() {
		if !ok {
			removeDatabaseFiles(tmpPath)
		}
	}()
	tables, err := buildOMOP(ctx, from, tmpPath, opts)
	if err != nil {
		return sum, fmt.Errorf("demo OMOP source: %w", err)
	}
	if err := syncFile(tmpPath); err != nil {
		return sum, fmt.Errorf("demo OMOP source: %w", err)
	}
	if err := publish(tmpPath, path, opts.Overwrite); err != nil {
		return sum, fmt.Errorf("demo OMOP source: %w", err)
	}
	ok = true
	sum.Tables = tables
	sum.Elapsed = time.Since(began)
	return sum, nil
}

// buildOMOP writes the CDM into the empty file at path.
func buildOMOP(ctx context.Context, from, path string, opts OMOPOptions) (tables []TableCount, err error) {
	db, err := datasets.OpenReadWrite(ctx, path)
	if err != nil {
		return nil, err
	}
	defer func() {
		if cerr := db.Close(); cerr != nil && err == nil {
			err = fmt.Errorf("close: %w", cerr)
		}
	}()
	for _, p := range []string{"PRAGMA journal_mode=MEMORY", "PRAGMA synchronous=OFF", "PRAGMA temp_store=MEMORY"} {
		if _, err := db.ExecContext(ctx, p); err != nil {
			return nil, fmt.Errorf("%s: %w", p, err)
		}
	}
	// One connection (OpenReadWrite): the attachment holds for the
	// transaction below. The demo database is attached read-only, so that
	// closing it neither writes to it nor checkpoints its write-ahead log.
	abs, err := filepath.Abs(from)
	if err != nil {
		return nil, fmt.Errorf("open the demo database: %w", err)
	}
	srcURI := (&url.URL{Scheme: "file", Path: abs, RawQuery: "mode=ro"}).String()
	if _, err := db.ExecContext(ctx, "ATTACH DATABASE ? AS src", srcURI); err != nil {
		return nil, fmt.Errorf("open the demo database: %w", err)
	}
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	steps := len(omopTables) + 3
	report(opts.Progress, "omop", 0, int64(steps), "tables")
	if err := datasets.CreateOMOPSchema(ctx, tx); err != nil {
		return nil, err
	}
	vocabRows, err := writeOMOPVocabulary(ctx, tx)
	if err != nil {
		return nil, preferCtx(ctx, err)
	}
	tables = append(tables, vocabRows...)
	report(opts.Progress, "omop", 1, int64(steps), "tables")
	for i, t := range omopTables {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		res, err := tx.ExecContext(ctx, t.sql)
		if err != nil {
			return nil, preferCtx(ctx, fmt.Errorf("fill %s: %w", t.name, err))
		}
		n, _ := res.RowsAffected()
		tables = append(tables, TableCount{Name: t.name, Rows: n})
		report(opts.Progress, "omop", int64(i+2), int64(steps), "tables")
	}
	if err := writeOMOPMetadata(ctx, tx); err != nil {
		return nil, preferCtx(ctx, err)
	}
	if err := datasets.CreateOMOPIndexes(ctx, tx); err != nil {
		return nil, preferCtx(ctx, err)
	}
	if err := tx.Commit(); err != nil {
		return nil, preferCtx(ctx, fmt.Errorf("commit: %w", err))
	}
	if _, err := db.ExecContext(ctx, "DETACH DATABASE src"); err != nil {
		return nil, fmt.Errorf("close the demo database: %w", err)
	}
	n, err := datasets.BuildOMOPConceptIndex(ctx, db)
	if err != nil {
		return nil, preferCtx(ctx, err)
	}
	tables = append(tables, TableCount{Name: datasets.OMOPConceptIndex, Rows: n})
	report(opts.Progress, "omop", int64(steps), int64(steps), "tables")
	if _, err := db.ExecContext(ctx, "PRAGMA journal_mode=DELETE"); err != nil {
		return nil, fmt.Errorf("journal mode: %w", err)
	}
	return tables, nil
}

// vocabRow is one concept row to write.
type vocabRow struct {
	demoConcept
	standard string
}

// icdDotted writes an ICD code as OMOP's vocabularies do: "E11.9",
// "250.00", "V58.67", "E888.9".
func icdDotted(code string, version int) string {
	n := 3
	if version == 9 && strings.HasPrefix(code, "E") {
		n = 4
	}
	if len(code) <= n {
		return code
	}
	return code[:n] + "." + code[n:]
}

// writeOMOPVocabulary writes concept, concept_relationship,
// concept_ancestor, concept_synonym, vocabulary and domain, and the
// temporary mapping tables the event queries join.
func writeOMOPVocabulary(ctx context.Context, tx *sql.Tx) ([]TableCount, error) {
	stmts := []string{
		"CREATE TEMP TABLE map_icd (icd_code TEXT, icd_version INTEGER, source_concept_id INTEGER, target_concept_id INTEGER)",
		"CREATE TEMP TABLE map_drug (formulary_drug_cd TEXT PRIMARY KEY, drug_concept_id INTEGER)",
		"CREATE TEMP TABLE map_lab (itemid INTEGER PRIMARY KEY, concept_id INTEGER)",
	}
	for _, q := range stmts {
		if _, err := tx.ExecContext(ctx, q); err != nil {
			return nil, fmt.Errorf("vocabulary: %w", err)
		}
	}
	var concepts []vocabRow
	add := func(c demoConcept, standard string) { concepts = append(concepts, vocabRow{c, standard}) }

	// Standard concepts and their hierarchy.
	parent := map[int64][]int64{} // child → parents
	keys := make([]string, 0, len(demoConditions()))
	for k := range demoConditions() {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	target := map[string]int64{} // ICD-10 code → standard concept
	for _, k := range keys {
		c := demoConditions()[k]
		add(c, "S")
		for _, p := range c.parents {
			parent[c.id] = append(parent[c.id], demoConditions()[p].id)
		}
		for _, code := range c.sources {
			target[code] = c.id
		}
	}
	for _, c := range demoFixedConcepts {
		add(c, "S")
	}
	drugConcept := map[drugID]int64{}
	ingKeys := make([]string, 0, len(demoIngredients()))
	for k := range demoIngredients() {
		ingKeys = append(ingKeys, k)
	}
	sort.Strings(ingKeys)
	for _, k := range ingKeys {
		ing := demoIngredients()[k]
		add(ing.concept, "S")
		for _, d := range ing.drugs {
			spec := drugs[d]
			id := omopLocal + 2_000_000 + int64(d)
			name := ing.concept.name + " " + strings.ToLower(spec.prodStrength)
			add(demoConcept{id, name, "Drug", "Clinsight", "Clinical Drug", fmt.Sprintf("CS-D%d", d), nil, nil}, "S")
			parent[id] = append(parent[id], ing.concept.id)
			drugConcept[d] = id
		}
	}
	labIDs := make([]labID, 0, len(demoLabs()))
	for l := range demoLabs() {
		labIDs = append(labIDs, l)
	}
	slices.Sort(labIDs)
	for _, l := range labIDs {
		add(demoLabs()[l], "S")
		if _, err := tx.ExecContext(ctx, "INSERT INTO temp.map_lab VALUES (?, ?)", labItems[l].itemid, demoLabs()[l].id); err != nil {
			return nil, fmt.Errorf("vocabulary: %w", err)
		}
	}
	for d, id := range drugConcept {
		if _, err := tx.ExecContext(ctx, "INSERT OR IGNORE INTO temp.map_drug VALUES (?, ?)", drugs[d].formularyCD, id); err != nil {
			return nil, fmt.Errorf("vocabulary: %w", err)
		}
	}

	// ICD source concepts, mapped to the standard ones.
	type mapping struct{ src, dst int64 }
	var maps []mapping
	icd9Target := map[string]int64{}
	for i, c := range icd10Codes {
		id := omopLocal + 1_000_000 + int64(i)
		add(demoConcept{id, c.title, "Condition", "ICD10CM", "ICD10 code", icdDotted(c.code, 10), nil, nil}, "")
		dst := target[c.code]
		if dst != 0 {
			maps = append(maps, mapping{id, dst})
			if _, seen := icd9Target[c.icd9]; c.icd9 != "" && !seen {
				icd9Target[c.icd9] = dst
			}
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO temp.map_icd VALUES (?, 10, ?, ?)", c.code, id, dst); err != nil {
			return nil, fmt.Errorf("vocabulary: %w", err)
		}
	}
	for i, c := range icd9Codes {
		id := omopLocal + 1_100_000 + int64(i)
		add(demoConcept{id, c.title, "Condition", "ICD9CM", "ICD9 code", icdDotted(c.code, 9), nil, nil}, "")
		dst := icd9Target[c.code]
		if dst != 0 {
			maps = append(maps, mapping{id, dst})
		}
		if _, err := tx.ExecContext(ctx, "INSERT INTO temp.map_icd VALUES (?, 9, ?, ?)", c.code, id, dst); err != nil {
			return nil, fmt.Errorf("vocabulary: %w", err)
		}
	}

	ins, err := tx.PrepareContext(ctx, `INSERT INTO concept (concept_id, concept_name, domain_id, vocabulary_id, concept_class_id,
		standard_concept, concept_code, valid_start_date, valid_end_date, invalid_reason) VALUES (?, ?, ?, ?, ?, ?, ?, '1970-01-01', '2099-12-31', NULL)`)
	if err != nil {
		return nil, fmt.Errorf("vocabulary: %w", err)
	}
	defer ins.Close()
	for _, c := range concepts {
		std := any(nil)
		if c.standard != "" {
			std = c.standard
		}
		if _, err := ins.ExecContext(ctx, c.id, c.name, c.domain, c.vocab, c.class, std, c.code); err != nil {
			return nil, fmt.Errorf("vocabulary: concept %d: %w", c.id, err)
		}
	}

	rel, err := tx.PrepareContext(ctx, `INSERT INTO concept_relationship (concept_id_1, concept_id_2, relationship_id, valid_start_date, valid_end_date, invalid_reason)
		VALUES (?, ?, ?, '1970-01-01', '2099-12-31', NULL)`)
	if err != nil {
		return nil, fmt.Errorf("vocabulary: %w", err)
	}
	defer rel.Close()
	nrel := 0
	relate := func(a, b int64, r string) error {
		nrel++
		_, err := rel.ExecContext(ctx, a, b, r)
		return err
	}
	for _, m := range maps {
		if err := errors.Join(relate(m.src, m.dst, "Maps to"), relate(m.dst, m.src, "Mapped from")); err != nil {
			return nil, fmt.Errorf("vocabulary: %w", err)
		}
	}
	for _, c := range concepts {
		if c.standard == "S" {
			if err := relate(c.id, c.id, "Maps to"); err != nil { // standard concepts map to themselves
				return nil, fmt.Errorf("vocabulary: %w", err)
			}
		}
		for _, p := range parent[c.id] {
			if err := errors.Join(relate(c.id, p, "Is a"), relate(p, c.id, "Subsumes")); err != nil {
				return nil, fmt.Errorf("vocabulary: %w", err)
			}
		}
	}

	// concept_ancestor: the transitive closure of the hierarchy, with each
	// standard concept its own ancestor at level 0, as in OMOP.
	anc, err := tx.PrepareContext(ctx, "INSERT INTO concept_ancestor (ancestor_concept_id, descendant_concept_id, min_levels_of_separation, max_levels_of_separation) VALUES (?, ?, ?, ?)")
	if err != nil {
		return nil, fmt.Errorf("vocabulary: %w", err)
	}
	defer anc.Close()
	nanc := 0
	for _, c := range concepts {
		if c.standard != "S" {
			continue
		}
		levels := map[int64][2]int{c.id: {0, 0}}
		frontier := []int64{c.id}
		for depth := 1; len(frontier) > 0 && depth < 20; depth++ {
			var next []int64
			for _, id := range frontier {
				for _, p := range parent[id] {
					l, seen := levels[p]
					if !seen {
						levels[p] = [2]int{depth, depth}
						next = append(next, p)
					} else if depth > l[1] {
						levels[p] = [2]int{l[0], depth}
					}
				}
			}
			frontier = next
		}
		ancestors := make([]int64, 0, len(levels))
		for a := range levels {
			ancestors = append(ancestors, a)
		}
		slices.Sort(ancestors)
		for _, a := range ancestors {
			l := levels[a]
			if _, err := anc.ExecContext(ctx, a, c.id, l[0], l[1]); err != nil {
				return nil, fmt.Errorf("vocabulary: %w", err)
			}
			nanc++
		}
	}

	syn, err := tx.PrepareContext(ctx, "INSERT INTO concept_synonym (concept_id, concept_synonym_name, language_concept_id) VALUES (?, ?, 4180186)")
	if err != nil {
		return nil, fmt.Errorf("vocabulary: %w", err)
	}
	defer syn.Close()
	nsyn := 0
	synKeys := make([]string, 0, len(demoSynonyms()))
	for k := range demoSynonyms() {
		synKeys = append(synKeys, k)
	}
	sort.Strings(synKeys)
	for _, k := range synKeys {
		for _, s := range demoSynonyms()[k] {
			if _, err := syn.ExecContext(ctx, demoConditions()[k].id, s); err != nil {
				return nil, fmt.Errorf("vocabulary: %w", err)
			}
			nsyn++
		}
	}

	vocabs := [][2]string{{"SNOMED", "Systematic Nomenclature of Medicine - Clinical Terms"}, {"RxNorm", "RxNorm"},
		{"LOINC", "Logical Observation Identifiers Names and Codes"}, {"ICD10CM", "International Classification of Diseases, Tenth Revision, Clinical Modification"},
		{"ICD9CM", "International Classification of Diseases, Ninth Revision, Clinical Modification"},
		{"Clinsight", "Clinsight demo concepts (local, ids above 2,000,000,000)"},
		{"Gender", "OMOP Gender"}, {"Race", "Race and Ethnicity Code Set"}, {"Ethnicity", "OMOP Ethnicity"}, {"Visit", "OMOP Visit"}, {"Type Concept", "OMOP Type Concept"}}
	for _, v := range vocabs {
		if _, err := tx.ExecContext(ctx, "INSERT INTO vocabulary (vocabulary_id, vocabulary_name, vocabulary_reference, vocabulary_version, vocabulary_concept_id) VALUES (?, ?, 'Clinsight demo', 'demo "+Version+"', 0)", v[0], v[1]); err != nil {
			return nil, fmt.Errorf("vocabulary: %w", err)
		}
	}
	for _, d := range []string{"Condition", "Drug", "Measurement", "Procedure", "Observation", "Gender", "Race", "Ethnicity", "Visit", "Type Concept"} {
		if _, err := tx.ExecContext(ctx, "INSERT INTO domain (domain_id, domain_name, domain_concept_id) VALUES (?, ?, 0)", d, d); err != nil {
			return nil, fmt.Errorf("vocabulary: %w", err)
		}
	}
	return []TableCount{{"concept", int64(len(concepts))}, {"concept_relationship", int64(nrel)},
		{"concept_ancestor", int64(nanc)}, {"concept_synonym", int64(nsyn)}}, nil
}

// writeOMOPMetadata writes cdm_source and Clinsight's metadata table (the
// collection period the cohort pipeline reads).
func writeOMOPMetadata(ctx context.Context, tx *sql.Tx) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO cdm_source (cdm_source_name, cdm_source_abbreviation, cdm_holder, source_description,
		source_release_date, cdm_release_date, cdm_version, cdm_version_concept_id, vocabulary_version)
		VALUES ('Clinsight demo (OMOP)', 'demo-omop', 'Clinsight', 'Synthetic demo population of Clinsight (never real patients) converted to the OMOP CDM 5.4.', ?, ?, '5.4', 756265, ?)`,
		CollectionEnd, CollectionEnd, "demo "+Version); err != nil {
		return fmt.Errorf("cdm_source: %w", err)
	}
	if _, err := tx.ExecContext(ctx, "CREATE TABLE clinsight_metadata (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL)"); err != nil {
		return fmt.Errorf("clinsight_metadata: %w", err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO clinsight_metadata (key, value)
		SELECT key, value FROM src.clinsight_metadata WHERE key IN ('collection_start', 'collection_end', 'date_shift', 'synthetic', 'seed', 'patients', 'version')`); err != nil {
		return fmt.Errorf("clinsight_metadata: %w", err)
	}
	for _, kv := range [][2]string{
		{"generator", Generator + " (OMOP CDM 5.4)"},
		{"description", "Clinsight's synthetic demo population as an OMOP CDM 5.4 instance: SNOMED conditions mapped from ICD codes, RxNorm drugs, LOINC lab results."},
	} {
		if _, err := tx.ExecContext(ctx, "INSERT INTO clinsight_metadata (key, value) VALUES (?, ?)", kv[0], kv[1]); err != nil {
			return fmt.Errorf("clinsight_metadata: %w", err)
		}
	}
	return nil
}

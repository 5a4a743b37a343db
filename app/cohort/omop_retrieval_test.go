package cohort

import (
	"context"
	"fmt"
	"testing"

	"github.com/clinsight/clinsight/app/eval"
	"github.com/clinsight/clinsight/app/omop"
)

// omopRetrievalCases are OMOP questions with reference SQL, written for
// this test against the demo OMOP source (not taken from any evaluation
// set). The reference SQL says which tables a question needs; like the
// SQL the pipeline generates, it filters with the ids of the question's
// concept sets (descendants included), so it needs concept_ancestor only
// when the question is about the hierarchy itself.
var omopRetrievalCases = [][2]string{
	{"How many patients have type 2 diabetes?", "SELECT COUNT(DISTINCT person_id) FROM condition_occurrence WHERE condition_concept_id IN (201826, 37016354)"},
	{"How many patients take metformin?", "SELECT COUNT(DISTINCT person_id) FROM drug_exposure WHERE drug_concept_id IN (1503297, 2002000000)"},
	{"How many women have hypertension?", "SELECT COUNT(DISTINCT co.person_id) FROM condition_occurrence co JOIN person p ON p.person_id = co.person_id WHERE co.condition_concept_id = 320128 AND p.gender_concept_id = 8532"},
	{"How many patients are in the database?", "SELECT COUNT(*) FROM person"},
	{"How many male patients are there?", "SELECT COUNT(*) FROM person WHERE gender_concept_id = 8507"},
	{"What is the average year of birth of the patients?", "SELECT AVG(year_of_birth) FROM person"},
	{"How many patients died?", "SELECT COUNT(DISTINCT person_id) FROM death"},
	{"How many patients with heart failure died?", "SELECT COUNT(DISTINCT d.person_id) FROM death d JOIN condition_occurrence co ON co.person_id = d.person_id WHERE co.condition_concept_id = 316139"},
	{"How many hospital visits were there in 2020?", "SELECT COUNT(*) FROM visit_occurrence WHERE strftime('%Y', visit_start_date) = '2020'"},
	{"What is the average length of stay of inpatient visits in days?", "SELECT AVG(julianday(visit_end_date) - julianday(visit_start_date)) FROM visit_occurrence WHERE visit_concept_id = 9201"},
	{"How many patients had more than three hospital admissions?", "SELECT COUNT(*) FROM (SELECT person_id FROM visit_occurrence GROUP BY person_id HAVING COUNT(*) > 3)"},
	{"How many patients had an HbA1c measurement?", "SELECT COUNT(DISTINCT person_id) FROM measurement WHERE measurement_concept_id = 3004410"},
	{"How many patients had an HbA1c above 8 percent?", "SELECT COUNT(DISTINCT person_id) FROM measurement WHERE measurement_concept_id = 3004410 AND value_as_number > 8"},
	{"What is the mean creatinine value?", "SELECT AVG(value_as_number) FROM measurement WHERE measurement_concept_id = 3016723"},
	{"Which lab tests are measured most often?", "SELECT c.concept_name, COUNT(*) FROM measurement m JOIN concept c ON c.concept_id = m.measurement_concept_id GROUP BY c.concept_name ORDER BY 2 DESC LIMIT 10"},
	{"Which diagnoses are the most common?", "SELECT c.concept_name, COUNT(DISTINCT co.person_id) FROM condition_occurrence co JOIN concept c ON c.concept_id = co.condition_concept_id GROUP BY c.concept_name ORDER BY 2 DESC LIMIT 10"},
	{"Which medications are prescribed most often?", "SELECT c.concept_name, COUNT(*) FROM drug_exposure de JOIN concept c ON c.concept_id = de.drug_concept_id GROUP BY c.concept_name ORDER BY 2 DESC LIMIT 10"},
	{"How many patients with atrial fibrillation take apixaban or warfarin?", "SELECT COUNT(DISTINCT co.person_id) FROM condition_occurrence co WHERE co.condition_concept_id = 313217 AND co.person_id IN (SELECT person_id FROM drug_exposure WHERE drug_concept_id IN (2000000117, 2002000026, 2000000118, 2002000027))"},
	{"Which standard concept does the ICD-10 code E11.9 map to?", "SELECT c2.concept_id, c2.concept_name FROM concept c1 JOIN concept_relationship cr ON cr.concept_id_1 = c1.concept_id AND cr.relationship_id = 'Maps to' JOIN concept c2 ON c2.concept_id = cr.concept_id_2 WHERE c1.concept_code = 'E11.9'"},
	{"Which concepts are descendants of diabetes mellitus?", "SELECT c.concept_name FROM concept_ancestor ca JOIN concept c ON c.concept_id = ca.descendant_concept_id WHERE ca.ancestor_concept_id = 201820"},
	{"How many concepts does each vocabulary have?", "SELECT vocabulary_id, COUNT(*) FROM concept GROUP BY vocabulary_id"},
	{"Which vocabularies are loaded and in which version?", "SELECT vocabulary_id, vocabulary_version FROM vocabulary"},
	{"How long is the observation period of patients on average?", "SELECT AVG(julianday(observation_period_end_date) - julianday(observation_period_start_date)) FROM observation_period"},
	{"How many patients were observed for more than five years?", "SELECT COUNT(DISTINCT person_id) FROM observation_period WHERE julianday(observation_period_end_date) - julianday(observation_period_start_date) > 5 * 365.25"},
	{"How many patients with chronic kidney disease had a creatinine test?", "SELECT COUNT(DISTINCT m.person_id) FROM measurement m WHERE m.measurement_concept_id = 3016723 AND m.person_id IN (SELECT person_id FROM condition_occurrence WHERE condition_concept_id IN (2000000008, 443614, 443601, 443597, 443612, 193782))"},
	{"How many patients with pneumonia received ceftriaxone?", "SELECT COUNT(DISTINCT co.person_id) FROM condition_occurrence co JOIN drug_exposure de ON de.person_id = co.person_id WHERE co.condition_concept_id = 255848 AND de.drug_concept_id IN (1777806, 2002000032)"},
	{"What is the age distribution of patients with COPD at their diagnosis?", "SELECT CAST(strftime('%Y', co.condition_start_date) AS INTEGER) - p.year_of_birth AS age, COUNT(DISTINCT p.person_id) FROM condition_occurrence co JOIN person p ON p.person_id = co.person_id WHERE co.condition_concept_id = 2000000009 GROUP BY age"},
	{"How many patients older than 80 have dementia or Alzheimer's disease?", "SELECT COUNT(DISTINCT co.person_id) FROM condition_occurrence co JOIN person p ON p.person_id = co.person_id WHERE co.condition_concept_id = 378419 AND 2024 - p.year_of_birth > 80"},
	{"How many diagnoses were recorded during inpatient visits?", "SELECT COUNT(*) FROM condition_occurrence co JOIN visit_occurrence v ON v.visit_occurrence_id = co.visit_occurrence_id WHERE v.visit_concept_id = 9201"},
	{"How many drug exposures started in 2019?", "SELECT COUNT(*) FROM drug_exposure WHERE strftime('%Y', drug_exposure_start_date) = '2019'"},
	{"What period does this dataset cover?", "SELECT value FROM clinsight_metadata WHERE key IN ('collection_start', 'collection_end')"},
	{"Which CDM version is this database?", "SELECT cdm_version FROM cdm_source"},
	{"What is the race breakdown of the patients?", "SELECT race_concept_id, COUNT(*) FROM person GROUP BY race_concept_id"},
	{"Which patients had a troponin above the reference range?", "SELECT DISTINCT person_id FROM measurement WHERE measurement_concept_id = 2000000205 AND value_as_number > range_high"},
}

// TestOMOPRetrievalRecall measures schema retrieval on the demo OMOP
// source as the pipeline does it without a model: the lexical fallback
// embedder's tables, merged with the tables of the concept sets the
// deterministic extractor finds (MergeConceptTables); recall@5 of the
// tables each reference query reads, floor 0.95. The lexical retrieval
// alone is logged for comparison.
func TestOMOPRetrievalRecall(t *testing.T) {
	path := omopDemoPath(t)
	ix, runner := demoIndex(t, path)
	res, _ := omopResolver(t)
	ctx := context.Background()
	var items []eval.EHRSQLItem
	for i, c := range omopRetrievalCases {
		if _, err := runner.Query(ctx, c[1]); err != nil {
			t.Fatalf("reference SQL of %q does not run: %v", c[0], err)
		}
		items = append(items, eval.EHRSQLItem{ID: fmt.Sprint(i + 1), Question: c[0], GoldSQL: c[1], Answerable: true})
	}
	lexical, err := EvaluateRetrieval(ctx, ix, items, 5)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("lexical retrieval alone: recall@5 %.3f", lexical.RecallAtK)
	rep := &RetrievalReport{K: 5, Embedder: ix.Embedder() + " + concept sets"}
	all, sum := 0, 0.0
	for _, it := range items {
		gold := ReferencedTables(it.GoldSQL, ix.Catalog())
		r, err := ix.Retrieve(ctx, it.Question, 5)
		if err != nil {
			t.Fatal(err)
		}
		sets, _, err := res.ResolveTerms(ctx, omop.ExtractTerms(it.Question))
		if err != nil {
			t.Fatal(err)
		}
		MergeConceptTables(r, ix.Catalog(), sets, 5)
		rec := eval.RecallAtK(r.Names(), gold, 5)
		sum += rec
		if rec == 1 {
			all++
		}
		rep.Cases = append(rep.Cases, RetrievalCase{ID: it.ID, Question: it.Question, Gold: gold, Retrieved: r.Names(), Recall: rec})
	}
	rep.N = len(rep.Cases)
	rep.RecallAtK, rep.AllTablesShare = sum/float64(rep.N), float64(all)/float64(rep.N)
	for _, c := range rep.Cases {
		if c.Recall < 1 {
			t.Logf("recall %.2f: %q needs %v, retrieved %v", c.Recall, c.Question, c.Gold, c.Retrieved)
		}
	}
	t.Logf("OMOP demo: %d questions, recall@5 %.3f, all tables retrieved for %.0f%% (%s)", rep.N, rep.RecallAtK, 100*rep.AllTablesShare, rep.Embedder)
	if rep.N < 30 || rep.RecallAtK < 0.95 {
		t.Errorf("%d questions, recall@5 %.3f; want at least 30 and 0.95", rep.N, rep.RecallAtK)
	}
}

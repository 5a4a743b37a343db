package omop

import (
	"context"
	"strings"
	"testing"
)

// demoPhrases resolve against the demo OMOP source's vocabulary. Written
// for this test: lay terms, abbreviations, misspellings, SNOMED, ICD-10-CM,
// ICD-9-CM and LOINC codes.
var demoPhrases = []phraseCase{
	{"type 2 diabetes", "", 201826},
	{"T2DM", "", 201826},
	{"adult onset diabetes", "", 201826},
	{"E11.9", "", 201826},
	{"E119", "", 201826},
	{"250.00", "", 201826},
	{"44054006", "", 201826},
	{"diabetes", "Condition", 201820},
	{"type 1 diabetes", "", 2000000001},
	{"diabetic kidney disease", "", 192279},
	{"high blood pressure", "", 320128},
	{"HTN", "", 320128},
	{"I10", "", 320128},
	{"heart attack", "", 4329847},
	{"MI", "", 4329847},
	{"NSTEMI", "", 4329847},
	{"I21.4", "", 4329847},
	{"heart failure", "", 316139},
	{"CHF", "", 2000000005},
	{"afib", "", 313217},
	{"atrial fibrilation", "", 313217},
	{"CKD", "", 2000000008},
	{"chronic kidney disease stage 3", "", 443597},
	{"kidney failure", "", 193782},
	{"ESRD", "", 193782},
	{"pneumonia", "", 255848},
	{"pnuemonia", "", 255848},
	{"sepsis", "", 132797},
	{"septic shock", "", 196236},
	{"COPD", "", 2000000009},
	{"emphysema or COPD", "Condition", 2000000009},
	{"asthma", "", 317009},
	{"anaemia", "", 439777},
	{"high cholesterol", "", 432867},
	{"UTI", "", 81902},
	{"stroke", "", 381316},
	{"depression", "", 4152280},
	{"alzheimers", "", 378419},
	{"gout", "", 440674},
	{"acid reflux", "", 318800},
	{"breast cancer", "", 4112853},
	{"lung cancer", "", 2000000011},
	{"covid", "", 37311061},
	{"DVT", "", 44782746},
	{"pulmonary embolism", "", 45768439},
	{"broken hip", "", 4230399},
	{"metformin", "", 1503297},
	{"metformn", "Drug", 1503297},
	{"6809", "", 1503297},
	{"lisinopril", "", 1308216},
	{"aspirin", "", 1112807},
	{"blood thinner", "", 2000000118},
	{"insulin glargine", "", 2000000103},
	{"atorvastatin", "", 2000000113},
	{"HCTZ", "", 2000000108},
	{"tylenol", "", 2000000120},
	{"HbA1c", "", 3004410},
	{"4548-4", "", 3004410},
	{"creatinine", "Measurement", 3016723},
	{"LDL cholesterol", "", 2000000201},
	{"troponin", "", 2000000205},
}

// TestResolvePhrasesDemo measures the top-3 rate on the demo OMOP source;
// the floor is 90%.
func TestResolvePhrasesDemo(t *testing.T) {
	db := demoDB(t)
	r := resolver(t, db)
	ctx := context.Background()
	top1, top3 := 0, 0
	for _, tc := range demoPhrases {
		cands, err := r.Search(ctx, NewTerm(tc.phrase, tc.domain), 3)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		hit := false
		for i, c := range cands {
			got = append(got, c.Name)
			if c.ID == tc.want {
				hit = true
				if i == 0 {
					top1++
				}
			}
		}
		if hit {
			top3++
		} else {
			t.Logf("miss: %q → %s (want concept %d)", tc.phrase, strings.Join(got, " | "), tc.want)
		}
	}
	n := len(demoPhrases)
	rate := float64(top3) / float64(n)
	t.Logf("demo: %d phrases, top-1 %d (%.0f%%), top-3 %d (%.1f%%)", n, top1, 100*float64(top1)/float64(n), top3, 100*rate)
	if n < 40 || rate < 0.9 {
		t.Errorf("%d phrases, top-3 rate %.1f%%; want at least 40 and 90%%", n, 100*rate)
	}
}

// TestDemoDescendantsFromAncestor checks descendants from concept_ancestor:
// "diabetes mellitus" includes type 2 diabetes and its complications, so it
// finds more persons than the concept alone.
func TestDemoDescendantsFromAncestor(t *testing.T) {
	db := demoDB(t)
	r := resolver(t, db)
	ctx := context.Background()
	set, ok, err := r.Resolve(ctx, NewTerm("diabetes mellitus", "Condition"))
	if err != nil || !ok || set.Items[0].ID != 201820 {
		t.Fatalf("diabetes mellitus: %+v %v %v", set.Items, ok, err)
	}
	var ref int64
	if err := db.QueryRow(`SELECT count(DISTINCT person_id) FROM condition_occurrence WHERE condition_concept_id IN
		(SELECT descendant_concept_id FROM concept_ancestor WHERE ancestor_concept_id = 201820)`).Scan(&ref); err != nil {
		t.Fatal(err)
	}
	t.Logf("diabetes mellitus: %d descendants (%s); persons %d with the concept alone, %d with descendants", set.Descendants, set.DescendantSource, set.PersonsDirect, set.Persons)
	if set.DescendantSource != "concept_ancestor" || set.Descendants < 4 {
		t.Errorf("descendants %d from %q", set.Descendants, set.DescendantSource)
	}
	if set.Persons != ref || set.Persons <= set.PersonsDirect {
		t.Errorf("persons %d (direct %d), reference %d", set.Persons, set.PersonsDirect, ref)
	}
	// An ICD-10-CM code (non-standard) reaches its standard concept.
	cands, err := r.Search(ctx, NewTerm("I21.4", ""), 1)
	if err != nil || len(cands) == 0 || cands[0].ID != 4329847 || cands[0].MappedFrom == nil || cands[0].MappedFrom.Vocabulary != "ICD10CM" {
		t.Errorf("I21.4 → %+v (%v)", cands, err)
	}
}

// TestTemplatesDemo answers the template-shaped questions of the demo
// without a model and compares them with reference queries written by
// hand for this test.
func TestTemplatesDemo(t *testing.T) {
	db := demoDB(t)
	r := resolver(t, db)
	t2dm := `(SELECT descendant_concept_id FROM concept_ancestor WHERE ancestor_concept_id = 201826)`
	metformin := `(SELECT descendant_concept_id FROM concept_ancestor WHERE ancestor_concept_id = 1503297)`
	tests := []struct {
		q    string
		kind TemplateKind
		ref  string
	}{
		{"How many patients have type 2 diabetes?", TemplateCount,
			`SELECT count(*) FROM person p WHERE EXISTS (SELECT 1 FROM condition_occurrence co WHERE co.person_id = p.person_id AND co.condition_concept_id IN ` + t2dm + `)`},
		{"How many patients have type 2 diabetes and take metformin?", TemplateCount,
			`SELECT count(*) FROM person p WHERE EXISTS (SELECT 1 FROM condition_occurrence co WHERE co.person_id = p.person_id AND co.condition_concept_id IN ` + t2dm + `)
			 AND EXISTS (SELECT 1 FROM drug_exposure de WHERE de.person_id = p.person_id AND de.drug_concept_id IN ` + metformin + `)`},
		{"How many patients with heart failure are on furosemide, by gender?", TemplateByGender,
			`SELECT CASE p.gender_concept_id WHEN 8507 THEN 'MALE' ELSE 'FEMALE' END, count(*) FROM person p
			 WHERE EXISTS (SELECT 1 FROM condition_occurrence co JOIN concept_ancestor ca ON ca.descendant_concept_id = co.condition_concept_id WHERE co.person_id = p.person_id AND ca.ancestor_concept_id = 316139)
			 AND EXISTS (SELECT 1 FROM drug_exposure de JOIN concept_ancestor ca ON ca.descendant_concept_id = de.drug_concept_id WHERE de.person_id = p.person_id AND ca.ancestor_concept_id = 2000000111)
			 GROUP BY p.gender_concept_id`},
		{"Number of patients with COPD by gender", TemplateByGender,
			`SELECT CASE p.gender_concept_id WHEN 8507 THEN 'MALE' ELSE 'FEMALE' END, count(*) FROM person p
			 WHERE EXISTS (SELECT 1 FROM condition_occurrence co WHERE co.person_id = p.person_id AND co.condition_concept_id = 2000000009)
			 GROUP BY p.gender_concept_id`},
	}
	for _, tc := range tests {
		sets, unresolved := resolveQuestion(t, r, tc.q)
		tmpl, ok, reason := MatchTemplate(tc.q, sets, unresolved)
		if !ok || tmpl.Kind != tc.kind {
			t.Errorf("%q: template %v %q: %s", tc.q, ok, tmpl.Kind, reason)
			continue
		}
		got := runRows(t, demoOMOP.path, tmpl.SQL)
		want := refRows(t, db, tc.ref)
		t.Logf("%q → %v (reference %v)", tc.q, got, want)
		if strings.Join(got, ";") != strings.Join(want, ";") || len(got) == 0 || got[0] == "0" {
			t.Errorf("%q: template %v, reference %v\n%s", tc.q, got, want, tmpl.SQL)
		}
	}

	// Age bands at the first type 2 diabetes diagnosis, by a reference
	// query written with julianday instead of strftime.
	q := "How many patients have T2DM by age band?"
	sets, unresolved := resolveQuestion(t, r, q)
	tmpl, ok, reason := MatchTemplate(q, sets, unresolved)
	if !ok || tmpl.Kind != TemplateByAgeBand {
		t.Fatalf("%q: %v %s", q, ok, reason)
	}
	ref := `SELECT (age / 10) * 10 || '' , count(*) FROM (
		SELECT p.person_id, CAST(substr(min(co.condition_start_date), 1, 4) AS INTEGER) - p.year_of_birth AS age
		FROM person p JOIN condition_occurrence co ON co.person_id = p.person_id
		WHERE co.condition_concept_id IN ` + t2dm + ` GROUP BY p.person_id) GROUP BY age / 10`
	want := refRows(t, db, ref)
	got := runRows(t, demoOMOP.path, tmpl.SQL)
	for i := range got { // "40-49=12" → "40=12"
		band, n, _ := strings.Cut(got[i], "=")
		lo, _, _ := strings.Cut(band, "-")
		got[i] = lo + "=" + n
	}
	if strings.Join(got, ";") != strings.Join(want, ";") {
		t.Errorf("age bands: template %v, reference %v", got, want)
	}
}

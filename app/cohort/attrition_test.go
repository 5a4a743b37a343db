package cohort

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/internal/progress"
)

// chainSQL is a cohort on the demo written as a chain of four criteria
// after the base population, as the generation prompt asks for it.
const chainSQL = `WITH
-- all admitted patients
base AS (SELECT DISTINCT p.subject_id, p.gender, p.anchor_age FROM patients p JOIN admissions a ON a.subject_id = p.subject_id),
-- women
women AS (SELECT * FROM base WHERE gender = 'F'),
-- aged 65 or more
aged_65_plus AS (SELECT * FROM women WHERE anchor_age >= 65),
/* with hypertension, coronary disease or acute kidney failure */
diagnosed AS (SELECT * FROM aged_65_plus WHERE subject_id IN (SELECT subject_id FROM diagnoses_icd WHERE icd_code = 'I10' OR icd_code LIKE 'I25%' OR icd_code LIKE 'N17%')),
on_acetaminophen AS (SELECT * FROM diagnosed WHERE diagnosed.subject_id IN (SELECT subject_id FROM prescriptions WHERE LOWER(drug) LIKE '%acetaminophen%'))
SELECT COUNT(DISTINCT subject_id) AS patients FROM on_acetaminophen`

// Reference queries of each step, written by hand without the chain.
const (
	refBase   = `SELECT COUNT(DISTINCT subject_id) FROM admissions`
	refWomen  = `SELECT COUNT(*) FROM patients WHERE gender = 'F' AND subject_id IN (SELECT subject_id FROM admissions)`
	refAged   = `SELECT COUNT(*) FROM patients WHERE gender = 'F' AND anchor_age >= 65 AND subject_id IN (SELECT subject_id FROM admissions)`
	refDiag   = `SELECT COUNT(DISTINCT p.subject_id) FROM patients p JOIN admissions a ON a.subject_id = p.subject_id JOIN diagnoses_icd d ON d.subject_id = p.subject_id WHERE p.gender = 'F' AND p.anchor_age >= 65 AND (d.icd_code = 'I10' OR d.icd_code LIKE 'I25%' OR d.icd_code LIKE 'N17%')`
	refDrug   = `SELECT COUNT(DISTINCT p.subject_id) FROM patients p JOIN diagnoses_icd d ON d.subject_id = p.subject_id JOIN prescriptions r ON r.subject_id = p.subject_id WHERE p.gender = 'F' AND p.anchor_age >= 65 AND (d.icd_code = 'I10' OR d.icd_code LIKE 'I25%' OR d.icd_code LIKE 'N17%') AND LOWER(r.drug) LIKE '%acetaminophen%'`
	refDiagNA = `SELECT COUNT(DISTINCT p.subject_id) FROM patients p JOIN diagnoses_icd d ON d.subject_id = p.subject_id WHERE p.gender = 'F' AND (d.icd_code = 'I10' OR d.icd_code LIKE 'I25%' OR d.icd_code LIKE 'N17%')`
	refDrugNA = `SELECT COUNT(DISTINCT p.subject_id) FROM patients p JOIN diagnoses_icd d ON d.subject_id = p.subject_id JOIN prescriptions r ON r.subject_id = p.subject_id WHERE p.gender = 'F' AND (d.icd_code = 'I10' OR d.icd_code LIKE 'I25%' OR d.icd_code LIKE 'N17%') AND LOWER(r.drug) LIKE '%acetaminophen%'`
)

// TestAttritionOfAGeneratedChain is issue 19 item 1's acceptance: the
// scripted model writes a chain of four criteria on the demo; the patients
// after each step equal hand-written reference queries; switching a
// criterion off counts again with no model request; a single statistic
// has no attrition.
func TestAttritionOfAGeneratedChain(t *testing.T) {
	f := newFixture(t, Config{})
	ctx := context.Background()
	want := []int64{}
	for _, q := range []string{refBase, refWomen, refAged, refDiag, refDrug} {
		want = append(want, f.scalar(t, q).(int64))
	}
	for i := 1; i < len(want); i++ { // every criterion removes someone
		if want[i] >= want[i-1] || want[i] == 0 {
			t.Fatalf("the reference counts %v do not make a test: each criterion should remove some patients", want)
		}
	}
	f.srv.QueueChat(classify("answerable", "a cohort of the demo", chainSQL), text("The cohort is described."))
	var events []Event
	ans, err := f.p.Ask(ctx, Request{Question: "Women aged 65 or more with hypertension, coronary disease or acute kidney failure given acetaminophen"}, func(e Event) {
		events = append(events, e)
	})
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != StatusAnswered || ans.Attrition == nil {
		t.Fatalf("status %s, attrition %+v, message %q", ans.Status, ans.Attrition, ans.Message)
	}
	// The generation prompt asks for the chain.
	reqs := f.srv.ChatRequests()
	if sys := reqs[0].Messages[0].Content; !strings.Contains(sys, "ordered list of criteria: a WITH chain") {
		t.Error("the generation prompt does not ask for a chain of criteria")
	}
	a := ans.Attrition
	if a.Error != "" || a.PatientColumn != "subject_id" || len(a.Steps) != 5 || a.MinCell != 0 {
		t.Fatalf("attrition = %+v", a)
	}
	words := []string{"all admitted patients", "women", "aged 65 or more", "with hypertension, coronary disease or acute kidney failure", "on acetaminophen"}
	for i, s := range a.Steps {
		if s.Number != i || s.Criterion != words[i] || !s.On || s.Patients.N != want[i] {
			t.Errorf("step %d = %+v (%s), want %q with %d patients", i, s.ChainStep, s.Patients, words[i], want[i])
		}
		removed := int64(0)
		if i > 0 {
			removed = want[i-1] - want[i]
		}
		if s.Removed.N != removed || s.PercentOfBase == nil || *s.PercentOfBase != 100*float64(want[i])/float64(want[0]) {
			t.Errorf("step %d removed %s (want %d), %% of base %v", i, s.Removed, removed, s.PercentOfBase)
		}
	}
	found := false
	for _, e := range events {
		found = found || (e.Kind == EventAttrition && e.Attrition == a)
	}
	if !found {
		t.Error("no attrition event")
	}
	if got := f.scalar(t, "SELECT 1"); got != int64(1) {
		t.Fatal(got)
	}
	// Switch "aged 65 or more" (step 2) off: counted again, no model request.
	var reports []progress.Report
	b, err := f.p.Attrition(ctx, ans, []int{2}, func(r progress.Report) { reports = append(reports, r) })
	if err != nil {
		t.Fatal(err)
	}
	if n := len(f.srv.ChatRequests()); n != len(reqs) {
		t.Fatalf("switching a criterion off sent %d model requests", n-len(reqs))
	}
	wantOff := []int64{want[0], want[1], -1, f.scalar(t, refDiagNA).(int64), f.scalar(t, refDrugNA).(int64)}
	if wantOff[3] <= want[3] {
		t.Fatalf("the reference without the age criterion (%d) should exceed %d", wantOff[3], want[3])
	}
	for i, s := range b.Steps {
		if s.Patients.N != wantOff[i] || s.On != (i != 2) {
			t.Errorf("without step 2: step %d on %v, %s patients, want %d", i, s.On, s.Patients, wantOff[i])
		}
	}
	if b.Steps[3].Removed.N != wantOff[1]-wantOff[3] {
		t.Errorf("without step 2, step 3 removed %s, want %d (from step 1)", b.Steps[3].Removed, wantOff[1]-wantOff[3])
	}
	if len(b.Off) != 1 || b.Off[0] != 2 || strings.Contains(b.SQL, "aged_65_plus") || !strings.Contains(b.SQL, "FROM women WHERE subject_id IN") {
		t.Errorf("off %v, SQL without step 2:\n%s", b.Off, b.SQL)
	}
	if res, err := f.runner.Query(ctx, b.SQL); err != nil || res.Rows[0][0] != wantOff[4] {
		t.Errorf("the statement without step 2 gives %v (%v), want %d", res, err, wantOff[4])
	}
	if len(reports) == 0 || reports[len(reports)-1].Done != 4 || reports[len(reports)-1].Total != 4 {
		t.Errorf("progress = %+v", reports)
	}
	// The last criterion off: the final statement reads from step 3.
	c, err := f.p.Attrition(ctx, ans, []int{4, 2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if fin := c.Final(); fin == nil || fin.Number != 3 || fin.Patients.N != wantOff[3] || len(c.Off) != 2 || c.Off[0] != 2 {
		t.Errorf("final step %+v, off %v", fin, c.Off)
	}
	if res, err := f.runner.Query(ctx, c.SQL); err != nil || res.Rows[0][0] != wantOff[3] {
		t.Errorf("the statement without steps 2 and 4 gives %v (%v), want %d", res, err, wantOff[3])
	}
	if _, err := f.p.Attrition(ctx, ans, []int{0}, nil); err == nil {
		t.Error("the base population was switched off")
	}
	if _, err := f.p.Attrition(ctx, ans, []int{5}, nil); err == nil {
		t.Error("a step that does not exist was switched off")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := f.p.Attrition(cctx, ans, nil, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
	if n := len(f.srv.ChatRequests()); n != len(reqs) {
		t.Fatalf("counting sent %d model requests", n-len(reqs))
	}

	// A single statistic is no cohort: no attrition.
	f.srv.QueueChat(classify("answerable", "patients has gender", femaleSQL), text("There are some."))
	one, err := f.p.Ask(ctx, Request{Question: "How many female patients are there?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if one.Status != StatusAnswered || one.Attrition != nil {
		t.Errorf("single statistic: status %s, attrition %+v", one.Status, one.Attrition)
	}
	for _, s := range one.Stages {
		if s.Name == "attrition" {
			t.Error("the single statistic went through the attrition stage")
		}
	}
	if _, err := f.p.Attrition(ctx, one, nil, nil); !errors.Is(err, ErrNoChain) {
		t.Errorf("attrition of a single statistic: %v", err)
	}
}

// TestAttritionUnderAMinimumCellSize: an aggregate-only source's counts
// from 1 to k−1 read <k, on screen and in JSON, and the exact value is
// nowhere in the JSON.
func TestAttritionUnderAMinimumCellSize(t *testing.T) {
	f := newFixture(t, Config{MinPersons: 20})
	ans := &Answer{SQL: chainSQL}
	a, err := f.p.Attrition(context.Background(), ans, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	exact, err := ComputeAttrition(context.Background(), f.runner, chainSQL, "demo", nil, 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	var buf strings.Builder
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // "<20" as written, as the CLI's --json does
	if err := enc.Encode(a); err != nil {
		t.Fatal(err)
	}
	data := buf.String()
	hid := 0
	for i, s := range a.Steps {
		e := exact.Steps[i]
		switch {
		case e.Patients.N >= 1 && e.Patients.N < 20:
			hid++
			if s.Patients.String() != "<20" || s.Patients.N != 0 || s.PercentOfBase != nil {
				t.Errorf("step %d: %d patients shown %s (%v)", i, e.Patients.N, s.Patients, s.PercentOfBase)
			}
		case s.Patients != e.Patients:
			t.Errorf("step %d: %s, want %s", i, s.Patients, e.Patients)
		}
		if e.Removed.N >= 1 && e.Removed.N < 20 && !s.Removed.Hidden() { // "<20" or "—" (hideSmallDifferences)
			t.Errorf("step %d removed %d, shown %s", i, e.Removed.N, s.Removed)
		}
	}
	if hid == 0 || a.MinCell != 20 || !strings.Contains(data, `"patients":"<20"`) {
		t.Fatalf("hidden %d, JSON %s", hid, data)
	}
	var back Attrition
	if err := json.Unmarshal([]byte(data), &back); err != nil || back.Steps[4].Patients != a.Steps[4].Patients {
		t.Errorf("JSON round trip: %v, %+v", err, back.Steps[4].Patients)
	}
	if u := exact.Under(20); u.Steps[4].Patients != a.Steps[4].Patients {
		t.Errorf("Under(20) = %s, want %s", u.Steps[4].Patients, a.Steps[4].Patients)
	}
}

func TestParseChain(t *testing.T) {
	chains := []struct {
		name, sql string
		steps     []string
		words     []string
	}{
		{"the acceptance chain", chainSQL, []string{"base", "women", "aged_65_plus", "diagnosed", "on_acetaminophen"}, nil},
		{"quoted names, column list, MATERIALIZED, semicolon",
			`with "Base" (id) as materialized (select subject_id from patients), "old women" as not materialized (select * from "Base" where id in (select subject_id from patients where gender = 'F')) select count(*) from "old women";`,
			[]string{"Base", "old women"}, []string{"Base", "old women"}},
		{"names in words", "WITH all_patients AS (SELECT subject_id FROM patients), age_over_65 AS (SELECT * FROM all_patients WHERE 1) SELECT * FROM age_over_65",
			[]string{"all_patients", "age_over_65"}, []string{"all patients", "age over 65"}},
		{"a step also reads the base", "WITH b AS (SELECT subject_id FROM patients), c AS (SELECT * FROM b), d AS (SELECT * FROM c WHERE subject_id NOT IN (SELECT subject_id FROM b)) SELECT COUNT(*) FROM d JOIN b USING (subject_id)",
			[]string{"b", "c", "d"}, nil},
	}
	for _, c := range chains {
		ch, err := ParseChain(c.sql)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		var names, words []string
		for _, s := range ch.Steps() {
			names, words = append(names, s.Name), append(words, s.Criterion)
		}
		if strings.Join(names, "|") != strings.Join(c.steps, "|") || (c.words != nil && strings.Join(words, "|") != strings.Join(c.words, "|")) {
			t.Errorf("%s: steps %q, words %q", c.name, names, words)
		}
	}
	notChains := map[string]string{
		"a single statistic":          femaleSQL,
		"a single step":               "WITH b AS (SELECT subject_id FROM patients) SELECT COUNT(*) FROM b",
		"a step not reading the last": "WITH b AS (SELECT subject_id FROM patients), c AS (SELECT subject_id FROM admissions) SELECT * FROM c",
		"final not reading the last":  "WITH b AS (SELECT subject_id FROM patients), c AS (SELECT * FROM b) SELECT * FROM b",
		"recursive":                   "WITH RECURSIVE b AS (SELECT 1 AS subject_id), c AS (SELECT * FROM b) SELECT * FROM c",
		"a name only in a string":     "WITH b AS (SELECT subject_id FROM patients), c AS (SELECT 'b' AS subject_id) SELECT * FROM c",
		"a name only as a function":   "WITH b AS (SELECT subject_id FROM patients), c AS (SELECT b(1) AS subject_id) SELECT * FROM c",
		"two statements":              "WITH b AS (SELECT 1), c AS (SELECT * FROM b) SELECT * FROM c; SELECT 1",
		"cut short":                   "WITH b AS (SELECT subject_id FROM patients), c AS (SELECT * FROM b",
		"no final select":             "WITH b AS (SELECT 1), c AS (SELECT * FROM b) DELETE FROM c",
		"a repeated name":             "WITH b AS (SELECT 1), B AS (SELECT * FROM b) SELECT * FROM b",
	}
	for name, sql := range notChains {
		if _, err := ParseChain(sql); !errors.Is(err, ErrNoChain) {
			t.Errorf("%s: %v", name, err)
		}
	}
	// Without: references to a step switched off read the step before it
	// that is on; strings, functions and columns after a dot are left.
	ch, err := ParseChain("WITH b AS (SELECT subject_id FROM patients), c AS (SELECT *, 'c' AS c_name FROM b WHERE x.c = 1), d AS (SELECT * FROM c WHERE c.subject_id > 0) SELECT COUNT(*) FROM d")
	if err != nil {
		t.Fatal(err)
	}
	got, err := ch.Without([]int{1})
	if err != nil {
		t.Fatal(err)
	}
	if want := "WITH b AS (SELECT subject_id FROM patients),\nd AS (SELECT * FROM b WHERE b.subject_id > 0)\nSELECT COUNT(*) FROM d"; got != want {
		t.Errorf("without step 1:\n%s\nwant\n%s", got, want)
	}
	if got, _ := ch.Without([]int{1, 2}); got != "WITH b AS (SELECT subject_id FROM patients)\nSELECT COUNT(*) FROM b" {
		t.Errorf("without steps 1 and 2:\n%s", got)
	}
}

// FuzzParseChain: any text parses or is refused without panicking, and a
// chain rebuilt with a step switched off is a chain one step shorter.
func FuzzParseChain(f *testing.F) {
	f.Add(chainSQL)
	f.Add("WITH b AS (SELECT 1), c AS (SELECT * FROM b) SELECT * FROM c")
	f.Add(`with "a""b" (x) as (select 1), c as materialized (select * from "a""b" /* c */) select * from c -- end`)
	f.Add("WITH b AS (SELECT '(' FROM t), c AS (SELECT * FROM b WHERE x = ')') SELECT * FROM c")
	f.Fuzz(func(t *testing.T, sql string) {
		c, err := ParseChain(sql)
		if err != nil {
			if !errors.Is(err, ErrNoChain) {
				t.Fatalf("error %v is not ErrNoChain", err)
			}
			return
		}
		n := len(c.Steps())
		if n < 2 || n > MaxChainSteps {
			t.Fatalf("%d steps", n)
		}
		same, err := c.Without(nil)
		if err != nil {
			t.Fatal(err)
		}
		if c2, err := ParseChain(same); err != nil || len(c2.Steps()) != n {
			t.Fatalf("rebuilt %q: %v", same, err)
		}
		if n > 2 {
			less, err := c.Without([]int{n - 1})
			if err != nil {
				t.Fatal(err)
			}
			if c3, err := ParseChain(less); err != nil || len(c3.Steps()) != n-1 {
				t.Fatalf("without the last step %q: %v", less, err)
			}
		}
	})
}

// TestDefinitionKeepsTheCriteriaInWords: a saved definition of a cohort
// written as criteria lists them in words, base population first.
func TestDefinitionKeepsTheCriteriaInWords(t *testing.T) {
	f := newFixture(t, Config{})
	a, err := f.p.Attrition(context.Background(), &Answer{SQL: chainSQL}, []int{2}, nil)
	if err != nil {
		t.Fatal(err)
	}
	d, err := NewDefinition(&Answer{Question: "older women", SQL: chainSQL, Attrition: a}, "", DefinitionSource{Name: "demo"},
		DefinitionCounts{Rows: 1, Patients: -1}, time.Date(2026, 11, 26, 8, 0, 0, 0, time.UTC))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"all admitted patients", "women", "aged 65 or more", "with hypertension, coronary disease or acute kidney failure", "on acetaminophen"}
	if !slices.Equal(d.Criteria, want) {
		t.Errorf("criteria %q, want %q", d.Criteria, want)
	}
}

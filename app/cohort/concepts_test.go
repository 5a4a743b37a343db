package cohort

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/clinsight/clinsight/app/omop"
	"github.com/clinsight/clinsight/datasets"
	"github.com/clinsight/clinsight/datasets/demo"
	"github.com/clinsight/clinsight/localllm/ollamatest"
	"github.com/ollama/ollama/api"
	"github.com/xuri/excelize/v2"
)

// omopDemo is the demo OMOP source (300 patients) shared by these tests.
var omopDemo struct {
	once sync.Once
	path string
	err  error
}

// omopDemoPath generates the demo population and its OMOP source once.
func omopDemoPath(t testing.TB) string {
	t.Helper()
	omopDemo.once.Do(func() {
		ctx := context.Background()
		from := filepath.Join(testTempDir, "omop-src.sqlite")
		if _, err := demo.Generate(ctx, from, demo.Options{Seed: demo.DefaultSeed, Patients: 300}); err != nil {
			omopDemo.err = err
			return
		}
		omopDemo.path = filepath.Join(testTempDir, "omop.sqlite")
		_, omopDemo.err = demo.GenerateOMOP(ctx, from, omopDemo.path, demo.OMOPOptions{})
	})
	if omopDemo.err != nil {
		t.Fatal(omopDemo.err)
	}
	return omopDemo.path
}

// omopResolver opens the demo OMOP source read-only and returns a
// resolver and the handle.
func omopResolver(t testing.TB) (*omop.Resolver, *sql.DB) {
	t.Helper()
	db, err := datasets.OpenReadOnly(context.Background(), omopDemoPath(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	r, err := omop.NewResolver(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return r, db
}

// setLine matches a concept set line of the generation prompt.
var setLine = regexp.MustCompile(`(?m)^-- concept set '([^']*)' \((\w+), table (\w+)\): (.+)$`)

// scriptedOMOPModel answers like a model that follows the prompt: the
// concept-term call lists the question's terms; the generation call counts
// the persons with an event of every concept set listed in the system
// prompt, using the filters given there; the explanation is fixed.
func scriptedOMOPModel(terms string) func(req api.ChatRequest) ollamatest.ChatReply {
	return func(req api.ChatRequest) ollamatest.ChatReply {
		sys := req.Messages[0].Content
		switch {
		case strings.Contains(sys, "You find the clinical concepts"):
			return text(terms)
		case req.Format != nil:
			ms := setLine.FindAllStringSubmatch(sys, -1)
			if len(ms) == 0 {
				return classify("answerable", "no concept sets", "SELECT COUNT(DISTINCT person_id) AS patients FROM person")
			}
			q := fmt.Sprintf("SELECT COUNT(DISTINCT t0.person_id) AS patients FROM %s t0 WHERE t0.%s", ms[0][3], ms[0][4])
			for _, m := range ms[1:] {
				q += fmt.Sprintf(" AND t0.person_id IN (SELECT person_id FROM %s WHERE %s)", m[3], m[4])
			}
			return classify("answerable", "concept sets", q)
		}
		return text("The count is in the result.")
	}
}

// referenceT2DMMetformin is the hand-written reference: persons with a
// condition of type 2 diabetes or a descendant and an exposure to a drug
// containing metformin, with a concept removed from the diabetes set.
func referenceT2DMMetformin(t *testing.T, db *sql.DB, without int64) int64 {
	t.Helper()
	var n int64
	err := db.QueryRow(`SELECT count(*) FROM person p
		WHERE EXISTS (SELECT 1 FROM condition_occurrence co JOIN concept_ancestor ca ON ca.descendant_concept_id = co.condition_concept_id
		              WHERE co.person_id = p.person_id AND ca.ancestor_concept_id = 201826 AND co.condition_concept_id <> ?)
		  AND EXISTS (SELECT 1 FROM drug_exposure de JOIN concept_ancestor ca ON ca.descendant_concept_id = de.drug_concept_id
		              WHERE de.person_id = p.person_id AND ca.ancestor_concept_id = 1503297)`, without).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestOMOPAskUsesConceptIDs asks "How many patients have type 2 diabetes
// and take metformin?" on the demo OMOP source through the real client and
// a scripted model: the terms resolve to concept sets, the generated SQL
// uses their ids (never names), runs read-only and equals a hand-written
// reference; removing a concept from a set changes the SQL and the count;
// the export has a Definition sheet and the ATLAS concept-set JSON.
func TestOMOPAskUsesConceptIDs(t *testing.T) {
	res, db := omopResolver(t)
	f := newFixtureOn(t, omopDemoPath(t), Config{Concepts: res})
	f.srv.HandleChat(scriptedOMOPModel(`{"terms":[{"text":"type 2 diabetes","domain":"Condition"},{"text":"metformin","domain":"Drug"}]}`))
	ctx := context.Background()
	q := "How many patients have type 2 diabetes and take metformin?"
	var events []EventKind
	ans, err := f.p.Ask(ctx, Request{Question: q}, func(e Event) { events = append(events, e.Kind) })
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != StatusAnswered || ans.ConceptsFrom != ConceptsFromModel || len(ans.ConceptSets) != 2 {
		t.Fatalf("status %s (%s), concepts from %q, %d sets", ans.Status, ans.Message, ans.ConceptsFrom, len(ans.ConceptSets))
	}
	dm, met := ans.ConceptSets[0], ans.ConceptSets[1]
	if dm.Items[0].ID != 201826 || dm.Domain != "Condition" || met.Items[0].ID != 1503297 || met.Domain != "Drug" {
		t.Fatalf("sets: %d %s / %d %s", dm.Items[0].ID, dm.Domain, met.Items[0].ID, met.Domain)
	}
	if !slices.Contains(events, EventConcepts) {
		t.Errorf("no concepts event in %v", events)
	}
	for _, s := range ans.ConceptSets {
		for _, id := range s.IDs {
			if !strings.Contains(ans.SQL, fmt.Sprint(id)) {
				t.Errorf("the SQL lacks concept id %d of set %q:\n%s", id, s.Name, ans.SQL)
			}
		}
	}
	if strings.Contains(strings.ToLower(ans.SQL), "like") || strings.Contains(strings.ToLower(ans.SQL), "metformin") {
		t.Errorf("the SQL matches names:\n%s", ans.SQL)
	}
	want := referenceT2DMMetformin(t, db, 0)
	if got := ans.Result.Rows[0][0]; got != want || want == 0 {
		t.Errorf("count %v, reference %d", got, want)
	}
	sys := f.srv.ChatRequests()[1].Messages[0].Content
	if !strings.Contains(sys, "never by concept names") || !strings.Contains(sys, "concept set 'type 2 diabetes'") {
		t.Errorf("generation prompt lacks the concept sets:\n%s", sys)
	}

	// Remove a concept from the diabetes set (one whose persons are not
	// all covered by the rest): the SQL and the count change.
	var removed int64
	for _, id := range dm.IDs {
		if id != 201826 && referenceT2DMMetformin(t, db, id) != want {
			removed = id
			break
		}
	}
	if removed == 0 {
		t.Fatal("no concept of the diabetes set changes the count")
	}
	c, _, err := res.Concept(ctx, removed)
	if err != nil {
		t.Fatal(err)
	}
	edited := slices.Clone(ans.ConceptSets)
	edited[0].Items = append(slices.Clone(edited[0].Items), omop.SetItem{Concept: c, Excluded: true})
	if err := res.Refresh(ctx, &edited[0]); err != nil {
		t.Fatal(err)
	}
	ans2, err := f.p.Ask(ctx, Request{Question: q, ConceptSets: edited}, nil)
	if err != nil || ans2.Status != StatusAnswered {
		t.Fatalf("edited: %v %s", err, ans2.Message)
	}
	if ans2.ConceptsFrom != ConceptsFromUser || ans2.SQL == ans.SQL || strings.Contains(ans2.SQL, fmt.Sprint(removed)) {
		t.Errorf("edited set: from %q, SQL:\n%s", ans2.ConceptsFrom, ans2.SQL)
	}
	want2 := referenceT2DMMetformin(t, db, removed)
	if got := ans2.Result.Rows[0][0]; got != want2 || want2 == want {
		t.Errorf("edited count %v, reference %d (was %d)", got, want2, want)
	}
	t.Logf("type 2 diabetes and metformin: %d persons; without concept %d %s: %d", want, removed, c.Name, want2)

	// Export: the Definition sheet and the ATLAS concept sets beside it.
	path := filepath.Join(t.TempDir(), "cohort.xlsx")
	if _, err := ExportWorkbookWith(ctx, path, ans, "test", ExportOptions{}); err != nil {
		t.Fatal(err)
	}
	x, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	rows, err := x.GetRows("Definition")
	if err != nil {
		t.Fatalf("Definition sheet: %v", err)
	}
	flat := fmt.Sprint(rows)
	for _, want := range []string{"entry event", "inclusion criterion", "201826", "1503297", "Type 2 diabetes mellitus"} {
		if !strings.Contains(flat, want) {
			t.Errorf("Definition sheet lacks %q: %v", want, rows)
		}
	}
	b, err := os.ReadFile(ConceptSetsPath(path))
	if err != nil {
		t.Fatal(err)
	}
	var sets []omop.ATLASConceptSet
	if err := json.Unmarshal(b, &sets); err != nil || len(sets) != 2 || sets[0].Expression.Items == nil {
		t.Fatalf("concept-set JSON: %v %s", err, b)
	}
	if !strings.Contains(string(b), `"CONCEPT_ID": 201826`) || !strings.Contains(string(b), `"includeDescendants": true`) {
		t.Errorf("concept-set JSON: %s", b)
	}
}

// TestOMOPTemplatesWithoutModel answers on the demo OMOP source with no
// model: template-shaped questions by the templates (equal to the
// reference), others fail saying why.
func TestOMOPTemplatesWithoutModel(t *testing.T) {
	res, db := omopResolver(t)
	ix, runner := demoIndex(t, omopDemoPath(t))
	p, err := New(context.Background(), Config{Runner: runner, Index: ix, Concepts: res, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	ans, err := p.Ask(context.Background(), Request{Question: "How many patients have type 2 diabetes and take metformin?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != StatusAnswered || ans.Template != string(omop.TemplateCount) || ans.ConceptsFrom != ConceptsFromExtractor ||
		!strings.Contains(ans.Message, "without a model") {
		t.Fatalf("answer: %s %q %q %s", ans.Status, ans.Template, ans.ConceptsFrom, ans.Message)
	}
	if got, want := ans.Result.Rows[0][0], referenceT2DMMetformin(t, db, 0); got != want {
		t.Errorf("template count %v, reference %d", got, want)
	}
	ans, err = p.Ask(context.Background(), Request{Question: "Which drugs do patients with asthma take most often?"}, nil)
	if err != nil || ans.Status != StatusFailed || !strings.Contains(ans.Message, "No model is available") {
		t.Errorf("non-template question: %v %s %s", err, ans.Status, ans.Message)
	}
}

// TestOMOPTemplateWhenModelServerDown answers by template when the model
// server cannot be reached (the real client against a closed port).
func TestOMOPTemplateWhenModelServerDown(t *testing.T) {
	res, db := omopResolver(t)
	ix, runner := demoIndex(t, omopDemoPath(t))
	p, err := New(context.Background(), Config{Chat: newClient(t, "http://127.0.0.1:1"), SQLModel: sqlModel, Runner: runner, Index: ix, Concepts: res, Logger: discard()})
	if err != nil {
		t.Fatal(err)
	}
	ans, err := p.Ask(context.Background(), Request{Question: "How many patients have type 2 diabetes and take metformin?"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if ans.Status != StatusAnswered || ans.Template == "" || !strings.Contains(ans.Message, "without a model") {
		t.Fatalf("answer: %s %q %s", ans.Status, ans.Template, ans.Message)
	}
	if got, want := ans.Result.Rows[0][0], referenceT2DMMetformin(t, db, 0); got != want {
		t.Errorf("template count %v, reference %d", got, want)
	}
}

// TestOMOPEditConceptSets removes a concept through the request and adds
// one found by search: the SQL follows the edited sets.
func TestOMOPEditConceptSets(t *testing.T) {
	res, _ := omopResolver(t)
	f := newFixtureOn(t, omopDemoPath(t), Config{Concepts: res})
	f.srv.HandleChat(scriptedOMOPModel(`{"terms":[{"text":"type 2 diabetes","domain":"Condition"},{"text":"metformin","domain":"Drug"}]}`))
	ctx := context.Background()
	if !f.p.OMOP() {
		t.Fatal("the pipeline does not know its source is OMOP")
	}
	q := "How many patients have type 2 diabetes and take metformin?"
	ans, err := f.p.Ask(ctx, Request{Question: q, ExcludeConcepts: []int64{37016354}}, nil)
	if err != nil || ans.Status != StatusAnswered {
		t.Fatalf("%v %s", err, ans.Message)
	}
	dm := ans.ConceptSets[0]
	if slices.Contains(dm.IDs, 37016354) || strings.Contains(ans.SQL, "37016354") || !strings.Contains(ans.SQL, "201826") {
		t.Errorf("excluded concept still used: ids %v\n%s", dm.IDs, ans.SQL)
	}
	if _, err := f.p.ExcludeConcepts(ctx, ans.ConceptSets, []int64{123}); err == nil {
		t.Error("excluding a concept of no set: no error")
	}
	if _, err := f.p.ExcludeConcepts(ctx, ans.ConceptSets, []int64{1503297, 2002000000}); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("emptying a set: %v", err)
	}

	// Add heart failure, found by search, to the diabetes set.
	cands, err := f.p.SearchConcepts(ctx, "heart failure", "Condition", 3)
	if err != nil || len(cands) == 0 || cands[0].ID != 316139 {
		t.Fatalf("search: %+v %v", cands, err)
	}
	before := dm.Persons
	if err := f.p.AddConcept(ctx, &dm, cands[0].ID); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(dm.IDs, 316139) || dm.Persons <= before {
		t.Errorf("after adding heart failure: ids %v, persons %d (was %d)", dm.IDs, dm.Persons, before)
	}
	sets := slices.Clone(ans.ConceptSets)
	sets[0] = dm
	ans2, err := f.p.Ask(ctx, Request{Question: q, ConceptSets: sets}, nil)
	if err != nil || !strings.Contains(ans2.SQL, "316139") {
		t.Errorf("SQL after the addition: %v\n%s", err, ans2.SQL)
	}
}

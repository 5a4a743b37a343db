package cli

import (
	"context"
	"encoding/json"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
)

// TestEvidenceExtractOnASavedProject: "evidence extract --project" works
// on the saved review through the review service: its included studies
// (named ones must be included), its outcome's result spec or the fields
// --fields gives (saved), the values saved where the desktop app sees
// them; --meta runs the outcome's meta-analysis. Scripted model replies
// through the real client.
func TestEvidenceExtractOnASavedProject(t *testing.T) {
	ctx := context.Background()
	var calls atomic.Int32
	_, wsDir, db := scriptedLiterature(t, extractModelReply(&calls))
	registerLiterature(t, wsDir, db, "lit")
	ws := openWorkspace(t, wsDir)
	rv, err := ws.Reviews().Create("hcc", "lit", hccPICO)
	if err != nil {
		t.Fatal(err)
	}
	r := rv.(*app.Review)
	if err := r.SelectStudies(ctx, []string{"pmid:90000001", "pmid:90000011", "pmid:90000002"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Decide("pmid:90000002", false, "wrong population"); err != nil {
		t.Fatal(err)
	}
	r.Update(func(p *evidence.Project) {
		p.Fields = []evidence.FieldSpec{{Name: "sample size", Description: "patients randomised"}}
		p.Result = evidence.ResultSpec{Outcome: "complete ablation", Cohort: "treatment (MWA) vs control (RFA)", Measure: evidence.TwoGroups}
	})
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	ws.Close()

	// A study that is not included: named with the included ones; no
	// model call.
	_, stderr, code := run(t, wsDir, "evidence", "extract", "--project", "hcc", "--id", "90000002", "--id", "90000001")
	if code == 0 || !strings.Contains(stderr, "pmid:90000002 not included in review hcc; its included studies are: ") ||
		!strings.Contains(stderr, "pmid:90000001") || !strings.Contains(stderr, "pmid:90000011") {
		t.Errorf("a study not included: %d %s", code, stderr)
	}
	if _, stderr, code := run(t, wsDir, "evidence", "extract", "--project", "hcc", "--outcome", "3"); code == 0 || !strings.Contains(stderr, "--outcome 3: the review has no outcome 3") {
		t.Errorf("--outcome 3: %d %s", code, stderr)
	}
	if _, stderr, code := run(t, wsDir, "evidence", "extract", "--project", "hcc", "--db", db+"x"); code == 0 || !strings.Contains(stderr, "no database file") {
		t.Errorf("--db not the review's: %d %s", code, stderr)
	}
	if n := calls.Load(); n != 0 {
		t.Fatalf("%d model calls on errors", n)
	}

	// The outcome's result of every included study, pooled, saved.
	out, stderr, code := run(t, wsDir, "evidence", "extract", "--project", "hcc", "--meta", "--json")
	if code != 0 {
		t.Fatalf("extract --project --meta: %d %s", code, stderr)
	}
	var got extractJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if got.Project == nil || got.Project.Name != "hcc" || got.Project.Inputs["result"] != fromReview || got.Project.Outcome != 1 || got.Fields != nil {
		t.Fatalf("project %+v, fields %v", got.Project, got.Fields)
	}
	if len(got.Studies) != 2 || got.Studies[0].Row == nil || got.Studies[0].Row.Events1 != 58 || got.Meta == nil || got.Meta.K != 2 {
		t.Fatalf("studies %+v meta %+v", got.Studies, got.Meta)
	}
	p := openedByTheApp(t, wsDir, "hcc")
	if res := p.Results["pmid:90000001"]; len(res.Groups) != 2 || res.Groups[1].Name != "MWA" || res.Groups[1].Events.Value != 58 {
		t.Errorf("saved result %+v", res)
	}
	if _, ok := p.Results["pmid:90000002"]; ok || len(p.Results) != 2 {
		t.Errorf("results of %d studies saved, want the 2 included", len(p.Results))
	}
	if n := calls.Load(); n != 2 {
		t.Errorf("%d model calls, want 2", n)
	}

	// Fields from a file for one named study: the fields are saved in the
	// review, only that study is asked, the output says so.
	fields := writeFile(t, "fields.json", `["sample size", {"name":"complete ablation","description":"patients with complete ablation"}]`)
	out, stderr, code = run(t, wsDir, "evidence", "extract", "--project", "hcc", "--id", "90000001", "--fields", fields)
	if code != 0 {
		t.Fatalf("extract --project --fields: %d %s", code, stderr)
	}
	for _, want := range []string{"sample size: 120 [3]", `Saved in review "hcc" (outcome 1 "complete ablation", 2 included studies): the fields from --fields (saved in the review).`} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("%d model calls, want 3 (one study)", n)
	}
	p = openedByTheApp(t, wsDir, "hcc")
	if len(p.Fields) != 2 || p.Fields[1].Name != "complete ablation" {
		t.Errorf("saved fields %+v", p.Fields)
	}
	if v := p.Extractions["pmid:90000001"]; len(v) != 2 || v[0].Value != "120" || !v[1].Unsupported {
		t.Errorf("saved values %+v", v)
	}
	if _, ok := p.Extractions["pmid:90000011"]; ok {
		t.Error("a study not named was extracted")
	}
	if res := p.Results["pmid:90000011"]; len(res.Groups) != 2 {
		t.Errorf("the results were lost: %+v", res)
	}
	if len(p.Extractions) != 1 {
		t.Errorf("extractions of %d studies, want 1", len(p.Extractions))
	}

	// A second outcome, its spec replaced by --result: only its results
	// change; the first outcome's are kept.
	withReview(t, wsDir, "hcc", func(r app.Reviewer) {
		if _, err := r.AddOutcome(evidence.ResultSpec{Outcome: "survival", Measure: evidence.TwoGroups}); err != nil {
			t.Fatal(err)
		}
	})
	if _, stderr, code := run(t, wsDir, "evidence", "extract", "--project", "hcc", "--meta"); code == 0 || !strings.Contains(stderr, "the review has 2 outcomes: choose one with --outcome N") {
		t.Errorf("two outcomes, no --outcome: %d %s", code, stderr)
	}
	result := writeFile(t, "result.json", `{"outcome":"complete response","cohort":"MWA vs RFA","measure":"two-groups"}`)
	out, stderr, code = run(t, wsDir, "evidence", "extract", "--project", "hcc", "--outcome", "2", "--result", result, "--meta", "--measure", "OR", "--json")
	if code != 0 {
		t.Fatalf("extract --outcome 2: %d %s", code, stderr)
	}
	got = extractJSON{}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if got.Project.Outcome != 2 || got.Project.OutcomeName != "complete response" || got.Project.Inputs["result"] != "--result" || got.Meta == nil || got.Meta.K != 2 || got.Meta.Measure != "OR" {
		t.Errorf("outcome 2: project %+v meta %+v", got.Project, got.Meta)
	}
	p = openedByTheApp(t, wsDir, "hcc")
	o2 := p.OutcomeAt(1)
	if o2.Result.Outcome != "complete response" || len(o2.Results) != 2 || o2.Results["pmid:90000001"].Groups[1].Events.Value != 58 || o2.Meta.Measure != "OR" {
		t.Errorf("outcome 2 saved: %+v", o2)
	}
	if p.Result.Outcome != "complete ablation" || len(p.Results) != 2 {
		t.Errorf("outcome 1 changed: %+v", p.Outcome)
	}
	if n := calls.Load(); n != 5 {
		t.Errorf("%d model calls, want 5", n)
	}
}

// TestEvidenceExtractResolvesTheSourceByOneRule: without --project,
// "evidence extract --db" resolves a source name or a file as the other
// evidence commands do, and an unknown one names the registered sources.
func TestEvidenceExtractResolvesTheSourceByOneRule(t *testing.T) {
	var calls atomic.Int32
	_, wsDir, db := scriptedLiterature(t, extractModelReply(&calls))
	registerLiterature(t, wsDir, db, "lit")
	fields := writeFile(t, "fields.json", `["sample size"]`)
	byName, _, code := run(t, wsDir, "evidence", "extract", "--db", "lit", "--id", "90000001", "--fields", fields, "--json")
	byPath, stderr, code2 := run(t, wsDir, "evidence", "extract", "--db", db, "--id", "90000001", "--fields", fields, "--json")
	if code != 0 || code2 != 0 || byName != byPath || !strings.Contains(byName, `"value":"120"`) {
		t.Errorf("by name (%d) and by path (%d) differ: %s\n%s\n%s", code, code2, byName, byPath, stderr)
	}
	_, stderr, code = run(t, wsDir, "evidence", "extract", "--db", "litt", "--id", "90000001", "--fields", fields)
	if code == 0 || !strings.Contains(stderr, `there is no data source named "litt" and no database file`) || !strings.Contains(stderr, "the data sources are: lit") {
		t.Errorf("an unknown source: %d %s", code, stderr)
	}
	if _, stderr, code := run(t, wsDir, "evidence", "extract", "--id", "90000001", "--fields", fields); code == 0 || !strings.Contains(stderr, "--db DB") || !strings.Contains(stderr, "--project NAME") {
		t.Errorf("no --db: %d %s", code, stderr)
	}
}

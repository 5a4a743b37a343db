package cli

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/app/trials"
)

// syntheticTrialsFile writes n synthetic trials as API v2 JSON lines.
func syntheticTrialsFile(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "trials.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if err := trials.WriteSyntheticJSONL(context.Background(), f, n, 3); err != nil {
		t.Fatal(err)
	}
	return path
}

func TestTrialsImportAndMatch(t *testing.T) {
	ws := t.TempDir()
	src := syntheticTrialsFile(t, 300)
	db := filepath.Join(ws, "trials.sqlite")
	out, stderr, code := run(t, ws, "trials", "import", src, "--db", db, "--name", "ct")
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"imported 300 trials", "search index:", `registered as data source "ct"`, "embedded "} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}
	patient := "A 67-year-old man with type 2 diabetes mellitus and elevated HbA1c. He denies asthma."
	out, stderr, code = run(t, ws, "trials", "match", "--db", "ct", "--no-llm", "--top", "5", patient)
	if code != 0 {
		t.Fatalf("match: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "patient: 67 years, male") || !strings.Contains(out, "rank  trial") || strings.Count(out, "NCT9") != 5 {
		t.Errorf("match output:\n%s", out)
	}
	if !strings.Contains(stderr, "lexical fallback") {
		t.Errorf("the lexical STS is not noted: %s", stderr)
	}
	// JSON and Excel.
	xlsx := filepath.Join(ws, "match.xlsx")
	out, stderr, code = run(t, ws, "trials", "match", "--db", db, "--no-llm", "--json", "--xlsx", xlsx, patient)
	if code != 0 {
		t.Fatalf("match --json: exit %d: %s", code, stderr)
	}
	var res trials.Result
	if err := json.Unmarshal([]byte(out), &res); err != nil {
		t.Fatalf("--json: %v\n%.300s", err, out)
	}
	if len(res.Trials) != 10 || res.Query.Sex != trials.SexMale || !res.Query.HasAge {
		t.Fatalf("--json result: %d trials, query %+v", len(res.Trials), res.Query)
	}
	for _, r := range res.Trials {
		if !r.Trial.AgeAllowed(67) || !r.Trial.SexAllowed(trials.SexMale) {
			t.Errorf("%s (%s, %s) passed the filters for a 67-year-old man", r.Trial.ID, r.Trial.AgeLimits(), r.Trial.Sex)
		}
	}
	if top := res.Trials[0].Trial; !strings.Contains(strings.ToLower(strings.Join(top.Conditions, " ")), "type 2 diabetes") {
		t.Errorf("top trial %s is about %v, want type 2 diabetes", top.ID, top.Conditions)
	}
	for _, c := range res.Query.Concepts {
		if c.Text == "asthma" && !c.Negated {
			t.Errorf("denied asthma is not negated: %+v", c)
		}
	}
	f, err := excelize.OpenFile(xlsx)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sheets := strings.Join(f.GetSheetList(), ",")
	if sheets != "Ranked trials,Criteria,Concepts,Provenance" {
		t.Errorf("sheets %s", sheets)
	}
	rows, _ := f.GetRows("Ranked trials")
	if len(rows) != 11 || rows[0][1] != "trial" {
		t.Errorf("ranked sheet: %d rows, header %v", len(rows), rows[0])
	}
	crit, _ := f.GetRows("Criteria")
	if len(crit) < 20 {
		t.Errorf("criteria sheet has %d rows", len(crit))
	}
}

func TestTrialsErrors(t *testing.T) {
	ws := t.TempDir()
	bad := filepath.Join(ws, "bad.jsonl")
	os.WriteFile(bad, []byte(`{"_id": "NCT1", "text": "ok"}`+"\n"+`{"_id": "", "text": "no id"}`+"\n"), 0o644)
	db := filepath.Join(ws, "t.sqlite")
	_, stderr, code := run(t, ws, "trials", "import", bad, "--db", db)
	if code != 1 || !strings.Contains(stderr, "bad.jsonl line 2") {
		t.Errorf("bad record: exit %d, %q", code, stderr)
	}
	// The failed import left no file behind; a database without trials
	// is refused by name.
	if _, err := os.Stat(db); !os.IsNotExist(err) {
		t.Errorf("the failed import left %s: %v", db, err)
	}
	other := fixtureDB(t)
	_, stderr, code = run(t, ws, "trials", "match", "--db", other, "--no-llm", "a patient")
	if code != 1 || !strings.Contains(stderr, "holds no trials") {
		t.Errorf("database without trials: exit %d, %q", code, stderr)
	}
	src := syntheticTrialsFile(t, 20)
	if _, stderr, code := run(t, ws, "trials", "import", src, "--db", db, "--no-embed"); code != 0 {
		t.Fatal(stderr)
	}
	_, stderr, code = run(t, ws, "trials", "match", "--db", db, "--no-llm", "the the the")
	if code != 1 || !strings.Contains(stderr, "no searchable concept") {
		t.Errorf("no concept: exit %d, %q", code, stderr)
	}
}

// TestTrialsImportReportsCuts imports a record whose text is longer than
// Clinsight keeps: the import succeeds and says which field was cut.
func TestTrialsImportReportsCuts(t *testing.T) {
	ws := t.TempDir()
	src := filepath.Join(ws, "long.jsonl")
	long := strings.Repeat("The trial studies a treatment. ", 10000) // 300 KB
	os.WriteFile(src, []byte(`{"_id": "NCT09000001", "title": "Long", "text": "`+long+`"}`+"\n"), 0o644)
	out, stderr, code := run(t, ws, "trials", "import", src, "--db", filepath.Join(ws, "t.sqlite"), "--no-embed")
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "1 field was longer than any registry allows and cut") || !strings.Contains(out, `long.jsonl line 1: field "text" of NCT09000001 cut from 302 KB to 128 KB`) {
		t.Errorf("import output:\n%s", out)
	}
}

package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/datasets/realdata"
)

// TestImportOMOPSynthea imports the Synthea27Nj OMOP CDM (real data beside
// the project) with `import omop` and registers it; the source is then
// listed as an OMOP source.
func TestImportOMOPSynthea(t *testing.T) {
	dir := realdata.Path(t, "omop-cdm-5.4", "synthea27nj")
	ws := t.TempDir()
	db := filepath.Join(t.TempDir(), "omop.sqlite")
	out, stderr, code := run(t, ws, "import", "omop", dir, "--db", db, "--name", "synthea")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	for _, want := range []string{"imported 39 tables, 294203 rows", "2294 concept names indexed", `registered as data source "synthea"`, "concept_relationship"} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(stderr, "LICENSE") {
		t.Errorf("the skipped LICENSE file is not reported: %q", stderr)
	}
	out, _, _ = run(t, ws, "tables")
	if !strings.Contains(out, "synthea") {
		t.Errorf("sources: %q", out)
	}
}

func TestImportOMOPNotAFolder(t *testing.T) {
	_, stderr, code := run(t, t.TempDir(), "import", "omop", t.TempDir(), "--db", filepath.Join(t.TempDir(), "o.sqlite"))
	if code != 1 || !strings.Contains(stderr, "OMOP") || !strings.Contains(stderr, "PERSON.csv") {
		t.Errorf("code %d stderr %q", code, stderr)
	}
}

// TestConceptsAndAskOnDemoOMOP looks terms up in the demo OMOP source and
// answers a template-shaped question with no model reachable, removing a
// concept with --exclude-concept.
func TestConceptsAndAskOnDemoOMOP(t *testing.T) {
	ws := t.TempDir()
	if _, stderr, code := run(t, ws, "demo", "init", "--patients", "200"); code != 0 {
		t.Fatalf("demo init: %s", stderr)
	}
	out, stderr, code := run(t, ws, "concepts", "--db", "demo-omop", "E11.9")
	if code != 0 || !strings.Contains(out, "201826") || !strings.Contains(out, "maps from ICD10CM E11.9") {
		t.Fatalf("concepts E11.9: %d %q %q", code, out, stderr)
	}
	w, err := app.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.UpdateConfig(func(c *app.Config) { c.OllamaHost = "http://127.0.0.1:1" }); err != nil { // no model reachable
		t.Fatal(err)
	}
	w.Close()
	out, stderr, code = run(t, ws, "ask", "--db", "demo-omop", "How many patients have type 2 diabetes and take metformin?")
	if code != 0 || !strings.Contains(out, "without a model") || !strings.Contains(out, "Concept sets") || !strings.Contains(out, "201826") {
		t.Fatalf("ask: %d\n%s\n%s", code, out, stderr)
	}
	if !strings.Contains(out, "37016354") {
		t.Fatalf("the diabetes set lacks its descendant 37016354:\n%s", out)
	}
	out2, _, code := run(t, ws, "ask", "--db", "demo-omop", "--exclude-concept", "37016354", "How many patients have type 2 diabetes and take metformin?")
	if code != 0 || !strings.Contains(out2, "not 37016354") {
		t.Errorf("ask --exclude-concept: %d\n%s", code, out2)
	}
}

// TestConceptCountsOfAnAggregateOnlySourceAreSuppressed checks that the
// person counts of concepts and concept sets follow an aggregate-only
// source's minimum cell size in `concepts` and in `ask` (text and JSON),
// and stay exact for a row-level source.
func TestConceptCountsOfAnAggregateOnlySourceAreSuppressed(t *testing.T) {
	ws := t.TempDir()
	if _, stderr, code := run(t, ws, "demo", "init", "--patients", "200"); code != 0 {
		t.Fatalf("demo init: %s", stderr)
	}
	w, err := app.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	if err := w.UpdateConfig(func(c *app.Config) { c.OllamaHost = "http://127.0.0.1:1" }); err != nil { // no model reachable
		t.Fatal(err)
	}
	w.Close()
	const q = "How many patients have type 2 diabetes and take metformin?"
	exact, _, code := run(t, ws, "ask", "--db", "demo-omop", q)
	if code != 0 || !strings.Contains(exact, " patients") || strings.Contains(exact, "<1000 patients") {
		t.Fatalf("row-level ask: %d\n%s", code, exact)
	}
	// A minimum cell size above every count hides them all.
	if _, stderr, code := run(t, ws, "sources", "set", "demo-omop", "--access", "aggregate-only", "--min-cell", "1000"); code != 0 {
		t.Fatalf("sources set: %s", stderr)
	}
	out, stderr, code := run(t, ws, "concepts", "--db", "demo-omop", "E11.9")
	if code != 0 || !strings.Contains(out, "201826") || !strings.Contains(out, "<1000") {
		t.Fatalf("concepts on an aggregate-only source: %d %q %q", code, out, stderr)
	}
	out, _, _ = run(t, ws, "ask", "--db", "demo-omop", q)
	if !strings.Contains(out, "<1000 patients") {
		t.Errorf("ask on an aggregate-only source shows exact concept-set counts:\n%s", out)
	}
	js, _, _ := run(t, ws, "ask", "--db", "demo-omop", "--json", q)
	if strings.Contains(js, `"Persons":`) && !strings.Contains(js, `"PersonsUnder":1000`) {
		t.Errorf("ask --json shows concept-set counts: %s", js)
	}
}

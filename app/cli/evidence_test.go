package cli

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/datasets/realdata"
)

// evidenceFixtures are the literature fixtures of app/evidence (synthetic
// records written for the tests).
var evidenceFixtures = []string{
	"../evidence/testdata/pubmed_sample.xml",
	"../evidence/testdata/sample.nbib",
	"../evidence/testdata/sample.ris",
	"../evidence/testdata/sample.csv",
}

func TestEvidenceImportAndSearch(t *testing.T) {
	ws := t.TempDir()
	db := filepath.Join(t.TempDir(), "lit.sqlite")
	out, stderr, code := run(t, ws, append([]string{"evidence", "import", "--db", db}, evidenceFixtures...)...)
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	for _, want := range []string{"imported pubmed_sample.xml (pubmed-xml): 3 records, 3 new, 0 updated", "imported sample.nbib (medline): 3 records", "the corpus in " + db + " holds 11 records"} {
		if !strings.Contains(out, want) {
			t.Errorf("import output lacks %q:\n%s", want, out)
		}
	}

	out, stderr, code = run(t, ws, "evidence", "search", "--db", db, "--query", `breast[ti] AND (neoadjuvant OR aromatase*)`)
	if code != 0 || !strings.Contains(out, "2 records match; 2 shown") || !strings.Contains(out, "90000011") || !strings.Contains(out, "90000012") {
		t.Errorf("search: exit %d\n%s%s", code, out, stderr)
	}

	// JSON with PICO re-ranking.
	pico := filepath.Join(t.TempDir(), "pico.json")
	if err := os.WriteFile(pico, []byte(`{"P":"hepatocellular carcinoma","I":"microwave ablation","C":"radiofrequency ablation","O":"local tumor progression"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	got, _ := searchJSONOf(t, ws, "--db", db, "--pico", pico, "--query", "ablation OR cryotherapy OR brachytherapy")
	if got.Total != 4 || len(got.Hits) != 4 || got.Hits[0].PMID != "90000001" || got.Hits[0].PICOScore == nil || got.FTS5 != `(("ablation" OR "cryotherapy") OR "brachytherapy")` {
		t.Errorf("search --pico --json: %+v", got)
	}

	// A malformed query: one-line error with the position, caret on stderr.
	_, stderr, code = run(t, ws, "evidence", "search", "--db", db, "--query", `cancer AND (breast OR`)
	if code == 0 || !strings.Contains(stderr, "query position 22: OR needs a term after it") || !strings.Contains(stderr, "                     ^") {
		t.Errorf("malformed query: exit %d, stderr %q", code, stderr)
	}
	// A bad record names the file, record and line.
	bad := writeFile(t, "bad.ris", "TY  - JOUR\nTI  - A\nER  - \nTY  - JOUR\nPY  - 2001\nER  - \n")
	_, stderr, code = run(t, ws, "evidence", "import", "--db", db, bad)
	if code == 0 || !strings.Contains(stderr, "import bad.ris record 2 line 4: the record has neither a title nor an abstract") {
		t.Errorf("bad import: exit %d, stderr %q", code, stderr)
	}
	// No query without a model, or without a PICO: a clear error.
	_, stderr, code = run(t, ws, "evidence", "search", "--db", db, "--pico", pico, "--no-llm")
	if code == 0 || !strings.Contains(stderr, "give a boolean query with --query: with --no-llm no model writes one") {
		t.Errorf("no query, --no-llm: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = run(t, ws, "evidence", "search", "--db", db)
	if code == 0 || !strings.Contains(stderr, "or a PICO file with --pico") {
		t.Errorf("no query, no PICO: exit %d, stderr %q", code, stderr)
	}
}

// TestEvalScreeningCLI runs "clinsight eval screening --no-llm --json" on
// TrialReviewBench's 25 reviews and asserts the floors reached by the
// LLM-free ranker (measured: Recall@20 0.6689, Recall@50 0.7830 with the
// shared stop words of internal/textsearch; 0.7832 with the former evidence list).
func TestEvalScreeningCLI(t *testing.T) {
	dir := realdata.Path(t, "trialmind-reviewbench-sample", "search_screen")
	out, stderr, code := run(t, t.TempDir(), "eval", "screening", "--reviews", dir, "--no-llm", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	var got screeningJSON
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	t.Logf("eval screening: %s", strings.TrimSpace(out))
	if got.Reviews != 25 || got.RecallAt20 < 0.66 || got.RecallAt50 < 0.78 || math.IsNaN(got.RecallAt20) {
		t.Errorf("eval screening = %+v, want 25 reviews, Recall@20 ≥ 0.66, Recall@50 ≥ 0.78", got)
	}
	var keys map[string]any
	_ = json.Unmarshal([]byte(out), &keys)
	if len(keys) != 3 {
		t.Errorf("JSON keys %v, want exactly recall_at_20, recall_at_50, reviews", keys)
	}
	out, _, code = run(t, t.TempDir(), "eval", "screening", "--reviews", dir, "--no-llm")
	if code != 0 || !strings.Contains(out, "Recall@20 0.6689   Recall@50 0.7830") || !strings.Contains(out, "33309278  150") {
		t.Errorf("text output (exit %d):\n%s", code, out)
	}
}

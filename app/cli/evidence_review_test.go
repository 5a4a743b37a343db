package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/datasets"
)

// TestEvidenceSearchSameAsTheDesktopApp runs one PICO, query and limit
// through "evidence search" and through the review service as the desktop
// app uses it (a saved project, its query set, Search), on the demo
// literature with a duplicate of one of its studies imported from an RIS
// export, and asserts the same studies in the same order: duplicates
// removed, ranked by relevance to the PICO over the bounded bm25 pool.
func TestEvidenceSearchSameAsTheDesktopApp(t *testing.T) {
	ctx := context.Background()
	wsDir := t.TempDir()
	db := demoLiterature(t)
	h, err := datasets.OpenReadOnly(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	var title string
	var year int
	if err := h.QueryRowContext(ctx, `SELECT title, year FROM evidence_records WHERE title LIKE '%microwave%' AND title LIKE '%hepatocellular%' ORDER BY rowid LIMIT 1`).Scan(&title, &year); err != nil {
		t.Fatal(err)
	}
	h.Close()
	ris := writeFile(t, "copy.ris", fmt.Sprintf("TY  - JOUR\nTI  - %s\nPY  - %d\nAB  - The same trial, exported again without its PMID.\nER  - \n", title, year))
	if _, stderr, code := run(t, wsDir, "evidence", "import", "--db", db, ris); code != 0 {
		t.Fatalf("import: %s", stderr)
	}

	pico := evidence.PICO{Population: "patients with hepatocellular carcinoma", Intervention: "microwave ablation",
		Comparison: "radiofrequency ablation", Outcome: "local tumor progression"}
	raw, _ := json.Marshal(pico)
	picoFile := writeFile(t, "pico.json", string(raw))
	const query, limit = `ablation OR carcinoma OR cancer`, 20

	got, cli := searchJSONOf(t, wsDir, "--db", db, "--pico", picoFile, "--query", query, "--limit", fmt.Sprint(limit))

	ws := openWorkspace(t, wsDir)
	defer ws.Close()
	r := createSearchedReview(t, ws, "equivalence", db, pico, query, limit)
	defer r.Close()
	gui := r.Project().Search.IDs

	if len(cli) != limit || !slices.Equal(cli, gui) {
		t.Fatalf("the command line found\n%v\nthe desktop app's review\n%v", cli, gui)
	}
	if got.Duplicates != 1 || len(r.Project().Search.DuplicateOf) != 1 {
		t.Errorf("duplicates removed: command line %d, review %v", got.Duplicates, r.Project().Search.DuplicateOf)
	}
	for dup := range r.Project().Search.DuplicateOf {
		if slices.Contains(cli, dup) {
			t.Errorf("the duplicate %s is a candidate", dup)
		}
	}
	// The rule matters here: the PICO brings in studies that bm25 alone
	// would not have kept among the best 20.
	h, err = datasets.OpenReadOnly(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	defer h.Close()
	bm, err := evidence.NewCorpus(h).Search(ctx, query, limit+1)
	if err != nil {
		t.Fatal(err)
	}
	outside := 0
	for _, id := range cli {
		if !slices.ContainsFunc(bm.Hits, func(x evidence.Hit) bool { return x.ID == id }) {
			outside++
		}
	}
	if outside == 0 || bm.Total <= int64(limit) {
		t.Errorf("the PICO ranking chose no study outside bm25's best %d of %d: the test does not tell the rules apart", limit, bm.Total)
	}
}

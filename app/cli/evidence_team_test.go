package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
)

// TestEvidenceDecisionsExchangedBetweenTwoComputers: two reviewers screen
// the same saved review in their own workspaces (the project file copied
// from one to the other, the same literature), each as a named reviewer;
// they exchange their decisions files with "evidence decisions
// export|import --project", and both sides list the same conflicts and the
// same agreement; one is resolved on the command line and "evidence
// prisma --project" counts it.
func TestEvidenceDecisionsExchangedBetweenTwoComputers(t *testing.T) {
	anaDir, benDir := t.TempDir(), t.TempDir()
	const name = "pair review"

	// Ana creates the review and searches; Ben gets a copy of the file.
	ws := openWorkspace(t, anaDir)
	r := createSearchedReview(t, ws, name, demoLiterature(t), ablationPICO, "ablation", 20)
	ids := r.Project().Search.IDs[:4]
	if err := r.Close(); err != nil {
		t.Fatal(err)
	}
	ws.Close()
	raw, err := os.ReadFile(filepath.Join(anaDir, "reviews", name+".json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(benDir, "reviews"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(benDir, "reviews", name+".json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}

	// Each names themselves and screens the first four candidates.
	screen := func(dir, who string, include []bool) {
		t.Helper()
		if out, stderr, code := run(t, dir, "evidence", "reviewers", "--project", name, "--add", who); code != 0 || !strings.Contains(out, who) {
			t.Fatalf("reviewers --add %s: %d %s %s", who, code, out, stderr)
		}
		withReview(t, dir, name, func(r app.Reviewer) {
			if err := r.SetScreener(who); err != nil {
				t.Fatal(err)
			}
			for i, id := range ids {
				if err := r.Decide(id, include[i], "Wrong population"); err != nil {
					t.Fatal(err)
				}
			}
		})
	}
	screen(anaDir, "Ana", []bool{true, true, false, false})
	screen(benDir, "Ben", []bool{true, false, false, true})

	files := t.TempDir()
	anaFile, benFile := filepath.Join(files, "ana.json"), filepath.Join(files, "ben.json")
	if out, stderr, code := run(t, anaDir, "evidence", "decisions", "export", "--project", name, "--reviewer", "Ana", "--out", anaFile); code != 0 || !strings.Contains(out, "wrote 4 decisions of Ana") {
		t.Fatalf("export: %d %s %s", code, out, stderr)
	}
	if _, stderr, code := run(t, benDir, "evidence", "decisions", "export", "--project", name, "--reviewer", "Ben", "--out", benFile); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	out, stderr, code := run(t, anaDir, "evidence", "decisions", "import", benFile, "--project", name)
	if code != 0 || !strings.Contains(out, "Merged Ben's decisions: 4 new") || !strings.Contains(out, "Conflicts to resolve: 2 at title and abstract") {
		t.Fatalf("import at Ana's: %d %s %s", code, out, stderr)
	}
	if out, stderr, code := run(t, benDir, "evidence", "decisions", "import", anaFile, "--project", name, "--json"); code != 0 || !strings.Contains(out, `"Added":4`) {
		t.Fatalf("import at Ben's: %d %s %s", code, out, stderr)
	}

	// The same conflicts and agreement on both computers. Ana I I E E,
	// Ben I E E I: po 0.5, pe 0.5·0.5 + 0.5·0.5 = 0.5, kappa 0.
	for _, dir := range []string{anaDir, benDir} {
		out, stderr, code := run(t, dir, "evidence", "conflicts", "--project", name, "--json")
		var list []conflictJSON
		if code != 0 || json.Unmarshal([]byte(out), &list) != nil {
			t.Fatalf("conflicts: %d %s %s", code, out, stderr)
		}
		if len(list) != 2 || list[0].ID != ids[1] || list[1].ID != ids[3] || list[0].Decisions["Ana"] != "include" || list[0].Decisions["Ben"] != "exclude: Wrong population" {
			t.Errorf("conflicts %+v, want %s and %s", list, ids[1], ids[3])
		}
		out, _, _ = run(t, dir, "evidence", "reviewers", "--project", name)
		if !strings.Contains(out, "Title and abstract: 4 records decided by both (both include 1, both exclude 1") || !strings.Contains(out, "raw agreement 0.500, Cohen's kappa 0.000; 2 conflicts, 2 open") {
			t.Errorf("agreement:\n%s", out)
		}
	}
	if _, stderr, code := run(t, anaDir, "evidence", "conflicts", "--project", name, "--id", ids[1], "--include", "--note", "the abstract reports adults", "--by", "Cy"); code != 0 {
		t.Fatalf("resolve: %s", stderr)
	}
	out, stderr, code = run(t, anaDir, "evidence", "prisma", "--project", name, "--json")
	var c evidence.PRISMACounts
	if code != 0 || json.Unmarshal([]byte(out), &c) != nil {
		t.Fatalf("prisma: %d %s %s", code, out, stderr)
	}
	if c.Screened != 4 || c.Included != 2 || c.Excluded != 1 || c.Undecided != 1 || c.Conflicts != 1 {
		t.Errorf("PRISMA after the resolution: %+v", c)
	}
	// A reviewer the review does not have is refused, and says so.
	if _, stderr, code := run(t, anaDir, "evidence", "decisions", "export", "--project", name, "--reviewer", "Cy", "--out", filepath.Join(files, "cy.json")); code == 0 || !strings.Contains(stderr, "Cy is not a reviewer") {
		t.Errorf("export of an unknown reviewer: %d %s", code, stderr)
	}
	if _, stderr, code := run(t, anaDir, "evidence", "prisma", "--project", "nope"); code == 0 || !strings.Contains(stderr, "saved reviews: "+name) {
		t.Errorf("an unknown project: %d %s", code, stderr)
	}
}

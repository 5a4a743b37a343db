package cli

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/app/evidence"
)

// searchedReview saves a review of the demo literature that has searched,
// as the desktop app does, and returns its first candidates.
func searchedReview(t *testing.T, wsDir, name string, n int) []string {
	t.Helper()
	db := demoLiterature(t)
	createReview(t, wsDir, name, db, hccPICO, func(p *evidence.Project) { p.Query = "ablation" })
	if _, stderr, code := run(t, wsDir, "evidence", "search", "--project", name, "--no-llm"); code != 0 {
		t.Fatalf("search: %s", stderr)
	}
	ids := openedByTheApp(t, wsDir, name).Search.IDs
	if len(ids) < n {
		t.Fatalf("%d candidates, want %d", len(ids), n)
	}
	return ids[:n]
}

// prisma returns "evidence prisma --project --json".
func prisma(t *testing.T, wsDir, name string) evidence.PRISMACounts {
	t.Helper()
	out, stderr, code := run(t, wsDir, "evidence", "prisma", "--project", name, "--json")
	var c evidence.PRISMACounts
	if code != 0 || json.Unmarshal([]byte(out), &c) != nil {
		t.Fatalf("prisma: %d %s %s", code, out, stderr)
	}
	return c
}

// TestEvidenceDecide: decisions made with "evidence decide" are the
// review's: the desktop app opens the review with them, "evidence prisma"
// counts them; a record named by PMID is found; an unknown record, a
// missing reason and a list with one bad record are refused with what to
// do, and the review is left unchanged.
func TestEvidenceDecide(t *testing.T) {
	wsDir := t.TempDir()
	const name = "hcc"
	ids := searchedReview(t, wsDir, name, 6)
	out, stderr, code := run(t, wsDir, "evidence", "decide", "--project", name, "--id", ids[0], "--include")
	if code != 0 || !strings.Contains(out, ids[0]+" (") || !strings.Contains(out, "included at title and abstract") || !strings.Contains(out, "the review has decided 1 of") {
		t.Errorf("include: %d\n%s%s", code, out, stderr)
	}
	out, stderr, code = run(t, wsDir, "evidence", "decide", "--project", name, "--id", ids[1], "--exclude", "Wrong  population", "--json")
	var got decideJSON
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || len(got.Records) != 1 || got.Records[0].ID != ids[1] || got.Records[0].Reason != "Wrong population" ||
		got.Decided != 2 || got.Included != 1 || got.Excluded != 1 {
		t.Errorf("exclude: %d %s %s", code, out, stderr)
	}
	file := writeFile(t, "ids.csv", fmt.Sprintf("id,title\n%s,\"a title\"\n\n# a comment\n%s,other\n", ids[2], ids[3]))
	if out, stderr, code := run(t, wsDir, "evidence", "decide", "--project", name, "--ids-file", file, "--exclude", "Not a primary study"); code != 0 || !strings.Contains(out, "decided 4 of") {
		t.Errorf("--ids-file: %d %s %s", code, out, stderr)
	}

	// What is refused, and says what to do; the review is unchanged.
	for _, c := range []struct {
		args []string
		want []string
	}{
		{[]string{"--id", "pmid:123", "--include"}, []string{"pmid:123 is not a candidate of review hcc (its candidates: " + ids[0] + ", ", "clinsight evidence search --project \"hcc\" --json lists them"}},
		{[]string{"--id", ids[4], "--id", "pmid:123", "--include"}, []string{"pmid:123 is not a candidate of review hcc"}},
		{[]string{"--id", ids[4], "--exclude", " "}, []string{"give the reason to exclude with --exclude REASON", "Wrong population; Wrong intervention"}},
		{[]string{"--id", ids[4]}, []string{"say the decision: --include, --exclude REASON, --not-retrieved NOTE or --undo"}},
		{[]string{"--id", ids[4], "--include", "--stage", "abstract"}, []string{`unknown screening stage "abstract": use title-abstract or full-text`}},
		{[]string{"--id", ids[4], "--include", "--reviewer", "Ana"}, []string{"review hcc has no named reviewers, so there is no reviewer Ana"}},
		{[]string{"--id", ids[4], "--id", ids[5], "--stage", "full-text", "--exclude", "Wrong outcome"}, []string{"was not included at title and abstract: only those are screened on their full text"}},
		{[]string{"--ids-file", writeFile(t, "bad.txt", ids[4]+"\npmid:1\n"), "--include"}, []string{"pmid:1 is not a candidate"}},
	} {
		_, stderr, code := run(t, wsDir, append([]string{"evidence", "decide", "--project", name}, c.args...)...)
		for _, w := range c.want {
			if code == 0 || !strings.Contains(stderr, w) {
				t.Errorf("%v: exit %d, stderr %q lacks %q", c.args, code, stderr, w)
			}
		}
	}
	p := openedByTheApp(t, wsDir, name)
	if len(p.Decisions) != 4 || !p.Decisions[ids[0]].Include || p.Decisions[ids[1]].Reason != "Wrong population" || p.Decisions[ids[3]].Reason != "Not a primary study" || p.FullTextStage {
		t.Fatalf("the review the app opens has decisions %+v (full-text stage %v)", p.Decisions, p.FullTextStage)
	}
	c := prisma(t, wsDir, name)
	if c.Screened != 4 || c.Included != 1 || c.Excluded != 3 || c.Reasons["Not a primary study"] != 2 || c.NotScreened != len(p.Search.IDs)-4 {
		t.Errorf("PRISMA %+v", c)
	}

	// The full-text stage: switched on by the first decision at full text.
	out, stderr, code = run(t, wsDir, "evidence", "decide", "--project", name, "--id", ids[0], "--stage", "full-text", "--exclude", "Wrong outcome")
	if code != 0 || !strings.Contains(out, "The full-text stage of review hcc is now on.") || !strings.Contains(out, "excluded (Wrong outcome) at full text") {
		t.Errorf("full text: %d %s %s", code, out, stderr)
	}
	c = prisma(t, wsDir, name)
	if !c.FullTextStage || c.Sought != 1 || c.ReportsExcluded != 1 || c.Included != 0 {
		t.Errorf("PRISMA after the full-text exclusion %+v", c)
	}
	// A report not retrieved, and the mark cleared by --undo.
	if _, stderr, code := run(t, wsDir, "evidence", "decide", "--project", name, "--id", ids[4], "--include"); code != 0 {
		t.Fatal(stderr)
	}
	if _, stderr, code := run(t, wsDir, "evidence", "decide", "--project", name, "--id", ids[4], "--not-retrieved", " "); code == 0 || !strings.Contains(stderr, "say why the full text could not be obtained") {
		t.Errorf("no note: %d %s", code, stderr)
	}
	out, stderr, code = run(t, wsDir, "evidence", "decide", "--project", name, "--id", ids[4], "--not-retrieved", "no access")
	if code != 0 || !strings.Contains(out, "full text not retrieved (no access) at full text") || !strings.Contains(out, "; 1 not retrieved") {
		t.Errorf("not retrieved: %d %s %s", code, out, stderr)
	}
	if c := prisma(t, wsDir, name); c.Sought != 2 || c.NotRetrieved != 1 || c.Assessed != 1 {
		t.Errorf("PRISMA with a report not retrieved %+v", c)
	}
	if out, stderr, code := run(t, wsDir, "evidence", "decide", "--project", name, "--id", ids[4], "--stage", "full-text", "--undo"); code != 0 || !strings.Contains(out, "decision undone at full text") {
		t.Errorf("undo the mark: %d %s %s", code, out, stderr)
	}
	if c := prisma(t, wsDir, name); c.NotRetrieved != 0 {
		t.Errorf("PRISMA after the mark is cleared %+v", c)
	}
	if _, stderr, code := run(t, wsDir, "evidence", "decide", "--project", name, "--id", ids[4], "--undo"); code != 0 {
		t.Fatal(stderr)
	}

	// Undo, at each stage.
	if out, stderr, code := run(t, wsDir, "evidence", "decide", "--project", name, "--id", ids[0], "--stage", "full-text", "--undo"); code != 0 || !strings.Contains(out, "decision undone at full text") {
		t.Errorf("undo full text: %d %s %s", code, out, stderr)
	}
	if out, stderr, code := run(t, wsDir, "evidence", "decide", "--project", name, "--id", ids[1], "--id", ids[5], "--undo"); code != 0 || !strings.Contains(out, ids[5]+" (") || !strings.Contains(out, "had no decision") {
		t.Errorf("undo: %d %s %s", code, out, stderr)
	}
	p = openedByTheApp(t, wsDir, name)
	if len(p.Decisions) != 3 || len(p.FullText) != 0 {
		t.Errorf("after undo: %+v %+v", p.Decisions, p.FullText)
	}

	// A review that has not searched.
	createReview(t, wsDir, "empty", p.Source, hccPICO, nil)
	if _, stderr, code := run(t, wsDir, "evidence", "decide", "--project", "empty", "--id", "pmid:123", "--include"); code == 0 ||
		!strings.Contains(stderr, "pmid:123 is not a candidate of review empty: the review has no candidates yet (run a search first") {
		t.Errorf("no search: %d %s", code, stderr)
	}
}

// TestEvidenceDecideAsNamedReviewers: on a review with two named
// reviewers each decides as themselves (--reviewer, in any case); their
// disagreement is reported as a conflict, listed by "evidence conflicts"
// and counted by "evidence prisma"; the desktop app opens the review with
// each reviewer's decisions.
func TestEvidenceDecideAsNamedReviewers(t *testing.T) {
	wsDir := t.TempDir()
	const name = "pair"
	ids := searchedReview(t, wsDir, name, 3)
	if _, stderr, code := run(t, wsDir, "evidence", "reviewers", "--project", name, "--add", "Ana", "--add", "Ben"); code != 0 {
		t.Fatal(stderr)
	}
	if _, stderr, code := run(t, wsDir, "evidence", "decide", "--project", name, "--id", ids[0], "--include"); code == 0 || !strings.Contains(stderr, "review pair is screened by Ana and Ben: say who decides with --reviewer NAME") {
		t.Errorf("no reviewer: %d %s", code, stderr)
	}
	if _, stderr, code := run(t, wsDir, "evidence", "decide", "--project", name, "--id", ids[0], "--include", "--reviewer", "Cy"); code == 0 || !strings.Contains(stderr, "Cy is not a reviewer of review pair (its reviewers: Ana, Ben)") {
		t.Errorf("unknown reviewer: %d %s", code, stderr)
	}
	for _, d := range []struct{ who, id, flag, reason string }{
		{"ana", ids[0], "--include", ""}, {"Ana", ids[1], "--include", ""}, {"Ben", ids[0], "--include", ""},
	} {
		if _, stderr, code := run(t, wsDir, "evidence", "decide", "--project", name, "--id", d.id, d.flag, "--reviewer", d.who); code != 0 {
			t.Fatalf("%+v: %s", d, stderr)
		}
	}
	out, stderr, code := run(t, wsDir, "evidence", "decide", "--project", name, "--id", ids[1], "--exclude", "Wrong population", "--reviewer", "Ben", "--json")
	var got decideJSON
	if code != 0 || json.Unmarshal([]byte(out), &got) != nil || got.Reviewer != "Ben" || !got.Records[0].Conflict || got.OpenConflicts != 1 || got.Decided != 2 {
		t.Errorf("Ben's exclusion: %d %s %s", code, out, stderr)
	}
	out, _, _ = run(t, wsDir, "evidence", "conflicts", "--project", name)
	if !strings.Contains(out, ids[1]) || strings.Contains(out, ids[0]) {
		t.Errorf("conflicts:\n%s", out)
	}
	c := prisma(t, wsDir, name)
	if c.Included != 1 || c.Conflicts != 1 {
		t.Errorf("PRISMA %+v", c)
	}
	p := openedByTheApp(t, wsDir, name)
	if a, b := p.DecisionsOf("Ana", evidence.StageTitleAbstract), p.DecisionsOf("Ben", evidence.StageTitleAbstract); len(a) != 2 || len(b) != 2 || b[ids[1]].Include || !a[ids[1]].Include {
		t.Errorf("the app sees Ana %+v, Ben %+v", a, b)
	}
}

// TestReadIDsFile: an --ids-file is read one ID per line (a CSV's, TSV's
// or semicolon list's first column, quotes and a byte-order mark removed;
// blank lines, comments and an "id" header skipped), and bounded.
func TestReadIDsFile(t *testing.T) {
	ids, err := readIDsFile(writeFile(t, "ids.csv", "\ufeffID;title\n\"pmid:1\";x\n  demo:2\t y \n\n# skipped\n90000003\n"))
	if err != nil || strings.Join(ids, "|") != "pmid:1|demo:2|90000003" {
		t.Errorf("ids %q, %v", ids, err)
	}
	if _, err := readIDsFile(writeFile(t, "empty.txt", "id\n\n# none\n")); err == nil || !strings.Contains(err.Error(), "lists no record IDs") {
		t.Errorf("empty: %v", err)
	}
	if _, err := readIDsFile(writeFile(t, "big.txt", strings.Repeat("pmid:"+strings.Repeat("9", 194)+"\n", maxIDsFileBytes/200+1))); err == nil || !strings.Contains(err.Error(), "larger than 8 MB") {
		t.Errorf("too large: %v", err)
	}
	if _, err := readIDsFile(writeFile(t, "many.txt", strings.Repeat("x\n", maxIDsPerRun+1))); err == nil || !strings.Contains(err.Error(), "more than 100000 records") {
		t.Errorf("too many: %v", err)
	}
	if _, err := readIDsFile(filepath.Join(t.TempDir(), "missing.txt")); err == nil || !strings.Contains(err.Error(), "reading the records to decide") {
		t.Errorf("missing: %v", err)
	}
}

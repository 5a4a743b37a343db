package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvidenceImportFullTexts imports the records, then full texts as JATS
// XML and plain text, with and without --record.
func TestEvidenceImportFullTexts(t *testing.T) {
	ws := t.TempDir()
	db := importedLiterature(t, ws)
	out, stderr, code := run(t, ws, "evidence", "import", "--db", db,
		"../evidence/testdata/jats_article.xml", "../evidence/testdata/jats_set.xml", "../evidence/testdata/90000011.txt")
	if code != 0 {
		t.Fatalf("full texts: exit %d: %s", code, stderr)
	}
	for _, want := range []string{
		"imported jats_article.xml (jats): 1 full text in ",
		"  full text for pmid:90000001: ",
		"  full text for pmid:90000041: 2 chunks (new record from the article's front matter)\n",
		"  full text for pmid:90000021: ",
		"imported jats_set.xml (jats): 2 full texts in ",
		"imported 90000011.txt (text): 1 full text in",
		"the corpus in " + db + " holds 12 records",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	notes := filepath.Join(t.TempDir(), "notes.txt")
	if err := os.WriteFile(notes, []byte("RESULTS\nThe rate was 3 of 10.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code = run(t, ws, "evidence", "import", "--db", db, notes, "--record", "90000013")
	if code != 0 || !strings.Contains(out, "full text for pmid:90000013: 1 chunk\n") {
		t.Errorf("--record: exit %d\n%s%s", code, out, stderr)
	}
	_, stderr, code = run(t, ws, "evidence", "import", "--db", db, notes)
	if code == 0 || !strings.Contains(stderr, "import notes.txt: no record notes in the corpus") || !strings.Contains(stderr, "--record") {
		t.Errorf("unknown record: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = run(t, ws, "evidence", "import", "--db", db, notes, notes, "--record", "90000013")
	if code == 0 || !strings.Contains(stderr, "--record names the record of one full text, but 2 files are given") {
		t.Errorf("--record with two files: exit %d, stderr %q", code, stderr)
	}
	_, stderr, code = run(t, ws, "evidence", "import", "--db", db, "../evidence/testdata/jats_malformed.xml")
	if code == 0 || !strings.Contains(stderr, "import jats_malformed.xml line 11: malformed XML") {
		t.Errorf("malformed: exit %d, stderr %q", code, stderr)
	}
}

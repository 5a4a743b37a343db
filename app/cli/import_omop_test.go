package cli

import (
	"path/filepath"
	"strings"
	"testing"

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

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestReportsImportReportsCuts: a findings field longer than a report
// holds is cut at import, and the CLI says which and by how much.
func TestReportsImportReportsCuts(t *testing.T) {
	ws := t.TempDir()
	src := filepath.Join(ws, "long.csv")
	long := strings.Repeat("The heart is normal in size. ", 10000) // 290 KB
	if err := os.WriteFile(src, []byte("uid,findings,impression\nCXR1,\""+long+"\",Normal chest.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, stderr, code := run(t, ws, "reports", "import", src, "--db", filepath.Join(ws, "r.sqlite"))
	if code != 0 {
		t.Fatalf("import: exit %d: %s", code, stderr)
	}
	if !strings.Contains(out, "1 field was longer than a report holds and cut") || !strings.Contains(out, `long.csv line 2: field "findings" of CXR1 cut from 283 KB to 64 KB`) {
		t.Errorf("import output:\n%s", out)
	}
}

package cli

import (
	"strings"
	"testing"
)

// TestSQLWideValuesNotice is the CLI reproduction of issue 12, defect 4:
// 5 rows of 60 MB (the 100 MB are now over the runner's 64 MiB
// value limit) come back cut to the cell cap, with a notice on stderr
// saying which cap cut how many values.
func TestSQLWideValuesNotice(t *testing.T) {
	db := fixtureDB(t)
	out, stderr, code := run(t, t.TempDir(), "sql", "--db", db,
		"WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x+1 FROM c LIMIT 5) SELECT x, zeroblob(60000000) FROM c")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if n := len(out); n > 12<<20 {
		t.Errorf("stdout is %d bytes for 5 values cut to 1 MiB (printed as hex)", n)
	}
	if !strings.Contains(stderr, "5 rows in") || !strings.Contains(stderr, "5 values were longer than 1 MiB and cut to their first 1 MiB") {
		t.Errorf("stderr = %q, want the row count and the cut notice", stderr)
	}
}

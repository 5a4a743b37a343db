package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/audit"
)

func TestAuditVerifyShowExport(t *testing.T) {
	ws := t.TempDir()
	db := fixtureDB(t)
	if _, stderr, code := run(t, ws, "import", "sqlite", db, "--name", "fixture"); code != 0 {
		t.Fatalf("import: %s", stderr)
	}
	if _, stderr, code := run(t, ws, "sources", "remove", "fixture"); code != 0 {
		t.Fatalf("sources remove: %s", stderr)
	}
	out, stderr, code := run(t, ws, "audit", "verify")
	if code != 0 || !strings.Contains(out, "intact") {
		t.Fatalf("verify: %d %q %q", code, out, stderr)
	}
	out, _, code = run(t, ws, "audit", "show", "--json")
	if code != 0 {
		t.Fatal("show --json failed")
	}
	var recs []audit.Record
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var r audit.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("show --json line %q: %v", line, err)
		}
		recs = append(recs, r)
	}
	if len(recs) < 2 || recs[0].Seq != 1 || recs[0].Version != "test" {
		t.Fatalf("records: %+v", recs)
	}
	out, _, _ = run(t, ws, "audit", "show", "--since", "1h")
	if !strings.Contains(out, audit.ActionSettings) {
		t.Errorf("show: %q", out)
	}
	xlsx := filepath.Join(t.TempDir(), "trail.xlsx")
	if _, stderr, code := run(t, ws, "audit", "export", "--xlsx", xlsx); code != 0 {
		t.Fatalf("export: %s", stderr)
	}
	f, err := excelize.OpenFile(xlsx)
	if err != nil {
		t.Fatal(err)
	}
	rows, _ := f.GetRows("Audit trail")
	f.Close()
	if len(rows) != len(recs)+1 {
		t.Errorf("exported %d rows for %d records", len(rows)-1, len(recs))
	}

	// One byte changed: verify fails naming the record, with exit code 1.
	path := filepath.Join(ws, audit.LogFile)
	b, _ := os.ReadFile(path)
	i := bytes.Index(b, []byte(`"action":"`))
	b[i+10] ^= 0x20
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	_, stderr, code = run(t, ws, "audit", "verify")
	if code != 1 || !strings.Contains(stderr, "record 1") {
		t.Errorf("verify after tampering: %d %q", code, stderr)
	}

	// Reseal: the broken trail is kept aside, the new chain verifies.
	if _, stderr, code := run(t, ws, "audit", "reseal"); code != 1 || !strings.Contains(stderr, "--reason") {
		t.Errorf("reseal without a reason: %d %q", code, stderr)
	}
	out, stderr, code = run(t, ws, "audit", "reseal", "--reason", "examined by the steward")
	if code != 0 || !strings.Contains(out, "audit trail resealed") {
		t.Fatalf("reseal: %d %q %q", code, out, stderr)
	}
	if out, _, code := run(t, ws, "audit", "verify"); code != 0 || !strings.Contains(out, "intact") {
		t.Errorf("verify after reseal: %d %q", code, out)
	}
}

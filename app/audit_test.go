package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/xuri/excelize/v2"

	"github.com/clinsight/clinsight/audit"
	"github.com/clinsight/clinsight/datasets"
)

func openAuditWorkspace(t *testing.T) *Workspace {
	t.Helper()
	ws, err := Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	ws.SetVersion("9.9.9-test")
	return ws
}

// auditRecords reads the workspace's trail, checking its chain.
func auditRecords(t *testing.T, ws *Workspace) []audit.Record {
	t.Helper()
	rep, err := ws.Audit().Verify(context.Background())
	if err != nil || !rep.OK() {
		t.Fatalf("audit trail: %+v, %v", rep, err)
	}
	recs, err := ws.Audit().Records(context.Background(), time.Time{}, 0)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// breakTrail makes the audit trail unwritable: its file is a directory.
func breakTrail(t *testing.T, ws *Workspace) {
	t.Helper()
	path := ws.Audit().Path()
	_ = os.Remove(path)
	_ = os.Remove(filepath.Join(ws.Dir(), audit.HeadFile))
	if err := os.Mkdir(path, 0o700); err != nil {
		t.Fatal(err)
	}
}

func TestSettingsChangeIsRecordedAndNotMadeWhenItCannotBe(t *testing.T) {
	ws := openAuditWorkspace(t)
	if err := ws.UpdateConfig(func(c *Config) { c.Models.Chat = "qwen2.5:3b" }); err != nil {
		t.Fatal(err)
	}
	recs := auditRecords(t, ws)
	if len(recs) != 1 || recs[0].Action != audit.ActionSettings {
		t.Fatalf("records = %+v", recs)
	}
	r := recs[0]
	if !strings.Contains(DetailsText(r.Details), "qwen2.5:3b") || r.Version != "9.9.9-test" || r.User == "" || r.Host == "" || r.ModelHost != DefaultOllamaHost || r.ModelTLS != "loopback" {
		t.Errorf("record = %+v", r)
	}
	// No change, no record.
	if err := ws.UpdateConfig(func(*Config) {}); err != nil {
		t.Fatal(err)
	}
	if n := len(auditRecords(t, ws)); n != 1 {
		t.Errorf("an empty change was recorded: %d records", n)
	}

	breakTrail(t, ws)
	before, _ := os.ReadFile(filepath.Join(ws.Dir(), configFile))
	err := ws.UpdateConfig(func(c *Config) { c.Models.Chat = "other" })
	if err == nil || !strings.Contains(err.Error(), "audit trail") {
		t.Fatalf("UpdateConfig with an unwritable trail = %v", err)
	}
	after, _ := os.ReadFile(filepath.Join(ws.Dir(), configFile))
	if string(before) != string(after) || ws.Config().Models.Chat != "qwen2.5:3b" {
		t.Error("a settings change that could not be recorded was saved")
	}
}

func TestImportIsRecordedAndRefusedWhenItCannotBe(t *testing.T) {
	ws := openAuditWorkspace(t)
	csv := filepath.Join(t.TempDir(), "vitals.csv")
	if err := os.WriteFile(csv, []byte("subject_id,hr\n1,80\n2,90\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Data().ImportCSV(context.Background(), csv, datasets.CSVOptions{}); err != nil {
		t.Fatal(err)
	}
	var starts, ends int
	for _, r := range auditRecords(t, ws) {
		if r.Action != audit.ActionImport {
			continue
		}
		switch r.Details["status"] {
		case "started":
			starts++
		case "done":
			ends++
			if !strings.Contains(DetailsText(r.Details), "vitals") {
				t.Errorf("import record does not name what was imported: %v", r.Details)
			}
		}
	}
	if starts != 1 || ends != 1 {
		t.Errorf("import records: %d started, %d done", starts, ends)
	}

	breakTrail(t, ws)
	csv2 := filepath.Join(t.TempDir(), "labs.csv")
	if err := os.WriteFile(csv2, []byte("subject_id,k\n1,4.1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := ws.Data().ImportCSV(context.Background(), csv2, datasets.CSVOptions{}); err == nil {
		t.Fatal("an import that could not be recorded ran")
	}
	cat, err := ws.Data().Catalog(context.Background(), mustSource(t, ws, ImportedSourceName), false)
	if err != nil {
		t.Fatal(err)
	}
	for _, tb := range cat.Tables {
		if tb.Name == "labs" {
			t.Error("the unrecorded import wrote its table")
		}
	}
}

func mustSource(t *testing.T, ws *Workspace, name string) Source {
	t.Helper()
	src, err := ws.Resolve(name)
	if err != nil {
		t.Fatal(err)
	}
	return src
}

func TestAuditExportIsItselfRecordedWithTheWorkbookHash(t *testing.T) {
	ws := openAuditWorkspace(t)
	for _, m := range []string{"a", "b"} {
		if err := ws.UpdateConfig(func(c *Config) { c.Models.SQL = m }); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "trail.xlsx")
	sum, err := ws.Audit().Export(context.Background(), path)
	if err != nil || sum.Rows != 2 {
		t.Fatalf("Export = %+v, %v", sum, err)
	}
	recs := auditRecords(t, ws)
	last := recs[len(recs)-1]
	b, _ := os.ReadFile(path)
	h := sha256.Sum256(b)
	if last.Action != audit.ActionExport || last.Details["sha256"] != hex.EncodeToString(h[:]) || last.Details["path"] != path {
		t.Fatalf("last record = %+v", last)
	}
	f, err := excelize.OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, _ := f.GetRows("Provenance")
	var check string
	for _, r := range rows {
		if len(r) > 1 && r[0] == "Audit trail check" {
			check = r[1]
		}
	}
	if !strings.HasPrefix(check, "intact: 2 records") {
		t.Errorf("provenance check = %q", check)
	}

	// An export whose record cannot be written does not happen.
	breakTrail(t, ws)
	path2 := filepath.Join(t.TempDir(), "trail2.xlsx")
	if _, err := ws.Audit().Export(context.Background(), path2); err == nil {
		t.Fatal("export with an unwritable trail succeeded")
	}
	if _, err := os.Stat(path2); !errors.Is(err, os.ErrNotExist) {
		t.Error("an unrecorded export left its file")
	}
}

package app

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app/evidence"
)

// occupyBackupNames writes a distinct earlier backup under every name
// "<path>.corrupt-TIMESTAMP" of the next seconds, as a corrupt file of
// earlier in the same second would have left, and returns their contents.
func occupyBackupNames(t *testing.T, path string) map[string]string {
	t.Helper()
	earlier := map[string]string{}
	now := time.Now()
	for s := -1; s <= 10; s++ {
		name := fmt.Sprintf("%s.corrupt-%s", path, now.Add(time.Duration(s)*time.Second).Format("20060102-150405"))
		content := fmt.Sprintf("earlier backup %d", s)
		if err := os.WriteFile(name, []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
		earlier[name] = content
	}
	return earlier
}

// checkBackups checks that every earlier backup is unchanged and that each
// corrupt content is kept in exactly one new backup.
func checkBackups(t *testing.T, path string, earlier map[string]string, corrupt []string) {
	t.Helper()
	all, _ := filepath.Glob(path + ".corrupt-*")
	var kept []string
	for _, b := range all {
		raw, err := os.ReadFile(b)
		if err != nil {
			t.Fatal(err)
		}
		if want, ok := earlier[b]; ok {
			if string(raw) != want {
				t.Errorf("earlier backup %s was overwritten with %q", filepath.Base(b), raw)
			}
			continue
		}
		kept = append(kept, string(raw))
	}
	slices.Sort(kept)
	want := slices.Sorted(slices.Values(corrupt))
	if !slices.Equal(kept, want) {
		t.Errorf("new backups hold %q, want %q", kept, want)
	}
}

func TestCorruptConfigBackupsNeverOverwrite(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, configFile)
	earlier := occupyBackupNames(t, path)
	corrupt := []string{"{first corrupt", "{second corrupt"}
	for _, content := range corrupt {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		ws, err := Open(dir)
		if err != nil {
			t.Fatal(err)
		}
		if len(ws.Warnings()) != 1 {
			t.Errorf("warnings %q", ws.Warnings())
		}
		ws.Close()
	}
	checkBackups(t, path, earlier, corrupt)
}

func TestCorruptReviewProjectBackupsNeverOverwrite(t *testing.T) {
	ws := openTemp(t)
	if err := os.MkdirAll(ws.ReviewsDir(), 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(ws.ReviewsDir(), "broken.json")
	earlier := occupyBackupNames(t, path)
	corrupt := []string{`{"version":1,"name":"broken",`, `{"version":1,`}
	for _, content := range corrupt {
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, err := ws.LoadReviewProject("broken"); err == nil {
			t.Fatal("an unreadable project loaded")
		}
	}
	checkBackups(t, path, earlier, corrupt)
	if err := ws.SaveReviewProject(evidence.NewProject("broken", "lit", reviewPICO)); err != nil {
		t.Errorf("the name is not free again: %v", err)
	}
}

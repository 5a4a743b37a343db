//go:build linux

package atomicfile

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/internal/fsizelimit"
)

func TestFileSizeLimitKeepsTheOldFile(t *testing.T) {
	dir := fsizelimit.Dir(t)
	path := filepath.Join(dir, "results.csv")
	if !fsizelimit.InChild() {
		if err := WriteFile(path, []byte("id,value\n1,2\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	err := fsizelimit.Run(t, dir, 8<<10, func() error {
		return WriteFile(path, bytes.Repeat([]byte("3,4\n"), 10_000), 0o644)
	})
	if err == nil || !strings.Contains(err.Error(), "file too large") {
		t.Fatalf("write over the size limit: %v, want 'file too large'", err)
	}
	if raw, _ := os.ReadFile(path); string(raw) != "id,value\n1,2\n" {
		t.Errorf("the old file changed: %q", raw)
	}
	if got := names(t, dir); !slices.Equal(got, []string{"results.csv"}) {
		t.Errorf("folder holds %q, want only results.csv", got)
	}
}

//go:build linux

package meta

import (
	"crypto/sha256"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clinsight/clinsight/internal/fsizelimit"
)

// TestSaveForestPlotFailureKeepsTheOldPlot writes a good plot, then saves
// another one under an 8 KB file-size limit (`ulimit -f 8`): the save must
// fail, and the good plot must be byte for byte what it was, with no
// temporary file left beside it.
func TestSaveForestPlotFailureKeepsTheOldPlot(t *testing.T) {
	dir := fsizelimit.Dir(t)
	path := filepath.Join(dir, "plot.png")
	var before [32]byte
	if !fsizelimit.InChild() {
		if err := SaveForestPlot(path, bcgResult(t, Options{Measure: RR, Method: DL}), PlotOptions{}); err != nil {
			t.Fatal(err)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if len(raw) <= 8<<10 {
			t.Fatalf("the plot is %d bytes, too small to test an 8 KB limit", len(raw))
		}
		before = sha256.Sum256(raw)
	}
	err := fsizelimit.Run(t, dir, 8<<10, func() error {
		return SaveForestPlot(path, bcgResult(t, Options{Measure: OR, Method: REML}), PlotOptions{Title: "another plot"})
	})
	if err == nil || !strings.Contains(err.Error(), "file too large") {
		t.Fatalf("saving over the size limit: %v, want 'file too large'", err)
	}
	raw, rerr := os.ReadFile(path)
	if rerr != nil || sha256.Sum256(raw) != before {
		t.Errorf("the previous plot changed (%d bytes now, %v)", len(raw), rerr)
	}
	entries, _ := os.ReadDir(dir)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	if !slices.Equal(names, []string{"plot.png"}) {
		t.Errorf("folder holds %q, want only plot.png", names)
	}
}

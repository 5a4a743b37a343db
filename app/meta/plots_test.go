package meta

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The funnel (contour-enhanced, with trim-and-fill studies) and bubble
// plots of dat.bcg decode as images of a readable size; SVG carries the
// axis labels.
func TestFunnelAndBubblePlots(t *testing.T) {
	bcg := loadBCG(t)
	rep, err := Run(context.Background(), bcg, Options{Measure: RR}, Plan{Mods: []string{"ablat"}, TrimFill: "R0"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteFunnelPlot(&buf, rep.Result, FunnelOptions{Contours: true, TrimFill: rep.TrimFill}); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(buf.Bytes()))
	if err != nil {
		t.Fatalf("funnel PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 500 || b.Dy() < 400 {
		t.Errorf("funnel plot %v too small", b)
	}
	if dir := os.Getenv("META_PLOT_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "funnel.png"), buf.Bytes(), 0o644)
	}
	buf.Reset()
	if err := WriteFunnelPlot(&buf, rep.Result, FunnelOptions{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	if s := buf.String(); !strings.Contains(s, "Standard error") || !strings.Contains(s, "log Risk Ratio") {
		t.Error("funnel SVG lacks its axis labels")
	}
	buf.Reset()
	if err := WriteBubblePlot(&buf, *rep.Regression, "png", 0); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(bytes.NewReader(buf.Bytes())); err != nil {
		t.Fatalf("bubble PNG: %v", err)
	}
	if dir := os.Getenv("META_PLOT_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "bubble.png"), buf.Bytes(), 0o644)
	}
	reg2, err := Regress(rep.Result, []string{"ablat", "year"})
	if err != nil {
		t.Fatal(err)
	}
	if err := WriteBubblePlot(&buf, reg2, "png", 0); err == nil {
		t.Error("a bubble plot of two moderators gave no error")
	}
}

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

// The forest plot by subgroup shows each subgroup's diamond and the test
// for subgroup differences; the cumulative forest plot one row per step.
func TestSubgroupAndCumulativeForestPlots(t *testing.T) {
	bcg := loadBCG(t)
	rep, err := Run(context.Background(), bcg, Options{Measure: RR}, Plan{Subgroup: "alloc", Cumulative: true, CumulativeBy: "year"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteSubgroupForestPlot(&buf, *rep.Subgroups, rep.Result, PlotOptions{Format: "svg"}); err != nil {
		t.Fatal(err)
	}
	svg := buf.String()
	for _, want := range []string{"alloc = alternate", "alloc = systematic", "Test for subgroup differences: Q = 1.86 (df = 2)", "(k = 7)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("subgroup forest plot lacks %q", want)
		}
	}
	buf.Reset()
	if err := WriteCumulativeForestPlot(&buf, rep.Cumulative, rep.Result, PlotOptions{}); err != nil {
		t.Fatal(err)
	}
	if img, err := png.Decode(bytes.NewReader(buf.Bytes())); err != nil || img.Bounds().Dy() < 400 {
		t.Fatalf("cumulative forest PNG: %v", err)
	}
	buf.Reset()
	if err := WriteCumulativeForestPlot(&buf, rep.Cumulative, rep.Result, PlotOptions{Format: "svg"}); err != nil || !strings.Contains(buf.String(), "+ Aronson") {
		t.Errorf("cumulative forest SVG: %v", err)
	}
}

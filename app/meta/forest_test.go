package meta

import (
	"bytes"
	"image/png"
	"os"
	"strings"
	"testing"
)

func bcgResult(t *testing.T, opts Options) Result {
	t.Helper()
	res, err := Analyze(loadDataset(t, "dat.bcg"), opts)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestForestPlotBCG(t *testing.T) {
	res := bcgResult(t, Options{Measure: RR, Method: REML})
	opts := PlotOptions{FavoursLeft: "Favours BCG vaccine", FavoursRight: "Favours control"}

	var pngBuf bytes.Buffer
	if err := WriteForestPlot(&pngBuf, res, opts); err != nil {
		t.Fatalf("PNG: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(pngBuf.Bytes()))
	if err != nil {
		t.Fatalf("the PNG does not decode: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 600 || b.Dy() < 300 {
		t.Errorf("PNG is %dx%d, too small to read", b.Dx(), b.Dy())
	}

	var svgBuf bytes.Buffer
	opts.Format = "svg"
	if err := WriteForestPlot(&svgBuf, res, opts); err != nil {
		t.Fatalf("SVG: %v", err)
	}
	svg := svgBuf.String()
	for _, want := range []string{"<svg", "Aronson", "Random effects (REML)", "Random-effects model (REML)", "Favours BCG vaccine", "0.49 [0.34, 0.70]"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}

	// Keep a copy to look at when asked: META_FOREST_OUT=/tmp/bcg_forest.png.
	if out := os.Getenv("META_FOREST_OUT"); out != "" {
		if err := SaveForestPlot(out, res, PlotOptions{FavoursLeft: "Favours BCG vaccine", FavoursRight: "Favours control"}); err != nil {
			t.Fatal(err)
		}
		if err := SaveForestPlot(strings.TrimSuffix(out, ".png")+".svg", res, PlotOptions{FavoursLeft: "Favours BCG vaccine", FavoursRight: "Favours control"}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestForestPlotGallery writes plots of other shapes for a visual check
// when META_FOREST_GALLERY names a directory.
func TestForestPlotGallery(t *testing.T) {
	dir := os.Getenv("META_FOREST_GALLERY")
	if dir == "" {
		t.Skip("set META_FOREST_GALLERY=/some/dir to write the gallery")
	}
	save := func(name string, res Result, o PlotOptions) {
		t.Helper()
		if err := SaveForestPlot(dir+"/"+name, res, o); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	save("axfors_or_mh.png", mustAnalyze(t, loadDataset(t, "dat.axfors2021"), Options{Measure: OR, Method: MH}), PlotOptions{})
	save("bcg_rd_hk.png", bcgResult(t, Options{Measure: RD, Test: TestKnHa}), PlotOptions{FavoursLeft: "Favours vaccine", FavoursRight: "Favours control"})
	save("smd_dl.png", mustAnalyze(t, continuousStudies(), Options{Measure: SMD, Method: DL}), PlotOptions{})
	save("single.png", mustAnalyze(t, binaryStudies([]float64{4}, []float64{123}, []float64{11}, []float64{139}), Options{Measure: OR}), PlotOptions{})
	save("bcg_or_ee.svg", bcgResult(t, Options{Measure: OR, Method: EE}), PlotOptions{XMin: 0.05, XMax: 2})
}

// TestForestPlotShapes runs without the shared data: differences, a single
// study, fixed limits, and bad options.
func TestForestPlotShapes(t *testing.T) {
	for _, c := range []struct {
		name string
		res  Result
		opts PlotOptions
	}{
		{"smd", mustAnalyze(t, continuousStudies(), Options{Measure: SMD, Method: DL}), PlotOptions{Format: "svg"}},
		{"single", mustAnalyze(t, binaryStudies([]float64{4}, []float64{123}, []float64{11}, []float64{139}), Options{Measure: OR}), PlotOptions{}},
		{"mh zero cells", mustAnalyze(t, zeroCellTable(), Options{Measure: OR, Method: MH}), PlotOptions{XMin: 0.01, XMax: 100, FavoursRight: "Favours control"}},
	} {
		var buf bytes.Buffer
		if err := WriteForestPlot(&buf, c.res, c.opts); err != nil || buf.Len() < 1000 {
			t.Errorf("%s: %v (%d bytes)", c.name, err, buf.Len())
		}
	}
	res := mustAnalyze(t, continuousStudies(), Options{Measure: MD})
	for _, o := range []PlotOptions{{Format: "gif"}, {XMin: 2, XMax: 1}, {DPI: -1}, {FontSize: 100}} {
		if err := WriteForestPlot(&bytes.Buffer{}, res, o); ErrorCode(err) != EINVALID {
			t.Errorf("%+v: %v, want an invalid-options error", o, err)
		}
	}
	ratio := mustAnalyze(t, zeroCellTable(), Options{Measure: OR})
	if err := WriteForestPlot(&bytes.Buffer{}, ratio, PlotOptions{XMin: -1, XMax: 2}); ErrorCode(err) != EINVALID {
		t.Errorf("negative ratio limit: %v", err)
	}
	if err := WriteForestPlot(&bytes.Buffer{}, Result{}, PlotOptions{}); ErrorCode(err) != EINVALID {
		t.Errorf("empty result: %v", err)
	}
}

package meta

import (
	"bytes"
	"context"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// The funnel plot's legend lies under the x axis and its label, outside
// the plot area, so it cannot hide a study; the x axis has at least four
// labelled ticks.
func TestFunnelLegendUnderTheAxis(t *testing.T) {
	rep, err := Run(context.Background(), loadBCG(t), Options{Measure: RR}, Plan{TrimFill: "L0"})
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteFunnelPlot(&buf, rep.Result, FunnelOptions{Format: "svg", Contours: true, TrimFill: rep.TrimFill}); err != nil {
		t.Fatal(err)
	}
	// vgsvg writes text as <text x=".." y="-Y" transform="scale(1, -1)">,
	// Y measured upwards from the bottom edge.
	texts := regexp.MustCompile(`<text x="([-0-9.e]+)" y="([-0-9.e]+)" transform="scale\(1, -1\)"\s+style="[^"]*">([^<]*)</text>`).FindAllStringSubmatch(buf.String(), -1)
	height := map[string]float64{}
	var tickLabels int
	for _, m := range texts {
		y, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			t.Fatal(err)
		}
		height[m[3]] = -y
		if _, err := strconv.ParseFloat(strings.Replace(m[3], "\u2212", "-", 1), 64); err == nil {
			tickLabels++ // numbers: the ticks of both axes
		}
	}
	axis, ok1 := height["log Risk Ratio"]
	studies, ok2 := height["Studies"]
	filled, ok3 := height["Filled by trim and fill"]
	if !ok1 || !ok2 || !ok3 {
		t.Fatalf("funnel SVG lacks the axis label or a legend entry: %v", height)
	}
	if !(studies < axis && filled < axis) {
		t.Errorf("legend at heights %.1f and %.1f, not under the x-axis label at %.1f", studies, filled, axis)
	}
	if tickLabels < 4+4 {
		t.Errorf("only %d numeric tick labels on the two axes", tickLabels)
	}
}

package meta

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// The forest plots — plain, by subgroup and cumulative — draw the
// "favours" labels of the measure by default, the reviewer's own labels
// when given, and none when hidden or for a proportion.
func TestForestPlotFavoursLabels(t *testing.T) {
	rep, err := Run(context.Background(), loadBCG(t), Options{Measure: RR}, Plan{Subgroup: "alloc", Cumulative: true})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Subgroups == nil || len(rep.Cumulative) == 0 {
		t.Fatalf("the plan ran no subgroup or cumulative analysis: %+v", rep.Problems)
	}
	draw := func(name string, opts PlotOptions) string {
		t.Helper()
		opts.Format = "svg"
		var buf bytes.Buffer
		var err error
		switch name {
		case "forest":
			err = WriteForestPlot(&buf, rep.Result, opts)
		case "subgroups":
			err = WriteSubgroupForestPlot(&buf, *rep.Subgroups, rep.Result, opts)
		case "cumulative":
			err = WriteCumulativeForestPlot(&buf, rep.Cumulative, rep.Result, opts)
		}
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return buf.String()
	}
	for _, name := range []string{"forest", "subgroups", "cumulative"} {
		svg := draw(name, PlotOptions{})
		for _, want := range []string{"Favours treatment", "Favours control", "Risk Ratio (log scale)"} {
			if !strings.Contains(svg, want) {
				t.Errorf("%s plot lacks %q by default", name, want)
			}
		}
		svg = draw(name, PlotOptions{FavoursLeft: "Favours BCG", FavoursRight: "Favours no vaccine"})
		if !strings.Contains(svg, "Favours BCG") || !strings.Contains(svg, "Favours no vaccine") || strings.Contains(svg, "Favours treatment") {
			t.Errorf("%s plot does not draw the given labels instead of the defaults", name)
		}
		if svg = draw(name, PlotOptions{HideFavours: true}); strings.Contains(svg, "Favours") {
			t.Errorf("%s plot draws favours labels although hidden", name)
		}
	}
	if l, r := DefaultFavours(PR); l != "" || r != "" {
		t.Errorf("a proportion has favours labels %q, %q", l, r)
	}
	if l, r := DefaultFavours(SMD); l != "Favours treatment" || r != "Favours control" {
		t.Errorf("SMD favours labels %q, %q", l, r)
	}
}

package meta

import (
	"strings"
	"testing"
)

// TestForestLabelsIncludeTheYear: the example table has a year column, so
// the forest plot's rows read "Aronson, 1948"; the study labels of the
// data and the workbook stay as written.
func TestForestLabelsIncludeTheYear(t *testing.T) {
	studies, err := LoadCSV(strings.NewReader(ExampleBCG), InputSpec{Kind: Binary})
	if err != nil {
		t.Fatal(err)
	}
	if studies[0].Label != "Aronson" || studies[0].Year != "1948" {
		t.Fatalf("first study %q year %q", studies[0].Label, studies[0].Year)
	}
	res, err := Analyze(studies, Options{Measure: RR})
	if err != nil {
		t.Fatal(err)
	}
	l, err := newForestLayout(res, PlotOptions{}, nil)
	if err != nil {
		t.Fatal(err)
	}
	var labels []string
	for _, r := range l.rows {
		if r.kind == rowStudy {
			labels = append(labels, r.label)
		}
	}
	if len(labels) != 13 || labels[0] != "Aronson, 1948" || labels[12] != "Comstock et al, 1976" {
		t.Errorf("forest labels %q", labels)
	}
	for in, want := range map[[2]string]string{{"Smith 2001", "2001"}: "Smith 2001", {"Smith", ""}: "Smith", {"", "1999"}: ""} {
		if got := LabelWithYear(in[0], in[1]); got != want {
			t.Errorf("LabelWithYear(%q, %q) = %q, want %q", in[0], in[1], got, want)
		}
	}
}

package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// --favours sets the labels either side of the null line of the forest
// plot; without it the measure's defaults are drawn, and "none" leaves
// them out.
func TestMetaCLIFavoursLabels(t *testing.T) {
	data := writeFile(t, "bcg.csv", bcgCSV)
	dir := t.TempDir()
	for _, c := range []struct {
		flag       []string
		want, lack []string
	}{
		{nil, []string{"Favours treatment", "Favours control"}, nil},
		{[]string{"--favours", "Favours BCG, Favours no vaccine"}, []string{"Favours BCG", "Favours no vaccine"}, []string{"Favours treatment"}},
		{[]string{"--favours", "none"}, nil, []string{"Favours"}},
	} {
		svgPath := filepath.Join(dir, "forest.svg")
		args := append([]string{"--data", data, "--cols", bcgCols, "--measure", "RR", "--plot", svgPath}, c.flag...)
		if _, stderr, code := runMetaCLI(t, args...); code != 0 {
			t.Fatalf("%v: exit %d: %s", c.flag, code, stderr)
		}
		svg, err := os.ReadFile(svgPath)
		if err != nil {
			t.Fatal(err)
		}
		for _, w := range c.want {
			if !strings.Contains(string(svg), w) {
				t.Errorf("%v: the plot lacks %q", c.flag, w)
			}
		}
		for _, l := range c.lack {
			if strings.Contains(string(svg), l) {
				t.Errorf("%v: the plot draws %q", c.flag, l)
			}
		}
	}
}

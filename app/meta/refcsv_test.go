package meta

import (
	"encoding/csv"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// refTable is one of the metafor reference CSVs in testdata (written by
// testdata/reference.R; "#" lines name the R and metafor versions).
type refTable struct {
	path string
	cols map[string]int
	rows [][]string
}

func readRefTable(t *testing.T, name string) refTable {
	t.Helper()
	path := filepath.Join("testdata", name)
	f, err := os.Open(path)
	if err != nil {
		t.Fatalf("reference values: %v (regenerate with Rscript app/meta/testdata/reference.R)", err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comment = '#'
	recs, err := r.ReadAll()
	if err != nil {
		t.Fatalf("reading %s: %v", path, err)
	}
	if len(recs) < 2 {
		t.Fatalf("%s has no rows", path)
	}
	tab := refTable{path: path, cols: map[string]int{}, rows: recs[1:]}
	for i, h := range recs[0] {
		tab.cols[h] = i
	}
	return tab
}

func (tab refTable) str(t *testing.T, row []string, col string) string {
	t.Helper()
	i, ok := tab.cols[col]
	if !ok {
		t.Fatalf("%s has no column %q", tab.path, col)
	}
	return row[i]
}

// num returns a column as a number, NaN for NA.
func (tab refTable) num(t *testing.T, row []string, col string) float64 {
	t.Helper()
	s := tab.str(t, row, col)
	if s == "NA" || s == "" {
		return math.NaN()
	}
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatalf("%s column %s: %v", tab.path, col, err)
	}
	return v
}

// agreement tracks the worst relative difference from metafor per feature.
type agreement struct {
	tol   float64 // relative tolerance
	abs   float64 // absolute tolerance near zero
	worst float64
	where string
	n     int
}

// check compares got with metafor's want: NaN must match NaN; otherwise
// |got − want| ≤ abs, or ≤ tol·|want|.
func (a *agreement) check(t *testing.T, what string, got, want float64) {
	t.Helper()
	a.n++
	if math.IsNaN(want) || math.IsNaN(got) {
		if math.IsNaN(want) != math.IsNaN(got) {
			t.Errorf("%s = %.12g, metafor %.12g", what, got, want)
		}
		return
	}
	d := math.Abs(got - want)
	rel := 0.0
	if d > 0 {
		rel = d / math.Abs(want)
	}
	if math.Abs(want) > a.abs && rel > a.worst {
		a.worst, a.where = rel, what
	}
	if d > a.abs && rel > a.tol {
		t.Errorf("%s = %.15g, metafor %.15g (relative difference %.2g)", what, got, want, rel)
	}
}

func (a *agreement) report(t *testing.T, feature string) {
	t.Helper()
	t.Logf("%s: %d values compared with metafor; max relative difference %.3g (%s)", feature, a.n, a.worst, a.where)
}

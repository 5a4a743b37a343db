package meta

import (
	"math"
	"testing"
)

// TestSetAddZeroMeansNoCorrection: the value typed for zero cells is read
// one way for the desktop app and the command line: empty keeps 1/2, 0
// switches the correction off (metafor's add=0 leaves a log odds ratio of
// a zero-cell study undefined, so the study is left out), a negative or
// non-number is refused.
func TestSetAddZeroMeansNoCorrection(t *testing.T) {
	var o Options
	if err := o.SetAdd("  "); err != nil || o.Add != 0 || o.To != "" {
		t.Fatalf("empty: %+v, %v", o, err)
	}
	if d := o.withDefaults(); d.Add != 0.5 || d.To != Only0 {
		t.Errorf("empty keeps metafor's add=1/2 to only0, got %v %v", d.Add, d.To)
	}
	o = Options{To: All}
	if err := o.SetAdd("0"); err != nil || o.To != None {
		t.Errorf("0: to %q, err %v; want none", o.To, err)
	}
	o = Options{}
	if err := o.SetAdd("0.25"); err != nil || o.Add != 0.25 || o.To != "" {
		t.Errorf("0.25: %+v, %v", o, err)
	}
	for _, bad := range []string{"-1", "half", "NaN", "Inf"} {
		o = Options{}
		if err := o.SetAdd(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}

	// The effect on a study with a zero cell: with 1/2 added it has a log
	// odds ratio; with 0 added it has none.
	studies := []Study{{Label: "a", Kind: Binary, AI: 0, N1I: 10, CI: 3, N2I: 10}, {Label: "b", Kind: Binary, AI: 2, N1I: 10, CI: 4, N2I: 10}, {Label: "c", Kind: Binary, AI: 1, N1I: 12, CI: 5, N2I: 11}}
	withHalf := Options{Measure: OR}
	res, err := Analyze(studies, withHalf)
	if err != nil {
		t.Fatal(err)
	}
	none := Options{Measure: OR}
	if err := none.SetAdd("0"); err != nil {
		t.Fatal(err)
	}
	res0, err := Analyze(studies, none)
	if err != nil {
		t.Fatal(err)
	}
	if res.K != 3 || res0.K != 2 || math.Abs(res.Est-res0.Est) < 1e-9 {
		t.Errorf("k with 1/2 added %d, with 0 added %d (want 3 and 2); estimates %v %v", res.K, res0.K, res.Est, res0.Est)
	}
}

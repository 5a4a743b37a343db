package meta

import (
	"slices"
	"testing"
)

// allMethods lists every pooling method: the common-effect ones, then the
// estimators of τ².
func allMethods() []Method { return []Method{EE, MH, PETO, DL, REML, ML, HE, HS, SJ, PM, EB} }

// MethodsFor offers every pooling method for the odds ratio, and
// only methods Options.Validate accepts with each measure.
func TestMethodsFor(t *testing.T) {
	or := MethodsFor(OR)
	for _, m := range allMethods() {
		if !slices.Contains(or, m) {
			t.Errorf("OR lacks method %s", m)
		}
	}
	if or[0] != REML {
		t.Errorf("the default method is %s, want REML first", or[0])
	}
	for _, ms := range []Measure{OR, RR, RD, MD, SMD, GEN, GENRatio, PR, PLO, PFT} {
		for _, m := range MethodsFor(ms) {
			if err := (Options{Measure: ms, Method: m}).Validate(); err != nil {
				t.Errorf("MethodsFor(%s) offers %s: %v", ms, m, err)
			}
		}
	}
	if slices.Contains(MethodsFor(RR), PETO) || slices.Contains(MethodsFor(SMD), MH) {
		t.Error("Peto offered for RR or Mantel–Haenszel for SMD")
	}
}

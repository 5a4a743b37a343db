package ui

import (
	"slices"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/app/meta"
)

// TestEvidenceScreenMetaMethods: the per-outcome meta-analysis offers every
// pooling method of the chosen measure (meta.MethodsFor) — all τ²
// estimators, Peto for the odds ratio only — and Knapp–Hartung, which is
// kept with Paule–Mandel and turned off (and disabled) with Peto.
func TestEvidenceScreenMetaMethods(t *testing.T) {
	svc := newFakeReviews("lit")
	r := fakeSearched(t, svc, "methods")
	r.p.Result = evidence.ResultSpec{Outcome: "mortality", Measure: evidence.TwoGroups}
	s := openTestEvidenceScreen(t, svc, nil)
	onUI(t, func(t testing.TB) {
		mv := s.meta
		s.steps.SelectIndex(5)
		mv.measureSel.SetSelectedIndex(slices.Index(mv.measures, meta.OR))
		if got := s.project().Meta.Measure; got != "OR" {
			t.Fatalf("measure %q, want OR", got)
		}
		if !slices.Equal(mv.methods, meta.MethodsFor(meta.OR)) || len(mv.methodSel.Options) != len(mv.methods) {
			t.Fatalf("methods offered for OR %v (%d options), want %v", mv.methods, len(mv.methodSel.Options), meta.MethodsFor(meta.OR))
		}
		if mv.methodSel.Selected != modelChoice(meta.REML) {
			t.Errorf("default method %q, want REML", mv.methodSel.Selected)
		}
		// Paule–Mandel with Knapp–Hartung.
		mv.methodSel.SetSelectedIndex(slices.Index(mv.methods, meta.PM))
		mv.hk.SetChecked(true)
		if m := s.project().Meta; m.Method != "PM" || !m.KnappHartung || mv.hk.Disabled() {
			t.Fatalf("after choosing PM with Knapp–Hartung: %+v, check disabled %v", m, mv.hk.Disabled())
		}
		// Peto has no Knapp–Hartung adjustment.
		mv.methodSel.SetSelectedIndex(slices.Index(mv.methods, meta.PETO))
		if m := s.project().Meta; m.Method != "PETO" || m.KnappHartung || !mv.hk.Disabled() || mv.hk.Checked {
			t.Fatalf("after choosing Peto: %+v, check disabled %v checked %v", m, mv.hk.Disabled(), mv.hk.Checked)
		}
		// A risk ratio has no Peto: the method falls back to REML.
		mv.measureSel.SetSelectedIndex(slices.Index(mv.measures, meta.RR))
		if slices.Contains(mv.methods, meta.PETO) || !slices.Contains(mv.methods, meta.SJ) || !slices.Contains(mv.methods, meta.MH) {
			t.Errorf("methods offered for RR %v", mv.methods)
		}
		if m := s.project().Meta; m.Measure != "RR" || m.Method != "" || mv.methodSel.Selected != modelChoice(meta.REML) || mv.hk.Disabled() {
			t.Errorf("after choosing RR: %+v, method shown %q, check disabled %v", m, mv.methodSel.Selected, mv.hk.Disabled())
		}
		test.Tap(mv.runBtn)
	})
	// The fake review analyses nothing: the failure is shown, not a panic.
	waitUntil(t, "the run's message", func() bool { return strings.Contains(s.meta.status.Text, "could not run") })
}

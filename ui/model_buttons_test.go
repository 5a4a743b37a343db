package ui

import (
	"strings"
	"testing"

	"fyne.io/fyne/v2"

	"github.com/clinsight/clinsight/app"
)

// TestModelButtonsFollowTheDoctor: the Cohort screen's Ask and the
// Evidence screen's model steps are disabled and explained ("No SQL
// model installed — see Settings.", "No chat model installed —
// see Settings.") while the model is missing, the model-free paths stay
// enabled, and all is enabled again once the models are installed.
func TestModelButtonsFollowTheDoctor(t *testing.T) {
	a := newTestApp(t)
	cfg := app.DefaultConfig()
	none := &fakeSettings{cfg: cfg}
	all := &fakeSettings{cfg: cfg}
	for _, m := range []string{cfg.Models.SQL, cfg.Models.Chat, cfg.Models.Embedding} {
		all.models = append(all.models, fakeModel(m))
	}
	onUI(t, func(t testing.TB) {
		w := a.NewWindow("gates")
		defer w.Close()
		co := NewCohortScreen(t.Context(), nil, w, "test")
		ev := NewEvidenceScreen(t.Context(), newFakeReviews("lit"), nil, w, "test")
		model := map[string][]fyne.Disableable{
			"Cohort":   {co.askBtn},
			"Evidence": {ev.pico.suggestBtn, ev.screening.suggestCriteriaBtn, ev.screening.screenBtn, ev.extract.extractBtn, ev.results.resultsBtn},
		}
		free := map[string][]fyne.Disableable{
			"Cohort":   {co.runBtn},
			"Evidence": {ev.search.searchBtn, ev.screening.addCriterionBtn, ev.meta.runBtn},
		}
		gates := map[string]*buttonGate{"Cohort": co.askGate, "Evidence": ev.modelGate}
		want := map[string]string{"Cohort": "No SQL model installed — see Settings.", "Evidence": "No chat model installed — see Settings."}

		co.SetModels(none.Doctor(t.Context()))
		ev.SetModels(none.Doctor(t.Context()))
		for name, g := range gates {
			for i, b := range model[name] {
				if !b.Disabled() {
					t.Errorf("%s without the model: model button %d enabled", name, i)
				}
			}
			for i, b := range free[name] {
				if b.Disabled() {
					t.Errorf("%s without the model: model-free button %d disabled", name, i)
				}
			}
			if g.note.Hidden || !strings.HasPrefix(g.note.Text, want[name]) {
				t.Errorf("%s note %q (hidden %v), want it to start %q", name, g.note.Text, g.note.Hidden, want[name])
			}
		}
		co.SetModels(all.Doctor(t.Context()))
		ev.SetModels(all.Doctor(t.Context()))
		for name, g := range gates {
			for i, b := range model[name] {
				if b.Disabled() {
					t.Errorf("%s with the model: model button %d disabled", name, i)
				}
			}
			if !g.note.Hidden {
				t.Errorf("%s with the model: note shown %q", name, g.note.Text)
			}
		}
	})
}

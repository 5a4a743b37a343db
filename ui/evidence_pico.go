package ui

import (
	"context"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/app/evidence"
	"github.com/clinsight/clinsight/internal/progress"
)

// picoView is the PICO step: the review question, and the model's search
// terms from it.
type picoView struct {
	s       *EvidenceScreen
	content fyne.CanvasObject

	entries    [4]*widget.Entry // population, intervention, comparison, outcome
	suggestBtn *widget.Button
}

func newPICOView(s *EvidenceScreen) *picoView {
	v := &picoView{s: s}
	labels := []string{"Population (P)", "Intervention (I)", "Comparison (C)", "Outcome (O)"}
	places := []string{
		"Who is studied, e.g. patients with hepatocellular carcinoma",
		"The treatment or exposure, e.g. microwave ablation",
		"The comparator, if any, e.g. radiofrequency ablation",
		"What is measured, e.g. local tumor progression",
	}
	form := widget.NewForm()
	for i := range v.entries {
		e := widget.NewMultiLineEntry()
		e.Wrapping = fyne.TextWrapWord
		e.SetMinRowsVisible(2)
		e.SetPlaceHolder(places[i])
		e.OnChanged = func(string) { v.changed() }
		v.entries[i] = e
		form.Append(labels[i], e)
	}
	v.suggestBtn = widget.NewButtonWithIcon("Suggest search terms", theme.SearchIcon(), v.SuggestTerms)
	v.suggestBtn.Importance = widget.HighImportance
	v.content = container.NewVScroll(container.NewVBox(
		hint("The review question. At least a population or an intervention is needed; the other elements sharpen the search, the criteria and the extraction."),
		form,
		container.NewHBox(v.suggestBtn),
		hint("The chat model proposes search terms from the question (shown on the Search step for you to edit). Without a model, type the terms yourself on the Search step."),
	))
	return v
}

// show fills the entries from the project.
func (v *picoView) show(p *evidence.Project) {
	for i, text := range []string{p.PICO.Population, p.PICO.Intervention, p.PICO.Comparison, p.PICO.Outcome} {
		v.entries[i].SetText(text)
	}
}

func (v *picoView) changed() {
	e := v.entries
	v.s.edit(func(p *evidence.Project) {
		p.PICO = evidence.PICO{Population: e[0].Text, Intervention: e[1].Text, Comparison: e[2].Text, Outcome: e[3].Text}
	})
}

// SuggestTerms asks the model for search terms from the PICO and shows
// them on the Search step.
func (v *picoView) SuggestTerms() {
	v.s.runStep("Suggesting search terms", func(ctx context.Context, r app.Reviewer, report progress.Func) error {
		report(progress.Report{Stage: "Asking the chat model for search terms"})
		return r.SuggestTerms(ctx)
	}, func() { v.s.steps.SelectIndex(1) })
}

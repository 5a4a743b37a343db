package ui

import (
	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
)

// buttonGate keeps the buttons of a screen that need a model disabled,
// with the reason shown in its note, while the app says the task's model is
// not usable (the model doctor's report, as modelGate does for a "Use the
// model" switch): the screen says why at once instead of failing on the
// first click. A screen that disables such a button while it works enables
// it again through enable.
type buttonGate struct {
	task    string
	note    *widget.Label
	without string // what still works without the model
	buttons []fyne.Disableable
	usable  bool
}

// newButtonGate gates buttons on task's model; without completes the
// note.
func newButtonGate(task, without string, buttons ...fyne.Disableable) *buttonGate {
	g := &buttonGate{task: task, note: widget.NewLabel(""), without: without, buttons: buttons, usable: true}
	g.note.Wrapping = fyne.TextWrapWord
	g.note.Importance = widget.WarningImportance
	g.note.Hide()
	return g
}

// apply disables the buttons and explains why when the task's model is not
// usable, and enables them again when it is (call on the UI goroutine).
func (g *buttonGate) apply(rep app.DoctorReport) {
	ok, why := rep.Usable(g.task)
	g.usable = ok
	for _, b := range g.buttons {
		if ok {
			b.Enable()
		} else {
			b.Disable()
		}
	}
	if ok {
		g.note.Hide()
		return
	}
	g.note.SetText(why + " " + g.without)
	g.note.Show()
}

// enable enables b when the model is usable.
func (g *buttonGate) enable(b fyne.Disableable) {
	if g.usable {
		b.Enable()
	}
}

// SetModels disables Ask, with the reason, while the SQL model is not
// usable (call on the UI goroutine).
func (s *CohortScreen) SetModels(rep app.DoctorReport) { s.askGate.apply(rep) }

// SetModels disables the steps done by the chat model (suggesting terms and
// criteria, screening and extracting by the model), with the reason, while
// it is not usable (call on the UI goroutine).
func (s *EvidenceScreen) SetModels(rep app.DoctorReport) { s.modelGate.apply(rep) }

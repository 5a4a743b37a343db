package ui

import (
	"fmt"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
)

// offlineWays are the three ways to get a model onto a computer without
// internet access, in a clinician's words (no commands, no flags).
const offlineWays = `Three ways to get a model onto this computer:
1. On a computer with internet access, install Ollama and download the model there; then copy its models folder (.ollama/models in the home folder, both "blobs" and "manifests") into the same folder here and restart Ollama.
2. If you have the model as a GGUF file, use "Import GGUF file…" below.
3. If your site runs a shared model server, type its address under "Ollama server" above.`

// modelsPanel is the Settings card that says, per task, which model is
// recommended, what it costs to download and run, whether it is usable and
// how to get it (built from the app's model doctor).
type modelsPanel struct {
	summary *widget.Label
	tasks   *fyne.Container
	card    *widget.Card
	pull    func(name string)
}

func newModelsPanel(pull func(string)) *modelsPanel {
	p := &modelsPanel{summary: widget.NewLabel("Checking the models…"), tasks: container.NewVBox(), pull: pull}
	p.summary.Wrapping = fyne.TextWrapWord
	ways := widget.NewLabel(offlineWays)
	ways.Wrapping = fyne.TextWrapWord
	p.card = widget.NewCard("Models", "What each task needs, and how to get it.",
		container.NewVBox(p.summary, p.tasks, ways))
	p.show(app.DoctorReport{})
	return p
}

// show fills the panel from a doctor report (an empty report: not checked
// yet).
func (p *modelsPanel) show(rep app.DoctorReport) {
	switch {
	case len(rep.Checks) == 0:
		p.summary.SetText("Checking the models…")
	case rep.OK():
		p.summary.SetText("Everything the model features need is installed.")
	default:
		var miss []string
		for _, c := range rep.Missing() {
			miss = append(miss, c.Item)
		}
		p.summary.SetText("Missing: " + strings.Join(miss, "; ") + ". Until then, the features that need these models are switched off; everything else works.")
	}
	p.summary.Importance = widget.MediumImportance
	if len(rep.Checks) > 0 && !rep.OK() {
		p.summary.Importance = widget.WarningImportance
	}
	p.summary.Refresh()
	p.tasks.RemoveAll()
	for _, r := range app.RecommendedModels() {
		p.tasks.Add(p.taskRow(r, rep))
	}
	p.tasks.Refresh()
}

// taskRow is one task's line: the recommendation, its state and its fix.
func (p *modelsPanel) taskRow(r app.Recommended, rep app.DoctorReport) fyne.CanvasObject {
	text := fmt.Sprintf("%s — recommended: %s (%s download, about %s of memory).", taskTitle(r.Task), r.Model, r.Download, r.RAM)
	var check *app.DoctorCheck
	for i, c := range rep.Checks {
		if c.Item == r.Task+" model" || strings.HasPrefix(c.Item, r.Task+" model ") {
			check = &rep.Checks[i]
		}
	}
	switch {
	case len(rep.Checks) == 0:
	case check == nil:
		_, why := rep.Usable(r.Task)
		text += " Not checked: " + why
	case check.OK:
		text += " Ready: " + check.Detail + "."
	default:
		text += " Not usable: " + check.Detail + "."
		if check.Fix != "" {
			text += " To fix: " + check.Fix + "."
		}
	}
	l := widget.NewLabel(text)
	l.Wrapping = fyne.TextWrapWord
	if check != nil && check.Pull != "" && p.pull != nil {
		name := check.Pull
		btn := widget.NewButtonWithIcon("Download "+name, theme.DownloadIcon(), func() { p.pull(name) })
		return container.NewVBox(l, container.NewHBox(btn))
	}
	return l
}

// taskTitle names a task for a heading.
func taskTitle(task string) string {
	switch task {
	case app.TaskSQL:
		return "SQL generation"
	case app.TaskChat:
		return "Chat and extraction"
	case app.TaskEmbeddings:
		return "Embeddings (meaning-based search)"
	}
	return task
}

// modelGate keeps a "Use the model" switch off, with the reason shown next
// to it, while the app says the task's model is not usable.
type modelGate struct {
	check *widget.Check
	note  *widget.Label
	task  string
	off   bool // switched off by the gate (switched on again when usable)
}

func newModelGate(check *widget.Check, task string) *modelGate {
	g := &modelGate{check: check, note: widget.NewLabel(""), task: task}
	g.note.Wrapping = fyne.TextWrapWord
	g.note.Importance = widget.WarningImportance
	g.note.Hide()
	return g
}

// apply switches the check off and explains why when the task's model is
// not usable, and on again when it becomes usable.
func (g *modelGate) apply(rep app.DoctorReport) {
	ok, why := rep.Usable(g.task)
	if !ok {
		g.check.SetChecked(false)
		g.check.Disable()
		g.note.SetText(why)
		g.note.Show()
		g.off = true
		return
	}
	g.check.Enable()
	g.note.Hide()
	if g.off {
		g.check.SetChecked(true)
		g.off = false
	}
}

// applyModels passes the model doctor's report to the screens with a "Use
// the model" switch.
func (mw *MainWindow) applyModels(rep app.DoctorReport) {
	if mw.Trials != nil {
		mw.Trials.SetModels(rep)
	}
	if mw.Impressions != nil {
		mw.Impressions.SetModels(rep)
	}
	if mw.Cohort != nil {
		mw.Cohort.SetModels(rep)
	}
	if mw.Evidence != nil {
		mw.Evidence.SetModels(rep)
	}
}

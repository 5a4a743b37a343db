package ui

import (
	"context"
	"strings"
	"testing"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/localllm"
)

// Doctor of fakeSettings: the server is up; a task's model is usable when
// it is installed on the fake server.
func (f *fakeSettings) Doctor(context.Context) app.DoctorReport {
	cfg := f.Config()
	st := f.Check(context.Background())
	installed := map[string]bool{}
	for _, m := range st.Models {
		installed[m.Name] = true
	}
	rep := app.DoctorReport{Checks: []app.DoctorCheck{{Item: "model server address", OK: true}, {Item: "model server", OK: true}}}
	for _, r := range app.RecommendedModels() {
		name := map[string]string{app.TaskSQL: cfg.Models.SQL, app.TaskChat: cfg.Models.Chat, app.TaskEmbeddings: cfg.Models.Embedding}[r.Task]
		c := app.DoctorCheck{Item: r.Task + " model " + name, OK: installed[name], Detail: "installed"}
		if !c.OK {
			c.Detail, c.Fix, c.Pull = "not installed on the model server", "install "+name, name
		}
		rep.Checks = append(rep.Checks, c)
	}
	return rep
}

// TestSettingsModelsPanel: with no model installed, the Models
// card names each task's recommended model with its download size and
// memory, says what is missing with a download button, gives the three
// offline ways without command-line flags, and the main window's switch
// handler receives the report.
func TestSettingsModelsPanel(t *testing.T) {
	a := newTestApp(t)
	cfg := app.DefaultConfig()
	svc := &fakeSettings{cfg: cfg}
	svc.models = nil
	var s *SettingsScreen
	var got []app.DoctorReport
	onUI(t, func(t testing.TB) {
		s = NewSettingsScreen(t.Context(), svc, a.NewWindow("settings"))
		s.OnModelsChecked = func(r app.DoctorReport) { got = append(got, r) }
		s.Check()
	})
	waitUntil(t, "the models check", func() bool { return len(got) == 1 })
	onUI(t, func(t testing.TB) {
		text := s.models.summary.Text + "\n" + labelsText(s.models.tasks)
		for _, r := range app.RecommendedModels() {
			for _, want := range []string{r.Model, r.Download, r.RAM} {
				if !strings.Contains(text, want) {
					t.Errorf("Models card lacks %q:\n%s", want, text)
				}
			}
		}
		if n := countButtons(s.models.tasks, "Download "+cfg.Models.Chat); n != 1 {
			t.Errorf("%d buttons to download the chat model, want 1", n)
		}
		if !strings.HasPrefix(s.models.summary.Text, "Missing: ") {
			t.Errorf("summary %q", s.models.summary.Text)
		}
		for _, want := range []string{".ollama/models", "blobs", "manifests", "Import GGUF file", "Ollama server"} {
			if !strings.Contains(offlineWays, want) {
				t.Errorf("the offline ways lack %q", want)
			}
		}
		if strings.Contains(text+offlineWays, "--") {
			t.Errorf("a command-line flag in GUI text:\n%s", text)
		}
	})

	// Everything installed: the card says so.
	svc.mu.Lock()
	for _, m := range []string{cfg.Models.SQL, cfg.Models.Chat, cfg.Models.Embedding} {
		svc.models = append(svc.models, fakeModel(m))
	}
	svc.mu.Unlock()
	onUI(t, func(testing.TB) { s.Check() })
	waitUntil(t, "the second check", func() bool { return len(got) == 2 && got[1].OK() })
	onUI(t, func(t testing.TB) {
		if !strings.HasPrefix(s.models.summary.Text, "Everything") {
			t.Errorf("summary with all models: %q", s.models.summary.Text)
		}
	})
}

// TestModelSwitchesFollowTheDoctor: Trials' and Impressions' "use the
// model" switches are off, disabled and explained while no chat model is
// installed, and on again once it is.
func TestModelSwitchesFollowTheDoctor(t *testing.T) {
	a := newTestApp(t)
	cfg := app.DefaultConfig()
	none := &fakeSettings{cfg: cfg}
	all := &fakeSettings{cfg: cfg}
	for _, m := range []string{cfg.Models.SQL, cfg.Models.Chat, cfg.Models.Embedding} {
		all.models = append(all.models, fakeModel(m))
	}
	onUI(t, func(t testing.TB) {
		w := a.NewWindow("gates")
		tr := NewTrialsScreen(t.Context(), nil, w, "test")
		im := NewImpressionsScreen(t.Context(), nil, w, "test")
		for _, c := range []struct {
			name string
			sw   *widget.Check
			gate *modelGate
			set  func(app.DoctorReport)
		}{{"Trials", tr.useModel, tr.modelGate, tr.SetModels}, {"Impressions", im.useModel, im.modelGate, im.SetModels}} {
			c.set(none.Doctor(t.Context()))
			if c.sw.Checked || !c.sw.Disabled() || c.gate.note.Hidden || c.gate.note.Text != "No chat model installed — see Settings." {
				t.Errorf("%s without a chat model: checked %v, disabled %v, note %q (hidden %v)", c.name, c.sw.Checked, c.sw.Disabled(), c.gate.note.Text, c.gate.note.Hidden)
			}
			c.set(all.Doctor(t.Context()))
			if !c.sw.Checked || c.sw.Disabled() || !c.gate.note.Hidden {
				t.Errorf("%s with a chat model: checked %v, disabled %v, note hidden %v", c.name, c.sw.Checked, c.sw.Disabled(), c.gate.note.Hidden)
			}
		}
	})
}

func fakeModel(name string) localllm.Model { return localllm.Model{Name: name} }

// countButtons counts the buttons labelled text under o.
func countButtons(o fyne.CanvasObject, text string) int {
	n := 0
	var walk func(fyne.CanvasObject)
	walk = func(o fyne.CanvasObject) {
		switch w := o.(type) {
		case *widget.Button:
			if w.Text == text {
				n++
			}
		case *fyne.Container:
			for _, c := range w.Objects {
				walk(c)
			}
		}
	}
	walk(o)
	return n
}

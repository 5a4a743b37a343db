package ui

import (
	"context"
	"errors"
	"fmt"
	"image/color"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/internal/progress"
	"github.com/clinsight/clinsight/localllm"
)

// Status light colours.
var (
	colorUp      = color.NRGBA{R: 0x2e, G: 0xa0, B: 0x43, A: 0xff}
	colorDown    = color.NRGBA{R: 0xd0, G: 0x31, B: 0x2d, A: 0xff}
	colorUnknown = color.NRGBA{R: 0x9e, G: 0x9e, B: 0x9e, A: 0xff}
)

// notInstalled marks a configured model the server does not have.
const notInstalled = " (not installed)"

// SettingsScreen configures the Ollama host, the model per task and the
// query limits, shows whether the server is reachable, and installs models
// (Pull from the registry, Import a GGUF file).
type SettingsScreen struct {
	ctx      context.Context
	settings app.SettingsService
	window   fyne.Window

	host        *widget.Entry
	hostInUse   *widget.Label
	light       *canvas.Circle
	statusLabel *widget.Label
	embedNote   *widget.Label
	sqlModel    *widget.Select
	chatModel   *widget.Select
	embedModel  *widget.Select
	pullName    *widget.Entry
	timeout     *widget.Entry
	maxRows     *widget.Entry
	limitsInfo  *widget.Label
	content     fyne.CanvasObject

	// The connection and privacy card (host policy).
	connState    *widget.Label
	hostWarning  *widget.Label
	allowHTTP    *widget.Check
	allowWarning *widget.Label
	tokenFile    *widget.Entry
	tokenEnv     *widget.Entry
	caFile       *widget.Entry
	sendRows     *widget.Check
	policyInfo   *widget.Label

	// OnHostChanged, when set, is called on the UI goroutine after the
	// host or its policy was saved (the main window refreshes its status
	// bar).
	OnHostChanged func()
	// OnModelsChecked, when set, is called on the UI goroutine with each
	// model doctor's report (the main window switches "Use the model"
	// off where the model is missing).
	OnModelsChecked func(app.DoctorReport)

	// models is the first-run Models card (settings_models.go).
	models *modelsPanel

	// Owned by the UI goroutine: the last status checked.
	status app.Status
}

// NewSettingsScreen builds the Settings screen; call Check to load the
// server's state.
func NewSettingsScreen(ctx context.Context, settings app.SettingsService, w fyne.Window) *SettingsScreen {
	s := &SettingsScreen{ctx: ctx, settings: settings, window: w}
	cfg := settings.Config()

	s.host = widget.NewEntry()
	s.host.SetText(cfg.OllamaHost)
	s.hostInUse = widget.NewLabel("")
	s.hostInUse.Wrapping = fyne.TextWrapWord
	s.showHostInUse()
	s.light = canvas.NewCircle(colorUnknown)
	s.statusLabel = widget.NewLabel("Not checked yet.")
	s.statusLabel.Wrapping = fyne.TextWrapWord
	lightBox := container.NewGridWrap(fyne.NewSize(18, 18), s.light)
	checkBtn := widget.NewButtonWithIcon("Save and check", theme.ViewRefreshIcon(), s.saveHost)

	s.sqlModel = widget.NewSelect(nil, func(string) { s.saveModels() })
	s.chatModel = widget.NewSelect(nil, func(string) { s.saveModels() })
	s.embedModel = widget.NewSelect(nil, func(string) { s.saveModels() })
	s.setModelChoices(nil)
	s.embedNote = widget.NewLabel("")
	s.embedNote.Wrapping = fyne.TextWrapWord

	s.pullName = widget.NewEntry()
	s.pullName.SetPlaceHolder("model name, e.g. qwen2.5-coder:7b")
	pullBtn := widget.NewButtonWithIcon("Pull", theme.DownloadIcon(), func() { s.Pull(s.pullName.Text) })
	importBtn := widget.NewButtonWithIcon("Import GGUF file…", theme.FolderOpenIcon(), s.chooseGGUF)

	s.timeout = widget.NewEntry()
	s.timeout.SetText(time.Duration(cfg.Limits.QueryTimeout).String())
	s.maxRows = widget.NewEntry()
	s.maxRows.SetText(strconv.Itoa(cfg.Limits.MaxRows))
	s.limitsInfo = widget.NewLabel("")
	saveLimits := widget.NewButtonWithIcon("Save limits", theme.DocumentSaveIcon(), func() {
		s.SaveLimits(s.timeout.Text, s.maxRows.Text)
	})

	server := widget.NewCard("Ollama server", "Clinsight sends data only to this address.",
		container.NewVBox(
			container.NewBorder(nil, nil, widget.NewLabel("Host"), checkBtn, s.host),
			s.hostInUse,
			container.NewBorder(nil, nil, container.NewCenter(lightBox), nil, s.statusLabel),
		))
	connection := s.newConnectionCard()
	s.models = newModelsPanel(s.Pull)
	models := widget.NewCard("Models per task", "Choose among the models installed on the server.",
		container.NewVBox(
			widget.NewForm(
				widget.NewFormItem("SQL generation", s.sqlModel),
				widget.NewFormItem("Chat and extraction", s.chatModel),
				widget.NewFormItem("Embeddings", s.embedModel),
			),
			container.NewBorder(nil, nil, nil, container.NewHBox(pullBtn, importBtn), s.pullName),
			s.embedNote,
		))
	limits := widget.NewCard("Query limits", "Applied to every SQL query, typed or generated.",
		container.NewVBox(
			widget.NewForm(
				widget.NewFormItem("Time limit", s.timeout),
				widget.NewFormItem("Row cap", s.maxRows),
			),
			container.NewBorder(nil, nil, nil, saveLimits, s.limitsInfo),
		))
	s.content = container.NewVScroll(container.NewVBox(s.models.card, server, connection, models, limits, newSourcePolicies(settings).card)) // settings_sources.go
	return s
}

// Content returns the screen's root object.
func (s *SettingsScreen) Content() fyne.CanvasObject { return s.content }

// Check asks the server for its state off the UI goroutine and updates the
// status light, the version and the model lists.
func (s *SettingsScreen) Check() {
	host := s.showHostInUse()
	s.statusLabel.SetText("Checking " + host + " …")
	s.light.FillColor = colorUnknown
	s.light.Refresh()
	go func() {
		st := s.settings.Check(s.ctx)
		fyne.Do(func() {
			s.status = st
			if st.Health.Reachable {
				s.light.FillColor = colorUp
				s.statusLabel.SetText(fmt.Sprintf("Reachable · Ollama %s · %d models installed", st.Health.Version, len(st.Models)))
			} else {
				s.light.FillColor = colorDown
				s.statusLabel.SetText("Not reachable: " + errorText(st.HealthError))
			}
			s.light.Refresh()
			s.setModelChoices(st.Models)
			s.embedNote.SetText(st.EmbeddingNote())
		})
	}()
	go func() {
		rep := s.settings.Doctor(s.ctx)
		fyne.Do(func() {
			s.models.show(rep)
			if s.OnModelsChecked != nil {
				s.OnModelsChecked(rep)
			}
		})
	}()
}

// showHostInUse says which host Clinsight talks to and where it comes from
// (OLLAMA_HOST, the settings, the default), and returns that host.
func (s *SettingsScreen) showHostInUse() string {
	h, err := s.settings.ModelHost()
	if err != nil {
		s.hostInUse.SetText("In use: none. " + errorText(err))
		return s.settings.Config().OllamaHost
	}
	text := "In use: " + h.String()
	if h.Overrides() {
		text += ". The environment variable " + app.EnvOllamaHost + " overrides the host saved here while it is set."
	}
	s.hostInUse.SetText(text)
	return h.URL
}

// errorText is the message of err for a status line: its one sentence
// (errors.go), `code` shown in quotes.
func errorText(err error) string {
	if err == nil {
		return "unknown error"
	}
	return plainText(errorSummary(err))
}

// setModelChoices fills the pickers with the installed models and the
// configured ones (marked when not installed), without saving anything.
func (s *SettingsScreen) setModelChoices(models []localllm.Model) {
	cfg := s.settings.Config()
	var names []string
	installed := map[string]bool{}
	for _, m := range models {
		names = append(names, m.Name)
		installed[m.Name] = true
	}
	for _, p := range []struct {
		sel     *widget.Select
		current string
	}{{s.sqlModel, cfg.Models.SQL}, {s.chatModel, cfg.Models.Chat}, {s.embedModel, cfg.Models.Embedding}} {
		opts := append([]string(nil), names...)
		selected := p.current
		if !installed[p.current] && !installed[p.current+":latest"] {
			selected = p.current + notInstalled
			opts = append(opts, selected)
		} else if !installed[p.current] {
			selected = p.current + ":latest"
		}
		changed := p.sel.OnChanged
		p.sel.OnChanged = nil
		p.sel.SetOptions(opts)
		p.sel.SetSelected(selected)
		p.sel.OnChanged = changed
	}
}

// saveHost validates and saves the host, then checks the server.
func (s *SettingsScreen) saveHost() {
	host := strings.TrimSpace(s.host.Text)
	norm, err := localllm.NormalizeHost(host)
	if err != nil {
		showError(s.window, fmt.Errorf("the Ollama host %q is not valid: %w", host, err))
		return
	}
	if err := s.settings.UpdateConfig(func(c *app.Config) { c.OllamaHost = norm.String() }); err != nil {
		showError(s.window, err)
		return
	}
	s.host.SetText(s.settings.Config().OllamaHost)
	s.showHostState()
	s.hostChanged()
	s.Check()
}

// newConnectionCard builds the card that shows how the model server is
// reached (TLS state, token source, result rows, the red warnings) and
// edits the host policy.
func (s *SettingsScreen) newConnectionCard() fyne.CanvasObject {
	s.connState = widget.NewLabel("")
	s.connState.Wrapping = fyne.TextWrapWord
	s.hostWarning = widget.NewLabel("")
	s.hostWarning.Wrapping = fyne.TextWrapWord
	s.hostWarning.Importance = widget.DangerImportance
	s.allowWarning = widget.NewLabel(allowHTTPWarning)
	s.allowWarning.Wrapping = fyne.TextWrapWord
	s.allowWarning.Importance = widget.DangerImportance
	s.allowHTTP = widget.NewCheck("Allow plain http to this server although it is not on this computer", func(on bool) {
		s.allowWarning.Hidden = !on
		s.allowWarning.Refresh()
	})
	s.tokenFile = widget.NewEntry()
	s.tokenFile.SetPlaceHolder("full path of a file holding the token (readable by you only)")
	s.tokenEnv = widget.NewEntry()
	s.tokenEnv.SetPlaceHolder("NAME of an environment variable, e.g. CLINSIGHT_MODEL_TOKEN")
	s.caFile = widget.NewEntry()
	s.caFile.SetPlaceHolder("full path of your site's CA certificate (PEM); empty: the system's")
	s.sendRows = widget.NewCheck("Send result rows (patient-level data) to the model", nil)
	s.policyInfo = widget.NewLabel("")
	s.policyInfo.Wrapping = fyne.TextWrapWord
	save := widget.NewButtonWithIcon("Save connection settings", theme.DocumentSaveIcon(), s.SaveHostChoices)
	s.showHostState()
	return widget.NewCard("Connection and privacy", "How Clinsight reaches the model server and what it may send. The settings hold where a token is, never the token.",
		container.NewVBox(
			s.connState,
			s.hostWarning,
			s.allowHTTP,
			s.allowWarning,
			widget.NewForm(
				widget.NewFormItem("Access token file", s.tokenFile),
				widget.NewFormItem("or token variable", s.tokenEnv),
				widget.NewFormItem("Site CA file", s.caFile),
			),
			s.sendRows,
			container.NewBorder(nil, nil, nil, save, s.policyInfo),
		))
}

// allowHTTPWarning is shown, in red, while "allow plain http" is ticked.
const allowHTTPWarning = "Only if the whole network path to the server is inside your site and trusted: questions, clinical text and result rows cross it unencrypted."

// showHostState shows the model server's TLS state, token source, whether
// result rows may go to the model and the warnings, and loads the
// editable choices.
func (s *SettingsScreen) showHostState() {
	st := s.settings.HostState()
	s.connState.SetText(fmt.Sprintf("Connection: %s · Access token: %s · Result rows: %s", st.TLS, st.TokenText(), st.RowsText()))
	setDanger(s.hostWarning, st.StatusText())
	ch := st.Choices
	s.allowHTTP.SetChecked(ch.AllowPlainHTTP)
	s.allowWarning.Hidden = !ch.AllowPlainHTTP
	s.allowWarning.Refresh()
	s.tokenFile.SetText(ch.TokenFile)
	s.tokenEnv.SetText(ch.TokenEnv)
	s.caFile.SetText(ch.CAFile)
	s.sendRows.SetChecked(ch.SendRows)
}

// setDanger shows text in a red label, hiding the label when it is empty.
func setDanger(l *widget.Label, text string) {
	l.SetText(text)
	if text == "" {
		l.Hide()
	} else {
		l.Show()
	}
}

// SaveHostChoices saves the connection settings off the UI goroutine (the
// service reads the token and CA files to check them), then shows the new
// state, or why nothing was saved.
func (s *SettingsScreen) SaveHostChoices() {
	ch := app.HostChoices{
		AllowPlainHTTP: s.allowHTTP.Checked,
		TokenFile:      s.tokenFile.Text,
		TokenEnv:       s.tokenEnv.Text,
		CAFile:         s.caFile.Text,
		SendRows:       s.sendRows.Checked,
	}
	s.policyInfo.SetText("Saving …")
	go func() {
		err := s.settings.SetHostChoices(ch)
		fyne.Do(func() {
			if err != nil {
				s.policyInfo.SetText("Not saved: " + errorText(err))
				return
			}
			s.policyInfo.SetText("Saved.")
			s.showHostState()
			s.hostChanged()
			s.Check()
		})
	}()
}

// hostChanged tells the main window that the host or its policy changed.
func (s *SettingsScreen) hostChanged() {
	if s.OnHostChanged != nil {
		s.OnHostChanged()
	}
}

// HostStatusBar is the main window's status bar: empty and hidden while
// the model server is on this computer or reached over https, a red
// warning while plain http to another computer is in use (or refused).
type HostStatusBar struct {
	settings app.SettingsService
	label    *widget.Label
}

// NewHostStatusBar builds the status bar and shows the current state.
func NewHostStatusBar(settings app.SettingsService) *HostStatusBar {
	b := &HostStatusBar{settings: settings, label: widget.NewLabel("")}
	b.label.Wrapping = fyne.TextWrapWord
	b.label.Importance = widget.DangerImportance
	b.Refresh()
	return b
}

// Content returns the status bar's object.
func (b *HostStatusBar) Content() fyne.CanvasObject { return b.label }

// Refresh shows the model server's current state (on the UI goroutine).
func (b *HostStatusBar) Refresh() { setDanger(b.label, b.settings.HostState().StatusText()) }

// saveModels stores the selected model per task.
func (s *SettingsScreen) saveModels() {
	pick := func(sel *widget.Select, old string) string {
		v := strings.TrimSuffix(sel.Selected, notInstalled)
		if v == "" {
			return old
		}
		return v
	}
	err := s.settings.UpdateConfig(func(c *app.Config) {
		c.Models.SQL = pick(s.sqlModel, c.Models.SQL)
		c.Models.Chat = pick(s.chatModel, c.Models.Chat)
		c.Models.Embedding = pick(s.embedModel, c.Models.Embedding)
	})
	if err != nil {
		showError(s.window, err)
	}
}

// SaveLimits validates and stores the query time limit and row cap.
func (s *SettingsScreen) SaveLimits(timeout, maxRows string) {
	d, err := time.ParseDuration(strings.TrimSpace(timeout))
	if err != nil || d <= 0 {
		s.limitsInfo.SetText(fmt.Sprintf("The time limit %q is not valid: write it like 30s or 2m.", timeout))
		return
	}
	n, err := strconv.Atoi(strings.TrimSpace(strings.ReplaceAll(maxRows, ",", "")))
	if err != nil || n <= 0 {
		s.limitsInfo.SetText(fmt.Sprintf("The row cap %q is not valid: write a positive whole number.", maxRows))
		return
	}
	if err := s.settings.UpdateConfig(func(c *app.Config) {
		c.Limits.QueryTimeout = app.Duration(d)
		c.Limits.MaxRows = n
	}); err != nil {
		s.limitsInfo.SetText(errorText(err))
		return
	}
	s.limitsInfo.SetText(fmt.Sprintf("Saved: queries stop after %s and return at most %s rows.", d, formatCount(int64(n))))
}

// Pull downloads a model through the server with progress and Cancel.
func (s *SettingsScreen) Pull(name string) {
	name = strings.TrimSpace(name)
	if name == "" {
		dialog.ShowInformation("Pull a model", "Type the name of a model, e.g. qwen2.5-coder:7b.", s.window)
		return
	}
	s.transfer("Pull "+name, func(ctx context.Context, report progress.Func) error {
		return s.settings.Pull(ctx, name, report)
	})
}

// ImportGGUF installs a local GGUF file as model name.
func (s *SettingsScreen) ImportGGUF(name, path string) {
	s.transfer("Import "+name, func(ctx context.Context, report progress.Func) error {
		return s.settings.ImportModel(ctx, name, path, report)
	})
}

// transfer runs a model download or import behind a progress dialog and
// refreshes the model lists afterwards.
func (s *SettingsScreen) transfer(title string, work func(context.Context, progress.Func) error) {
	runTask(s.ctx, s.window, title, work, func(err error) {
		if err != nil && !errors.Is(err, context.Canceled) {
			showError(s.window, err)
		}
		s.Check()
	})
}

func (s *SettingsScreen) chooseGGUF() {
	chooseOpenFile(s.window, []string{".gguf"}, func(path string) {
		name := widget.NewEntry()
		name.SetText(strings.TrimSuffix(filepath.Base(path), filepath.Ext(path)))
		dialog.ShowForm("Import GGUF file", "Import", "Cancel",
			[]*widget.FormItem{widget.NewFormItem("Model name", name)},
			func(ok bool) {
				if ok {
					s.ImportGGUF(strings.TrimSpace(name.Text), path)
				}
			}, s.window)
	})
}

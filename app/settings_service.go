package app

import (
	"context"
	"strings"

	"github.com/clinsight/clinsight/internal/progress"
)

// SettingsService is what a front end does with the workspace settings
// and the model server: read and change the settings, check the server,
// install models. *Settings implements it; UI tests substitute fakes.
type SettingsService interface {
	// Config returns a copy of the settings; UpdateConfig changes, checks
	// and saves them (unchanged on error).
	Config() Config
	UpdateConfig(change func(*Config)) error
	// ModelHost is the model server in use and where it comes from.
	ModelHost() (ModelHost, error)
	// HostState describes the model server in use under the host policy:
	// TLS state, token source (never the token), whether result rows may
	// go to the model, the warning to show while it is in use.
	HostState() HostState
	// SetHostChoices checks and saves the editable host policy (plain
	// http for the host in use, token file or variable name, CA file,
	// result rows); unchanged on error.
	SetHostChoices(ch HostChoices) error
	// Check asks the model server for its state (never an error: a server
	// that cannot be reached is described in Status.HealthError).
	Check(ctx context.Context) Status
	// Pull downloads a model through the server; ImportModel installs a
	// local GGUF file as a model. Both report the bytes transferred.
	Pull(ctx context.Context, name string, onProgress progress.Func) error
	ImportModel(ctx context.Context, name, path string, onProgress progress.Func) error
	// Doctor checks what the model features need (server, each task's
	// model); never an error. Its Usable says whether a task's model can
	// be used and, when not, why in one sentence.
	Doctor(ctx context.Context) DoctorReport
}

var _ SettingsService = (*Settings)(nil)

// Settings is the workspace's settings service (ws.Settings()).
type Settings struct{ ws *Workspace }

// Settings returns the workspace's settings service.
func (ws *Workspace) Settings() *Settings { return &Settings{ws: ws} }

// Config returns a copy of the current configuration.
func (s *Settings) Config() Config { return s.ws.Config() }

// UpdateConfig applies change, validates and saves the configuration.
func (s *Settings) UpdateConfig(change func(*Config)) error { return s.ws.UpdateConfig(change) }

// ModelHost returns the model server in use and where it comes from.
func (s *Settings) ModelHost() (ModelHost, error) { return s.ws.ModelHost() }

// HostState describes the model server in use under the host policy.
func (s *Settings) HostState() HostState { return s.ws.HostState() }

// SetHostChoices checks and saves the editable host policy.
func (s *Settings) SetHostChoices(ch HostChoices) error { return s.ws.SetHostChoices(ch) }

// Check asks the model server of this process for its state.
func (s *Settings) Check(ctx context.Context) Status { return s.ws.CheckModels(ctx) }

// Pull downloads a model through the server.
func (s *Settings) Pull(ctx context.Context, name string, onProgress progress.Func) error {
	client, err := s.ws.ModelClient()
	if err != nil {
		return err
	}
	return client.Pull(ctx, name, transferTo(onProgress))
}

// ImportModel installs a local GGUF file as model name.
func (s *Settings) ImportModel(ctx context.Context, name, path string, onProgress progress.Func) error {
	client, err := s.ws.ModelClient()
	if err != nil {
		return err
	}
	return client.Import(ctx, name, path, transferTo(onProgress))
}

// Doctor checks the model server and each task's model.
func (s *Settings) Doctor(ctx context.Context) DoctorReport { return s.ws.Doctor(ctx) }

// The tasks a model serves, named as in RecommendedModels and Status.Tasks.
const (
	TaskSQL        = "SQL generation"
	TaskChat       = "chat"
	TaskEmbeddings = "embeddings"
)

// Usable reports whether the model of task (TaskSQL, TaskChat,
// TaskEmbeddings) can be used, and when not, one sentence for a person
// saying what is missing and where to fix it, e.g. "No chat model
// installed — see Settings." A report with no check for the task (the
// check stopped earlier) is not usable: the reason is the first failed
// check.
func (r DoctorReport) Usable(task string) (bool, string) {
	var own *DoctorCheck
	for i, c := range r.Checks {
		if c.Item == task+" model" || strings.HasPrefix(c.Item, task+" model ") {
			if c.OK {
				return true, ""
			}
			own = &r.Checks[i]
			break
		}
	}
	for _, c := range r.Checks {
		if c.OK {
			continue
		}
		switch {
		case c.Item == "model server address":
			return false, "The model server address cannot be used — see Settings."
		case c.Item == "model server":
			return false, "The model server is not reachable — see Settings."
		}
	}
	if len(r.Checks) == 0 {
		return false, "The models have not been checked yet — see Settings."
	}
	if own != nil && own.Pull == "" && own.Item != task+" model" {
		return false, "The " + taskNoun(task) + " chosen cannot be used — see Settings."
	}
	return false, "No " + taskNoun(task) + " installed — see Settings."
}

// taskNoun names the model of a task in a sentence.
func taskNoun(task string) string {
	switch task {
	case TaskSQL:
		return "SQL model"
	case TaskEmbeddings:
		return "embedding model"
	default:
		return task + " model"
	}
}

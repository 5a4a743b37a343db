package app

import (
	"context"

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

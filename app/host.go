package app

import (
	"fmt"
	"os"
	"strings"

	"github.com/clinsight/clinsight/localllm"
)

// EnvOllamaHost is the environment variable that names the model server for
// one process, as for the ollama command and every other Ollama client.
const EnvOllamaHost = "OLLAMA_HOST"

// HostSource says where the model host in use comes from.
type HostSource int

// Where a model host comes from, in order of precedence.
const (
	// HostDefault: neither OLLAMA_HOST nor the workspace names another
	// host than Ollama's default.
	HostDefault HostSource = iota
	// HostFromSettings: the host saved in the workspace settings.
	HostFromSettings
	// HostFromEnvironment: $OLLAMA_HOST of this process; it overrides the
	// settings without being saved in them.
	HostFromEnvironment
)

// String describes the source for people: "default", "the workspace
// settings" or "OLLAMA_HOST".
func (s HostSource) String() string {
	switch s {
	case HostFromEnvironment:
		return EnvOllamaHost
	case HostFromSettings:
		return "the workspace settings"
	}
	return "default"
}

// ModelHost is the model server this process talks to, and why.
type ModelHost struct {
	// URL is the normalised base URL, e.g. "http://127.0.0.1:11434".
	URL string
	// Source says where it comes from.
	Source HostSource
	// Saved is the host saved in the workspace settings (normalised when
	// valid); it differs from URL when OLLAMA_HOST overrides it.
	Saved string
}

// String is the host and its source, e.g. "http://127.0.0.1:11500 (from
// OLLAMA_HOST)", "http://gpu-box:11434 (from the workspace settings)" or
// "http://127.0.0.1:11434 (default)".
func (h ModelHost) String() string {
	if h.Source == HostDefault {
		return h.URL + " (default)"
	}
	return fmt.Sprintf("%s (from %s)", h.URL, h.Source)
}

// Overrides reports whether OLLAMA_HOST replaces a different saved host.
func (h ModelHost) Overrides() bool {
	return h.Source == HostFromEnvironment && h.Saved != "" && h.Saved != h.URL
}

// ModelHost resolves the model server of this process: $OLLAMA_HOST when it
// is set (for this process only: it is not written into the settings),
// otherwise the host saved in the workspace settings, otherwise Ollama's
// default. Every model client of the workspace (CLI, GUI, every pipeline)
// is built on it through [Workspace.ModelClient]. An OLLAMA_HOST or saved
// host that is not a valid host is an error, never silently replaced by
// another server.
func (ws *Workspace) ModelHost() (ModelHost, error) {
	return resolveModelHost(os.Getenv(EnvOllamaHost), ws.Config().OllamaHost)
}

// resolveModelHost resolves the host from the environment's value env and
// the saved host saved.
func resolveModelHost(env, saved string) (ModelHost, error) {
	h := ModelHost{Saved: strings.TrimSpace(saved)}
	if h.Saved != "" {
		if u, err := localllm.NormalizeHost(h.Saved); err == nil {
			h.Saved = u.String()
		}
	}
	if env = strings.TrimSpace(env); env != "" {
		u, err := localllm.NormalizeHost(env)
		if err != nil {
			return h, &localllm.Error{
				Kind: localllm.Invalid,
				Message: fmt.Sprintf("the environment variable %s is set to %q, which is not a valid Ollama host (%v): correct it or unset it; Clinsight does not fall back to another server",
					EnvOllamaHost, env, err),
				Err: err,
			}
		}
		h.URL, h.Source = u.String(), HostFromEnvironment
		return h, nil
	}
	if h.Saved == "" {
		h.URL, h.Source = localllm.DefaultHost, HostDefault
		return h, nil
	}
	u, err := localllm.NormalizeHost(h.Saved)
	if err != nil {
		return h, &localllm.Error{
			Kind:    localllm.Invalid,
			Message: fmt.Sprintf("the Ollama host %q saved in the settings is not valid (%v): use a URL like %s in Settings", saved, err, localllm.DefaultHost),
			Err:     err,
		}
	}
	h.URL, h.Source = u.String(), HostFromSettings
	if h.URL == localllm.DefaultHost {
		h.Source = HostDefault
	}
	return h, nil
}

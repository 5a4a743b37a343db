package ui

import (
	"strings"
	"testing"

	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// TestSettingsShowsHostSource: Settings says which host is in use and where
// it comes from, and checks that host: the saved one, or OLLAMA_HOST's.
func TestSettingsShowsHostSource(t *testing.T) {
	saved := ollamatest.New(t, ollamatest.Model{Name: "qwen2.5-coder:7b"})
	env := ollamatest.New(t, ollamatest.Model{Name: "qwen2.5-coder:7b"}, ollamatest.Model{Name: "tiny-chat"})

	t.Setenv("OLLAMA_HOST", "")
	s, _ := settingsWithHost(t, saved.URL)
	onUI(t, func(t testing.TB) {
		if want := "In use: " + saved.URL + " (from the workspace settings)"; s.hostInUse.Text != want {
			t.Errorf("without OLLAMA_HOST: %q, want %q", s.hostInUse.Text, want)
		}
	})

	t.Setenv("OLLAMA_HOST", strings.TrimPrefix(env.URL, "http://"))
	s, _ = settingsWithHost(t, saved.URL)
	before := len(saved.Requests())
	onUI(t, func(t testing.TB) {
		if !strings.HasPrefix(s.hostInUse.Text, "In use: "+env.URL+" (from OLLAMA_HOST)") || !strings.Contains(s.hostInUse.Text, "overrides the host saved here") {
			t.Errorf("with OLLAMA_HOST: %q", s.hostInUse.Text)
		}
		if s.host.Text != saved.URL {
			t.Errorf("the host field shows %q, want the saved host", s.host.Text)
		}
		s.Check()
	})
	waitUntil(t, "the server check", func() bool { return !strings.HasPrefix(s.statusLabel.Text, "Checking ") })
	onUI(t, func(t testing.TB) {
		if !strings.Contains(s.statusLabel.Text, "2 models installed") {
			t.Errorf("status %q: not the OLLAMA_HOST server", s.statusLabel.Text)
		}
	})
	if n := len(saved.Requests()) - before; n != 0 || env.Count("GET", "/api/version") == 0 {
		t.Errorf("requests: saved host %d, OLLAMA_HOST %d", n, len(env.Requests()))
	}
}

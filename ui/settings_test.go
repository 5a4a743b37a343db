package ui

import (
	"net"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

func settingsWithHost(t *testing.T, host string) (*SettingsScreen, *app.Workspace) {
	t.Helper()
	a := newTestApp(t)
	ws, err := app.Open(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ws.Close() })
	if err := ws.UpdateConfig(func(c *app.Config) { c.OllamaHost = host }); err != nil {
		t.Fatal(err)
	}
	var s *SettingsScreen
	onUI(t, func(t testing.TB) {
		w := a.NewWindow("test")
		s = NewSettingsScreen(t.Context(), ws.Settings(), w)
		w.SetContent(s.Content())
	})
	return s, ws
}

func TestSettingsServerDown(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	host := "http://" + l.Addr().String()
	l.Close()
	s, _ := settingsWithHost(t, host)
	start := time.Now()
	onUI(t, func(testing.TB) { s.Check() })
	waitUntil(t, "the server check", func() bool { return !strings.HasPrefix(s.statusLabel.Text, "Checking ") })
	if d := time.Since(start); d > 6*time.Second {
		t.Errorf("check took %s", d)
	}
	onUI(t, func(t testing.TB) {
		if !strings.HasPrefix(s.statusLabel.Text, "Not reachable:") || !strings.Contains(s.statusLabel.Text, "ollama serve") {
			t.Errorf("status = %q", s.statusLabel.Text)
		}
		if s.light.FillColor != colorDown {
			t.Error("status light is not red")
		}
		if got := s.sqlModel.Selected; got != "qwen2.5-coder:7b"+notInstalled {
			t.Errorf("SQL model picker = %q", got)
		}
	})
}

func TestSettingsListsModelsAndSaves(t *testing.T) {
	srv := ollamatest.New(t, ollamatest.Model{Name: "qwen2.5-coder:7b"}, ollamatest.Model{Name: "tiny-chat"},
		ollamatest.Model{Name: "nomic-embed-text", Embedding: true})
	s, ws := settingsWithHost(t, srv.URL)
	onUI(t, func(testing.TB) { s.Check() })
	waitUntil(t, "the server check", func() bool { return !strings.HasPrefix(s.statusLabel.Text, "Checking ") })
	onUI(t, func(t testing.TB) {
		if !strings.HasPrefix(s.statusLabel.Text, "Reachable · Ollama") || !strings.Contains(s.statusLabel.Text, "3 models installed") {
			t.Fatalf("status = %q", s.statusLabel.Text)
		}
		if s.light.FillColor != colorUp {
			t.Error("status light is not green")
		}
		if len(s.chatModel.Options) != 4 { // 3 installed + the configured llama3.1:8b (not installed)
			t.Errorf("chat options = %v", s.chatModel.Options)
		}
		if s.embedModel.Selected != "nomic-embed-text:latest" {
			t.Errorf("embedding picker = %q", s.embedModel.Selected)
		}
		s.chatModel.SetSelected("tiny-chat:latest")
		if got := ws.Config().Models.Chat; got != "tiny-chat:latest" {
			t.Errorf("chat model saved as %q", got)
		}

		s.SaveLimits("soon", "10")
		if !strings.Contains(s.limitsInfo.Text, "not valid") || ws.Config().Limits.MaxRows != 50_000 {
			t.Errorf("invalid limits: %q", s.limitsInfo.Text)
		}
		s.SaveLimits("5s", "1,000")
		if cfg := ws.Config(); time.Duration(cfg.Limits.QueryTimeout) != 5*time.Second || cfg.Limits.MaxRows != 1000 {
			t.Errorf("limits not saved: %+v (%q)", cfg.Limits, s.limitsInfo.Text)
		}

		s.Pull("llama3.1:8b")
	})
	waitUntil(t, "the pull, then the re-check", func() bool { return strings.Contains(s.statusLabel.Text, "4 models installed") })
	if len(srv.PullRequests()) != 1 {
		t.Errorf("pull requests = %d", len(srv.PullRequests()))
	}
	onUI(t, func(t testing.TB) {
		if !strings.Contains(s.statusLabel.Text, "4 models installed") {
			t.Errorf("after pull: %q", s.statusLabel.Text)
		}
	})
}

func TestMainWindowShowScreen(t *testing.T) {
	mw := newTestMainWindow(t, newEmptyWorkspace(t))
	onUI(t, func(t testing.TB) {
		if err := mw.Show("Settings"); err != nil || mw.Tabs.Selected().Text != "Settings" {
			t.Errorf("Show(Settings): %v, selected %q", err, mw.Tabs.Selected().Text)
		}
		if err := mw.Show("nope"); err == nil || !strings.Contains(err.Error(), "data") {
			t.Errorf("Show(nope) = %v", err)
		}
	})
	waitUntil(t, "the server check", func() bool { return !strings.HasPrefix(mw.Settings.statusLabel.Text, "Checking ") })
}

// TestScreensFitALaptop: the window takes the widest screen's minimum
// width, so every screen must fit beside the navigation on a 1024-pixel
// laptop display.
func TestScreensFitALaptop(t *testing.T) {
	mw := newTestMainWindow(t, newEmptyWorkspace(t))
	onUI(t, func(t testing.TB) {
		for _, it := range mw.Tabs.Items {
			if w := it.Content.MinSize().Width; w > 900 {
				t.Errorf("screen %s needs %.0f pixels of width; at most 900 fit a 1024-pixel display", it.Text, w)
			}
		}
	})
}

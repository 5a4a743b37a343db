package ui

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"fyne.io/fyne/v2/test"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// unusedRemoteHost returns an http URL on a non-loopback address of this
// computer where nothing listens (a check fails at once), or a private
// address that is never dialled while refused.
func unusedRemoteHost(t *testing.T) string {
	t.Helper()
	if addrs, err := net.InterfaceAddrs(); err == nil {
		for _, a := range addrs {
			n, ok := a.(*net.IPNet)
			if !ok || n.IP.To4() == nil || n.IP.IsLoopback() || n.IP.IsLinkLocalUnicast() {
				continue
			}
			if l, err := net.Listen("tcp", net.JoinHostPort(n.IP.String(), "0")); err == nil {
				addr := l.Addr().String()
				l.Close()
				return "http://" + addr
			}
		}
	}
	return "http://10.1.2.3:11434"
}

// TestSettingsPlainHTTPHostWarnings: a plain-http host on another computer
// is shown as refused, in red, in Settings and in the main window's status
// bar; ticking "allow plain http" shows the red caution, and once saved
// Settings and the status bar show the red plain-http warning while the
// host is in use; result rows stay off (the default for such a host).
func TestSettingsPlainHTTPHostWarnings(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "")
	host := unusedRemoteHost(t)
	s, ws := settingsWithHost(t, host)
	var bar *HostStatusBar
	onUI(t, func(t testing.TB) {
		bar = NewHostStatusBar(ws.Settings())
		s.OnHostChanged = bar.Refresh
		if !strings.Contains(s.connState.Text, "Connection: refused (plain http)") || !strings.Contains(s.connState.Text, "Result rows: not sent to the model") {
			t.Errorf("state %q", s.connState.Text)
		}
		if !s.hostWarning.Visible() || !strings.Contains(s.hostWarning.Text, "Model calls are refused: the model server "+host) {
			t.Errorf("warning %q (visible %v)", s.hostWarning.Text, s.hostWarning.Visible())
		}
		if !strings.Contains(bar.label.Text, "refused") || !bar.Content().Visible() {
			t.Errorf("status bar %q", bar.label.Text)
		}
		if s.allowWarning.Visible() || s.sendRows.Checked {
			t.Error("caution shown or rows on before anything was chosen")
		}
		test.Tap(s.allowHTTP)
		if !s.allowWarning.Visible() || !strings.Contains(s.allowWarning.Text, "unencrypted") {
			t.Errorf("caution after ticking: %q visible %v", s.allowWarning.Text, s.allowWarning.Visible())
		}
		s.SaveHostChoices()
	})
	waitUntil(t, "the save", func() bool { return s.policyInfo.Text == "Saved." })
	onUI(t, func(t testing.TB) {
		if !strings.Contains(s.connState.Text, "Connection: plain http allowed") {
			t.Errorf("state %q", s.connState.Text)
		}
		for name, text := range map[string]string{"Settings": s.hostWarning.Text, "status bar": bar.label.Text} {
			if !strings.Contains(text, "Unencrypted model server") || !strings.Contains(text, host) {
				t.Errorf("%s warning %q", name, text)
			}
		}
		if !s.hostWarning.Visible() || !bar.Content().Visible() {
			t.Error("warning hidden")
		}
	})
	if st := ws.HostState(); st.TLS != app.TLSPlainAllowed || st.SendRows {
		t.Errorf("saved state %+v", st)
	}

	// The main window opened on this workspace shows it in its status bar.
	mw := newTestMainWindow(t, ws)
	onUI(t, func(t testing.TB) {
		if !strings.Contains(mw.HostBar.label.Text, "Unencrypted model server") {
			t.Errorf("main window status bar %q", mw.HostBar.label.Text)
		}
	})
}

// TestSettingsSiteCAAndToken: with an https server signed by the site's
// own CA, Settings shows "https verified" and the check fails until the CA
// file is set; a token file readable by every user is refused with the
// fix; then the state reads "https with the site CA", the token's file
// (never its value) and the check reaches the server; no status bar
// warning is shown.
func TestSettingsSiteCAAndToken(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "")
	const token = "ui-token-0f1e2d3c4b5a69788796a5b4"
	srv := ollamatest.NewTLS(t, ollamatest.Model{Name: "qwen2.5-coder:7b"})
	srv.RequireToken(token)
	dir := t.TempDir()
	ca := filepath.Join(dir, "site-ca.pem")
	open, private := filepath.Join(dir, "token-open"), filepath.Join(dir, "token")
	for path, data := range map[string]string{ca: string(srv.CertificatePEM()), open: token, private: token} {
		if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Chmod(open, 0o644); err != nil {
		t.Fatal(err)
	}
	s, ws := settingsWithHost(t, srv.URL)
	var bar *HostStatusBar
	onUI(t, func(t testing.TB) {
		bar = NewHostStatusBar(ws.Settings())
		if !strings.Contains(s.connState.Text, "Connection: https verified · Access token: none") || s.hostWarning.Visible() || bar.Content().Visible() {
			t.Errorf("state %q, warning %q, bar %q", s.connState.Text, s.hostWarning.Text, bar.label.Text)
		}
		s.Check()
	})
	waitUntil(t, "the check without the CA", func() bool { return strings.HasPrefix(s.statusLabel.Text, "Not reachable") })
	onUI(t, func(t testing.TB) {
		if !strings.Contains(s.statusLabel.Text, "CA file") {
			t.Errorf("status %q", s.statusLabel.Text)
		}
		s.caFile.SetText(ca)
		s.tokenFile.SetText(open)
		s.SaveHostChoices()
	})
	waitUntil(t, "the refusal", func() bool { return strings.HasPrefix(s.policyInfo.Text, "Not saved") })
	onUI(t, func(t testing.TB) {
		if !strings.Contains(s.policyInfo.Text, "chmod 600") {
			t.Errorf("refusal %q", s.policyInfo.Text)
		}
		s.tokenFile.SetText(private)
		s.SaveHostChoices()
	})
	waitUntil(t, "the save", func() bool { return s.policyInfo.Text == "Saved." })
	waitUntil(t, "the check with the CA and token", func() bool { return strings.HasPrefix(s.statusLabel.Text, "Reachable") })
	onUI(t, func(t testing.TB) {
		want := "Connection: https with the site CA · Access token: file " + private
		if !strings.HasPrefix(s.connState.Text, want) || strings.Contains(s.connState.Text, token) {
			t.Errorf("state %q, want prefix %q", s.connState.Text, want)
		}
		if s.hostWarning.Visible() || bar.Content().Visible() {
			t.Errorf("a warning for https: %q / %q", s.hostWarning.Text, bar.label.Text)
		}
		if s.tokenFile.Text != private || s.caFile.Text != ca {
			t.Errorf("fields: %q %q", s.tokenFile.Text, s.caFile.Text)
		}
	})
}

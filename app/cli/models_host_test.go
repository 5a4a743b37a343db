package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// localNonLoopback returns a URL on a non-loopback address of this computer
// where nothing listens (connections are refused at once), or "" when the
// computer has no such address.
func localNonLoopback(t *testing.T) string {
	t.Helper()
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return ""
	}
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || n.IP.To4() == nil || n.IP.IsLoopback() || n.IP.IsLinkLocalUnicast() {
			continue
		}
		l, err := net.Listen("tcp", net.JoinHostPort(n.IP.String(), "0"))
		if err != nil {
			continue
		}
		addr := l.Addr().String()
		l.Close()
		return "http://" + addr
	}
	return ""
}

// TestModelsHostPolicy: a plain-http host on another computer is refused
// by every model command with a message that says what to do, until
// `models host --allow-http`; then each use warns on stderr. A token
// typed where a variable's name goes is refused without being echoed;
// a token file is saved by its path only.
func TestModelsHostPolicy(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "")
	host := localNonLoopback(t)
	if host == "" {
		host = "http://10.1.2.3:11434" // not dialled while refused
	}
	ws := workspaceWithHost(t, host)

	_, stderr, code := run(t, ws, "models", "list")
	if code == 0 || !strings.Contains(stderr, "the model server "+host+" is not on this computer and does not use https") {
		t.Fatalf("models list on a refused host: %d\n%s", code, stderr)
	}
	out, stderr, code := run(t, ws, "status")
	if code != 0 || !strings.Contains(out, "connection:  refused (plain http)") || !strings.Contains(out, "does not use https") {
		t.Fatalf("status on a refused host: %d\n%s\n%s", code, out, stderr)
	}
	out, stderr, code = run(t, ws, "models", "host")
	if code != 0 || !strings.Contains(out, "connection:   refused (plain http)") || !strings.Contains(stderr, "clinsight models host --allow-http") {
		t.Fatalf("models host: %d\n%s\n%s", code, out, stderr)
	}

	out, stderr, code = run(t, ws, "models", "host", "--allow-http")
	if code != 0 || !strings.Contains(out, "connection:   plain http allowed") || !strings.Contains(stderr, "warning: Unencrypted model server") ||
		!strings.Contains(out, "result rows:  not sent to the model (aggregates only), the default for a server on another computer") {
		t.Fatalf("models host --allow-http: %d\n%s\n%s", code, out, stderr)
	}
	if !strings.HasPrefix(host, "http://10.") {
		_, stderr, code = run(t, ws, "models", "list")
		if code == 0 || !strings.Contains(stderr, "warning: Unencrypted model server") || !strings.Contains(stderr, "Ollama is not running at "+host) {
			t.Errorf("models list on an allowed host: %d\n%s", code, stderr)
		}
	}

	_, stderr, code = run(t, ws, "models", "host", "--token-env", "sk-live-4f9a8b7c6d5e")
	if code == 0 || strings.Contains(stderr, "sk-live") || !strings.Contains(stderr, "NAME") {
		t.Errorf("a token as the variable name: %d\n%s", code, stderr)
	}
	tok := filepath.Join(t.TempDir(), "token")
	if err := os.WriteFile(tok, []byte("file-secret-1234567890\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	// A token over plain http would be refused: withdraw plain http and
	// name an https host's token.
	out, stderr, code = run(t, ws, "models", "host", "--allow-http=false", "--token-file", tok, "--send-rows=true")
	if code != 0 || !strings.Contains(out, "access token: file "+tok) || !strings.Contains(out, "result rows:  may be sent to the model, as set in the settings") {
		t.Fatalf("models host --token-file: %d\n%s\n%s", code, out, stderr)
	}
	raw, err := os.ReadFile(filepath.Join(ws, "config.json"))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(raw), "file-secret") || !strings.Contains(string(raw), tok) {
		t.Errorf("config.json:\n%s", raw)
	}
}

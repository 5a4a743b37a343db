package cli

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clinsight/clinsight/app"
	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// workspaceWithHost creates a workspace whose Ollama host is host.
func workspaceWithHost(t *testing.T, host string) string {
	t.Helper()
	dir := t.TempDir()
	ws, err := app.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer ws.Close()
	if err := ws.UpdateConfig(func(c *app.Config) { c.OllamaHost = host }); err != nil {
		t.Fatal(err)
	}
	return dir
}

// closedPort returns a loopback URL where nothing listens.
func closedPort(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return "http://" + addr
}

func TestModelsAndStatusWithServer(t *testing.T) {
	srv := ollamatest.New(t,
		ollamatest.Model{Name: "qwen2.5-coder:7b"},
		ollamatest.Model{Name: "nomic-embed-text", Embedding: true},
	)
	ws := workspaceWithHost(t, srv.URL)
	out, stderr, code := run(t, ws, "models", "list")
	if code != 0 || !strings.Contains(out, "qwen2.5-coder:7b") || !strings.Contains(out, "nomic-embed-text:latest") {
		t.Fatalf("models list: %d %q %q", code, out, stderr)
	}
	out, _, code = run(t, ws, "status")
	if code != 0 {
		t.Fatalf("status exit %d", code)
	}
	for _, want := range []string{"reachable at " + srv.URL, "qwen2.5-coder:7b (installed)", "llama3.1:8b (not installed)", "nomic-embed-text (installed)", "data sources: none"} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	srv.QueuePull(ollamatest.ProgressReply{})
	out, _, code = run(t, ws, "models", "pull", "llama3.1:8b")
	if code != 0 || !strings.Contains(out, "pulled llama3.1:8b") || len(srv.PullRequests()) != 1 {
		t.Errorf("pull: %d %q", code, out)
	}
	gguf := filepath.Join(t.TempDir(), "tiny.gguf")
	os.WriteFile(gguf, []byte("GGUF fake weights"), 0o644)
	out, stderr, code = run(t, ws, "models", "import", "tiny", gguf)
	if code != 0 || !strings.Contains(out, "imported") || len(srv.CreateRequests()) != 1 {
		t.Errorf("import: %d %q %q", code, out, stderr)
	}
}

func TestModelsFailFastWhenServerDown(t *testing.T) {
	ws := workspaceWithHost(t, closedPort(t))
	for _, args := range [][]string{{"models", "list"}, {"models", "pull", "x"}} {
		start := time.Now()
		_, stderr, code := run(t, ws, args...)
		if code != 1 || !strings.Contains(stderr, "not running") || strings.Count(strings.TrimSpace(stderr), "\n") != 0 {
			t.Errorf("%v: exit %d stderr %q", args, code, stderr)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Errorf("%v took %s, want seconds", args, d)
		}
	}
	start := time.Now()
	out, _, code := run(t, ws, "status")
	if code != 0 || !strings.Contains(out, "not reachable") || time.Since(start) > 6*time.Second {
		t.Errorf("status with server down: %d %q (%s)", code, out, time.Since(start))
	}
}

package cli

import (
	"strings"
	"testing"

	"github.com/clinsight/clinsight/localllm/ollamatest"
)

// TestStatusNamesHostFromEnvironment: with OLLAMA_HOST set, status (and
// every command) talks to that host, and says so and why; the saved host
// is not contacted.
func TestStatusNamesHostFromEnvironment(t *testing.T) {
	t.Setenv("OLLAMA_HOST", "")
	saved := ollamatest.New(t, ollamatest.Model{Name: "qwen2.5-coder:7b"})
	env := ollamatest.New(t, ollamatest.Model{Name: "qwen2.5-coder:7b"})
	ws := workspaceWithHost(t, saved.URL)

	out, _, code := run(t, ws, "status")
	if code != 0 || !strings.Contains(out, "ollama host: "+saved.URL+" (from the workspace settings)") {
		t.Fatalf("status without OLLAMA_HOST: %d\n%s", code, out)
	}
	before := len(saved.Requests())

	t.Setenv("OLLAMA_HOST", strings.TrimPrefix(env.URL, "http://"))
	out, stderr, code := run(t, ws, "status")
	if code != 0 {
		t.Fatalf("status: %d %s", code, stderr)
	}
	for _, want := range []string{
		"ollama host: " + env.URL + " (from OLLAMA_HOST)",
		"the workspace settings name " + saved.URL,
		"reachable at " + env.URL,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("status lacks %q:\n%s", want, out)
		}
	}
	out, _, code = run(t, ws, "models", "list")
	if code != 0 || !strings.Contains(out, "qwen2.5-coder:7b") {
		t.Errorf("models list: %d %s", code, out)
	}
	if n := len(saved.Requests()) - before; n != 0 {
		t.Errorf("the saved host received %d requests while OLLAMA_HOST was set", n)
	}
	if env.Count("GET", "/api/version") == 0 || env.Count("GET", "/api/tags") < 2 {
		t.Errorf("OLLAMA_HOST's server received %v", env.Requests())
	}

	t.Setenv("OLLAMA_HOST", "ftp://nowhere")
	_, stderr, code = run(t, ws, "status")
	if code == 0 || !strings.Contains(stderr, "OLLAMA_HOST") || !strings.Contains(stderr, "ftp://nowhere") {
		t.Errorf("invalid OLLAMA_HOST: %d %q", code, stderr)
	}
}
